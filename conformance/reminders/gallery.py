"""The reminders gallery: backends whose self-reminders break one rule of seed 002 §10.14.

Each entry is a shipped backend with one method of its reminders runtime (or store)
changed the way a reminder scheduler could get it wrong. `GALLERY` joins the
self-test: every suite must catch each entry and name the requirement in `catches`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update

from jobconform.backends.faults import StoreWriteFailed
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import Clock
from jobconform.backends.reminders.protocol import (
    REMINDER_TRIGGER,
    Delivery,
    DeliveryFailed,
    DeliveryOutcomeUnknown,
    DeliveryTarget,
    ReminderConfig,
    ReminderConflict,
    ReminderNotFound,
    ReminderRejected,
)
from jobconform.backends.reminders.runtime import REJECTION_TEXT, StepReminderRuntime
from jobconform.backends.reminders.sql import REMINDERS, SqlReminderStore, to_stored
from jobconform.backends.reminders.store import (
    CANCELLED,
    FIRED,
    FIRING,
    PENDING,
    InMemoryReminderStore,
    ReminderStore,
    StoredReminder,
)
from jobconform.backends.reminders.threaded import ThreadedReminderRuntime
from jobconform.backends.sql import SqlBackend
from jobconform.backends.threaded import ThreadedBackend
from jobconform.conformance.gallery import GalleryEntry, over_new_store, with_swapped_store
from jobconform.reference.reminders.oracle import (
    creation_problem,
    derived_key,
    resolve_fire_at,
)

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []
memory_entry = over_new_store(GALLERY, MemoryBackend, "open_reminders", InMemoryReminderStore)
sql_entry = with_swapped_store(GALLERY, SqlBackend, "empty_reminder_store")
threaded_entry = over_new_store(GALLERY, ThreadedBackend, "open_reminders", "new_reminder_store")


SECTION = "seed 002 §10.14"


# -- broken step runtimes (on the memory backend) -------------------------------------------


@memory_entry("reminder_flood_guard_counts_created_only", "RM-020",
              f"{SECTION} AC #7 (a per-agent create rate-limit, the flood guard)")
class FloodGuardCountsCreatedOnlyRuntime(StepReminderRuntime):
    """The flood guard counts the reminders created in its window, not the creation calls
    it let through: a caller whose creations are refused, or answered as replays, is never
    slowed down."""

    def _let_through(self, now: datetime) -> bool:
        limit = self._config.create_rate_limit
        since = now - timedelta(seconds=self._config.create_window_seconds)
        created = sum(1 for reminder in self._store.list(None) if reminder.created_at > since)
        return limit == 0 or created < limit


@memory_entry("reminder_list_defaults_to_every_status", "RM-019",
              f"{SECTION} AC #4 (default ?status=pending)")
class ListDefaultsToEveryStatusRuntime(StepReminderRuntime):
    """A listing that names no status lists every status, so reminders that fired or
    were cancelled show beside the ones still to fire."""

    def list_reminders(self, status: str | None = None) -> Sequence[StoredReminder]:
        return super().list_reminders(status)


@memory_entry("reminder_dispatch_unlabelled", "RM-021",
              f"{SECTION} AC #2 (triggered_by=\"reminder\")")
class DispatchUnlabelledRuntime(StepReminderRuntime):
    """A fire is dispatched with the reminder's id and message only, so the execution it
    starts carries no triggered_by: it shows as a manual run of the agent, and the
    executions page's reminder bucket and filter never find it."""

    def _dispatch(self, fired: StoredReminder) -> Delivery:
        return self._target.dispatch(fired.reminder_id, fired.message)


@memory_entry("reminder_unknown_outcome_retried", "RM-010",
              f"{SECTION} AC #3 (TimeoutException is assume-dispatched)")
class UnknownOutcomeRetriedRuntime(StepReminderRuntime):
    """A dispatch that timed out is treated as a failure and retried, so a reminder whose
    execution did start is dispatched again: it fires twice."""

    def _record(self, reminder_id: str, delivery: Delivery) -> None:
        try:
            delivery.result()
        except DeliveryOutcomeUnknown:
            self._attempt_failed(reminder_id, self._clock.now())
            return
        except DeliveryFailed:
            pass
        super()._record(reminder_id, delivery)


