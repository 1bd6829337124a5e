Feature: Cleanup of old terminal jobs
  Cleanup removes terminal jobs whose age, counted from finished_at, is at least the max
  age, and says how many it removed. Queued and running jobs stay, however old.

  @LC-019
  Scenario: Cleanup never removes queued or running jobs, whatever their age
    Given a runtime with 2 worker slots
    And jobs "d, r, q" are submitted
    And the runtime dispatches
    And job "d" returns 1
    When 100000 seconds pass
    And cleanup runs with a max age of 0 seconds
    Then cleanup removed 1 job
    And job "d" is not held
    And job "r" is running
    And job "q" is queued

  @LC-020
  Scenario: A job exactly max age old is removed, one second younger it is kept
    Given job "a" is submitted
    And the runtime dispatches
    And 10 seconds pass
    And job "a" returns 1
    When 3599 seconds pass
    And cleanup runs with a max age of 3600 seconds
    Then cleanup removed 0 jobs
    And job "a" is succeeded
    When 1 second passes
    And cleanup runs with a max age of 3600 seconds
    Then cleanup removed 1 job
    And job "a" is not held

  @LC-020 @edge
  Scenario: A job 0.4 milliseconds younger than the max age is kept
    Given job "a" is submitted
    And the runtime dispatches
    And 1.0005 seconds pass
    And job "a" returns 1
    When 3599.9996 seconds pass
    And cleanup runs with a max age of 3600 seconds
    Then cleanup removed 0 jobs
    And job "a" is succeeded
    When 0.0004 seconds pass
    And cleanup runs with a max age of 3600 seconds
    Then cleanup removed 1 job

  @LC-020
  Scenario: A job's age counts from when it finished, not from submission or start
    Given job "a" is submitted
    And 1000 seconds pass
    And the runtime dispatches
    And 500 seconds pass
    And job "a" returns 1
    When 3100 seconds pass
    And cleanup runs with a max age of 3600 seconds
    Then cleanup removed 0 jobs
    And job "a" is succeeded
    When 500 seconds pass
    And cleanup runs with a max age of 3600 seconds
    Then cleanup removed 1 job
    And job "a" is not held

  @LC-021
  Scenario: Cleanup returns the number of records it removed
    Given a runtime with 2 worker slots
    When cleanup runs with a max age of 0 seconds
    Then cleanup removed 0 jobs
    When jobs "a, b, c" are submitted
    And the runtime dispatches
    And job "a" returns 1
    And job "b" raises ValueError "no"
    And 100 seconds pass
    And job "c" is cancelled
    And 3500 seconds pass
    And cleanup runs with a max age of 3600 seconds
    Then cleanup removed 2 jobs
    And job "c" is cancelled
    And the health shows 0 queued, 0 running, 1 in total
