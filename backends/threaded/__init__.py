"""The threaded worker backend: a poll loop and a thread pool over any job store (seed 000).

The names below load on first use (PEP 562): the areas' own threaded modules
(`backends/<area>/threaded.py`) import `jobconform.backends.threaded.clock`, and an eager
import of the backend here would import them back while they are half loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jobconform.backends.lazy_names import load_on_first_use

if TYPE_CHECKING:
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

_HOMES = {
    "ThreadedBackend": "backend", "conformance_config": "backend",
    "SystemClock": "clock", "WaitableClock": "clock",
    "WorkerConfig": "config", "WorkerConfigError": "config",
    "CancellationToken": "worker", "SettleTimeout": "worker", "ThreadedRuntime": "worker",
    "WorkerCrashed": "worker", "WorkerDisabled": "worker", "WorkerHealth": "worker",
}

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

__getattr__ = load_on_first_use(__name__, _HOMES)
