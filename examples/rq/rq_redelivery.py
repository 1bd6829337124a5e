"""RQ's started-job registry as the redelivery area's lease pass too, composed onto `rq_stuck`.

RQ brings lost work back one way: `StartedJobRegistry.cleanup`, which each worker's
maintenance runs (`Worker.clean_registries`, every `maintenance_interval`, 600 s by default),
takes every execution whose score (its last heartbeat plus a TTL: `job_monitoring_interval`
+ 60 s while its worker beats) has passed and calls the job abandoned: `Job.retry` while it
has retries left (a retry spent, its next interval waited), else the FailedJobRegistry with
`AbandonedJobError`. One mechanism, so one run checks it against stuck and redelivery:

- `ExpireLeases(lease)` is that cleanup at the cutoff that makes RQ's TTL the lease, as
  `DetectStuck` is. The answer counts a job RQ retried as re-queued and one it failed as
  parked, the only way it takes lost work out of circulation, in RQ's words
  (`AbandonedJobError`) where `DetectStuck` tells it in the spec's;
- RQ keeps no re-delivery count, alerts nobody and marks nothing as poison: the views read
  `redelivery_count` 0, `alerted` and `poisoned` False, and `operator_alerts()` is empty;
- `StaleOwnerWrite(job, write)` is the worker that held the abandoned execution (its thread
  still waits in the body: a lapsed lease stops nothing) writing through its own methods
  with that execution: `maintain_heartbeats`, `handle_job_success`, `handle_job_failure`.
  Nothing in them compares the execution with the job's current one, so RQ takes the write
  into its job hash (the views stay the records the adapter keeps from the pass).
"""

from collections.abc import Sequence
from dataclasses import asdict, dataclass

from rq import SimpleWorker
from rq.exceptions import AbandonedJobError
from rq.executions import Execution
from rq.registry import StartedJobRegistry
from rq_jobs import RQBackend
from rq_stuck import RQStuckRuntime, StuckView

from jobconform.backends.protocol import (
    REDELIVERY,
    RETRY_INTERVALS,
    STUCK,
    Clock,
    RuntimeSettings,
)
from jobconform.bridges.records import JobRecord
from jobconform.reference.lifecycle import STUCK_ERROR

ABANDONED = AbandonedJobError.__name__  # the error RQ records, without its time


@dataclass(frozen=True)
class LeaseView(StuckView):
    redelivery_count: int = 0  # RQ counts no re-deliveries: its re-delivery is a retry
    alerted: bool = False  # no operator alert in RQ
    poisoned: bool = False


class RQRedeliveryRuntime(RQStuckRuntime):
    abandoned_errors = (STUCK_ERROR, ABANDONED)

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._workers = tuple(self._idle)  # every slot's worker, idle or busy
        self._superseded: dict[str, tuple[SimpleWorker, Execution]] = {}

    def _view(self, record: JobRecord) -> LeaseView:
        return LeaseView(**asdict(super()._view(record)))

    def expire_leases(self, lease_seconds: float) -> dict[str, int]:
        registry = StartedJobRegistry(queue=self.queue)
        held = registry.get_job_ids(cleanup=False)
        owners = {execution.job_id: (worker, execution) for worker in self._workers
                  for execution in worker.executions.values() if execution.job_id in held}
        requeued, parked = self.abandon(lease_seconds, ABANDONED)
        still = registry.get_job_ids(cleanup=False)  # executions the cleanup left alone
        self._superseded.update((job_id, owner) for job_id, owner in owners.items()
                                if job_id not in still)
        return {"requeued": requeued, "parked": parked}

    def operator_alerts(self) -> Sequence[str]:
        return ()

    def stale_owner_write(self, job_id: str, write: str) -> bool:
        if (owner := self._superseded.get(job_id)) is None or (job := self._stored(job_id)) is None:
            return False
        worker, execution = owner
        registry = StartedJobRegistry(queue=self.queue)
        if write == "heartbeat":
            worker.maintain_heartbeats(job, execution)
        else:
            worker.handle_execution_ended(job, self.queue, job.success_callback_timeout)
            if write == "outcome":
                worker.handle_job_success(job, self.queue, registry, execution)
            else:
                worker.handle_job_failure(job, self.queue, registry, "stale failure", execution)
        self._waits.settle()
        return True  # RQ compares no owner or execution: the write is in its job hash


class RQRedeliveryBackend(RQBackend):  # --backend rq_redelivery:RQRedeliveryBackend
    capabilities = frozenset({"lifecycle", "retry", RETRY_INTERVALS, STUCK, REDELIVERY})

    def open(self, settings: RuntimeSettings, clock: Clock) -> RQRedeliveryRuntime:
        return RQRedeliveryRuntime(settings, clock)
