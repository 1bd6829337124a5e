"""huey itself (MemoryHuey and its consumer's worker threads) against the lifecycle area.

The consumer runs `max_concurrent` worker threads and a scheduler thread, as `huey_consumer`
would; they poll, sleep and stamp times on the wall clock, which `ThreadWaits` and
`WallClock` make virtual. The task huey runs is the job's body: it waits at the
`DispatchGate` (huey's workers pick tasks up on their own), then for the harness's
decision. huey keeps results, not job records: what its task and its signals report goes
into the kit's `JobRecords`. A queued job is cancelled with `revoke_by_id`.
"""

import itertools
import logging
import signal
import uuid

from huey import MemoryHuey
from huey.signals import SIGNAL_ERROR

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, ThreadWaits, WallClock, translate


class Cancelled(Exception):
    """The job was cancelled while its body ran; huey reports it as an error."""


class HueyRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall, self._waits = WallClock(clock).start(), ThreadWaits(clock).start()
        self._jobs = jobs = translate.records_on_wall(settings)
        self._gate, self._ranks = DispatchGate(), itertools.count()
        self._scripts: dict[str, tuple[int, TaskScript]] = {}
        self._tasks: dict[str, str] = {}  # job id -> huey task id
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health, self.settle = jobs.cleanup, jobs.health, self._waits.settle
        logging.getLogger("huey").setLevel(logging.CRITICAL)  # a traceback per failed body
        self._huey = MemoryHuey(f"jobconform-{uuid.uuid4().hex}", utc=True)
        self._run = self._huey.task()(self._body)
        self._huey.signal(SIGNAL_ERROR)(self._failed)
        self._consumer = self._huey.create_consumer(
            workers=settings.max_concurrent, worker_type="thread", periodic=False)
        handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
        with self._waits.adopting():
            self._consumer.start()  # its threads, and the signal handlers of a consumer process
        for number, handler in handlers.items():
            signal.signal(number, handler)  # the harness keeps its own
        self._waits.settle()

    def _body(self, job_id: str) -> object:
        rank, script = self._scripts[job_id]
        if not self._gate.wait(job_id, rank):
            return None
        self._jobs.update(job_id, "running")
        if not translate.may_run(self._gate, job_id, script):
            raise Cancelled
        result = script.run()
        self._jobs.update(job_id, "succeeded", result=result)
        return result

    def _failed(self, signal_name: str, task: object, exc: BaseException) -> None:
        job_id = str(getattr(task, "args", ("",))[0])
        if isinstance(exc, Cancelled):
            self._jobs.update(job_id, "cancelled")
        else:
            self._jobs.update(job_id, "failed", error=translate.error_text(exc))

    def submit(self, script: TaskScript, retry: object = None) -> str:
        rank = next(self._ranks)
        job_id = self._jobs.add(f"job-{rank}").job_id
        self._scripts[job_id] = (rank, script)
        self._tasks[job_id] = self._run(job_id).id
        return job_id

    def dispatch(self) -> None:
        self._waits.wake_sleepers()  # a dispatch point: huey's workers poll now
        self._waits.settle()
        self._gate.open()
        self._waits.settle()

    def cancel(self, job_id: str) -> bool:
        was = translate.cancel_in(self._jobs, self._gate, job_id)
        if was is None:
            return False
        if was == "queued":
            self._huey.revoke_by_id(self._tasks[job_id])
        self._waits.settle()
        return True

    def shutdown(self) -> None:
        for job_id in translate.shut_down_in(self._jobs, self._gate):
            self._huey.revoke_by_id(self._tasks[job_id])
        self._waits.settle()

    def close(self) -> None:
        self._gate.close()
        self._consumer.stop(graceful=True)
        self._waits.stop()
        self._wall.stop()


class HueyBackend:  # jobconform run --backend huey_jobs:HueyBackend
    name, profile, capabilities = "huey", "canonical", frozenset({"lifecycle"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> HueyRuntime:
        return HueyRuntime(settings, clock)
