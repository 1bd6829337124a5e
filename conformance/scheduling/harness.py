"""The scheduling harness: each command goes to the backend's scheduler(s) and to the
oracle, and everything they show must agree.

After every command both sides settle (every scheduler running fires what the clock has
reached), then the harness compares the command's answer, every schedule, every
schedule's execution history, the dispatches made and the pre-check calls, and every
snapshot handed out earlier. The first difference raises `Divergence` naming the
requirement IDs involved.

The target is the harness's own: it records every dispatch and every pre-check call, and
answers each pre-check as the check scripted it for that schedule.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache, partial
from itertools import islice
from operator import attrgetter
from typing import Any, ClassVar, cast
from zoneinfo import ZoneInfo

from jobconform.backends.protocol import SCHEDULING_ENDS, SCHEDULING_VALIDATION
from jobconform.backends.scheduling.protocol import (
    SCHEDULING,
    ExecutionEnd,
    ExecutionView,
    PreCheckFailed,
    PreCheckTimedOut,
    ScheduleNotFound,
    ScheduleRejected,
    ScheduleView,
    SchedulingRuntime,
    ValidationRunView,
)
from jobconform.conformance import read_ahead
from jobconform.conformance.area_harness import (
    AliasedHarness,
    check_time_step,
    profile_parameters,
    same_answer,
)
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import Divergence
from jobconform.conformance.utc import WANTED, describe_offset, first_off_utc, off_utc_field
from jobconform.conformance.watchdog import guarded
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling.commands import (
    CreateCron,
    CreateOnce,
    DeleteSchedule,
    EditSchedule,
    EndExecution,
    EndValidation,
    GetSchedule,
    ListSchedules,
    ReadHistory,
    RestartScheduling,
    SchedulingCommand,
    ScriptPreCheck,
    SetAutonomy,
    SetValidation,
    StartSecondScheduler,
    TriggerSchedule,
    describe_scheduling_command,
)
from jobconform.reference.scheduling.oracle import (
    CREATED,
    CRON,
    DECIDED,
    DELETED,
    EDITED,
    ENDED,
    NOT_FOUND,
    PRE_CHECK_PROMPT,
    REFUSED,
    REJECTIONS,
    TRIGGERED,
    VALIDATION_SET,
    VERDICT_TEXT,
    ExecutionOutcome,
    ExecutionState,
    PreCheckAnswer,
    ScheduleState,
    SchedulingConfig,
    SchedulingOracle,
    ValidationRun,
    Verdict,
    fire_times,
    rejected,
)
from jobconform.spec import Profile

CONFIG_PARAMETERS = ("missed_fires",)
# How long the harness's pre-check waits, in real time, for the harness to learn the id of
# a schedule that fired as soon as it was created (a threaded scheduler may be that quick).
ID_WAIT_SECONDS = 10.0
SCHEDULE_FIELDS = ("kind", "message", "expression", "timezone", "pre_check", "created_at",
                   "next_fire_at")
FIELD_REQUIREMENTS = {
    "kind": ("SC-001", "SC-003"),
    "message": ("SC-001", "SC-003"),
    "expression": ("SC-003",),
    "timezone": ("SC-003",),
    "pre_check": ("SC-012",),
    "created_at": ("SC-001", "SC-003"),
    "next_fire_at": ("SC-002", "SC-003", "SC-006"),
    "validation": ("SC-020",),
    "validation_timeout": ("SC-020",),
}
# Read only from a backend claiming scheduling-validation (SC-020); None for any other.
VALIDATION_FIELDS = ("validation", "validation_timeout")
# Verdicts that are no clear pass or fail (SC-023).
UNCLEAR_VERDICTS = (Verdict.PROSE, Verdict.ODD_JSON)
EXECUTION_FIELDS = ("scheduled_for", "started_at", "trigger", "status", "message", "cost",
                    "pre_check")
# Read only from a backend claiming scheduling-ends (SC-019); None for any other.
ENDED_FIELD = "outcome"
# Each reads those fields of a view at once, into a tuple (see `_fields`).
_READ_SCHEDULE = {False: attrgetter(*SCHEDULE_FIELDS),
                  True: attrgetter(*SCHEDULE_FIELDS, *VALIDATION_FIELDS)}
_READ_EXECUTION = attrgetter(*EXECUTION_FIELDS)
# What a snapshot of an execution handed out must go on showing (SC-016), by what the
# backend claims: (scheduling-ends, scheduling-validation) -> the fields, in the order of
# ExecutionRecord's (the validation run by its id).
SNAPSHOT_FIELDS = {
    (False, False): EXECUTION_FIELDS,
    (True, False): (*EXECUTION_FIELDS, ENDED_FIELD),
    (True, True): (*EXECUTION_FIELDS, ENDED_FIELD, "business_status", "validation_run")}
TRIGGER_REQUIREMENTS = {"schedule": ("SC-002", "SC-006"), "catch_up": ("SC-007",),
                        "manual": ("SC-009",)}
PRE_CHECK_REQUIREMENTS = {"skip": ("SC-012",), "prompt": ("SC-013",), "error": ("SC-014",),
                          "timeout": ("SC-014",)}
# Commands after which any schedule's fields and history may have changed: time passes,
# schedulers stop or start, the switch flips. After any other command only the schedule
# it names, and those the oracle fired, can (see SchedulingHarness.touched).
EVERY_SCHEDULE = (AdvanceTime, RestartScheduling, SetAutonomy, StartSecondScheduler)


def config_for(profile: Profile, **overrides: str) -> SchedulingConfig:
    """The area's parameters from the profile, with a check's own values on top.

    Raises:
        ValueError: an unknown parameter name or value.
        SpecError: the profile sets no defaults for the area.
    """
    values = profile_parameters(profile, SCHEDULING, CONFIG_PARAMETERS, overrides)
    return SchedulingConfig(**values)


def dst_requirements(instant: object, timezone: object) -> tuple[str, ...]:
    """SC-004 for an instant that ends a forward gap in the zone, SC-005 for one whose
    wall time the zone repeats: the rules a fire time there rests on."""
    if not isinstance(instant, datetime) or not isinstance(timezone, str):
        return ()
    tz = ZoneInfo(timezone)
    local = instant.astimezone(tz)
    before = (instant - timedelta(microseconds=1)).astimezone(tz)
    if (local.utcoffset() or timedelta(0)) > (before.utcoffset() or timedelta(0)):
        return ("SC-004",)
    twin = local.replace(fold=1 - local.fold)
    if twin.utcoffset() != local.utcoffset():
        return ("SC-005",)
    return ()


@dataclass(frozen=True)
class ScheduleRecord:
    """A schedule reduced to what the spec fixes (ids are compared through aliases)."""

    kind: object
    message: object
    expression: object
    timezone: object
    pre_check: object
    created_at: object
    next_fire_at: object
    validation: object = None
    validation_timeout: object = None


@dataclass(frozen=True)
class ExecutionRecord:
    scheduled_for: object
    started_at: object
    trigger: object
    status: object
    message: object
    cost: object
    pre_check: object
    outcome: object = None
    business_status: object = None  # with its validation run: SC-021, SC-022
    validation: object = None


@lru_cache(maxsize=4096)  # asked of every snapshot held, after every command
def held_alias(key: str) -> str:
    """The schedule a held snapshot's key names: get:ALIAS, list:ALIAS or
    history:ALIAS:NUMBER."""
    kind, _, rest = key.partition(":")
    return rest.rpartition(":")[0] if kind == "history" else rest


def freeze(view: ScheduleView, validates: bool = False) -> ScheduleRecord:
    """The schedule as shown; its validation switch and timeout only when the backend
    claims `validates` (scheduling-validation)."""
    # Built in one call rather than replaced: this runs for every schedule read, after
    # every command.
    return ScheduleRecord(*schedule_fields(view, validates))


def schedule_fields(view: ScheduleView, validates: bool) -> tuple[object, ...]:
    """The fields of a ScheduleRecord of the schedule as shown, in order, as far as
    `validates` reads them."""
    names = SCHEDULE_FIELDS + VALIDATION_FIELDS if validates else SCHEDULE_FIELDS
    return _fields(view, _READ_SCHEDULE[validates], names)


def _fields(view: object, read: Callable[[object], Any],
            names: tuple[str, ...]) -> tuple[object, ...]:
    """The `names` of `view` in order, "<missing>" for one it lacks. `read` reads them all
    at once (an attrgetter, in C: this runs for every record a check builds, after every
    command); where one is missing, each is read on its own."""
    try:
        return cast(tuple[object, ...], read(view))
    except AttributeError:
        return tuple(getattr(view, name, "<missing>") for name in names)


def freeze_execution(view: ExecutionView, ends: bool = False) -> ExecutionRecord:
    """The execution as shown; its outcome only when the backend claims `ends`
    (scheduling-ends): another backend's executions need not have the field."""
    return ExecutionRecord(*_execution_fields(view),
                           outcome=getattr(view, ENDED_FIELD, "<missing>") if ends else None)


