"""The reminders oracle: seed 002 §10.14's five-state machine as a pure model.

Every method takes the current time from its caller and changes only this model, so the
same commands at the same instants give the same states. Deliveries are the dispatches
the runtime makes when a reminder is due; the harness decides how each ends (it lands,
it fails cleanly, its outcome is unknown) and the model records that outcome at the next
`settle`, as a runtime records it once the dispatch call returns.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from jobconform.reference.numbers import is_finite_number, is_whole_number

DAY = timedelta(days=1)
# How long a creation's idempotency key, given (RM-017) or derived (RM-018), answers for
# its reminder: seed 002 §10.10's window, the same key within 24 hours.
KEY_WINDOW = timedelta(hours=24)
# What a creation answers when its key finds a live reminder: f"{REPLAYED}:{alias}".
REPLAYED = "replayed"


class ReminderStatus(StrEnum):
    PENDING = "pending"
    FIRING = "firing"
    FIRED = "fired"
    CANCELLED = "cancelled"
    FAILED = "failed"


FINAL = frozenset({ReminderStatus.FIRED, ReminderStatus.CANCELLED, ReminderStatus.FAILED})


class DeliveryOutcome(StrEnum):
    """How one dispatch ends, as the harness scripts it."""

    LANDS = "lands"  # the execution started
    FAILS = "fails"  # a clean failure before the execution started
    UNKNOWN = "unknown"  # a timeout: the execution may or may not have started


# Rejection codes, in the order they are checked (RM-006), with the requirement of each.
REJECTIONS = {
    "schedule": "RM-001",
    "message_empty": "RM-003",
    "message_too_long": "RM-003",
    "delay_too_short": "RM-002",
    "delay_too_long": "RM-002",
    "too_many_pending": "RM-004",
    "daily_limit": "RM-005",
    "rate_limited": "RM-020",
}

# Cancel's answers (RM-011); a conflict is answered as f"{CONFLICT}:{status}".
CANCELLED_ANSWER = "cancelled"
ALREADY_CANCELLED = "already_cancelled"
NOT_FOUND = "not_found"
CONFLICT = "conflict"
CREATED = "created"


def rejected(code: str) -> str:
    return f"rejected:{code}"


@dataclass(frozen=True)
class ReminderConfig:
    """The area's parameters (profile defaults, or a check's own values).

    Raises:
        ValueError: a value out of range; the message names it and the range.
    """

    min_delay_seconds: float = 60.0
    max_delay_seconds: float = 30 * 86_400.0
    max_message_chars: int = 4000
    max_pending: int = 25
    max_per_day: int = 100
    max_attempts: int = 3
    retry_delay_seconds: float = 60.0
    retention_days: float = 90.0  # 0 turns the retention sweep off (RM-016)
    # The flood guard on creation calls (RM-020): at most this many in any window of
    # create_window_seconds; 0 turns it off. The seed leaves the limit to the deployment.
    create_rate_limit: int = 0
    create_window_seconds: float = 60.0

    def __post_init__(self) -> None:
        for name in ("max_message_chars", "max_pending", "max_per_day", "max_attempts"):
            value = getattr(self, name)
            if not is_whole_number(value) or value < 1:
                raise ValueError(f"reminder parameter {name} must be a whole number of at"
                                 f" least 1, not {value!r}")
        limit = self.create_rate_limit
        if not is_whole_number(limit) or limit < 0:
            raise ValueError(f"reminder parameter create_rate_limit must be a whole number of"
                             f" at least 0 (0 turns the guard off), not {limit!r}")
        for name in ("min_delay_seconds", "max_delay_seconds", "retry_delay_seconds",
                     "create_window_seconds"):
            value = getattr(self, name)
            if not is_finite_number(value) or value <= 0:
                raise ValueError(f"reminder parameter {name} must be a finite number of"
                                 f" seconds above 0, not {value!r}")
        days = self.retention_days
        if not is_finite_number(days) or not (days == 0 or days >= 1):
            # Under a day the sweep would delete reminders the daily cap still counts.
            raise ValueError(f"reminder parameter retention_days must be 0 (off) or a finite"
                             f" number of days of at least 1, not {days!r}")
        if self.min_delay_seconds > self.max_delay_seconds:
            raise ValueError(f"min_delay_seconds ({self.min_delay_seconds:g}) exceeds"
                             f" max_delay_seconds ({self.max_delay_seconds:g})")


def resolve_fire_at(fire_at: datetime | None, delay_seconds: float | None,
                    now: datetime) -> datetime | None:
    """The instant a creation asks for, or None when the schedule itself is invalid."""
    if (fire_at is None) == (delay_seconds is None):
        return None
    if fire_at is not None:
        # Every instant a reminder shows is UTC, whatever offset it was given in (RM-001).
        return fire_at.astimezone(UTC) if fire_at.utcoffset() is not None else None
    assert delay_seconds is not None
    if isinstance(delay_seconds, bool) or not math.isfinite(delay_seconds):
        return None
    return (now + timedelta(seconds=delay_seconds)).astimezone(UTC)


def schedule_as_given(fire_at: datetime | None, delay_seconds: float | None) -> str | None:
    """The schedule as the creation wrote it (RM-018): `delay_seconds=N` for a delay (the
    number, so 60 and 60.0 are one), `fire_at=<ISO 8601>` for a fire time in the offset it
    was given in. None when it gives not exactly one of them."""
    if (fire_at is None) == (delay_seconds is None):
        return None
    if fire_at is not None:
        return f"fire_at={fire_at.isoformat()}"
    number = (float(delay_seconds) if isinstance(delay_seconds, int | float)
              and not isinstance(delay_seconds, bool) else delay_seconds)
    return f"delay_seconds={number!r}"


def derived_key(message: str, fire_at: datetime | None,
                delay_seconds: float | None) -> str | None:
    """The key a creation without one is de-duplicated under (RM-018): a digest of the
    message and the schedule as given, never of the instant it resolves to, or a retry of
    a delay would resolve to another instant each time and never meet its first attempt.
    The agent is the runtime's own. None for a schedule that is not exactly one form: no
    reminder held was created with one."""
    spelled = schedule_as_given(fire_at, delay_seconds)
    if spelled is None:
        return None
    text = json.dumps([message, spelled], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def creation_problem(config: ReminderConfig, message: str, fire_at: datetime | None,
                     delay_seconds: float | None, now: datetime) -> str | None:
    """The first rule a creation breaks that needs no count of held reminders (RM-001 to
    RM-003, in RM-006's order), or None."""
    resolved = resolve_fire_at(fire_at, delay_seconds, now)
    if resolved is None:
        return "schedule"
    if not message.strip():
        return "message_empty"
    if len(message) > config.max_message_chars:
        return "message_too_long"
    delay = (resolved - now).total_seconds()
    if delay < config.min_delay_seconds:
        return "delay_too_short"
    if delay > config.max_delay_seconds:
        return "delay_too_long"
    return None


@dataclass(frozen=True)
class ReminderState:
    """One reminder as the spec fixes it."""

    message: str
    status: ReminderStatus
    created_at: datetime
    fire_at: datetime
    due_at: datetime | None  # the next dispatch's instant, while pending
    attempts: int = 0
    fired_at: datetime | None = None
    idempotency_key: str | None = None  # the key it was created with (RM-017)
    derived_key: str | None = None  # created without a key: the key derived (RM-018)


def illegal_combination(status: str, due_at: object, attempts: object,
                        fired_at: object) -> str | None:
    """What makes a reminder's fields impossible together (RM-014), or None.

    Only a pending reminder has a next dispatch (due_at); only a fired one has fired_at;
    a reminder that was ever dispatched counts at least one attempt. A write torn in two
    by a fault leaves such a combination behind: a pending reminder without a due_at
    never fires again.
    """
    if status == ReminderStatus.PENDING and due_at is None:
        return "pending without a due_at: it would never fire"
    if status != ReminderStatus.PENDING and due_at is not None:
        return f"{status} with a due_at: only a pending reminder has a next dispatch"
    if (status == ReminderStatus.FIRED) != (fired_at is not None):
        return (f"{status} {'without' if fired_at is None else 'with'} a fired_at: only a"
                " fired reminder has one")
    dispatched = status in (ReminderStatus.FIRING, ReminderStatus.FIRED, ReminderStatus.FAILED)
    if dispatched and (not isinstance(attempts, int) or attempts < 1):
        return f"{status} with {attempts!r} attempts: a dispatched reminder counts one at least"
    return None


@dataclass
class ReminderOracle:
    config: ReminderConfig
    reminders: dict[str, ReminderState] = field(default_factory=dict)  # alias, creation order
    # Dispatches in flight: alias -> the harness's decision, None while undecided.
    deliveries: dict[str, DeliveryOutcome | None] = field(default_factory=dict)
    dispatches: dict[str, int] = field(default_factory=dict)  # alias -> dispatches made
    autonomy: bool = True  # the agent's autonomy switch; off holds pending reminders (RM-015)
    # When the flood guard let each creation call through (RM-020); the runtime's memory,
    # so a restart empties it.
    guarded_calls: list[datetime] = field(default_factory=list)

    def create(self, alias: str, message: str, fire_at: datetime | None,
               delay_seconds: float | None, now: datetime,
               idempotency_key: str | None = None) -> str:
        """Create a reminder, or answer f"{REPLAYED}:{alias}" of the live reminder the key
        names (RM-017), or that a creation without a key derives (RM-018), or
        f"rejected:{code}"."""
        if not self.let_through(now):
            return rejected("rate_limited")
        derived = (None if idempotency_key is not None
                   else derived_key(message, fire_at, delay_seconds))
        live = (self.keyed(idempotency_key, now) if idempotency_key is not None
                else self.derived(derived, now))
        if live is not None:
            return f"{REPLAYED}:{live}"
        problem = creation_problem(self.config, message, fire_at, delay_seconds, now)
        if problem is None and self._count(ReminderStatus.PENDING) >= self.config.max_pending:
            problem = "too_many_pending"
        if problem is None and sum(1 for r in self.reminders.values()
                                   if r.created_at > now - DAY) >= self.config.max_per_day:
            problem = "daily_limit"
        if problem is not None:
            return rejected(problem)
        resolved = resolve_fire_at(fire_at, delay_seconds, now)
        assert resolved is not None
        self.reminders[alias] = ReminderState(message, ReminderStatus.PENDING, now, resolved,
                                              resolved, idempotency_key=idempotency_key,
                                              derived_key=derived)
        self.dispatches[alias] = 0
        return CREATED

    def let_through(self, now: datetime) -> bool:
        """The flood guard (RM-020), before every other rule of a creation: False when
        create_rate_limit calls were let through in the window ending at `now`; a call
        let through counts, whatever the creation then answers."""
        limit = self.config.create_rate_limit
        if limit == 0:
            return True
        since = now - timedelta(seconds=self.config.create_window_seconds)
        self.guarded_calls = [at for at in self.guarded_calls if at > since]
        if len(self.guarded_calls) >= limit:
            return False
        self.guarded_calls.append(now)
        return True

    def keyed(self, idempotency_key: str | None, now: datetime) -> str | None:
        """The reminder a creation with this key answers for (RM-017): one created with the
        key less than KEY_WINDOW ago and not final. None for no key."""
        if idempotency_key is None:
            return None
        return self._live(lambda r: r.idempotency_key == idempotency_key, now)

    def derived(self, key: str | None, now: datetime) -> str | None:
        """The reminder a creation without a key answers for (RM-018): one created without
        a key, whose derived key is `key`, less than KEY_WINDOW ago and not final. A key
        given and a key derived never answer each other. None for no key."""
        if key is None:
            return None
        return self._live(lambda r: r.idempotency_key is None and r.derived_key == key, now)

    def _live(self, matches: Callable[[ReminderState], bool], now: datetime) -> str | None:
        return next((alias for alias, r in reversed(self.reminders.items())
                     if matches(r) and r.status not in FINAL
                     and now - r.created_at < KEY_WINDOW), None)

    def cancel(self, alias: str) -> str:
        reminder = self.reminders.get(alias)
        if reminder is None:
            return NOT_FOUND
        if reminder.status is ReminderStatus.CANCELLED:
            return ALREADY_CANCELLED
        if reminder.status is not ReminderStatus.PENDING:
            return f"{CONFLICT}:{reminder.status.value}"
        self.reminders[alias] = replace(reminder, status=ReminderStatus.CANCELLED, due_at=None)
        return CANCELLED_ANSWER

    def decide(self, alias: str, outcome: DeliveryOutcome) -> None:
        """The harness decides the in-flight dispatch of `alias`, if it has one undecided."""
        if alias in self.deliveries and self.deliveries[alias] is None:
            self.deliveries[alias] = outcome

    def settle(self, now: datetime, crash_at: int | None = None) -> list[str]:
        """Record every decided dispatch (RM-008..RM-010), then dispatch every due pending
        reminder (RM-007), earliest due first.

        Each move is one store write (RM-014), and a reminder's dispatch follows its move
        to firing. With `crash_at`, the process dies at that write (counted from 1): it
        and everything after it never happen, so the pass stops there.

        Returns:
            The aliases written, in write order, up to the crash.
        """
        written: list[str] = []

        def write(alias: str) -> bool:
            if crash_at is not None and len(written) + 1 >= crash_at:
                return False
            written.append(alias)
            return True

        for alias, outcome in list(self.deliveries.items()):
            if outcome is not None:
                if not write(alias):
                    return written
                del self.deliveries[alias]
                self._record(alias, outcome, now)
        if not self.autonomy:
            return written  # held: nothing is dispatched until autonomy is enabled again (RM-015)
        due = [alias for alias, r in self.reminders.items()
               if r.status is ReminderStatus.PENDING and r.due_at is not None and r.due_at <= now]
        for alias in sorted(due, key=lambda a: self.reminders[a].due_at or now):
            if not write(alias):
                return written
            reminder = self.reminders[alias]
            self.reminders[alias] = replace(reminder, status=ReminderStatus.FIRING, due_at=None,
                                            attempts=reminder.attempts + 1)
            self.deliveries[alias] = None
            self.dispatches[alias] += 1
        return written

    def _record(self, alias: str, outcome: DeliveryOutcome, now: datetime) -> None:
        reminder = self.reminders[alias]
        if outcome is not DeliveryOutcome.FAILS:
            self.reminders[alias] = replace(reminder, status=ReminderStatus.FIRED, fired_at=now)
        elif reminder.attempts >= self.config.max_attempts:
            self.reminders[alias] = replace(reminder, status=ReminderStatus.FAILED)
        else:
            due = now + timedelta(seconds=self.config.retry_delay_seconds)
            self.reminders[alias] = replace(reminder, status=ReminderStatus.PENDING, due_at=due)

    def restart(self, now: datetime) -> None:
        """The runtime crashed and was reopened over its store at `now` (RM-012):
        dispatches in flight are lost, and the reminders they were for are reconciled as
        dispatched."""
        self.deliveries.clear()
        self.guarded_calls.clear()
        for alias, reminder in self.reminders.items():
            if reminder.status is ReminderStatus.FIRING:
                self.reminders[alias] = replace(reminder, status=ReminderStatus.FIRED,
                                                fired_at=now)

    def set_autonomy(self, enabled: bool) -> None:
        """Disable (hold) or enable (resume) the agent's autonomy (RM-015); the next
        `settle` dispatches what fell due meanwhile."""
        self.autonomy = enabled

    def sweep(self, now: datetime) -> int:
        """The retention sweep (RM-016): delete the final reminders created before the
        window; answer how many. Dispatch counts of deleted reminders are kept."""
        if self.config.retention_days == 0:
            return 0
        cutoff = now - timedelta(days=self.config.retention_days)
        old = [alias for alias, r in self.reminders.items()
               if r.status in FINAL and r.created_at < cutoff]
        for alias in old:
            del self.reminders[alias]
        return len(old)

    def list(self, status: ReminderStatus | None = None) -> list[str]:
        return [alias for alias, r in self.reminders.items()
                if status is None or r.status is status]

    def _count(self, status: ReminderStatus) -> int:
        return sum(1 for r in self.reminders.values() if r.status is status)
