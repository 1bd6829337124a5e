"""The in-memory backend: the step runtime over a dict store, the embedded default."""

from __future__ import annotations

from collections.abc import Mapping

from jobconform.backends.admission.memory import open_memory_admission
from jobconform.backends.admission.runtime import AdmissionService
from jobconform.backends.breaker.memory import open_memory_breaker
from jobconform.backends.breaker.runtime import StoreBreakerRuntime
from jobconform.backends.governor.runtime import StoreGovernorRuntime, open_memory_governor
from jobconform.backends.idempotency.memory import open_memory_idempotency
from jobconform.backends.idempotency.protocol import IdempotencyAudit, IdempotencyConfig
from jobconform.backends.idempotency.service import IdempotencyService
from jobconform.backends.loops.memory import StepLoopRuntime
from jobconform.backends.loops.protocol import LoopEvents, LoopsConfig
from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.backends.reminders.memory import open_memory_reminders
from jobconform.backends.reminders.protocol import DeliveryTarget, ReminderConfig
from jobconform.backends.reminders.runtime import StepReminderRuntime
from jobconform.backends.scheduling.memory import open_memory_scheduling
from jobconform.backends.scheduling.protocol import (
    SchedulingConfig,
    SchedulingTarget,
)
from jobconform.backends.scheduling.runtime import StepSchedulingRuntime
from jobconform.backends.shipped import (
    EVERY_SHIPPED_BACKEND,
    HEALTH_AND_AUDIT,
    JOB_STORE_FAULTS,
    ShippedBackend,
)
from jobconform.backends.step_runtime import StepRuntime
from jobconform.backends.store import InMemoryJobStore
from jobconform.backends.task_store.memory import AsyncInMemoryTaskStore
from jobconform.reference.admission import AdmissionConfig
from jobconform.reference.breaker.oracle import BreakerSettings
from jobconform.reference.governor.oracle import GovernorSettings


class MemoryRuntime(StepRuntime):
    def __init__(self, settings: RuntimeSettings, clock: Clock,
                 store: InMemoryJobStore | None = None,
                 bodies: Mapping[str, TaskScript] | None = None) -> None:
        super().__init__(settings, clock, store if store is not None else InMemoryJobStore(),
                         bodies=bodies)


class MemoryBackend(ShippedBackend):
    """Entry point `memory`: deterministic, single-threaded, nothing to install."""

    name = "memory"
    capabilities = EVERY_SHIPPED_BACKEND | HEALTH_AND_AUDIT | JOB_STORE_FAULTS

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return MemoryRuntime(settings, clock)

    def open_idempotency(self, clock: Clock, config: IdempotencyConfig,
                         audit: IdempotencyAudit | None = None) -> IdempotencyService:
        runtime = open_memory_idempotency(clock, config)
        runtime.audit = audit
        return runtime

    def open_breaker(self, clock: Clock, settings: BreakerSettings) -> StoreBreakerRuntime:
        return open_memory_breaker(clock, settings)

    def open_governor(self, clock: Clock, settings: GovernorSettings) -> StoreGovernorRuntime:
        return open_memory_governor(clock, settings)

    def open_reminders(self, clock: Clock, config: ReminderConfig,
                       target: DeliveryTarget) -> StepReminderRuntime:
        return open_memory_reminders(clock, config, target)

    def open_admission(self, clock: Clock, config: AdmissionConfig) -> AdmissionService:
        return open_memory_admission(clock, config)

    def open_loops(self, clock: Clock, config: LoopsConfig,
                   events: LoopEvents | None = None) -> StepLoopRuntime:
        return StepLoopRuntime(clock, config, events=events)

    def open_scheduling(self, clock: Clock, config: SchedulingConfig,
                        target: SchedulingTarget) -> StepSchedulingRuntime:
        return open_memory_scheduling(clock, config, target)

    def open_store(self, clock: Clock) -> AsyncInMemoryTaskStore:
        """Seed 004's default store: in memory, with coroutines (D-17)."""
        return AsyncInMemoryTaskStore()