def _execution_fields(view: ExecutionView) -> tuple[object, object, object, object, object,
                                                    object, object]:
    """The EXECUTION_FIELDS of an execution as shown, in order ("<missing>" for a field
    the view lacks), to build an ExecutionRecord by position in one call."""
    scheduled_for, started_at, trigger, status, message, cost, pre_check = _fields(
        view, _READ_EXECUTION, EXECUTION_FIELDS)
    return scheduled_for, started_at, trigger, status, message, cost, pre_check


def expected_record(state: ScheduleState, validates: bool = False) -> ScheduleRecord:
    return ScheduleRecord(state.kind, state.message, state.expression, state.timezone,
                          state.pre_check, state.created_at, state.next_fire_at,
                          *((state.validation, state.validation_timeout) if validates
                            else (None, None)))


def expected_execution(state: ExecutionState) -> ExecutionRecord:
    return ExecutionRecord(state.scheduled_for, state.started_at, state.trigger, state.status,
                           state.message, state.cost, state.pre_check, state.outcome,
                           state.business_status, state.validation)


def without_business(record: ExecutionRecord) -> ExecutionRecord:
    return replace(record, business_status=None, validation=None)


class HarnessTarget:
    """Records every dispatch and pre-check call; answers each pre-check as scripted."""

    def __init__(self) -> None:
        self._state = threading.Condition()
        self.dispatches: list[tuple[str, datetime, str]] = []
        self.pre_checks: list[str] = []
        self.known: set[str] = set()  # ids the harness has learnt
        self.scripts: dict[str, PreCheckAnswer] = {}  # schedule id -> its hook's answer

    def register(self, schedule_id: str, answer: PreCheckAnswer | None) -> None:
        with self._state:
            self.known.add(schedule_id)
            if answer is not None:
                self.scripts[schedule_id] = answer
            self._state.notify_all()

    def pre_check(self, schedule_id: str) -> str:
        with self._state:
            self.pre_checks.append(schedule_id)
            # Counted either way: a call for a schedule without a hook is a divergence.
            self._state.wait_for(lambda: schedule_id in self.known, timeout=ID_WAIT_SECONDS)
            answer = self.scripts.get(schedule_id)
        if answer is None:
            raise PreCheckFailed(f"schedule {schedule_id} has no pre-check hook")
        if answer is PreCheckAnswer.ERROR:
            raise PreCheckFailed(f"pre-check of {schedule_id} exited with status 1")
        if answer is PreCheckAnswer.TIMEOUT:
            raise PreCheckTimedOut(f"pre-check of {schedule_id} timed out")
        return PRE_CHECK_PROMPT if answer is PreCheckAnswer.PROMPT else ""

    def dispatch(self, schedule_id: str, scheduled_for: datetime, message: str) -> None:
        with self._state:
            self.dispatches.append((schedule_id, scheduled_for, message))

    def execution_end(self, schedule_id: str, scheduled_for: datetime) -> ExecutionEnd | None:
        """The commanded checks tell the ends (SC-019) and never start a scheduler's own
        polls for them (SR-009), so nothing here has ended as far as a poll can see."""
        return None

    def made(self) -> tuple[list[tuple[str, datetime, str]], list[str]]:
        return self.made_since(0, 0)

    def made_since(self, dispatches: int, pre_checks: int
                   ) -> tuple[list[tuple[str, datetime, str]], list[str]]:
        """The dispatches and pre-check calls made after the first `dispatches` and
        `pre_checks` of them."""
        with self._state:
            return self.dispatches[dispatches:], self.pre_checks[pre_checks:]


Dispatch = tuple[str, datetime, str]  # (alias, or an id never learnt; fire time; message)


class CallCounts:
    """The target's dispatches and pre-check calls counted by alias, as the oracle counts
    them, kept up to date from the calls made since the last count: counting them all
    again after every command cost more the longer the sequence (issue 33).

    A call whose schedule id the harness has not learnt is counted under the id, and
    looked up again at every count: a later creation could still return that id."""

    def __init__(self) -> None:
        self.dispatches: Counter[Dispatch] = Counter()
        self.pre_checks: Counter[str] = Counter()
        self._counted = (0, 0)  # how many of each the counters hold, learnt or not
        self._unlearnt: list[Dispatch] = []
        self._unlearnt_checks: list[str] = []

    def update(self, target: HarnessTarget, aliases: dict[str, str]
               ) -> tuple[Counter[Dispatch], Counter[str]]:
        """The counts of every call made so far: (dispatches, pre-check calls)."""
        dispatches, pre_checks = target.made_since(*self._counted)
        self._counted = (self._counted[0] + len(dispatches),
                         self._counted[1] + len(pre_checks))
        unlearnt, self._unlearnt = self._unlearnt, []
        for schedule_id, when, message in [*unlearnt, *dispatches]:
            alias = aliases.get(schedule_id)
            if alias is None:
                self._unlearnt.append((schedule_id, when, message))
            else:
                self.dispatches[(alias, when, message)] += 1
        unlearnt_checks, self._unlearnt_checks = self._unlearnt_checks, []
        for schedule_id in [*unlearnt_checks, *pre_checks]:
            alias = aliases.get(schedule_id)
            if alias is None:
                self._unlearnt_checks.append(schedule_id)
            else:
                self.pre_checks[alias] += 1
        return (self.dispatches + Counter(self._unlearnt) if self._unlearnt
                else self.dispatches,
                self.pre_checks + Counter(self._unlearnt_checks) if self._unlearnt_checks
                else self.pre_checks)


