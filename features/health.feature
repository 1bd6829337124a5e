Feature: Health snapshot
  The health snapshot counts queued, running and held jobs at one instant, and keeps
  outcome counters that only grow.

  @LC-024
  Scenario: Health counts agree with the held records after every change
    Given a runtime with 2 worker slots
    When jobs "a, b, c" are submitted
    Then the health shows 3 queued, 0 running, 3 in total
    When the runtime dispatches
    Then the health shows 1 queued, 2 running, 3 in total
    When 1 second passes
    And job "a" returns 1
    Then the health shows 1 queued, 1 running, 3 in total
    When 3600 seconds pass
    And cleanup runs with a max age of 3600 seconds
    Then the health shows 1 queued, 1 running, 2 in total

  @LC-025
  Scenario: A cancelled job is counted as cancelled only, never as processed
    Given a runtime with 2 worker slots
    And jobs "s, f" are submitted
    And the runtime dispatches
    When job "s" returns 1
    And job "f" raises ValueError "x"
    Then the counters show 2 processed, 1 failed, 0 cancelled
    When job "q" is submitted
    And job "q" is cancelled
    Then the counters show 2 processed, 1 failed, 1 cancelled
    When job "r" is submitted with a body that ignores cancellation
    And the runtime dispatches
    And job "r" is cancelled
    And job "r" returns 2
    Then job "r" is cancelled
    And the counters show 2 processed, 1 failed, 2 cancelled

  @LC-025 @LC-021
  Scenario: Cleanup does not reduce the counters
    Given a runtime with 2 worker slots
    And jobs "s, f, q" are submitted
    And the runtime dispatches
    And 1 second passes
    And job "s" returns 1
    And job "f" raises ValueError "x"
    And job "q" is cancelled
    When 60 seconds pass
    And cleanup runs with a max age of 60 seconds
    Then cleanup removed 3 jobs
    And the health shows 0 queued, 0 running, 0 in total
    And the counters show 2 processed, 1 failed, 1 cancelled

  @LC-029 @LC-022
  Scenario: The health report names one worker for the runtime's life, running until shutdown
    Given a runtime with 1 worker slot
    Then the health report names its worker, with status "running"
    And a second runtime of the backend names another worker
    When jobs "a, b" are submitted
    And the runtime dispatches
    And job "a" returns 1
    Then the health report names its worker, with status "running"
    When the runtime shuts down
    Then the health report names its worker, with status "stopped"
    And job "b" is cancelled
