Feature: Self-reminders
  A reminder is a one-shot, future dispatch of a message (seed 002 §10.14). It is pending
  until the reminders' clock reaches its due time, firing while its dispatch is in flight,
  then fired, pending again for a retry, or failed; a pending reminder can be cancelled.
  The scenario decides how each dispatch ends: it lands, it fails cleanly, or it times out
  (its outcome is unknown). Seconds count from the start of the virtual clock. Scenarios
  are skipped on a backend that does not claim the reminders area.

  # -- RM-001: exactly one of fire_at and delay_seconds ---------------------------------------

  @RM-001
  Scenario: A delay is resolved against the clock into a pending reminder
    Given the reminder clock advances 10 seconds
    When reminder "a" is created with message "check the PR" and a delay of 120 seconds
    Then the creation of reminder "a" is accepted
    And reminder "a" is pending
    And reminder "a" has the message "check the PR"
    And reminder "a" was created at second 10
    And reminder "a" fires at second 130
    And reminder "a" is due at second 130
    And reminder "a" has 0 attempts
    And reminder "a" has not fired

  @RM-001
  Scenario: An absolute fire time is kept as given
    When reminder "a" is created with message "follow up" to fire at second 3600
    Then the creation of reminder "a" is accepted
    And reminder "a" fires at second 3600
    And reminder "a" is due at second 3600

  @RM-001
  Scenario: Both a delay and a fire time are refused, and so is neither
    When reminder "a" is created with message "x", a delay of 120 seconds and a fire time of second 120
    And reminder "b" is created with message "x" and no schedule
    Then the creation of reminder "a" is rejected with "schedule"
    And the creation of reminder "b" is rejected with "schedule"
    When all reminders are listed
    Then no reminders are listed

  # -- RM-002: delay bounds, inclusive ---------------------------------------------------------

  @RM-002
  Scenario: The minimum delay is inclusive
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And reminder "b" is created with message "x" and a delay of 59 seconds
    Then the creation of reminder "a" is accepted
    And the creation of reminder "b" is rejected with "delay_too_short"

  @RM-002
  Scenario: The maximum delay is inclusive
    When reminder "a" is created with message "x" and a delay of 2592000 seconds
    And reminder "b" is created with message "x" and a delay of 2592001 seconds
    Then the creation of reminder "a" is accepted
    And the creation of reminder "b" is rejected with "delay_too_long"

  @RM-002
  Scenario: A fire time in the past or too near is refused
    Given the reminder clock advances 600 seconds
    When reminder "a" is created with message "x" to fire at second 300
    And reminder "b" is created with message "x" to fire at second 659
    And reminder "c" is created with message "x" to fire at second 660
    Then the creation of reminder "a" is rejected with "delay_too_short"
    And the creation of reminder "b" is rejected with "delay_too_short"
    And the creation of reminder "c" is accepted

  # -- RM-003: message bounds -----------------------------------------------------------------

  @RM-003
  Scenario: Empty and overlong messages are refused
    When reminder "a" is created with an empty message and a delay of 60 seconds
    And reminder "b" is created with message "   " and a delay of 60 seconds
    And reminder "c" is created with a message of 4000 characters and a delay of 60 seconds
    And reminder "d" is created with a message of 4001 characters and a delay of 60 seconds
    Then the creation of reminder "a" is rejected with "message_empty"
    And the creation of reminder "b" is rejected with "message_empty"
    And the creation of reminder "c" is accepted
    And the creation of reminder "d" is rejected with "message_too_long"

  # -- RM-004: pending cap ---------------------------------------------------------------------

  @RM-004
  Scenario: The pending cap counts pending reminders only
    Given reminders with max_pending set to 2
    When reminders "a, b" are created with a delay of 60 seconds
    And reminder "c" is created with message "x" and a delay of 600 seconds
    Then the creation of reminder "c" is rejected with "too_many_pending"
    When reminder "a" is cancelled
    And reminder "d" is created with message "x" and a delay of 600 seconds
    Then the creation of reminder "d" is accepted
    When the reminder clock advances 60 seconds
    Then reminder "b" is firing
    When reminder "e" is created with message "y" and a delay of 600 seconds
    Then the creation of reminder "e" is accepted

  # -- RM-005: per-day cap, durable ------------------------------------------------------------

  @RM-005
  Scenario: The day's creations are capped over a rolling 24 hours, cancelled ones included
    Given reminders with max_per_day set to 3
    When reminders "a, b, c" are created with a delay of 2000000 seconds
    And reminder "a" is cancelled
    And reminder "d" is created with message "x" and a delay of 2000000 seconds
    Then the creation of reminder "d" is rejected with "daily_limit"
    When the reminder clock advances 86399 seconds
    And reminder "e" is created with message "x" and a delay of 600 seconds
    Then the creation of reminder "e" is rejected with "daily_limit"
    When the reminder clock advances 1 second
    And reminder "f" is created with message "x" and a delay of 600 seconds
    Then the creation of reminder "f" is accepted

  @RM-005 @RM-012
  Scenario: The day's count survives a restart
    Given reminders with max_per_day set to 2
    When reminders "a, b" are created with a delay of 600 seconds
    And the reminders runtime restarts
    And reminder "c" is created with message "x" and a delay of 600 seconds
    Then the creation of reminder "c" is rejected with "daily_limit"

  # -- RM-006: five states; the order of rejections ---------------------------------------------

  @RM-006
  Scenario: The first broken rule is the one reported
    When reminder "a" is created with message "   ", a delay of 5 seconds and a fire time of second 1
    And reminder "b" is created with an empty message and a delay of 5 seconds
    And reminder "c" is created with a message of 4001 characters and a delay of 5 seconds
    Then the creation of reminder "a" is rejected with "schedule"
    And the creation of reminder "b" is rejected with "message_empty"
    And the creation of reminder "c" is rejected with "message_too_long"

  # -- RM-007: dispatched once, when the clock reaches it -------------------------------------

  @RM-007
  Scenario: A reminder is dispatched when its time comes, not a second before
    When reminder "a" is created with message "x" and a delay of 61 seconds
    And the reminder clock advances 60 seconds
    Then reminder "a" is pending
    And reminder "a" was dispatched 0 times
    When the reminder clock advances 1 second
    Then reminder "a" is firing
    And reminder "a" has 1 attempt
    And reminder "a" is not due
    And reminder "a" was dispatched 1 time
    When the reminder clock advances 600 seconds
    Then reminder "a" was dispatched 1 time

  @RM-007
  Scenario: A reminder due between whole seconds is not dispatched a microsecond before it
    Given the reminder clock advances 0.5 seconds
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 59.999999 seconds
    Then reminder "a" is pending
    And reminder "a" was dispatched 0 times
    When the reminder clock advances 0.000001 seconds
    Then reminder "a" is firing
    And reminder "a" was dispatched 1 time

  @RM-021 @RM-009
  Scenario: Every dispatch of a reminder, a retry included, is labelled as the reminder's
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" fails
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" lands
    Then reminder "a" is fired
    And reminder "a" was dispatched 2 times
    And every dispatch of reminder "a" was labelled as triggered by it

  # -- RM-008: a dispatch that lands -----------------------------------------------------------

  @RM-008
  Scenario: A dispatch that lands fires the reminder
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 70 seconds
    And the reminder clock advances 5 seconds
    And the dispatch of reminder "a" lands
    Then reminder "a" is fired
    And reminder "a" fired at second 75
    And reminder "a" has 1 attempt
    And reminder "a" was dispatched 1 time

  # -- RM-009: retried up to the attempt cap ---------------------------------------------------

  @RM-009
  Scenario: A failed dispatch is retried after the retry delay, up to three attempts
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" fails
    Then reminder "a" is pending
    And reminder "a" has 1 attempt
    And reminder "a" is due at second 120
    When the reminder clock advances 60 seconds
    Then reminder "a" is firing
    When the dispatch of reminder "a" fails
    And the reminder clock advances 60 seconds
    Then reminder "a" is firing
    And reminder "a" has 3 attempts
    When the dispatch of reminder "a" fails
    Then reminder "a" is failed
    And reminder "a" has not fired
    When the reminder clock advances 86400 seconds
    Then reminder "a" is failed
    And reminder "a" was dispatched 3 times

  @RM-009
  Scenario: A retried reminder that then lands is fired
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" fails
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" lands
    Then reminder "a" is fired
    And reminder "a" has 2 attempts
    And reminder "a" fired at second 120

  # -- RM-010: outcome unknown -> assumed dispatched --------------------------------------------

  @RM-010
  Scenario: A dispatch that times out is assumed to have landed and is never repeated
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" times out
    Then reminder "a" is fired
    And reminder "a" fired at second 60
    When the reminder clock advances 86400 seconds
    Then reminder "a" is fired
    And reminder "a" was dispatched 1 time

  # -- RM-011: cancel ----------------------------------------------------------------------------

  @RM-011
  Scenario: Cancel moves a pending reminder, and a second cancel is a no-op
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And reminder "a" is cancelled
    Then the cancel answers "cancelled"
    And reminder "a" is cancelled
    When reminder "a" is cancelled
    Then the cancel answers "already_cancelled"
    When the reminder clock advances 600 seconds
    Then reminder "a" is cancelled
    And reminder "a" was dispatched 0 times

  @RM-011
  Scenario: Cancelling a fired reminder is a conflict
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" lands
    And reminder "a" is cancelled
    Then the cancel answers "conflict:fired"
    And reminder "a" is fired

  @RM-011
  Scenario: Cancelling a firing or failed reminder is a conflict too
    Given reminders with max_attempts set to 1
    When reminders "a, b" are created with a delay of 60 seconds
    And the reminder clock advances 60 seconds
    And reminder "a" is cancelled
    Then the cancel answers "conflict:firing"
    When the dispatch of reminder "b" fails
    And reminder "b" is cancelled
    Then the cancel answers "conflict:failed"
    And reminder "b" is failed

  @RM-011
  Scenario: Cancelling an unknown reminder is not found
    When reminder "ghost" is cancelled
    Then the cancel answers "not_found"

  # -- RM-012: restarts --------------------------------------------------------------------------

  @RM-012
  Scenario: A pending reminder survives a restart and fires at its time
    When reminder "a" is created with message "x" and a delay of 120 seconds
    And the reminders runtime restarts
    Then reminder "a" is pending
    When the reminder clock advances 120 seconds
    Then reminder "a" is firing
    And reminder "a" was dispatched 1 time

  @RM-012
  Scenario: A reminder that fell due while the runtime was down fires at once after the restart
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminders runtime is down for 300 seconds and restarts
    Then reminder "a" is firing
    And reminder "a" has 1 attempt
    And reminder "a" was dispatched 1 time

  @RM-012
  Scenario: A dispatch in flight at a restart is reconciled as fired, once
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 60 seconds
    Then reminder "a" is firing
    When the reminder clock advances 10 seconds
    And the reminders runtime restarts
    Then reminder "a" is fired
    And reminder "a" fired at second 70
    When the dispatch of reminder "a" fails
    And the reminder clock advances 86400 seconds
    Then reminder "a" is fired
    And reminder "a" was dispatched 1 time

  @RM-012
  Scenario: Final reminders stay final across a restart
    When reminders "a, b" are created with a delay of 60 seconds
    And reminder "b" is cancelled
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" lands
    And the reminders runtime restarts
    And the reminder clock advances 600 seconds
    Then reminder "a" is fired
    And reminder "a" fired at second 60
    And reminder "b" is cancelled
    And reminder "a" was dispatched 1 time

  # -- RM-015: the autonomy hold ------------------------------------------------------------------

  @RM-015
  Scenario: Autonomy off holds due reminders, across a restart; on again fires the past-due one
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And reminder "b" is created with message "x" and a delay of 600 seconds
    And the agent's autonomy is turned off
    And the reminder clock advances 300 seconds
    Then reminder "a" is pending
    And reminder "a" is due at second 60
    And reminder "a" was dispatched 0 times
    When the reminders runtime restarts
    Then reminder "a" is pending
    And reminder "a" was dispatched 0 times
    When the agent's autonomy is turned on
    Then reminder "a" is firing
    And reminder "a" has 1 attempt
    And reminder "a" was dispatched 1 time
    And reminder "b" is pending
    When the reminder clock advances 299 seconds
    Then reminder "b" is pending
    When the reminder clock advances 1 second
    Then reminder "b" is firing

  @RM-015
  Scenario: A dispatch in flight ends as usual under a hold, and its retry is held
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And reminder "b" is created with message "x" and a delay of 600 seconds
    And the reminder clock advances 60 seconds
    And the agent's autonomy is turned off
    And the dispatch of reminder "a" fails
    Then reminder "a" is pending
    And reminder "a" is due at second 120
    When the reminder clock advances 600 seconds
    And reminder "b" is cancelled
    Then reminder "a" is pending
    And reminder "a" was dispatched 1 time
    And reminder "b" is cancelled
    When the agent's autonomy is turned on
    Then reminder "a" is firing
    And reminder "a" has 2 attempts
    And reminder "a" was dispatched 2 times

  # -- RM-016: retention ------------------------------------------------------------------------

  @RM-016
  Scenario: The sweep deletes final reminders past the window, never pending or firing ones
    Given reminders with retention_days set to 1
    When reminders "a, c, d" are created with a delay of 60 seconds
    And reminder "b" is created with message "x" and a delay of 600 seconds
    And reminder "c" is cancelled
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" lands
    And the agent's autonomy is turned off
    And the reminder clock advances 3540 seconds
    And reminder "e" is created with message "x" and a delay of 60 seconds
    And reminder "e" is cancelled
    And the reminder clock advances 82800 seconds
    And the reminder retention sweep runs
    Then the sweep deleted 0 reminders
    When the reminder clock advances 1 second
    And the reminder retention sweep runs
    Then the sweep deleted 2 reminders
    And reminder "a" is no longer held
    And reminder "c" is no longer held
    And reminder "b" is pending
    And reminder "d" is firing
    And reminder "e" is cancelled
    When all reminders are listed
    Then the reminders listed are "d, b, e"

  @RM-016
  Scenario: Final reminders are kept 90 days by default
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 60 seconds
    And the dispatch of reminder "a" lands
    And the reminder clock advances 7775940 seconds
    And the reminder retention sweep runs
    Then the sweep deleted 0 reminders
    When the reminder clock advances 1 second
    And the reminder retention sweep runs
    Then the sweep deleted 1 reminder
    And reminder "a" is no longer held

  @RM-016 @edge
  Scenario: A retention window of 0 turns the sweep off
    Given reminders with retention_days set to 0
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And reminder "a" is cancelled
    And the reminder clock advances 31536000 seconds
    And the reminder retention sweep runs
    Then the sweep deleted 0 reminders
    And reminder "a" is cancelled

  # -- RM-013: reads ------------------------------------------------------------------------------

  @RM-013
  Scenario: Listings follow creation order and filter by state
    When reminder "a" is created with message "x" and a delay of 600 seconds
    And reminder "b" is created with message "x" and a delay of 60 seconds
    And reminder "c" is created with message "x" and a delay of 300 seconds
    And reminder "c" is cancelled
    And all reminders are listed
    Then the reminders listed are "a, b, c"
    When the pending reminders are listed
    Then the reminders listed are "a, b"
    When the cancelled reminders are listed
    Then the reminders listed are "c"

  # -- RM-020: the create flood guard ----------------------------------------------------------

  @RM-020
  Scenario: A flood of creations is refused before any other rule, and the window moves on
    Given reminders with create_rate_limit set to 2
    And reminders with create_window_seconds set to 60
    When reminder "a" is created with message "x" and a delay of 600 seconds
    And reminder "empty" is created with an empty message and a delay of 600 seconds
    And reminder "b" is created with message "y" and a delay of 600 seconds
    Then the creation of reminder "a" is accepted
    And the creation of reminder "empty" is rejected with "message_empty"
    And the creation of reminder "b" is rejected with "rate_limited"
    When the reminder clock advances 59 seconds
    And reminder "c" is created with message "y" and a delay of 600 seconds
    Then the creation of reminder "c" is rejected with "rate_limited"
    When the reminder clock advances 1 second
    And reminder "d" is created with message "y" and a delay of 600 seconds
    Then the creation of reminder "d" is accepted

  @RM-020
  Scenario: The flood guard counts a retry that answers its reminder, and a restart empties it
    Given reminders with create_rate_limit set to 2
    When reminder "a" is created with message "x", a delay of 600 seconds and idempotency key "k1"
    And reminder "retry" is created with message "x", a delay of 600 seconds and idempotency key "k1"
    And reminder "b" is created with message "y" and a delay of 600 seconds
    Then the creation of reminder "retry" answers reminder "a"
    And the creation of reminder "b" is rejected with "rate_limited"
    When the reminders runtime is down for 0 seconds and restarts
    And reminder "c" is created with message "y" and a delay of 600 seconds
    Then the creation of reminder "c" is accepted

  # -- RM-019: the list's default ---------------------------------------------------------------

  @RM-019
  Scenario: A listing that names no status lists the pending reminders
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And reminder "b" is created with message "x" and a delay of 600 seconds
    And reminder "c" is created with message "x" and a delay of 300 seconds
    And reminder "d" is created with message "x" and a delay of 900 seconds
    And reminder "c" is cancelled
    And the reminders are listed without a filter
    Then the reminders listed are "a, b, d"
    When the reminder clock advances 60 seconds
    And the reminders are listed without a filter
    Then the reminders listed are "b, d"
    When the dispatch of reminder "a" lands
    And the reminders are listed without a filter
    Then the reminders listed are "b, d"
    When all reminders are listed
    Then the reminders listed are "a, b, c, d"

  @RM-013
  Scenario: A reminder read is a snapshot
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And reminder "a" is read
    Then the reminder read is pending
    When the reminder clock advances 60 seconds
    Then reminder "a" is firing
    And the reminder read earlier still reads as it did
    When reminder "ghost" is read
    Then no reminder was read

  # -- RM-014: store faults between writes -----------------------------------------------------

  @RM-014
  Scenario: A move to firing that the store refused is made again, and dispatched once
    Given the reminders runtime takes store faults
    When reminders "a, b" are created with a delay of 60 seconds
    And store write 1 fails while the reminder clock advances 60 seconds
    Then reminder "a" is firing
    And reminder "b" is firing
    And reminder "a" was dispatched 1 time
    And reminder "b" was dispatched 1 time

  @RM-014
  Scenario: An outcome whose record the store refused is recorded again
    Given the reminders runtime takes store faults
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the reminder clock advances 60 seconds
    And store write 1 fails while the dispatch of reminder "a" lands
    Then reminder "a" is fired
    And reminder "a" fired at second 60
    And reminder "a" was dispatched 1 time

  @RM-014 @RM-012
  Scenario: A crash between two fires keeps the first and fires the second after the restart
    Given the reminders runtime takes store faults
    When reminders "a, b" are created with a delay of 60 seconds
    And the process crashes at store write 2 while the reminder clock advances 60 seconds
    Then reminder "a" is fired
    And reminder "b" is firing
    And reminder "b" has 1 attempt
    And reminder "a" was dispatched 1 time
    And reminder "b" was dispatched 1 time

  @RM-014 @RM-012
  Scenario: A crash before a fire's first write loses nothing: the reminder fires after the restart
    Given the reminders runtime takes store faults
    When reminder "a" is created with message "x" and a delay of 60 seconds
    And the process crashes at store write 1 while the reminder clock advances 60 seconds
    Then reminder "a" is firing
    And reminder "a" has 1 attempt
    And reminder "a" was dispatched 1 time
    When the dispatch of reminder "a" lands
    Then reminder "a" is fired

  # -- RM-017: idempotency keys on creation -------------------------------------------------------

  @RM-017
  Scenario: A retried creation with the same key answers the reminder it created, before any limit
    Given reminders with max_pending set to 1
    When reminder "a" is created with message "check the PR", a delay of 3600 seconds and idempotency key "k1"
    Then the creation of reminder "a" is accepted
    When reminder "retry" is created with message "check the PR", a delay of 3600 seconds and idempotency key "k1"
    Then the creation of reminder "retry" answers reminder "a"
    When all reminders are listed
    Then the reminders listed are "a"
    When reminder "other" is created with message "check the PR", a delay of 3600 seconds and idempotency key "k2"
    Then the creation of reminder "other" is rejected with "too_many_pending"

  @RM-017
  Scenario: A key stops answering once its reminder is final or 24 hours old
    When reminder "a" is created with message "x", a delay of 172800 seconds and idempotency key "k1"
    And reminder "a" is cancelled
    And reminder "again" is created with message "x", a delay of 172800 seconds and idempotency key "k1"
    Then the creation of reminder "again" is accepted
    And reminder "again" is pending
    When reminder "plain" is created with message "x" and a delay of 172800 seconds
    Then the creation of reminder "plain" is accepted
    When the reminder clock advances 86399 seconds
    And reminder "inside" is created with message "x", a delay of 3600 seconds and idempotency key "k1"
    Then the creation of reminder "inside" answers reminder "again"
    When the reminder clock advances 1 second
    And reminder "after" is created with message "x", a delay of 3600 seconds and idempotency key "k1"
    Then the creation of reminder "after" is accepted
    When all reminders are listed
    Then the reminders listed are "a, again, plain, after"

  # -- RM-018: keys derived for creations without one ---------------------------------------------

  @RM-018
  Scenario: A retried creation without a key answers its reminder, though its delay now resolves later
    Given reminders with max_pending set to 2
    When reminder "a" is created with message "check the PR" and a delay of 3600 seconds
    And the reminder clock advances 60 seconds
    And reminder "retry" is created with message "check the PR" and a delay of 3600 seconds
    Then the creation of reminder "retry" answers reminder "a"
    And reminder "a" fires at second 3600
    When reminder "at" is created with message "check the PR" to fire at second 3600
    Then the creation of reminder "at" is accepted
    When reminder "again" is created with message "check the PR" and a delay of 3600 seconds
    Then the creation of reminder "again" answers reminder "a"
    When reminder "other" is created with message "check the PR!" and a delay of 3600 seconds
    Then the creation of reminder "other" is rejected with "too_many_pending"
    When reminder "shorter" is created with message "check the PR" and a delay of 3540 seconds
    Then the creation of reminder "shorter" is rejected with "too_many_pending"
    When all reminders are listed
    Then the reminders listed are "a, at"

  @RM-018 @RM-001
  Scenario: A fire time counts as written: the same instant at another offset is another reminder
    When reminder "a" is created with message "x" to fire at second 7200
    And reminder "b" is created with message "x" to fire at second 7200 written 2 hours ahead of UTC
    Then the creation of reminder "b" is accepted
    And reminder "b" fires at second 7200
    When reminder "b-retry" is created with message "x" to fire at second 7200 written 2 hours ahead of UTC
    Then the creation of reminder "b-retry" answers reminder "b"
    When all reminders are listed
    Then the reminders listed are "a, b"

  @RM-018 @RM-012
  Scenario: A derived key survives a restart and stops answering once its reminder is final or 24 hours old
    When reminder "a" is created with message "x" and a delay of 172800 seconds
    And the reminders runtime restarts
    And reminder "retry" is created with message "x" and a delay of 172800 seconds
    Then the creation of reminder "retry" answers reminder "a"
    When reminder "a" is cancelled
    And reminder "again" is created with message "x" and a delay of 172800 seconds
    Then the creation of reminder "again" is accepted
    And reminder "again" is pending
    When the reminder clock advances 86399 seconds
    And reminder "inside" is created with message "x" and a delay of 172800 seconds
    Then the creation of reminder "inside" answers reminder "again"
    When the reminder clock advances 1 second
    And reminder "after" is created with message "x" and a delay of 172800 seconds
    Then the creation of reminder "after" is accepted
    When all reminders are listed
    Then the reminders listed are "a, again, after"

  @RM-018 @RM-017
  Scenario: A key given and a key derived never answer each other
    When reminder "keyed" is created with message "x", a delay of 600 seconds and idempotency key "k1"
    And reminder "plain" is created with message "x" and a delay of 600 seconds
    Then the creation of reminder "plain" is accepted
    When reminder "plain-retry" is created with message "x" and a delay of 600 seconds
    Then the creation of reminder "plain-retry" answers reminder "plain"
    When reminder "keyed-retry" is created with message "x", a delay of 600 seconds and idempotency key "k1"
    Then the creation of reminder "keyed-retry" answers reminder "keyed"
    When reminder "other-key" is created with message "x", a delay of 600 seconds and idempotency key "k2"
    Then the creation of reminder "other-key" is accepted
    When all reminders are listed
    Then the reminders listed are "keyed, plain, other-key"
