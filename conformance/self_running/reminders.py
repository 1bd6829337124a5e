"""Reminders delivered by the runtime itself (spec area self-running, SR-008).

In the reminders area the harness settles the runtime after every command, and the
protocol's `settle` is the scheduler's wake-up: a step runtime fires there, so a runtime
that fires only when it is told to passes. Here a backend claiming self-running and
reminders opens its reminders with `open_reminders(clock, config, target)`; the harness
creates reminders and only lets time pass. What it watches is the target's side: every
dispatch reaches the harness's `DeliveryRecorder`, which notes the clock's instant of the
call and ends it at once, as the check planned (it lands, or its first dispatches fail
cleanly and come back `retry_delay_seconds` later, RM-009). The reminders oracle
(`ReminderOracle`) says which reminders are due at each read; the harness reads one tick
before each due time (no dispatch yet: one made there is early) and at it (the dispatch
made: a runtime that does not fire by itself has made none).

The watch reads nothing of the reminders while time passes: a runtime that brings its
reminders up to date only when someone lists them would be fired by the reads. Only
`check`, the checks' own read, compares the runtime's record of a reminder with the
oracle's, once its dispatches were matched.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from jobconform.backends.protocol import REMINDERS, Backend, Clock
from jobconform.backends.reminders.protocol import Delivery, ReminderRuntime
from jobconform.conformance.aim import TICK_SECONDS
from jobconform.conformance.reminders.harness import config_for, expected_record, freeze
from jobconform.conformance.self_running.watch import (
    CallHook,
    FailHook,
    HarnessWatch,
    service_watched,
)
from jobconform.reference.reminders.oracle import (
    CREATED,
    DeliveryOutcome,
    ReminderOracle,
    ReminderStatus,
)
from jobconform.reference.self_running import Window, delivery_window
from jobconform.spec import Profile, Registry

DELIVERY_REQUIREMENT = "SR-008"
AREA = "self-running"
TICK = timedelta(seconds=TICK_SECONDS)


def reconcile_interval_of(profile: Profile) -> float:
    """The profile's `reminder_reconcile_seconds` (SR-008).

    Raises:
        SpecError: the profile sets none.
    """
    return float(str(profile.parameter(AREA, "reminder_reconcile_seconds")))


def watches_reminders(backend: Backend, profile: Profile, registry: Registry | None) -> bool:
    """Whether SR-008 applies: the backend claims reminders, the profile has the area and
    the requirement (or, without a registry, the reconcile parameter)."""
    return service_watched(backend, profile, registry, REMINDERS, REMINDERS,
                           DELIVERY_REQUIREMENT, reconcile_interval_of)


@dataclass(frozen=True)
class Made:
    """One dispatch the runtime made, with the clock's instant of the call."""

    reminder_id: str
    outcome: DeliveryOutcome
    at: datetime


