"""Deliveries, the settle of a worker fed by a broker whose threads wait where no bridge sees;
importing_on_bridges, for a library that binds the clock at import.

The worker here is the smallest of its kind: a consumer thread blocked on a C-level queue
(`queue.SimpleQueue`, as a broker's socket would be) hands each message to a thread pool
(`concurrent.futures`, whose idle threads wait on a C-level queue too), with a real delay
in between, so that a settle that returned early would be seen.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from jobconform.backends.protocol import TaskScript
from jobconform.bridges import (
    Deliveries,
    DeliveriesTimeout,
    DispatchGate,
    WallClock,
    importing_on_bridges,
    until,
)
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference.commands import Succeed


class BrokerFedWorker:
    def __init__(self, threads: int, clock: VirtualClock) -> None:
        self.gate, self.clock = DispatchGate(), clock
        self.deliveries = Deliveries(self.gate, threads, now=clock.now, settle_limit_seconds=5.0)
        self.scripts: dict[str, TaskScript] = {}
        self.ended: list[str] = []
        self._broker: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._pool = ThreadPoolExecutor(max_workers=threads)
        self._consumer = threading.Thread(target=self._consume)
        self._consumer.start()

    def send(self, job_id: str, delay_seconds: float = 0.0) -> None:
        self.scripts[job_id] = TaskScript()
        self.deliveries.sent(job_id, delay_seconds)
        self._broker.put(job_id)

    def _consume(self) -> None:
        while (job_id := self._broker.get()) is not None:
            time.sleep(0.05)  # real: the broker's round trip
            self._pool.submit(self._body, job_id)

    def _body(self, job_id: str) -> None:
        with self.deliveries.body(job_id):
            time.sleep(0.05)
            if self.gate.wait(job_id, int(job_id[1:])):
                self.gate.wait_for_decision(job_id, self.scripts[job_id])
                time.sleep(0.05)
                self.ended.append(job_id)

    def close(self) -> None:
        self.gate.close()
        self._broker.put(None)
        self._consumer.join()
        self._pool.shutdown()


@pytest.fixture
def worker() -> Iterator[BrokerFedWorker]:
    running = BrokerFedWorker(threads=2, clock=VirtualClock(EPOCH))
    yield running
    running.close()


def test_settle_waits_until_each_body_sent_waits_at_the_gate(worker: BrokerFedWorker) -> None:
    worker.send("j0")
    worker.send("j1")
    worker.deliveries.settle()
    assert worker.gate.waiting() == ["j0", "j1"]


def test_a_decided_body_is_waited_for_until_it_ends(worker: BrokerFedWorker) -> None:
    worker.send("j0")
    worker.deliveries.dispatch()
    assert worker.gate.waits("j0") and worker.ended == []  # waiting for its decision
    worker.scripts["j0"].decide(Succeed(1))
    worker.deliveries.settle()
    assert worker.ended == ["j0"]


def test_with_every_thread_held_a_message_due_stays_in_the_workers_queue(
        worker: BrokerFedWorker) -> None:
    for job_id in ("j0", "j1", "j2"):
        worker.send(job_id)
    worker.deliveries.settle()  # two threads, both held at the gate: j2 waits in the pool
    assert worker.gate.waiting() == ["j0", "j1"]
    worker.gate.release("j0")  # a cancel: its body leaves and frees a thread for j2
    worker.deliveries.settle()
    assert worker.gate.waiting() == ["j1", "j2"]


def test_a_message_due_later_is_waited_for_only_once_it_is_due() -> None:
    clock = VirtualClock(EPOCH)
    deliveries = Deliveries(DispatchGate(), threads=1, now=clock.now, settle_limit_seconds=0.2)
    deliveries.sent("j0", delay_seconds=5)  # a retry's ETA; no worker here
    deliveries.settle()  # not due yet: nothing to wait for
    clock.advance(5)
    with pytest.raises(DeliveriesTimeout, match="j0"):
        deliveries.settle()  # due, a thread free, and no body ever takes it
    deliveries.dropped("j0")
    deliveries.settle()


def test_with_receipts_settle_waits_for_a_message_due_later_to_reach_the_worker() -> None:
    # A retry's message with a countdown: due later, so without receipts settle returns at
    # once, whether or not the worker has it yet; with them, not before it arrives.
    clock = VirtualClock(EPOCH)
    never_arrives = Deliveries(DispatchGate(), threads=1, now=clock.now,
                               settle_limit_seconds=0.2, receipts=True)
    never_arrives.sent("j0", delay_seconds=5)
    with pytest.raises(DeliveriesTimeout, match=r"sent but not yet received \{'j0': 1\}"):
        never_arrives.settle()
    # A generous safety limit where the message does arrive: a loaded machine may run the
    # arrival late, and the wait is for it, not for time to pass.
    deliveries = Deliveries(DispatchGate(), threads=1, now=clock.now, settle_limit_seconds=10.0,
                            receipts=True)
    deliveries.sent("j0", delay_seconds=5)
    arrival = threading.Timer(0.05, deliveries.received, ("j0",))  # the broker's round trip
    arrival.start()
    deliveries.settle()  # returns once the worker has it, its delay still ahead
    arrival.join()
    deliveries.received("j0")  # a second notice of one message changes nothing
    deliveries.sent("j1", delay_seconds=5)
    deliveries.dropped("j1")  # a retry the library did not send: nothing comes
    deliveries.settle()


def test_a_message_resent_while_its_job_waits_for_its_due_is_waited_for_until_received() -> None:
    # A sweep restores a retry's message (celery_redelivery): the worker takes it again, and
    # the time it does is the copy's delivery stamp, so settle waits for that receipt; the
    # job's due stays the retry's.
    clock = VirtualClock(EPOCH)
    deliveries = Deliveries(DispatchGate(), threads=1, now=clock.now, settle_limit_seconds=0.2,
                            receipts=True)
    deliveries.sent("j0", delay_seconds=5)
    deliveries.received("j0")
    deliveries.resent("j0")
    with pytest.raises(DeliveriesTimeout, match=r"sent but not yet received \{'j0': 1\}"):
        deliveries.settle()
    deliveries.received("j0")
    deliveries.settle()  # the copy arrived; the retry is still 5 s ahead, as before
    # At the due the worker's timer runs both, in an order of its own: the job stays due
    # until the second has come (as a body, or dropped as a copy), not only the first.
    clock.advance(5)
    with deliveries.body("j0"):
        pass
    with pytest.raises(DeliveriesTimeout, match=r"messages on their way \(due from\) \{'j0'"):
        deliveries.settle()
    deliveries.dropped("j0")  # the second: a copy the body had
    deliveries.settle()
    # A copy of the message a body holds is due now: it comes as a body, or is dropped.
    with deliveries.body("j0"):
        deliveries.resent("j0")
        deliveries.received("j0")
        with pytest.raises(DeliveriesTimeout, match=r"\(due from\) \{'j0'"):
            deliveries.settle()
        deliveries.dropped("j0")
    deliveries.settle()


def test_a_module_imported_on_the_bridges_binds_their_clock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> None:
    request.addfinalizer(lambda: sys.modules.pop("binds_clock_at_import", None))
    (tmp_path / "binds_clock_at_import.py").write_text(
        "from time import monotonic, sleep\n\n"
        "def reading(now=monotonic):\n    return now()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with importing_on_bridges("binds_clock_at_import"):
        import binds_clock_at_import as module
    clock = VirtualClock(EPOCH)
    with WallClock(clock):
        clock.advance(90)
        assert module.reading() == EPOCH.timestamp() + 90  # the default argument: virtual
    assert module.reading() == pytest.approx(time.monotonic(), abs=5)  # real again
    with pytest.raises(ImportError, match="binds_clock_at_import"), importing_on_bridges(
            "binds_clock_at_import"):
        pass


def test_until_waits_for_a_step_a_library_takes_in_its_own_thread_after_the_body() -> None:
    """A broker acknowledgement after the body returned: until returns once it happened,
    and names what it waited for when it never does."""
    acked = threading.Event()
    threading.Timer(0.05, acked.set).start()  # the library's thread, a little later
    until(acked.is_set, "the acknowledgement")
    assert acked.is_set()
    with pytest.raises(DeliveriesTimeout, match=r"the acknowledgement: not within 0.05 s"):
        until(lambda: False, "the acknowledgement", limit_seconds=0.05)
