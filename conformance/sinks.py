"""Harness-owned sinks: effects that leave the runtime, recorded when they happen.

An effect read back after a command (the operator alerts) shows what happened, not in
which order. A sink the harness owns is called by the runtime at the moment of the effect,
and reads the runtime's observable state right then: the status of the job an alert is
about, the state of the reminder a dispatch is for. The suites compare that state with the
one the spec fixes for that moment, so an alert raised after the job already failed, or a
dispatch made before the reminder was marked firing, is caught although the state after
the command is right.

A sink never raises into the runtime: what it could not read is recorded as such and
compared like any other state.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


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
