"""What a backend implements to claim `self-running` (spec area self-running, SR-001..SR-004).

A runtime that runs its own clockwork starts queued work, fails stuck jobs, re-delivers
work whose lease lapsed and brings retries back when due, all by itself as its clock
passes. Such a backend claims the `self-running` capability and has

    def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                          clockwork: Clockwork) -> Runtime: ...

It returns a job `Runtime` (backends/protocol.py) that acts on `clockwork` by itself: the
harness only advances `clock`, calls `submit`, `heartbeat` and reads (`get`, `list_jobs`,
`health`), and calls `settle` before each read so that whatever the runtime's threads can
do at the current instant is done. It never calls `dispatch`, `detect_stuck` or
`expire_leases` on it. A runtime that sleeps on the clock wakes when the harness advances
it (the kit's `VirtualClock.wait_until`, or `jobconform.bridges.ThreadWaits`).

The runtime's other checks keep opening it with `open`, in the commanded mode, where it
acts only when told.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SELF_RUNNING = "self-running"


@dataclass(frozen=True)
class Clockwork:
    """How a self-running runtime is told to run.

    Attributes:
        poll_interval_seconds: clock time between two of its passes; every bound of the
            area is counted in it (the profile's `poll_interval_seconds`).
        job_timeout_seconds: silence after which a running job is failed as stuck (SR-002).
        lease_seconds: silence after which a running job's lease lapses and it is
            re-queued (SR-003).
    """

    poll_interval_seconds: float
    job_timeout_seconds: float
    lease_seconds: float

    def __post_init__(self) -> None:
        for name in ("poll_interval_seconds", "job_timeout_seconds", "lease_seconds"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} is a finite number of seconds above 0, not {value!r}")
