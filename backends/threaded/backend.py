"""The `threaded` backend: the threaded worker over the in-memory job store.

The conformance harness drives it with a virtual clock. The worker polls only at dispatch
points (`poll_interval=None`), because the oracle starts jobs only there; its pool has as
many threads as the check's `max_concurrent`. The environment's JOBCONFORM_ASYNC_*
variables configure real deployments, not conformance runs, so that a run depends on its
seed alone.
"""

from __future__ import annotations

from jobconform.backends.admission_runtime import AdmissionStore
from jobconform.backends.memory_admission import InMemoryAdmissionStore
from jobconform.backends.protocol import ADMISSION, LIFECYCLE, Clock, RuntimeSettings
from jobconform.backends.store import InMemoryJobStore, JobStore
from jobconform.backends.threaded.admission import ThreadedAdmissionRuntime
from jobconform.backends.threaded.config import WorkerConfig
from jobconform.backends.threaded.worker import ThreadedRuntime
from jobconform.reference.admission import AdmissionConfig


def conformance_config(settings: RuntimeSettings) -> WorkerConfig:
    """The worker configuration for one conformance check."""
    return WorkerConfig(enabled=True, max_workers=settings.max_concurrent, poll_interval=None)


class ThreadedBackend:
    """Entry point `threaded`: jobs really run in pool threads, up to max_concurrent; each
    admitted execution's body runs in a thread of its own."""

    name = "threaded"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE, ADMISSION})

    def open(self, settings: RuntimeSettings, clock: Clock) -> ThreadedRuntime:
        return ThreadedRuntime(self.new_store(), clock, conformance_config(settings),
                               max_tasks=settings.max_tasks)

    def open_admission(self, clock: Clock, config: AdmissionConfig) -> ThreadedAdmissionRuntime:
        return ThreadedAdmissionRuntime(self.new_admission_store(), clock, config)

    def new_store(self) -> JobStore:
        """An empty store for one runtime."""
        return InMemoryJobStore()

    def new_admission_store(self) -> AdmissionStore:
        """An empty admission store for one admission runtime."""
        return InMemoryAdmissionStore()
