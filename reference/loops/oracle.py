"""The oracle for sequential agent loops (seed 002 §38): pure values and functions.

A loop runs an agent with a message template up to `max_runs` times, one run after
another. Between runs it decides whether to go on, in one fixed order (`boundary_stop`);
after each run it decides whether the run itself ended the loop (`after_run`). Time
enters only as an explicit `now`: the model never reads a clock, so the same events at
the same instants always give the same loop.

The harness scripts how each run ends (`Respond`, `FailResult`, `RaiseError`); a run
with no scripted end by its per-run timeout fails as a timeout.

Every change of a loop emits events (LP-019, `events_between`): one `loop_run_completed`
per run that ended, in run order, then one `loop_completed` if the loop ended.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum

from jobconform.reference.numbers import is_finite_number, is_whole_number

PREVIOUS_RESPONSE_CHARS = 2000
MAX_RUNS_RANGE = (1, 100)
MAX_DURATION_RANGE = (1, 604_800)
MAX_CONSECUTIVE_FAILURES_RANGE = (1, 100)
TIMEOUT_PER_RUN_RANGE = (1, 7200)
DEFAULT_NO_PROGRESS_THRESHOLD = 3
DEFAULT_MAX_CONSECUTIVE_FAILURES = 3
TIMEOUT_ERROR = "TIMEOUT"
# The placeholders of a message template; both are replaced in one pass, so text put in
# by one (a response that contains "{{run}}") is never substituted again.
PLACEHOLDER = re.compile(r"\{\{(run|previous_response)\}\}")


class LoopStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    COMPLETED_WITH_ERRORS = "completed_with_errors"
    STOPPED = "stopped"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class StopReason(StrEnum):
    MAX_RUNS_REACHED = "max_runs_reached"
    STOP_SIGNAL_MATCHED = "stop_signal_matched"
    USER_STOPPED = "user_stopped"
    DEADLINE_EXCEEDED = "deadline_exceeded"
    BUDGET_EXHAUSTED = "budget_exhausted"
    NO_PROGRESS = "no_progress"
    ERROR = "error"
    MAX_CONSECUTIVE_FAILURES = "max_consecutive_failures"
    INTERRUPTED = "interrupted"


class RunStatus(StrEnum):
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


class OnFailure(StrEnum):
    ABORT = "abort"
    CONTINUE = "continue"


# -- parameters -------------------------------------------------------------------------


@dataclass(frozen=True)
class LoopParameters:
    """What a caller gives when it starts a loop; None leaves an optional limit off.

    `timeout_per_run_seconds` None means the runtime's default (the agent's configured
    execution timeout in the seed).
    """

    message: str
    max_runs: int
    stop_signal: str | None = None
    delay_seconds: float = 0.0
    timeout_per_run_seconds: float | None = None
    max_duration_seconds: int | None = None
    max_cost_usd: float | None = None
    no_progress_threshold: int = DEFAULT_NO_PROGRESS_THRESHOLD
    on_failure: str = OnFailure.ABORT.value
    max_consecutive_failures: int = DEFAULT_MAX_CONSECUTIVE_FAILURES


@dataclass(frozen=True)
class ParameterProblem:
    """One reason a loop was refused: the parameter, the value given, what is allowed."""

    parameter: str
    value: object
    allowed: str


class InvalidLoopParameters(ValueError):
    """A loop was refused; `problems` lists every parameter that is wrong, in a fixed order."""

    def __init__(self, problems: tuple[ParameterProblem, ...]) -> None:
        self.problems = problems
        super().__init__("; ".join(
            f"{p.parameter}={p.value!r} is invalid: {p.allowed}" for p in problems))


def _in_range(value: object, bounds: tuple[int, int]) -> bool:
    return is_whole_number(value) and bounds[0] <= value <= bounds[1]


def parameter_problems(params: LoopParameters,
                       default_timeout_per_run_seconds: float) -> tuple[ParameterProblem, ...]:
    """Everything wrong with `params`, in the order of the fields (empty when valid)."""
    problems: list[ParameterProblem] = []

    def refuse(name: str, allowed: str) -> None:
        problems.append(ParameterProblem(name, getattr(params, name), allowed))

    if not isinstance(params.message, str) or not params.message:
        refuse("message", "a non-empty template string")
    if not _in_range(params.max_runs, MAX_RUNS_RANGE):
        refuse("max_runs", "an integer from 1 to 100")
    if params.stop_signal is not None and (
            not isinstance(params.stop_signal, str) or not params.stop_signal):
        refuse("stop_signal", "a non-empty string, or null for no stop signal")
    if not is_finite_number(params.delay_seconds) or params.delay_seconds < 0:
        refuse("delay_seconds", "a finite number of seconds >= 0")
    timeout = params.timeout_per_run_seconds
    low, high = TIMEOUT_PER_RUN_RANGE
    if timeout is not None and not (is_finite_number(timeout) and low <= timeout <= high):
        refuse("timeout_per_run_seconds", "from 1 to 7200 seconds, or null for the default")
    duration = params.max_duration_seconds
    if duration is not None:
        if not _in_range(duration, MAX_DURATION_RANGE):
            refuse("max_duration_seconds", "an integer from 1 to 604800, or null for none")
        elif is_finite_number(timeout) or timeout is None:
            effective = default_timeout_per_run_seconds if timeout is None else timeout
            if duration < effective:
                refuse("max_duration_seconds",
                       f"at least the per-run timeout ({effective:g} s), or no run could finish")
    budget = params.max_cost_usd
    if budget is not None and not (is_finite_number(budget) and budget > 0):
        refuse("max_cost_usd", "a finite number > 0, or null for no budget")
    threshold = params.no_progress_threshold
    if not is_whole_number(threshold) or threshold < 0 or threshold == 1:
        refuse("no_progress_threshold",
               "0 (off) or an integer >= 2; 1 is refused since a repeat needs two runs")
    if params.on_failure not in {mode.value for mode in OnFailure}:
        refuse("on_failure", "'abort' or 'continue'")
    if not _in_range(params.max_consecutive_failures, MAX_CONSECUTIVE_FAILURES_RANGE):
        refuse("max_consecutive_failures", "an integer from 1 to 100")
    return tuple(problems)


def validate(params: LoopParameters, default_timeout_per_run_seconds: float) -> None:
    """Raises InvalidLoopParameters listing every problem of `params`."""
    problems = parameter_problems(params, default_timeout_per_run_seconds)
    if problems:
        raise InvalidLoopParameters(problems)


# -- how a run ends ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Respond:
    """The run succeeds with this response text (None: the agent sent none) and cost."""

    response: str | None
    cost: float | None = None


@dataclass(frozen=True)
class FailResult:
    """The run returns a non-success result (TIMEOUT, AGENT_ERROR, CIRCUIT_OPEN, AUTH)."""

    status: str
    cost: float | None = None


@dataclass(frozen=True)
class RaiseError:
    """Executing the run raises this error; a raised run reports no cost."""

    error_type: str
    message: str


RunOutcome = Respond | FailResult | RaiseError


def run_error(outcome: FailResult | RaiseError) -> str:
    """The error text a failed run records."""
    if isinstance(outcome, FailResult):
        return outcome.status
    return f"{outcome.error_type}: {outcome.message}" if outcome.message else outcome.error_type


def counted_cost(cost: float | None) -> float | None:
    """What a reported cost adds to the loop's spend: None when none was reported, 0.0 for
    a NaN, an infinity or a cost <= 0, else the cost itself."""
    if cost is None:
        return None
    return float(cost) if is_finite_number(cost) and cost > 0 else 0.0


def fingerprint(response: str | None) -> str:
    """SHA-256 of the response with whitespace runs collapsed and ends stripped."""
    normalized = " ".join((response or "").split())
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


def trailing(response: str) -> str:
    return response[-PREVIOUS_RESPONSE_CHARS:]


def render(template: str, run_number: int, previous_response: str) -> str:
    """The message of run `run_number`: placeholders replaced in one pass."""
    values = {"run": str(run_number), "previous_response": previous_response}
    return PLACEHOLDER.sub(lambda match: values[match.group(1)], template)


# -- the loop ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRecord:
    run_number: int
    message: str
    status: RunStatus
    started_at: datetime
    finished_at: datetime | None = None
    response: str | None = None
    cost: float | None = None  # the counted cost (see counted_cost)
    error: str | None = None


@dataclass(frozen=True)
class LoopState:
    params: LoopParameters
    timeout_per_run_seconds: float
    status: LoopStatus
    started_at: datetime
    runs: tuple[RunRecord, ...] = ()
    stop_reason: StopReason | None = None
    completed_at: datetime | None = None
    previous_response: str = ""
    last_response: str | None = None
    spent: float = 0.0
    failed_runs: int = 0
    failure_streak: int = 0
    last_fingerprint: str | None = None
    identical_streak: int = 0
    stop_requested: bool = False
    # When the inter-run delay ends; None while a run is in flight or once terminal.
    next_run_at: datetime | None = None
    cost_warnings: tuple[int, ...] = ()  # run numbers whose missing cost was logged

    @property
    def deadline(self) -> datetime | None:
        duration = self.params.max_duration_seconds
        return None if duration is None else self.started_at + timedelta(seconds=duration)

    @property
    def current_run(self) -> RunRecord | None:
        if self.runs and self.runs[-1].status is RunStatus.RUNNING:
            return self.runs[-1]
        return None

    @property
    def runs_completed(self) -> int:
        return sum(1 for run in self.runs if run.status in (RunStatus.SUCCEEDED,
                                                              RunStatus.FAILED))

    @property
    def total_cost(self) -> float:
        """Computed from the run records, never stored: missing costs count 0."""
        total = 0.0
        for run in self.runs:
            total += run.cost or 0.0
        return total

    def elapsed_seconds(self, now: datetime) -> float:
        end = self.completed_at if self.completed_at is not None else now
        return (end - self.started_at).total_seconds()

    @property
    def run_timeout_at(self) -> datetime | None:
        run = self.current_run
        if run is None:
            return None
        return run.started_at + timedelta(seconds=self.timeout_per_run_seconds)

    def next_due(self) -> datetime | None:
        """The next instant at which time alone changes this loop, if any."""
        if self.status is not LoopStatus.RUNNING:
            return None
        if self.current_run is not None:
            return self.run_timeout_at
        return self.next_run_at


def deadline_passed(loop: LoopState, now: datetime) -> bool:
    """The deadline is reached once elapsed time equals max_duration_seconds."""
    deadline = loop.deadline
    return deadline is not None and now >= deadline


def over_budget(loop: LoopState) -> bool:
    budget = loop.params.max_cost_usd
    return budget is not None and loop.spent >= budget


def boundary_stop(loop: LoopState, now: datetime) -> StopReason | None:
    """Why the loop must not start its next run: user stop, then deadline, then budget."""
    if loop.stop_requested:
        return StopReason.USER_STOPPED
    if deadline_passed(loop, now):
        return StopReason.DEADLINE_EXCEEDED
    if over_budget(loop):
        return StopReason.BUDGET_EXHAUSTED
    return None


def finish(loop: LoopState, reason: StopReason, now: datetime) -> LoopState:
    """End the loop with the status that goes with `reason`."""
    if reason in (StopReason.MAX_RUNS_REACHED, StopReason.STOP_SIGNAL_MATCHED):
        status = (LoopStatus.COMPLETED_WITH_ERRORS if loop.failed_runs
                  else LoopStatus.COMPLETED)
    elif reason in (StopReason.ERROR, StopReason.MAX_CONSECUTIVE_FAILURES):
        status = LoopStatus.FAILED
    elif reason is StopReason.INTERRUPTED:
        status = LoopStatus.INTERRUPTED
    else:
        status = LoopStatus.STOPPED
    return replace(loop, status=status, stop_reason=reason, completed_at=now, next_run_at=None)


def start_run(loop: LoopState, now: datetime) -> LoopState:
    number = len(loop.runs) + 1
    run = RunRecord(number, render(loop.params.message, number, loop.previous_response),
                    RunStatus.RUNNING, now)
    return replace(loop, runs=(*loop.runs, run), next_run_at=None)


def start(params: LoopParameters, default_timeout_per_run_seconds: float,
          now: datetime) -> LoopState:
    """A new loop with its first run in flight.

    Raises:
        InvalidLoopParameters: listing every invalid parameter.
    """
    validate(params, default_timeout_per_run_seconds)
    timeout = (default_timeout_per_run_seconds if params.timeout_per_run_seconds is None
               else float(params.timeout_per_run_seconds))
    loop = LoopState(params=params, timeout_per_run_seconds=timeout,
                     status=LoopStatus.RUNNING, started_at=now)
    return start_run(loop, now)


def record_run(loop: LoopState, outcome: RunOutcome, now: datetime) -> LoopState:
    """Close the in-flight run with `outcome`; counters only, no stop decision yet."""
    run = loop.current_run
    assert run is not None, "record_run needs a run in flight"
    warned = loop.cost_warnings
    if isinstance(outcome, Respond):
        cost = counted_cost(outcome.cost)
        closed = replace(run, status=RunStatus.SUCCEEDED, finished_at=now,
                         response=outcome.response, cost=cost)
        new_print = fingerprint(outcome.response)
        streak = loop.identical_streak + 1 if new_print == loop.last_fingerprint else 1
        loop = replace(loop, previous_response=trailing(outcome.response or ""),
                       last_response=outcome.response, failure_streak=0,
                       last_fingerprint=new_print, identical_streak=streak)
    else:
        cost = counted_cost(outcome.cost) if isinstance(outcome, FailResult) else None
        closed = replace(run, status=RunStatus.FAILED, finished_at=now, cost=cost,
                         error=run_error(outcome))
        loop = replace(loop, failed_runs=loop.failed_runs + 1,
                       failure_streak=loop.failure_streak + 1)
    if cost is None and loop.params.max_cost_usd is not None:
        warned = (*warned, run.run_number)
    return replace(loop, runs=(*loop.runs[:-1], closed), spent=loop.spent + (cost or 0.0),
                   cost_warnings=warned)


def after_run(loop: LoopState, outcome: RunOutcome, now: datetime) -> StopReason | None:
    """Whether the run that just ended ends the loop (before the natural end)."""
    if isinstance(outcome, Respond):
        signal = loop.params.stop_signal
        if signal is not None and outcome.response is not None and signal in outcome.response:
            return StopReason.STOP_SIGNAL_MATCHED
        threshold = loop.params.no_progress_threshold
        if threshold and loop.identical_streak >= threshold:
            # An explicit stop or a passed deadline is never relabelled "no progress".
            if loop.stop_requested:
                return StopReason.USER_STOPPED
            if deadline_passed(loop, now):
                return StopReason.DEADLINE_EXCEEDED
            return StopReason.NO_PROGRESS
        return None
    if loop.params.on_failure == OnFailure.ABORT.value:
        return StopReason.ERROR
    if loop.failure_streak >= loop.params.max_consecutive_failures:
        return StopReason.MAX_CONSECUTIVE_FAILURES
    return None


def between_runs(loop: LoopState, now: datetime) -> LoopState:
    """At a boundary with no run in flight: stop, wait out the delay, or start a run."""
    reason = boundary_stop(loop, now)
    if reason is not None:
        return finish(loop, reason, now)
    if loop.next_run_at is not None and now < loop.next_run_at:
        return loop
    return start_run(loop, now)


def end_run(loop: LoopState, outcome: RunOutcome, now: datetime) -> LoopState:
    """The in-flight run ended with `outcome` at `now`."""
    loop = record_run(loop, outcome, now)
    reason = after_run(loop, outcome, now)
    if reason is not None:
        return finish(loop, reason, now)
    if len(loop.runs) >= loop.params.max_runs:
        return finish(loop, StopReason.MAX_RUNS_REACHED, now)
    reason = boundary_stop(loop, now)
    if reason is not None:
        return finish(loop, reason, now)
    delay = timedelta(seconds=loop.params.delay_seconds)
    if not delay:
        return start_run(loop, now)
    wake = now + delay
    deadline = loop.deadline
    if deadline is not None and deadline < wake:
        wake = deadline  # the delay never sleeps past the deadline
    return replace(loop, next_run_at=wake)


def timeout_run(loop: LoopState, now: datetime) -> LoopState:
    return end_run(loop, FailResult(TIMEOUT_ERROR), now)


def advance_to(loop: LoopState, now: datetime) -> LoopState:
    """Apply every timer of the loop that is due at or before `now`, each at its instant."""
    while True:
        due = loop.next_due()
        if due is None or due > now:
            return loop
        loop = timeout_run(loop, due) if loop.current_run is not None else between_runs(loop, due)


def request_stop(loop: LoopState, now: datetime) -> tuple[str, LoopState]:
    """A graceful stop: "stopping" for a running loop, "already_done" otherwise.

    A run in flight finishes first; a loop waiting out its delay ends at once.
    """
    if loop.status is not LoopStatus.RUNNING:
        return "already_done", loop
    loop = replace(loop, stop_requested=True)
    if loop.current_run is None:
        loop = finish(loop, StopReason.USER_STOPPED, now)
    return "stopping", loop


def interrupt(loop: LoopState, now: datetime) -> LoopState:
    """Start-up recovery after a restart: a running loop ends interrupted, never resumes."""
    if loop.status is not LoopStatus.RUNNING:
        return loop
    runs = loop.runs
    if loop.current_run is not None:
        runs = (*runs[:-1], replace(runs[-1], status=RunStatus.INTERRUPTED, finished_at=now))
    return finish(replace(loop, runs=runs), StopReason.INTERRUPTED, now)


# -- events (LP-019) -------------------------------------------------------------------------

RUN_COMPLETED = "loop_run_completed"
LOOP_COMPLETED = "loop_completed"
ENDED_RUN_STATUSES = (RunStatus.SUCCEEDED, RunStatus.FAILED)


@dataclass(frozen=True)
class RunCompleted:
    """The event `loop_run_completed` of one ended run: its number, its counted cost, how
    long it took in milliseconds, and the status its record holds when the event is
    emitted (the event comes after the record is written). The loop id and the execution
    id are the runtime's own; the harness matches them."""

    run_number: int
    cost: float | None
    duration_ms: float
    status: RunStatus


