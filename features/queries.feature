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

  # Seed 000's indexes (status for queue polling, worker for its own jobs, created_at for
  # age order) make reads fast; what a user relies on is that the answers stay whole and
  # exact at volume. The harness compares each command of a range step where it changed
  # the state (its job, read by id, and the counts), and after the step every held job,
  # the full listing and the health snapshot with the oracle, as after every other step.
  @LC-038
  Scenario: Listings, reads, counts and dispatch hold over 300 jobs
    Given a runtime with 10 worker slots and a task cap of 1000
    When jobs "v1" to "v300" are submitted
    And the jobs are listed
    Then the listing is jobs "v1" to "v300"
    And the health shows 300 queued, 0 running, 300 in total
    When jobs "v151" to "v300" are cancelled
    And the runtime dispatches
    And the jobs are listed with status "running"
    Then the listing is jobs "v1" to "v10"
    When jobs "v1" to "v10" return 1
    And the runtime dispatches
    And the jobs are listed with status "succeeded"
    Then the listing is jobs "v1" to "v10"
    When the jobs are listed with status "running"
    Then the listing is jobs "v11" to "v20"
    When the jobs are listed with status "queued"
    Then the listing is jobs "v21" to "v150"
    When the jobs are listed with status "cancelled"
    Then the listing is jobs "v151" to "v300"
    And job "v300" is cancelled
    And job "v150" is queued
    And job "v1" has the result 1
    And the health shows 130 queued, 10 running, 300 in total

  # Seed 000 keeps the error in a Text column and the payload as text: no width a user
  # would meet. The texts are 70 000 characters, past the 65 535 bytes of a MySQL TEXT
  # column, where a store in non-strict mode cuts silently.
  @LC-039
  Scenario: A long error and a long result come back whole
    Given a runtime with 2 worker slots
    And jobs "a, b" are submitted
    When the runtime dispatches
    And job "a" raises ValueError with a message of 70000 characters
    And job "b" returns a text of 70000 characters
    Then job "a" is failed
    And job "a" has the ValueError error with the message of 70000 characters
    And job "b" is succeeded
    And the result of job "b" is the text of 70000 characters
