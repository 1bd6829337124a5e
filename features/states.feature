Feature: Job states, records and outcomes
  A job is always in one of five states and moves only along the legal transitions.
  Its record carries a timestamp for each transition, and a result or an error only
  for the matching outcome. Seconds count from the start of the virtual clock.

  @LC-008
  Scenario: Submission returns at once and the new job is queued
    Given a runtime
    When job "a" is submitted
    Then the submission of job "a" is accepted
    And job "a" is queued
    And job "a" was submitted at second 0
    And job "a" has no start time
    And the health shows 1 queued, 0 running, 1 in total

  @LC-008
  Scenario: Every submission gets a new id
    When jobs "a, b, c" are submitted
    Then jobs "a, b, c" have distinct ids
    And jobs "a, b, c" are queued

  @LC-001
  Scenario: Jobs in each of the five states, the terminal three staying put
    Given a runtime with 3 worker slots
    And jobs "r, s, f" are submitted
    And the runtime dispatches
    And jobs "q, c" are submitted
    When job "s" returns 1
    And job "f" raises ValueError "bad input"
    And job "c" is cancelled
    Then job "q" is queued
    And job "r" is running
    And job "s" is succeeded
    And job "f" is failed
    And job "c" is cancelled
    When 10 seconds pass
    And the runtime dispatches
    Then job "q" is running
    And job "s" is succeeded
    And job "f" is failed
    And job "c" is cancelled
    And job "s" finished at second 0
    And job "f" finished at second 0
    And job "c" finished at second 0
    And job "c" has no start time

  @LC-002
  Scenario: A queued job starts only at a dispatch point
    When job "a" is submitted
    And 30 seconds pass
    Then job "a" is queued
    When the runtime dispatches
    Then job "a" is running
    And job "a" started at second 30

  @LC-002
  Scenario: A queued job whose body is already decided does not end before it runs
    When job "a" is submitted
    And job "a" returns 1
    Then job "a" is queued
    And job "a" has no finish time
    When 2 seconds pass
    And the runtime dispatches
    Then job "a" is succeeded
    And job "a" started at second 2
    And job "a" finished at second 2

  @LC-002 @LC-004
  Scenario: A job runs, then succeeds, with a timestamp at each transition
    When job "a" is submitted
    And 2 seconds pass
    And the runtime dispatches
    Then job "a" has no finish time
    When 3 seconds pass
    And job "a" returns {"rows": 3}
    Then job "a" is succeeded
    And job "a" was submitted at second 0
    And job "a" started at second 2
    And job "a" finished at second 5

  @LC-004
  Scenario: A job that never ran has no start time
    When job "a" is submitted
    And 4 seconds pass
    And job "a" is cancelled
    Then job "a" was submitted at second 0
    And job "a" has no start time
    And job "a" finished at second 4

  @LC-005
  Scenario: Every timestamp is timezone-aware UTC
    When job "a" is submitted
    And the runtime dispatches
    And 1.5 seconds pass
    And job "a" returns null
    Then every timestamp of job "a" is timezone-aware UTC
    And job "a" finished at second 1.5

  @LC-005
  Scenario: Instants are kept to the microsecond
    When job "a" is submitted
    And 1.000001 seconds pass
    And the runtime dispatches
    And 1.000001 seconds pass
    And job "a" returns null
    Then job "a" was submitted at second 0
    And job "a" started at second 1.000001
    And job "a" finished at second 2.000002

  @LC-006
  Scenario: A succeeded job has a result and no error
    Given job "a" is submitted
    And the runtime dispatches
    When job "a" returns {"ok": true, "items": [1, 2]}
    Then job "a" is succeeded
    And job "a" has the result {"ok": true, "items": [1, 2]}
    And job "a" has no error

  @LC-006 @LC-007
  Scenario: A failed job has an error and no result
    Given job "a" is submitted
    And the runtime dispatches
    When job "a" raises ValueError "boom"
    Then job "a" is failed
    And job "a" has the error "ValueError: boom"
    And job "a" has no result

  @LC-006 @LC-014
  Scenario: A cancelled job's discarded result is not recorded
    Given job "a" is submitted with a body that ignores cancellation
    And the runtime dispatches
    When job "a" is cancelled
    And job "a" returns 42
    Then job "a" is cancelled
    And job "a" has no result
    And job "a" has no error

  @LC-007
  Scenario Outline: A body's exception is recorded as "Type: message"
    Given job "a" is submitted
    And the runtime dispatches
    When job "a" raises <type> "<message>"
    Then job "a" is failed
    And job "a" has the error "<error>"

    Examples:
      | type         | message            | error                            |
      | ValueError   | boom               | ValueError: boom                 |
      | TimeoutError | took too long: 30s | TimeoutError: took too long: 30s |
      | RuntimeError | x                  | RuntimeError: x                  |
      | ValueError   | naïve ✓ — ünïcode  | ValueError: naïve ✓ — ünïcode    |
