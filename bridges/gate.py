"""The dispatch gate: a runtime that starts work on its own begins bodies only at dispatch.

The spec starts queued jobs at dispatch points only, oldest first, into free slots
(LC-010). A real runtime's workers pick work up whenever they poll. The adapter puts the
gate at the top of the body it hands the runtime: `gate.wait(job_id, rank, script)`
blocks the worker thread (or `await gate.wait_async(job_id, rank)` a task on the asyncio
bridge) until a dispatch point, the adapter's `dispatch()` calling `open()`, lets it in.
Bodies are let in by `rank` (the job's submission order); with `slots`, at most that many
at once, each holding its slot until `finished(job_id)`. A runtime whose own workers
limit concurrency leaves `slots` out.

`wait_for_decision(job_id, script)` then blocks the body until the harness decides it.
`started(job_id)` tells the adapter whether the body really began, so it reports a job
as running from then on, not from the moment a worker picked it up. A body released
(`release(job_id)`: its job was cancelled) returns False and must not run its script.

A self-running runtime (`jobconform.backends.self_running`, opened with
`open_self_running`) is never told to dispatch: its workers' own polls are its dispatch
points. Its gate, `DispatchGate(on_arrival=True)`, lets each body in as it arrives, within
the slots; the same adapter keeps the gate's other duties (the decision, cancellation,
`as_dispatched`) in both modes.

A runtime that keeps its own records often marks a job `running`, and stamps its start,
when a worker picks it up, before it calls the body. The gate still belongs where the
body is called (nothing inside the runtime's store is touched); the adapter then reads
the runtime's records through `as_dispatched(record)`, which tells what the gate knows: a
job whose body waits at the gate is `queued`, and a job started at the time its body was
let in (`DispatchGate(now=...)`, the runtime's clock), not when a worker took it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from jobconform.backends.protocol import TaskScript
from jobconform.bridges.records import JobRecord


class DispatchGate:
    """Args: slots: how many bodies may run at once (None: the runtime's workers limit
    it); now: the runtime's clock, to stamp when each body was let in (`as_dispatched`);
    on_arrival: let each body in as it arrives (a self-running runtime), not at `open`."""

    def __init__(self, slots: int | None = None,
                 now: Callable[[], datetime] | None = None, on_arrival: bool = False) -> None:
        self._slots = slots
        self._now = now
        self._on_arrival = on_arrival
        self._let_in_at: dict[str, datetime] = {}  # job id -> when its body last began
        self._state = threading.Condition()
        self._waiting: dict[str, int] = {}  # job id -> rank, for bodies at the gate
        self._admitted: set[str] = set()
        self._holding: set[str] = set()  # admitted and not finished: the slots in use
        self._released: set[str] = set()
        self._wakers: dict[str, Callable[[], object]] = {}  # bodies waiting on a loop
        self._deciding: dict[str, TaskScript] = {}  # bodies waiting for their decision
        self._closed = False

    def open(self) -> list[str]:
        """A dispatch point: bodies at the gate begin, lowest rank first, into free slots.

        Returns:
            The job ids let in, in order.
        """
        with self._state:
            return self._let_in()

    def _let_in(self) -> list[str]:
        """Let bodies at the gate in, lowest rank first, into free slots (holding the
        state's lock)."""
        admitted = []
        for job_id in sorted(self._waiting, key=self._waiting.__getitem__):
            if job_id in self._released or job_id in self._admitted:
                continue
            if self._slots is not None and len(self._holding) >= self._slots:
                break
            self._admitted.add(job_id)
            self._holding.add(job_id)
            admitted.append(job_id)
            if self._now is not None:
                self._let_in_at[job_id] = self._now()
        self._wake(admitted)
        return admitted

    def release(self, job_id: str) -> None:
        """The job was cancelled: its body leaves the gate (now or when it arrives)
        without running, and a script it waits on is let go."""
        with self._state:
            self._released.add(job_id)
            self._wake([job_id])
            script = self._deciding.get(job_id)
        if script is not None:
            script.wake()

    def close(self) -> None:
        """The runtime closes: every body at the gate or waiting for its decision is let
        go (as released), whether its script honours cancellation or not, so that no
        thread of a closed runtime stays blocked."""
        with self._state:
            self._closed = True
            self._wake(list(self._waiting))
            scripts = list(self._deciding.values())
        for script in scripts:
            script.wake()

    def finished(self, job_id: str) -> None:
        """The body ended (or a retry sent it back to wait): its slot is free again."""
        with self._state:
            self._holding.discard(job_id)
            self._admitted.discard(job_id)
            if self._on_arrival:
                self._let_in()

    def waiting(self) -> list[str]:
        with self._state:
            return sorted(self._waiting, key=self._waiting.__getitem__)

    def started(self, job_id: str) -> bool:
        with self._state:
            return job_id in self._admitted

    def released(self, job_id: str) -> bool:
        with self._state:
            return job_id in self._released

    def waits(self, job_id: str) -> bool:
        """Whether the job's body waits for the harness: at the gate (neither let in nor
        released), or for its script's decision (undecided, and not let go). A body let in
        but not yet waiting for its decision is still on its way: not waiting. For a settle
        that cannot see the body's thread itself (`jobconform.bridges.deliveries.Deliveries`)."""
        with self._state:
            if job_id in self._waiting:
                return self._verdict(job_id) is None
            script = self._deciding.get(job_id)
            let_go = self._closed or (job_id in self._released
                                      and script is not None and script.honours_cancellation)
        return script is not None and not let_go and not script.decided()

    def as_dispatched(self, record: JobRecord) -> JobRecord:
        """The runtime's own record of a job as the spec sees it: `running` only while its
        body is let in (until then, and again when a retry sent it back to the gate,
        `queued`), and started when the gate last let its body in (never: None).

        Raises:
            ValueError: the gate was built without `now`, so it knows no start times.
        """
        if self._now is None:
            raise ValueError("as_dispatched needs the gate's clock: DispatchGate(now=...)")
        with self._state:
            running = record.job_id in self._admitted
            started_at = self._let_in_at.get(record.job_id)
        status = "queued" if record.status == "running" and not running else record.status
        return replace(record, status=status, started_at=started_at)

    def _wake(self, job_ids: list[str]) -> None:
        self._state.notify_all()
        for job_id in job_ids:
            wake = self._wakers.get(job_id)
            if wake is not None:
                wake()

    def _verdict(self, job_id: str) -> bool | None:
        if job_id in self._released or self._closed:
            return False
        return True if job_id in self._admitted else None

    def wait(self, job_id: str, rank: int) -> bool:
        """Block the calling worker thread until a dispatch point lets the body in.

        Returns:
            True to run the body, False when the job was released (cancelled) first.
        """
        with self._state:
            self._waiting[job_id] = rank
            if self._on_arrival:
                self._let_in()
            try:
                self._state.wait_for(lambda: self._verdict(job_id) is not None)
            finally:
                del self._waiting[job_id]
            return bool(self._verdict(job_id))

    def wait_for_decision(self, job_id: str, script: TaskScript) -> bool:
        """Block the body's thread until the harness decides how it ends, as a busy body;
        a script that honours cancellation is let go when its job is released.

        Returns:
            True if decided (run the script), False if let go undecided.
        """
        honours = script.honours_cancellation
        with self._state:
            self._deciding[job_id] = script
        try:
            return script.wait_for_decision(
                lambda: (honours and self.released(job_id)) or self._closed)
        finally:
            with self._state:
                self._deciding.pop(job_id, None)

    async def wait_async(self, job_id: str, rank: int) -> bool:
        """The gate for a body on the asyncio bridge: its task waits on a future of its
        loop, which `open()` and `release()` resolve; the loop sees it at its next step
        (the bridge's settle or run).

        Returns:
            True to run the body, False when the job was released (cancelled) first.
        """
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        with self._state:
            self._waiting[job_id] = rank
            self._wakers[job_id] = lambda: loop.call_soon_threadsafe(_resolve, woken)
            if self._on_arrival:
                self._let_in()
            ready = self._verdict(job_id) is not None
        try:
            if not ready:
                await woken
        finally:
            with self._state:
                del self._waiting[job_id]
                self._wakers.pop(job_id, None)
        with self._state:
            return bool(self._verdict(job_id))


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
