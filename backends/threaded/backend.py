"""The `threaded` backend: the threaded worker over the in-memory job store.

The conformance harness drives it with a virtual clock. The worker polls only at dispatch
points (`poll_interval=None`), because the oracle starts jobs only there; its pool has as
many threads as the check's `max_concurrent`. The environment's JOBCONFORM_ASYNC_*
variables configure real deployments, not conformance runs, so that a run depends on its
seed alone.
"""

from __future__ import annotations

from jobconform.backends.loops_protocol import LOOPS, LoopsConfig
from jobconform.backends.memory_loops import InMemoryLoopStore
from jobconform.backends.protocol import LIFECYCLE, RETRY, Clock, RuntimeSettings
from jobconform.backends.store import InMemoryJobStore, JobStore
from jobconform.backends.threaded.clock import WaitableClock
from jobconform.backends.threaded.config import WorkerConfig
from jobconform.backends.threaded.loops import ThreadedLoopRuntime
from jobconform.backends.threaded.worker import ThreadedRuntime


def waitable(clock: Clock) -> WaitableClock:
    if not isinstance(clock, WaitableClock):
        raise TypeError(f"the threaded backend sleeps on its clock; {type(clock).__name__}"
                        " has no wait_until(condition, deadline)")
    return clock


def conformance_config(settings: RuntimeSettings) -> WorkerConfig:
    """The worker configuration for one conformance check."""
    return WorkerConfig(enabled=True, max_workers=settings.max_concurrent, poll_interval=None)


class ThreadedBackend:
    """Entry point `threaded`: jobs really run in pool threads, up to max_concurrent."""

    name = "threaded"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE, RETRY, LOOPS})

    def open_loops(self, clock: Clock, config: LoopsConfig) -> ThreadedLoopRuntime:
        """Loops whose runs execute on threads of their own, over an in-memory store that
        outlives a restart of the runtime (the process's memory stands in for a disk)."""
        store = InMemoryLoopStore()
        return ThreadedLoopRuntime(waitable(clock), config, lambda: store)

    def open(self, settings: RuntimeSettings, clock: Clock) -> ThreadedRuntime:
        return ThreadedRuntime(self.new_store(), clock, conformance_config(settings),
                               max_tasks=settings.max_tasks)

    def new_store(self) -> JobStore:
        """An empty store for one runtime."""
        return InMemoryJobStore()
