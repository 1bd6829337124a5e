Feature: A self-running runtime's own clockwork
  A runtime that claims self-running is opened with a poll interval (the profile's, 1 s)
  and acts by itself: nothing here dispatches, detects stuck jobs or expires leases. The
  steps only submit, end bodies, send heartbeats and let time pass; on the way the harness
  reads at the last instant each action is still forbidden, inside its window and at the
  window's close, so an early action fails as surely as a late or missing one. Scenarios
  here are skipped on a backend that does not claim self-running, and those of SR-002,
  SR-003, SR-004, SR-005, SR-006, SR-007, SR-008 and SR-009 on one that does not also claim
  stuck, redelivery, retry, reaper, scheduling, breaker-seams, reminders or scheduling and
  scheduling-ends.

  # -- SR-001: queued work starts without a dispatch ----------------------------------------

  @SR-001
  Scenario: A submitted job starts within one poll interval, with no dispatch
    Given the self-running runtime takes job "a"
    When 1 seconds pass on the self-running runtime
    Then the self-running runtime shows job "a" running

  @SR-001
  Scenario: A job waiting for a slot starts within one poll interval after the slot frees
    Given a self-running runtime with 1 slots
    And the self-running runtime takes job "a"
    And the self-running runtime takes job "b"
    When 3 seconds pass on the self-running runtime
    Then the self-running runtime shows job "b" queued
    When job "a" on the self-running runtime returns
    And 1 seconds pass on the self-running runtime
    Then the self-running runtime shows job "b" running

  # -- SR-002: stuck detection by itself ------------------------------------------------------

  @SR-002
  Scenario: A silent job is failed as stuck within one poll interval after its timeout
    Given a self-running runtime with a job timeout of 30 seconds
    And the self-running runtime takes job "a"
    When 1 seconds pass on the self-running runtime
    And the self-running runtime's windows pass
    Then the self-running runtime shows job "a" failed

  @SR-002
  Scenario: A heartbeat moves the stuck window, and a freed slot takes the next job
    Given a self-running runtime with 1 slots
    And a self-running runtime with a job timeout of 30 seconds
    And the self-running runtime takes job "a"
    And the self-running runtime takes job "b"
    When 20 seconds pass on the self-running runtime
    And job "a" on the self-running runtime sends a heartbeat
    And 25 seconds pass on the self-running runtime
    Then the self-running runtime shows job "a" running
    When the self-running runtime's windows pass
    Then the self-running runtime shows job "a" failed
    When 1 seconds pass on the self-running runtime
    Then the self-running runtime shows job "b" running

  # -- SR-003: re-delivery by itself ----------------------------------------------------------

  @SR-003
  Scenario: A job whose lease lapsed is re-queued and running again within two poll intervals
    Given a self-running runtime with a lease of 20 seconds
    And the self-running runtime takes job "a"
    When 23 seconds pass on the self-running runtime
    Then the self-running runtime shows job "a" running
    And the self-running runtime has re-delivered job "a" 1 time(s)

  @SR-003
  Scenario: A re-delivered body that returns ends the job
    Given a self-running runtime with a lease of 10 seconds
    And the self-running runtime takes job "a"
    When 15 seconds pass on the self-running runtime
    Then the self-running runtime shows job "a" running
    When job "a" on the self-running runtime returns
    Then the self-running runtime shows job "a" succeeded
    And the self-running runtime has re-delivered job "a" 1 time(s)

  # -- SR-004: retries come back when due -----------------------------------------------------

  @SR-004
  Scenario: A retried failure starts again when due, not before, within one poll interval
    Given the self-running runtime takes job "a" with 2 retries 5000 ms apart
    When 1 seconds pass on the self-running runtime
    And job "a" on the self-running runtime raises IOError
    Then the self-running runtime shows job "a" queued
    When the self-running runtime's windows pass
    Then the self-running runtime shows job "a" running
    When job "a" on the self-running runtime raises IOError
    And the self-running runtime's windows pass
    And job "a" on the self-running runtime returns
    Then the self-running runtime shows job "a" succeeded

  @SR-004 @edge
  Scenario: A retry that comes due between two polls starts within one poll interval
    # due at 4.5 s, half a poll after a tick: a runtime whose scheduler moves it to the
    # queue only after its workers' poll at 5 s starts it at 6 s, past the window at 5.5 s
    Given the self-running runtime takes job "a" with 2 retries 3000 ms apart
    When 0.5 seconds pass on the self-running runtime
    And 1 seconds pass on the self-running runtime
    And job "a" on the self-running runtime raises IOError
    And 0.5 seconds pass on the self-running runtime
    And 0.5 seconds pass on the self-running runtime
    And 1 seconds pass on the self-running runtime
    And 2 seconds pass on the self-running runtime
    Then the self-running runtime shows job "a" running

  # -- SR-005: the reaper sweeps by itself -----------------------------------------------------

  @SR-005
  Scenario: An ended job is held through its TTL and removed within one sweep interval
    Given the self-running runtime takes job "a"
    When 1 seconds pass on the self-running runtime
    And job "a" on the self-running runtime returns
    And the reaper's time to live passes on the self-running runtime
    Then the self-running runtime shows job "a" succeeded
    When the self-running runtime's windows pass
    Then the self-running runtime has removed job "a"

  # -- SR-006: schedules fire by themselves ----------------------------------------------------

  @SR-006
  Scenario: A one-shot job fires by itself within one poll interval after its time, not before
    Given the self-running scheduler has a one-shot job "report" in 30 seconds
    When 29 seconds pass on the self-running runtime
    Then the self-running scheduler has fired schedule "report" 0 time(s)
    When the self-running runtime's windows pass
    Then the self-running scheduler has fired schedule "report" 1 time(s)
    When 300 seconds pass on the self-running runtime
    Then the self-running scheduler has fired schedule "report" 1 time(s)

  @SR-006
  Scenario: A cron schedule fires each fire time by itself, once, within one poll interval
    Given the self-running scheduler has a cron schedule "digest" at "*/2 * * * *"
    And the self-running runtime takes job "a"
    When 1 seconds pass on the self-running runtime
    And job "a" on the self-running runtime returns
    And 365 seconds pass on the self-running runtime
    Then the self-running scheduler has fired schedule "digest" 3 time(s)
    And the self-running runtime shows job "a" succeeded

  # -- SR-009: the scheduler learns how each execution ended, by itself ------------------------

  @SR-009
  Scenario: The scheduler learns how a dispatched execution ended by itself, within one poll interval
    Given the self-running scheduler has a one-shot job "report" in 30 seconds that runs 5.5 seconds and ends as succeeded
    When 35 seconds pass on the self-running runtime
    Then the self-running scheduler has learned how 0 execution(s) of schedule "report" ended
    When the self-running runtime's windows pass
    Then the self-running scheduler has learned how 1 execution(s) of schedule "report" ended

  @SR-009
  Scenario: The scheduler learns how each cron execution ended by itself, a failure as well
    Given the self-running scheduler has a cron schedule "digest" at "*/2 * * * *" whose executions run 10 seconds and end as failed
    When 255 seconds pass on the self-running runtime
    Then the self-running scheduler has learned how 2 execution(s) of schedule "digest" ended
    And the self-running scheduler has fired schedule "digest" 2 time(s)

  # -- SR-007: the breaker's backstop sweeps by itself -------------------------------------------

  @SR-007
  Scenario: The breaker's backstop fails a lost drain's work by itself at its interval, not before
    Given 5 seconds pass on the self-running runtime
    And the self-running breaker trips target "a" with work "w1, w2" queued and its drain lost
    When 54 seconds pass on the self-running runtime
    Then the self-running breaker queues work "w1, w2" for target "a"
    When 1 seconds pass on the self-running runtime
    Then the self-running breaker has failed work "w1, w2" of target "a"
    And the self-running breaker queues no work for target "a"
    When 40 seconds pass on the self-running runtime
    And the self-running breaker trips target "a" with work "w3" queued and its drain lost
    And 19 seconds pass on the self-running runtime
    Then the self-running breaker queues work "w3" for target "a"
    When 1 seconds pass on the self-running runtime
    Then the self-running breaker has failed work "w1, w2, w3" of target "a"

  # -- SR-008: reminders dispatched by the runtime itself ----------------------------------------

  @SR-008
  Scenario: Reminders are dispatched by the runtime itself at their due time, never early
    Given the self-running runtime has a reminder "check the PR" in 60 seconds
    And the self-running runtime has a reminder "follow up" in 90 seconds whose first 1 dispatch(es) fail
    When 59 seconds pass on the self-running runtime
    Then the self-running runtime has dispatched reminder "check the PR" 0 time(s)
    When 1 seconds pass on the self-running runtime
    Then the self-running runtime has dispatched reminder "check the PR" 1 time(s)
    And the self-running runtime shows reminder "check the PR" fired
    When 30 seconds pass on the self-running runtime
    Then the self-running runtime has dispatched reminder "follow up" 1 time(s)
    And the self-running runtime shows reminder "follow up" pending
    When 59 seconds pass on the self-running runtime
    Then the self-running runtime has dispatched reminder "follow up" 1 time(s)
    When 1 seconds pass on the self-running runtime
    Then the self-running runtime has dispatched reminder "follow up" 2 time(s)
    And the self-running runtime shows reminder "follow up" fired
