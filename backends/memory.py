"""The in-memory backend: the step runtime over a dict store, the embedded default."""

from __future__ import annotations

from jobconform.backends.loops_protocol import LOOPS, LoopsConfig
from jobconform.backends.memory_loops import StepLoopRuntime
from jobconform.backends.protocol import LIFECYCLE, RETRY, STUCK, Clock, RuntimeSettings
from jobconform.backends.step_runtime import StepRuntime
from jobconform.backends.store import InMemoryJobStore


class MemoryRuntime(StepRuntime):
    def __init__(self, settings: RuntimeSettings, clock: Clock,
                 store: InMemoryJobStore | None = None) -> None:
        super().__init__(settings, clock, store if store is not None else InMemoryJobStore())


class MemoryBackend:
    """Entry point `memory`: deterministic, single-threaded, nothing to install."""

    name = "memory"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE, RETRY, STUCK, LOOPS})

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return MemoryRuntime(settings, clock)

    def open_loops(self, clock: Clock, config: LoopsConfig) -> StepLoopRuntime:
        return StepLoopRuntime(clock, config)
