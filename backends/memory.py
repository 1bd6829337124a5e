"""The in-memory backend: the step runtime over a dict store, the embedded default."""

from __future__ import annotations

from collections.abc import Mapping

from jobconform.backends.admission.memory import open_memory_admission
from jobconform.backends.admission.runtime import AdmissionService
from jobconform.backends.breaker.memory import open_memory_breaker
from jobconform.backends.breaker.protocol import BREAKER
from jobconform.backends.breaker.runtime import StoreBreakerRuntime
from jobconform.backends.composite.protocol import COMPOSITE
from jobconform.backends.composite.wiring import SharedAdmission, open_shared_admission
from jobconform.backends.governor.protocol import GOVERNOR
from jobconform.backends.governor.runtime import StoreGovernorRuntime, open_memory_governor
from jobconform.backends.idempotency.memory import open_memory_idempotency
from jobconform.backends.idempotency.protocol import IdempotencyAudit, IdempotencyConfig
from jobconform.backends.idempotency.service import IdempotencyService
from jobconform.backends.loops.memory import StepLoopRuntime
from jobconform.backends.loops.protocol import LOOPS, LoopEvents, LoopsConfig
from jobconform.backends.protocol import (
    ADMISSION,
    AUDIT_EVENTS,
    BREAKER_SEAMS,
    CONCURRENT_SUBMIT,
    HEALTH_REPORT,
    IDEMPOTENCY,
    LIFECYCLE,
    LOOP_EVENTS,
    REAPER,
    REDELIVERY,
    REMINDERS,
    RETRY,
    STUCK,
    Clock,
    RuntimeSettings,
    TaskScript,
    store_faults,
)
from jobconform.backends.reminders.memory import open_memory_reminders
from jobconform.backends.reminders.protocol import DeliveryTarget, ReminderConfig
from jobconform.backends.reminders.runtime import StepReminderRuntime
from jobconform.backends.scheduling.memory import open_memory_scheduling
from jobconform.backends.scheduling.protocol import (
    SCHEDULING,
    SchedulingConfig,
    SchedulingTarget,
)
from jobconform.backends.scheduling.runtime import StepSchedulingRuntime
from jobconform.backends.step_runtime import StepRuntime
from jobconform.backends.store import InMemoryJobStore
from jobconform.backends.task_store.memory import AsyncInMemoryTaskStore
from jobconform.backends.task_store.protocol import STORE
from jobconform.reference.admission import AdmissionConfig
from jobconform.reference.breaker.oracle import BreakerSettings
from jobconform.reference.composite.oracle import CompositeConfig
from jobconform.reference.governor.oracle import GovernorSettings


class MemoryRuntime(StepRuntime):
    def __init__(self, settings: RuntimeSettings, clock: Clock,
                 store: InMemoryJobStore | None = None,
                 bodies: Mapping[str, TaskScript] | None = None) -> None:
        super().__init__(settings, clock, store if store is not None else InMemoryJobStore(),
                         bodies=bodies)


class MemoryBackend:
    """Entry point `memory`: deterministic, single-threaded, nothing to install."""

    name = "memory"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE, RETRY, STUCK, REAPER, REDELIVERY, IDEMPOTENCY, BREAKER,
                              GOVERNOR, REMINDERS, ADMISSION, LOOPS, SCHEDULING, STORE,
                              COMPOSITE, HEALTH_REPORT, CONCURRENT_SUBMIT, AUDIT_EVENTS,
                              LOOP_EVENTS, BREAKER_SEAMS,
                              store_faults(REMINDERS), store_faults(IDEMPOTENCY),
                              store_faults(REDELIVERY), store_faults(REAPER)})

    def open_composite(self, clock: Clock, config: CompositeConfig) -> SharedAdmission:
        """Its own area runtimes wired to one admission (backends/composite/wiring.py)."""
        return open_shared_admission(self, clock, config)

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
