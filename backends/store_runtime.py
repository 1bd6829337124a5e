"""What a job runtime over a job store answers the same way however its bodies run.

The step runtime (backends/step_runtime.py) runs bodies in steps, the threaded worker
(backends/threaded/worker.py) in pool threads; how each claims, owns and ends a job
differs, but the submitted record, the retry decision, the reads, the retention, the
operator queue, the reaper's status and the delay function go straight to the store, the
reaper or the retry rules, and are written once here. A subclass sets `_store`, `_clock`,
`_reaper`, `_alerts`, `_page_size`, `_scripts` and `_superseded` in its constructor.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from jobconform.backends import executions, ownership
from jobconform.backends.protocol import (
    Clock,
    InvalidModuleId,
    JobNotCompleted,
    JobNotFound,
    JobView,
    ModuleNotFound,
    OperatorSink,
    TaskScript,
)
from jobconform.backends.reaper import OperatorAlerts, Reaper, current_reaper_settings
from jobconform.backends.retry_delay import (
    is_retried,
    policy_document,
    policy_of_document,
    retry_delay_ms,
)
from jobconform.backends.runtime_health import OutcomeTally
from jobconform.backends.store import CANCELLED, FAILED, QUEUED, SUCCEEDED, JobStore, StoredJob
from jobconform.backends.synchronous import run_in_submit
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.lifecycle import JsonValue

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
    _scripts: dict[str, TaskScript]  # the bodies of jobs submitted here, by id
    # The token of the delivery each job's latest lease expiry took away (RD-006).
    _superseded: dict[str, int]

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

    # -- submission (LC-027, LC-030, LC-035..LC-037, RT-001) --------------------------------

    @staticmethod
    def _new_job_id() -> str:
        """A new id, unique even when several threads submit at once (LC-030)."""
        return str(uuid.uuid4())

    def _new_record(self, modules: frozenset[str], retry: RetryPolicy | None,
                    module_id: str | None, arguments: JsonValue, owner: str | None,
                    trigger: str | None, options: JsonValue) -> StoredJob:
        """The queued record of a job submitted now, under a new id.

        Raises:
            InvalidModuleId, ModuleNotFound: see `check_module`.
        """
        if module_id is not None:
            check_module(module_id, modules)
        # Copies: the caller may change its values afterwards, the job keeps what was given.
        job = StoredJob(self._new_job_id(), QUEUED, self._now(),
                        arguments=copy.deepcopy(arguments), owner=owner, trigger=trigger,
                        options=copy.deepcopy(options))
        if retry is None:
            return job
        # The policy travels with the job, so whichever worker claims a later attempt
        # applies the same one (RT-001).
        return replace(job, max_retries=retry.max_retries,
                       retry_policy=policy_document(retry))  # type: ignore[arg-type]

    def _accept(self, job: StoredJob, script: TaskScript, queued_execution: bool,
                max_tasks: int | None, worker_id: str) -> str:
        """Queue a new job with its body; with queued execution off, run the body now, in
        the caller's thread, so no claim ever sees the job (LC-037). Returns its id."""
        if queued_execution:
            self._store.add(job, max_tasks)
            self._scripts[job.job_id] = script
        else:
            status = run_in_submit(self._store, job, max_tasks, worker_id, script)
            self._record_heartbeat(job.submitted_at)
            self._count_outcome(status)
        return job.job_id

    # -- a body's failure (LC-007, RT-003..RT-005) -------------------------------------------

    @staticmethod
    def _error_message(error: Exception) -> str:
        """The failed record's error: bare type name, colon, message (LC-007)."""
        return f"{type(error).__name__}: {error}"

    def _retry_delay_ms(self, job: StoredJob, error: Exception) -> float | None:
        """How long the failed attempt waits for its retry, or None when the job's policy
        does not retry it (RT-003..RT-005): no policy, an error it does not retry, or its
        retries spent."""
        policy = policy_of_document(job.retry_policy)
        if policy is None or not is_retried(policy, type(error).__name__, job.retry_count):
            return None
        return self.compute_delay_ms(policy, job.retry_count,
                                     retry_after_ms=getattr(error, "retry_after_ms", None))

    # -- a lapsed lease (RD-001..RD-003, RD-006) --------------------------------------------

    def _requeue_lapsed(self, job: StoredJob) -> bool:
        """Back to the queue under the same id, one more re-delivery counted (RD-001); the
        delivery `job` was is superseded. False if the job moved since it was read."""
        if ownership.redeliver(self._store, job) is None:
            return False
        self._superseded[job.job_id] = job.fencing_token
        return True

    def _park_lapsed(self, job: StoredJob) -> bool:
        """Alert the operator first (once per id), then fail the job as poison (RD-003);
        the delivery `job` was is superseded. False if the job moved since it was read."""
        if ownership.park(self._store, job, self._now(), self._alerts) is None:
            return False
        self._superseded[job.job_id] = job.fencing_token
        self._count_outcome(FAILED)
        return True

    # -- cancellation and superseded owners (LC-011, RD-006) -------------------------------

    def _cancel_queued(self, job_id: str) -> bool:
        """No worker owns a queued job, so the caller moves it (LC-011); False if it was
        claimed or ended meanwhile."""
        if self._store.update(job_id, QUEUED, status=CANCELLED,
                              finished_at=self._now()) is None:
            return False
        self._count_outcome(CANCELLED)
        return True

    def stale_owner_write(self, job_id: str, write: str) -> bool:
        """The owner of the delivery the job's latest lease expiry took away writes now,
        unaware (fault injection, RD-006); True if the store accepted it."""
        token = self._superseded.get(job_id)
        if token is None:
            return False
        return ownership.write_as_owner(self._store, job_id, token, write, self._now())

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

    # -- the reaper (RP-001..RP-007) ---------------------------------------------------------

    def start_reaper(self, ttl_seconds: float | None = None,
                     sweep_interval_ms: float | None = None, *,
                     interval_seconds: float | None = None,
                     max_age_seconds: float | None = None) -> None:
        """Start the reaper now; its sweeps run as the clock reaches them (RP-002). The
        last two are seed 004's deprecated names, kept (RP-010).

        Raises:
            ReaperAlreadyRunning: it runs already; its schedule stays (RP-006).
        """
        self._reaper.start(self._now(), *current_reaper_settings(
            ttl_seconds, sweep_interval_ms, interval_seconds, max_age_seconds))

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


# LC-027: a module id is at most this long.
MODULE_ID_MAX_CHARS = 128


def check_module(module_id: str, known: frozenset[str]) -> None:
    """Refuse a submission naming a malformed or unknown module id (LC-027).

    Raises:
        InvalidModuleId: the id is malformed.
        ModuleNotFound: the id is well formed but no module has it.
    """
    segments = module_id.split(".")
    if len(module_id) > MODULE_ID_MAX_CHARS or not all(
            segment[:1].isascii() and segment[:1].islower() and all(
                character.isascii() and (character.islower() or character.isdigit()
                                         or character == "_") for character in segment)
            for segment in segments):
        raise InvalidModuleId(f"malformed module id {module_id!r} (INVALID_MODULE_ID)")
    if module_id not in known:
        raise ModuleNotFound(f"no module {module_id!r} (MODULE_NOT_FOUND)")
