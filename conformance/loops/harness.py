"""The loops harness: every loop command goes to the backend and to the oracle.

After each command it settles the runtime and compares every loop it holds, field by
field, with the oracle's, plus the messages the agent actually received. The first
difference raises one `Divergence` naming the requirement(s) involved. A loop whose
oracle state and (sealed) view are the very objects that agreed last time is not
compared again (`Agreement`): most loops have ended, and most commands change one.

Time passes only through `PassTime`. The harness moves the clock to each instant at which
the oracle expects a timer (a per-run timeout, the end of a delay, a deadline that cuts a
delay short), settles the runtime there and compares, then moves on: a runtime that acts
at the wrong instant is caught at the first instant where the two disagree.

Where the backend claims loop-events, the runtime is opened with the harness's event sink,
and every comparison also checks each loop's events against the oracle's (LP-019): one
`loop_run_completed` per ended run, in run order, then one `loop_completed`, each emitted
once its state was written. No command of its own drives this; every command does.
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any, ClassVar, cast

from jobconform.backends.loops.protocol import (
    LOOPS,
    InvalidLoopParameters,
    LoopAgent,
    LoopNotFound,
    LoopRuntime,
    LoopsConfig,
    LoopSnapshot,
    RunSnapshot,
)
from jobconform.backends.loops.runner import LOOP_TRIGGER
from jobconform.backends.protocol import LOOP_EVENTS, LOOP_LABELS
from jobconform.conformance import read_ahead
from jobconform.conformance.area_harness import AreaHarness, check_time_step
from jobconform.conformance.sealed_views import ATOMS, FIXED_ZONES
from jobconform.conformance.sinks import LoopEventLog, LoopEventRecord
from jobconform.conformance.utc import WANTED, describe_offset, first_off_utc, in_utc
from jobconform.conformance.watchdog import guarded
from jobconform.reference.loops import commands as lc
from jobconform.reference.loops.oracle import (
    LOOP_COMPLETED,
    RUN_COMPLETED,
    TIMEOUT_ERROR,
    LoopCompleted,
    LoopEvent,
    LoopsModel,
    LoopState,
    LoopStatus,
    RunCompleted,
    RunRecord,
    RunStatus,
    StopReason,
)
from jobconform.spec import Profile

# Which requirement a stop reason (or the status that goes with it) belongs to.
REASON_REQUIREMENTS = {
    None: "LP-002",
    StopReason.MAX_RUNS_REACHED.value: "LP-004",
    StopReason.STOP_SIGNAL_MATCHED.value: "LP-005",
    StopReason.USER_STOPPED.value: "LP-006",
    StopReason.DEADLINE_EXCEEDED.value: "LP-007",
    StopReason.BUDGET_EXHAUSTED.value: "LP-011",
    StopReason.NO_PROGRESS.value: "LP-012",
    StopReason.ERROR.value: "LP-014",
    StopReason.MAX_CONSECUTIVE_FAILURES.value: "LP-015",
    StopReason.INTERRUPTED.value: "LP-017",
}
# Reasons that outrank no-progress when both hold (LP-013).
OUTRANK_NO_PROGRESS = {"user_stopped", "deadline_exceeded", "stop_signal_matched"}
# Costs are sums of the same floats in the same order; the tolerance only absorbs a
# database that rounds the last bit.
COST_TOLERANCE = 1e-9
# A run event's duration may be rounded or cut to whole milliseconds.
DURATION_TOLERANCE_MS = 1.0
# What a loop's field rests on where its stop reasons decide (`_loop_field_requirements`).
REASONS, STATUS, END, BUDGET_COST = "reasons", "status", "end", "budget cost"
# A run's fields compared with the oracle's record, in this order.
RUN_FIELDS = ("run_number", "message", "started_at", "status", "error", "finished_at",
              "response")
_RUN_VALUES = operator.attrgetter(*RUN_FIELDS)


# A loop's fields compared by plain equality, in `_compare_loop`'s order.
_PLAIN_LOOP_VALUES = operator.attrgetter("stop_reason", "status", "runs_completed",
                                         "failed_runs", "last_response", "started_at",
                                         "completed_at")


def _shows_plain_loop_values(loop: Any, values: tuple[object, ...]) -> bool:
    """Whether a loop's view shows `values` in the fields `_PLAIN_LOOP_VALUES` reads
    (one missing: False)."""
    try:
        return bool(values == _PLAIN_LOOP_VALUES(loop))
    except AttributeError:
        return False


def _shows_run_values(run: Any, values: tuple[object, ...]) -> bool:
    """Whether a run's view shows `values` in its RUN_FIELDS: all of them read and compared
    at once, the usual case (one missing: False)."""
    try:
        return bool(_RUN_VALUES(run) == values)
    except AttributeError:
        return False


# The fields of the protocol's loop and run snapshots that hold single values.
_LOOP_SINGLE_VALUES = operator.attrgetter(
    "loop_id", "status", "stop_reason", "started_at", "completed_at", "runs_completed",
    "failed_runs", "total_cost", "elapsed_seconds", "last_response")
_RUN_SINGLE_VALUES = operator.attrgetter(*RUN_FIELDS, "cost")


def _unchanging(values: tuple[object, ...]) -> bool:
    """Whether every value is an atom (sealed_views.ATOMS) or a datetime, naive or at a
    fixed offset."""
    for value in values:
        kind = type(value)
        if kind in ATOMS:
            continue
        if type(value) is datetime and type(value.tzinfo) in FIXED_ZONES:
            continue
        return False
    return True


def sealed_loop_view(view: object) -> bool:
    """Whether nothing the harness reads of a loop's view can change (as sealed_views
    says of a job's): the protocol's own frozen snapshot, its runs a tuple of the
    protocol's frozen run snapshots and its cost warnings a tuple of ints, every value
    in them immutable."""
    if type(view) is not LoopSnapshot:
        return False
    runs, warnings = view.runs, view.cost_warnings
    return (type(runs) is tuple and type(warnings) is tuple
            and all(type(number) is int for number in warnings)
            and _unchanging(_LOOP_SINGLE_VALUES(view))
            and all(type(run) is RunSnapshot and _unchanging(_RUN_SINGLE_VALUES(run))
                    for run in runs))


@dataclass(frozen=True)
class Agreement:
    """What the latest comparison of one loop read where it found no difference: the
    oracle's state (frozen, replaced on every change), the backend's sealed view, the
    instant where the loop's elapsed time runs to now (None once the oracle's loop has
    ended), and how many runs the agent had been called for (messages, labels). While
    all of them are the same, comparing again would find what it found then; get_loop,
    which agreed with the view then, is asked again once the view changes (a runtime
    reads a loop the same way until it changes)."""

    state: LoopState
    view: object
    at: datetime | None
    calls: tuple[int, int]

    def holds(self, state: LoopState, view: object, at: datetime | None,
              calls: tuple[int, int]) -> bool:
        """Whether a comparison now would read what this one read. The state and the
        view must be the very objects: an equal view may show its instants at another
        offset (LP-018)."""
        return (state is self.state and view is self.view and at == self.at
                and calls == self.calls)


# How a run event's execution id shows when it is a non-empty string no other run's event
# carries (LP-019); the runtime chooses the id, so only that is compared.
OWN_EXECUTION = "<an execution id of its own>"


def default_timeout(profile: Profile) -> float:
    value = profile.parameter(LOOPS, "default_timeout_per_run_seconds")
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"profile {profile.name!r}: loops.default_timeout_per_run_seconds"
                         f" must be a number > 0, not {value!r}")
    return float(value)


def reason_requirements(expected: str | None, actual: object) -> tuple[str, ...]:
    """The requirements a wrong status or stop reason breaks."""
    ids = [REASON_REQUIREMENTS.get(expected, "LP-004")]
    if isinstance(actual, str) and actual in REASON_REQUIREMENTS:
        ids.append(REASON_REQUIREMENTS[actual])
    pair = {expected, actual}
    if "no_progress" in pair and pair & OUTRANK_NO_PROGRESS:
        ids.insert(0, "LP-013")
    elif (expected in (None, StopReason.MAX_RUNS_REACHED.value) and isinstance(actual, str)
          and actual != expected and actual in REASON_REQUIREMENTS):
        # Still running, or a natural end: no other reason held, so the one the backend
        # gave fired where it must not.
        ids.insert(0, REASON_REQUIREMENTS[actual])
    elif expected is not None and isinstance(actual, str) and actual != expected:
        ids.insert(0, "LP-004")  # both stop reasons hold: the order picks one
    return tuple(ids)


def same_cost(expected: float | None, actual: object) -> bool:
    if expected is None or actual is None:
        return expected is actual
    return (isinstance(actual, int | float) and not isinstance(actual, bool)
            and math.isfinite(actual) and abs(actual - expected) <= COST_TOLERANCE)


def same_warnings(expected: tuple[int, ...], actual: object) -> bool:
    return tuple(cast(Any, actual)) == expected if isinstance(actual, list | tuple) else False


def same_elapsed(expected: float, actual: object) -> bool:
    return isinstance(actual, int | float) and abs(float(actual) - expected) < 1e-6


def run_event_matches(event: tuple[object, ...], run_number: int, status: str,
                      cost: float | None, duration_ms: float) -> bool:
    """Whether `event` (a form of `LoopsHarness.loop_events`) is the loop_run_completed of
    run `run_number`, with an execution id of its own, this cost and duration (within
    tolerance), and the run recorded with `status` when it came."""
    if len(event) != 6 or event[0] != RUN_COMPLETED:
        return False
    _, number, execution, got_cost, duration, seen = event
    return (number == run_number and execution == OWN_EXECUTION and same_cost(cost, got_cost)
            and isinstance(duration, int | float) and not isinstance(duration, bool)
            and abs(duration - duration_ms) < DURATION_TOLERANCE_MS and seen == status)


def loop_event_matches(event: tuple[object, ...], status: str, stop_reason: str) -> bool:
    """Whether `event` is the loop_completed naming this status and stop reason, with the
    loop recorded so when it came."""
    return tuple(event) == (LOOP_COMPLETED, status, stop_reason, status, stop_reason)


@dataclass
class LoopsHarness(AreaHarness[lc.LoopCommand]):
    """Differential execution of loop commands on one backend and the oracle."""

    AREA: ClassVar[str] = LOOPS
    PASSES_THROUGH: ClassVar[tuple[type[Exception], ...]] = (InvalidLoopParameters,
                                                             LoopNotFound)

    refused: set[str] = field(default_factory=set)  # aliases of loops the oracle refused

    def __post_init__(self) -> None:
        self._require_area()
        self.config = LoopsConfig(default_timeout(self.profile))
        self.model = LoopsModel(self.config.default_timeout_per_run_seconds)
        self.ids: dict[str, str] = {}  # alias -> backend id
        self.agents: dict[str, LoopAgent] = {}
        self.last_answer: object = None
        opener = self._opener("clock, config; see backends/loops/protocol.py")
        # Only a backend claiming loop-events is handed the event sink (LP-019); any other
        # is opened with two arguments, as before, and LP-019 is "not claimed".
        self.events: LoopEventLog | None = (
            LoopEventLog() if LOOP_EVENTS in self.backend.capabilities else None)
        events = self.events
        # Each run's execution labelled as its loop's (LP-020): read only where claimed.
        self.labels_claimed = LOOP_LABELS in self.backend.capabilities
        # Execution ids of run events -> the (loop alias, run number) first seen with them.
        self._executions: dict[str, tuple[str, object]] = {}
        # Per loop alias, the events (the runtime's, the oracle's) taken as they are after
        # a listed deviation was adopted; only later ones are compared.
        self._events_adopted: dict[str, tuple[int, int]] = {}
        # The sink's events sorted by loop id so far (`_sorted_records`), and how many of
        # them were found to name a loop id start_loop returned.
        self._records_by_loop: dict[str, list[LoopEventRecord]] = {}
        self._records_sorted = 0
        self._records_known = 0
        # Per loop alias, how many events (after the adopted ones) agreed with the oracle's
        # at the latest comparison: while neither side has more, they agree still.
        self._events_agreed: dict[str, int] = {}
        # Per loop alias, its latest comparison that agreed (its view and get_loop's
        # status), where its view was sealed: the loop is read again only once its state
        # or its view changed.
        self._agreed: dict[str, Agreement] = {}
        self._aliases: dict[str, str] = {}  # backend id -> alias, as `ids` (which only grows)
        self.runtime: LoopRuntime = self._open(
            lambda: cast(LoopRuntime, (opener(self.clock, self.config) if events is None
                                       else opener(self.clock, self.config, events))))
        if events is not None:
            events.read = self.runtime.get_loop
        # Whether the runtime answers planned reads together (one behind a pipe); the
        # plan is built only for such a one.
        self._plans_reads = callable(getattr(self.runtime, "plan_reads", None))

    # -- running commands ------------------------------------------------------------------

    def run(self, command: lc.LoopCommand) -> object:
        """Apply `command` to both sides and compare everything.

        Raises:
            Divergence: the backend differs from the oracle.
            AdapterError: the adapter raised outside its contract or hung.
            ValueError: the command is malformed (an alias reused or unknown).
        """
        self._check(command)
        self.commands.append(command)
        with guarded(self.safety_timeout, partial(lc.describe_loop_command, command),
                     self.hang_scope):
            if isinstance(command, lc.PassTime):
                self._pass_time(command.seconds)
                self.last_answer = None
                return None
            in_flight = self._in_flight_run(command)
            expected, requirements = self._apply_to_model(command)
            actual = self._apply_to_backend(command, in_flight)
            self.last_answer = actual
            self.exercised.update(requirements)
            self.listed.check(len(self.commands),
                              functools.partial(self._compare_answer, command, requirements,
                                                expected, actual),
                              self.observe, self._adopt)
        return actual

    def run_oracle(self, command: lc.LoopCommand) -> object:
        """The command applied to the oracle alone, the clock moved as `_apply` moves it:
        the oracle's answer (the cost floor, see machine_runner.oracle_alone)."""
        self._check(command)
        self.commands.append(command)
        if isinstance(command, lc.PassTime):
            self._pass_time(command.seconds, self._move_oracle_to)
            return None
        return self._apply_to_model(command)[0]

    def _move_oracle_to(self, instant: datetime) -> None:
        step = (instant - self._now()).total_seconds()
        if step > 0:
            self.clock.advance(step)
        self.model.advance_to(instant)

    def _compare_answer(self, command: lc.LoopCommand, requirements: tuple[str, ...],
                        expected: object, actual: object) -> None:
        if expected != actual:
            raise self._fail(requirements, f"the answer to"
                             f" {lc.describe_loop_command(command)}", expected, actual)

    def _adopt(self) -> None:
        """After a listed deviation the oracle takes each loop as the backend lists it:
        its status, stop reason, end, runs and counters (a loop it cannot read in the
        spec's terms is left as the oracle has it)."""
        aliases = {loop_id: alias for alias, loop_id in self.ids.items()}
        for view in self._call("list_loops", self.runtime.list_loops):
            alias = aliases.get(str(getattr(view, "loop_id", "?")))
            loop = self.model.loops.get(alias) if alias is not None else None
            if alias is None or loop is None:
                continue
            try:
                status = LoopStatus(view.status)
                reason = None if view.stop_reason is None else StopReason(view.stop_reason)
                runs = tuple(RunRecord(run.run_number, run.message, RunStatus(run.status),
                                       run.started_at, run.finished_at, run.response,
                                       run.cost, run.error) for run in view.runs)
            except (AttributeError, TypeError, ValueError):
                continue
            ended = status is not LoopStatus.RUNNING
            self.model.loops[alias] = replace(
                loop, status=status, stop_reason=reason, completed_at=view.completed_at,
                runs=runs, last_response=view.last_response, failed_runs=view.failed_runs,
                cost_warnings=tuple(view.cost_warnings),
                next_run_at=None if ended else loop.next_run_at)
        self._adopt_events()

    def _to_close(self) -> list[LoopRuntime]:
        return [self.runtime]

    def _check(self, command: lc.LoopCommand) -> None:
        if isinstance(command, lc.StartLoop) and (command.loop in self.model.loops
                                                  or command.loop in self.refused):
            raise ValueError(f"loop alias {command.loop!r} is already used; pick a new one")
        if isinstance(command, lc.EndRun | lc.StopLoop | lc.ReadLoop) and (
                command.loop not in self.model.loops and command.loop not in self.refused):
            raise ValueError(f"no loop {command.loop!r} was started in this check")
        if isinstance(command, lc.PassTime):
            check_time_step(command.seconds)

    def _now(self) -> datetime:
        return self.clock.now()

    def _apply_to_model(self, command: lc.LoopCommand) -> tuple[object, tuple[str, ...]]:
        model, now = self.model, self._now()
        before = dict(model.loops)
        match command:
            case lc.StartLoop():
                try:
                    model.start(command.loop, command.params, now)
                except InvalidLoopParameters as error:
                    self.refused.add(command.loop)
                    return lc.Refused(tuple(p.parameter for p in error.problems)), ("LP-001",)
                return lc.STARTED, ("LP-001", "LP-002", *self._changes(before))
            case lc.EndRun():
                if command.loop in model.loops:
                    model.end_run(command.loop, command.outcome, now)
                return None, self._changes(before)
            case lc.StopLoop():
                if command.loop not in model.loops:
                    return lc.NOT_FOUND, ("LP-006",)
                return model.request_stop(command.loop, now), ("LP-006", *self._changes(before))
            case lc.RestartLoops():
                model.restart(now)
                return None, ("LP-017", *self._changes(before))
            case lc.ReadLoop():
                return None, ("LP-018",)
        raise ValueError(f"not a loop command: {command!r}")

    def _changes(self, before: dict[str, LoopState]) -> tuple[str, ...]:
        """The requirements that what just happened in the oracle exercised."""
        ids: list[str] = []
        for alias, loop in self.model.loops.items():
            old = before.get(alias)
            # The oracle keeps a loop's very state while nothing changes it.
            if old is loop or (old is not None and old == loop):
                continue
            if len(loop.runs) > 1:
                ids += ["LP-002", "LP-003"]
            if loop.params.delay_seconds and len(loop.runs) > 1:
                ids.append("LP-008")
            if any(run.error == TIMEOUT_ERROR for run in loop.runs):
                ids.append("LP-009")
            if loop.cost_warnings or any(run.cost is not None for run in loop.runs):
                ids.append("LP-010")
            if loop.failed_runs:
                ids.append("LP-014" if loop.params.on_failure == "abort" else "LP-015")
            if loop.stop_reason is not None:
                ids.append(REASON_REQUIREMENTS[loop.stop_reason.value])
                ids.append("LP-004")
            if loop.status is LoopStatus.COMPLETED_WITH_ERRORS:
                ids.append("LP-016")
            if loop.params.no_progress_threshold and loop.identical_streak > 1:
                ids.append("LP-012")
            if loop.stop_reason in (StopReason.USER_STOPPED, StopReason.DEADLINE_EXCEEDED) \
                    and loop.params.no_progress_threshold \
                    and loop.identical_streak >= loop.params.no_progress_threshold:
                ids.append("LP-013")
            if loop.stop_reason is StopReason.BUDGET_EXHAUSTED or (
                    loop.params.max_cost_usd is not None and loop.stop_reason is not None):
                ids.append("LP-011")
        return tuple(dict.fromkeys(ids))

    def _in_flight_run(self, command: lc.LoopCommand) -> int | None:
        """The number of the run an EndRun scripts: the one the oracle has in flight."""
        if not isinstance(command, lc.EndRun):
            return None
        loop = self.model.loops.get(command.loop)
        run = None if loop is None or loop.status is not LoopStatus.RUNNING else loop.current_run
        return None if run is None else run.run_number

    def _apply_to_backend(self, command: lc.LoopCommand, in_flight: int | None) -> object:
        runtime = self.runtime
        match command:
            case lc.StartLoop():
                new_agent = LoopAgent()
                params = command.params
                try:
                    loop_id = self._call("start_loop",
                                         lambda: runtime.start_loop(params, new_agent))
                except InvalidLoopParameters as error:
                    return lc.Refused(tuple(p.parameter for p in error.problems))
                if loop_id in self.ids.values():
                    raise self._fail(("LP-002",), "start_loop returned an id already in use",
                                     "a new id", loop_id)
                self.ids[command.loop] = loop_id
                self.agents[command.loop] = new_agent
                return lc.STARTED
            case lc.EndRun():
                agent = self.agents.get(command.loop)
                if agent is not None and in_flight is not None:
                    agent.decide(in_flight, command.outcome)
            case lc.StopLoop():
                loop_id = self.ids.get(command.loop, f"unknown-{command.loop}")
                try:
                    return self._call("stop_loop", lambda: runtime.stop_loop(loop_id))
                except LoopNotFound:
                    return lc.NOT_FOUND
            case lc.RestartLoops():
                self._call("restart", runtime.restart)
            case lc.ReadLoop():
                pass
        return None

    def _pass_time(self, seconds: float,
                   move_to: Callable[[datetime], None] | None = None) -> None:
        """Move the clock through every instant at which the oracle expects a timer (with
        `move_to`, both sides compared at each by default)."""
        move = move_to or self._move_to
        target = self._now() + timedelta(seconds=seconds)
        while True:
            due = self.model.next_due()
            if due is None or due > target:
                break
            move(due)
        move(target)

    def _move_to(self, instant: datetime) -> None:
        before = dict(self.model.loops)
        step = (instant - self._now()).total_seconds()
        if step > 0:
            self.clock.advance(step)
        self.model.advance_to(instant)
        self.exercised.update(self._changes(before))
        self.listed.check(len(self.commands), observe=self.observe, adopt=self._adopt)

    # -- comparing -------------------------------------------------------------------------

    def observe(self) -> None:
        """Settle the runtime, then compare every loop with the oracle: each loop whose
        oracle state or view changed since they last agreed (see `Agreement`)."""
        runtime = self.runtime
        if self._plans_reads:
            read_ahead.plan_reads([(runtime, "settle", {}), (runtime, "list_loops", {}),
                                   *((runtime, "get_loop", {"loop_id": self.ids[alias]})
                                     for alias in self.model.loops if alias in self.ids)])
        self._call("settle", runtime.settle)
        now = self._now()
        views = list(self._call("list_loops", runtime.list_loops))
        if len(self._aliases) != len(self.ids):
            self._aliases = {loop_id: alias for alias, loop_id in self.ids.items()}
        aliases = self._aliases
        listed = [aliases.get(str(getattr(view, "loop_id", "?")), "<an id never returned>")
                  for view in views]
        loops = self.model.loops
        if listed != list(loops):
            raise self._fail(("LP-002",), "the loops held, in start order", list(loops),
                             listed)
        changed: list[str] = []
        for alias, view in zip(listed, views, strict=True):
            loop = loops[alias]
            agent = self.agents.get(alias)
            calls = (0, 0) if agent is None else (len(agent.received), len(agent.labels))
            at = now if loop.completed_at is None else None
            agreed = self._agreed.get(alias)
            if agreed is not None and agreed.holds(loop, view, at, calls):
                continue
            changed.append(alias)
            self._compare_loop(alias, loop, view, now)
            single = self._call("get_loop", functools.partial(runtime.get_loop,
                                                              self.ids[alias]))
            if single is None or getattr(single, "status", None) != getattr(view, "status",
                                                                             None):
                raise self._fail(("LP-002",), f"get_loop({alias!r}) against list_loops",
                                 getattr(view, "status", None), getattr(single, "status", None))
            if sealed_loop_view(view):
                self._agreed[alias] = Agreement(loop, view, at, calls)
        self._compare_events(changed)

    # -- loop events (LP-019) --------------------------------------------------------------

    @property
    def emits_events(self) -> bool:
        """Whether the backend claims loop-events, so LP-019 is checked on it."""
        return self.events is not None

    def loop_events(self, alias: str) -> list[tuple[object, ...]]:
        """The events the runtime emitted for loop `alias` so far, in order, in the form
        the harness compares: ("loop_run_completed", run number, the execution id (as
        OWN_EXECUTION when it is a run's own), cost, duration in ms, the run's status as
        recorded when the event came) or ("loop_completed", status, stop reason, the
        loop's status and stop reason as recorded when it came); [] without loop-events."""
        return [self._event_form(alias, record, None) for record in self._records_of(alias)]

    def _records_of(self, alias: str) -> list[LoopEventRecord]:
        loop_id = self.ids.get(alias)
        if self.events is None or loop_id is None:
            return []
        return list(self._sorted_records(self.events.events()).get(loop_id, ()))

    def _sorted_records(self, records: list[LoopEventRecord]
                        ) -> dict[str, list[LoopEventRecord]]:
        """The sink's `records` (every event so far) by loop id, in order; those sorted
        before are not sorted again (the sink only appends)."""
        for record in records[self._records_sorted:]:
            self._records_by_loop.setdefault(record.loop_id, []).append(record)
        self._records_sorted = max(self._records_sorted, len(records))
        return self._records_by_loop

    def _expected_form(self, event: LoopEvent) -> tuple[object, ...]:
        if isinstance(event, RunCompleted):
            return (RUN_COMPLETED, event.run_number, OWN_EXECUTION, event.cost,
                    event.duration_ms, event.status.value)
        assert isinstance(event, LoopCompleted)
        return (LOOP_COMPLETED, event.status.value, event.stop_reason.value,
                event.status.value, event.stop_reason.value)

    def _event_form(self, alias: str, record: LoopEventRecord,
                    counterpart: LoopEvent | None) -> tuple[object, ...]:
        """A runtime's event as compared: a cost or a duration that matches the oracle's
        counterpart within tolerance shows as the oracle's value; anything else as is."""
        if record.kind == LOOP_COMPLETED:
            return (LOOP_COMPLETED, *record.values, *record.seen)
        if record.kind != RUN_COMPLETED or len(record.values) != 4:
            return (record.kind, *record.values, *record.seen)
        number, execution, cost, duration = record.values
        if isinstance(counterpart, RunCompleted):
            if same_cost(counterpart.cost, cost):
                cost = counterpart.cost
            if (isinstance(duration, int | float) and not isinstance(duration, bool)
                    and abs(duration - counterpart.duration_ms) < DURATION_TOLERANCE_MS):
                duration = counterpart.duration_ms
        return (RUN_COMPLETED, number, self._execution_form(alias, number, execution),
                cost, duration, *record.seen)

    def _execution_form(self, alias: str, run_number: object, execution: object) -> object:
        """OWN_EXECUTION for a non-empty string first seen with this loop's run; else the
        id as given, with the run it already belongs to."""
        if not isinstance(execution, str) or not execution:
            return execution
        owner = self._executions.setdefault(execution, (alias, run_number))
        if owner == (alias, run_number):
            return OWN_EXECUTION
        return f"{execution!r}, already the execution of loop {owner[0]!r} run {owner[1]}"

    def _compare_events(self, changed: list[str]) -> None:
        """Each loop's events so far against the oracle's, in order (LP-019); an event
        for a loop id the runtime never returned is one too many. Only the loops that
        have new events on either side are compared: those in `changed` (whose oracle
        state or view changed; the oracle notes events only as a loop's state changes)
        and those the runtime emitted for since."""
        if self.events is None:
            return
        aliases: Iterable[str] = changed
        if self.events.count() != self._records_known:
            every = self.events.events()
            fresh = every[self._records_known:]
            # The events found known before stay known (start_loop's ids are never
            # forgotten); `observe` brought `_aliases` up to date.
            known = self._aliases
            stray = [record for record in fresh if record.loop_id not in known]
            if stray:
                raise self._fail(("LP-019",), "loop events for loop ids start_loop never"
                                 " returned", [], stray)
            self._records_known = len(every)
            self._sorted_records(every)
            emitted = {known[record.loop_id] for record in fresh}
            aliases = [alias for alias in self.model.events
                       if alias in emitted or alias in changed]
        by_loop = self._records_by_loop
        for alias in aliases:
            expected_events = self.model.events.get(alias)
            if expected_events is None or alias not in self.ids:
                continue
            if expected_events:
                self.exercised.add("LP-019")
            skip_actual, skip_expected = self._events_adopted.get(alias, (0, 0))
            held = by_loop.get(self.ids[alias], [])
            agreed = self._events_agreed.get(alias, 0)
            if len(held) - skip_actual == agreed == len(expected_events) - skip_expected:
                continue  # nothing new on either side since they agreed (both only grow)
            # The first `agreed` events agreed, and each shows as it did then: only the
            # later ones are formed, all of them only for a difference's message.
            expected = expected_events[skip_expected:]
            records = held[skip_actual:]
            if (self._actual_forms(alias, records, expected, agreed)
                    != [self._expected_form(event) for event in expected[agreed:]]):
                raise self._fail(
                    ("LP-019",), f"the events of loop {alias!r}: (event, run, execution,"
                    " cost, duration ms, the run's status when emitted) or (event, status,"
                    " stop reason, the loop's status and stop reason when emitted)",
                    [self._expected_form(event) for event in expected],
                    self._actual_forms(alias, records, expected, 0))
            self._events_agreed[alias] = len(records)

    def _actual_forms(self, alias: str, records: list[LoopEventRecord],
                      expected: list[LoopEvent], start: int) -> list[tuple[object, ...]]:
        """The forms of the runtime's `records` of a loop from index `start` on, each
        against the oracle's event at its index (`_event_form`)."""
        return [self._event_form(alias, records[index],
                                 expected[index] if index < len(expected) else None)
                for index in range(start, len(records))]

    def _adopt_events(self) -> None:
        """After a listed deviation: each loop's events so far are taken as they are."""
        for alias, expected in self.model.events.items():
            self._events_adopted[alias] = (len(self._records_of(alias)), len(expected))
            self._events_agreed[alias] = 0

    def _compare_loop(self, alias: str, loop: LoopState, view: Any, now: datetime) -> None:
        reason = None if loop.stop_reason is None else loop.stop_reason.value
        actual_reason = getattr(view, "stop_reason", "<missing>")

        def check(name: str, expected: object, ids: tuple[str, ...] | str,
                  same: Callable[[Any, Any], bool] | None = None) -> None:
            actual = getattr(view, name, "<missing>")
            if not (expected == actual if same is None else same(expected, actual)):
                raise self._fail(self._loop_field_requirements(ids, loop, view, reason,
                                                               actual_reason),
                                 f"loop {alias!r} {name}", expected, actual)

        if (reason != actual_reason and StopReason.BUDGET_EXHAUSTED.value in (
                reason, actual_reason)):
            # The budget followed a spend counted otherwise: the costs that count (LP-010)
            # before the budget's rule (issue 33: the cause before its consequence).
            check("total_cost", loop.total_cost, BUDGET_COST, same_cost)
        plain = (reason, loop.status.value, loop.runs_completed, loop.failed_runs,
                 loop.last_response, loop.started_at, loop.completed_at)
        if _shows_plain_loop_values(view, plain):
            # Every field compared by equality agrees: the rest, in the order below.
            self._compare_runs(alias, loop, view)
            check("total_cost", loop.total_cost, ("LP-010",), same_cost)
            check("cost_warnings", loop.cost_warnings, ("LP-010",), same_warnings)
        else:
            check("stop_reason", reason, REASONS)
            check("status", loop.status.value, STATUS)
            self._compare_runs(alias, loop, view)
            check("runs_completed", loop.runs_completed, ("LP-002",))
            check("failed_runs", loop.failed_runs, ("LP-016", "LP-015"))
            check("total_cost", loop.total_cost, ("LP-010",), same_cost)
            check("cost_warnings", loop.cost_warnings, ("LP-010",), same_warnings)
            check("last_response", loop.last_response, ("LP-002",))
            check("started_at", loop.started_at, ("LP-018",))
            check("completed_at", loop.completed_at, END)
        check("elapsed_seconds", loop.elapsed_seconds(now), ("LP-018",), same_elapsed)
        # The right instant at another offset compares equal: LP-018 asks for UTC.
        for name in ("started_at", "completed_at"):
            value = getattr(view, name, None)
            if in_utc(value):
                continue
            off = first_off_utc(value, f"loop {alias!r} {name}")
            if off is not None:
                raise self._fail(("LP-018",), f"{off[0]} as a UTC instant", WANTED,
                                 describe_offset(off[1]))

    @staticmethod
    def _loop_field_requirements(ids: tuple[str, ...] | str, loop: LoopState, view: Any,
                                 reason: str | None, actual_reason: object
                                 ) -> tuple[str, ...]:
        """The requirements of a loop's field: `ids`, or those its stop reasons name
        (REASONS, STATUS, END, BUDGET_COST); built only for a difference (issue 33)."""
        if not isinstance(ids, str):
            return ids
        reasons = reason_requirements(reason, actual_reason)
        if ids == BUDGET_COST:
            return ("LP-010", *reasons)
        if ids == END:
            return ("LP-018", *reasons[:1])
        if ids == STATUS and LoopStatus.COMPLETED_WITH_ERRORS.value in (
                loop.status.value, getattr(view, "status", None)):
            return ("LP-016", *reasons)
        return reasons

    def _compare_runs(self, alias: str, loop: LoopState, view: Any) -> None:
        runs = list(getattr(view, "runs", ()))
        expected_runs = loop.runs
        if len(runs) != len(expected_runs):
            reason = None if loop.stop_reason is None else loop.stop_reason.value
            actual_reason = getattr(view, "stop_reason", None)
            raise self._fail((*reason_requirements(reason, actual_reason), "LP-002"),
                             f"loop {alias!r} number of runs", len(expected_runs), len(runs))
        agent = self.agents.get(alias)
        for expected, actual in zip(expected_runs, runs, strict=True):
            self._compare_run(alias, loop, expected, actual, agent)

    def _compare_run(self, alias: str, loop: LoopState, expected: RunRecord, actual: Any,
                     agent: LoopAgent | None) -> None:
        values = (expected.run_number, expected.message, expected.started_at,
                  expected.status.value, expected.error, expected.finished_at,
                  expected.response)
        if not _shows_run_values(actual, values):  # then find the first field that differs
            for name, value in zip(RUN_FIELDS, values, strict=True):
                got = getattr(actual, name, "<missing>")
                if got != value:
                    raise self._fail(self._run_field_requirements(loop, expected, name),
                                     f"{self._run_where(alias, expected)} {name}", value, got)
        # The right instant at another offset compares equal: LP-002 asks for UTC.
        for name in ("started_at", "finished_at"):
            instant = getattr(actual, name, None)
            if in_utc(instant):
                continue
            off = first_off_utc(instant, f"{self._run_where(alias, expected)} {name}")
            if off is not None:
                raise self._fail(("LP-002",), f"{off[0]} as a UTC instant", WANTED,
                                 describe_offset(off[1]))
        got_cost = getattr(actual, "cost", "<missing>")
        if not same_cost(expected.cost, got_cost):
            raise self._fail(("LP-010",), f"{self._run_where(alias, expected)} cost",
                             expected.cost, got_cost)
        if agent is not None and expected.run_number in agent.received:
            sent = agent.received[expected.run_number]
            if sent != expected.message:
                raise self._fail(self._message_requirements(loop, expected.run_number),
                                 f"{self._run_where(alias, expected)}: the message the agent"
                                 " received", expected.message, sent)
        if self.labels_claimed and agent is not None and expected.run_number in agent.labels:
            wanted = (LOOP_TRIGGER, self.ids[alias])
            labels = agent.labels[expected.run_number]
            if labels != wanted:
                raise self._fail(("LP-020",), f"{self._run_where(alias, expected)}: its"
                                 " execution's (triggered_by, loop_id) as the agent was"
                                 " called", wanted, labels)
            self.exercised.add("LP-020")

    def _run_field_requirements(self, loop: LoopState, run: RunRecord,
                                name: str) -> tuple[str, ...]:
        """The requirements a run's field `name` rests on (built only for a difference)."""
        if name == "message":
            return self._message_requirements(loop, run.run_number)
        if name == "started_at":
            return ("LP-002",) + (("LP-008",) if loop.params.delay_seconds else ()) + (
                ("LP-007",) if loop.params.max_duration_seconds else ())
        if name in ("status", "error"):
            return self._run_status_requirements(loop, run)
        if name == "finished_at":
            return ("LP-002", "LP-009") if run.error == TIMEOUT_ERROR else ("LP-002",)
        return ("LP-002",)  # run_number, response

    @staticmethod
    def _run_where(alias: str, run: RunRecord) -> str:
        return f"loop {alias!r} run {run.run_number}"

    def _message_requirements(self, loop: LoopState, run_number: int) -> tuple[str, ...]:
        template = loop.params.message
        ids = ["LP-002"] if "{{run}}" in template else []
        if "{{previous_response}}" in template and run_number > 1:
            ids.insert(0, "LP-003")
        return tuple(ids) or ("LP-002",)

    def _run_status_requirements(self, loop: LoopState, run: RunRecord) -> tuple[str, ...]:
        if run.error == TIMEOUT_ERROR:
            return ("LP-009",)
        if run.status.value == "interrupted":
            return ("LP-017",)
        return ("LP-014", "LP-002")
