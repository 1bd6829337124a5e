"""Settle for a worker fed by a broker, whose threads wait where no bridge sees them.

A queue library's worker reads its broker's socket (RabbitMQ, Redis) and hands each message
to a pool whose idle threads wait on a C-level queue (`concurrent.futures`'s `SimpleQueue`):
`ThreadWaits` cannot tell those threads idle from busy, so its settle never returns. The
adapter knows what is in flight instead, and tells `Deliveries`:

- `sent(job_id, delay_seconds)`: a message for the job is on its way (submitted, or a retry
  with a countdown); its body may begin that many seconds from now;
- `received(job_id)` (with `receipts=True`): the message reached the worker (Celery's
  `task_received`); settle waits until every message sent has;
- `resent(job_id)`: the broker hands the job's message again (a sweep restored it): settle
  waits for the copy as for a message sent, and for a job still due, for both of its bodies;
- `dropped(job_id)`: no message for the job will come as a body after all (a cancel, a retry
  the library did not send);
- `with deliveries.body(job_id):` around each body the worker runs, which takes the job's message
  and holds one of the worker's threads while it runs; its end frees its slot at the gate.

`settle()` returns once every body waits at the `DispatchGate` or for its undecided decision
(`DispatchGate.waits`), and no message is due while one of the worker's threads is free: a
worker with every thread held leaves the rest in its own queue, in its own order. A real-time
safety limit turns a hang into `DeliveriesTimeout` naming the bodies and the messages.
`dispatch()` is a dispatch point on top: settle, open the gate, settle.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from jobconform.bridges.gate import DispatchGate
from jobconform.bridges.translate import wall_now
from jobconform.conformance.clock import real_monotonic

SETTLE_LIMIT_SECONDS = 10.0
POLL_SECONDS = 0.002


class DeliveriesTimeout(RuntimeError):
    """The worker's bodies did not all come to a wait within the real-time safety limit."""


class Deliveries:
    """Args: gate: where the bodies wait; threads: how many bodies the worker runs at once;
    now: the runtime's clock, which a message's `due` is read against (the wall clock,
    virtual under `WallClock`)."""

    def __init__(self, gate: DispatchGate, threads: int,
                 now: Callable[[], datetime] = wall_now,
                 settle_limit_seconds: float = SETTLE_LIMIT_SECONDS,
                 receipts: bool = False) -> None:
        self._gate, self._threads, self._now = gate, threads, now
        self._limit = settle_limit_seconds
        # With `receipts` the adapter also says when each message reaches the worker
        # (`received`), and settle waits for every message sent to arrive: one still on
        # the wire would reach the worker before or after the next command, as the network
        # has it, and the worker would queue it differently from run to run.
        self._receipts = receipts
        self._on_the_wire: Counter[str] = Counter()  # per job, messages sent, not received
        self._state = threading.Condition()  # the worker's threads notify it
        self._bodies: Counter[str] = Counter()  # per job, its bodies running now
        self._due: dict[str, datetime] = {}  # per job, the message on its way: due from
        self._copies: Counter[str] = Counter()  # per job, copies due with it (`resent`)

    def sent(self, job_id: str, delay_seconds: float = 0.0) -> None:
        with self._state:
            self._due[job_id] = self._now() + timedelta(seconds=delay_seconds)
            if self._receipts:
                self._on_the_wire[job_id] += 1
            self._state.notify_all()

    def resent(self, job_id: str) -> None:
        """The broker hands a message for the job again: a sweep restored it. A copy of a
        message still due (a retry's wait) comes as a second body at that due, in an order
        the worker's timer picks, so the job stays due until both have come; a copy of the
        message a body holds is due now (a body begins, or the adapter drops the copy). With
        `receipts`, settle also waits for the copy to arrive."""
        with self._state:
            if job_id in self._due:
                self._copies[job_id] += 1
            else:
                self._due[job_id] = self._now()
            if self._receipts:
                self._on_the_wire[job_id] += 1
            self._state.notify_all()

    def received(self, job_id: str) -> None:
        """The worker has the job's message (with `receipts`): no longer on the wire."""
        with self._state:
            if self._on_the_wire[job_id] > 0:
                self._on_the_wire[job_id] -= 1
            self._state.notify_all()

    def dropped(self, job_id: str) -> None:
        with self._state:
            self._due.pop(job_id, None)
            self._copies.pop(job_id, None)
            self._on_the_wire.pop(job_id, None)
            self._state.notify_all()

    @contextmanager
    def body(self, job_id: str) -> Iterator[None]:
        with self._state:
            self._bodies[job_id] += 1
            if self._copies[job_id] > 0:  # its copy is still to come: the job stays due
                self._copies[job_id] -= 1
            else:
                self._due.pop(job_id, None)
            self._state.notify_all()
        try:
            yield
        finally:
            self._gate.finished(job_id)
            with self._state:
                self._bodies[job_id] -= 1
                self._state.notify_all()

    def dispatch(self) -> None:
        """A dispatch point: the bodies of messages due reach the gate, which lets them in."""
        self.settle()
        self._gate.open()
        self.settle()

    def settle(self) -> None:
        """Return once every body waits and no message is due while a thread is free.

        Raises:
            DeliveriesTimeout: not quiet within the real-time safety limit.
        """
        # The gate and the scripts change without telling this condition, so settle looks
        # again every few real milliseconds; the bodies' own moves wake it at once.
        deadline = real_monotonic() + self._limit
        with self._state:
            while not self._quiet():
                if real_monotonic() > deadline:
                    running = {job_id: n for job_id, n in self._bodies.items() if n}
                    raise DeliveriesTimeout(
                        f"the worker did not settle within {self._limit:g} s of real time (a"
                        " safety limit; virtual time does not pass while waiting): bodies"
                        f" running {running}, messages on their way (due from) {self._due},"
                        f" sent but not yet received {dict(+self._on_the_wire)}")
                self._state.wait(POLL_SECONDS)

    def _quiet(self) -> bool:
        if +self._on_the_wire:
            return False
        running = +self._bodies
        if any(n > 1 or not self._gate.waits(job_id) for job_id, n in running.items()):
            return False
        now = self._now()
        return running.total() >= self._threads or all(due > now for due in self._due.values())


def until(condition: Callable[[], bool], what: str,
          limit_seconds: float = SETTLE_LIMIT_SECONDS) -> None:
    """Wait, looking every few real milliseconds, until `condition()` holds: for a step a
    library takes in its own thread after the body returned, where no bridge sees it (a
    broker's acknowledgement). Virtual time does not pass meanwhile.

    Raises:
        DeliveriesTimeout: `condition()` did not hold within the real-time safety limit;
            the message names `what` was awaited.
    """
    deadline = real_monotonic() + limit_seconds
    pause = threading.Event()  # never set: its wait is a real-time pause
    while not condition():
        if real_monotonic() > deadline:
            raise DeliveriesTimeout(f"{what}: not within {limit_seconds:g} s of real time (a"
                                    " safety limit; virtual time does not pass while waiting)")
        pause.wait(POLL_SECONDS)
