"""The step reminders runtime: seed 002 §10.14's reminders over any reminder store.

Deterministic and single-threaded: `settle` is the scheduler's wake-up. It records the
outcome of every dispatch the harness has decided, then dispatches every reminder the
clock has reached. Each move is a compare-and-set on the store, so a reminder is moved to
firing, and dispatched, once (RM-007). A runtime opening over a store that holds firing
reminders runs the boot recovery first: their dispatch was in flight when the previous
runtime stopped, its outcome is lost, so they are reconciled as dispatched (RM-012),
which is the rule for any dispatch whose outcome is unknown (RM-010).

A store write that fails changes nothing, and whatever it guards waits for it: a
reminder whose move to firing failed is not dispatched, an outcome whose record failed
stays in hand, and the next pass, at once, makes the write again (RM-014). A crash
(`ProcessCrashed`) is not caught: it unwinds the pass, as a dying process stops.
"""

from __future__ import annotations

import hashlib
import math
import uuid
from collections import deque
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from jobconform.backends.faults import StoreWriteFailed
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
from jobconform.backends.reminders.store import (
    CANCELLED,
    FAILED,
    FIRED,
    FIRING,
    PENDING,
    REMINDER_STATUSES,
    ReminderStore,
    StoredReminder,
)
from jobconform.reference.faults import StoreFault

DAY = timedelta(days=1)
# A retry answers the reminder its key made within the last 24 hours (RM-017, RM-018).
KEY_WINDOW = timedelta(hours=24)
# How many further passes a settle makes after one that met a failed store write.
PASSES_AFTER_A_FAILED_WRITE = 2
REJECTION_TEXT = {
    "schedule": "give exactly one of fire_at (a timezone-aware instant) and delay_seconds"
                " (a finite number)",
    "message_empty": "the message must contain more than whitespace",
    "message_too_long": "the message has more than {max_message_chars} characters",
    "delay_too_short": "the reminder would fire in less than {min_delay_seconds:g} seconds",
    "delay_too_long": "the reminder would fire in more than {max_delay_seconds:g} seconds",
    "too_many_pending": "{max_pending} reminders are already pending; cancel one or wait",
    "daily_limit": "{max_per_day} reminders were created in the last 24 hours",
    "rate_limited": "more than {create_rate_limit} creations in {create_window_seconds:g}"
                    " seconds; slow down",
}



def fire_at_asked(fire_at: datetime | None, delay_seconds: float | None,
                  now: datetime) -> datetime | None:
    """The UTC instant a creation asks for (RM-001), or None unless it gives exactly one
    of an aware fire_at and a finite delay_seconds (its bounds are RM-002's to check)."""
    if fire_at is not None and delay_seconds is None:
        return fire_at.astimezone(UTC) if fire_at.utcoffset() is not None else None
    if fire_at is None and isinstance(delay_seconds, int | float) and not isinstance(
            delay_seconds, bool) and math.isfinite(delay_seconds):
        return (now + timedelta(seconds=delay_seconds)).astimezone(UTC)
    return None


def key_of_creation(message: str, fire_at: datetime | None,
                    delay_seconds: float | None) -> str | None:
    """The key a creation without one is de-duplicated under (RM-018): a digest of its
    message and its schedule as written, a fire_at's wall time with its offset or a
    delay's number (60 and 60.0 alike), never the instant that resolves to. None for a
    schedule that is not exactly one of the two: no reminder was created with one."""
    if (fire_at is None) == (delay_seconds is None):
        return None
    if fire_at is not None:
        schedule = ("fire_at", fire_at.replace(tzinfo=None).isoformat(), str(fire_at.utcoffset()))
    elif isinstance(delay_seconds, int | float) and not isinstance(delay_seconds, bool):
        schedule = ("delay_seconds", repr(float(delay_seconds)), "")
    else:
        schedule = ("delay_seconds", repr(delay_seconds), "")
    return hashlib.sha256("\x1f".join((message, *schedule)).encode()).hexdigest()

