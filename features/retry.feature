Feature: Retry and backoff
  A job may carry its own retry policy. A failed attempt with retries left sends the job
  back to the queue, where it waits out a delay on the runtime's clock before it can be
  started again; the last failure, or a non-retryable error, fails it. The delay comes
  from one function: exponential, zero-indexed, capped, with optional jitter and a
  server's retry-after as a floor. Scenarios here are skipped on a backend that does not
  claim the retry area and under a profile the retry requirements do not apply to.
  Seconds count from the start of the virtual clock; delays are in milliseconds.

  # -- RT-001: per job, off by default ------------------------------------------------------

  @RT-001
  Scenario: A job submitted without a retry policy fails at its first failure
    Given job "a" is submitted
    And the runtime dispatches
    When job "a" raises ValueError "boom"
    Then job "a" is failed
    And job "a" has the error "ValueError: boom"
    And job "a" has retry count 0 of 0
    And the counters show 1 processed, 1 failed, 0 cancelled
    When 100 seconds pass
    And the runtime dispatches
    Then job "a" is failed

  @RT-001 @edge
  Scenario: A policy of zero retries fails the job at its first failure
    Given job "a" is submitted with 0 retries
    And the runtime dispatches
    When job "a" raises ValueError "boom"
    Then job "a" is failed
    And job "a" has the error "ValueError: boom"
    And job "a" has retry count 0 of 0

  @RT-001 @RT-002
  Scenario: A policy giving only max_retries waits 1000 ms, then 2000 ms
    Given job "a" is submitted with 2 retries
    And job "b" is submitted
    And the runtime dispatches
    When job "a" raises ValueError "first"
    Then job "a" is queued
    And job "a" has retry count 1 of 2
    And job "b" has retry count 0 of 0
    When 0.999 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    When 0.001 seconds pass
    And the runtime dispatches
    Then job "a" is running
    And job "a" started at second 1
    When job "a" raises ValueError "second"
    Then job "a" is queued
    And job "a" has retry count 2 of 2
    When 1.999 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    When 0.001 seconds pass
    And the runtime dispatches
    Then job "a" is running
    And job "a" started at second 3
    When job "a" returns "done"
    Then job "a" is succeeded
    And job "a" has the result "done"

  @RT-002 @edge
  Scenario: A backoff ending half a second into a second is waited out to the microsecond
    Given job "a" is submitted with 2 retries
    And the runtime dispatches
    And 0.5 seconds pass
    When job "a" raises ValueError "first"
    Then job "a" is queued
    When 0.999999 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    When 0.000001 seconds pass
    And the runtime dispatches
    Then job "a" is running
    And job "a" started at second 1.5

  @RT-001 @RT-002
  Scenario: The default policy's delay function starts at 1000 ms and doubles
    When the delay for attempt 0 is computed with the default policy
    Then the delay is 1000 ms
    When the delay for attempt 1 is computed with the default policy
    Then the delay is 2000 ms

  # -- RT-002: exponential, zero-indexed, capped --------------------------------------------

  @RT-002
  Scenario Outline: The delay before retry n+1 is retry_delay_ms * multiplier ** n, capped
    When the delay for attempt <attempt> is computed with <base> ms, multiplier <multiplier> and a cap of <cap> ms
    Then the delay is <delay> ms
    And the delay is at most the cap

    Examples: doubling from one second, capped at a minute
      | attempt | base | multiplier | cap   | delay |
      | 0       | 1000 | 2          | 60000 | 1000  |
      | 1       | 1000 | 2          | 60000 | 2000  |
      | 2       | 1000 | 2          | 60000 | 4000  |
      | 3       | 1000 | 2          | 60000 | 8000  |
      | 5       | 1000 | 2          | 60000 | 32000 |
      | 6       | 1000 | 2          | 60000 | 60000 |
      | 1100    | 1000 | 2          | 60000 | 60000 |
      | 10000   | 1000 | 2          | 60000 | 60000 |

    Examples: other bases and multipliers
      | attempt | base | multiplier | cap   | delay |
      | 4       | 500  | 1          | 60000 | 500   |
      | 2       | 250  | 3          | 5000  | 2250  |
      | 3       | 250  | 3          | 5000  | 5000  |
      | 10000   | 250  | 1.5        | 9000  | 9000  |

    Examples: the extremes: no delay at all, a base at the cap, a multiplier of a thousand
      | attempt | base  | multiplier | cap           | delay         |
      | 0       | 0     | 2          | 0             | 0             |
      | 10000   | 0     | 2          | 60000         | 0             |
      | 0       | 60000 | 2          | 60000         | 60000         |
      | 2       | 1     | 1000       | 1000000       | 1000000       |
      | 10000   | 1     | 1000       | 1000000000000 | 1000000000000 |

  @RT-002 @RT-003
  Scenario: The runtime waits the capped delay, not the exponential one
    Given job "a" is submitted with 3 retries, a delay of 1000 ms, multiplier 10 and a cap of 5000 ms
    And the runtime dispatches
    And job "a" raises ValueError "first"
    And 1 second passes
    And the runtime dispatches
    When job "a" raises ValueError "second"
    And 4.999 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    And job "a" has retry count 2 of 3
    When 0.001 seconds pass
    And the runtime dispatches
    Then job "a" is running
    And job "a" started at second 6

  # -- RT-003: back to queued, not before the delay -----------------------------------------

  @RT-003
  Scenario: A failed attempt with retries left sends the job back to queued, with nothing recorded
    Given job "a" is submitted with 2 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And the runtime dispatches
    And 2 seconds pass
    When job "a" raises ValueError "flaky"
    Then job "a" is queued
    And job "a" has retry count 1 of 2
    And job "a" has no error
    And job "a" has no result
    And job "a" has no finish time
    And the health shows 1 queued, 0 running, 1 in total
    And the counters show 0 processed, 0 failed, 0 cancelled
    When the jobs are listed with status "queued"
    Then the listing is "a"
    When the jobs are listed with status "running"
    Then the listing is empty

  @RT-003
  Scenario: The first retry waits exactly retry_delay_ms: not started at 999 ms, started at 1000 ms
    Given job "a" is submitted with 2 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And the runtime dispatches
    And job "a" raises ValueError "flaky"
    When 0.999 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    And job "a" has retry count 1 of 2
    When 0.001 seconds pass
    And the runtime dispatches
    Then job "a" is running
    And job "a" started at second 1
    And job "a" has retry count 1 of 2

  @RT-003 @LC-004
  Scenario: A job waiting in backoff does not hold up the queue, and takes its turn once its delay has passed
    Given a runtime with 1 worker slot
    And job "a" is submitted with 1 retry, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And job "b" is submitted
    And job "c" is submitted
    And 1 second passes
    And the runtime dispatches
    And job "a" raises ValueError "flaky"
    When the runtime dispatches
    Then job "b" is running
    And job "a" is queued
    When job "b" returns 1
    And 1 second passes
    And the runtime dispatches
    Then job "a" is running
    And job "a" started at second 2
    And job "c" is queued

  # -- RT-004: the last failure fails the job -----------------------------------------------

  @RT-004
  Scenario: When no retries are left the failure is final and keeps that attempt's error
    Given job "a" is submitted with 2 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And the runtime dispatches
    And job "a" raises ValueError "first"
    And 1 second passes
    And the runtime dispatches
    And job "a" raises ValueError "second"
    And 2 seconds pass
    And the runtime dispatches
    When job "a" raises TimeoutError "third"
    Then job "a" is failed
    And job "a" has the error "TimeoutError: third"
    And job "a" has retry count 2 of 2
    And job "a" finished at second 3
    And the counters show 1 processed, 1 failed, 0 cancelled
    When 100 seconds pass
    And the runtime dispatches
    Then job "a" is failed
    And job "a" has retry count 2 of 2

  # -- RT-005: non-retryable errors ---------------------------------------------------------

  @RT-005
  Scenario: A non-retryable error type fails the job at once, with retries left
    Given job "a" is submitted with 3 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms and "KeyError" not retried
    And the runtime dispatches
    When job "a" raises KeyError "missing"
    Then job "a" is failed
    And job "a" has the error "KeyError: missing"
    And job "a" has retry count 0 of 3
    And the counters show 1 processed, 1 failed, 0 cancelled

  @RT-005
  Scenario: Non-retryable names match exactly; other errors are still retried
    Given job "a" is submitted with 3 retries and "KeyError, PlanError" not retried
    And the runtime dispatches
    When job "a" raises MissingKeyError "similar name"
    Then job "a" is queued
    And job "a" has retry count 1 of 3
    When 1 second passes
    And the runtime dispatches
    And job "a" raises PlanError "fatal"
    Then job "a" is failed
    And job "a" has the error "PlanError: fatal"
    And job "a" has retry count 1 of 3

  # -- RT-006: cancelled in backoff ---------------------------------------------------------

  @RT-006
  Scenario: Cancelling a job in backoff cancels it at once, and it never runs again
    Given job "a" is submitted with 2 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And the runtime dispatches
    And job "a" raises ValueError "flaky"
    And 0.5 seconds pass
    When job "a" is cancelled
    Then the cancellation is accepted
    And job "a" is cancelled
    And job "a" finished at second 0.5
    And the counters show 0 processed, 0 failed, 1 cancelled
    When job "a" returns "too late"
    And 5 seconds pass
    And the runtime dispatches
    Then job "a" is cancelled
    And job "a" has no result
    And job "a" finished at second 0.5
    And the health shows 0 queued, 0 running, 1 in total
    When job "a" is cancelled
    Then the cancellation is rejected

  # -- RT-007: only the final outcome counts ------------------------------------------------

  @RT-007
  Scenario: A job retried and then succeeded is counted once, as processed
    Given job "a" is submitted with 2 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And the runtime dispatches
    When job "a" raises ValueError "flaky"
    Then the counters show 0 processed, 0 failed, 0 cancelled
    When 1 second passes
    And the runtime dispatches
    And job "a" returns "ok"
    Then job "a" is succeeded
    And job "a" has the result "ok"
    And job "a" has retry count 1 of 2
    And the counters show 1 processed, 0 failed, 0 cancelled

  @RT-007 @RT-004
  Scenario: A job retried and then failed for good is counted once, as failed
    Given job "a" is submitted with 1 retry, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And the runtime dispatches
    When job "a" raises ValueError "first"
    Then the counters show 0 processed, 0 failed, 0 cancelled
    When 1 second passes
    And the runtime dispatches
    And job "a" raises ValueError "second"
    Then job "a" is failed
    And job "a" has the error "ValueError: second"
    And the counters show 1 processed, 1 failed, 0 cancelled

  # -- RT-008: retry state in the record ----------------------------------------------------

  @RT-008
  Scenario: The record shows the retries taken so far and the budget
    Given job "a" is submitted with 3 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And job "b" is submitted
    Then job "a" has retry count 0 of 3
    And job "b" has retry count 0 of 0
    When the runtime dispatches
    And job "a" raises ValueError "flaky"
    Then job "a" has retry count 1 of 3
    When job "a" is read
    And 1 second passes
    And the runtime dispatches
    And job "a" raises ValueError "flaky again"
    Then job "a" has retry count 2 of 3
    And the record of job "a" read earlier still shows queued

  # -- RT-009: jitter -----------------------------------------------------------------------

  @RT-009
  Scenario Outline: Jitter scales the capped delay by the injected draw
    When the delay for attempt <attempt> is computed with 1000 ms, multiplier 2 and a cap of 60000 ms, with <mode> jitter and draw <draw>
    Then the delay is <delay> ms
    And the delay is at most the cap

    Examples:
      | mode  | attempt | draw | delay |
      | none  | 2       | 0.5  | 4000  |
      | full  | 2       | 0.5  | 2000  |
      | full  | 2       | 0    | 0     |
      | equal | 2       | 0.5  | 3000  |
      | equal | 2       | 0    | 2000  |
      | full  | 6       | 0.5  | 30000 |
      | equal | 10000   | 0.5  | 45000 |

    Examples: the plain first retry, and draws at the far end of [0, 1)
      | mode  | attempt | draw  | delay |
      | none  | 0       | 0     | 1000  |
      | none  | 10000   | 0.999 | 60000 |
      | full  | 2       | 0.75  | 3000  |
      | equal | 10000   | 0.999 | 59970 |

  @RT-009
  Scenario: Full jitter stays random once the exponential has reached the cap, and never exceeds it
    When the delay for attempt 10000 is computed with 1000 ms, multiplier 2 and a cap of 60000 ms, with full jitter and draw 0.99
    Then the delay is at most the cap
    And the delay is below the cap
    And the delay is more than 54000 ms
    And the delay is 59400 ms

  @RT-009
  Scenario: Equal jitter stays random once the exponential has reached the cap, and never exceeds it
    When the delay for attempt 10000 is computed with 1000 ms, multiplier 2 and a cap of 60000 ms, with equal jitter and draw 0.99
    Then the delay is at most the cap
    And the delay is below the cap
    And the delay is 59700 ms

  @RT-009
  Scenario Outline: Decorrelated jitter grows from the previous delay, within the cap
    When the delay for attempt <attempt> is computed with 1000 ms, multiplier 2 and a cap of 60000 ms, with <options>
    Then the delay is <delay> ms
    And the delay is at most the cap

    Examples: previous defaults to retry_delay_ms before the first retry
      | attempt | options                                             | delay |
      | 1       | decorrelated jitter, draw 0.5 and previous 2000 ms  | 3500  |
      | 0       | decorrelated jitter and draw 0.5                    | 2000  |
      | 3       | decorrelated jitter, draw 0 and previous 30000 ms   | 1000  |
      | 4       | decorrelated jitter, draw 0.9 and previous 50000 ms | 60000 |

    Examples: the plain first retry, and previous delays of nothing and of eleven days
      | attempt | options                                                  | delay |
      | 0       | decorrelated jitter and draw 0                           | 1000  |
      | 1       | decorrelated jitter, draw 0.9 and previous 0 ms          | 1000  |
      | 5       | decorrelated jitter, draw 0.5 and previous 1000000000 ms | 60000 |

  # -- RT-010: retry-after as a floor -------------------------------------------------------

  @RT-010
  Scenario Outline: A server's retry-after is a floor on the delay, and the cap still holds
    When the delay for attempt <attempt> is computed with 1000 ms, multiplier 2 and a cap of 60000 ms, with <options>
    Then the delay is <delay> ms
    And the delay is at most the cap

    Examples:
      | attempt | options                                     | delay |
      | 0       | retry-after 5000 ms                         | 5000  |
      | 0       | retry-after 500 ms                          | 1000  |
      | 0       | retry-after 90000 ms                        | 60000 |
      | 10000   | retry-after 90000 ms                        | 60000 |

    Examples: a server asking for no wait, or for the runtime's own delay, or for 31 years
      | attempt | options                                  | delay |
      | 0       | retry-after 0 ms                         | 1000  |
      | 0       | retry-after 1000 ms                      | 1000  |
      | 0       | retry-after 1000000000000 ms             | 60000 |

  # Jitter and a retry-after at once: skipped, with the jitter, on a backend that claims
  # retry without jitter modes.
  @RT-010 @RT-009
  Scenario Outline: A server's retry-after is a floor on a jittered delay too
    When the delay for attempt <attempt> is computed with 1000 ms, multiplier 2 and a cap of 60000 ms, with <options>
    Then the delay is <delay> ms
    And the delay is at most the cap

    Examples:
      | attempt | options                                     | delay |
      | 2       | full jitter, draw 0 and retry-after 3000 ms | 3000  |
      | 10000   | full jitter, draw 0 and retry-after 0 ms    | 0     |

  # Where the retry-after outlasts the runtime's own delay, a dispatch within that delay
  # comes first: a runtime that starts the job there waits out no delay at all (RT-002),
  # and only one that waits its own delay and starts the job before the retry-after has
  # ended ignores the retry-after (RT-010).
  @RT-010 @RT-003
  Scenario: The runtime waits out a retry-after longer than its own delay
    Given job "a" is submitted with 2 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And the runtime dispatches
    When job "a" raises ValueError "busy" with a retry-after of 5000 ms
    Then job "a" is queued
    And job "a" has retry count 1 of 2
    When 0.5 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    When 4.4 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    When 0.1 seconds pass
    And the runtime dispatches
    Then job "a" is running
    And job "a" started at second 5

  @RT-010 @RT-003
  Scenario: A retry-after beyond the cap waits only the cap
    Given job "a" is submitted with 2 retries, a delay of 1000 ms, multiplier 2 and a cap of 10000 ms
    And the runtime dispatches
    When job "a" raises ValueError "busy" with a retry-after of 30000 ms
    And 0.5 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    When 9.4 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    When 0.1 seconds pass
    And the runtime dispatches
    Then job "a" is running
    And job "a" started at second 10

  @RT-010 @RT-003
  Scenario: A retry-after shorter than the runtime's own delay does not shorten it
    Given job "a" is submitted with 2 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    And the runtime dispatches
    When job "a" raises ValueError "busy" with a retry-after of 200 ms
    And 0.5 seconds pass
    And the runtime dispatches
    Then job "a" is queued
    When 0.5 seconds pass
    And the runtime dispatches
    Then job "a" is running
    And job "a" started at second 1

  # -- RT-011: the deprecated attempt_number ----------------------------------------------------
  # Where the backend claims deprecated-aliases, every record the runtime hands out is read
  # for attempt_number too, which must equal its retry_count; elsewhere this is skipped as
  # not claimed.

  @RT-011
  Scenario: The deprecated attempt_number reads as the retries taken, from 0
    Given job "a" is submitted with 3 retries, a delay of 1000 ms, multiplier 2 and a cap of 60000 ms
    Then job "a" has retry count 0 of 3
    When the runtime dispatches
    And job "a" raises ValueError "flaky"
    Then job "a" has retry count 1 of 3
    When job "a" is read
    And 1 second passes
    And the runtime dispatches
    And job "a" raises ValueError "flaky again"
    Then job "a" has retry count 2 of 3
