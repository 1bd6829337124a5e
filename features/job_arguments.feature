Feature: A job's arguments, and submit with queued execution off
  A job is submitted with arguments, one JSON value, and the runtime keeps them as given:
  its record reads them back, and its body receives them, with every digit, type and code
  point as submitted (LC-036; backends claiming job-arguments). Seed 000's async.enabled
  switched off: submit runs the body itself and returns the job already ended, never
  queued (LC-037; backends claiming queued-execution-switch).

  # The harness compares every held job's arguments, and every body's, after each step.
  @LC-036
  Scenario: Arguments read back and reach the body exactly as submitted
    Given a runtime with 1 worker slot
    And job "a" is submitted with arguments {"text": "naïve café 𝄞 \u0000 e\u0301", "big": 9223372036854775807, "small": -9223372036854775808, "odd": 9007199254740993, "float": 0.1, "negative zero": -0.0, "whole float": 2.0, "flags": [true, false, null], "nested": {"list": [[], {}, [1, "1", 1.0]]}}
    And job "b" is submitted with arguments [1, "two", 3.5]
    And job "c" is submitted
    Then job "a" has the arguments {"nested": {"list": [[], {}, [1, "1", 1.0]]}, "flags": [true, false, null], "whole float": 2.0, "negative zero": -0.0, "float": 0.1, "odd": 9007199254740993, "small": -9223372036854775808, "big": 9223372036854775807, "text": "naïve café 𝄞 \u0000 e\u0301"}
    And job "c" has the arguments null
    When the runtime dispatches
    And job "a" returns "done"
    Then job "a" is succeeded
    And the body of job "a" received the arguments {"text": "naïve café 𝄞 \u0000 e\u0301", "big": 9223372036854775807, "small": -9223372036854775808, "odd": 9007199254740993, "float": 0.1, "negative zero": -0.0, "whole float": 2.0, "flags": [true, false, null], "nested": {"list": [[], {}, [1, "1", 1.0]]}}
    And job "b" has the arguments [1, "two", 3.5]
    When the runtime dispatches
    And job "b" raises ValueError "boom"
    And the runtime dispatches
    And job "c" returns 1
    Then the body of job "b" received the arguments [1, "two", 3.5]
    And the body of job "c" received the arguments null
    And job "b" has the arguments [1, "two", 3.5]

  @LC-036
  Scenario: A cancelled job keeps its arguments and its body never receives them
    Given job "a" is submitted with arguments {"id": 42}
    When job "a" is cancelled
    Then job "a" is cancelled
    And job "a" has the arguments {"id": 42}
    And the body of job "a" never ran

  @LC-037
  Scenario: With queued execution off, submit runs the body and returns it ended
    Given a runtime with queued execution off
    And 5 seconds pass
    When job "a" is submitted with a body that returns {"rows": 3}
    Then the submission of job "a" is accepted
    And job "a" is succeeded
    And job "a" was submitted at second 5
    And job "a" started at second 5
    And job "a" finished at second 5
    And job "a" has the result {"rows": 3}
    And the body of job "a" ran 1 times
    And the counters show 1 processed, 0 failed, 0 cancelled
    And the health shows 0 queued, 0 running, 1 in total
    When job "b" is submitted with a body that raises ValueError "bad plan"
    Then job "b" is failed
    And job "b" has the error "ValueError: bad plan"
    And the counters show 2 processed, 1 failed, 0 cancelled
    When the runtime dispatches
    And job "a" is cancelled
    Then the cancellation is rejected
    And job "a" is succeeded
    And the body of job "a" ran 1 times

  @LC-037 @LC-036
  Scenario: With queued execution off, the body receives its arguments inside submit
    Given a runtime with queued execution off
    When job "a" whose body returns true is submitted with arguments {"plan": "01HXYZ", "phase": "execute"}
    Then job "a" is succeeded
    And the body of job "a" received the arguments {"phase": "execute", "plan": "01HXYZ"}
    And job "a" has the arguments {"plan": "01HXYZ", "phase": "execute"}

  @LC-037 @LC-009 @LC-023
  Scenario: With queued execution off, a refused submission never runs its body
    Given a runtime with queued execution off and a task cap of 1
    And job "a" is submitted with a body that returns 1
    When job "b" is submitted with a body that returns 2
    Then the submission of job "b" is refused for capacity
    And the health shows 0 queued, 0 running, 1 in total
    When cleanup runs with a max age of 0 seconds
    And the runtime shuts down
    And job "c" is submitted with a body that returns 3
    Then the submission of job "c" is refused because the runtime is shut down
    And the counters show 1 processed, 0 failed, 0 cancelled
