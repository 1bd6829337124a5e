"""The loops area of the adapter protocol: sequential agent loops (seed 002 §38).

A backend that claims `loops` has `open_loops(clock, config) -> LoopRuntime`, returning a
fresh, empty runtime per check. The harness starts loops on it and plays the agent: each
loop gets a `LoopAgent` whose runs end only when the harness says how (a response with a
cost, a non-success result, a raised error). The runtime runs the agent, one run after
another, and decides when the loop ends; the harness compares every loop it holds with
the oracle after each command.

Time passes only through the clock the harness passes in. `settle()` is the runtime's
moment to act: it returns once every run whose outcome is decided has been recorded and
every timer due at the clock's current time (a per-run timeout, the end of a delay) has
been applied. Every timestamp the runtime records is the clock's current time.

Execution labels (LP-020) are an optional capability: a backend that also claims
`loop-labels` calls `agent.execute(run_number, message, "loop", loop_id)`, so each run's
execution names what triggered it and the loop it belongs to, as seed 002 records every
iteration in its executions table.

Loop events (LP-019) are an optional capability: a backend that also claims `loop-events`
is opened as `open_loops(clock, config, events)`, with a kit-owned `LoopEvents` sink, and
its runtime calls `events.loop_run_completed(...)` once for every run that ends (succeeded
or failed, a timeout included; not a run a restart interrupts), after the run's record is
written, and `events.loop_completed(...)` once when the loop ends in any terminal state,
after that state is written. The sink may read the loop back through the runtime while it
is called. A backend that does not claim it is opened with two arguments, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from jobconform.backends.protocol import Clock
from jobconform.reference.loops.oracle import (
    FailResult,
    InvalidLoopParameters,
    LoopParameters,
    ParameterProblem,
    RaiseError,
    Respond,
    RunOutcome,
)

LOOPS = "loops"

__all__ = ["LOOPS", "InvalidLoopParameters", "LoopAgent", "LoopEvents", "LoopNotFound",
           "LoopParameters", "LoopRuntime", "LoopSnapshot", "LoopsConfig", "ParameterProblem",
           "RunResult", "RunSnapshot"]


class LoopNotFound(KeyError):
    """stop_loop was given an id the runtime does not hold."""


@dataclass(frozen=True)
class LoopsConfig:
    """Defaults from the profile: the per-run timeout of a loop that gives none (the
    agent's configured execution timeout in the seed)."""

    default_timeout_per_run_seconds: float


@dataclass(frozen=True)
class RunResult:
    """What executing one run returned (a raised error is raised instead).

    `success` False is a non-success result; `status` then names it (AGENT_ERROR, …).
    """

    success: bool
    response: str | None
    cost: float | None
    status: str


class LoopAgent:
    """The agent one loop runs, scripted by the harness run by run.

    The runtime calls `execute(run_number, message)` once `decided(run_number)` is true;
    it returns the scripted `RunResult` or raises the scripted error, as a real agent
    call would. A runtime running loops in threads may block in `wait_for_decision`.
    """

    def __init__(self) -> None:
        self._outcomes: dict[int, RunOutcome] = {}
        self._decision = threading.Condition()
        self.received: dict[int, str] = {}  # run number -> the message the runtime sent
        # run number -> (triggered_by, loop_id) the runtime labelled the run's execution
        # with (LP-020), from its first execution.
        self.labels: dict[int, tuple[str | None, str | None]] = {}

    def decide(self, run_number: int, outcome: RunOutcome) -> None:
        with self._decision:
            self._outcomes.setdefault(run_number, outcome)
            self._decision.notify_all()

    def decided(self, run_number: int) -> bool:
        # Read without the lock: a decision is never taken back, and one dict lookup is
        # atomic; a step runtime asks for every running loop at every settle.
        return run_number in self._outcomes

    def wait_for_decision(self, run_number: int, released: Callable[[], bool]) -> bool:
        """Block until run `run_number` is decided (True) or `released()` is true (False)."""
        with self._decision:
            self._decision.wait_for(lambda: run_number in self._outcomes or released())
            return run_number in self._outcomes

    def wake(self) -> None:
        with self._decision:
            self._decision.notify_all()

    def execute(self, run_number: int, message: str, triggered_by: str | None = None,
                loop_id: str | None = None) -> RunResult:
        """Run the agent once. A runtime claiming `loop-labels` labels the run's execution
        as seed 002's execution rows are: `triggered_by` "loop" and the loop's `loop_id`
        (LP-020); one that does not passes neither.

        Raises:
            Exception: the scripted error (its type name and message are the scripted ones).
            RuntimeError: the run was not decided yet (a runtime bug).
        """
        with self._decision:
            outcome = self._outcomes.get(run_number)
            self.received.setdefault(run_number, message)
            self.labels.setdefault(run_number, (triggered_by, loop_id))
        if outcome is None:
            raise RuntimeError(f"the runtime executed run {run_number} before the harness"
                               " decided how it ends")
        if isinstance(outcome, RaiseError):
            raise type(outcome.error_type, (Exception,), {})(outcome.message)
        if isinstance(outcome, FailResult):
            return RunResult(False, None, outcome.cost, outcome.status)
        assert isinstance(outcome, Respond)
        return RunResult(True, outcome.response, outcome.cost, "SUCCESS")


@dataclass(frozen=True)
class RunSnapshot:
    """One run as the runtime shows it; `cost` is what it added to the spend (None when
    none was reported, 0.0 when ignored)."""

    run_number: int
    status: str  # running, succeeded, failed, interrupted
    message: str
    started_at: datetime
    finished_at: datetime | None
    response: str | None
    cost: float | None
    error: str | None


@dataclass(frozen=True)
class LoopSnapshot:
    """One loop as the runtime shows it; `total_cost` and `elapsed_seconds` are computed
    when it is read."""

    loop_id: str
    status: str
    stop_reason: str | None
    started_at: datetime
    completed_at: datetime | None
    runs_completed: int
    failed_runs: int
    total_cost: float
    elapsed_seconds: float
    last_response: str | None
    cost_warnings: tuple[int, ...]  # run numbers whose missing cost was logged
    runs: tuple[RunSnapshot, ...]


class LoopEvents(Protocol):
    """The kit's sink for loop events (LP-019); it never raises into the runtime. It may
    read the loop back through the runtime's `get_loop` while it is called, from the
    thread that calls it."""

    def loop_run_completed(self, loop_id: str, run_number: int, execution_id: str,
                           cost: float | None, duration_ms: float) -> None:
        """One event `loop_run_completed`: run `run_number` of the loop ended (succeeded or
        failed). `execution_id` is the run's execution, an id no other run has; `cost` the
        run's counted cost as its record holds it (None: none reported); `duration_ms` the
        milliseconds from the run's start to its end on the runtime's clock. Called once
        per run, in run order, after the run's record is written."""
        ...

    def loop_completed(self, loop_id: str, status: str, stop_reason: str) -> None:
        """One event `loop_completed`: the loop ended with this terminal status and stop
        reason. Called once per loop, after its terminal state is written and after the
        event of its last ended run."""
        ...


class LoopRuntime(Protocol):
    def start_loop(self, params: LoopParameters, agent: LoopAgent) -> str:
        """Start a loop; its first run is in flight when this returns.

        Returns:
            The new loop's id, unique within this runtime.

        Raises:
            InvalidLoopParameters: listing every invalid parameter, in field order; no
                loop was created.
        """
        ...

    def settle(self) -> None:
        """Return once every decided run is recorded and every timer due now applied."""
        ...

    def stop_loop(self, loop_id: str) -> str:
        """Request a graceful stop.

        Returns:
            "stopping" for a running loop, "already_done" for an ended one.

        Raises:
            LoopNotFound: unknown id.
        """
        ...

    def get_loop(self, loop_id: str) -> LoopSnapshot | None:
        """A snapshot of the loop, or None for an unknown id."""
        ...

    def list_loops(self) -> Sequence[LoopSnapshot]:
        """Snapshots of every loop, in start order."""
        ...

    def restart(self) -> None:
        """Act as after a process restart: forget what only the running process held and
        run the start-up recovery over what was stored."""
        ...

    def close(self) -> None:
        """Release threads and connections."""
        ...


class LoopsBackend(Protocol):
    """What a backend claiming `loops` adds to `jobconform.backends.protocol.Backend`."""

    def open_loops(self, clock: Clock, config: LoopsConfig) -> LoopRuntime:
        """A fresh, empty loop runtime using `clock` for every timestamp.

        A backend that claims `loop-events` also takes `events: LoopEvents | None` as a
        third argument and reports to it (LP-019); the kit passes it only to such a one.
        """
        ...

