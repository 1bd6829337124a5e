"""A small asyncio job runner, checked through the kit's asyncio bridge (the guide's example).

Each job is an asyncio task on the runtime's own event loop (`VirtualLoop`), whose time is
the harness's virtual clock. A body waits at the `DispatchGate` until a dispatch point,
then for the harness's decision; records are stamped with `datetime.now()` (`WallClock`).
"""

import asyncio
import itertools
from datetime import UTC, datetime

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, JobRecords, VirtualLoop, WallClock


class AsyncioRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall = WallClock(clock).start()
        self._loop = VirtualLoop(clock, on_step=self._wall.move_to)
        self._gate, self._ranks = DispatchGate(slots=settings.max_concurrent), itertools.count()
        self._jobs = jobs = JobRecords(lambda: datetime.now(UTC), settings.max_tasks)
        self._decided: dict[str, tuple[TaskScript, asyncio.Future[None]]] = {}
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health = jobs.cleanup, jobs.health

    def submit(self, script: TaskScript, retry: object = None) -> str:
        rank = next(self._ranks)
        job_id = self._jobs.add(f"job-{rank}").job_id
        self._loop.spawn(self._body(job_id, rank, script), name=job_id)
        self.settle()
        return job_id

    async def _body(self, job_id: str, rank: int, script: TaskScript) -> None:
        try:
            if not await self._gate.wait_async(job_id, rank):
                return
            self._jobs.update(job_id, "running")
            decision = self._loop.loop.create_future()
            self._decided[job_id] = (script, decision)
            await decision  # resolved by settle() once the harness has decided
            if self._gate.released(job_id) and (script.decided() or script.honours_cancellation):
                self._jobs.update(job_id, "cancelled")
            else:
                self._jobs.update(job_id, "succeeded", result=script.run())
        except Exception as error:
            self._jobs.update(job_id, "failed", error=f"{type(error).__name__}: {error}")
        finally:
            self._decided.pop(job_id, None)
            self._gate.finished(job_id)

    def settle(self) -> None:
        for job_id, (script, decision) in list(self._decided.items()):
            released = self._gate.released(job_id) and script.honours_cancellation
            if (script.decided() or released) and not decision.done():
                decision.set_result(None)
        self._loop.settle()

    def dispatch(self) -> None:
        self._gate.open()
        self.settle()

    def cancel(self, job_id: str) -> bool:
        record = self._jobs.get(job_id)
        if not record or record.status not in ("queued", "running") or self._gate.released(job_id):
            return False
        self._gate.release(job_id)
        if record.status == "queued":
            self._jobs.update(job_id, "cancelled")
        self.settle()
        return True

    def shutdown(self) -> None:
        for job_id in self._jobs.shut_down():
            self._gate.release(job_id)
            self._jobs.update(job_id, "cancelled")
        self.settle()

    def close(self) -> None:
        self._gate.close()
        self._loop.close()
        self._wall.stop()


class AsyncioBackend:  # jobconform run --backend asyncio_jobs:AsyncioBackend
    name, profile, capabilities = "asyncio-jobs", "canonical", frozenset({"lifecycle"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> AsyncioRuntime:
        return AsyncioRuntime(settings, clock)
