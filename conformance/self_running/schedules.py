"""The schedules a self-running runtime fires by itself (spec area self-running, SR-006).

A backend claiming self-running and scheduling opens its scheduler with
`open_scheduling(clock, config, target)`; the harness then creates one-shot jobs and cron
schedules and only lets time pass. What it watches is the target's side: every dispatch
the scheduler makes reaches the harness's `FireRecorder`, which notes the clock's instant
of the call. At each read the harness settles the scheduler and matches the dispatches
made since the last read against each schedule's next fire time: a dispatch must carry
that fire time as scheduled_for and be made inside its window (`reference.self_running.
fire_window`: not before the fire time, at most one poll interval after it), and a fire
whose window has closed with no dispatch is a fire the runtime did not make by itself.

The watch never reads the scheduler's schedules or history on the way: a scheduler that
fires only when someone reads it (a poor man's cron) would be fired by the reads
themselves. Only `check_history`, the checks' own read, looks at the executions, and
requires each one's started_at inside the window of its fire.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from jobconform.backends.protocol import Backend, Clock
from jobconform.backends.scheduling.protocol import SCHEDULING, SchedulingRuntime
from jobconform.conformance.harness import AdapterError
from jobconform.conformance.scheduling.harness import config_for
from jobconform.conformance.self_running.watch import CallHook, FailHook, HarnessWatch
from jobconform.reference import self_running as oracle
from jobconform.reference.scheduling.oracle import next_fire
from jobconform.reference.self_running import Window
from jobconform.spec import Profile

T = TypeVar("T")

FIRE_REQUIREMENT = "SR-006"


@dataclass(frozen=True)
class Dispatch:
    """One dispatch the scheduler made, with the clock's instant of the call."""

    schedule_id: str
    scheduled_for: datetime
    message: str
    at: datetime


