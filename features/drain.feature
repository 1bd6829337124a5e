Feature: Drain shutdown
  Under a profile whose shutdown_mode is drain (draining-worker), shutdown refuses new
  submissions at once and lets queued and running jobs go on until the drain timeout; at
  that instant the jobs still active are cancelled.

  @LC-028
  Scenario: Running and queued jobs finish while the drain lasts
    Given a runtime with 1 worker slot
    And jobs "a, b" are submitted
    And the runtime dispatches
    When the runtime shuts down
    Then job "a" is running
    And job "b" is queued
    When job "x" is submitted
    Then the submission of job "x" is refused because the runtime is shut down
    When job "a" returns 1
    And 10 seconds pass
    And the runtime dispatches
    Then job "a" is succeeded
    And job "b" is running
    And job "b" started at second 10
    When job "b" returns 2
    And 30 seconds pass
    Then job "b" is succeeded
    And job "b" has the result 2
    And the counters show 2 processed, 0 failed, 0 cancelled

  @LC-028 @LC-003
  Scenario: At the drain timeout the jobs still active are cancelled
    Given a runtime with 1 worker slot
    And job "a" is submitted with a body that ignores cancellation
    And jobs "b, c" are submitted
    And the runtime dispatches
    And 5 seconds pass
    When the runtime shuts down
    And 29 seconds pass
    Then job "a" is running
    And jobs "b, c" are queued
    When 1 second passes
    Then jobs "a, b, c" are cancelled
    And job "a" finished at second 35
    And job "b" finished at second 35
    And job "b" has no start time
    And the body of job "b" never ran
    And the counters show 0 processed, 0 failed, 3 cancelled
    When job "a" returns "late"
    And job "b" returns "late"
    And the runtime dispatches
    Then jobs "a, b, c" are cancelled
    And job "a" has no result
    And the body of job "a" never ran
    And the body of job "b" never ran
    And the counters show 0 processed, 0 failed, 3 cancelled

  @LC-028 @LC-023
  Scenario: A second shutdown does not restart the drain timeout, and time passing in one step ends it at the deadline
    Given job "a" is submitted
    And the runtime dispatches
    When the runtime shuts down
    And 20 seconds pass
    And the runtime shuts down
    And 60 seconds pass
    Then job "a" is cancelled
    And job "a" finished at second 30
    And the counters show 0 processed, 0 failed, 1 cancelled

  @LC-029 @LC-028
  Scenario: The worker is stopping while the drain lasts, and stopped at its timeout
    Given a runtime with 1 worker slot
    And job "a" is submitted with a body that ignores cancellation
    And the runtime dispatches
    When the runtime shuts down
    Then the health report names its worker, with status "stopping"
    When 29 seconds pass
    Then the health report names its worker, with status "stopping"
    When 1 second passes
    Then job "a" is cancelled
    And the health report names its worker, with status "stopped"