@dataclass(frozen=True)
class LoopCompleted:
    """The event `loop_completed`: the loop ended with this status and stop reason, which
    its record holds when the event is emitted."""

    status: LoopStatus
    stop_reason: StopReason


LoopEvent = RunCompleted | LoopCompleted


def events_between(before: LoopState, after: LoopState) -> tuple[LoopEvent, ...]:
    """The events of one loop going from `before` to `after`: a `RunCompleted` for each
    run that ended in between (succeeded or failed; a run a restart interrupts did not
    complete), in run order, then a `LoopCompleted` if the loop ended."""
    ended = [run for run in after.runs if run.status in ENDED_RUN_STATUSES]
    events: list[LoopEvent] = []
    for run in ended[before.runs_completed:]:
        finished = run.finished_at if run.finished_at is not None else run.started_at
        events.append(RunCompleted(run.run_number, run.cost,
                                   (finished - run.started_at) / timedelta(milliseconds=1),
                                   run.status))
    if (before.status is LoopStatus.RUNNING and after.status is not LoopStatus.RUNNING
            and after.stop_reason is not None):
        events.append(LoopCompleted(after.status, after.stop_reason))
    return tuple(events)


# -- many loops ------------------------------------------------------------------------------


@dataclass
class LoopsModel:
    """The loops of one runtime, by the harness's aliases, in start order, with the events
    each loop has emitted so far, in order (LP-019)."""

    default_timeout_per_run_seconds: float
    loops: dict[str, LoopState] = field(default_factory=dict)
    events: dict[str, list[LoopEvent]] = field(default_factory=dict)

    def _change(self, alias: str, loop: LoopState) -> None:
        """Replace the loop's state, noting the events of the change."""
        self.events.setdefault(alias, []).extend(events_between(self.loops[alias], loop))
        self.loops[alias] = loop

    def start(self, alias: str, params: LoopParameters, now: datetime) -> LoopState:
        loop = start(params, self.default_timeout_per_run_seconds, now)
        self.loops[alias] = loop
        self.events[alias] = []
        return loop

    def next_due(self) -> datetime | None:
        dues = [due for loop in self.loops.values() if (due := loop.next_due()) is not None]
        return min(dues) if dues else None

    def advance_to(self, now: datetime) -> None:
        for alias, loop in self.loops.items():
            self._change(alias, advance_to(loop, now))

    def end_run(self, alias: str, outcome: RunOutcome, now: datetime) -> bool:
        """Script the in-flight run of a loop; False when it has none."""
        loop = self.loops[alias]
        if loop.status is not LoopStatus.RUNNING or loop.current_run is None:
            return False
        self._change(alias, end_run(loop, outcome, now))
        return True

    def request_stop(self, alias: str, now: datetime) -> str:
        answer, loop = request_stop(self.loops[alias], now)
        self._change(alias, loop)
        return answer

    def restart(self, now: datetime) -> None:
        for alias, loop in self.loops.items():
            self._change(alias, interrupt(loop, now))
