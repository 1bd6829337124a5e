"""A small asyncio job runner, checked through the kit's asyncio bridge (the guide's example).

Each job is an asyncio task on the runtime's own event loop (`VirtualLoop`), whose time is
the harness's virtual clock. A body waits at the `DispatchGate` until a dispatch point,
then for the harness's decision; records are stamped with `datetime.now()` (`WallClock`).
"""

import itertools

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, VirtualLoop, WallClock, translate


class AsyncioRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall = WallClock(clock).start()
        self._loop = VirtualLoop(clock, on_step=self._wall.move_to)
        self._gate, self._ranks = DispatchGate(slots=settings.max_concurrent), itertools.count()
        self._jobs = jobs = translate.records_on_wall(settings)
        self._decisions = translate.Decisions(self._gate)
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
            await self._decisions.wait(job_id, script)  # settle() lets it go once decided
            if translate.cancellation_wins(self._gate, job_id, script):
                self._jobs.update(job_id, "cancelled")
            else:
                self._jobs.update(job_id, "succeeded", result=script.run())
        except Exception as error:
            self._jobs.update(job_id, "failed", error=translate.error_text(error))
        finally:
            self._gate.finished(job_id)

    def settle(self) -> None:
        self._decisions.release_decided()
        self._loop.settle()

    def dispatch(self) -> None:
        self._gate.open()
        self.settle()

    def cancel(self, job_id: str) -> bool:
        if translate.cancel_in(self._jobs, self._gate, job_id) is None:
            return False
        self.settle()
        return True

    def shutdown(self) -> None:
        translate.shut_down_in(self._jobs, self._gate)
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
