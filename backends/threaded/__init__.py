"""The threaded worker backend: a poll loop and a thread pool over any job store (seed 000).

The names below load on first use (PEP 562): the areas' own threaded modules
(`backends/<area>/threaded.py`) import `jobconform.backends.threaded.clock`, and an eager
import of the backend here would import them back while they are half loaded.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
