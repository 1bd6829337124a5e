"""RQ's started-job registry as the stuck area's detection pass, composed onto `rq_jobs`.

RQ keeps every execution in its queue's `StartedJobRegistry`, scored with the instant it
expires: its last heartbeat (whole seconds, `current_timestamp()`) plus a TTL, which a
SimpleWorker running a job with no timeout (-1, as `rq_jobs` enqueues) sets to
`DEFAULT_WORKER_TTL`. `StartedJobRegistry.cleanup(timestamp)`, which RQ's worker runs in its
maintenance, fails every execution that expired by `timestamp` as abandoned (or retries it
while it has retries left). Here:

- a `Heartbeat` is what RQ's worker does while its job runs (`Worker.maintain_heartbeats`):
  the execution's registry entry and the job's `last_heartbeat`, renewed with that TTL;
- `DetectStuck(timeout)` is that cleanup at the cutoff that makes RQ's TTL the pass's
  timeout, `time.time() - timeout + DEFAULT_WORKER_TTL`, on RQ's own (virtual) clock;
- `last_heartbeat` is RQ's own, read back from the job's hash; RQ's abandoned-job failure
  ("Moved to FailedJobRegistry, due to AbandonedJobError, at ...") is told in the spec's
  words, the only translation, and a body that ends later is shown as RQ then stores it.
"""

import time
from dataclasses import asdict, dataclass
from datetime import datetime

from rq.defaults import DEFAULT_WORKER_TTL
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus
from rq.registry import StartedJobRegistry
from rq.utils import now
from rq_jobs import RQBackend, RQRuntime

from jobconform.backends.protocol import RETRY_INTERVALS, STUCK, Clock, RuntimeSettings
from jobconform.bridges.records import JobRecord
from jobconform.reference.lifecycle import STUCK_ERROR


@dataclass(frozen=True)
class StuckView(JobRecord):
    last_heartbeat: datetime | None = None  # RQ's, as its worker last wrote it


class RQStuckRuntime(RQRuntime):
    abandoned_errors: tuple[str, ...] = (STUCK_ERROR,)  # a failure RQ's cleanup recorded

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self.get, self.list_jobs = self._get, self._list_jobs  # views with RQ's last beat

    def _stored(self, job_id: str) -> Job | None:
        try:
            return Job.fetch(job_id, connection=self.redis)
        except NoSuchJobError:  # deleted with the queue at close
            return None

    def _view(self, record: JobRecord) -> StuckView:
        job = self._stored(record.job_id)
        fields = asdict(record)
        if job is not None and record.status == "failed" and record.error in self.abandoned_errors \
                and job.get_status() == JobStatus.FINISHED:  # the late body's result won
            fields.update(status="succeeded", result=job.return_value(), error=None)
        return StuckView(**fields, last_heartbeat=job.last_heartbeat if job else None)

    def _get(self, job_id: str) -> StuckView | None:
        record = self._jobs.get(job_id)
        return None if record is None else self._view(record)

    def _list_jobs(self, status: str | None = None) -> list[JobRecord]:
        views: list[JobRecord] = [self._view(record) for record in self._jobs.list_jobs()]
        return [view for view in views if status in (None, view.status)]

    def heartbeat(self, job_id: str) -> None:
        job = self._stored(job_id)
        if job is None or job.get_status() != JobStatus.STARTED:
            return  # RQ's worker beats only the job it runs
        with self.redis.pipeline() as pipeline:
            for execution in job.get_executions():
                execution.heartbeat(job.started_job_registry, DEFAULT_WORKER_TTL, pipeline)
            job.heartbeat(now(), DEFAULT_WORKER_TTL, pipeline=pipeline)
            pipeline.execute()

    def abandon(self, seconds: float, error: str = STUCK_ERROR) -> tuple[int, int]:
        """RQ's cleanup at the cutoff that makes its TTL `seconds`: (retried, failed)."""
        registry = StartedJobRegistry(queue=self.queue)
        held = registry.get_job_ids(cleanup=False)
        registry.cleanup(timestamp=time.time() - seconds + DEFAULT_WORKER_TTL)
        retried = failed = 0
        for job in filter(None, map(self._stored, held)):
            if (status := job.get_status()) == JobStatus.FAILED:  # abandoned, no retry left
                failed += self._jobs.update(job.id, "failed", error=error)
            elif status != JobStatus.STARTED:  # abandoned with a retry left: RQ retries it
                taken = len(job.retry_intervals or ()) - (job.retries_left or 0)
                retried += self._jobs.update(job.id, "queued", retry_count=taken)
        self._waits.settle()
        return retried, failed

    def detect_stuck(self, job_timeout_seconds: float) -> int:
        return self.abandon(job_timeout_seconds)[1]


class RQStuckBackend(RQBackend):  # jobconform run --backend rq_stuck:RQStuckBackend
    capabilities = frozenset({"lifecycle", "retry", RETRY_INTERVALS, STUCK})

    def open(self, settings: RuntimeSettings, clock: Clock) -> RQStuckRuntime:
        return RQStuckRuntime(settings, clock)
