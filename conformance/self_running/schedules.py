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

A backend that also claims `scheduling-ends` learns by itself how what it dispatched
ended (SR-009): the harness calls `start_end_polls(poll interval)` at the opening and gives
a schedule an `EndPlan` (each execution runs so long after its dispatch, then ends so).
The target, which plays the store the executions' ends are written to, answers
`execution_end` with the end from that instant on, and notes the clock's instant of the
first answer: that is when the scheduler learned it, and it must lie in the end's window
(`reference.self_running.end_window`: at most one poll interval after the end). At the
close of the window, the answer is required before anything else is read, so a scheduler
that asks only when its history is read is not taken for one that asked by itself. The
history is then read (and only while no fire is due undispatched, so the read cannot stand
in for a fire): the execution must show the outcome and cost the target answered, which an
end inferred before the execution ended (a failure on a dropped call) is not.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from jobconform.backends.protocol import SCHEDULING_ENDS, Backend, Clock
from jobconform.backends.scheduling.protocol import (
    SCHEDULING,
    ExecutionEnd,
    SchedulingRuntime,
)
from jobconform.conformance.harness import AdapterError
from jobconform.conformance.scheduling.harness import config_for
from jobconform.conformance.self_running.watch import (
    CallHook,
    FailHook,
    HarnessWatch,
    service_watched,
)
from jobconform.reference import self_running as oracle
from jobconform.reference.scheduling.oracle import next_fire
from jobconform.reference.self_running import Window
from jobconform.spec import Profile, Registry

T = TypeVar("T")

FIRE_REQUIREMENT = "SR-006"
END_REQUIREMENT = "SR-009"
# What each check's executions cost when they end as planned, unless a plan says otherwise.
END_COST = 0.25


@dataclass(frozen=True)
class EndPlan:
    """How every execution of a schedule ends: `run_seconds` after its dispatch, with
    `outcome` (succeeded, failed or cancelled) and `cost`."""

    run_seconds: float
    outcome: str
    cost: float | None = END_COST


@dataclass(frozen=True)
class Answer:
    """The target's first answer of an execution's end: when the scheduler learned it."""

    schedule_id: str
    scheduled_for: datetime
    at: datetime


def watches_ends(backend: Backend, profile: Profile, registry: Registry | None) -> bool:
    """Whether SR-009 applies: the backend claims scheduling and scheduling-ends (its
    self-running claim is the harness's), and the profile has scheduling and SR-009."""
    if SCHEDULING not in frozenset(backend.capabilities):
        return False
    return service_watched(backend, profile, registry, SCHEDULING_ENDS, SCHEDULING,
                           END_REQUIREMENT, _poll_interval)


def _poll_interval(profile: Profile) -> float:
    return float(profile.parameter("self-running", "poll_interval_seconds"))  # type: ignore[arg-type]


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
        # SR-009: each schedule's plan, when each fire was dispatched, and the answers.
        self._plans: dict[str, EndPlan] = {}
        self._dispatched: dict[tuple[str, datetime], datetime] = {}
        self._answered: set[tuple[str, datetime]] = set()
        self._answers: list[Answer] = []

    def plan(self, schedule_id: str, plan: EndPlan) -> None:
        """How the schedule's executions end. Set as soon as its id is known, at the
        instant of its creation: a fire dispatched before is looked up when asked about."""
        with self._lock:
            self._plans[schedule_id] = plan

    def pre_check(self, schedule_id: str) -> str:
        return "the schedule has no pre-check; fire as scheduled"

    def dispatch(self, schedule_id: str, scheduled_for: datetime, message: str) -> None:
        with self._lock:
            now = self._clock.now()
            self._made.append(Dispatch(schedule_id, scheduled_for, message, now))
            self._dispatched.setdefault((schedule_id, scheduled_for), now)

    def ended_at(self, schedule_id: str, scheduled_for: datetime) -> datetime | None:
        """When the execution dispatched for that fire ends by its plan, or None."""
        with self._lock:
            return self._ends_at(schedule_id, scheduled_for)

    def _ends_at(self, schedule_id: str, scheduled_for: datetime) -> datetime | None:
        plan = self._plans.get(schedule_id)
        made = self._dispatched.get((schedule_id, scheduled_for))
        if plan is None or made is None:
            return None
        return made + timedelta(seconds=plan.run_seconds)

    def execution_end(self, schedule_id: str, scheduled_for: datetime) -> ExecutionEnd | None:
        """The store the execution's end is written to, as the scheduler polls it: the
        plan's end once the clock has reached it, else None (still running)."""
        with self._lock:
            ends_at = self._ends_at(schedule_id, scheduled_for)
            now = self._clock.now()
            if ends_at is None or now < ends_at:
                return None
            key = (schedule_id, scheduled_for)
            if key not in self._answered:
                self._answered.add(key)
                self._answers.append(Answer(schedule_id, scheduled_for, now))
            plan = self._plans[schedule_id]
            return ExecutionEnd(plan.outcome, plan.cost)

    def take_answers(self) -> list[Answer]:
        """The first answers given since the last call."""
        with self._lock:
            answers, self._answers = self._answers, []
        return answers

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
    plan: EndPlan | None = None  # how its executions end (SR-009), if they do
    ends: list[AwaitedEnd] = field(default_factory=list)


