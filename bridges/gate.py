"""The dispatch gate: a runtime that starts work on its own begins bodies only at dispatch.

The spec starts queued jobs at dispatch points only (LC-010). A real runtime's workers
pick work up whenever they poll. The adapter puts the gate at the top of the body it
hands the runtime: `gate.wait(job_id, script)` blocks the worker (a thread, or a task on
the asyncio bridge with `await gate.wait_async(...)`) until the next `open()`, which the
adapter calls from `dispatch()`. Bodies let in are recorded in arrival order, so the
adapter can report a job as running from the moment its body really began
(`started(job_id)`), not from the moment a worker picked it up.

A body released undecided (its job was cancelled at the gate) returns False: the adapter
ends it without running the script.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from jobconform.backends.protocol import TaskScript


class DispatchGate:
    def __init__(self) -> None:
        self._state = threading.Condition()
        self._opened = 0  # how many dispatch points have passed
        self._waiting: dict[str, int] = {}  # job id -> the dispatch count it arrived at
        self._released: set[str] = set()
        self._started: list[str] = []
        self._wakers: dict[str, Callable[[], object]] = {}  # bodies waiting on a loop

    def open(self) -> list[str]:
        """A dispatch point: every body waiting at the gate now begins.

        Returns:
            The job ids let in, in the order their bodies arrived.
        """
        with self._state:
            self._opened += 1
            admitted = list(self._waiting)
            self._state.notify_all()
            for wake in self._wakers.values():
                wake()
            return admitted

    def release(self, job_id: str) -> None:
        """Let a waiting body go without running it (its job was cancelled)."""
        with self._state:
            self._released.add(job_id)
            self._state.notify_all()
            wake = self._wakers.get(job_id)
            if wake is not None:
                wake()

    def waiting(self) -> list[str]:
        with self._state:
            return list(self._waiting)

    def started(self, job_id: str) -> bool:
        with self._state:
            return job_id in self._started

    def _arrive(self, job_id: str) -> Callable[[], bool | None]:
        with self._state:
            arrived_at = self._opened
            self._waiting[job_id] = arrived_at

        def verdict() -> bool | None:
            if job_id in self._released:
                return False
            if self._opened > arrived_at:
                return True
            return None
        return verdict

    def _leave(self, job_id: str, let_in: bool) -> bool:
        del self._waiting[job_id]
        if let_in:
            self._started.append(job_id)
        return let_in

    def wait(self, job_id: str, script: TaskScript | None = None) -> bool:
        """Block the calling worker thread until a dispatch point lets the body in.

        Then, with `script`, block until the harness has decided how the body ends (or
        the job is released), as a body that is busy until it ends.

        Returns:
            True to run the body, False when the job was released (cancelled) first.
        """
        verdict = self._arrive(job_id)
        with self._state:
            self._state.wait_for(lambda: verdict() is not None)
            if not self._leave(job_id, bool(verdict())):
                return False
        if script is None:
            return True
        return script.wait_for_decision(lambda: job_id in self._released)

    async def wait_async(self, job_id: str) -> bool:
        """The gate for a body running on the asyncio bridge: the body's task waits on a
        future of its loop, which `open()` and `release()` resolve; the loop sees it at
        its next step (the bridge's settle or run).

        Returns:
            True to run the body, False when the job was released (cancelled) first.
        """
        verdict = self._arrive(job_id)
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        with self._state:
            self._wakers[job_id] = lambda: loop.call_soon_threadsafe(_resolve, woken)
            ready = verdict() is not None
        if not ready:
            await woken
        with self._state:
            self._wakers.pop(job_id, None)
            return self._leave(job_id, bool(verdict()))

    def released(self, job_id: str) -> bool:
        with self._state:
            return job_id in self._released


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
