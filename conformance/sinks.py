"""Harness-owned sinks: effects that leave the runtime, recorded when they happen.

An effect read back after a command (the operator alerts) shows what happened, not in
which order. A sink the harness owns is called by the runtime at the moment of the effect,
and reads the runtime's observable state right then: the status of the job an alert is
about, the state of the reminder a dispatch is for. The suites compare that state with the
one the spec fixes for that moment, so an alert raised after the job already failed, or a
dispatch made before the reminder was marked firing, a loop event emitted before the run
it reports is recorded, is caught although the state after the command is right.

A sink never raises into the runtime: what it could not read is recorded as such and
compared like any other state.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass


def _state_of(read: Callable[[str], object], subject_id: str,
              fields: tuple[str, ...]) -> tuple[object, ...]:
    """The subject's `fields` as `read` answers them now; "<missing>" for an unknown
    subject or field, "<read raised ...>" when the read itself failed."""
    try:
        view = read(subject_id)
    except Exception as error:  # the sink reports it; the runtime's call must not fail
        return tuple(f"<read raised {type(error).__name__}: {error}>" for _ in fields)
    if view is None:
        return tuple("<missing>" for _ in fields)
    return tuple(getattr(view, name, "<missing>") for name in fields)


class OperatorQueue:
    """The harness's operator sink (`OperatorSink`): every alert with the job's status
    at the moment it was raised (RD-003: the alert comes before the job is failed).

    Args:
        read: the runtime's `get`, answering a job view or None.
    """

    def __init__(self, read: Callable[[str], object]) -> None:
        self._read = read
        self._lock = threading.Lock()
        self._raised: list[tuple[str, object]] = []

    def alert(self, job_id: str) -> None:
        (status,) = _state_of(self._read, job_id, ("status",))
        with self._lock:
            self._raised.append((job_id, status))

    def raised(self) -> list[tuple[str, object]]:
        """(job id, its status when the alert was raised), in the order raised."""
        with self._lock:
            return list(self._raised)


# A dispatch made while the harness could not read the runtime (it does not allow it,
# or it was booting): counted, not compared.
NOT_READ = "<not read>"


class DispatchStates:
    """What a reminder looked like at each of its dispatches (RM-007: firing, with the
    attempt counted, before the target is called).

    Args:
        read: the reminder runtime's `get`, answering a reminder view or None; None
            while the runtime cannot be read during a dispatch.
    """

    def __init__(self, read: Callable[[str], object] | None) -> None:
        self.read = read
        self._lock = threading.Lock()
        self._seen: list[tuple[str, object, object]] = []

    def dispatched(self, reminder_id: str) -> None:
        read = self.read
        status, attempts = ((NOT_READ, NOT_READ) if read is None else
                            _state_of(read, reminder_id, ("status", "attempts")))
        with self._lock:
            self._seen.append((reminder_id, status, attempts))

    def seen(self) -> list[tuple[str, object, object]]:
        """(reminder id, its status, its attempts) at each dispatch, in call order."""
        with self._lock:
            return list(self._seen)


class ReplayAudit:
    """The harness's audit sink for idempotent replays (`IdempotencyAudit`, IK-017): every
    `idempotent_replay` event the runtime emits, in the order emitted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[tuple[str, str, str]] = []

    def replayed(self, scope: str, key: str, original: str) -> None:
        with self._lock:
            self._events.append((scope, key, original))

    def events(self) -> list[tuple[str, str, str]]:
        """(scope, key, the original claim's token) of every replay, in the order emitted."""
        with self._lock:
            return list(self._events)


@dataclass(frozen=True)
class LoopEventRecord:
    """One loop event as the runtime emitted it (LP-019).

    Attributes:
        kind: "loop_run_completed" or "loop_completed".
        loop_id: the loop the runtime named.
        values: the event's other values as passed: (run number, execution id, cost,
            duration in ms) for a run, (status, stop reason) for a loop.
        seen: what the runtime showed right then: the run's status for a run event, the
            loop's status and stop reason for a loop event.
    """

    kind: str
    loop_id: str
    values: tuple[object, ...]
    seen: tuple[object, ...]


class LoopEventLog:
    """The harness's sink for loop events (`LoopEvents`, LP-019): every event, in the
    order emitted, with what the runtime showed of its loop at that moment, so an event
    emitted before the run's record (or the loop's end) is written is caught.

    Args:
        read: the loop runtime's `get_loop`; None until the runtime is open (an event
            before that is recorded as not read).
    """

    def __init__(self, read: Callable[[str], object] | None = None) -> None:
        self.read = read
        self._lock = threading.Lock()
        self._events: list[LoopEventRecord] = []

    def loop_run_completed(self, loop_id: str, run_number: int, execution_id: str,
                           cost: float | None, duration_ms: float) -> None:
        seen = (self._run_status(loop_id, run_number),)
        self._add(LoopEventRecord("loop_run_completed", loop_id,
                                  (run_number, execution_id, cost, duration_ms), seen))

    def loop_completed(self, loop_id: str, status: str, stop_reason: str) -> None:
        read = self.read
        seen = ((NOT_READ, NOT_READ) if read is None
                else _state_of(read, loop_id, ("status", "stop_reason")))
        self._add(LoopEventRecord("loop_completed", loop_id, (status, stop_reason), seen))

    def _run_status(self, loop_id: str, run_number: int) -> object:
        read = self.read
        if read is None:
            return NOT_READ
        (runs,) = _state_of(read, loop_id, ("runs",))
        if isinstance(runs, str):  # missing, or the read raised
            return runs
        try:
            found = [run for run in runs  # type: ignore[attr-defined]
                     if getattr(run, "run_number", None) == run_number]
        except TypeError:
            return f"<runs not readable: {runs!r}>"
        return getattr(found[0], "status", "<missing>") if found else "<no such run>"

    def _add(self, record: LoopEventRecord) -> None:
        with self._lock:
            self._events.append(record)

    def events(self) -> list[LoopEventRecord]:
        """Every event so far, in the order emitted."""
        with self._lock:
            return list(self._events)

    def count(self) -> int:
        """How many events so far (the log only grows): a reader that has them all need
        not copy them again."""
        with self._lock:
            return len(self._events)
