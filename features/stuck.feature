Feature: Stuck-job detection
  A running job's body reports progress with heartbeats, which move the record's
  last_heartbeat to the runtime clock's time. A detection pass fails every running job
  whose last heartbeat is strictly more than the timeout old, with the error
  "Heartbeat timeout — job stuck", and answers how many it failed. Queued and terminal
  jobs are never touched. Scenarios here are skipped on a backend that does not claim the
  stuck area and under a profile the stuck requirements do not apply to. Seconds count
  from the start of the virtual clock.

  # -- ST-001: heartbeats move last_heartbeat of running jobs only --------------------------

  @ST-001
  Scenario: A job's last heartbeat is its start time, and a heartbeat moves it to now
    Given job "a" is submitted
    And 5 seconds pass
    When the runtime dispatches
    Then job "a" is running
    And job "a" started at second 5
    And job "a" last heartbeat is at second 5
    When 5 seconds pass
    And job "a" sends a heartbeat
    Then job "a" last heartbeat is at second 10
    And job "a" started at second 5
    And job "a" is running

  @ST-001
  Scenario: A heartbeat of a queued job changes nothing
    Given a runtime with 1 worker slot
    And jobs "a, b" are submitted
    And the runtime dispatches
    When 10 seconds pass
    And job "b" sends a heartbeat
    Then job "b" is queued
    And job "b" has no last heartbeat
    And job "b" has no start time
    When job "a" returns 1
    And the runtime dispatches
    Then job "b" is running
    And job "b" last heartbeat is at second 10

  @ST-001
  Scenario: A heartbeat of a finished job changes nothing
    Given job "a" is submitted
    And the runtime dispatches
    And 3 seconds pass
    And job "a" returns "done"
    When 7 seconds pass
    And job "a" sends a heartbeat
    Then job "a" is succeeded
    And job "a" last heartbeat is at second 0
    And job "a" finished at second 3
    And job "a" has the result "done"

  # -- ST-002: silent past the timeout -> failed as stuck -----------------------------------

  @ST-002
  Scenario: A job silent for 61 seconds is failed as stuck with a timeout of 60
    Given job "a" is submitted
    And the runtime dispatches
    When 61 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 1 job was failed as stuck
    And job "a" is failed
    And job "a" has the error "Heartbeat timeout — job stuck"
    And job "a" finished at second 61
    And job "a" has no result
    And the counters show 1 processed, 1 failed, 0 cancelled
    And the health shows 0 queued, 0 running, 1 in total

  @ST-002 @edge
  Scenario: A job silent for half a second past the timeout is failed as stuck
    Given job "a" is submitted
    And the runtime dispatches
    When 60.5 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 1 job was failed as stuck
    And job "a" is failed
    And job "a" finished at second 60.5

  @ST-002 @LC-010
  Scenario: A job failed as stuck frees its worker slot for the next queued job
    Given a runtime with 1 worker slot
    And jobs "a, b" are submitted
    And 1 second passes
    And the runtime dispatches
    When 61 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 1 job was failed as stuck
    And job "b" is queued
    When the runtime dispatches
    Then job "b" is running
    And job "b" started at second 62
    When job "b" returns "done"
    Then job "b" is succeeded
    And job "b" has the result "done"

  @ST-002 @RT-001
  Scenario: A job is failed as stuck whatever its retry policy
    Given job "a" is submitted with 3 retries
    And the runtime dispatches
    When 61 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 1 job was failed as stuck
    And job "a" is failed
    And job "a" has the error "Heartbeat timeout — job stuck"

  @ST-001 @ST-002
  Scenario: Detection measures from the last heartbeat, not from the start
    Given job "a" is submitted
    And the runtime dispatches
    And 50 seconds pass
    And job "a" sends a heartbeat
    When 50 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 0 jobs were failed as stuck
    And job "a" is running
    And job "a" last heartbeat is at second 50
    And the counters show 0 processed, 0 failed, 0 cancelled
    When 11 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 1 job was failed as stuck
    And job "a" is failed
    And job "a" has the error "Heartbeat timeout — job stuck"
    And job "a" finished at second 111

  @ST-002
  Scenario: One pass fails every stuck job and counts them, leaving the live one
    Given jobs "a, b" are submitted
    And the runtime dispatches
    And 30 seconds pass
    And job "b" sends a heartbeat
    And job "c" is submitted
    And the runtime dispatches
    And 40 seconds pass
    When stuck jobs are detected with a timeout of 60 seconds
    Then 1 job was failed as stuck
    And job "a" is failed
    And jobs "b, c" are running
    When 60 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 2 jobs were failed as stuck
    And jobs "a, b, c" are failed
    And the counters show 3 processed, 3 failed, 0 cancelled

  # -- ST-003: the boundary is exclusive ----------------------------------------------------

  @ST-003
  Scenario: A job exactly the timeout old is not stuck; half a second more is
    Given job "a" is submitted
    And the runtime dispatches
    When 60 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 0 jobs were failed as stuck
    And job "a" is running
    And job "a" has no error
    When 0.5 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 1 job was failed as stuck
    And job "a" is failed
    And job "a" finished at second 60.5

  # -- ST-004: running jobs only ------------------------------------------------------------

  @ST-004
  Scenario: A queued job of any age is never failed as stuck
    Given a runtime with 1 worker slot
    And jobs "a, b" are submitted
    And the runtime dispatches
    And 1000 seconds pass
    And job "a" sends a heartbeat
    When stuck jobs are detected with a timeout of 60 seconds
    Then 0 jobs were failed as stuck
    And job "b" is queued
    And job "b" has no error
    And job "b" has no finish time
    And job "a" is running
    And the counters show 0 processed, 0 failed, 0 cancelled

  @ST-004
  Scenario: Terminal jobs are never failed as stuck
    Given jobs "a, b, c" are submitted
    And job "c" is cancelled
    And the runtime dispatches
    And job "a" returns "done"
    And job "b" raises ValueError "boom"
    When 1000 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    Then 0 jobs were failed as stuck
    And job "a" is succeeded
    And job "a" has the result "done"
    And job "a" has no error
    And job "b" is failed
    And job "b" has the error "ValueError: boom"
    And job "c" is cancelled
    And job "a" finished at second 0
    And job "b" finished at second 0
    And the counters show 2 processed, 1 failed, 1 cancelled

  @ST-004 @ST-002
  Scenario: A body that ends after its job was failed as stuck changes nothing
    Given job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And stuck jobs are detected with a timeout of 60 seconds
    When 1 second passes
    And job "a" returns "late"
    Then job "a" is failed
    And job "a" has the error "Heartbeat timeout — job stuck"
    And job "a" has no result
    And job "a" finished at second 61
    And the counters show 1 processed, 1 failed, 0 cancelled
    When job "a" sends a heartbeat
    Then job "a" last heartbeat is at second 0

  # -- ST-005: the health report carries the last heartbeat ----------------------------------

  @ST-005
  Scenario: The health report's last heartbeat is its jobs' latest, and cleanup keeps it
    Given a runtime with 2 worker slots
    Then the health report has no last heartbeat
    When jobs "a, b" are submitted
    And 5 seconds pass
    And the runtime dispatches
    Then the health report's last heartbeat is at second 5
    When 5 seconds pass
    And job "a" sends a heartbeat
    Then the health report's last heartbeat is at second 10
    When job "b" sends a heartbeat
    And 5 seconds pass
    Then the health report's last heartbeat is at second 10
    When job "a" returns 1
    And job "b" returns 2
    And 60 seconds pass
    And cleanup runs with a max age of 60 seconds
    Then cleanup removed 2 jobs
    And the health report's last heartbeat is at second 10