class DeliveryRecorder:
    """The reminders' target: records every dispatch, and ends it at once, failing
    cleanly the first dispatches of a reminder the check planned to fail."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._made: list[Made] = []
        self._failures: dict[str, int] = {}

    def plan(self, reminder_id: str, failures: int) -> None:
        with self._lock:
            self._failures[reminder_id] = failures

    def dispatch(self, reminder_id: str, message: str,
                 triggered_by: str | None = None) -> Delivery:
        delivery = Delivery(reminder_id, message, triggered_by)
        with self._lock:
            left = self._failures.get(reminder_id, 0)
            self._failures[reminder_id] = max(left - 1, 0)
            outcome = DeliveryOutcome.FAILS if left else DeliveryOutcome.LANDS
            self._made.append(Made(reminder_id, outcome, self._clock.now()))
        delivery.decide(outcome)
        return delivery

    def take(self) -> list[Made]:
        """The dispatches made since the last call."""
        with self._lock:
            made, self._made = self._made, []
        return made


class ReminderWatch(HarnessWatch):
    """The reminders of one self-running check, against their due times; they are opened
    on the first creation. `claimed`: whether SR-008 applies (`watches_reminders`)."""

    def __init__(self, backend: Backend, profile: Profile, clock: Clock, claimed: bool,
                 fail: FailHook, call: CallHook, exercised: set[str]) -> None:
        super().__init__(backend, profile, clock, fail, call, exercised)
        self.claimed = claimed
        self.recorder = DeliveryRecorder(clock)
        self.runtime: ReminderRuntime | None = None
        self.oracle: ReminderOracle | None = None
        self.ids: dict[str, str] = {}  # alias -> the runtime's id
        self._aliases: dict[str, str] = {}
        self._fails_left: dict[str, int] = {}

    def _opened(self) -> tuple[ReminderRuntime, ReminderOracle]:
        if self.runtime is None or self.oracle is None:
            if not self.claimed:
                raise ValueError(f"backend {self.backend.name!r} does not claim {REMINDERS}"
                                 f" under profile {self.profile.name!r}: SR-008 cannot be"
                                 " checked on it")
            opener = self._opener("open_reminders", REMINDERS, "clock, config, target")
            config = config_for(self.profile)
            reconcile = reconcile_interval_of(self.profile)
            if min(config.min_delay_seconds, config.retry_delay_seconds) < reconcile:
                raise ValueError(
                    f"profile {self.profile.name!r}: SR-008 bounds a delivery to its due"
                    " time only for reminders due at least one reconcile interval"
                    f" ({reconcile:g} s) ahead; min_delay_seconds and retry_delay_seconds"
                    " must not be shorter")
            self.runtime = self._call("open_reminders",
                                      lambda: opener(self.clock, config, self.recorder))
            self.oracle = ReminderOracle(config)
        return self.runtime, self.oracle

    # -- the command ---------------------------------------------------------------------

    def create(self, alias: str, delay_seconds: float, failures: int = 0) -> None:
        """A reminder `delay_seconds` from now whose first `failures` dispatches fail
        cleanly; it must be dispatched by itself at each due time (SR-008)."""
        runtime, oracle = self._opened()
        if alias in self.ids:
            raise ValueError(f"reminder {alias!r} exists already; use a new alias")
        message = f"reminder {alias}"
        answer = oracle.create(alias, message, None, delay_seconds, self.clock.now())
        if answer != CREATED:
            raise ValueError(f"reminder {alias!r} in {delay_seconds:g} s is refused under"
                             f" profile {self.profile.name!r} ({answer}): create one the"
                             " reminders' rules accept")
        reminder_id = str(self._call("create (reminder)", partial(
            runtime.create, message, delay_seconds=delay_seconds)))
        self.ids[alias], self._aliases[reminder_id] = reminder_id, alias
        self._fails_left[alias] = failures
        self.recorder.plan(reminder_id, failures)

    # -- time and reads ------------------------------------------------------------------

    def _due(self) -> dict[str, datetime]:
        if self.oracle is None:
            return {}
        return {alias: reminder.due_at for alias, reminder in self.oracle.reminders.items()
                if reminder.status is ReminderStatus.PENDING and reminder.due_at is not None}

    def windows(self) -> list[Window]:
        return [delivery_window(due) for due in self._due().values()]

    def read_points(self) -> list[datetime]:
        """One tick before each pending reminder's due time and the due time itself."""
        return [at for due in self._due().values() for at in (due - TICK, due)]

    def settle(self) -> None:
        runtime = self.runtime
        if runtime is not None:
            # The target ends each dispatch inside the call that made it; a step runtime
            # (memory, the reference child) records an ended dispatch at its next pass, so
            # a second settle records what the first one's dispatches returned. Threads
            # have recorded it already, and the second settle only finds them quiet.
            self._call("settle (reminders)", runtime.settle)
            self._call("settle (reminders)", runtime.settle)

    def read(self, now: datetime) -> None:
        """Match the dispatches made since the last read against the reminders the oracle
        fires by `now`, each planned outcome recorded at once. The runtime has settled."""
        oracle = self.oracle
        if oracle is None:
            return
        made = self.recorder.take()
        due = self._due()
        before = dict(oracle.dispatches)
        oracle.settle(now)
        fired = [alias for alias, count in oracle.dispatches.items()
                 if count > before.get(alias, 0)]
        for alias in fired:
            left = self._fails_left[alias]
            self._fails_left[alias] = max(left - 1, 0)
            oracle.decide(alias, DeliveryOutcome.FAILS if left else DeliveryOutcome.LANDS)
        oracle.settle(now)  # the outcomes, recorded as each dispatch returned
        counted = Counter(self._aliases.get(m.reminder_id, m.reminder_id) for m in made)
        for dispatch in made:
            named = self._aliases.get(dispatch.reminder_id)
            if named is None:
                raise self._fail((DELIVERY_REQUIREMENT,), f"a dispatch at"
                                 f" {dispatch.at.isoformat()}",
                                 "dispatches of the reminders created only", dispatch)
            alias = named
            if alias not in fired or counted[alias] > 1:
                at = due.get(alias)
                when = (f"before its due time {at.isoformat()}"
                        if at is not None and dispatch.at < at else "with no dispatch due")
                raise self._fail((DELIVERY_REQUIREMENT,), f"reminder {alias!r}: dispatched at"
                                 f" {dispatch.at.isoformat()}, {when}",
                                 {"due_at": at, "dispatches": oracle.dispatches[alias]},
                                 {"dispatches": before.get(alias, 0) + counted[alias]})
            self._exercised.add(DELIVERY_REQUIREMENT)
        for alias in fired:
            if counted[alias] == 0:
                raise self._fail((DELIVERY_REQUIREMENT,), f"reminder {alias!r} read at"
                                 f" {now.isoformat()}, its due time"
                                 f" {due[alias].isoformat()}: not dispatched by itself",
                                 f"{delivery_window(due[alias]).action} at"
                                 f" {due[alias].isoformat()}", "no dispatch")

    def delivered(self, alias: str) -> int:
        """How many dispatches of the reminder were made (and matched)."""
        if self.oracle is None or alias not in self.oracle.dispatches:
            raise ValueError(f"no reminder {alias!r} was created; create it first")
        return self.oracle.dispatches[alias]

    def check(self, alias: str) -> str:
        """The runtime's record of the reminder against the oracle's; its status."""
        runtime, oracle = self._opened()
        self.delivered(alias)
        view = self._call("get (reminder)", partial(runtime.get, self.ids[alias]))
        wanted = expected_record(oracle.reminders[alias])
        actual = None if view is None else freeze(view)
        if actual != wanted:
            raise self._fail((DELIVERY_REQUIREMENT,), f"reminder {alias!r} read at"
                             f" {self.clock.now().isoformat()}", wanted, actual)
        return str(wanted.status)

    def close(self) -> None:
        runtime, self.runtime = self.runtime, None
        if runtime is not None:
            self._call("close (reminders)", runtime.close)
