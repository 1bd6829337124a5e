Feature: Dispatch circuit breaker with the profile's own parameters
  The same rules as breaker.feature, with the threshold, the counted classes and the
  cooldowns the active profile sets (canonical: three auth failures, 30 s doubling to
  300 s; pybreaker: five failures of any class, a fixed 60 s).

  @CB-002 @CB-009
  Scenario: The profile's threshold trips the breaker and its cooldown grows as it says
    Given the breaker is engaged for target "a"
    When target "a" fails one call fewer than the profile's threshold
    Then the breaker of target "a" is closed
    When target "a" fails 1 calls with auth
    Then the breaker of target "a" is open
    And the breaker of target "a" has the profile's base cooldown
    When the breaker clock moves by the breaker of target "a"'s cooldown
    And call "p1" to target "a" arrives
    And call "p1" to target "a" fails with auth
    Then the breaker of target "a" has the profile's cooldown after 1 failed probes
    When the breaker clock moves by the breaker of target "a"'s cooldown
    And call "p2" to target "a" arrives
    And call "p2" to target "a" fails with auth
    Then the breaker of target "a" has the profile's cooldown after 2 failed probes
