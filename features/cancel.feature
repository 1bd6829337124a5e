Feature: Cancellation
  A queued job is cancelled at once; a running job is only asked to stop, and the worker
  that owns it moves it to cancelled when its body observes the request. A body that
  ignores cancellation keeps running until it ends, and then its outcome is discarded.

  @LC-011
  Scenario: Cancelling a queued job cancels it at once
    Given job "a" is submitted
    And 4 seconds pass
    When job "a" is cancelled
    Then the cancellation is accepted
    And job "a" is cancelled
    And job "a" finished at second 4
    And job "a" has no start time
    And the counters show 0 processed, 0 failed, 1 cancelled

  # The harness reads the job straight after each submit and each cancel of a queued job,
  # before the runtime gets any other call: the change must be made by then (LC-031).
  @LC-031 @LC-011
  Scenario: Submit and cancel have made their change when they return
    Given a runtime with 1 worker slot
    And 2 seconds pass
    When job "a" is submitted
    Then job "a" is queued
    When job "b" is submitted
    And job "a" is cancelled
    Then the cancellation is accepted
    And job "a" is cancelled
    And job "a" finished at second 2
    When 3 seconds pass
    And job "b" is cancelled
    Then job "b" is cancelled
    And job "b" finished at second 5
    And the counters show 0 processed, 0 failed, 2 cancelled

  @LC-012
  Scenario: A job cancelled before it started is skipped by every later dispatch
    Given a runtime with 1 worker slot
    And jobs "a, b" are submitted
    When job "a" is cancelled
    And 5 seconds pass
    And the runtime dispatches
    Then job "a" is cancelled
    And job "a" has no start time
    And job "b" is running
    And job "b" started at second 5
    When job "b" returns 1
    And the runtime dispatches
    Then job "a" is cancelled
    And job "a" has no start time
    And the health shows 0 queued, 0 running, 2 in total

  @LC-012 @LC-003
  Scenario: A cancelled job whose body is decided afterwards still never starts
    Given job "a" is submitted
    And job "a" is cancelled
    When job "a" returns 1
    And the runtime dispatches
    Then job "a" is cancelled
    And job "a" has no start time
    And job "a" has no result
    And the counters show 0 processed, 0 failed, 1 cancelled

  @LC-013
  Scenario: A running job whose body ignores cancellation stays running until the body ends
    Given a runtime with 1 worker slot
    And job "a" is submitted with a body that ignores cancellation
    And the runtime dispatches
    And job "b" is submitted
    When job "a" is cancelled
    Then the cancellation is accepted
    And job "a" is running
    And job "a" has no finish time
    When 10 seconds pass
    And the runtime dispatches
    Then job "a" is running
    And job "b" is queued
    And the health shows 1 queued, 1 running, 2 in total
    When job "a" returns "done"
    Then job "a" is cancelled
    And job "a" finished at second 10
    And the counters show 0 processed, 0 failed, 1 cancelled

  @LC-013
  Scenario: A running body that honours cancellation is ended by its owner
    Given job "a" is submitted
    And the runtime dispatches
    And 3 seconds pass
    When job "a" is cancelled
    Then the cancellation is accepted
    And job "a" is cancelled
    And job "a" started at second 0
    And job "a" finished at second 3
    And the counters show 0 processed, 0 failed, 1 cancelled

  @LC-014 @LC-003 @LC-013
  Scenario: A body that ends after its cancellation was requested ends cancelled, and nothing later changes it
    Given job "a" is submitted with a body that ignores cancellation
    And the runtime dispatches
    And job "a" is cancelled
    When 5 seconds pass
    And job "a" returns "late"
    Then job "a" is cancelled
    And job "a" finished at second 5
    And job "a" has no result
    When 5 seconds pass
    And job "a" raises ValueError "later still"
    Then job "a" is cancelled
    And job "a" finished at second 5
    And job "a" has no error
    And the counters show 0 processed, 0 failed, 1 cancelled
    When the result of job "a" is read
    Then reading the result fails as not completed with status cancelled

  @LC-014 @LC-013
  Scenario: A body that raises after its cancellation was requested ends cancelled, not failed
    Given job "a" is submitted with a body that ignores cancellation
    And the runtime dispatches
    And job "a" is cancelled
    When 2 seconds pass
    And job "a" raises RuntimeError "interrupted"
    Then job "a" is cancelled
    And job "a" has no error
    And job "a" finished at second 2
    And the counters show 0 processed, 0 failed, 1 cancelled

  @LC-015
  Scenario: Cancelling an unknown id is rejected
    When job "ghost" is cancelled
    Then the cancellation is rejected
    And the health shows 0 queued, 0 running, 0 in total

  @LC-015 @LC-003
  Scenario: Cancelling a terminal job is rejected and changes nothing
    Given a runtime with 2 worker slots
    And jobs "s, f" are submitted
    And the runtime dispatches
    And job "s" returns 1
    And job "f" raises ValueError "no"
    When 5 seconds pass
    And job "s" is cancelled
    Then the cancellation is rejected
    And job "s" is succeeded
    And job "s" finished at second 0
    And job "s" has the result 1
    When job "f" is cancelled
    Then the cancellation is rejected
    And job "f" is failed
    And job "f" has the error "ValueError: no"
    And the counters show 2 processed, 1 failed, 0 cancelled

  @LC-015
  Scenario: Cancelling a cancelled job again is rejected and counted once
    Given job "a" is submitted
    And job "a" is cancelled
    When 1 second passes
    And job "a" is cancelled
    Then the cancellation is rejected
    And job "a" finished at second 0
    And the counters show 0 processed, 0 failed, 1 cancelled

  @LC-015 @LC-013
  Scenario: A second cancel of a running job already asked to stop is rejected
    Given job "a" is submitted with a body that ignores cancellation
    And the runtime dispatches
    And job "a" is cancelled
    When job "a" is cancelled
    Then the cancellation is rejected
    And job "a" is running
    And the counters show 0 processed, 0 failed, 0 cancelled