def same_counts(first: Counter[Any], second: Counter[Any]) -> bool:
    """Counter equality, through dict's (in C) where it answers: Counter's own walks both
    in Python, after every command."""
    return dict.__eq__(first, second) or first == second


@dataclass
class SchedulingHarness(AliasedHarness[SchedulingCommand]):
    """Differential execution of scheduling commands on one backend and the oracle.

    Args:
        backend: an adapter claiming the scheduling area.
        profile: whose area parameters apply.
        registry: the spec, for requirement titles in messages.
        overrides: parameters of this check replacing the profile's (missed_fires).
        start: the virtual clock's first instant (UTC); near a DST change to check one.

    Raises:
        ValueError: the backend does not claim the area, or a bad override.
        AdapterError: the backend has no `open_scheduling`, or it raised or hung.
    """

    AREA: ClassVar[str] = SCHEDULING
    PASSES_THROUGH: ClassVar[tuple[type[Exception], ...]] = (ScheduleRejected,
                                                             ScheduleNotFound)

    overrides: dict[str, str] = field(default_factory=dict)
    start: datetime = EPOCH
    # The clock starts at `start`, not at the kit's epoch.
    clock: VirtualClock = field(init=False, kw_only=True)

    def __post_init__(self) -> None:
        self._require_area("its schedules cannot be checked")
        self.ends = SCHEDULING_ENDS in self.backend.capabilities
        self.validates = self.ends and SCHEDULING_VALIDATION in self.backend.capabilities
        # Validation runs read, by id (a run never changes), and the executions seen in
        # histories, by id, as (alias, scheduled_for, trigger): what an alert names.
        self.runs: dict[str, ValidationRunView] = {}
        self.execution_names: dict[object, tuple[str, object, object]] = {}
        self.alert_places: dict[object, str] = {}  # for the suites: see alerts_by_place
        self.clock = VirtualClock(self.start.astimezone(UTC))
        self.config = config_for(self.profile, **self.overrides)
        self.oracle = SchedulingOracle(self.config)
        self.target = HarnessTarget()
        self.calls = CallCounts()
        # Snapshots handed out, with what they showed then: the fields of the record
        # each makes (`_schedule_fields`, `_snapshot_fields`), a tuple compared in C.
        self.held: dict[str, tuple[ScheduleView, tuple[object, ...]]] = {}
        self.held_executions: dict[str, tuple[ExecutionView, tuple[object, ...]]] = {}
        self._snapshot_names = SNAPSHOT_FIELDS[self.ends, self.validates]
        self._read_snapshot = attrgetter(*self._snapshot_names)
        self.deleted: set[str] = set()  # aliases of schedules the oracle deleted
        self.before_edit: datetime | None = None  # next_fire_at of the schedule last edited
        # The schedule the command being checked gave a new timetable (an accepted edit
        # naming an expression or a zone), else None: see _retimed_by.
        self.retimed: str | None = None
        self.resumed_at: datetime | None = None  # when autonomy last came back on
        # The schedules whose fields, history and snapshots handed out `observe` reads, as
        # the command being checked can change them; None: every schedule (any other
        # observe, too). The list of schedules, the dispatches, the pre-check calls and
        # the alerts are compared in full after every command: an execution a command
        # should not have made shows as a dispatch or a pre-check call.
        self.touched: frozenset[str] | None = None
        # The objects each schedule's fields ("list:ALIAS") and history ("history:ALIAS")
        # were last found equal to: (the views shown, the oracle's states, and for a
        # history the records they made). The same views (their snapshots checked as
        # every observe begins) and the same frozen states compare as they did, so they
        # are not frozen and compared again; nor the executions of a history that are.
        self.agreed: dict[str, tuple[tuple[object, ...], tuple[object, ...],
                                     tuple[ExecutionRecord, ...]]] = {}
        self.peer: SchedulingRuntime | None = None
        # How many schedulers run, as the commands say (the machine's rules read it; an
        # oracle-only run opens no peer).
        self.schedulers = 1
        opener = self._opener("clock, config, target")
        self.runtime: SchedulingRuntime = self._open(
            lambda: opener(self.clock, self.config, self.target))

    # -- the one operation ---------------------------------------------------------------

    def _run(self, command: SchedulingCommand) -> object:
        executions_before = {alias: len(h) for alias, h in self.oracle.history.items()}
        expected, requirements = self._expect(command)
        if not self.oracle.autonomy:  # every step while off checks that nothing fires
            requirements += ("SC-010",)
        with guarded(self.safety_timeout, partial(describe_scheduling_command, command),
                     self.hang_scope):
            actual = self._apply(command)  # AdvanceTime moves the clock here
            self.oracle.settle(self.clock.now())
            requirements += self._fired_requirements(executions_before)
            self.exercised.update(requirements)
            self.touched = self._touched_by(command, executions_before)
            try:
                self._compare(command, expected, actual, requirements)
            finally:
                self.touched = None
        return actual

    def _touched_by(self, command: SchedulingCommand,
                    executions_before: dict[str, int]) -> frozenset[str] | None:
        """The schedules `command` can change: the one it names and those the oracle
        fired during it; None for every schedule (EVERY_SCHEDULE)."""
        if isinstance(command, EVERY_SCHEDULE):
            return None
        fired = {alias for alias, history in self.oracle.history.items()
                 if len(history) != executions_before.get(alias, 0)}
        named = getattr(command, "schedule", None)
        return frozenset(fired | {named} if isinstance(named, str) else fired)

    def run_oracle(self, command: SchedulingCommand) -> object:
        """The command applied to the oracle alone, the clock moved as `_apply` moves it:
        the oracle's answer (the cost floor, see machine_runner.oracle_alone)."""
        self._check_command(command)
        self.commands.append(command)
        expected, _ = self._expect(command)
        if isinstance(command, AdvanceTime | RestartScheduling):
            self.clock.advance(command.seconds if isinstance(command, AdvanceTime)
                               else command.down_seconds)
        self.oracle.settle(self.clock.now())
        return expected

    def _adopt(self) -> None:
        """After a listed deviation the oracle takes each schedule's next fire time and
        history as the backend shows them, the dispatches and pre-check calls it made,
        and every snapshot read earlier as it is now."""
        for view in self._call("list_schedules", self.runtime.list_schedules):
            alias = self.aliases.get(view.schedule_id)
            state = self.oracle.schedules.get(alias) if alias is not None else None
            if alias is None or state is None:
                continue
            shown = self._freeze(view)
            if shown.next_fire_at is None or isinstance(shown.next_fire_at, datetime):
                state = replace(state, next_fire_at=shown.next_fire_at)
            if self.validates:
                state = replace(state, validation=cast(Any, shown.validation),
                                validation_timeout=cast(Any, shown.validation_timeout))
            self.oracle.schedules[alias] = state
            history = self._call("history", partial(self.runtime.history, view.schedule_id))
            self.oracle.history[alias] = [
                ExecutionState(**{name: cast(Any, value) for name, value in
                                  vars(self._freeze_execution(execution)).items()})
                for execution in history]
        if self.validates:
            self.oracle.alerts = cast(Any, self._alerts_shown())
        dispatches, pre_checks = self.target.made()
        self.oracle.dispatches = Counter((self.aliases.get(i, i), when, message)
                                         for i, when, message in dispatches)
        self.oracle.pre_checks = Counter(self.aliases.get(i, i) for i in pre_checks)
        self.held = {key: (view, self._schedule_fields(view))
                     for key, (view, _) in self.held.items()}
        self.held_executions = {key: (view, self._snapshot_fields(view))
                                for key, (view, _) in self.held_executions.items()}
        self.agreed.clear()

    def _to_close(self) -> list[SchedulingRuntime]:
        return ([] if self.peer is None else [self.peer]) + [self.runtime]

    def _check_command(self, command: SchedulingCommand) -> None:
        if isinstance(command, CreateOnce | CreateCron):
            self._check_new_alias("schedule", command.schedule)
        if isinstance(command, EndExecution) and not self.ends:
            raise ValueError(f"backend {self.backend.name!r} does not claim {SCHEDULING_ENDS};"
                             f" {describe_scheduling_command(command)} cannot be checked on it")
        if isinstance(command, SetValidation | EndValidation) and not self.validates:
            raise ValueError(f"backend {self.backend.name!r} does not claim"
                             f" {SCHEDULING_VALIDATION}; {describe_scheduling_command(command)}"
                             " cannot be checked on it")
        check_time_step(command.seconds if isinstance(command, AdvanceTime) else
                        command.down_seconds if isinstance(command, RestartScheduling) else 0.0)

    def _freeze(self, view: ScheduleView) -> ScheduleRecord:
        return freeze(view, self.validates)

    def _schedule_fields(self, view: ScheduleView) -> tuple[object, ...]:
        return schedule_fields(view, self.validates)

    def _freeze_execution(self, view: ExecutionView) -> ExecutionRecord:
        """The execution as shown; with validation claimed, its business status and its
        validation run as the run shows itself, if the run names this execution back."""
        if not self.validates:
            return freeze_execution(view, self.ends)
        run_id = getattr(view, "validation_run", "<missing>")
        return ExecutionRecord(
            *_execution_fields(view), outcome=getattr(view, ENDED_FIELD, "<missing>"),
            business_status=getattr(view, "business_status", "<missing>"),
            validation=None if run_id is None else self._validation_of(view, run_id))

    def _snapshot_fields(self, view: ExecutionView) -> tuple[object, ...]:
        """The execution as its own fields show it, its validation run by id: what must not
        change in a snapshot handed out (SC-016), though the run it names may be gone by
        now (with its schedule). The fields of its ExecutionRecord, in order: read at once
        and compared as a tuple, as this runs for every snapshot held after every
        command."""
        return _fields(view, self._read_snapshot, self._snapshot_names)

    def _validation_of(self, view: ExecutionView, run_id: object) -> object:
        run = self.runs.get(str(run_id))
        if run is None:
            run = self._call("validation_run", lambda: self.runtime.validation_run(str(run_id)))
            if run is None:
                return f"<no validation run {run_id!r}>"
            self.runs[str(run_id)] = run
        execution_id = getattr(view, "execution_id", "<missing>")
        if run.validates != execution_id:
            return (f"<validation run {run_id!r} validates {run.validates!r}, not this"
                    f" execution ({execution_id!r})>")
        return ValidationRun(run.started_at, run.timeout_seconds)

    def validation_shown(self, view: ExecutionView) -> object:
        """The execution's validation run as the Then-steps and keywords read it: None,
        a `ValidationRun`, or a text saying how the link is broken (SC-021)."""
        run_id = getattr(view, "validation_run", "<missing>")
        return None if run_id is None else self._validation_of(view, run_id)

    def alerts_by_place(self) -> list[str]:
        """The operator alerts as "alias:number" (the execution's place in its history, from
        1, when last read here: a deleted schedule's keep theirs), the suites' way to name
        executions; an id never read in a history shows as itself."""
        places = self.alert_places
        for alias, schedule_id in self.ids.items():
            if alias in self.deleted:
                continue
            history = self._call("history", partial(self.runtime.history, schedule_id))
            for number, view in enumerate(history, start=1):
                places[getattr(view, "execution_id", None)] = f"{alias}:{number}"
        alerts = self._call("operator_alerts", self.runtime.operator_alerts)
        return [places.get(i, str(i)) for i in alerts]

    def _alerts_shown(self) -> list[tuple[str, object, object]]:
        """The operator alerts, each named as its execution was seen in a history."""
        alerts = self._call("operator_alerts", self.runtime.operator_alerts)
        return [self.execution_names.get(i, ("<an execution never seen>", i, None))
                for i in alerts]

    # -- the oracle's side ---------------------------------------------------------------

    def _expect(self, command: SchedulingCommand) -> tuple[object, tuple[str, ...]]:
        now = self.clock.now()
        oracle = self.oracle
        self.retimed = None
        match command:
            case CreateOnce():
                return oracle.create_once(command.schedule, command.message, command.run_at,
                                          command.delay_seconds, command.pre_check,
                                          now), ("SC-001",)
            case CreateCron():
                answer = oracle.create_cron(command.schedule, command.message,
                                            command.expression, command.timezone,
                                            command.pre_check, now)
                return answer, ("SC-003",)
            case ScriptPreCheck():
                oracle.script(command.schedule, command.answer)
                return None, ()
            case TriggerSchedule():
                return oracle.trigger(command.schedule, now), (*self._gone(command.schedule),
                                                               "SC-009")
            case EndExecution():
                answer = oracle.end_execution(command.schedule, command.scheduled_for,
                                              ExecutionOutcome(command.outcome), command.cost,
                                              now if self.validates else None)
                validating = ("SC-021",) if self.validates else ()
                return answer, (*self._gone(command.schedule), "SC-019", *validating)
            case SetValidation():
                answer = oracle.set_validation(command.schedule, command.enabled,
                                               command.timeout_seconds)
                return answer, (*self._gone(command.schedule), "SC-020")
            case EndValidation():
                alerts = len(oracle.alerts)
                answer = oracle.end_validation(command.schedule, command.scheduled_for,
                                               VERDICT_TEXT[Verdict(command.verdict)], now)
                named = ["SC-022"]
                if answer == DECIDED and Verdict(command.verdict) in UNCLEAR_VERDICTS:
                    named.append("SC-023")
                if len(oracle.alerts) > alerts:
                    named.append("SC-024")
                return answer, (*self._gone(command.schedule), *named)
            case EditSchedule():
                edited = oracle.schedules.get(command.schedule)
                self.before_edit = None if edited is None else edited.next_fire_at
                answer = oracle.edit(command.schedule, command.message, command.expression,
                                     command.timezone, now)
                if answer == EDITED and (command.expression is not None
                                         or command.timezone is not None):
                    self.retimed = command.schedule
                return answer, (*self._gone(command.schedule), "SC-017")
            case DeleteSchedule():
                answer = oracle.delete(command.schedule)
                if answer == DELETED:
                    self.deleted.add(command.schedule)
                return answer, ("SC-018",)
            case SetAutonomy():
                if command.enabled and not oracle.autonomy:
                    self.resumed_at = now
                oracle.set_autonomy(command.enabled, now)
                return None, ("SC-010", "SC-011") if command.enabled else ("SC-010",)
            case StartSecondScheduler():
                self.schedulers = 2
                return None, ("SC-008",)
            case RestartScheduling():
                start = now + timedelta(seconds=command.down_seconds)
                # A start with autonomy on puts SC-007 to work on every cron schedule:
                # its next_fire_at moves past the start time, or stays when nothing was
                # missed, whatever the policy runs of the missed fires.
                timetabled = oracle.autonomy and any(
                    state.kind == CRON and state.next_fire_at is not None
                    for state in oracle.schedules.values())
                oracle.restart(start)
                self.schedulers = 1  # the second one is not started again
                return None, ("SC-016", "SC-007") if timetabled else ("SC-016",)
            case GetSchedule():
                state = oracle.schedules.get(command.schedule)
                return ((None if state is None else expected_record(state, self.validates)),
                        (*self._gone(command.schedule), "SC-016"))
            case ListSchedules():
                return oracle.list(), ("SC-016",)
            case ReadHistory():
                if command.schedule not in oracle.history:
                    return NOT_FOUND, (*self._gone(command.schedule), "SC-015")
                return ([expected_execution(e) for e in oracle.executions(command.schedule)],
                        ("SC-015",))
            case AdvanceTime():
                return None, (() if oracle.autonomy else ("SC-010",))
        raise ValueError(f"not a scheduling command: {command!r}")

    def _gone(self, alias: str) -> tuple[str, ...]:
        """SC-018 for a command on a deleted schedule: the rule its answer rests on."""
        return ("SC-018",) if alias in self.deleted else ()

    def _fired_requirements(self, before: dict[str, int]) -> tuple[str, ...]:
        """The rules behind the executions the oracle made during this command."""
        named: list[str] = []
        for alias, history in self.oracle.history.items():
            state = self.oracle.schedules[alias]
            for execution in history[before.get(alias, 0):]:
                named.append("SC-015")
                if execution.trigger == "schedule":
                    named.append("SC-006" if state.kind == CRON else "SC-002")
                else:
                    named += TRIGGER_REQUIREMENTS[execution.trigger]
                named += PRE_CHECK_REQUIREMENTS.get(execution.pre_check or "", ())
                named += dst_requirements(execution.scheduled_for, state.timezone)
                if self.peer is not None:
                    named.append("SC-008")
        return tuple(named)

    # -- the backend's side --------------------------------------------------------------

    def _runtimes(self) -> list[SchedulingRuntime]:
        return [self.runtime] if self.peer is None else [self.runtime, self.peer]

    def _apply(self, command: SchedulingCommand) -> object:
        runtime = self.runtime
        match command:
            case CreateOnce():
                c = command
                return self._create(c.schedule, c.pre_check, lambda: runtime.create_once(
                    c.message, run_at=c.run_at, delay_seconds=c.delay_seconds,
                    pre_check=c.pre_check is not None))
            case CreateCron():
                k = command
                return self._create(k.schedule, k.pre_check, lambda: runtime.create_cron(
                    k.message, k.expression, k.timezone, pre_check=k.pre_check is not None))
            case ScriptPreCheck():
                scripted = self.ids.get(command.schedule)
                if scripted is not None and scripted in self.target.scripts:
                    self.target.register(scripted, command.answer)
            case TriggerSchedule():
                schedule_id = self._id(command.schedule)
                return self._done("trigger", TRIGGERED, lambda: runtime.trigger(schedule_id))
            case EndExecution():
                schedule_id, end = self._id(command.schedule), command
                return self._taken("end_execution", ENDED, lambda: runtime.end_execution(
                    schedule_id, end.scheduled_for, ExecutionOutcome(end.outcome).value,
                    end.cost))
            case SetValidation():
                schedule_id, v = self._id(command.schedule), command
                return self._changed("set_validation", VALIDATION_SET,
                                     lambda: runtime.set_validation(
                                         schedule_id, v.enabled, v.timeout_seconds))
            case EndValidation():
                schedule_id, verdict = self._id(command.schedule), command
                return self._taken("end_validation", DECIDED, lambda: runtime.end_validation(
                    schedule_id, verdict.scheduled_for, VERDICT_TEXT[Verdict(verdict.verdict)]))
            case EditSchedule():
                schedule_id, e = self._id(command.schedule), command
                return self._changed("edit", EDITED, lambda: runtime.edit(
                    schedule_id, message=e.message, expression=e.expression,
                    timezone=e.timezone))
            case DeleteSchedule():
                schedule_id = self._id(command.schedule)
                return self._done("delete", DELETED, lambda: runtime.delete(schedule_id))
            case SetAutonomy():
                self._call("set_autonomy", lambda: runtime.set_autonomy(command.enabled))
            case StartSecondScheduler():
                if self.peer is None:
                    self.peer = self._call("open_peer", runtime.open_peer)
            case RestartScheduling():
                for running in self._runtimes():
                    self._call("crash", running.crash)
                if self.peer is not None:
                    self._call("close", self.peer.close)
                    self.peer = None
                self.clock.advance(command.down_seconds)  # nothing runs meanwhile
                self.runtime = self._call("reopen", runtime.reopen)
                self.runs.clear()  # read them again: they must have survived
                self.agreed.clear()  # and every history with them
            case GetSchedule():
                schedule_id = self._id(command.schedule)
                view = self._call("get", lambda: runtime.get(schedule_id))
                if view is None:
                    return None
                shown = self._schedule_fields(view)
                self.held[f"get:{command.schedule}"] = (view, shown)
                return ScheduleRecord(*shown)
            case ListSchedules():
                views = self._call("list_schedules", runtime.list_schedules)
                return [self.aliases.get(view.schedule_id, view.schedule_id) for view in views]
            case ReadHistory():
                schedule_id = self._id(command.schedule)
                try:
                    executions = list(self._call("history", lambda: runtime.history(schedule_id)))
                except ScheduleNotFound:
                    return NOT_FOUND
                return [self._freeze_execution(e) for e in executions]
            case AdvanceTime():
                self.clock.advance(command.seconds)
        return None

    def _done(self, method: str, done: str, call: Callable[[], object]) -> str:
        """The answer of a call on one schedule (a trigger, a delete): `done` once it
        returns, not_found for an unknown schedule."""
        try:
            self._call(method, call)
        except ScheduleNotFound:
            return NOT_FOUND
        return done

    def _taken(self, method: str, taken: str, call: Callable[[], object]) -> object:
        """The answer of a seam that says whether it took what it was told (an end, a
        verdict): `taken` for True, refused for False, not_found for an unknown schedule;
        any other value as it came, to differ."""
        try:
            answer = self._call(method, call)
        except ScheduleNotFound:
            return NOT_FOUND
        return taken if answer is True else REFUSED if answer is False else answer

    def _changed(self, method: str, changed: str, call: Callable[[], object]) -> str:
        """The answer of a change that may be rejected (an edit, a validation switch):
        `changed`, not_found for an unknown schedule, or rejected with the code given."""
        try:
            self._call(method, call)
        except ScheduleNotFound:
            return NOT_FOUND
        except ScheduleRejected as rejection:
            return rejected(rejection.code)
        return changed

    def _create(self, alias: str, pre_check: PreCheckAnswer | None,
                create: Callable[[], str]) -> str:
        try:
            schedule_id = self._call("create", create)
        except ScheduleRejected as rejection:
            return rejected(rejection.code)
        if schedule_id in self.aliases:
            raise self._fail(("SC-016",), "create returned an id already in use",
                             "a new unique id", schedule_id)
        self._remember(alias, schedule_id)
        self.target.register(schedule_id, pre_check)
        return CREATED

    # -- comparing -----------------------------------------------------------------------

    def _fail(self, requirements: tuple[str, ...], what: str, expected: object,
              actual: object, primary: str | None = None) -> Divergence:
        # The primary is always among the requirements named here, even one a caller
        # names only as the primary.
        if primary is not None:
            requirements += (primary,)
        return super()._fail(requirements, what, expected, actual, primary)

    def _compare_answer(self, command: SchedulingCommand, expected: object, actual: object,
                        requirements: tuple[str, ...]) -> None:
        if same_answer(expected, actual):
            return
        blamed = requirements
        for answer in (expected, actual):
            if isinstance(answer, str) and answer.startswith("rejected:"):
                blamed += (REJECTIONS.get(answer.split(":", 1)[1], "SC-003"),)
        primary = None
        if isinstance(command, EndExecution):
            primary = "SC-018" if command.schedule in self.deleted else "SC-019"
        if isinstance(command, SetValidation | EndValidation):
            primary = ("SC-018" if command.schedule in self.deleted
                       else "SC-020" if isinstance(command, SetValidation) else "SC-022")
        raise self._fail(blamed, f"the answer to {describe_scheduling_command(command)}",
                         expected, actual, primary)

    def observe(self, requirements: tuple[str, ...] = ()) -> None:
        """Settle every scheduler, then compare every schedule, every history, the
        dispatches, the pre-check calls and the snapshots handed out earlier."""
        if callable(getattr(self.runtime, "plan_reads", None)):
            # Built only for a runtime that takes it (one behind a pipe): every step.
            read_ahead.plan_reads([
                *((running, "settle", {}) for running in self._runtimes()),
                (self.runtime, "list_schedules", {}),
                *((self.runtime, "history", {"schedule_id": self.ids[alias]})
                  for alias in self.oracle.list() if alias in self.ids),
                *([(self.runtime, "operator_alerts", {})] if self.validates else [])])
        for running in self._runtimes():
            self._call("settle", running.settle)
        self._check_snapshots()
        views = list(self._call("list_schedules", self.runtime.list_schedules))
        actual_aliases = self._listed(v.schedule_id for v in views)
        if actual_aliases != self.oracle.list():
            kept = [alias for alias in actual_aliases if alias in self.deleted]
            raise self._fail((*requirements, "SC-016"), "the held schedules, in order",
                             self.oracle.list(), actual_aliases,
                             "SC-018" if kept else None)
        read = [(alias, view) for alias, view in zip(actual_aliases, views, strict=True)
                if self.touched is None or alias in self.touched]
        for alias, view in read:
            self._compare_schedule(alias, view, requirements)
        for alias, _ in read:
            self._compare_history(alias, requirements)
        self._compare_calls(requirements)
        if self.validates:
            self._compare_alerts(requirements)

    def _compare_alerts(self, requirements: tuple[str, ...]) -> None:
        actual = self._alerts_shown()
        if actual != self.oracle.alerts:
            raise self._fail((*requirements, "SC-024"), "operator_alerts(), in the order raised"
                             " (alias, scheduled_for, trigger)", self.oracle.alerts, actual,
                             "SC-024")

    def _agreed_before(self, key: str, shown: Sequence[object],
                       expected: Sequence[object]) -> bool:
        """Whether `shown` and `expected` are, object for object, what `key` was last
        found equal to (see `agreed`)."""
        before = self.agreed.get(key)
        return (before is not None and len(before[0]) == len(shown)
                and len(before[1]) == len(expected)
                and self._agreed_prefix(key, shown, expected) == len(shown))

    def _agreed_prefix(self, key: str, shown: Sequence[object],
                       expected: Sequence[object]) -> int:
        """How many of `shown` and `expected`, from the first, are pair for pair the very
        objects `key` was last found equal to (see `agreed`)."""
        before = self.agreed.get(key)
        if before is None:
            return 0
        kept = 0
        for shown_then, expected_then, shown_now, expected_now in zip(
                before[0], before[1], shown, expected, strict=False):  # to the shortest
            if shown_then is not shown_now or expected_then is not expected_now:
                break
            kept += 1
        return kept

    @staticmethod
    def _hold(held: dict[str, tuple[Any, Any]], key: str, view: object,
              snapshot: Callable[[], object]) -> None:
        """Hold `view` under `key` with what it shows now. The same object held there
        already keeps its record: `_check_snapshots` found it unchanged as this observe
        began, and nothing but reads has run since."""
        kept = held.get(key)
        if kept is None or kept[0] is not view:
            held[key] = (view, snapshot())

    def _check_snapshots(self) -> None:
        """Every snapshot handed out of the schedules the command can change (`touched`)
        shows what it showed when it was returned (SC-016): a view that goes on to show
        its schedule's later state changes only as that schedule does."""
        touched = self.touched
        shown: list[tuple[str, Callable[..., object], tuple[object, ...], tuple[object, ...]]]
        shown = [(key, ScheduleRecord, then, self._schedule_fields(view))
                 for key, (view, then) in self.held.items()
                 if touched is None or held_alias(key) in touched]
        shown += [(key, ExecutionRecord, then, self._snapshot_fields(view))
                  for key, (view, then) in self.held_executions.items()
                  if touched is None or held_alias(key) in touched]
        for key, record, then, now in shown:
            if now != then:
                raise self._fail(("SC-016",), f"a snapshot read earlier ({key}) changed after"
                                 " it was returned", record(*then), record(*now))

    def _compare_schedule(self, alias: str, view: ScheduleView,
                          requirements: tuple[str, ...]) -> None:
        state = self.oracle.schedules[alias]
        if self._agreed_before(f"list:{alias}", (view,), (state,)):
            return
        shown = self._schedule_fields(view)
        wanted, actual = expected_record(state, self.validates), ScheduleRecord(*shown)
        for name, field_requirements in FIELD_REQUIREMENTS.items():
            expected_value, actual_value = getattr(wanted, name), getattr(actual, name)
            if expected_value != actual_value:
                blamed = requirements + field_requirements
                if name == "next_fire_at":
                    blamed += (dst_requirements(expected_value, state.timezone)
                               + dst_requirements(actual_value, state.timezone))
                primary = (self._next_fire_primary(alias, state, expected_value,
                                                   actual_value)
                           if name == "next_fire_at" else None)
                raise self._fail(blamed, f"schedule {alias!r} {name}", expected_value,
                                 actual_value, primary)
        off = off_utc_field(actual, ("created_at", "next_fire_at"))
        if off is not None:
            name, value = off
            raise self._fail(("SC-016",), f"schedule {alias!r} {name} must be a"
                             " timezone-aware UTC datetime", "tz-aware UTC", value)
        self._hold(self.held, f"list:{alias}", view, lambda: shown)
        if state.kind == CRON:
            self.exercised.update(dst_requirements(state.next_fire_at, state.timezone))
        self.agreed[f"list:{alias}"] = ((view,), (state,), ())

    def _compare_history(self, alias: str, requirements: tuple[str, ...]) -> None:
        schedule_id = self.ids[alias]
        views = list(self._call("history", lambda: self.runtime.history(schedule_id)))
        executions = self.oracle.executions(alias)
        key = f"history:{alias}"
        # The executions found equal last time, from the first, as they were then: a
        # history grows at its end, after every command that fires.
        kept, before = self._agreed_prefix(key, views, executions), self.agreed.get(key)
        if before is not None and kept == len(views) == len(executions) == len(before[0]):
            return  # all of them, and no more then (as _agreed_before)
        records = list(before[2][:kept]) if before is not None and kept else []
        actual = records + [self._freeze_execution(view) for view in views[kept:]]
        wanted = records + [expected_execution(e) for e in executions[kept:]]
        if actual == wanted:
            # The right instants at another offset compare equal: SC-016 asks for UTC. Of
            # each execution as it is first held: one held already was found UTC then, and
            # its snapshot still shows what it showed (_check_snapshots; a handed-out view
            # mutated to another offset alone would pass that, and this, unseen).
            where = f"the execution history of schedule {alias!r}"
            keys = [f"history:{alias}:{number}" for number in range(len(views))]
            fresh = [record for key, view, record in zip(keys, views, actual, strict=True)
                     if self.held_executions.get(key, (None,))[0] is not view]
            off = first_off_utc(actual, where) if first_off_utc(fresh, where) else None
            if off is not None:
                raise self._fail(("SC-016",), f"{off[0]} as a UTC instant", WANTED,
                                 describe_offset(off[1]), "SC-016")
            for number, view in enumerate(views):
                self._hold(self.held_executions, f"history:{alias}:{number}", view,
                           partial(self._snapshot_fields, view))
            if self.validates:
                self._learn_execution_ids(alias, views, actual)
            self.agreed[key] = (tuple(views), tuple(executions), tuple(actual))
            return
        blamed = (*requirements, "SC-015")
        timezone = self.oracle.schedules[alias].timezone
        for record in [*wanted, *actual]:
            if record.outcome is not None:
                blamed += ("SC-019",)
            if record.business_status is not None:
                blamed += ("SC-021",)
            blamed += TRIGGER_REQUIREMENTS.get(str(record.trigger), ())
            blamed += PRE_CHECK_REQUIREMENTS.get(str(record.pre_check), ())
            blamed += dst_requirements(record.scheduled_for, timezone)
        raise self._fail(blamed, f"the execution history of schedule {alias!r}", wanted, actual,
                         self._history_primary(alias, wanted, actual))

    def _learn_execution_ids(self, alias: str, views: list[ExecutionView],
                             records: list[ExecutionRecord]) -> None:
        """Remember what each execution id names, for the alerts; ids that repeat in one
        history cannot name one execution each (SC-021)."""
        ids = [getattr(view, "execution_id", "<missing>") for view in views]
        if len(set(ids)) != len(ids):
            raise self._fail(("SC-021",), f"the execution ids of schedule {alias!r}, each"
                             " naming one execution", "distinct ids", ids, "SC-021")
        for execution_id, record in zip(ids, records, strict=True):
            self.execution_names[execution_id] = (alias, record.scheduled_for, record.trigger)

    # -- blame: which one rule a difference breaks (conformance/blame.py) ---------------

    def _next_fire_primary(self, alias: str, state: ScheduleState, expected: object,
                           actual: object) -> str:
        """A wrong next fire time: a fire taken before its time (the backend executed a
        fire time still ahead), the DST rule it rests on, or the schedule's own rule."""
        once = state.kind != CRON
        latest = self.commands[-1] if self.commands else None
        edited = self._retimed_by(latest, alias)
        if edited and actual == self.before_edit and expected != actual:
            return "SC-017"  # the edit left the old timetable's next fire in place
        if (not self.oracle.autonomy and isinstance(expected, datetime)
                and (actual is None or (isinstance(actual, datetime) and actual > expected))
                and self._executed_more(alias)):
            return "SC-010"  # the timetable moved on while autonomy was off: it fired
        if not self.oracle.autonomy and self._later_fire_time(state, expected, actual):
            # The held fire time's own timetable, moved on to a later fire time of it while
            # autonomy was off, though nothing fired: the switch's hold broken, not the
            # timetable (a wrong timetable would not land on one of its fire times).
            return "SC-010"
        if isinstance(expected, datetime) and expected > self.clock.now():
            schedule_id = self.ids[alias]
            executed = [self._freeze_execution(view).scheduled_for for view in
                        self._call("history", lambda: self.runtime.history(schedule_id))]
            if expected in executed:
                return "SC-002" if once else "SC-006"
        for instant in (expected, actual):
            for rid in dst_requirements(instant, state.timezone):
                return rid
        if isinstance(latest, SetAutonomy) and latest.enabled:
            return "SC-011"  # where autonomy coming back resumes the timetable
        if (once and expected is None and isinstance(actual, datetime)
                and self.resumed_at is not None and actual <= self.resumed_at
                and state.created_at <= self.resumed_at):
            # A one-shot job due by the time autonomy came back, still held afterwards:
            # what resuming does with it (it runs once), not its own firing rule.
            return "SC-011"
        if isinstance(latest, RestartScheduling):
            return "SC-007"  # where a restart resumes it after the fires it missed
        if edited:
            return "SC-017"  # where an edit restarts the timetable
        return "SC-002" if once else "SC-003"

    def _retimed_by(self, command: SchedulingCommand | None, alias: str) -> bool:
        """Whether `command` is an edit of the schedule that the oracle took as a new
        timetable (a cron schedule's expression or zone): only such an edit starts the
        timetable anew (SC-017). An edit of a message alone, or one refused (a one-shot
        job's zone), leaves next_fire_at as it was, so a next fire time or a fire that
        differs then is the schedule's firing rule's (huey's one-shot job, fired late, seen
        through such an edit)."""
        return isinstance(command, EditSchedule) and self.retimed == alias

    @staticmethod
    def _later_fire_time(state: ScheduleState, expected: object, actual: object) -> bool:
        """Whether `actual` is a fire time of the schedule's timetable after `expected`."""
        if (state.kind != CRON or state.expression is None or state.timezone is None
                or not isinstance(expected, datetime) or not isinstance(actual, datetime)
                or actual <= expected):
            return False
        # A year of minutely fires bounds the walk: no check holds autonomy off longer.
        for fire in islice(fire_times(state.expression, state.timezone, expected), 530_000):
            if fire >= actual:
                return fire == actual
        return False

    def _executed_more(self, alias: str) -> bool:
        """Whether the backend shows more executions of the schedule than the oracle made:
        a later next fire time while autonomy is off is a fire only then (a schedule
        created while off with another timetable has fired nothing)."""
        schedule_id = self.ids[alias]
        shown = self._call("history", lambda: self.runtime.history(schedule_id))
        return len(list(shown)) > len(self.oracle.executions(alias))

    def _history_primary(self, alias: str, wanted: list[ExecutionRecord],
                         actual: list[ExecutionRecord]) -> str:
        """The rule a history difference breaks, from the executions one side has and the
        other has not (the right executions in another order break SC-015 alone)."""
        state = self.oracle.schedules[alias]
        missing = list((Counter(wanted) - Counter(actual)).elements())
        extra = list((Counter(actual) - Counter(wanted)).elements())
        missing.sort(key=wanted.index)
        extra.sort(key=actual.index)
        once = state.kind != CRON
        latest = self.commands[-1] if self.commands else None
        if not missing and not extra:
            return "SC-015"
        if (Counter(map(without_business, wanted)) == Counter(map(without_business, actual))):
            return self._business_primary()
        if self._ends_differ(wanted, actual, missing + extra):
            return "SC-019"
        if missing and extra:
            expected, got = missing[0], extra[0]
            if replace(expected, started_at=got.started_at) == got:
                return "SC-002" if once else "SC-006"  # the right fire at the wrong time
            if (expected.scheduled_for == got.scheduled_for
                    and expected.trigger == got.trigger):
                # The same fire, recorded otherwise. Under another trigger it is not the
                # pre-check's answer that differs but the kind of run (a missed fire run as
                # an ordinary one after a restart: celery beat's, SC-007).
                for rid in PRE_CHECK_REQUIREMENTS.get(str(expected.pre_check), ()):
                    return rid  # the pre-check's answer was not followed
        record = (extra or missing)[0]
        if str(record.trigger) == "manual":
            return "SC-009"
        if isinstance(latest, RestartScheduling) or str(record.trigger) == "catch_up":
            return "SC-007"  # what a restart runs of the fires missed while down
        if (extra and not missing and not once and str(record.trigger) == "schedule"
                and record.scheduled_for == self.clock.now()
                and ((isinstance(latest, CreateCron) and latest.schedule == alias)
                     or self._retimed_by(latest, alias))):
            # A fire at the very instant of the schedule's creation or edit (again, if it
            # had just fired): the first fire time is strictly after it, the timetable's
            # rule rather than one of firing. Another schedule's fire made again then is
            # that schedule's firing rule's, not the command's.
            return "SC-003" if isinstance(latest, CreateCron) else "SC-017"
        if (extra and not missing and not once and str(record.trigger) == "schedule"
                and record.scheduled_for == state.created_at):
            # The same, made later (a scheduler started in the creation's minute fires
            # it): the creation instant is never a fire time of the schedule.
            return "SC-003"
        if extra and not missing:
            # Executions the oracle did not make: a burst when autonomy came back, a fire
            # while off, a fire taken twice (by a second scheduler or by the one). A manual
            # run at a fire time is not the same fire (its scheduled_for is its trigger's).
            if [r.scheduled_for for r in actual
                    if r.trigger == record.trigger].count(record.scheduled_for) > 1:
                if self.peer is not None:
                    return "SC-008"
                # One scheduler firing the end of a forward gap more than once: the gap's
                # wall times were not made the one fire SC-004 makes them.
                if "SC-004" in dst_requirements(record.scheduled_for, state.timezone):
                    return "SC-004"
                return "SC-006"
            if isinstance(latest, SetAutonomy) and latest.enabled:
                return "SC-011"
            if not self.oracle.autonomy:
                return "SC-010"
            for rid in dst_requirements(record.scheduled_for, state.timezone):
                return rid
            return "SC-002" if once else "SC-006"
        if missing and extra:
            if all(self._late_fire(state, r) for r in extra):
                # Fires of the timetable made after their time (one made late lands in
                # a later clock step, beside the fire due then and not made yet): the
                # right fires at the wrong time, not fires at another time.
                return "SC-002" if once else "SC-006"
            if any(self._taken_twice(actual, r) for r in extra):
                # A fire executed twice beside a fire missing (two schedulers that each
                # fire the one due and skip an earlier one): the doubled fire is a cause
                # of its own, not a fire moved to another time.
                return "SC-008" if self.peer is not None else "SC-006"
            for rid in dst_requirements(missing[0].scheduled_for, state.timezone):
                return rid
            return "SC-002" if once else "SC-003"  # a fire at another time than due
        if not self.oracle.autonomy:
            return "SC-010"
        for rid in dst_requirements(record.scheduled_for, state.timezone):
            return rid
        return "SC-002" if once else "SC-006"  # the right executions in the wrong order

    def _business_primary(self) -> str:
        """The rule a history breaks that differs only in business statuses and validation
        runs: the verdict's (SC-022; SC-023 for one that is no clear pass or fail) right
        after a verdict, else the start of validation at an end (SC-021)."""
        latest = self.commands[-1] if self.commands else None
        if isinstance(latest, EndValidation):
            return "SC-023" if Verdict(latest.verdict) in UNCLEAR_VERDICTS else "SC-022"
        return "SC-021"

    @staticmethod
    def _ends_differ(wanted: list[ExecutionRecord], actual: list[ExecutionRecord],
                     differing: list[ExecutionRecord]) -> bool:
        """Whether the histories hold the same executions but for how some ended: an end
        recorded on the wrong execution, overwritten, or lost (SC-019)."""
        def unended(records: list[ExecutionRecord]) -> Counter[ExecutionRecord]:
            return Counter(replace(without_business(r), outcome=None, cost=None)
                           for r in records)
        return (any(r.outcome is not None for r in differing)
                and unended(wanted) == unended(actual))

    @staticmethod
    def _late_fire(state: ScheduleState, record: ExecutionRecord) -> bool:
        """Whether `record` is a scheduled fire at one of the timetable's fire times,
        started after it."""
        when, started = record.scheduled_for, record.started_at
        if (str(record.trigger) != "schedule" or not isinstance(when, datetime)
                or not isinstance(started, datetime) or started <= when):
            return False
        if state.kind != CRON or state.expression is None or state.timezone is None:
            return True  # a one-shot job's one fire
        instant = when - timedelta(microseconds=1)
        return next(fire_times(state.expression, state.timezone, instant), None) == when

    @staticmethod
    def _taken_twice(actual: list[ExecutionRecord], record: ExecutionRecord) -> bool:
        """Whether the backend shows the scheduled fire of `record` more than once."""
        return str(record.trigger) != "manual" and sum(
            1 for r in actual if r.trigger == record.trigger
            and r.scheduled_for == record.scheduled_for) > 1

    def _compare_unnamed_histories(self, aliases: set[str],
                                   requirements: tuple[str, ...]) -> None:
        """A schedule the command did not name fired (late, twice, or not at all): its
        history, which a full observation reads first, tells which rule that breaks, rather
        than the command's own rule."""
        if self.touched is None:
            return
        for alias in sorted(aliases - self.touched):
            if alias in self.ids and alias in self.oracle.list():
                self._compare_history(alias, requirements)

    def _compare_calls(self, requirements: tuple[str, ...]) -> None:
        made, checked = self.calls.update(self.target, self.aliases)
        if not same_counts(made, self.oracle.dispatches):
            differing = sorted((made - self.oracle.dispatches) + (self.oracle.dispatches - made),
                               key=repr)
            self._compare_unnamed_histories({alias for alias, _, _ in differing}, requirements)
            blamed = (*requirements, "SC-006", "SC-008" if self.peer is not None else "SC-002")
            # A dispatch of a deleted schedule breaks the deletion, whatever else it breaks.
            gone = any(alias in self.deleted for alias, _, _ in differing)
            raise self._fail(blamed, f"dispatches made (differing: {differing})",
                             dict(self.oracle.dispatches), dict(made),
                             "SC-018" if gone else None)
        if not same_counts(checked, self.oracle.pre_checks):
            # A fire whose pre-check answered "skip" dispatches nothing: a late or second fire
            # of it shows only here, so it is classified as a differing dispatch is.
            self._compare_unnamed_histories(
                set((checked - self.oracle.pre_checks) + (self.oracle.pre_checks - checked)),
                requirements)
            raise self._fail((*requirements, "SC-009", "SC-012"), "pre-check calls, by schedule",
                             dict(self.oracle.pre_checks), dict(checked))
