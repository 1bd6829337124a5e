"""The threaded worker backend: a poll loop and a thread pool over any job store (seed 000)."""

from jobconform.backends.threaded.backend import ThreadedBackend, conformance_config
from jobconform.backends.threaded.clock import SystemClock, WaitableClock
from jobconform.backends.threaded.config import WorkerConfig, WorkerConfigError
from jobconform.backends.threaded.worker import (
    CancellationToken,
    SettleTimeout,
    ThreadedRuntime,
    WorkerCrashed,
    WorkerDisabled,
    WorkerHealth,
)

__all__ = [
    "CancellationToken",
    "SettleTimeout",
    "SystemClock",
    "ThreadedBackend",
    "ThreadedRuntime",
    "WaitableClock",
    "WorkerConfig",
    "WorkerConfigError",
    "WorkerCrashed",
    "WorkerDisabled",
    "WorkerHealth",
    "conformance_config",
]
