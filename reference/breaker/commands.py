"""The breaker area's commands: plain data, like the lifecycle's (reference/commands.py).

Targets, calls and pieces of work are named by strings the harness picks. `worker` picks
which of the check's two workers (0 or 1, sharing one store) sends the command.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True)
class SwitchBreaker:
    """The global switch (CB-001)."""

    on: bool


@dataclass(frozen=True)
class OptIn:
    """One target's own opt-in (CB-001)."""

    target: str
    on: bool = True


@dataclass(frozen=True)
class Call:
    """A call to `target` asks the breaker to run; answers an `Admission` value."""

    target: str
    call: str
    worker: int = 0


@dataclass(frozen=True)
class CallsAtOnce:
    """Several callers call `target` at the same moment, each from its own thread,
    alternating between the two workers; answers how many got each admission."""

    target: str
    calls: tuple[str, ...]


@dataclass(frozen=True)
class Report:
    """The call ended: outcome success, failure (with its class) or cancelled."""

    target: str
    call: str
    outcome: str
    failure_class: str | None = None
    worker: int = 0


@dataclass(frozen=True)
class AddWork:
    """New work for `target`; answers an `Enqueued` value."""

    target: str
    work: str


@dataclass(frozen=True)
class ResetBreaker:
    target: str


@dataclass(frozen=True)
class StoreOutage:
    """The breaker's state store becomes unreachable (down) or reachable again."""

    down: bool


@dataclass(frozen=True)
class MissedHeartbeat:
    """The target missed a heartbeat: seed 002's record_failure("missed_heartbeat") seam,
    a failure reported for the target rather than for a call (CB-015)."""

    target: str
    worker: int = 0


@dataclass(frozen=True)
class CallEndsRaw:
    """The call failed, and the runtime is given its raw end to class (CB-016, CB-017):
    the signal that ended it (a name such as "SIGKILL", or None), its exit code (None:
    unknown), whether it produced output and its error text. Answers the class."""

    target: str
    call: str
    signal: str | None = None
    exit_code: int | None = None
    output: bool = False
    error_text: str = ""
    worker: int = 0


@dataclass(frozen=True)
class EndReported:
    """The runtime is asked for the error it reports for a failed call's raw end (CB-018,
    CB-019): answers its class, the signal that killed it and a silent failure's
    possible causes. `call` names the answer; nothing is recorded."""

    call: str
    signal: str | None = None
    exit_code: int | None = None
    output: bool = False
    error_text: str = ""
    worker: int = 0


@dataclass(frozen=True)
class DrainLost:
    """Fault injection: while `lost`, a trip's inline drain is lost, as when the worker
    dies between writing the trip and failing the backlog (CB-014)."""

    lost: bool


@dataclass(frozen=True)
class BackstopSweep:
    """The periodic backstop sweep runs once (CB-014); answers how many it failed."""

    worker: int = 0


@dataclass(frozen=True)
class TripWithLostDrain:
    """Work is queued for `target`, whose breaker is then reset and tripped by counted
    failures with its drain lost: the runtime's own backstop must fail the work at its
    next sweep (SR-007, in the self-running checks)."""

    target: str
    works: tuple[str, ...]


@dataclass(frozen=True)
class PassTime:
    seconds: float


@dataclass(frozen=True)
class ReadBreaker:
    target: str


BreakerCommand: TypeAlias = (SwitchBreaker | OptIn | Call | CallsAtOnce | Report | AddWork
                             | ResetBreaker | StoreOutage | PassTime | ReadBreaker
                             | MissedHeartbeat | DrainLost | BackstopSweep | CallEndsRaw
                             | EndReported)