class FireRecorder:
    """The scheduler's target: records every dispatch, in the order made. Schedules are
    created without a pre-check, so `pre_check` is never called by a correct scheduler;
    if it is, its answer is the empty one's opposite, a prompt, so the fire still counts."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._made: list[Dispatch] = []

    def pre_check(self, schedule_id: str) -> str:
        return "the schedule has no pre-check; fire as scheduled"

    def dispatch(self, schedule_id: str, scheduled_for: datetime, message: str) -> None:
        with self._lock:
            self._made.append(Dispatch(schedule_id, scheduled_for, message, self._clock.now()))

    def take(self) -> list[Dispatch]:
        """The dispatches made since the last call."""
        with self._lock:
            made, self._made = self._made, []
        return made


@dataclass
class ScheduleModel:
    """What the harness knows of one schedule: its timetable and its next fire time."""

    alias: str
    schedule_id: str
    expression: str | None  # None for a one-shot job
    timezone: str
    next_fire: datetime | None
    fired: list[tuple[datetime, datetime]] = field(default_factory=list)  # (fire, made at)


class ScheduleWatch(HarnessWatch):
    """The schedules of one self-running check, against their fire windows; the scheduler
    is opened on the first schedule. `poll_interval`: the profile's, SR-006's bound."""

    def __init__(self, backend: Backend, profile: Profile, clock: Clock, poll_interval: float,
                 fail: FailHook, call: CallHook, exercised: set[str]) -> None:
        super().__init__(backend, profile, clock, fail, call, exercised)
        self.poll_interval = poll_interval
        self.recorder = FireRecorder(clock)
        self.scheduler: SchedulingRuntime | None = None
        self.schedules: dict[str, ScheduleModel] = {}

    @property
    def claimed(self) -> bool:
        return (SCHEDULING in frozenset(self.backend.capabilities)
                and SCHEDULING in self.profile.areas)

    def _opened(self) -> SchedulingRuntime:
        if self.scheduler is None:
            if not self.claimed:
                raise AdapterError(f"adapter {self.backend.name!r} does not claim"
                                   f" {SCHEDULING} under profile {self.profile.name!r}")
            opener: Any = getattr(self.backend, "open_scheduling", None)
            if not callable(opener):
                raise AdapterError(f"adapter {self.backend.name!r} claims {SCHEDULING} but"
                                   " has no open_scheduling(clock, config, target)")
            config = config_for(self.profile)
            self.scheduler = self._call("open_scheduling",
                                        lambda: opener(self.clock, config, self.recorder))
        return self.scheduler

    # -- commands ------------------------------------------------------------------------

    def create_once(self, alias: str, delay_seconds: float) -> None:
        """A one-shot job `delay_seconds` from now (SC-001); it fires once by itself."""
        scheduler = self._opened()
        self._new(alias)
        fire_at = self.clock.now() + timedelta(seconds=delay_seconds)
        schedule_id = self._call("create_once", lambda: scheduler.create_once(
            f"one-shot {alias}", delay_seconds=delay_seconds))
        self.schedules[alias] = ScheduleModel(alias, str(schedule_id), None, "UTC", fire_at)

    def create_cron(self, alias: str, expression: str, timezone: str = "UTC") -> None:
        """A cron schedule (SC-003); it fires at each fire time by itself."""
        scheduler = self._opened()
        self._new(alias)
        first = next_fire(expression, timezone, self.clock.now())
        schedule_id = self._call("create_cron", lambda: scheduler.create_cron(
            f"cron {alias}", expression, timezone))
        self.schedules[alias] = ScheduleModel(alias, str(schedule_id), expression, timezone,
                                              first)

    def _new(self, alias: str) -> None:
        if alias in self.schedules:
            raise ValueError(f"schedule {alias!r} exists already; use a new alias")

    def settle(self) -> None:
        scheduler = self.scheduler
        if scheduler is not None:
            self._call("settle (scheduler)", scheduler.settle)

    def close(self) -> None:
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            self._call("close (scheduler)", scheduler.close)

    # -- reads ---------------------------------------------------------------------------

    def windows(self) -> list[Window]:
        return [oracle.fire_window(model.next_fire, self.poll_interval)
                for model in self.schedules.values() if model.next_fire is not None]

    def read(self, now: datetime) -> None:
        """Match the dispatches made since the last read against each schedule's next fire
        window, then require every fire whose window has closed to have been made. The
        scheduler has settled."""
        by_id = {model.schedule_id: model for model in self.schedules.values()}
        for made in self.recorder.take():
            model = by_id.get(made.schedule_id)
            if model is None:
                raise self._fail((FIRE_REQUIREMENT,), f"a dispatch at {made.at.isoformat()}",
                                 "dispatches of the schedules created only", made)
            self._check_dispatch(model, made)
        for model in self.schedules.values():
            if model.next_fire is None:
                continue
            window = oracle.fire_window(model.next_fire, self.poll_interval)
            if window.requires(now):
                raise self._fail((FIRE_REQUIREMENT,), f"schedule {model.alias!r} read at"
                                 f" {now.isoformat()}, the window's close: nothing fired by"
                                 " itself", window.describe(), "no dispatch")

    def _check_dispatch(self, model: ScheduleModel, made: Dispatch) -> None:
        due = model.next_fire
        if due is None:
            raise self._fail((FIRE_REQUIREMENT, "SC-002"), f"schedule {model.alias!r}:"
                             f" a dispatch at {made.at.isoformat()} after its one fire",
                             "no further fire of a one-shot job", made)
        window = oracle.fire_window(due, self.poll_interval)
        if made.scheduled_for != due:
            raise self._fail((FIRE_REQUIREMENT,), f"schedule {model.alias!r}: the dispatch"
                             f" made at {made.at.isoformat()}",
                             f"scheduled_for {due.isoformat()}, its next fire time", made)
        if not window.holds(made.at):
            when = "before" if window.forbids(made.at) else "after"
            raise self._fail((FIRE_REQUIREMENT,), f"schedule {model.alias!r}: dispatched"
                             f" at {made.at.isoformat()}, {when} its window",
                             window.describe(), made)
        self._exercised.add(FIRE_REQUIREMENT)
        model.fired.append((due, made.at))
        model.next_fire = (None if model.expression is None
                           else next_fire(model.expression, model.timezone, due))

    def fired(self, alias: str) -> int:
        return len(self._model(alias).fired)

    def check_history(self, alias: str) -> int:
        """The schedule's executions as the runtime shows them: one per fire made, each
        with scheduled_for its fire time and started_at inside that fire's window."""
        model = self._model(alias)
        scheduler = self._opened()
        executions = list(self._call("history", lambda: scheduler.history(model.schedule_id)))
        shown = [(getattr(e, "scheduled_for", None), getattr(e, "started_at", None))
                 for e in executions]
        if len(shown) != len(model.fired):
            raise self._fail((FIRE_REQUIREMENT, "SC-015"), f"schedule {model.alias!r}'s"
                             f" history", f"{len(model.fired)} executions, one per fire",
                             shown)
        for (due, _), (scheduled_for, started_at) in zip(model.fired, shown, strict=True):
            window = oracle.fire_window(due, self.poll_interval)
            if (scheduled_for != due or not isinstance(started_at, datetime)
                    or not window.holds(started_at)):
                raise self._fail((FIRE_REQUIREMENT,), f"schedule {model.alias!r}'s"
                                 f" execution of {due.isoformat()}",
                                 f"started_at in {window.describe()}",
                                 (scheduled_for, started_at))
        return len(shown)

    def _model(self, alias: str) -> ScheduleModel:
        try:
            return self.schedules[alias]
        except KeyError:
            raise ValueError(f"no schedule {alias!r} was created; create it first") from None
