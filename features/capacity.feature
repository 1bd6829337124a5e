Feature: Task cap and concurrency limit
  A task cap bounds the records a runtime holds, terminal ones included; the worker
  slots bound how many jobs run at once. The scenarios set both explicitly so that they
  hold under every profile.

  @LC-009
  Scenario: Queued jobs count toward the task cap
    Given a runtime with a task cap of 1
    And job "a" is submitted
    When job "b" is submitted
    Then the submission of job "b" is refused for capacity
    And job "b" is not held
    And the health shows 1 queued, 0 running, 1 in total

  @LC-009
  Scenario: The task cap counts terminal records, and cleanup makes room again
    Given a runtime with 2 worker slots and a task cap of 2
    And jobs "a, b" are submitted
    And the runtime dispatches
    And job "a" returns 1
    And job "b" raises ValueError "no"
    When job "c" is submitted
    Then the submission of job "c" is refused for capacity
    And job "c" is not held
    And the health shows 0 queued, 0 running, 2 in total
    When 60 seconds pass
    And cleanup runs with a max age of 60 seconds
    Then cleanup removed 2 jobs
    When job "d" is submitted
    Then the submission of job "d" is accepted
    And job "d" is queued

  @LC-010
  Scenario: With 2 worker slots only 2 of 3 jobs run, in submission order
    Given a runtime with 2 worker slots
    And jobs "a, b, c" are submitted
    When the runtime dispatches
    Then jobs "a, b" are running
    And job "c" is queued
    And job "c" has no start time
    And the health shows 1 queued, 2 running, 3 in total
    When 5 seconds pass
    And job "b" returns 1
    Then job "c" is queued
    When the runtime dispatches
    Then job "c" is running
    And job "c" started at second 5
    And the health shows 0 queued, 2 running, 3 in total
