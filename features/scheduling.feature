Feature: Scheduling and autonomy
  One-shot jobs run at an instant or after a delay; cron schedules fire at the times their
  expression names on a time zone's wall clock (seed 002 §10.1). The autonomy switch holds
  every schedule (§10.2); a pre-check may skip a scheduled fire, and fails open (§10.6.1);
  the history learns how each dispatched execution ended, and the first end stays (§10.6);
  what succeeded is validated where its schedule asks, and a failed validation alerts (§10.9).
  Instants are UTC unless they carry another offset; the scheduling clock starts at
  2026-01-01T00:00:00Z unless a scenario says otherwise. Scenarios are skipped on a backend
  that does not claim the scheduling area.

  # -- SC-001: one-shot jobs by run_at xor delay_seconds ---------------------------------------

  @SC-001
  Scenario: A delay is resolved against the clock
    Given the scheduling clock advances 10 seconds
    When one-shot job "a" is scheduled with message "send the report" and a delay of 120 seconds
    And one-shot job "b" is scheduled with message "renew" to run at 2026-01-01T03:00:00+02:00
    Then the creation of schedule "a" is accepted
    And schedule "a" was created at 2026-01-01T00:00:10Z
    And schedule "a" next fires at 2026-01-01T00:02:10Z
    And the creation of schedule "b" is accepted
    And schedule "b" next fires at 2026-01-01T01:00:00Z

  @SC-001
  Scenario: Both times, no time or a negative delay are refused
    When one-shot job "a" is scheduled with message "x", a delay of 60 seconds and a run time of 2026-01-01T01:00:00Z
    And one-shot job "b" is scheduled with message "x" and no time
    And one-shot job "c" is scheduled with message "x" and a delay of -1 seconds
    And one-shot job "d" is scheduled with message "x" and a delay of 0 seconds
    Then the creation of schedule "a" is rejected with "schedule"
    And the creation of schedule "b" is rejected with "schedule"
    And the creation of schedule "c" is rejected with "schedule"
    And the creation of schedule "d" is accepted
    When all schedules are listed
    Then the schedules listed are "d"

  # -- SC-002: a one-shot job runs once, never early ------------------------------------------

  @SC-002
  Scenario: A one-shot job runs once when its time comes, never before
    Given one-shot job "a" is scheduled with message "renew" to run at 2026-01-01T01:00:00Z
    When the scheduling clock advances to 2026-01-01T00:59:59Z
    Then schedule "a" was dispatched 0 times
    When the scheduling clock advances 1 second
    Then schedule "a" was dispatched 1 time
    And execution 1 of schedule "a" is a schedule run for 2026-01-01T01:00:00Z
    And execution 1 of schedule "a" dispatched "renew"
    And schedule "a" has no next fire
    When the scheduling clock advances 86400 seconds
    And the schedulers are down for 60 seconds and one restarts
    Then schedule "a" was dispatched 1 time

  @SC-002
  Scenario: A one-shot job due while no scheduler ran runs once at the restart
    Given scheduling with missed_fires set to none
    And one-shot job "a" is scheduled with message "renew" and a delay of 600 seconds
    When the schedulers are down for 3600 seconds and one restarts
    Then schedule "a" was dispatched 1 time
    And execution 1 of schedule "a" is a schedule run for 2026-01-01T00:10:00Z
    And execution 1 of schedule "a" started at 2026-01-01T01:00:00Z

  # -- SC-003: cron fire times in a zone ------------------------------------------------------

  @SC-003
  Scenario: The first fire is the first matching instant after the creation
    Given the scheduling clock starts at 2026-06-01T12:00:00Z
    When cron schedule "a" runs "tick" at "0 * * * *" in UTC
    And cron schedule "d" runs "noon" at "0 12 * * *" in UTC
    Then schedule "a" next fires at 2026-06-01T13:00:00Z
    And schedule "d" next fires at 2026-06-02T12:00:00Z
    When the scheduling clock advances to 2026-06-01T13:00:00Z
    Then schedule "a" next fires at 2026-06-01T14:00:00Z

  # Not applicable to a runtime that claims scheduling-utc-only (its schedules have no zone).
  @SC-003 @zones
  Scenario: The fire times are read on the zone's wall clock
    Given the scheduling clock starts at 2026-06-01T12:00:00Z
    When cron schedule "b" runs "standup" at "0 9 * * *" in Europe/Berlin
    And cron schedule "c" runs "standup" at "0 9 * * *" in America/New_York
    Then schedule "b" next fires at 2026-06-02T07:00:00Z
    And schedule "c" next fires at 2026-06-01T13:00:00Z
    When the scheduling clock advances to 2026-06-01T13:00:00Z
    Then schedule "c" next fires at 2026-06-02T13:00:00Z

  @SC-003
  Scenario: Bad expressions and unknown zones are refused, the expression first
    When cron schedule "a" runs "x" at "61 * * * *" in UTC
    And cron schedule "b" runs "x" at "0 * * * *" in Mars/Olympus_Mons
    And cron schedule "c" runs "x" at "every hour" in Mars/Olympus_Mons
    Then the creation of schedule "a" is rejected with "expression"
    And the creation of schedule "b" is rejected with "timezone"
    And the creation of schedule "c" is rejected with "expression"

  # -- SC-004 and SC-005: daylight-saving changes ---------------------------------------------

  @SC-004
  Scenario: A fire time inside the spring-forward gap fires when the gap ends
    # New York, 2026-03-08: 02:00 EST (07:00Z) jumps to 03:00 EDT; 02:30 does not exist.
    Given the scheduling clock starts at 2026-03-08T06:00:00Z
    When cron schedule "a" runs "nightly" at "30 2 * * *" in America/New_York
    Then schedule "a" next fires at 2026-03-08T07:00:00Z
    When the scheduling clock advances to 2026-03-08T07:00:00Z
    Then schedule "a" has 1 execution
    And execution 1 of schedule "a" is a schedule run for 2026-03-08T07:00:00Z
    And schedule "a" next fires at 2026-03-09T06:30:00Z

  @SC-004
  Scenario: Half-hourly fires in the missing hour become one fire at its end
    Given the scheduling clock starts at 2026-03-08T06:00:00Z
    When cron schedule "a" runs "poll" at "*/30 * * * *" in America/New_York
    And the scheduling clock advances to 2026-03-08T07:30:00Z
    Then schedule "a" has 3 executions
    And execution 2 of schedule "a" is a schedule run for 2026-03-08T07:00:00Z
    And execution 3 of schedule "a" is a schedule run for 2026-03-08T07:30:00Z

  @SC-004
  Scenario: A wildcard hour fires once at the end of the spring-forward gap
    # The missing 02:00 and the 03:00 after it are the same instant, 07:00Z: one fire.
    Given the scheduling clock starts at 2026-03-08T05:30:00Z
    When cron schedule "a" runs "hourly" at "0 * * * *" in America/New_York
    And the scheduling clock advances to 2026-03-08T08:00:00Z
    Then schedule "a" has 3 executions
    And execution 1 of schedule "a" is a schedule run for 2026-03-08T06:00:00Z
    And execution 2 of schedule "a" is a schedule run for 2026-03-08T07:00:00Z
    And execution 3 of schedule "a" is a schedule run for 2026-03-08T08:00:00Z

  @SC-005
  Scenario: A named hour in the repeated hour fires once, at its first occurrence
    # New York, 2026-11-01: 01:00-02:00 happens twice, as EDT (05:00Z) and EST (06:00Z).
    Given the scheduling clock starts at 2026-11-01T04:00:00Z
    When cron schedule "a" runs "nightly" at "30 1 * * *" in America/New_York
    Then schedule "a" next fires at 2026-11-01T05:30:00Z
    When the scheduling clock advances to 2026-11-01T08:00:00Z
    Then schedule "a" has 1 execution
    And execution 1 of schedule "a" is a schedule run for 2026-11-01T05:30:00Z
    And schedule "a" next fires at 2026-11-02T06:30:00Z

  @SC-005
  Scenario: A wildcard hour fires in both occurrences of the repeated hour
    Given the scheduling clock starts at 2026-11-01T04:00:00Z
    When cron schedule "a" runs "hourly" at "0 * * * *" in America/New_York
    And the scheduling clock advances to 2026-11-01T07:00:00Z
    Then schedule "a" has 3 executions
    And execution 1 of schedule "a" is a schedule run for 2026-11-01T05:00:00Z
    And execution 2 of schedule "a" is a schedule run for 2026-11-01T06:00:00Z
    And execution 3 of schedule "a" is a schedule run for 2026-11-01T07:00:00Z

  @SC-005
  Scenario: A wildcard minute fires in both occurrences of the repeated hour
    Given the scheduling clock starts at 2026-11-01T04:50:00Z
    When cron schedule "a" runs "poll" at "*/30 * * * *" in America/New_York
    And the scheduling clock advances to 2026-11-01T06:30:00Z
    Then schedule "a" has 4 executions
    And execution 1 of schedule "a" is a schedule run for 2026-11-01T05:00:00Z
    And execution 2 of schedule "a" is a schedule run for 2026-11-01T05:30:00Z
    And execution 3 of schedule "a" is a schedule run for 2026-11-01T06:00:00Z
    And execution 4 of schedule "a" is a schedule run for 2026-11-01T06:30:00Z

  # -- SC-006: each fire once, never early ----------------------------------------------------

  @SC-006
  Scenario: A running scheduler fires every fire time once and never early
    Given cron schedule "a" runs "poll" at "*/30 * * * *" in UTC
    When the scheduling clock advances 1799 seconds
    Then schedule "a" was dispatched 0 times
    When the scheduling clock advances 1 second
    Then schedule "a" was dispatched 1 time
    And execution 1 of schedule "a" is a schedule run for 2026-01-01T00:30:00Z
    And execution 1 of schedule "a" started at 2026-01-01T00:30:00Z
    When the scheduling clock advances 5400 seconds
    Then schedule "a" was dispatched 4 times
    And execution 4 of schedule "a" is a schedule run for 2026-01-01T02:00:00Z
    And schedule "a" next fires at 2026-01-01T02:30:00Z

  @SC-006
  Scenario: Commands about other schedules within a fire's minute do not fire it again
    Given cron schedule "a" runs "poll" at "*/30 * * * *" in UTC
    And cron schedule "b" runs "report" at "0 9 * * *" in UTC
    When the scheduling clock advances 1820 seconds
    Then schedule "a" was dispatched 1 time
    # Still in the minute of a's fire: creating, editing or deleting another schedule is no
    # fire time of a (a scheduler that tests its crontabs on every change fires it again).
    When one-shot job "c" is scheduled with message "once" and a delay of 600 seconds
    And schedule "b" is edited to run "weekly report"
    And schedule "c" is deleted
    Then schedule "a" was dispatched 1 time
    And schedule "a" next fires at 2026-01-01T01:00:00Z

  # -- SC-007: missed fires after downtime ----------------------------------------------------

  @SC-007
  Scenario: missed_fires one runs a single catch-up for the latest missed fire
    Given scheduling with missed_fires set to one
    And cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    When the schedulers are down for 9000 seconds and one restarts
    Then schedule "a" has 1 execution
    And execution 1 of schedule "a" is a catch_up run for 2026-01-01T02:00:00Z
    And execution 1 of schedule "a" started at 2026-01-01T02:30:00Z
    And schedule "a" next fires at 2026-01-01T03:00:00Z

  @SC-007
  Scenario: missed_fires all runs every missed fire, in order
    Given scheduling with missed_fires set to all
    And cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    When the schedulers are down for 9000 seconds and one restarts
    Then schedule "a" has 2 executions
    And execution 1 of schedule "a" is a catch_up run for 2026-01-01T01:00:00Z
    And execution 2 of schedule "a" is a catch_up run for 2026-01-01T02:00:00Z

  @SC-007
  Scenario: missed_fires none runs none of them
    Given scheduling with missed_fires set to none
    And cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    When the schedulers are down for 9000 seconds and one restarts
    Then schedule "a" has 0 executions
    And schedule "a" next fires at 2026-01-01T03:00:00Z

  # -- SC-008: one execution per fire under two schedulers ------------------------------------

  @SC-008
  Scenario: Two schedulers over one store make one execution per fire
    Given cron schedule "a" runs "poll" at "*/30 * * * *" in UTC
    And one-shot job "b" is scheduled with message "once" and a delay of 900 seconds
    When a second scheduler starts
    And the scheduling clock advances 3600 seconds
    Then schedule "a" was dispatched 2 times
    And schedule "a" has 2 executions
    And schedule "b" was dispatched 1 time

  # -- SC-009: manual triggers ----------------------------------------------------------------

  @SC-009
  Scenario: A manual trigger runs at once, bypasses the pre-check and keeps the next fire
    Given cron schedule "a" runs "poll" at "0 * * * *" in UTC with a pre-check that answers skip
    When the scheduling clock advances 600 seconds
    And schedule "a" is triggered by hand
    Then the schedule answer is "triggered"
    And schedule "a" has 1 execution
    And execution 1 of schedule "a" is a manual run for 2026-01-01T00:10:00Z
    And execution 1 of schedule "a" dispatched "poll"
    And execution 1 of schedule "a" ran no pre-check
    And the pre-check of schedule "a" was called 0 times
    And schedule "a" next fires at 2026-01-01T01:00:00Z
    When autonomy is turned off
    And schedule "a" is triggered by hand
    Then schedule "a" was dispatched 2 times
    When schedule "ghost" is triggered by hand
    Then the schedule answer is "not_found"

  # -- SC-010 and SC-011: the autonomy switch -------------------------------------------------

  @SC-010
  Scenario: Autonomy off holds every schedule, across a restart
    Given cron schedule "a" runs "poll" at "*/30 * * * *" in UTC
    And one-shot job "b" is scheduled with message "once" and a delay of 600 seconds
    When autonomy is turned off
    And the scheduling clock advances 3600 seconds
    Then schedule "a" has 0 executions
    And schedule "b" was dispatched 0 times
    When the schedulers are down for 3600 seconds and one restarts
    Then schedule "a" has 0 executions
    And schedule "b" was dispatched 0 times

  @SC-011
  Scenario: Autonomy back on resumes at the next fire time, without a burst
    Given cron schedule "a" runs "poll" at "*/30 * * * *" in UTC
    And one-shot job "b" is scheduled with message "once" and a delay of 600 seconds
    When autonomy is turned off
    And the scheduling clock advances to 2026-01-01T01:10:00Z
    And autonomy is turned on
    Then schedule "a" has 0 executions
    And schedule "a" next fires at 2026-01-01T01:30:00Z
    And schedule "b" was dispatched 1 time
    When the scheduling clock advances to 2026-01-01T01:30:00Z
    Then schedule "a" has 1 execution
    And execution 1 of schedule "a" is a schedule run for 2026-01-01T01:30:00Z

  # -- SC-012 to SC-014: the pre-check --------------------------------------------------------

  @SC-012
  Scenario: An empty pre-check answer skips the fire at zero cost
    Given cron schedule "a" runs "poll" at "0 * * * *" in UTC with a pre-check that answers skip
    When the scheduling clock advances 3600 seconds
    Then schedule "a" has 1 execution
    And execution 1 of schedule "a" is a schedule run for 2026-01-01T01:00:00Z
    And execution 1 of schedule "a" is skipped at zero cost
    And execution 1 of schedule "a" records the pre-check as skip
    And the pre-check of schedule "a" was called 1 time
    And schedule "a" was dispatched 0 times

  @SC-013
  Scenario: The pre-check's output replaces the message for that fire only
    Given cron schedule "a" runs "poll" at "0 * * * *" in UTC with a pre-check that answers prompt
    When the scheduling clock advances 3600 seconds
    Then execution 1 of schedule "a" dispatched "work found by the pre-check"
    And execution 1 of schedule "a" records the pre-check as prompt
    When the pre-check of schedule "a" answers error
    And the scheduling clock advances 3600 seconds
    Then execution 2 of schedule "a" dispatched "poll"

  @SC-014
  Scenario: A failing or timed-out pre-check fails open
    Given cron schedule "a" runs "poll" at "0 * * * *" in UTC with a pre-check that answers error
    When the scheduling clock advances 3600 seconds
    Then execution 1 of schedule "a" dispatched "poll"
    And execution 1 of schedule "a" records the pre-check as error
    When the pre-check of schedule "a" answers timeout
    And the scheduling clock advances 3600 seconds
    Then execution 2 of schedule "a" dispatched "poll"
    And execution 2 of schedule "a" records the pre-check as timeout
    And schedule "a" was dispatched 2 times

  # -- SC-015: execution history --------------------------------------------------------------

  @SC-015
  Scenario: Each schedule keeps its own history, in order, across a restart
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And cron schedule "b" runs "half past" at "30 * * * *" in UTC
    When the scheduling clock advances 3660 seconds
    And schedule "a" is triggered by hand
    And the schedulers are down for 0 seconds and one restarts
    Then schedule "a" has 2 executions
    And execution 1 of schedule "a" is a schedule run for 2026-01-01T01:00:00Z
    And execution 2 of schedule "a" is a manual run for 2026-01-01T01:01:00Z
    And schedule "b" has 1 execution
    When the history of schedule "a" is read
    And the history of schedule "ghost" is read
    Then the schedule answer is "not_found"

  # -- SC-016: reads ---------------------------------------------------------------------------

  @SC-016
  Scenario: Reads are snapshots in creation order that a restart keeps
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And one-shot job "b" is scheduled with message "once" and a delay of 60 seconds
    When schedule "a" is read
    And the scheduling clock advances 3600 seconds
    Then the schedule read earlier still reads as it did
    When the schedulers are down for 60 seconds and one restarts
    And all schedules are listed
    Then the schedules listed are "a, b"

  # -- SC-017: editing -------------------------------------------------------------------------

  @SC-017
  Scenario: An edit changes the fields given, and a new timetable starts from the edit
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And one-shot job "b" is scheduled with message "once" and a delay of 7200 seconds
    When the scheduling clock advances 1800 seconds
    And schedule "a" is edited to run "every quarter to"
    Then the schedule answer is "edited"
    And schedule "a" runs "every quarter to"
    And schedule "a" next fires at 2026-01-01T01:00:00Z
    When schedule "a" is edited to run at "45 * * * *" in UTC
    Then schedule "a" next fires at 2026-01-01T00:45:00Z
    When schedule "a" is edited to run at "not cron" in UTC
    Then the schedule answer is "rejected:expression"
    And schedule "a" next fires at 2026-01-01T00:45:00Z
    When schedule "b" is edited to run in UTC
    Then the schedule answer is "rejected:schedule"
    When schedule "ghost" is edited to run "x"
    Then the schedule answer is "not_found"
    When the scheduling clock advances 900 seconds
    Then execution 1 of schedule "a" is a schedule run for 2026-01-01T00:45:00Z
    And execution 1 of schedule "a" dispatched "every quarter to"
    And schedule "a" was created at 2026-01-01T00:00:00Z

  # Not applicable to a runtime that claims scheduling-utc-only (its schedules have no zone).
  @SC-017 @zones
  Scenario: An edit into another zone reads the timetable on that zone's wall clock
    Given cron schedule "a" runs "nine" at "0 9 * * *" in UTC
    And one-shot job "b" is scheduled with message "once" and a delay of 7200 seconds
    Then schedule "a" next fires at 2026-01-01T09:00:00Z
    When schedule "a" is edited to run in Europe/Berlin
    Then the schedule answer is "edited"
    And schedule "a" next fires at 2026-01-01T08:00:00Z
    When schedule "a" is edited to run in America/New_York
    Then schedule "a" next fires at 2026-01-01T14:00:00Z
    When schedule "b" is edited to run in Europe/Berlin
    Then the schedule answer is "rejected:schedule"
    When the scheduling clock advances to 2026-01-01T14:00:00Z
    Then execution 1 of schedule "a" is a schedule run for 2026-01-01T14:00:00Z

  @SC-017
  Scenario: A timetable edited exactly on one of its new fire times first fires after the edit
    Given cron schedule "a" runs "half past" at "30 * * * *" in UTC
    When the scheduling clock advances 3600 seconds
    And schedule "a" is edited to run at "0 * * * *" in UTC
    Then schedule "a" next fires at 2026-01-01T02:00:00Z
    When the scheduling clock advances 1 seconds
    Then schedule "a" was dispatched 1 time

  # -- SC-018: deleting ------------------------------------------------------------------------

  @SC-018
  Scenario: A deleted schedule never fires again and is not found
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And cron schedule "b" runs "half past" at "30 * * * *" in UTC
    When the scheduling clock advances 3600 seconds
    Then schedule "a" was dispatched 1 time
    When schedule "a" is deleted
    Then the schedule answer is "deleted"
    And schedule "a" is not held
    When the scheduling clock advances 7200 seconds
    And the schedulers are down for 7200 seconds and one restarts
    Then schedule "a" was dispatched 1 time
    When all schedules are listed
    Then the schedules listed are "b"
    When schedule "a" is triggered by hand
    Then the schedule answer is "not_found"
    When the history of schedule "a" is read
    Then the schedule answer is "not_found"
    When schedule "a" is deleted
    Then the schedule answer is "not_found"

  # -- SC-019: how a dispatched execution ended -------------------------------------------------
  # Skipped on a backend that does not claim scheduling-ends.

  @SC-019
  Scenario: The history learns how each dispatched execution ended, and the first end stays
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And cron schedule "b" runs "checked" at "0 * * * *" in UTC with a pre-check that answers skip
    When the scheduling clock advances 7200 seconds
    And schedule "a" is triggered by hand
    Then schedule "a" has 3 executions
    And execution 1 of schedule "a" has not ended
    When the execution of schedule "a" for 2026-01-01T01:00:00Z ends succeeded at a cost of 0.25
    Then the schedule answer is "ended"
    And execution 1 of schedule "a" ended succeeded at a cost of 0.25
    And execution 2 of schedule "a" has not ended
    When the execution of schedule "a" for 2026-01-01T01:00:00Z ends failed
    Then the schedule answer is "refused"
    And execution 1 of schedule "a" ended succeeded at a cost of 0.25
    When the execution of schedule "a" for 2026-01-01T02:00:00Z ends failed at a cost of 0.5
    And the execution of schedule "a" for 2026-01-01T02:00:00Z ends cancelled at a cost of 0
    Then execution 2 of schedule "a" ended failed at a cost of 0.5
    And execution 3 of schedule "a" ended cancelled at a cost of 0
    When the execution of schedule "b" for 2026-01-01T01:00:00Z ends succeeded
    Then the schedule answer is "refused"
    When the execution of schedule "a" for 2026-01-01T01:30:00Z ends succeeded
    Then the schedule answer is "refused"
    When the schedulers are down for 60 seconds and one restarts
    Then execution 1 of schedule "a" ended succeeded at a cost of 0.25
    When schedule "a" is deleted
    And the execution of schedule "a" for 2026-01-01T01:00:00Z ends failed
    Then the schedule answer is "not_found"

  # -- SC-020..SC-024: business validation of what succeeded --------------------------------------
  # Skipped on a backend that does not claim scheduling-validation (and scheduling-ends).

  @SC-020
  Scenario: Each schedule has its own validation switch and timeout
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And cron schedule "b" runs "daily" at "0 6 * * *" in UTC
    Then schedule "a" shows validation off and no timeout
    When schedule "a" validates its successes within 600 seconds
    Then the schedule answer is "validation_set"
    And schedule "a" shows validation on with a timeout of 600 seconds
    And schedule "b" shows validation off and no timeout
    When schedule "a" validates its successes within 0 seconds
    Then the schedule answer is "rejected:validation"
    And schedule "a" shows validation on with a timeout of 600 seconds
    When schedule "a" is edited to run "edited"
    And the schedulers are down for 60 seconds and one restarts
    Then schedule "a" shows validation on with a timeout of 600 seconds
    When schedule "a" stops validating, with a timeout of 300 seconds
    Then schedule "a" shows validation off with a timeout of 300 seconds
    When schedule "a" is deleted
    And schedule "a" validates its successes within 600 seconds
    Then the schedule answer is "not_found"

  @SC-021
  Scenario: Only a technical success with validation on waits for a linked validation run
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And schedule "a" validates its successes within 600 seconds
    When the scheduling clock advances 14400 seconds
    Then execution 1 of schedule "a" has no business status
    And execution 1 of schedule "a" has no validation run
    When the execution of schedule "a" for 2026-01-01T01:00:00Z ends succeeded
    Then execution 1 of schedule "a" is pending_validation
    And execution 1 of schedule "a" has a validation run started at 2026-01-01T04:00:00Z within 600 seconds
    When the execution of schedule "a" for 2026-01-01T02:00:00Z ends failed
    And the execution of schedule "a" for 2026-01-01T03:00:00Z ends cancelled
    Then execution 2 of schedule "a" is skipped
    And execution 2 of schedule "a" has no validation run
    And execution 3 of schedule "a" is skipped
    And execution 3 of schedule "a" has no validation run
    When schedule "a" stops validating, with a timeout of 600 seconds
    And the execution of schedule "a" for 2026-01-01T04:00:00Z ends succeeded
    Then execution 4 of schedule "a" is skipped
    And execution 4 of schedule "a" has no validation run
    When the schedulers are down for 60 seconds and one restarts
    Then execution 1 of schedule "a" is pending_validation
    And execution 1 of schedule "a" has a validation run started at 2026-01-01T04:00:00Z within 600 seconds
    And no scheduling alert was raised

  @SC-022
  Scenario: A validation run's verdict decides the business status once, within its timeout
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And schedule "a" validates its successes within 600 seconds
    When the scheduling clock advances 7200 seconds
    And the execution of schedule "a" for 2026-01-01T01:00:00Z ends succeeded
    And the execution of schedule "a" for 2026-01-01T02:00:00Z ends succeeded
    And the validation of schedule "a" for 2026-01-01T01:00:00Z answers pass
    Then the schedule answer is "decided"
    And execution 1 of schedule "a" is validated
    When the validation of schedule "a" for 2026-01-01T01:00:00Z answers fail
    Then the schedule answer is "refused"
    And execution 1 of schedule "a" is validated
    When the scheduling clock advances 600 seconds
    Then execution 2 of schedule "a" is pending_validation
    When the scheduling clock advances 1 second
    And the validation of schedule "a" for 2026-01-01T02:00:00Z answers pass
    Then the schedule answer is "decided"
    And execution 2 of schedule "a" is failed_validation
    When the validation of schedule "a" for 2026-01-01T01:30:00Z answers pass
    Then the schedule answer is "refused"
    When schedule "a" is deleted
    And the validation of schedule "a" for 2026-01-01T01:00:00Z answers pass
    Then the schedule answer is "not_found"

  @SC-023
  Scenario: A verdict that is not a clear pass or fail counts as a failed validation
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And schedule "a" validates its successes within 3600 seconds
    When the scheduling clock advances 10800 seconds
    And the execution of schedule "a" for 2026-01-01T01:00:00Z ends succeeded
    And the execution of schedule "a" for 2026-01-01T02:00:00Z ends succeeded
    And the execution of schedule "a" for 2026-01-01T03:00:00Z ends succeeded
    And the validation of schedule "a" for 2026-01-01T01:00:00Z answers prose
    And the validation of schedule "a" for 2026-01-01T02:00:00Z answers odd_json
    And the validation of schedule "a" for 2026-01-01T03:00:00Z answers pass
    Then execution 1 of schedule "a" is failed_validation
    And execution 2 of schedule "a" is failed_validation
    And execution 3 of schedule "a" is validated

  @SC-024
  Scenario: A failed validation raises one operator alert
    Given cron schedule "a" runs "hourly" at "0 * * * *" in UTC
    And cron schedule "b" runs "hourly" at "0 * * * *" in UTC
    And schedule "a" validates its successes within 600 seconds
    And schedule "b" validates its successes within 600 seconds
    When the scheduling clock advances 7200 seconds
    And the execution of schedule "a" for 2026-01-01T01:00:00Z ends succeeded
    And the execution of schedule "a" for 2026-01-01T02:00:00Z ends succeeded
    And the execution of schedule "b" for 2026-01-01T01:00:00Z ends succeeded
    And the execution of schedule "b" for 2026-01-01T02:00:00Z ends failed
    And the validation of schedule "b" for 2026-01-01T01:00:00Z answers fail
    Then the scheduling alerts are "b:1"
    When the validation of schedule "a" for 2026-01-01T01:00:00Z answers pass
    Then the scheduling alerts are "b:1"
    When the validation of schedule "a" for 2026-01-01T02:00:00Z answers fail
    And the validation of schedule "a" for 2026-01-01T02:00:00Z answers fail
    Then the schedule answer is "refused"
    And the scheduling alerts are "b:1, a:2"
    When the schedulers are down for 60 seconds and one restarts
    Then the scheduling alerts are "b:1, a:2"
    When schedule "b" is deleted
    Then the scheduling alerts are "b:1, a:2"
