Feature: Re-delivery governor
  Re-deliveries wait a decorrelated jitter with a server retry-after as a floor, pass a
  per-target and a fleet-wide cap over sliding windows (over a cap: a retryable refusal
  with a retry-after, never a drop), and pause for a while when enough distinct targets
  fail with one class (seed 002, section 10.11.1). Each check runs two governors on one
  store; scenarios fix the parameters they depend on.

  Background:
    Given a governor allowing 2 re-deliveries per target and 3 in all per 60 s
    And a governor pausing 300 s when 3 targets fail alike within 120 s
    And a governor waiting from 1000 ms up to 60000 ms
    And a governor whose restart jitter is at most 60 s

  @RG-001
  Scenario: The wait is a decorrelated jitter, capped, with the retry-after as floor
    When the first re-delivery wait is asked with draw 0.5
    Then the re-delivery wait is 2000 ms
    When the re-delivery wait is asked after 2000 ms with draw 0.25
    Then the re-delivery wait is 2250 ms
    When the re-delivery wait is asked after 40000 ms with draw 0.99
    Then the re-delivery wait is 60000 ms
    When the re-delivery wait is asked after 1000 ms with draw 0 and a retry-after of 9000 ms
    Then the re-delivery wait is 9000 ms
    When the re-delivery wait is asked after 1000 ms with draw 0 and a retry-after of 90000 ms
    Then the re-delivery wait is 60000 ms

  @RG-002 @RG-004
  Scenario: A target's cap refuses with the time until its oldest re-delivery leaves the window
    When a re-delivery for target "a" is offered
    And the governor clock moves 10 seconds
    And a re-delivery for target "a" is offered at governor 2
    And a re-delivery for target "a" is offered
    Then the re-delivery is refused, to retry after 50 seconds
    When the governor clock moves 49 seconds
    And a re-delivery for target "a" is offered
    Then the re-delivery is refused, to retry after 1 seconds
    When the governor clock moves 1 seconds
    And a re-delivery for target "a" is offered
    Then the re-delivery is accepted

  @RG-003
  Scenario: The fleet-wide cap counts every target together
    When a re-delivery for target "a" is offered
    And a re-delivery for target "b" is offered at governor 2
    And the governor clock moves 30 seconds
    And a re-delivery for target "c" is offered
    And a re-delivery for target "d" is offered
    Then the re-delivery is refused, to retry after 30 seconds

  @RG-004
  Scenario: A refused re-delivery is not counted and goes out when offered again
    When 2 re-deliveries for target "a" are offered
    And 3 re-deliveries for target "a" are offered
    Then the re-delivery is refused, to retry after 60 seconds
    When the governor clock moves 60 seconds
    And 2 re-deliveries for target "a" are offered
    Then the re-delivery is accepted

  @RG-005
  Scenario: Three distinct targets failing with auth pause re-delivery
    When targets "a, b" each record a failure result of class auth
    Then re-delivery is not paused
    When the governor clock moves 100 seconds
    And target "c" records failure result "c1" of class auth
    Then re-delivery is paused until second 400
    When a re-delivery for target "z" is offered
    Then the re-delivery is refused, to retry after 30 seconds

  @RG-005
  Scenario: Failures outside the window or of a non-pausing class do not pause
    When targets "a, b" each record a failure result of class auth
    And the governor clock moves 120 seconds
    And target "c" records failure result "c1" of class auth
    And targets "d, e, f" each record a failure result of class timeout
    Then re-delivery is not paused

  @RG-010
  Scenario: Rate limits at three targets pause re-delivery as billing failures
    When targets "a, b" each record a rate-limited result
    Then re-delivery is not paused
    When target "a" records rate-limited result "a-again"
    And target "c" records failure result "c1" of class auth
    Then re-delivery is not paused
    When the governor clock moves 50 seconds
    And target "c" records rate-limited result "c2"
    Then re-delivery is paused until second 350
    When a re-delivery for target "z" is offered
    Then the re-delivery is refused, to retry after 30 seconds

  @RG-010
  Scenario: A rate limit counts together with the billing failures of other targets
    When target "a" records rate-limited result "a1"
    And target "b" records failure result "b1" of class billing
    Then re-delivery is not paused
    When target "c" records rate-limited result "c1"
    Then re-delivery is paused until second 300

  @RG-014
  Scenario: Kills at three targets never pause re-delivery, whatever their text says
    When target "a" records failure result "a1" exiting with code -9 saying "Unauthorized"
    And target "b" records failure result "b1" exiting with code 137 saying "authentication failed"
    And target "c" records failure result "c1" exiting with code 1 saying "OOM kill: invalid API key"
    And target "d" records failure result "d1" killed by SIGTERM
    Then re-delivery is not paused
    When target "a" records failure result "a2" exiting with code 1 saying "HTTP 401 Unauthorized"
    And target "b" records failure result "b2" exiting with code 1 saying "invalid API key"
    Then re-delivery is not paused
    When target "c" records failure result "c2" exiting with code 1 saying "token expired"
    Then re-delivery is paused until second 300

  @RG-012
  Scenario: The re-send sweep sends its envelopes one after another, each after its own jitter
    When governor 1 is asked when its sweep re-sends envelopes with draws "0.5"
    Then no envelope is re-sent
    When the governor clock moves 10 seconds
    And governor 1 restarts with draw 0.5
    And governor 1 is asked when its sweep re-sends envelopes with draws "0.5, 0.25, 0, 0.75"
    Then the envelopes are re-sent at seconds "40.5, 40.75, 40.75, 41.5"
    When governor 2 restarts with draw 0
    And governor 2 is asked when its sweep re-sends envelopes with draws "0.999, 0.5"
    Then the envelopes are re-sent at seconds "10.999, 11.499"

  @RG-011
  Scenario: A governor whose store is down holds nothing back, and the store keeps its pause
    When targets "a, b, c" each record a failure result of class auth
    Then re-delivery is paused until second 300
    When the governor store becomes unreachable
    Then re-delivery is not paused
    When 3 re-deliveries for target "a" are offered
    Then the re-delivery is accepted
    When the governor store is reachable again
    Then re-delivery is paused until second 300
    When a re-delivery for target "a" is offered
    Then the re-delivery is refused, to retry after 30 seconds

  @RG-011
  Scenario: Nothing done while the store is down counts once it is back
    When the governor store becomes unreachable
    And targets "a, b" each record a failure result of class auth
    And target "c" records rate-limited result "c1"
    And 3 re-deliveries for target "a" are offered
    Then the re-delivery is accepted
    When the governor store is reachable again
    And target "c" records failure result "c2" of class auth
    Then re-delivery is not paused
    When 2 re-deliveries for target "a" are offered
    Then the re-delivery is accepted
    When target "a" records rate-limited result "a9"
    And target "b" records rate-limited result "b9"
    And target "c" records rate-limited result "c1"
    Then re-delivery is paused until second 300

  @RG-006
  Scenario: One target failing again and again cannot arm the pause
    When target "a" records failure result "a1" of class auth
    And target "a" records failure result "a2" of class auth
    And target "a" records failure result "a3" of class auth
    And target "b" records failure result "b1" of class billing
    And target "c" records failure result "c1" of class billing
    Then re-delivery is not paused
    When target "d" records failure result "d1" of class auth
    Then re-delivery is not paused

  @RG-007
  Scenario: A replayed result is counted once
    When target "a" records failure result "r1" of class auth
    And target "b" records failure result "r2" of class auth
    And target "c" records failure result "r1" of class auth
    Then re-delivery is not paused
    When target "c" records failure result "r3" of class auth
    Then re-delivery is paused until second 300

  @RG-008
  Scenario: The pause ends by itself and is not extended while it runs
    When targets "a, b, c" each record a failure result of class auth
    And the governor clock moves 200 seconds
    And targets "d, e, f" each record a failure result of class auth
    Then re-delivery is paused until second 300
    When the governor clock moves 100 seconds
    Then re-delivery is not paused
    When a re-delivery for target "a" is offered
    Then the re-delivery is accepted

  @RG-008
  Scenario: A pause armed between whole seconds holds until a microsecond before its end
    Given the governor clock moves 0.5 seconds
    When targets "a, b, c" each record a failure result of class auth
    Then re-delivery is paused until second 300.5
    When the governor clock moves 299.999999 seconds
    And a re-delivery for target "a" is offered
    Then the re-delivery is refused, to retry after 30 seconds
    When the governor clock moves 0.000001 seconds
    Then re-delivery is not paused
    When a re-delivery for target "a" is offered
    Then the re-delivery is accepted

  @RG-009
  Scenario: A restart's first re-send sweep waits its own initial jitter
    Then governor 1 has no re-send sweep due
    When the governor clock moves 10 seconds
    And governor 1 restarts with draw 0.5
    And governor 2 restarts with draw 0.25
    Then governor 1's first re-send sweep is due at second 40
    And governor 2's first re-send sweep is due at second 25
    When the governor clock moves 100 seconds
    And governor 2 restarts with draw 0.999
    Then governor 2's first re-send sweep is due at second 169.94
    And governor 1's first re-send sweep is due at second 40
    When governor 1 restarts with draw 0
    Then governor 1's first re-send sweep is due at second 110

  @RG-013
  Scenario: A governor switched off holds nothing back, but the failures it records pause the other
    When governor 1 is switched off
    And 3 re-deliveries for target "a" are offered
    Then the re-delivery is accepted
    When targets "a, b, c" each record a failure result of class auth
    Then re-delivery is paused until second 300
    And governor 1 reads no pause
    When a re-delivery for target "a" is offered
    Then the re-delivery is accepted
    When a re-delivery for target "a" is offered at governor 2
    Then the re-delivery is refused, to retry after 30 seconds
    When governor 1 is switched on
    And a re-delivery for target "a" is offered
    Then the re-delivery is refused, to retry after 30 seconds

  @RG-013
  Scenario: Offers let through while switched off fill no window
    When governor 1 is switched off
    And 3 re-deliveries for target "a" are offered
    And governor 1 is switched on
    And 2 re-deliveries for target "a" are offered
    Then the re-delivery is accepted
    When a re-delivery for target "a" is offered
    Then the re-delivery is refused, to retry after 60 seconds