@memory_entry("reminder_cancel_fired_accepted", "RM-011", f"{SECTION} AC #4 (fired -> 409)")
class CancelFiredAcceptedRuntime(StepReminderRuntime):
    """Cancel moves any reminder that is not cancelled yet, so a reminder that already
    fired is shown cancelled and the caller believes it never ran."""

    def cancel(self, reminder_id: str) -> str:
        current = self._store.get(reminder_id)
        if current is None:
            raise ReminderNotFound(reminder_id)
        if current.status == CANCELLED:
            return "already_cancelled"
        if current.status == FIRING:
            raise ReminderConflict(reminder_id, current.status)
        self._store.transition(reminder_id, current.status, status=CANCELLED, due_at=None)
        return "cancelled"


@memory_entry("reminder_attempt_cap_off_by_one", "RM-009",
              f"{SECTION} AC #3 (MAX_REMINDER_FIRE_ATTEMPTS)")
class AttemptCapOffByOneRuntime(StepReminderRuntime):
    """The attempt cap is checked with `>` instead of `>=`, so a reminder is dispatched
    once more than max_attempts before it fails."""

    def _out_of_attempts(self, attempts: int) -> bool:
        return attempts > self._config.max_attempts


@memory_entry("reminder_restart_refires", "RM-012",
              f"{SECTION} AC #3 (survives a restart, single-fire)")
class RestartRefiresRuntime(StepReminderRuntime):
    """Boot recovery re-arms every reminder that is not cancelled, fired ones included, as
    a scheduler that arms its timers from all rows would: a restart fires them again."""

    def _recover(self) -> None:
        super()._recover()
        now = self._clock.now()
        for reminder in self._store.list(FIRED):
            self._store.transition(reminder.reminder_id, FIRED, status=PENDING, due_at=now)


@memory_entry("reminder_min_delay_exclusive", "RM-002",
              f"{SECTION} AC #7 (REMINDER_MIN_DELAY_SECONDS)")
class MinDelayExclusiveRuntime(StepReminderRuntime):
    """The minimum delay is exclusive: a reminder exactly min_delay_seconds ahead is
    refused as too soon."""

    def _problem(self, message: str, fire_at: datetime | None, delay_seconds: float | None,
                 now: datetime) -> str | None:
        code = super()._problem(message, fire_at, delay_seconds, now)
        if code is None:
            resolved = fire_at if fire_at is not None else now + timedelta(
                seconds=delay_seconds or 0.0)
            if (resolved - now).total_seconds() == self._config.min_delay_seconds:
                return "delay_too_short"
        return code


@memory_entry("reminder_daily_count_in_memory", "RM-005",
              f"{SECTION} AC #7 (a durable per-day cap)")
class DailyCountInMemoryRuntime(StepReminderRuntime):
    """The per-day count lives in the runtime object instead of the store, so a restart
    resets it and a reminder can schedule a hundred more each time the process restarts."""

    def __init__(self, store: ReminderStore, clock: Clock, config: ReminderConfig,
                 target: DeliveryTarget) -> None:
        self._created: list[datetime] = []
        super().__init__(store, clock, config, target)

    def _created_today(self, now: datetime) -> int:
        return sum(1 for created in self._created if created > now - timedelta(days=1))

    def create(self, message: str, fire_at: datetime | None = None,
               delay_seconds: float | None = None,
               idempotency_key: str | None = None) -> str:
        held = len(self._store.list())
        reminder_id = super().create(message, fire_at, delay_seconds, idempotency_key)
        if len(self._store.list()) > held:  # a replay creates nothing to count
            self._created.append(self._clock.now())
        return reminder_id


@memory_entry("reminder_pending_cap_counts_cancelled", "RM-004",
              f"{SECTION} AC #7 (a real pending count)")
class PendingCapCountsCancelledRuntime(StepReminderRuntime):
    """The pending cap counts cancelled reminders too, so cancelling a reminder does not
    free its place."""

    def _problem(self, message: str, fire_at: datetime | None, delay_seconds: float | None,
                 now: datetime) -> str | None:
        code = creation_problem(self._config, message, fire_at, delay_seconds, now)
        held = self._store.count(PENDING) + self._store.count(CANCELLED)
        if code is None and held >= self._config.max_pending:
            code = "too_many_pending"
        if code is None and self._created_today(now) >= self._config.max_per_day:
            code = "daily_limit"
        return code


@memory_entry("reminder_both_schedules_accepted", "RM-001",
              f"{SECTION} AC #1 (fire_at XOR delay_seconds)")
class BothSchedulesAcceptedRuntime(StepReminderRuntime):
    """A creation with both fire_at and delay_seconds is accepted, fire_at winning, where
    the caller's intent is ambiguous and must be refused."""

    def create(self, message: str, fire_at: datetime | None = None,
               delay_seconds: float | None = None,
               idempotency_key: str | None = None) -> str:
        if fire_at is not None:
            delay_seconds = None
        return super().create(message, fire_at, delay_seconds, idempotency_key)


