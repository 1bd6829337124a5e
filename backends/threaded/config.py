"""The worker's configuration: the first seed's keys and defaults, readable from the environment.

| variable                          | field         | default | meaning                        |
|-----------------------------------|---------------|---------|--------------------------------|
| JOBCONFORM_ASYNC_ENABLED          | enabled       | off     | run jobs on the worker at all  |
| JOBCONFORM_ASYNC_MAX_WORKERS      | max_workers   | 4       | pool threads (jobs at once)    |
| JOBCONFORM_ASYNC_POLL_INTERVAL    | poll_interval | 1.0     | seconds between polls          |
| JOBCONFORM_ASYNC_JOB_TIMEOUT      | job_timeout   | 3600    | seconds without a heartbeat    |
|                                   |               |         | before a running job is stuck  |
| JOBCONFORM_ASYNC_JOB_TTL          | job_ttl       | 86400   | seconds a finished job is kept |
| JOBCONFORM_ASYNC_LEASE_SECONDS    | lease_seconds | 60      | seconds without a heartbeat    |
|                                   |               |         | before a running job's lease   |
|                                   |               |         | lapses and it is re-queued     |
| JOBCONFORM_ASYNC_RECOVERY_INTERVAL| recovery_     | 30      | seconds between the worker's   |
|                                   | interval      |         | own lease passes; `off` stops  |
|                                   |               |         | them                           |

Recovery is on by default: a worker with a periodic poll runs a lease pass every
`recovery_interval` seconds, so the jobs of a worker that died (killed, crashed, cut off) are
re-queued within `lease_seconds + recovery_interval` of its last heartbeat, without an
operator. Its own jobs keep their leases because each poll beats for them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

ENABLED_ENV = "JOBCONFORM_ASYNC_ENABLED"
MAX_WORKERS_ENV = "JOBCONFORM_ASYNC_MAX_WORKERS"
POLL_INTERVAL_ENV = "JOBCONFORM_ASYNC_POLL_INTERVAL"
JOB_TIMEOUT_ENV = "JOBCONFORM_ASYNC_JOB_TIMEOUT"
JOB_TTL_ENV = "JOBCONFORM_ASYNC_JOB_TTL"
LEASE_SECONDS_ENV = "JOBCONFORM_ASYNC_LEASE_SECONDS"
RECOVERY_INTERVAL_ENV = "JOBCONFORM_ASYNC_RECOVERY_INTERVAL"

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


class WorkerConfigError(ValueError):
    """A configuration value has the wrong form or range; the message names its source."""


def _check_count(value: int, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise WorkerConfigError(f"{name} must be a whole number of at least 1, not {value!r}")
    return value


def _check_seconds(value: float, name: str) -> float:
    valid = (not isinstance(value, bool) and isinstance(value, int | float)
             and math.isfinite(value) and value > 0)
    if not valid:
        raise WorkerConfigError(f"{name} must be a finite number of seconds above 0,"
                                f" not {value!r}")
    return float(value)


@dataclass(frozen=True)
class WorkerConfig:
    """How a threaded worker runs (seed 000 §Configuration).

    Attributes:
        enabled: whether jobs run on the worker at all; a disabled worker refuses to start.
        max_workers: pool threads, so the number of jobs running at once.
        poll_interval: seconds of clock time between two polls; None polls only at
            dispatch points (the conformance backend: the oracle starts jobs only there).
        job_timeout: seconds without a heartbeat after which a running job is stuck.
        job_ttl: seconds a finished job is retained before `cleanup_expired` removes it.
        poll_beats_jobs: each poll records a heartbeat for every job the worker runs (seed
            000). False leaves heartbeats to the bodies (`heartbeat(job_id)`), so a job is
            stuck when its body falls silent: the conformance backend runs it so, as the
            spec's heartbeats are the body's (ST-001).
        lease_seconds: seconds without a heartbeat after which a running job's lease has
            lapsed: the worker's lease passes re-queue it, or park it at the cap (RD-001).
        recovery_interval: seconds of clock time between the worker's own lease passes;
            None runs none. They run with a periodic poll only: a worker polling at
            dispatch points (the conformance backend) leaves every pass to its caller.

    Raises:
        WorkerConfigError: a value out of range.
    """

    enabled: bool = False
    max_workers: int = 4
    poll_interval: float | None = 1.0
    job_timeout: int = 3600
    job_ttl: int = 86_400
    poll_beats_jobs: bool = True
    lease_seconds: int = 60
    recovery_interval: float | None = 30.0

    def __post_init__(self) -> None:
        _check_count(self.max_workers, "max_workers")
        if self.poll_interval is not None:
            _check_seconds(self.poll_interval, "poll_interval")
        _check_count(self.job_timeout, "job_timeout")
        _check_count(self.job_ttl, "job_ttl")
        _check_count(self.lease_seconds, "lease_seconds")
        if self.recovery_interval is not None:
            _check_seconds(self.recovery_interval, "recovery_interval")
        if self.recovers and self.poll_interval is not None and (
                self.lease_seconds <= self.poll_interval):
            # The poll's heartbeats keep a live worker's leases; a lease no longer than
            # the time between two of them would lapse under a live worker.
            raise WorkerConfigError(f"lease_seconds ({self.lease_seconds}) must be longer"
                                    f" than poll_interval ({self.poll_interval:g})")

    @property
    def recovers(self) -> bool:
        """Whether the worker runs lease passes of its own (a periodic poll is needed)."""
        return self.recovery_interval is not None and self.poll_interval is not None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> WorkerConfig:
        """The defaults, overridden by every variable that is set and not blank.

        Raises:
            WorkerConfigError: a variable's value does not parse or is out of range; the
                message names the variable.
        """
        environ = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for variable, field, parse in _VARIABLES:
            raw = environ.get(variable, "").strip()
            if raw:
                values[field] = parse(raw, variable)
        return cls(**values)  # type: ignore[arg-type]

    def describe(self) -> str:
        """The diagnostics line (seed 000 §Health Report)."""
        state = "enabled" if self.enabled else "disabled"
        polling = ("on dispatch only" if self.poll_interval is None
                   else f"{self.poll_interval:g}s")
        return (f"Async workers: {state}, max_workers={self.max_workers},"
                f" poll_interval={polling}, job_timeout={self.job_timeout}s,"
                f" job_ttl={self.job_ttl}s")


def _parse_bool(raw: str, variable: str) -> bool:
    word = raw.lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise WorkerConfigError(f"{variable}={raw!r} is not a yes/no value; use one of"
                            f" {', '.join(TRUE_WORDS)} or {', '.join(FALSE_WORDS)}")


def _parse_count(raw: str, variable: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise WorkerConfigError(f"{variable} must be a whole number of at least 1,"
                                f" not {raw!r}") from None
    return _check_count(value, variable)


def _parse_optional_seconds(raw: str, variable: str) -> float | None:
    if raw.lower() in FALSE_WORDS:
        return None
    return _parse_seconds(raw, variable)


def _parse_seconds(raw: str, variable: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise WorkerConfigError(f"{variable} must be a finite number of seconds above 0,"
                                f" not {raw!r}") from None
    return _check_seconds(value, variable)


_VARIABLES: tuple[tuple[str, str, Callable[[str, str], object]], ...] = (
    (ENABLED_ENV, "enabled", _parse_bool),
    (MAX_WORKERS_ENV, "max_workers", _parse_count),
    (POLL_INTERVAL_ENV, "poll_interval", _parse_seconds),
    (JOB_TIMEOUT_ENV, "job_timeout", _parse_count),
    (JOB_TTL_ENV, "job_ttl", _parse_count),
    (LEASE_SECONDS_ENV, "lease_seconds", _parse_count),
    (RECOVERY_INTERVAL_ENV, "recovery_interval", _parse_optional_seconds),
)