@dataclass
class AwaitedEnd:
    """One dispatched execution whose end the scheduler must learn by itself (SR-009)."""

    scheduled_for: datetime
    window: Window
    learned_at: datetime | None = None
    checked: bool = False  # its history shows the end the target answered


class ScheduleWatch(HarnessWatch):
    """The schedules of one self-running check, against their fire windows; the scheduler
    is opened on the first schedule. `poll_interval`: the profile's, SR-006's bound."""

    def __init__(self, backend: Backend, profile: Profile, clock: Clock, poll_interval: float,
                 fail: FailHook, call: CallHook, exercised: set[str],
                 watches_ends: bool = False) -> None:
        super().__init__(backend, profile, clock, fail, call, exercised)
        self.poll_interval = poll_interval
        self.watches_ends = watches_ends  # SR-009: the scheduler polls for ends itself
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
            opener = self._opener("open_scheduling", SCHEDULING, "clock, config, target")
            config = config_for(self.profile)
            scheduler: Any = self._call("open_scheduling",
                                        lambda: opener(self.clock, config, self.recorder))
            self.scheduler = scheduler
            if self.watches_ends:
                # Its polls for ends count their boundaries from the opening (SR-009).
                interval = self.poll_interval
                self._call("start_end_polls", lambda: scheduler.start_end_polls(interval))
        return self.scheduler

    # -- commands ------------------------------------------------------------------------

    def create_once(self, alias: str, delay_seconds: float, ends: EndPlan | None = None) -> None:
        """A one-shot job `delay_seconds` from now (SC-001); it fires once by itself, and
        with `ends` its execution ends so, which the scheduler must learn (SR-009)."""
        self._new(alias, ends)
        scheduler = self._opened()
        fire_at = self.clock.now() + timedelta(seconds=delay_seconds)
        schedule_id = self._call("create_once", lambda: scheduler.create_once(
            f"one-shot {alias}", delay_seconds=delay_seconds))
        self._add(ScheduleModel(alias, str(schedule_id), None, "UTC", fire_at, plan=ends))

    def create_cron(self, alias: str, expression: str, timezone: str = "UTC",
                    ends: EndPlan | None = None) -> None:
        """A cron schedule (SC-003); it fires at each fire time by itself, and with `ends`
        each execution ends so (SR-009)."""
        self._new(alias, ends)
        scheduler = self._opened()
        first = next_fire(expression, timezone, self.clock.now())
        schedule_id = self._call("create_cron", lambda: scheduler.create_cron(
            f"cron {alias}", expression, timezone))
        self._add(ScheduleModel(alias, str(schedule_id), expression, timezone, first,
                                plan=ends))

    def _new(self, alias: str, ends: EndPlan | None) -> None:
        if alias in self.schedules:
            raise ValueError(f"schedule {alias!r} exists already; use a new alias")
        if ends is not None and not self.watches_ends:
            raise ValueError(f"backend {self.backend.name!r} does not learn ends by itself"
                             " here (SR-009 is not claimed): create schedules without ends")
        if ends is not None and not (ends.run_seconds >= 0):
            raise ValueError(f"an execution runs 0 seconds or more, not {ends.run_seconds}")

    def _add(self, model: ScheduleModel) -> None:
        self.schedules[model.alias] = model
        if model.plan is not None:
            self.recorder.plan(model.schedule_id, model.plan)

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
        fires = [oracle.fire_window(model.next_fire, self.poll_interval)
                 for model in self.schedules.values() if model.next_fire is not None]
        return fires + [awaited.window for model in self.schedules.values()
                        for awaited in model.ends if not awaited.checked]

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
        if self.watches_ends:
            self._read_ends(now, by_id)

    def _read_ends(self, now: datetime, by_id: dict[str, ScheduleModel]) -> None:
        """SR-009: each first answer of an end must lie in its window; an end whose window
        has closed must have been answered, before anything of the scheduler is read;
        then, while no fire is due undispatched, the history must show each end learned."""
        for answer in self.recorder.take_answers():
            model = by_id.get(answer.schedule_id)
            awaited = None if model is None else next(
                (a for a in model.ends if a.scheduled_for == answer.scheduled_for
                 and a.learned_at is None), None)
            if model is None or awaited is None:
                continue  # a fire the watch did not match: SR-006's verdict, not this one
            if not awaited.window.holds(answer.at):
                raise self._fail((END_REQUIREMENT,), f"schedule {model.alias!r}: the end of"
                                 f" its execution of {answer.scheduled_for.isoformat()}"
                                 f" learned at {answer.at.isoformat()}, after its window",
                                 awaited.window.describe(), answer)
            awaited.learned_at = answer.at
            self._exercised.add(END_REQUIREMENT)
        for model in self.schedules.values():
            for awaited in model.ends:
                if awaited.learned_at is None and awaited.window.requires(now):
                    raise self._fail((END_REQUIREMENT,), f"schedule {model.alias!r} read at"
                                     f" {now.isoformat()}, the window's close: the end of its"
                                     f" execution of {awaited.scheduled_for.isoformat()} not"
                                     " learned by itself", awaited.window.describe(),
                                     "no poll of the execution since it ended")
        if any(model.next_fire is not None and model.next_fire <= now
               for model in self.schedules.values()):
            return  # a read now could stand in for the fire due: the history waits
        for model in self.schedules.values():
            if any(a.learned_at is not None and not a.checked and a.window.requires(now)
                   for a in model.ends):
                self._check_ends(model)

    def _check_ends(self, model: ScheduleModel) -> int:
        """The history shows every end learned, as the target answered it."""
        plan = model.plan
        scheduler = self._opened()
        executions = list(self._call("history", lambda: scheduler.history(model.schedule_id)))
        for awaited in model.ends:
            if awaited.learned_at is None or awaited.checked:
                continue
            assert plan is not None
            execution = next((e for e in executions
                              if getattr(e, "scheduled_for", None) == awaited.scheduled_for),
                             None)
            shown = (None if execution is None else
                     (getattr(execution, "outcome", None), getattr(execution, "cost", None)))
            if shown != (plan.outcome, plan.cost):
                raise self._fail((END_REQUIREMENT, "SC-019"), f"schedule {model.alias!r}'s"
                                 f" execution of {awaited.scheduled_for.isoformat()}, whose"
                                 f" end it learned at {awaited.learned_at.isoformat()}",
                                 f"outcome {plan.outcome}, cost {plan.cost}",
                                 "no such execution" if shown is None
                                 else f"outcome {shown[0]}, cost {shown[1]}")
            awaited.checked = True
        return sum(a.learned_at is not None for a in model.ends)

    def check_ends(self, alias: str) -> int:
        """The checks' own read: how many of the schedule's executions the scheduler
        learned the end of by itself, each shown in its history as it ended."""
        return self._check_ends(self._model(alias))

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
        if self.watches_ends and model.plan is not None:
            ends_at = made.at + timedelta(seconds=model.plan.run_seconds)
            model.ends.append(AwaitedEnd(due, oracle.end_window(ends_at, self.poll_interval)))
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
