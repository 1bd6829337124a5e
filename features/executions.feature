Feature: The executions query, its statistics and a job's execution options
  A runtime claiming execution-queries pages its jobs newest first, filters them by
  status, trigger, owners, a window of hours and a text in their error, and counts them
  over a window; one claiming execution-options hands each job's options to its body and
  keeps them on its record. Elsewhere these scenarios are "not claimed".

  @LC-032
  Scenario: Consecutive pages hold every job once, newest first
    Given a runtime whose executions query pages 3 jobs at most
    And jobs "a, b, c, d, e" are submitted
    When the executions are queried with limit 2
    Then the page is "e, d"
    When the executions are queried with offset 2 and limit 2
    Then the page is "c, b"
    When the executions are queried with offset 4 and limit 2
    Then the page is "a"
    When the executions are queried with offset 5
    Then the page is empty

  @LC-032
  Scenario: A page never holds more than the page size
    Given a runtime whose executions query pages 3 jobs at most
    And jobs "a, b, c, d, e" are submitted
    When the executions are queried
    Then the page is "e, d, c"
    When the executions are queried with limit 10
    Then the page is "e, d, c"

  @LC-033
  Scenario: Filters by status, trigger, owners and text keep the jobs matching each
    Given a runtime with 3 worker slots
    And job "a" is submitted for owner "ann" with trigger "manual"
    And job "b" is submitted for owner "bob" with trigger "schedule"
    And job "c" is submitted for owner "ann" with trigger "schedule"
    And job "d" is submitted
    And the runtime dispatches
    And job "a" raises TimeoutError "Agent Took Too Long"
    And job "b" raises ValueError "bad prompt"
    And job "c" returns "ok"
    Then job "a" is owned by "ann" with trigger "manual"
    When the executions are queried with status "failed"
    Then the page is "b, a"
    When the executions are queried with trigger "schedule"
    Then the page is "c, b"
    When the executions are queried with owners "ann, carol"
    Then the page is "c, a"
    When the executions are queried with owners ""
    Then the page is empty
    When the executions are queried with search "took too"
    Then the page is "a"
    When the executions are queried with owners "ann" and status "failed"
    Then the page is "a"

  @LC-033
  Scenario: A window of hours keeps a job submitted exactly that long ago
    Given job "old" is submitted
    And 1 second passes
    And job "edge" is submitted
    And 3600 seconds pass
    And job "new" is submitted
    When the executions are queried with hours 1
    Then the page is "new, edge"

  @LC-034
  Scenario: Statistics count outcomes within the window and the active jobs at any age
    Given a runtime with 1 worker slot
    And job "a" is submitted for owner "ann"
    And job "b" is submitted for owner "bob"
    And job "c" is submitted for owner "ann"
    And the runtime dispatches
    And job "a" raises ValueError "no"
    And the runtime dispatches
    And job "b" returns 1
    And 7200 seconds pass
    And job "d" is submitted for owner "ann"
    And the runtime dispatches
    When the execution statistics are read
    Then the statistics show 4 in total, 1 succeeded, 1 failed, 1 running and 1 queued
    When the execution statistics are read for the last 1 hour
    Then the statistics show 1 in total, 0 succeeded, 0 failed, 1 running and 1 queued
    When the execution statistics are read for owners "ann"
    Then the statistics show 3 in total, 0 succeeded, 1 failed, 1 running and 1 queued

  @LC-035
  Scenario: A job's options reach its body and stay on its record
    Given job "a" is submitted with options {"model": "haiku", "temperature": 0.2}
    And job "b" is submitted
    And the runtime dispatches
    And job "a" returns "done"
    And job "b" returns "done"
    Then job "a" has options {"model": "haiku", "temperature": 0.2}
    And the body of job "a" was handed options {"model": "haiku", "temperature": 0.2}
    And job "b" has options null
    And the body of job "b" was handed options null
