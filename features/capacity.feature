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
    And 1 second passes
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

  @LC-030
  Scenario: Eight threads submitting at once each get a job of their own
    Given a runtime with 2 worker slots and a task cap of 9
    And job "p" is submitted
    When threads submit jobs "s1, s2, s3, s4, s5, s6, s7, s8" at once
    Then the submission of job "s1" is accepted
    And the submission of job "s8" is accepted
    And jobs "p, s1, s2, s3, s4, s5, s6, s7, s8" each have an id of their own, held once
    And job "s5" is queued
    And the health shows 9 queued, 0 running, 9 in total
    When the runtime dispatches
    Then job "p" is running
    And the health shows 7 queued, 2 running, 9 in total

  @LC-030 @LC-023
  Scenario: A shut-down runtime refuses every submission made at once
    Given job "a" is submitted
    And the runtime dispatches
    And job "a" returns 1
    When the runtime shuts down
    And threads submit jobs "b, c, d" at once
    Then the submission of job "b" is refused because the runtime is shut down
    And the submission of job "d" is refused because the runtime is shut down
    And the health shows 0 queued, 0 running, 1 in total
