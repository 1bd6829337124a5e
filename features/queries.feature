Feature: Reading jobs, results and listings
  Reads return snapshots; an unknown id reads as nothing, and the result of a job is
  available only once it has succeeded.

  @LC-016
  Scenario: A record read earlier does not change when the job does
    Given job "a" is submitted
    When job "a" is read
    And the runtime dispatches
    And job "a" returns {"n": 1}
    Then job "a" is succeeded
    And the record read earlier still shows queued

  @LC-016
  Scenario: Reading an unknown id returns nothing
    When job "ghost" is read
    Then the read returns nothing

  @LC-017
  Scenario: The result of an unknown id is not found
    When the result of job "ghost" is read
    Then reading the result fails as not found

  @LC-017
  Scenario: The result of a job that has not succeeded names its status
    Given a runtime with 1 worker slot
    And jobs "r, q" are submitted
    And the runtime dispatches
    When the result of job "q" is read
    Then reading the result fails as not completed with status queued
    When the result of job "r" is read
    Then reading the result fails as not completed with status running
    When job "r" raises ValueError "no"
    And the result of job "r" is read
    Then reading the result fails as not completed with status failed
    When job "q" is cancelled
    And the result of job "q" is read
    Then reading the result fails as not completed with status cancelled

  @LC-017 @LC-006
  Scenario: The result of a succeeded job is its result
    Given job "a" is submitted
    And the runtime dispatches
    When job "a" returns {"total": 12, "items": [1, 2]}
    And the result of job "a" is read
    Then the result is {"total": 12, "items": [1, 2]}

  @LC-018
  Scenario: Listing shows held jobs in submission order, filtered by exact status
    Given a runtime with 2 worker slots
    And jobs "z, a, m" are submitted
    And the runtime dispatches
    When the jobs are listed
    Then the listing is "z, a, m"
    When the jobs are listed with status "running"
    Then the listing is "z, a"
    When the jobs are listed with status "queued"
    Then the listing is "m"
    When the jobs are listed with status "succeeded"
    Then the listing is empty
