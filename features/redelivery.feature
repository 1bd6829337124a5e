Feature: Re-delivery cap and poison parking
  A running job whose lease lapses (no heartbeat for longer than the lease) goes back to
  the queue under the same id while its re-delivery count is below the cap (3 by
  default); at the cap it is parked: an operator alert first, once per job, then the job
  is failed as poison. The count is raw attempts and never resets. Scenarios here are
  skipped on a backend that does not claim the redelivery area. Seconds count from the
  start of the virtual clock.

  # -- RD-001: re-queue under the cap ------------------------------------------------------

  @RD-001
  Scenario: An expired lease puts the same job back in the queue
    Given job "a" is submitted
    And the runtime dispatches
    When 61 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 1 and parked 0
    And job "a" is queued
    And job "a" has re-delivery count 1
    And job "a" is not parked
    And the counters show 0 processed, 0 failed, 0 cancelled
    And the health shows 1 queued, 0 running, 1 in total
    When the runtime dispatches
    Then job "a" is running
    And job "a" started at second 61
    When job "a" returns "done"
    Then job "a" is succeeded
    And job "a" has the result "done"
    And job "a" has re-delivery count 1

  @RD-001 @edge
  Scenario: A job silent for its lease plus a microsecond is re-delivered
    Given job "a" is submitted
    And the runtime dispatches
    When 60.000001 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 1 and parked 0
    And job "a" is queued

  @RD-001 @RT-001
  Scenario: A re-delivery spends no retry
    Given job "a" is submitted with 2 retries
    And the runtime dispatches
    When 61 seconds pass
    And leases expire with a lease of 60 seconds
    Then job "a" is queued
    And job "a" has retry count 0 of 2
    And job "a" has re-delivery count 1

  @RD-001
  Scenario: The next delivery waits for its own outcome
    Given job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    When the runtime dispatches
    Then job "a" is running
    And job "a" has no finish time
    When 1 second passes
    And job "a" raises ValueError "boom"
    Then job "a" is failed
    And job "a" has the error "ValueError: boom"
    And job "a" is not parked

  # -- RD-002: the cap -------------------------------------------------------------------------

  @RD-002 @RD-003
  Scenario: With the default cap of 3 the fourth expiry parks the job
    Given job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And the runtime dispatches
    Then job "a" has re-delivery count 3
    And job "a" is running
    When 61 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 1
    And job "a" is parked as poison
    And job "a" has re-delivery count 3
    And job "a" finished at second 244
    And the counters show 1 processed, 1 failed, 0 cancelled

  @RD-002 @RD-003 @edge
  Scenario: A cap of 0 parks at the first expiry
    Given a runtime with a re-delivery cap of 0
    And job "a" is submitted
    And the runtime dispatches
    When 61 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 1
    And job "a" is parked as poison
    And job "a" has re-delivery count 0
    And the operator alerts are "a"

  # -- RD-003: alert first, once, then poison ---------------------------------------------------

  @RD-003
  Scenario: Parking alerts the operator once per job, in order, and fails the jobs as poison
    Given a runtime with a re-delivery cap of 1
    And jobs "a, b, c" are submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And the runtime dispatches
    And 30 seconds pass
    And job "a" sends a heartbeat
    And 31 seconds pass
    When leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 2
    And jobs "b, c" are failed
    And job "b" is parked as poison
    And job "c" is parked as poison
    And job "a" is running
    And the operator alerts are "b, c"
    When 60 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 1
    And job "a" is parked as poison
    And the operator alerts are "b, c, a"
    And the counters show 3 processed, 3 failed, 0 cancelled

  @RD-003
  Scenario: A job that ends on its own is never alerted
    Given job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And the runtime dispatches
    When job "a" returns 1
    Then job "a" is succeeded
    And job "a" is not parked
    And no operator alert was raised

  # -- RD-004: raw attempts, never reset -----------------------------------------------------------

  @RD-004 @RD-001
  Scenario: Heartbeats after a re-delivery do not reset the count
    Given a runtime with a re-delivery cap of 2
    And job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And the runtime dispatches
    When 30 seconds pass
    And job "a" sends a heartbeat
    And 30 seconds pass
    And job "a" sends a heartbeat
    Then job "a" has re-delivery count 1
    When 61 seconds pass
    And leases expire with a lease of 60 seconds
    And the runtime dispatches
    And 10 seconds pass
    And job "a" sends a heartbeat
    Then job "a" has re-delivery count 2
    When 61 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 1
    And job "a" is parked as poison

  # -- RD-005: only running jobs past the lease ----------------------------------------------------

  @RD-005
  Scenario: A job that beat within the lease keeps it, however long ago it started
    Given job "a" is submitted
    And the runtime dispatches
    And 50 seconds pass
    And job "a" sends a heartbeat
    When 30 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 0
    And job "a" is running
    And job "a" has re-delivery count 0

  @RD-005
  Scenario: A job exactly the lease old keeps its lease
    Given job "a" is submitted
    And the runtime dispatches
    When 60 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 0
    And job "a" is running
    And job "a" has re-delivery count 0
    When 0.5 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 1 and parked 0

  @RD-005
  Scenario: Queued and finished jobs are never re-queued or parked
    Given a runtime with 1 worker slot
    And a runtime with a re-delivery cap of 0
    And jobs "a, b, c" are submitted
    And job "c" is cancelled
    And the runtime dispatches
    And job "a" returns 1
    When 1000 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 0
    And job "a" is succeeded
    And job "b" is queued
    And job "c" is cancelled
    And no operator alert was raised

  @RD-005
  Scenario: A heartbeat of a re-queued job changes nothing until it runs again
    Given job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    When 10 seconds pass
    And job "a" sends a heartbeat
    Then job "a" is queued
    And job "a" has re-delivery count 1

  # -- RD-006: a superseded delivery writes nothing -------------------------------------------------

  @RD-006
  Scenario: The owner that lost a job to a lease pass cannot write it once it is claimed again
    Given job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And the runtime dispatches
    When 5 seconds pass
    And the previous owner of job "a" reports its outcome
    Then the previous owner's write was refused
    And job "a" is running
    And job "a" has no finish time
    When the previous owner of job "a" reports a heartbeat
    Then the previous owner's write was refused
    When the previous owner of job "a" reports a failure
    Then the previous owner's write was refused
    When 56 seconds pass
    And leases expire with a lease of 60 seconds
    Then the lease pass re-queued 1 and parked 0
    And job "a" has re-delivery count 2
    When the runtime dispatches
    And job "a" returns "done"
    Then job "a" is succeeded
    And job "a" has the result "done"
    And the counters show 1 processed, 0 failed, 0 cancelled

  @RD-006
  Scenario: The previous owner cannot write a re-queued or a parked job either
    Given a runtime with a re-delivery cap of 1
    And job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    When the previous owner of job "a" reports its outcome
    Then the previous owner's write was refused
    And job "a" is queued
    When the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    Then job "a" is parked as poison
    When the previous owner of job "a" reports its outcome
    Then the previous owner's write was refused
    And job "a" is parked as poison

  # -- RD-007: store faults in a lease pass -----------------------------------------------------

  @RD-007
  Scenario: A park and a re-queue whose store writes fail are made again at once, once each
    Given a runtime with a re-delivery cap of 1
    And job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And job "b" is submitted
    And the runtime dispatches
    And 61 seconds pass
    When store write 2 fails while leases expire with a lease of 60 seconds
    Then the lease pass re-queued 1 and parked 1
    And job "a" is parked as poison
    And job "b" is queued
    And job "b" has re-delivery count 1
    And the operator alerts are "a"
    When store write 1 fails while leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 0

  @RD-007 @RD-003
  Scenario: A crash inside a park keeps its alert, and the restarted rescuer fails the job without a second one
    Given a runtime with a re-delivery cap of 1
    And job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And job "b" is submitted
    And the runtime dispatches
    And 61 seconds pass
    When the process crashes at store write 2 while leases expire with a lease of 60 seconds
    Then the lease pass re-queued 1 and parked 1
    And job "a" is parked as poison
    And job "b" is queued
    And job "b" has re-delivery count 1
    And the operator alerts are "a"
    And the counters show 1 processed, 1 failed, 0 cancelled

  @RD-007
  Scenario: A crash at a park's first write leaves no alert, and the restarted rescuer alerts once
    Given a runtime with a re-delivery cap of 0
    And job "a" is submitted
    And the runtime dispatches
    And 61 seconds pass
    When the process crashes at store write 1 while leases expire with a lease of 60 seconds
    Then the lease pass re-queued 0 and parked 1
    And job "a" is parked as poison
    And the operator alerts are "a"

  @RD-007 @RD-001
  Scenario: A crash between two re-queues keeps the first, counted once, and the restarted rescuer re-queues the second
    Given jobs "a, b" are submitted
    And the runtime dispatches
    And 61 seconds pass
    When the process crashes at store write 2 while leases expire with a lease of 60 seconds
    Then the lease pass re-queued 1 and parked 0
    And job "a" is queued
    And job "a" has re-delivery count 1
    And job "b" is queued
    And job "b" has re-delivery count 1
    When the runtime dispatches
    And 61 seconds pass
    And the process crashes at store write 1 while leases expire with a lease of 60 seconds
    Then the lease pass re-queued 2 and parked 0
    And job "a" has re-delivery count 2
    And job "b" has re-delivery count 2
    And no operator alert was raised

  # -- RD-008: the operator queue, unique per agent and request id -----------------------------

  @RD-008
  Scenario: Two agents that reuse one request id hold two requests
    When agent "scout" parks the operator request "approval-1"
    Then the request parked is request 1
    When agent "critic" parks the operator request "approval-1"
    Then the request parked is request 2
    And the operator requests are "scout approval-1, critic approval-1"

  @RD-008 @RD-001
  Scenario: A re-park under re-delivery lands on the request parked first
    Given job "a" is submitted
    And the runtime dispatches
    When agent "scout" parks the operator request "approval-a"
    And agent "scout" parks the operator request "deploy-a"
    And 61 seconds pass
    And leases expire with a lease of 60 seconds
    And the runtime dispatches
    Then job "a" is running
    And job "a" has re-delivery count 1
    When agent "scout" parks the operator request "approval-a"
    Then the request parked is request 1
    And the operator requests are "scout approval-a, scout deploy-a"
    And no operator alert was raised
