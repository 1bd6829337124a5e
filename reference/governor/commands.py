"""The governor area's commands: plain data, like the lifecycle's (reference/commands.py).

`worker` picks which of the check's two governors (0 or 1, sharing one store) is asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True)
class AskWait:
    """The wait before a re-delivery, for a uniform `draw` in [0, 1); answers ms."""

    previous_ms: float | None
    draw: float
    retry_after_ms: float | None = None


@dataclass(frozen=True)
class Offer:
    """A re-delivery for `target` asks to go out; answers (accepted, retry_after_seconds)."""

    target: str
    worker: int = 0


@dataclass(frozen=True)
class RecordFailure:
    """A terminal failure result `result_id` of `target` with `failure_class`."""

    target: str
    failure_class: str
    result_id: str
    worker: int = 0


@dataclass(frozen=True)
class RecordRateLimited:
    """A terminal result `result_id` of `target` that the agent answered with HTTP 429
    (RG-010)."""

    target: str
    result_id: str
    worker: int = 0


@dataclass(frozen=True)
class RecordRawEnd:
    """A terminal failure result `result_id` of `target` given as its raw end (the signal
    that ended it, its exit code, whether it produced output, its error text), which the
    governor classes itself as the breaker does (RG-014)."""

    target: str
    result_id: str
    signal: str | None = None
    exit_code: int | None = None
    output: bool = False
    error_text: str = ""
    worker: int = 0


@dataclass(frozen=True)
class Restart:
    """Governor `worker`'s process restarts with re-sends pending; `draw` is the uniform
    draw in [0, 1) its initial jitter takes (RG-009)."""

    draw: float
    worker: int = 0


@dataclass(frozen=True)
class GovernorStoreOutage:
    """The governors' shared store becomes unreachable (down) or reachable again
    (RG-011)."""

    down: bool


@dataclass(frozen=True)
class SwitchGovernor:
    """Governor `worker`'s master switch is turned on or off (RG-013)."""

    enabled: bool
    worker: int = 0


@dataclass(frozen=True)
class AskResendTimes:
    """When governor `worker`'s sweep after its latest restart sends each of len(draws)
    pending envelopes, the k-th taking the uniform draw draws[k] in [0, 1) (RG-012)."""

    draws: tuple[float, ...]
    worker: int = 0


@dataclass(frozen=True)
class Elapse:
    seconds: float


@dataclass(frozen=True)
class ReadPause:
    """Answers the end of the running pause, or None."""


GovernorCommand: TypeAlias = (AskWait | Offer | RecordFailure | RecordRateLimited
                               | RecordRawEnd | Restart
                               | GovernorStoreOutage | SwitchGovernor | AskResendTimes | Elapse
                               | ReadPause)
