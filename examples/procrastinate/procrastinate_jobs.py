"""procrastinate itself (its asyncio worker, its in-memory connector) against lifecycle.

The worker is a task on the runtime's own event loop (`VirtualLoop`). Over
`procrastinate.testing.InMemoryConnector` no socket I/O is left when the loop settles, and
it polls, beats and stamps on the virtual clock (`WallClock`). Its task is the job's body:
at the `DispatchGate` (the worker fetches a job once deferred), then the harness's decision.
A cancel is procrastinate's `cancel_job_by_id_async(abort=True)`. procrastinate keeps no
results or spec timestamps: what its task reports goes into the kit's `JobRecords`.
"""

import asyncio
import itertools
import logging

import procrastinate
from procrastinate.testing import InMemoryConnector

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, VirtualLoop, WallClock, translate


class ProcrastinateRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall = WallClock(clock).start()
        self._loop = VirtualLoop(clock, on_step=self._wall.move_to)
        self._jobs = jobs = translate.records_on_wall(settings)
        self._gate, self._ranks, self._closing = DispatchGate(), itertools.count(), False
        self._scripts: dict[str, tuple[int, TaskScript]] = {}
        self._ids: dict[str, int] = {}  # job id -> procrastinate's job id
        self._decisions = translate.Decisions()  # a cancel is procrastinate's: it aborts the task
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health = jobs.cleanup, jobs.health
        logging.getLogger("procrastinate").setLevel(logging.CRITICAL)  # a traceback per failure
        self.app = procrastinate.App(connector=InMemoryConnector())  # public: tests read it
        self._task = self.app.task(name="body")(self._body)
        self._loop.run(self.app.open_async(), name="open_async")
        self._loop.spawn(self.app.run_worker_async(
            concurrency=settings.max_concurrent, install_signal_handlers=False), name="worker")
        self.settle()

    async def _body(self, job_id: str) -> object:
        rank, script = self._scripts[job_id]
        if not await self._gate.wait_async(job_id, rank):
            return None
        self._jobs.update(job_id, "running")
        while not script.decided():
            try:
                await self._decisions.wait(job_id, script)
            except asyncio.CancelledError:  # procrastinate aborts the job: cancels its task
                if script.honours_cancellation or self._closing:
                    self._jobs.update(job_id, "cancelled")
                    raise
        if self._gate.released(job_id):  # a requested cancellation wins over the outcome
            self._jobs.update(job_id, "cancelled")
            raise asyncio.CancelledError
        try:
            result = script.run()
        except Exception as error:
            self._jobs.update(job_id, "failed", error=translate.error_text(error))
            raise
        self._jobs.update(job_id, "succeeded", result=result)
        return result

    def submit(self, script: TaskScript, retry: object = None) -> str:
        rank = next(self._ranks)
        job_id = self._jobs.add(f"job-{rank}").job_id
        self._scripts[job_id] = (rank, script)
        self._ids[job_id] = self._loop.run(self._task.defer_async(job_id=job_id), name="defer")
        self.settle()
        return job_id

    def settle(self) -> None:
        self._decisions.release_decided()
        self._loop.settle()

    def dispatch(self) -> None:
        self.settle()  # bodies the worker has fetched reach the gate first
        self._gate.open()
        self.settle()

    def _abort(self, job_id: str) -> None:
        manager = self.app.job_manager
        self._loop.run(manager.cancel_job_by_id_async(self._ids[job_id], abort=True), "cancel")

    def cancel(self, job_id: str) -> bool:
        if translate.cancel_in(self._jobs, self._gate, job_id) is None:
            return False
        self._abort(job_id)
        self.settle()
        return True

    def shutdown(self) -> None:
        for job_id in translate.shut_down_in(self._jobs, self._gate):
            self._abort(job_id)
        self.settle()

    def close(self) -> None:
        self._closing = True
        self._gate.close()
        self._loop.close()  # cancels the worker, which ends its jobs and unregisters
        self._wall.stop()


class ProcrastinateBackend:  # jobconform run --backend procrastinate_jobs:ProcrastinateBackend
    name, profile, capabilities = "procrastinate", "canonical", frozenset({"lifecycle"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> ProcrastinateRuntime:
        return ProcrastinateRuntime(settings, clock)
