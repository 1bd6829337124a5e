"""The in-memory backend: the step runtime over a dict store, the embedded default."""

from __future__ import annotations

from jobconform.backends.memory_reminders import open_memory_reminders
from jobconform.backends.protocol import (
    LIFECYCLE,
    REMINDERS,
    RETRY,
    STUCK,
    Clock,
    RuntimeSettings,
)
from jobconform.backends.reminder_runtime import StepReminderRuntime
from jobconform.backends.reminders_protocol import DeliveryTarget, ReminderConfig
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
    capabilities = frozenset({LIFECYCLE, RETRY, STUCK, REMINDERS})

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return MemoryRuntime(settings, clock)

    def open_reminders(self, clock: Clock, config: ReminderConfig,
                       target: DeliveryTarget) -> StepReminderRuntime:
        return open_memory_reminders(clock, config, target)