class StepReminderRuntime:
    # `get` reads the store only, so the harness may read a reminder inside a dispatch.
    readable_during_dispatch = True

    def __init__(self, store: ReminderStore, clock: Clock, config: ReminderConfig,
                 target: DeliveryTarget) -> None:
        self._store = store
        self._clock = clock
        self._config = config
        self._target = target
        self._in_flight: dict[str, Delivery] = {}  # reminder id -> its dispatch
        # When the flood guard let each creation call through (RM-020). Kept in memory
        # only, as the seed's per-agent rate limiter is: a restart starts it afresh.
        self._guarded_calls: deque[datetime] = deque()
        self._recover()

    # -- creation and cancel -------------------------------------------------------------

    def create(self, message: str, fire_at: datetime | None = None,
               delay_seconds: float | None = None,
               idempotency_key: str | None = None) -> str:
        now = self._clock.now()
        if not self._let_through(now):  # the flood guard comes before any other rule
            raise ReminderRejected("rate_limited", REJECTION_TEXT["rate_limited"].format(
                **vars(self._config)))
        derived = (None if idempotency_key is not None
                   else self._derived_key(message, fire_at, delay_seconds, now))
        # A retry of a creation that landed answers its reminder, before any limit is
        # counted: the first creation may be what filled them. Under the key it gives
        # (RM-017), or without one under the key derived for it (RM-018); the two kinds
        # never answer each other.
        if idempotency_key is not None:
            live = self._store.live_with_key(idempotency_key, now - KEY_WINDOW)
        elif derived is not None:
            live = self._store.live_with_key(derived, now - KEY_WINDOW, derived=True)
        else:
            live = None
        if live is not None:
            return live.reminder_id
        code = self._problem(message, fire_at, delay_seconds, now)
        if code is not None:
            text = REJECTION_TEXT[code].format(**vars(self._config))
            raise ReminderRejected(code, text)
        resolved = fire_at_asked(fire_at, delay_seconds, now)
        assert resolved is not None
        reminder_id = str(uuid.uuid4())
        self._store.add(StoredReminder(reminder_id, message, PENDING, now, resolved, resolved,
                                       idempotency_key=idempotency_key, derived_key=derived))
        self._reminders_changed()
        return reminder_id

    def _let_through(self, now: datetime) -> bool:
        """The flood guard (RM-020): False once create_rate_limit calls were let through
        in the window ending at `now`. A call let through counts, whatever it answers."""
        limit = self._config.create_rate_limit
        if limit == 0:
            return True
        since = now - timedelta(seconds=self._config.create_window_seconds)
        while self._guarded_calls and self._guarded_calls[0] <= since:
            self._guarded_calls.popleft()
        if len(self._guarded_calls) >= limit:
            return False
        self._guarded_calls.append(now)
        return True

    def _derived_key(self, message: str, fire_at: datetime | None,
                     delay_seconds: float | None, now: datetime) -> str | None:
        """The key of a creation without one (RM-018): over the schedule as given, not the
        instant it resolves to at `now`."""
        return key_of_creation(message, fire_at, delay_seconds)

    def _problem(self, message: str, fire_at: datetime | None, delay_seconds: float | None,
                 now: datetime) -> str | None:
        """The first rule a creation breaks, in RM-006's order, or None."""
        code = self._creation_problem(message, fire_at, delay_seconds, now)
        if code is None and self._store.count(PENDING) >= self._config.max_pending:
            code = "too_many_pending"
        if code is None and self._created_today(now) >= self._config.max_per_day:
            code = "daily_limit"
        return code

    def _creation_problem(self, message: str, fire_at: datetime | None,
                          delay_seconds: float | None, now: datetime) -> str | None:
        """The first of RM-001 to RM-003 a creation breaks, in RM-006's order, or None."""
        resolved = fire_at_asked(fire_at, delay_seconds, now)
        if resolved is None:
            return "schedule"
        if not message.strip():
            return "message_empty"
        if len(message) > self._config.max_message_chars:
            return "message_too_long"
        delay = (resolved - now).total_seconds()
        if delay < self._config.min_delay_seconds:
            return "delay_too_short"
        if delay > self._config.max_delay_seconds:
            return "delay_too_long"
        return None

    def _created_today(self, now: datetime) -> int:
        # Counted from the store, never from memory: the count survives a restart (RM-005).
        return self._store.count_created_after(now - DAY)

    def cancel(self, reminder_id: str) -> str:
        if self._store.transition(reminder_id, PENDING, status=CANCELLED,
                                  due_at=None) is not None:
            self._reminders_changed()
            return "cancelled"
        current = self._store.get(reminder_id)
        if current is None:
            raise ReminderNotFound(reminder_id)
        if current.status == CANCELLED:
            return "already_cancelled"
        raise ReminderConflict(reminder_id, current.status)

    # -- autonomy and retention ----------------------------------------------------------

    def set_autonomy(self, enabled: bool) -> None:
        """Hold (off) or resume (on) the pending reminders (RM-015); on resuming, the next
        wake-up fires what fell due meanwhile."""
        self._store.set_autonomy(enabled)
        self._reminders_changed()

    def sweep(self) -> int:
        """The retention sweep (RM-016): delete final reminders created more than
        retention_days ago; 0 days turns it off."""
        if self._config.retention_days == 0:
            return 0
        cutoff = self._clock.now() - timedelta(days=self._config.retention_days)
        deleted = self._store.delete_final_before(cutoff)
        self._reminders_changed()
        return deleted

    # -- reads ---------------------------------------------------------------------------

    def get(self, reminder_id: str) -> StoredReminder | None:
        return self._store.get(reminder_id)

    def list_reminders(self, status: str | None = PENDING) -> Sequence[StoredReminder]:
        if status is not None and status not in REMINDER_STATUSES:
            raise ValueError(f"unknown reminder status {status!r}; known:"
                             f" {', '.join(REMINDER_STATUSES)}")
        return self._store.list(status)

    # -- firing --------------------------------------------------------------------------

    def settle(self) -> None:
        # A pass that met a failed store write is followed by another at once (RM-014);
        # a store that keeps failing is left to the next wake-up.
        for _ in range(PASSES_AFTER_A_FAILED_WRITE + 1):
            record_failed = self._record_decided()
            fire_failed = self._fire_due(self._clock.now())
            if not (record_failed or fire_failed):
                return

    def _record_decided(self) -> bool:
        """Record every decided dispatch; True if a store write failed (that outcome
        stays to be recorded)."""
        failed = False
        for reminder_id, delivery in list(self._in_flight.items()):
            if delivery.decided():
                try:
                    self._record(reminder_id, delivery)
                except StoreWriteFailed:
                    failed = True
                else:
                    del self._in_flight[reminder_id]
        return failed

    def _fire_due(self, now: datetime) -> bool:
        """Fire every due reminder: first its move to firing, then its dispatch (RM-007).
        A reminder whose move failed is not dispatched and stays due (RM-014). Returns
        whether a store write failed."""
        failed = False
        for reminder in self._due(now):
            try:
                fired = self._store.transition(reminder.reminder_id, PENDING, status=FIRING,
                                               due_at=None, attempts=reminder.attempts + 1)
            except StoreWriteFailed:
                failed = True
                continue
            if fired is not None:  # else someone else moved it first: not ours to fire
                self._dispatched(fired.reminder_id, self._dispatch(fired))
        return failed

    def _dispatch(self, fired: StoredReminder) -> Delivery:
        """The target's call for a reminder moved to firing, labelled as the reminder's
        (RM-021): the execution it starts says a reminder triggered it, and which."""
        return self._target.dispatch(fired.reminder_id, fired.message, REMINDER_TRIGGER)

    def _due(self, now: datetime) -> Sequence[StoredReminder]:
        """The reminders to fire now: every pending one the clock has reached."""
        return self._store.due(now)

    def _dispatched(self, reminder_id: str, delivery: Delivery) -> None:
        self._in_flight[reminder_id] = delivery

    def _record(self, reminder_id: str, delivery: Delivery) -> None:
        """The dispatch call returned: write what its outcome means (RM-008..RM-010).

        Raises:
            StoreWriteFailed: the write failed; the outcome is still to be recorded.
        """
        now = self._clock.now()
        try:
            delivery.result()
        except DeliveryOutcomeUnknown:
            # The execution may have started: firing again could run it twice.
            self._store.transition(reminder_id, FIRING, status=FIRED, fired_at=now)
        except DeliveryFailed:
            self._attempt_failed(reminder_id, now)
        else:
            self._store.transition(reminder_id, FIRING, status=FIRED, fired_at=now)
        self._reminders_changed()

    def _attempt_failed(self, reminder_id: str, now: datetime) -> None:
        reminder = self._store.get(reminder_id)
        if reminder is None:
            return
        if self._out_of_attempts(reminder.attempts):
            self._store.transition(reminder_id, FIRING, status=FAILED)
        else:
            self._store.transition(
                reminder_id, FIRING, status=PENDING,
                due_at=now + timedelta(seconds=self._config.retry_delay_seconds))

    def _out_of_attempts(self, attempts: int) -> bool:
        """Whether a reminder whose delivery failed for the `attempts`-th time fails
        for good: after max_attempts dispatches in all, not one more."""
        return attempts >= self._config.max_attempts

    def _recover(self) -> None:
        """Boot recovery: reconcile dispatches a previous runtime left in flight."""
        now = self._clock.now()
        for reminder in self._store.list(FIRING):
            self._store.transition(reminder.reminder_id, FIRING, status=FIRED, fired_at=now)

    def _reminders_changed(self) -> None:
        """A hook for runtimes with a scheduler thread: the next due time may have moved."""

    # -- faults --------------------------------------------------------------------------

    def inject_store_fault(self, fault: StoreFault | None) -> None:
        """The optional capability of `jobconform.backends.faults`: our stores take it."""
        self._store.inject_fault(fault)

    def store_fault_struck(self) -> bool:
        return self._store.fault_struck()

    # -- lifetime ------------------------------------------------------------------------

    def crash(self) -> None:
        self._stop()

    def reopen(self) -> StepReminderRuntime:
        return type(self)(self._store.reopen(), self._clock, self._config, self._target)

    def _stop(self) -> None:
        self._in_flight.clear()

    def close(self) -> None:
        self._stop()
        self._store.close()
