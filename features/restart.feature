Feature: Restart over the same store
  A runtime whose store outlives it (a database) is stopped without a shutdown and a new
  one opens over the same store: every record is there as it was, queued work starts first
  and in its order, and work that was running comes back through the lease pass. The
  oracle keeps every record across the restart, and the harness compares every record, the
  listing and the health after it. A stop by SIGTERM or SIGINT shuts down first, lets
  what ends within the grace period end (the steps between "during which" and "the grace
  period ends"), kills only what is left, and puts the host's signal handlers back.
  Scenarios here are skipped on a backend that does not claim restart (one that keeps its
  jobs in the process's memory).

  # -- RS-001: records outlive the restart -------------------------------------------------

  @RS-001
  Scenario: Finished and queued jobs are there after a restart, as they were
    Given a runtime with 4 worker slots
    And jobs "a,b,c" are submitted
    When the runtime dispatches
    And job "a" returns {"answer": 42}
    And job "b" raises ValueError "boom"
    And 5 seconds pass
    And job "d" is submitted
    And the runtime restarts over the same store
    Then job "a" is succeeded
    And job "a" has the result {"answer": 42}
    And job "b" has the error "ValueError: boom"
    And job "c" is running
    And job "d" is queued
    When the jobs are listed
    Then the listing is "a,b,c,d"
    And every timestamp of job "a" is timezone-aware UTC
    And the health shows 1 queued, 1 running, 4 in total

  # -- RS-002: queued work keeps its place ---------------------------------------------------

  @RS-002
  Scenario: Jobs queued at a restart start first, in their order
    Given a runtime with 1 worker slot
    And jobs "a,b" are submitted
    And the runtime restarts over the same store
    When job "c" is submitted
    And the runtime dispatches
    Then job "a" is running
    When job "a" returns 1
    And the runtime dispatches
    Then job "b" is running
    And job "c" is queued

  # -- RS-003: running work comes back through the lease pass ----------------------------------

  @RS-003
  Scenario: A job running at a restart stays running until its lease lapses, then runs again
    Given a runtime with 2 worker slots
    And job "a" is submitted
    When the runtime dispatches
    And 10 seconds pass
    And the runtime restarts over the same store
    Then job "a" is running
    When leases expire with a lease of 60 seconds
    Then job "a" is running
    When 51 seconds pass
    And leases expire with a lease of 60 seconds
    Then job "a" is queued
    And job "a" has re-delivery count 1
    When the runtime dispatches
    And job "a" returns 7
    Then job "a" is succeeded

  # -- RS-004: a stop by signal ----------------------------------------------------------------

  @RS-004
  Scenario: SIGTERM shuts the runtime down, and the next runtime finds what it ended
    Given a runtime with 1 worker slot
    And jobs "a,b,c" are submitted
    When the runtime dispatches
    And job "a" returns 1
    And the runtime dispatches
    And 3 seconds pass
    And the runtime is sent SIGTERM with a grace period of 10 seconds
    Then job "a" is succeeded
    And job "b" is cancelled
    And job "c" is cancelled
    When job "d" is submitted
    And the runtime dispatches
    Then job "d" is running

  @RS-004
  Scenario: SIGTERM after a restart ends the jobs queued before the restart too
    Given a runtime with 1 worker slot
    And jobs "a,b" are submitted
    And the runtime restarts over the same store
    When the runtime dispatches
    And job "c" is submitted
    And the runtime is sent SIGTERM with a grace period of 10 seconds
    Then job "a" is cancelled
    And job "b" is cancelled
    And job "c" is cancelled

  # -- RS-005: a stop by signal under drain ----------------------------------------------------

  @RS-005
  Scenario: SIGTERM under drain lets the work run on, and the kill at the grace period's end changes no record
    Given a runtime with 2 worker slots
    And jobs "a,b" are submitted
    When the runtime dispatches
    And job "a" returns 1
    And job "c" is submitted
    And 3 seconds pass
    And the runtime is sent SIGTERM with a grace period of 10 seconds
    Then job "a" is succeeded
    And job "b" is running
    And job "c" is queued
    When the runtime dispatches
    Then job "c" is running
    And job "b" is running

  # -- RS-006: time inside the stop, under drain -------------------------------------------

  @RS-006
  Scenario: Under drain a body that ends within the grace period ends normally, and only the rest is killed
    Given a runtime with 2 worker slots
    And jobs "a,b,c" are submitted
    When the runtime dispatches
    And the runtime is sent SIGTERM with a grace period of 10 seconds, during which
    And 3 seconds pass
    And job "a" returns 1
    And the grace period ends
    Then job "a" is succeeded
    And job "a" has the result 1
    And job "b" is running
    And job "c" is queued

  @RS-006
  Scenario: Under drain a runtime whose last body ends within the grace period exits by itself
    Given a runtime with 1 worker slot
    And job "a" is submitted
    When the runtime dispatches
    And the runtime is sent SIGTERM with a grace period of 10 seconds, during which
    And 4 seconds pass
    And job "a" raises ValueError "boom"
    And the grace period ends
    Then job "a" is failed
    And job "a" has the error "ValueError: boom"

  @RS-006
  Scenario: A drain timeout shorter than the grace period cancels what is left before any kill
    Given a runtime with 1 worker slot
    And jobs "a,b" are submitted
    When the runtime dispatches
    And the runtime is sent SIGTERM with a grace period of 60 seconds
    Then job "a" is cancelled
    And job "b" is cancelled

  # -- RS-007: SIGINT, RS-008: the host's handlers ------------------------------------------

  @RS-007
  Scenario: SIGINT shuts the runtime down as SIGTERM does
    Given a runtime with 1 worker slot
    And jobs "a,b" are submitted
    When the runtime dispatches
    And 2 seconds pass
    And the runtime is sent SIGINT with a grace period of 10 seconds
    Then job "a" is cancelled
    And job "b" is cancelled
    When job "c" is submitted
    And the runtime dispatches
    Then job "c" is running

  @RS-008
  Scenario: A runtime stopped by SIGTERM puts back the host's signal handlers
    Given a runtime with 1 worker slot
    And job "a" is submitted
    When the runtime dispatches
    And the runtime is sent SIGTERM with a grace period of 10 seconds
    Then job "a" is cancelled