@memory_entry("reminder_final_key_replayed", "RM-017",
              f"{SECTION} AC #6 (terminal rows are excluded from replay)")
class FinalReminderKeyReplayedRuntime(StepReminderRuntime):
    """A creation's key is looked up among every reminder created with it in the window,
    whatever its state: cancelling a reminder and creating it again with the same key
    answers the cancelled one, and no new reminder is ever made."""

    # The flood guard let this call through already (create's first rule, RM-020, as in
    # the shipped runtime): the creation it goes on to is not counted twice.
    _let_through_once = False

    def create(self, message: str, fire_at: datetime | None = None,
               delay_seconds: float | None = None,
               idempotency_key: str | None = None) -> str:
        now = self._clock.now()
        if not self._let_through(now):
            raise ReminderRejected("rate_limited", REJECTION_TEXT["rate_limited"].format(
                **vars(self._config)))
        if idempotency_key is not None:
            for reminder in reversed(self._store.list()):
                if (reminder.idempotency_key == idempotency_key
                        and reminder.created_at > now - timedelta(hours=24)):
                    return reminder.reminder_id
        self._let_through_once = True
        try:
            return super().create(message, fire_at, delay_seconds, idempotency_key)
        finally:
            self._let_through_once = False

    def _let_through(self, now: datetime) -> bool:
        return self._let_through_once or super()._let_through(now)


@memory_entry("reminder_derived_key_over_instant", "RM-018",
              f"{SECTION} AC #6 (the literal delay_seconds=N/fire_at spec, NOT"
              " the resolved instant)")
class DerivedKeyOverInstantRuntime(StepReminderRuntime):
    """A creation without a key is de-duplicated under a key derived from its message and
    the instant its schedule resolves to, not the schedule as given: the retry of a delay
    made a little later resolves to a later instant, misses its first attempt and makes a
    second reminder, while a fire time written for the same instant answers the delay's."""

    def _derived_key(self, message: str, fire_at: datetime | None,
                     delay_seconds: float | None, now: datetime) -> str | None:
        resolved = resolve_fire_at(fire_at, delay_seconds, now)
        return None if resolved is None else derived_key(message, resolved, None)


@memory_entry("reminder_fires_early", "RM-007",
              f"{SECTION} AC #2 (one-shot trigger at the due time)")
class FiresEarlyRuntime(StepReminderRuntime):
    """The scheduler fires reminders due within the next second, to make up for timer
    jitter: a reminder is dispatched before its time."""

    def _fire_due(self, now: datetime) -> bool:
        return super()._fire_due(now + timedelta(seconds=1))


@memory_entry("reminder_due_in_whole_seconds", "RM-007",
              "issue 33: time finer than a second (due times compared in whole seconds)")
class DueInWholeSecondsRuntime(StepReminderRuntime):
    """The scheduler compares due times with the clock in whole seconds,
    `int(due_at) <= int(now)`, as a poller over epoch-second columns does: a reminder due
    half a second into a second fires as that second begins, up to a second early
    (issue 33: time finer than a second)."""

    def _due(self, now: datetime) -> Sequence[StoredReminder]:
        # int(due) <= int(now) holds for every due time before the next whole second.
        next_second = now.replace(microsecond=0) + timedelta(seconds=1)
        return super()._due(next_second - timedelta(microseconds=1))


# -- broken SQL stores ----------------------------------------------------------------------


@sql_entry("sql_reminder_torn_fire_move", "RM-014",
           f"{SECTION} Storage (one reminder row, moved atomically)")
class TornFireMoveStore(SqlReminderStore):
    """A move is two transactions: the new due_at, attempts and fired_at first, the new
    status after. A fault between the two leaves a pending reminder without a due_at,
    which never fires again: the reminder is lost."""

    def transition(self, reminder_id: str, expected_status: str,
                   **changes: Any) -> StoredReminder | None:
        status = changes.pop("status", None)
        if changes:
            moved = super().transition(reminder_id, expected_status, **changes)
            if moved is None or status is None:
                return moved
        if status is None:
            return super().get(reminder_id)
        return super().transition(reminder_id, expected_status, status=status)


@memory_entry("reminder_dispatched_before_firing", "RM-007",
              f"{SECTION} Storage (CAS pending -> firing, then dispatch)")
