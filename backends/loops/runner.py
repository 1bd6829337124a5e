"""The loop runner's rules, shared by the shipped loop runtimes (memory, SQL, threaded).

This is the backends' own implementation of seed 002 §38, written the way a service
would: a stored loop row with its run rows, plus what the running process keeps only in
memory (the spend accumulator, the no-progress fingerprint, the failure streak). The
runtimes decide WHEN a step happens (a step runtime on `settle`, the threaded one on its
worker thread); this module decides WHAT happens at each step. Each rule is one method,
so a gallery backend can break exactly one.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TypeVar

from jobconform.backends.log_records import library_logger
from jobconform.backends.loops.protocol import (
    InvalidLoopParameters,
    LoopAgent,
    LoopEvents,
    LoopParameters,
    LoopSnapshot,
    ParameterProblem,
    RunResult,
    RunSnapshot,
)

LOG = library_logger("jobconform.loops")
KEEP_PREVIOUS_CHARS = 2000
# What a run's execution says triggered it (LP-020), with its loop's id.
LOOP_TRIGGER = "loop"
TEMPLATE_FIELDS = re.compile(r"\{\{(run|previous_response)\}\}")


_Row = TypeVar("_Row", "StoredLoop", "StoredRun")


def _shallow_copy(row: _Row) -> _Row:
    """The same row as a new object sharing its attribute values (like `copy.copy`)."""
    twin = object.__new__(type(row))
    twin.__dict__.update(row.__dict__)
    return twin


@dataclass
class StoredRun:
    run_number: int
    message: str
    status: str
    started_at: datetime
    finished_at: datetime | None = None
    response: str | None = None
    cost: float | None = None
    error: str | None = None


@dataclass
class StoredLoop:
    """A loop row and its run rows: everything that survives a restart."""

    loop_id: str
    params: LoopParameters
    timeout_per_run_seconds: float
    status: str
    started_at: datetime
    stop_reason: str | None = None
    completed_at: datetime | None = None
    runs_completed: int = 0
    failed_runs: int = 0
    previous_response: str = ""
    last_response: str | None = None
    stop_requested: bool = False
    next_run_at: datetime | None = None
    cost_warnings: list[int] = field(default_factory=list)
    runs: list[StoredRun] = field(default_factory=list)

    def copy(self) -> StoredLoop:
        """An independent copy (the parameters are frozen and shared).

        The memory store copies every loop on every read, so this copies attribute
        dictionaries directly rather than through `dataclasses.replace`, which re-runs
        `__init__` field by field and cost most of a loops step.
        """
        loop = _shallow_copy(self)
        loop.cost_warnings = list(self.cost_warnings)
        loop.runs = [_shallow_copy(run) for run in self.runs]
        return loop

    @property
    def in_flight(self) -> StoredRun | None:
        return self.runs[-1] if self.runs and self.runs[-1].status == "running" else None


@dataclass(frozen=True)
class Progress:
    """How far a loop had got when a step began, for the events of the step (LP-019): how
    many of its runs had ended, and whether it was still running."""

    ended_runs: int
    running: bool

    @classmethod
    def of(cls, loop: StoredLoop) -> Progress:
        return cls(loop.runs_completed, loop.status == "running")


@dataclass
class RunnerMemory:
    """What only the running process knows about a loop (lost on restart, as in the seed)."""

    spent: float = 0.0
    last_fingerprint: str | None = None
    identical_in_a_row: int = 0
    failures_in_a_row: int = 0


def _whole(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _finite(value: object) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))


class LoopRules:
    """The rules of one loop runtime."""

    def execute(self, agent: LoopAgent, loop: StoredLoop, run: StoredRun) -> RunResult:
        """The agent call for `run`, its execution labelled as the loop's (LP-020)."""
        return agent.execute(run.run_number, run.message, LOOP_TRIGGER, loop.loop_id)

    def validate(self, params: LoopParameters, default_timeout: float) -> None:
        """Raises InvalidLoopParameters listing every bad field, in field order."""
        bad: list[ParameterProblem] = []

        def no(name: str, allowed: str) -> None:
            bad.append(ParameterProblem(name, getattr(params, name), allowed))

        if not isinstance(params.message, str) or params.message == "":
            no("message", "a non-empty template string")
        if not _whole(params.max_runs, 1, 100):
            no("max_runs", "an integer from 1 to 100")
        if params.stop_signal is not None and (not isinstance(params.stop_signal, str)
                                               or params.stop_signal == ""):
            no("stop_signal", "a non-empty string, or null for no stop signal")
        if not (_finite(params.delay_seconds) and params.delay_seconds >= 0):
            no("delay_seconds", "a finite number of seconds >= 0")
        timeout = params.timeout_per_run_seconds
        timeout_ok = timeout is None or (_finite(timeout) and 1 <= timeout <= 7200)
        if not timeout_ok:
            no("timeout_per_run_seconds", "from 1 to 7200 seconds, or null for the default")
        duration = params.max_duration_seconds
        if duration is not None:
            effective = default_timeout if timeout is None else timeout
            if not _whole(duration, 1, 604_800):
                no("max_duration_seconds", "an integer from 1 to 604800, or null for none")
            elif timeout_ok and duration < effective:
                no("max_duration_seconds",
                   f"at least the per-run timeout ({effective:g} s), or no run could finish")
        budget = params.max_cost_usd
        if budget is not None and not (_finite(budget) and budget > 0):
            no("max_cost_usd", "a finite number > 0, or null for no budget")
        threshold = params.no_progress_threshold
        if not _whole(threshold, 0, 10**9) or threshold == 1:
            no("no_progress_threshold",
               "0 (off) or an integer >= 2; 1 is refused since a repeat needs two runs")
        if params.on_failure not in ("abort", "continue"):
            no("on_failure", "'abort' or 'continue'")
        if not _whole(params.max_consecutive_failures, 1, 100):
            no("max_consecutive_failures", "an integer from 1 to 100")
        if bad:
            raise InvalidLoopParameters(tuple(bad))

    def new_loop(self, loop_id: str, params: LoopParameters, default_timeout: float,
                 now: datetime) -> StoredLoop:
        """A loop starting now with its first run in flight; `params` are valid."""
        timeout = default_timeout if params.timeout_per_run_seconds is None else float(
            params.timeout_per_run_seconds)
        loop = StoredLoop(loop_id, params, timeout, "running", now)
        self.begin_run(loop, now)
        return loop

    # -- the run -------------------------------------------------------------------------

    def render(self, loop: StoredLoop, run_number: int) -> str:
        values = {"run": str(run_number), "previous_response": loop.previous_response}
        return TEMPLATE_FIELDS.sub(lambda found: values[found.group(1)], loop.params.message)

    def begin_run(self, loop: StoredLoop, now: datetime) -> StoredRun:
        number = len(loop.runs) + 1
        run = StoredRun(number, self.render(loop, number), "running", now)
        loop.runs.append(run)
        loop.next_run_at = None
        return run

    def run_timed_out(self, loop: StoredLoop, now: datetime) -> bool:
        run = loop.in_flight
        return run is not None and now >= run.started_at + timedelta(
            seconds=loop.timeout_per_run_seconds)

    def counted_cost(self, cost: float | None) -> float | None:
        if cost is None:
            return None
        return float(cost) if _finite(cost) and cost > 0 else 0.0

    def fingerprint(self, response: str | None) -> str:
        return hashlib.sha256(" ".join((response or "").split()).encode()).hexdigest()

    def keep_previous(self, loop: StoredLoop, response: str | None) -> None:
        loop.previous_response = (response or "")[-KEEP_PREVIOUS_CHARS:]

    def record(self, loop: StoredLoop, memory: RunnerMemory, result: RunResult | Exception,
               now: datetime) -> None:
        """Close the in-flight run with what executing it gave."""
        run = loop.in_flight
        assert run is not None
        run.finished_at = now
        loop.runs_completed += 1
        if isinstance(result, RunResult) and result.success:
            run.status, run.response = "succeeded", result.response
            run.cost = self.counted_cost(result.cost)
            self.keep_previous(loop, result.response)
            loop.last_response = result.response
            memory.failures_in_a_row = 0
            printed = self.fingerprint(result.response)
            same = printed == memory.last_fingerprint
            memory.identical_in_a_row = memory.identical_in_a_row + 1 if same else 1
            memory.last_fingerprint = printed
        else:
            run.status = "failed"
            if isinstance(result, RunResult):
                run.error, run.cost = result.status, self.counted_cost(result.cost)
            else:
                text = str(result)
                run.error = f"{type(result).__name__}: {text}" if text else type(result).__name__
            loop.failed_runs += 1
            memory.failures_in_a_row += 1
        if run.cost is None and loop.params.max_cost_usd is not None:
            LOG.warning("loop %s run %d reported no cost; counted as 0", loop.loop_id,
                        run.run_number)
            loop.cost_warnings.append(run.run_number)
        memory.spent += run.cost or 0.0

    # -- stop decisions --------------------------------------------------------------------

    def deadline(self, loop: StoredLoop) -> datetime | None:
        seconds = loop.params.max_duration_seconds
        return None if seconds is None else loop.started_at + timedelta(seconds=seconds)

    def deadline_passed(self, loop: StoredLoop, now: datetime) -> bool:
        deadline = self.deadline(loop)
        return deadline is not None and now >= deadline

    def budget_spent(self, loop: StoredLoop, memory: RunnerMemory) -> bool:
        budget = loop.params.max_cost_usd
        return budget is not None and memory.spent >= budget

    def before_next_run(self, loop: StoredLoop, memory: RunnerMemory,
                        now: datetime) -> str | None:
        """The gate before a run would start: user stop, then deadline, then budget."""
        if loop.stop_requested:
            return "user_stopped"
        if self.deadline_passed(loop, now):
            return "deadline_exceeded"
        if self.budget_spent(loop, memory):
            return "budget_exhausted"
        return None

    def after_success(self, loop: StoredLoop, memory: RunnerMemory, response: str | None,
                      now: datetime) -> str | None:
        signal = loop.params.stop_signal
        if signal is not None and response is not None and signal in response:
            return "stop_signal_matched"
        threshold = loop.params.no_progress_threshold
        if threshold and memory.identical_in_a_row >= threshold:
            return self.no_progress_reason(loop, now)
        return None

    def no_progress_reason(self, loop: StoredLoop, now: datetime) -> str:
        """An explicit stop or a passed deadline is never relabelled as no progress."""
        if loop.stop_requested:
            return "user_stopped"
        if self.deadline_passed(loop, now):
            return "deadline_exceeded"
        return "no_progress"

    def after_failure(self, loop: StoredLoop, memory: RunnerMemory) -> str | None:
        if loop.params.on_failure == "abort":
            return "error"
        if memory.failures_in_a_row >= loop.params.max_consecutive_failures:
            return "max_consecutive_failures"
        return None

    def after_run(self, loop: StoredLoop, memory: RunnerMemory, now: datetime) -> str | None:
        """Whether the run just recorded ends the loop, natural end included."""
        run = loop.runs[-1]
        if run.status == "succeeded":
            reason = self.after_success(loop, memory, run.response, now)
        else:
            reason = self.after_failure(loop, memory)
        if reason is None and len(loop.runs) >= loop.params.max_runs:
            reason = "max_runs_reached"
        return reason

    def delay_until(self, loop: StoredLoop, now: datetime) -> datetime:
        """When the next run may start: after the delay, but never past the deadline."""
        wake = now + timedelta(seconds=loop.params.delay_seconds)
        deadline = self.deadline(loop)
        return wake if deadline is None else min(wake, deadline)

    def finish(self, loop: StoredLoop, reason: str, now: datetime) -> None:
        if reason in ("max_runs_reached", "stop_signal_matched"):
            loop.status = "completed_with_errors" if loop.failed_runs else "completed"
        elif reason in ("error", "max_consecutive_failures"):
            loop.status = "failed"
        elif reason == "interrupted":
            loop.status = "interrupted"
        else:
            loop.status = "stopped"
        loop.stop_reason, loop.completed_at, loop.next_run_at = reason, now, None

    def interrupt(self, loop: StoredLoop, now: datetime) -> None:
        run = loop.in_flight
        if run is not None:
            run.status, run.finished_at = "interrupted", now
        self.finish(loop, "interrupted", now)

    def interrupt_running(self, loops: Sequence[StoredLoop], now: datetime,
                          commit: Callable[[StoredLoop, Progress], None]) -> None:
        """Start-up recovery: a restart lost the runner memory of every loop still
        running, so each ends interrupted and is committed (saved, then announced)."""
        for loop in loops:
            if loop.status == "running":
                before = Progress.of(loop)
                self.interrupt(loop, now)
                commit(loop, before)

    # -- events ----------------------------------------------------------------------------

    def execution_id(self, loop: StoredLoop, run: StoredRun) -> str:
        """The execution a run is: an id of its own, the same whenever it is asked."""
        return f"{loop.loop_id}/run-{run.run_number}"

    def announce(self, events: LoopEvents | None, loop: StoredLoop, before: Progress) -> None:
        """The events of what a step just wrote (LP-019), called once it is written: every
        run that ended since `before`, in run order, then the loop's end if it ended."""
        if events is None:
            return
        for run in loop.runs[before.ended_runs:loop.runs_completed]:
            ended = run.finished_at if run.finished_at is not None else run.started_at
            duration_ms = round((ended - run.started_at) / timedelta(milliseconds=1))
            events.loop_run_completed(loop.loop_id, run.run_number,
                                      self.execution_id(loop, run), run.cost, duration_ms)
        if before.running and loop.status != "running":
            events.loop_completed(loop.loop_id, loop.status, loop.stop_reason or "")

    # -- reading ---------------------------------------------------------------------------

    def shows_the_clock(self, loop: StoredLoop) -> bool:
        """Whether the loop's `snapshot` changes as the clock moves, its row unchanged:
        only a loop without an end, whose elapsed time runs to now. A runtime may keep an
        ended loop's snapshot while its row stands still, so rules whose snapshot reads
        the clock otherwise must say so here."""
        return loop.completed_at is None

    def snapshot(self, loop: StoredLoop, now: datetime) -> LoopSnapshot:
        total = 0.0
        for run in loop.runs:
            total += run.cost or 0.0
        end = loop.completed_at or now
        return LoopSnapshot(
            loop_id=loop.loop_id, status=loop.status, stop_reason=loop.stop_reason,
            started_at=loop.started_at, completed_at=loop.completed_at,
            runs_completed=loop.runs_completed, failed_runs=loop.failed_runs,
            total_cost=total, elapsed_seconds=(end - loop.started_at).total_seconds(),
            last_response=loop.last_response, cost_warnings=tuple(loop.cost_warnings),
            runs=tuple(RunSnapshot(r.run_number, r.status, r.message, r.started_at,
                                   r.finished_at, r.response, r.cost, r.error)
                       for r in loop.runs),
        )


def snapshots(rules: LoopRules, loops: Sequence[StoredLoop], now: datetime) -> list[LoopSnapshot]:
    return [rules.snapshot(loop, now) for loop in loops]
