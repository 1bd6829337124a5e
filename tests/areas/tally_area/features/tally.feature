Feature: Tally (a third-party area)

  @TL-001
  Scenario: Three increments read three
    When the tally is incremented 3 times
    Then the tally reads 3

  @TL-002
  Scenario: A reset reads zero
    When the tally is incremented 2 times
    And the tally is reset
    Then the tally reads 0
