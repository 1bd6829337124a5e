Feature: Dispatch circuit breaker
  One breaker per target (seed 002, section 10.11). Consecutive counted failures open it;
  an open breaker refuses calls and new work; after the cooldown one probe decides whether
  it closes or opens again for a longer cooldown. Each check runs two workers on one store.
  Scenarios fix the parameters they depend on, so they hold under every profile the
  breaker applies to; seconds count from the start of the virtual clock.

  Background:
    Given a breaker tripping after 3 failures with a 30 s cooldown growing 2-fold up to 300 s
    And a breaker that counts only "auth" failures
    And a breaker whose probe lease is 60 seconds

  @CB-001
  Scenario: A breaker engages only with the global switch and the target's opt-in
    Given target "a" opts in to the breaker
    When target "a" fails 3 calls with auth
    Then the breaker of target "a" is closed
    And the breaker of target "a" counts 0 failures
    When the global breaker switch is turned on
    And target "b" fails 3 calls with auth
    Then the breaker of target "b" is closed
    When target "a" fails 3 calls with auth
    Then the breaker of target "a" is open
    When the global breaker switch is turned off
    And call "c" to target "a" arrives
    Then call "c" is admitted

  @CB-002
  Scenario: Three consecutive auth failures open the breaker; a success resets the count
    Given the breaker is engaged for target "a"
    When target "a" fails 2 calls with auth
    Then the breaker of target "a" counts 2 failures
    When call "ok" to target "a" arrives
    And call "ok" to target "a" succeeds
    Then the breaker of target "a" counts 0 failures
    When target "a" fails 2 calls with auth
    Then the breaker of target "a" is closed
    When the breaker clock moves 5 seconds
    And target "a" fails 1 calls with auth
    Then the breaker of target "a" is open
    And the breaker of target "a" is open until second 35
    And the breaker of target "a" has a cooldown of 30 seconds

  @CB-003
  Scenario: Timeouts and agent errors neither count nor reset the count
    Given the breaker is engaged for target "a"
    When target "a" fails 2 calls with auth
    And target "a" fails 4 calls with timeout
    And target "a" fails 4 calls with agent_error
    Then the breaker of target "a" is closed
    And the breaker of target "a" counts 2 failures
    When target "a" fails 1 calls with auth
    Then the breaker of target "a" is open

  @CB-004
  Scenario: A cancelled call is not a failure, and a cancelled probe frees the slot
    Given the breaker is engaged for target "a"
    When target "a" fails 2 calls with auth
    And call "x" to target "a" arrives
    And call "x" to target "a" is cancelled
    Then the breaker of target "a" counts 2 failures
    When target "a" fails 1 calls with auth
    And the breaker clock moves 30 seconds
    And call "p" to target "a" arrives
    And call "p" to target "a" is cancelled
    Then the breaker of target "a" is half_open
    And target "a" has no probe in flight
    When call "q" to target "a" arrives
    Then call "q" is probe

  @CB-005
  Scenario: An open breaker refuses calls and does not enqueue new work
    Given the breaker is engaged for target "a"
    When target "a" fails 3 calls with auth
    And call "c" to target "a" arrives
    And work "w" is queued for target "a"
    Then call "c" is refused
    And work "w" is refused
    And the queue of target "a" is empty
    When the breaker clock moves 30 seconds
    And work "v" is queued for target "a"
    Then work "v" is refused

  @CB-005
  Scenario: An open period ending between whole seconds refuses a call a microsecond before its end
    Given the breaker is engaged for target "a"
    And the breaker clock moves 0.5 seconds
    When target "a" fails 3 calls with auth
    And the breaker clock moves 29.999999 seconds
    And call "c" to target "a" arrives
    Then call "c" is refused
    When the breaker clock moves 0.000001 seconds
    And call "p" to target "a" arrives
    Then call "p" is probe

  @CB-006
  Scenario: A trip fails the target's queued work at once, and only that target's
    Given the breaker is engaged for target "a"
    And the breaker is engaged for target "b"
    When work "w1" is queued for target "a"
    And work "w2" is queued for target "a"
    And work "x1" is queued for target "b"
    And target "a" fails 3 calls with auth
    Then the queue of target "a" is empty
    And the failed work of target "a" is "w1, w2"
    And the queue of target "b" holds "x1"

  @CB-007
  Scenario: After the cooldown exactly one of many concurrent callers is the probe
    Given the breaker is engaged for target "a"
    When target "a" fails 3 calls with auth
    And the breaker clock moves 29 seconds
    Then the breaker of target "a" is open
    When the breaker clock moves 1 seconds
    Then the breaker of target "a" is half_open
    When calls "p1, p2, p3, p4, p5, p6, p7, p8" to target "a" arrive at once
    Then the concurrent calls got 1 probe and 7 refused
    When call "late" to target "a" arrives at worker 2
    Then call "late" is refused

  @CB-008
  Scenario: A successful probe closes the breaker and resets the cooldown
    Given the breaker is engaged for target "a"
    When target "a" fails 3 calls with auth
    And the breaker clock moves 30 seconds
    And call "p" to target "a" arrives
    And call "p" to target "a" fails with auth
    Then the breaker of target "a" has a cooldown of 60 seconds
    When the breaker clock moves 60 seconds
    And call "q" to target "a" arrives
    And call "q" to target "a" succeeds
    Then the breaker of target "a" is closed
    And the breaker of target "a" has a cooldown of 30 seconds
    When target "a" fails 3 calls with auth
    Then the breaker of target "a" is open until second 120

  @CB-009
  Scenario: Each failed probe doubles the cooldown up to the cap
    Given the breaker is engaged for target "a"
    When target "a" fails 3 calls with auth
    And the breaker clock moves 30 seconds
    And call "p1" to target "a" arrives
    And call "p1" to target "a" fails with auth
    Then call "p1" is probe
    And the breaker of target "a" is open until second 90
    When the breaker clock moves 60 seconds
    And call "p2" to target "a" arrives
    And call "p2" to target "a" fails with auth
    And the breaker clock moves 120 seconds
    And call "p3" to target "a" arrives
    And call "p3" to target "a" fails with auth
    And the breaker clock moves 240 seconds
    And call "p4" to target "a" arrives
    And call "p4" to target "a" fails with auth
    Then the breaker of target "a" has a cooldown of 300 seconds
    When the breaker clock moves 300 seconds
    And call "p5" to target "a" arrives
    And call "p5" to target "a" fails with auth
    Then the breaker of target "a" has a cooldown of 300 seconds

  @CB-010
  Scenario: A probe that never reports loses its slot when its lease ends
    Given the breaker is engaged for target "a"
    When target "a" fails 3 calls with auth
    And the breaker clock moves 30 seconds
    And call "silent" to target "a" arrives
    And the breaker clock moves 59 seconds
    And call "early" to target "a" arrives
    Then call "early" is refused
    And the probe of target "a" is call "silent"
    When the breaker clock moves 1 seconds
    Then target "a" has no probe in flight
    When call "next" to target "a" arrives
    Then call "next" is probe
    When call "silent" to target "a" succeeds
    Then the breaker of target "a" is half_open
    And the probe of target "a" is call "next"

  @CB-011
  Scenario: With its store down the breaker fails open and logs each operation
    Given the breaker is engaged for target "a"
    When target "a" fails 3 calls with auth
    And the breaker store goes down
    And call "c" to target "a" arrives
    And call "c" to target "a" fails with auth
    And work "w" is queued for target "a"
    Then call "c" is admitted
    And work "w" is queued
    And the breaker state of target "a" is unknown
    And 3 breaker store outages are logged
    When the breaker store comes back
    Then the breaker of target "a" is open
    And the queue of target "a" holds "w"

  @CB-012
  Scenario: Reset closes an open breaker with the base cooldown
    Given the breaker is engaged for target "a"
    When target "a" fails 3 calls with auth
    And the breaker clock moves 30 seconds
    And call "p" to target "a" arrives
    And call "p" to target "a" fails with auth
    And work "w" is queued for target "a"
    And the breaker of target "a" is reset
    Then the breaker of target "a" is closed
    And the breaker of target "a" has a cooldown of 30 seconds
    And target "a" has no probe in flight
    When call "c" to target "a" arrives
    Then call "c" is admitted

  @CB-013
  Scenario: Two workers on one store share one breaker
    Given the breaker is engaged for target "a"
    When call "c1" to target "a" arrives at worker 1
    And call "c1" to target "a" fails with auth at worker 1
    And call "c2" to target "a" arrives at worker 2
    And call "c2" to target "a" fails with auth at worker 2
    And call "c3" to target "a" arrives at worker 1
    And call "c3" to target "a" fails with auth at worker 2
    Then the breaker of target "a" is open at worker 1
    And the breaker of target "a" is open at worker 2
    When call "c4" to target "a" arrives at worker 2
    Then call "c4" is refused

  @CB-014
  Scenario: The backstop sweep fails the work a lost drain left, the breaker half-open by then
    Given the breaker is engaged for target "a"
    And the breaker is engaged for target "b"
    When work "w1" is queued for target "a"
    And work "w2" is queued for target "a"
    And work "v" is queued for target "b"
    And the breaker's trip drains are lost
    And target "a" fails 3 calls with auth
    And the breaker's trip drains work again
    Then the breaker of target "a" is open
    And the queue of target "a" holds "w1, w2"
    When the breaker clock moves 60 seconds
    And the backstop sweep runs
    Then the backstop sweep failed 2 pieces of work
    And the breaker of target "a" is half_open
    And the failed work of target "a" is "w1, w2"
    And the queue of target "a" is empty
    And the queue of target "b" holds "v"

  @CB-014 @CB-011
  Scenario: A sweep that cannot read the breaker keeps the work and logs the read once
    Given the breaker is engaged for target "a"
    When work "w" is queued for target "a"
    And the breaker's trip drains are lost
    And target "a" fails 3 calls with auth
    And the breaker store goes down
    And the backstop sweep runs
    Then the backstop sweep failed 0 pieces of work
    And the queue of target "a" holds "w"
    And 1 breaker store outages are logged
    When the breaker store comes back
    And the backstop sweep runs
    Then the backstop sweep failed 1 pieces of work
    And the failed work of target "a" is "w"

  @CB-015
  Scenario: A missed heartbeat counts as a failure while closed and changes nothing while open
    Given the breaker is engaged for target "a"
    When work "w" is queued for target "a"
    And target "a" misses a heartbeat
    And target "a" misses a heartbeat
    Then the breaker of target "a" counts 2 failures
    When call "ok" to target "a" arrives
    And call "ok" to target "a" succeeds
    Then the breaker of target "a" counts 0 failures
    When target "a" misses a heartbeat
    And target "a" fails 1 calls with auth
    And target "a" misses a heartbeat
    Then the breaker of target "a" is open
    And the breaker of target "a" is open until second 30
    And the failed work of target "a" is "w"
    When the breaker clock moves 10 seconds
    And target "a" misses a heartbeat
    Then the breaker of target "a" is open until second 30
    And the breaker of target "a" has a cooldown of 30 seconds
    When the breaker clock moves 20 seconds
    And call "p" to target "a" arrives
    And target "a" misses a heartbeat
    Then the breaker of target "a" is half_open
    And the probe of target "a" is call "p"
    When call "p" to target "a" succeeds
    Then the breaker of target "a" is closed

  @CB-016
  Scenario: A call killed by a signal is never an auth failure, whatever its text says
    Given the breaker is engaged for target "a"
    When work "w" is queued for target "a"
    And call "k1" to target "a" arrives
    And call "k1" to target "a" is killed by SIGKILL
    And call "k2" to target "a" arrives
    And call "k2" to target "a" exits with code 137 and no output
    And call "k3" to target "a" arrives
    And call "k3" to target "a" exits with code -15 saying "authentication failed"
    And call "k4" to target "a" arrives
    And call "k4" to target "a" exits with code 1, no output, saying "OOM: token expired or revoked?"
    Then the end of call "k1" is classed timeout
    And the end of call "k2" is classed timeout
    And the end of call "k3" is classed timeout
    And the end of call "k4" is classed timeout
    And the breaker of target "a" is closed
    And the breaker of target "a" counts 0 failures
    And the queue of target "a" holds "w"

  @CB-016
  Scenario: A killed probe decides nothing
    Given the breaker is engaged for target "a"
    When target "a" fails 3 calls with auth
    And the breaker clock moves 30 seconds
    And call "p" to target "a" arrives
    And call "p" to target "a" is killed by SIGTERM
    Then the end of call "p" is classed timeout
    And the breaker of target "a" is half_open
    And the breaker of target "a" has a cooldown of 30 seconds
    When call "q" to target "a" arrives
    Then call "q" is probe

  @CB-017
  Scenario: Only a confirmed authentication message is an auth failure
    Given the breaker is engaged for target "a"
    When call "s" to target "a" arrives
    And call "s" to target "a" exits with code 1 and no output
    And call "e" to target "a" arrives
    And call "e" to target "a" exits with code 2 saying "tool call failed: invalid JSON"
    Then the end of call "s" is classed agent_error
    And the end of call "e" is classed agent_error
    And the breaker of target "a" counts 0 failures
    When call "u1" to target "a" arrives
    And call "u1" to target "a" exits with code 1, no output, saying "Authentication failed: invalid API key"
    And call "u2" to target "a" arrives
    And call "u2" to target "a" exits with code 1 saying "HTTP 401 Unauthorized"
    Then the end of call "u1" is classed auth
    And the end of call "u2" is classed auth
    And the breaker of target "a" counts 2 failures
    When call "u3" to target "a" arrives
    And call "u3" to target "a" exits with code 1 saying "subscription token expired or revoked"
    Then the end of call "u3" is classed auth
    And the breaker of target "a" is open

  @CB-018
  Scenario: The error reported for a kill names the signal that killed it
    Given the breaker is engaged for target "a"
    When the end of call "k1" killed by SIGKILL is reported
    And the end of call "k2" exiting with code 137 and no output is reported
    And the end of call "k3" exiting with code -15 saying "authentication failed" is reported
    And the end of call "k4" exiting with code 130 and no output is reported
    And the end of call "e" exiting with code 1 saying "request timed out" is reported
    Then the report of call "k1" is {"failure_class": "timeout", "signal": "SIGKILL", "possible_causes": []}
    And the report of call "k2" is {"failure_class": "timeout", "signal": "SIGKILL", "possible_causes": []}
    And the report of call "k3" is {"failure_class": "timeout", "signal": "SIGTERM", "possible_causes": []}
    And the report of call "k4" is {"failure_class": "timeout", "signal": "SIGINT", "possible_causes": []}
    And the report of call "e" is {"failure_class": "timeout", "signal": null, "possible_causes": []}
    And the breaker of target "a" counts 0 failures

  @CB-019
  Scenario: A failure with no output is reported with its possible causes, never as the token's
    Given the breaker is engaged for target "a"
    When the end of call "s" exiting with code 1 and no output is reported
    And the end of call "t" exiting with code 1 saying "tool call failed" is reported
    And the end of call "u" exiting with code 1 saying "HTTP 401 Unauthorized" is reported
    Then the report of call "s" is {"failure_class": "agent_error", "signal": null, "possible_causes": ["oom_kill", "timeout", "expired_token"]}
    And the report of call "t" is {"failure_class": "agent_error", "signal": null, "possible_causes": []}
    And the report of call "u" is {"failure_class": "auth", "signal": null, "possible_causes": []}
    And the breaker of target "a" counts 0 failures
