"""The memory backend opening runtimes of a class a test gives: a runtime broken in one
way (or instrumented), put under the harness."""

from __future__ import annotations

from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings


class MemoryBackendOf(MemoryBackend):
    """Opens a `runtime_type` where the memory backend opens a MemoryRuntime."""

    def __init__(self, runtime_type: type[MemoryRuntime], name: str = "memory") -> None:
        self.runtime_type = runtime_type
        self.name = name

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return self.runtime_type(settings, clock)
