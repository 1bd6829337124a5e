"""The `threaded` backend: the threaded worker over the in-memory job store.

The conformance harness drives it with a virtual clock. The worker polls only at dispatch
points (`poll_interval=None`), because the oracle starts jobs only there; its pool has as
many threads as the check's `max_concurrent`. The environment's JOBCONFORM_ASYNC_*
variables configure real deployments, not conformance runs, so that a run depends on its
seed alone.
"""

from __future__ import annotations

from jobconform.backends.protocol import LIFECYCLE, REMINDERS, RETRY, Clock, RuntimeSettings
from jobconform.backends.reminder_store import InMemoryReminderStore, ReminderStore
from jobconform.backends.reminders_protocol import DeliveryTarget, ReminderConfig
from jobconform.backends.store import InMemoryJobStore, JobStore
from jobconform.backends.threaded.config import WorkerConfig
from jobconform.backends.threaded.reminders import ThreadedReminderRuntime
from jobconform.backends.threaded.worker import ThreadedRuntime


def conformance_config(settings: RuntimeSettings) -> WorkerConfig:
    """The worker configuration for one conformance check."""
    return WorkerConfig(enabled=True, max_workers=settings.max_concurrent, poll_interval=None)


class ThreadedBackend:
    """Entry point `threaded`: jobs really run in pool threads, up to max_concurrent."""

    name = "threaded"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE, RETRY, REMINDERS})

    def open(self, settings: RuntimeSettings, clock: Clock) -> ThreadedRuntime:
        return ThreadedRuntime(self.new_store(), clock, conformance_config(settings),
                               max_tasks=settings.max_tasks)

    def new_store(self) -> JobStore:
        """An empty store for one runtime."""
        return InMemoryJobStore()

    def open_reminders(self, clock: Clock, config: ReminderConfig,
                       target: DeliveryTarget) -> ThreadedReminderRuntime:
        return ThreadedReminderRuntime(self.new_reminder_store(), clock, config, target)

    def new_reminder_store(self) -> ReminderStore:
        """An empty reminder store for one runtime."""
        return InMemoryReminderStore()
