Feature: The task manager's cancel and submit
  Under the task-manager profile (seed 004), cancel interrupts the running invocation
  itself, whether or not its body checks its cancellation token (D-18), and submit refuses
  a malformed or unknown module id before any record exists.

  # The harness reads the job and the health straight after each cancel of a running job,
  # before the runtime gets any other call: it must be cancelled and counted by then (LC-026).
  @LC-026
  Scenario: Cancel interrupts a running body that ignores cancellation
    Given a runtime with 1 worker slot
    And job "a" is submitted with a body that ignores cancellation
    And job "b" is submitted
    And the runtime dispatches
    And 3 seconds pass
    When job "a" is cancelled
    Then the cancellation is accepted
    And job "a" is cancelled
    And job "a" finished at second 3
    And the body of job "a" was interrupted
    And the counters show 0 processed, 0 failed, 1 cancelled
    When job "a" returns "too late"
    And the runtime dispatches
    Then job "a" is cancelled
    And job "a" has no result
    And the body of job "a" never ran
    And job "b" is running
    And job "b" started at second 3

  @LC-026
  Scenario: Cancel interrupts a running body that honours cancellation too
    Given job "a" is submitted
    And the runtime dispatches
    When job "a" is cancelled
    Then the cancellation is accepted
    And job "a" is cancelled
    And the body of job "a" was interrupted
    And the body of job "a" never ran
    When job "a" is cancelled
    Then the cancellation is rejected
    And the counters show 0 processed, 0 failed, 1 cancelled

  @LC-027
  Scenario Outline: A malformed module id is refused at submit and leaves no record
    Given job "a" is submitted for module "data.process_batch"
    When job "x" is submitted for module "<module>"
    Then the submission of job "x" is refused because the module id is malformed
    And job "x" is not held
    And the health shows 1 queued, 0 running, 1 in total

    Examples:
      | module             |
      | Data.process_batch |
      | data..process      |
      | .data              |
      | data.              |
      | 9lives             |
      | data.process-batch |
      | data process       |

  @LC-027
  Scenario: An unknown module id is refused at submit, a known one is accepted
    When job "x" is submitted for module "billing.charge_card"
    Then the submission of job "x" is refused because no such module exists
    And job "x" is not held
    When job "a" is submitted for module "mail.send_digest"
    Then the submission of job "a" is accepted
    And job "a" is queued
    And the health shows 1 queued, 0 running, 1 in total

  @LC-027 @LC-009 @LC-023
  Scenario: The module check comes after the shut-down refusal and before the task cap
    Given a runtime with a task cap of 1
    And job "a" is submitted for module "data.process_batch"
    When job "x" is submitted for module "Bad Id"
    Then the submission of job "x" is refused because the module id is malformed
    When job "y" is submitted for module "billing.charge_card"
    Then the submission of job "y" is refused because no such module exists
    When job "z" is submitted for module "data.process_batch"
    Then the submission of job "z" is refused for capacity
    When the runtime shuts down
    And job "w" is submitted for module "Bad Id"
    Then the submission of job "w" is refused because the runtime is shut down
    And the health shows 0 queued, 0 running, 1 in total
