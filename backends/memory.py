"""The in-memory backend: the step runtime over a dict store, the embedded default."""

from __future__ import annotations

from jobconform.backends.admission_runtime import AdmissionService
from jobconform.backends.memory_admission import open_memory_admission
from jobconform.backends.protocol import (
    ADMISSION,
    LIFECYCLE,
    RETRY,
    STUCK,
    Clock,
    RuntimeSettings,
)
from jobconform.backends.step_runtime import StepRuntime
from jobconform.backends.store import InMemoryJobStore
from jobconform.reference.admission import AdmissionConfig


class MemoryRuntime(StepRuntime):
    def __init__(self, settings: RuntimeSettings, clock: Clock,
                 store: InMemoryJobStore | None = None) -> None:
        super().__init__(settings, clock, store if store is not None else InMemoryJobStore())


class MemoryBackend:
    """Entry point `memory`: deterministic, single-threaded, nothing to install."""

    name = "memory"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE, RETRY, STUCK, ADMISSION})

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return MemoryRuntime(settings, clock)

    def open_admission(self, clock: Clock, config: AdmissionConfig) -> AdmissionService:
        return open_memory_admission(clock, config)