class DispatchesBeforeFiringRuntime(StepReminderRuntime):
    """The scheduler calls the target first and marks the reminder firing after the call
    returns: the dispatch goes out for a reminder the store still holds as pending, so a
    crash between the two dispatches it again at boot. The state after the command is
    right; only the order inside it is wrong."""

    def _fire_due(self, now: datetime) -> bool:
        # As the shipped scheduler in all but the order: the dispatch labelled as the
        # reminder's, a failed move kept due for the next settle (issue 33: a broken
        # runtime that also let the failure escape failed RM-014's case as the adapter's
        # error, not by its own bug).
        failed = False
        for reminder in self._due(now):
            delivery = self._target.dispatch(reminder.reminder_id, reminder.message,
                                             REMINDER_TRIGGER)
            try:
                fired = self._store.transition(reminder.reminder_id, PENDING, status=FIRING,
                                               due_at=None, attempts=reminder.attempts + 1)
            except StoreWriteFailed:
                failed = True
                continue
            if fired is not None:
                self._dispatched(fired.reminder_id, delivery)
        return failed


@memory_entry("reminder_hold_ignored", "RM-015",
              f"{SECTION} Autonomy hold (get_active_reminders filters autonomy_enabled)")
class HoldIgnoredRuntime(StepReminderRuntime):
    """The scheduler picks due reminders from the whole pending list instead of the
    store's active query, which is where the autonomy hold lives: a held reminder still
    fires when its time comes."""

    def _due(self, now: datetime) -> Sequence[StoredReminder]:
        due = [r for r in self._store.list(PENDING) if r.due_at is not None and r.due_at <= now]
        return sorted(due, key=lambda r: r.due_at or now)


@memory_entry("reminder_retention_sweeps_any_state", "RM-016",
              f"{SECTION} Retention (pending/firing never deleted)")
class RetentionSweepsAnyStateRuntime(StepReminderRuntime):
    """The retention sweep deletes every reminder created before the window, whatever its
    state: a reminder still pending (held, or retrying) or firing is lost."""

    def sweep(self) -> int:
        if self._config.retention_days == 0:
            return 0
        cutoff = self._clock.now() - timedelta(days=self._config.retention_days)
        old = [r for r in self._store.list() if r.created_at < cutoff]
        for reminder in old:
            for status in (PENDING, FIRING):  # make it final, then let the sweep take it
                self._store.transition(reminder.reminder_id, status, status=CANCELLED)
        return self._store.delete_final_before(cutoff)


# -- a broken SQL store ---------------------------------------------------------------------


@sql_entry("sql_reminder_unconditioned_transition", "RM-011",
           f"{SECTION} AC #4 (CAS pending -> cancelled)")
class UnconditionedTransitionStore(SqlReminderStore):
    """Transitions are `UPDATE ... WHERE reminder_id = ?` without the expected status, so
    cancel, a compare-and-set on pending, also moves a fired reminder."""

    def transition(self, reminder_id: str, expected_status: str,
                   **changes: Any) -> StoredReminder | None:
        with self._transaction() as connection:
            moved = connection.execute(update(REMINDERS)
                                       .where(REMINDERS.c.reminder_id == reminder_id)
                                       .values(**changes))
            if moved.rowcount == 0:
                return None
            return to_stored(connection.execute(
                select(REMINDERS).where(REMINDERS.c.reminder_id == reminder_id)).one())


# -- a broken threaded scheduler ------------------------------------------------------------


@threaded_entry("threaded_reminder_timers_armed_at_create", "RM-012",
                f"{SECTION} Fire home (boot recovery reconcile)")
class TimersArmedAtCreateRuntime(ThreadedReminderRuntime):
    """The scheduler fires only reminders it armed itself, at creation or on a retry,
    and never reads the store at boot, so after a restart pending reminders never fire."""

    def __init__(self, store: ReminderStore, clock: Clock, config: ReminderConfig,
                 target: DeliveryTarget) -> None:
        self._armed: set[str] = set()
        super().__init__(store, clock, config, target)

    def create(self, message: str, fire_at: datetime | None = None,
               delay_seconds: float | None = None,
               idempotency_key: str | None = None) -> str:
        with self._state:
            reminder_id = super().create(message, fire_at, delay_seconds, idempotency_key)
            self._armed.add(reminder_id)
            return reminder_id

    def _next_due(self) -> datetime | None:
        if self._store.next_due() is None:  # nothing pending, or held (RM-015)
            return None
        return min((r.due_at for r in self._store.list(PENDING)
                    if r.reminder_id in self._armed and r.due_at is not None), default=None)

    def _due(self, now: datetime) -> list[StoredReminder]:
        return [reminder for reminder in self._store.due(now)
                if reminder.reminder_id in self._armed]
