"""What a job runtime over a job store answers the same way however its bodies run.

The step runtime (backends/step_runtime.py) runs bodies in steps, the threaded worker
(backends/threaded/worker.py) in pool threads; how each claims, owns and ends a job
differs, but the reads, the retention, the operator queue, the reaper's status and the
delay function go straight to the store, the reaper or the retry rules, and are written
once here. A subclass sets `_store`, `_clock`, `_reaper`, `_alerts` and `_page_size` in its
constructor.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from jobconform.backends import executions
from jobconform.backends.protocol import (
    Clock,
    JobNotCompleted,
    JobNotFound,
    JobView,
    OperatorSink,
)
from jobconform.backends.reaper import OperatorAlerts, Reaper
from jobconform.backends.retry_delay import retry_delay_ms
from jobconform.backends.runtime_health import OutcomeTally
from jobconform.backends.store import SUCCEEDED, JobStore, StoredJob
from jobconform.reference.backoff import Jitter, RetryPolicy

# Results that no caller can change in place: handed out without a copy.
IMMUTABLE_VALUES = (type(None), bool, int, float, str)


class StoreRuntime(OutcomeTally):
    """The store-facing half of a job runtime; the owning half is the subclass's."""

    reaper_type: type[Reaper] = Reaper  # the self-test gallery swaps in broken ones

    _store: JobStore
    _clock: Clock
    _reaper: Reaper
    _alerts: OperatorAlerts
    _page_size: int  # the executions query's (LC-032)

    @property
    def store(self) -> JobStore:
        """The store this runtime runs over (a restart opens the next one over it)."""
        return self._store

    def _now(self) -> datetime:
        return self._clock.now()

    def _copy(self, job: StoredJob) -> StoredJob:
        """Records are frozen, but a result, arguments or options may be a dict: hand out
        copies of them too (LC-016)."""
        return replace(job, result=copy.deepcopy(job.result),
                       arguments=copy.deepcopy(job.arguments),
                       options=copy.deepcopy(job.options))

    # -- retry delays (RT-002, RT-009, RT-010) ---------------------------------------------

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        """This runtime's delay function (RT-002, RT-009, RT-010): its own, not the oracle's."""
        return retry_delay_ms(policy, attempt, jitter, draw, previous_ms, retry_after_ms)

    # -- the operator queue (RD-003, RD-008) -----------------------------------------------

    def operator_alerts(self) -> list[str]:
        return self._alerts.job_ids()

    def park_request(self, agent: str, request_id: str) -> str:
        """Park an operator request, one per agent and request id (RD-008): the store's
        key decides, so a re-park and a racing parker land on the request it holds."""
        return self._store.park_request(agent, request_id)

    def operator_requests(self) -> list[tuple[str, str, str]]:
        return self._store.operator_requests()

    def attach_operator_sink(self, sink: OperatorSink) -> None:
        """Raise every alert to the harness's sink as well (OperatorSinkRuntime)."""
        self._alerts.sink = sink

    # -- the reaper (RP-001..RP-007; each runtime starts it its own way) -------------------

    def stop_reaper(self) -> bool:
        """Stop the reaper; a sweep in flight ends first (RP-007)."""
        return self._reaper.stop()

    def reaper_status(self) -> dict[str, object]:
        return self._reaper.status()

    def inject_store_outage(self, sweeps: int) -> None:
        self._reaper.inject_store_outage(sweeps)

    def list_expired(self, before: datetime) -> Sequence[JobView]:
        return [self._copy(job) for job in self._store.list_expired(before)]

    # -- reads -----------------------------------------------------------------------------

    def get(self, job_id: str) -> StoredJob | None:
        job = self._store.get(job_id)
        return None if job is None else self._copy(job)

    def get_result(self, job_id: str) -> object:
        job = self._store.get(job_id)
        if job is None:
            raise JobNotFound(job_id)
        if job.status != SUCCEEDED:
            raise JobNotCompleted(job_id, job.status)
        return job.result if isinstance(job.result, IMMUTABLE_VALUES) else copy.deepcopy(
            job.result)

    def list_jobs(self, status: str | None = None) -> Sequence[StoredJob]:
        return [self._copy(job) for job in self._store.list(status)]

    def query_executions(self, *, status: str | None = None, trigger: str | None = None,
                         owners: Sequence[str] | None = None, hours: float | None = None,
                         search: str | None = None, offset: int = 0,
                         limit: int | None = None) -> Sequence[StoredJob]:
        """One page of the executions query (LC-032, LC-033), from one read of the store."""
        return [self._copy(job) for job in executions.page(
            self._store.list(), self._now(), self._page_size, status=status,
            trigger=trigger, owners=owners, hours=hours, search=search, offset=offset,
            limit=limit)]

    def execution_stats(self, hours: float | None = None,
                        owners: Sequence[str] | None = None) -> dict[str, int]:
        """The execution statistics (LC-034), from one read of the store."""
        return executions.stats(self._store.list(), self._now(), hours, owners)

    # -- retention -------------------------------------------------------------------------

    def cleanup(self, max_age_seconds: float) -> int:
        return self._store.delete_terminal(self._now() - timedelta(seconds=max_age_seconds))
