Feature: Areas working together
  Loops, reminders and jobs of one owner share its admission: each loop run and each
  reminder fire takes a slot like a submitted job (seed 002, sections 38.1 and 10.14). A
  job meeting a half-open breaker is its probe only when a slot is free (section 10.11),
  and the governor's shared-cause pause holds the backlog drain and the lease reaper
  (section 10.11.1). Each scenario runs one composite runtime: the backend's own area
  runtimes on one admission.

  Background:
    Given a composite admission of 2 slots per owner
    And a composite breaker opening after 2 auth failures for 30 s
    And a composite governor pausing 300 s when 2 owners fail alike
    And a composite backlog expiring work older than 200 s
    And composite owners "a, b" are added

  @CX-001
  Scenario: A loop's runs take slots of their owner, behind the work already waiting
    When owner "a" starts composite loop "L" of 2 runs
    And owner "a" submits composite jobs "j1, j2"
    Then composite work "L#1, j1" is running
    And composite work "j2" is queued
    When composite work "L#1" ends
    Then composite work "j2" is running
    And composite work "L#2" is queued
    When composite work "j1" ends
    Then composite work "L#2" is running
    When composite work "L#2" ends
    Then composite loop "L" is completed after 2 runs

  @CX-002
  Scenario: A reminder's fire takes a slot, and waits in the backlog when none is free
    When owner "a" sets composite reminder "r1" due in 60 seconds
    And owner "a" submits composite jobs "j1, j2"
    And the composite clock moves 60 seconds
    Then composite reminder "r1" is fired
    And composite work "r1" is queued
    When composite work "j1" ends
    Then composite work "r1" is running
    When owner "a" submits composite jobs "j3"
    Then composite work "j3" is queued

  @CX-003
  Scenario: A half-open breaker's probe is refused while no slot is free, never queued
    When owner "a" submits composite jobs "j1, j2"
    And composite work "j1, j2" ends with an auth failure
    Then the composite breaker of owner "a" is open
    When owner "a" starts composite loop "L" of 1 runs
    And owner "a" starts composite loop "M" of 1 runs
    And the composite clock moves 30 seconds
    Then the composite breaker of owner "a" is half_open
    When owner "a" submits composite jobs "p1"
    Then composite job "p1" is refused
    And composite work "p1" was never admitted
    When composite work "L#1" ends
    And owner "a" submits composite jobs "p2"
    Then composite work "p2" is running
    When composite work "p2" ends
    Then the composite breaker of owner "a" is closed

  @CX-004
  Scenario: A governor pause holds the drain, while maintenance still expires stale work
    When owner "a" submits composite jobs "j1, j2, j3"
    And composite owners "a, b" report auth failure results
    Then the composite admission is paused
    When composite work "j1" ends
    Then composite work "j3" is queued
    When owner "a" submits composite jobs "j4"
    Then composite work "j4" is queued
    When the composite clock moves 100 seconds
    And owner "a" submits composite jobs "j5"
    And the composite clock moves 150 seconds
    And the composite maintenance runs
    Then composite work "j3, j4" is expired
    And composite work "j5" is queued
    When the composite clock moves 50 seconds
    And the composite maintenance runs
    Then composite work "j5" is running

  @CX-005
  Scenario: A governor pause holds the lease reaper, and the lapsed leases go once it ends
    When owner "a" submits composite jobs "j1, j2"
    And owner "b" submits composite jobs "j3"
    And the composite admission restarts
    And the composite clock moves 1140 seconds
    And composite owners "a, b" report auth failure results
    Then the composite admission is paused
    When the composite clock moves 60 seconds
    Then composite work "j1, j2, j3" is running
    When owner "a" submits composite jobs "j4"
    Then composite work "j4" is queued
    When composite work "j3" ends
    Then composite work "j3" is finished
    When the composite clock moves 240 seconds
    Then composite work "j1, j2" is lease_expired
    And composite work "j4" is running

  @CX-006
  Scenario: A loop's run stopped at its owner's execution timeout fails, and the loop with it
    When owner "a" starts composite loop "L" of 3 runs
    And the composite clock moves 600 seconds
    And owner "a" submits composite jobs "j1, j2"
    Then composite work "j2" is queued
    When the composite clock moves 300 seconds
    Then composite work "L#1" is timed_out
    And composite work "j1, j2" is running
    And composite loop "L" is failed after 1 runs
    And composite work "L#2" was never admitted

  @CX-006
  Scenario: A loop's run expired in the backlog fails, and the loop with it
    When owner "a" submits composite jobs "j1, j2"
    And owner "a" starts composite loop "L" of 3 runs
    Then composite work "L#1" is queued
    When the composite clock moves 201 seconds
    And the composite maintenance runs
    Then composite work "L#1" is expired
    And composite loop "L" is failed after 1 runs
    And composite work "L#2" was never admitted

  @CX-006
  Scenario: A loop's run whose lease is reclaimed after a restart fails, and the loop with it
    When owner "a" starts composite loop "L" of 3 runs
    And the composite admission restarts
    And the composite clock moves 1260 seconds
    Then composite work "L#1" is lease_expired
    And composite loop "L" is failed after 1 runs
    And composite work "L#2" was never admitted
