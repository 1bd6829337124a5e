Feature: Shutdown
  Shutdown cancels every queued and running job, interrupting running bodies, and the
  runtime refuses submissions from then on. A second shutdown changes nothing.

  @LC-022 @LC-003
  Scenario: Shutdown cancels every queued and running job and leaves finished ones alone
    Given a runtime with 2 worker slots
    And job "d" is submitted
    And job "r" is submitted with a body that ignores cancellation
    And the runtime dispatches
    And job "d" returns "ok"
    And job "q" is submitted
    And job "q" returns "decided while queued"
    When 10 seconds pass
    And the runtime shuts down
    Then job "r" is cancelled
    And job "r" started at second 0
    And job "r" finished at second 10
    And job "q" is cancelled
    And job "q" has no start time
    And job "q" finished at second 10
    And job "d" is succeeded
    And job "d" finished at second 0
    And job "d" has the result "ok"
    And the health shows 0 queued, 0 running, 3 in total
    And the counters show 1 processed, 0 failed, 2 cancelled
    When 5 seconds pass
    And job "r" returns "too late"
    Then job "r" is cancelled
    And job "r" finished at second 10
    And job "r" has no result
    And the counters show 1 processed, 0 failed, 2 cancelled

  @LC-023 @LC-022
  Scenario: After shutdown a submission is refused and leaves no record
    Given job "a" is submitted
    When the runtime shuts down
    And job "x" is submitted
    Then the submission of job "x" is refused because the runtime is shut down
    And job "x" is not held
    And the health shows 0 queued, 0 running, 1 in total

  @LC-023 @LC-022
  Scenario: A second shutdown changes nothing
    Given job "a" is submitted
    And the runtime shuts down
    When 5 seconds pass
    And the runtime shuts down
    Then job "a" is cancelled
    And job "a" finished at second 0
    And the counters show 0 processed, 0 failed, 1 cancelled
