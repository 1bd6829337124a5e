"""The bridges that put real runtimes on the virtual clock (jobconform.bridges)."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import re
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta

import freezegun
import pytest

from jobconform.backends.protocol import TaskScript
from jobconform.bridges import (
    CoroutineNeverFinished,
    DerivedHealth,
    DispatchGate,
    InFlight,
    JobRecord,
    SettleTimeout,
    ThreadWaits,
    VirtualLoop,
    WallClock,
    keeping_signal_handlers,
)
from jobconform.conformance.clock import EPOCH, VirtualClock, real_monotonic
from jobconform.conformance.watchdog import AdapterHung, forget_hangs, guarded
from jobconform.reference.commands import Succeed


def test_a_worker_thread_reads_virtual_time_from_every_wall_clock_call() -> None:
    clock = VirtualClock(EPOCH)
    seen: list[tuple[float, int, float, datetime, datetime, date]] = []
    asked, answered = threading.Event(), threading.Event()

    def worker() -> None:
        for _ in range(2):
            asked.wait()
            asked.clear()
            seen.append((time.time(), time.time_ns(), time.monotonic(),
                         datetime.now(UTC), datetime.utcnow(), date.today()))
            answered.set()

    with WallClock(clock):
        thread = threading.Thread(target=worker)
        thread.start()
        for _ in range(2):
            asked.set()
            answered.wait(5)
            answered.clear()
            clock.advance(86_400 + 1.5)
        thread.join(5)
    first, second = seen
    assert first[0] == EPOCH.timestamp()
    assert first[1] == int(EPOCH.timestamp()) * 10**9
    assert first[3] == EPOCH and first[4] == EPOCH.replace(tzinfo=None)
    assert first[5] == EPOCH.date()
    assert second[0] - first[0] == pytest.approx(86_401.5)
    assert second[2] - first[2] == pytest.approx(86_401.5)
    assert second[3] == EPOCH + timedelta(seconds=86_401.5)
    assert second[5] == date(2026, 1, 2)
    assert datetime.now(UTC) > datetime(2026, 6, 1, tzinfo=UTC)  # real time again


def test_600_virtual_seconds_fire_a_1s_retry_and_a_300s_sweep_in_due_order() -> None:
    clock = VirtualClock(EPOCH)
    fired: list[tuple[str, float, datetime]] = []
    with WallClock(clock) as wall:
        bridge = VirtualLoop(clock, on_step=wall.move_to)

        async def every(name: str, seconds: float) -> None:
            while True:
                await asyncio.sleep(seconds)
                fired.append((name, bridge.loop.time(), datetime.now(UTC)))

        bridge.spawn(every("retry", 1.0))
        bridge.spawn(every("sweep", 300.0))
        bridge.settle()
        assert fired == []
        clock.advance(600)
        bridge.settle()
        bridge.close()
    assert [name for name, _, _ in fired].count("retry") == 600
    sweeps = [(at, wall_time) for name, at, wall_time in fired if name == "sweep"]
    assert sweeps == [(300.0, EPOCH + timedelta(seconds=300)),
                      (600.0, EPOCH + timedelta(seconds=600))]
    times = [at for _, at, _ in fired]
    assert times == sorted(times)
    # Each timer ran with the loop and the wall clock at its own deadline.
    assert all(wall_time == EPOCH + timedelta(seconds=at) for _, at, wall_time in fired)
    assert fired[298] == ("retry", 299.0, EPOCH + timedelta(seconds=299))
    assert sorted(fired[299:301]) == [("retry", 300.0, EPOCH + timedelta(seconds=300)),
                                      ("sweep", 300.0, EPOCH + timedelta(seconds=300))]


def test_settle_waits_for_io_in_flight_when_busy_says_so() -> None:
    """A runtime querying a server on each timer (a real socket, a server thread that
    answers after 50 ms of real time): each answer arrives at its query's own virtual
    instant, and settle ends only when every query is answered."""
    clock = VirtualClock(EPOCH)
    ours, theirs = socket.socketpair()

    def server() -> None:
        with theirs, theirs.makefile("rwb") as stream:
            for line in stream:
                time.sleep(0.05)
                stream.write(line)
                stream.flush()

    threading.Thread(target=server, daemon=True).start()
    answered: list[tuple[bytes, float]] = []

    class Client:
        def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.reader, self.writer = reader, writer

        async def query(self, text: str) -> bytes:
            self.writer.write(f"{text}\n".encode())
            return await self.reader.readline()

    calls = InFlight(None, ["query"])
    bridge = VirtualLoop(clock, busy=calls.busy, safety_limit_seconds=5)

    async def poll_every_10_s() -> None:
        calls.client = Client(*await asyncio.open_connection(sock=ours))
        while True:
            await asyncio.sleep(10)
            answered.append((await calls.query(f"query at {bridge.loop.time():g}"),
                             bridge.loop.time()))

    bridge.spawn(poll_every_10_s())
    bridge.settle()
    clock.advance(30)
    bridge.settle()
    assert answered == [(b"query at 10\n", 10.0), (b"query at 20\n", 20.0),
                        (b"query at 30\n", 30.0)]
    assert calls.count == 0 and calls.writer is calls.client.writer  # others: the client's
    bridge.close()
    ours.close()


def test_settle_names_io_that_never_answers() -> None:
    clock = VirtualClock(EPOCH)
    bridge = VirtualLoop(clock, busy=lambda: True, safety_limit_seconds=0.2)
    with pytest.raises(CoroutineNeverFinished, match="I/O still in flight"):
        bridge.settle()
    bridge.close()


def test_sync_code_runs_a_coroutine_and_time_does_not_pass_inside() -> None:
    clock = VirtualClock(EPOCH)
    bridge = VirtualLoop(clock)

    async def answer() -> float:
        await asyncio.sleep(0)
        return bridge.loop.time()

    assert bridge.run(answer()) == 0.0
    clock.advance(2.5)
    assert bridge.run(answer()) == 2.5
    bridge.close()


def test_a_coroutine_that_never_finishes_ends_with_an_error_naming_it() -> None:
    bridge = VirtualLoop(VirtualClock(EPOCH), safety_limit_seconds=0.2)

    async def waits_for_a_reply_that_never_comes() -> None:
        await asyncio.Event().wait()

    started = time.process_time()
    with pytest.raises(CoroutineNeverFinished, match="waits_for_a_reply_that_never_comes"):
        bridge.run(waits_for_a_reply_that_never_comes())
    assert time.process_time() - started < 1.0  # it waited on sockets, not by spinning
    sleeper = asyncio.sleep(60)  # virtual time nobody advances
    with pytest.raises(CoroutineNeverFinished, match="advance the clock"):
        bridge.run(sleeper, name="sleep(60)")
    bridge.close()


def test_a_coroutine_that_ignores_cancellation_still_ends_with_an_error_naming_it() -> None:
    """A body that catches CancelledError (a job ignoring its cancellation) must not turn
    the bridge's error into a hang or an unrelated one, in run() or in close()."""
    bridge = VirtualLoop(VirtualClock(EPOCH), safety_limit_seconds=0.2)

    async def shrugs_off_cancellation() -> None:
        while True:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                continue

    with pytest.raises(CoroutineNeverFinished, match="shrugs_off_cancellation"):
        bridge.run(shrugs_off_cancellation())
    async def a_library_worker() -> None:
        await shrugs_off_cancellation()  # the job's body, deep inside the library's task

    bridge.spawn(a_library_worker(), name="stubborn-worker")
    bridge.settle()  # it starts: cancelled before its first step, it could not ignore it
    with pytest.raises(CoroutineNeverFinished, match="ignore cancellation") as error:
        bridge.close()
    # Each task left is named, with the chain of coroutines down to the one that waits.
    assert re.search(r"(?s)stubborn-worker, at:\n.*in a_library_worker\n.*"
                     r"in shrugs_off_cancellation\n", str(error.value)), error.value
    assert "shrugs_off_cancellation, at:" in str(error.value)  # the one run() gave up on


def test_worker_sleeps_and_timed_waits_end_when_the_clock_passes_their_deadline() -> None:
    clock = VirtualClock(EPOCH)
    woke: list[tuple[str, object, datetime]] = []
    stop = threading.Event()

    def poller() -> None:
        while not stop.is_set():
            time.sleep(5)
            woke.append(("sleep", None, clock.now()))

    def waiter() -> None:
        woke.append(("event", stop.wait(30), clock.now()))

    with ThreadWaits(clock, settle_limit_seconds=5) as waits:
        with waits.adopting():
            threads = [threading.Thread(target=poller), threading.Thread(target=waiter)]
            for thread in threads:
                thread.start()
        waits.settle()
        assert woke == []
        clock.advance(4.999)
        waits.settle()
        assert woke == []
        clock.advance(0.001)
        waits.settle()
        assert woke == [("sleep", None, EPOCH + timedelta(seconds=5))]
        clock.advance(25)
        waits.settle()
        assert ("event", False, EPOCH + timedelta(seconds=30)) in woke
        assert len([w for w in woke if w[0] == "sleep"]) == 2  # one wake for 25 s
        stop.set()
        waits.wake_sleepers()
        for thread in threads:
            thread.join(5)
    assert not any(thread.is_alive() for thread in threads)
    time.sleep(0.001)  # the real one again


def test_settle_waits_for_a_worker_woken_by_a_decision() -> None:
    clock = VirtualClock(EPOCH)
    script = TaskScript()
    ran: list[object] = []
    done = threading.Event()

    def body() -> None:
        script.wait_for_decision(lambda: False)
        ran.append(script.run())
        done.wait()  # idle again, until notified

    with ThreadWaits(clock, settle_limit_seconds=5) as waits:
        with waits.adopting():
            thread = threading.Thread(target=body, name="worker")
            thread.start()
        for _ in range(20):  # settle never returns between the decision and the record
            waits.settle()
            assert ran == []
        script.decide(Succeed("done"))
        waits.settle()
        assert ran == ["done"]
        done.set()
        thread.join(5)


def test_join_woken_ends_the_sleeps_of_one_thread_told_to_stop_only() -> None:
    clock = VirtualClock(EPOCH)
    stops = {"first": threading.Event(), "second": threading.Event()}
    looks = {"first": 0, "second": 0}

    def looper(name: str) -> None:  # a scheduler's loop: look, then sleep a virtual second
        while not stops[name].is_set():
            looks[name] += 1
            time.sleep(1.0)

    with ThreadWaits(clock, settle_limit_seconds=5) as waits:
        with waits.adopting():
            threads = {name: threading.Thread(target=looper, args=(name,), name=name)
                       for name in stops}
            for thread in threads.values():
                thread.start()
        waits.settle()
        assert looks == {"first": 1, "second": 1}
        stops["first"].set()
        waits.join_woken(threads["first"])
        assert not threads["first"].is_alive()
        waits.settle()
        assert looks == {"first": 1, "second": 1}  # the other thread slept on
        clock.advance(1)
        waits.settle()
        assert looks == {"first": 1, "second": 2}
        stops["second"].set()


def test_join_woken_gives_up_on_a_thread_that_never_stops() -> None:
    clock = VirtualClock(EPOCH)
    stop = threading.Event()

    def deaf() -> None:  # told to stop, it sleeps on regardless
        while not stop.is_set():
            time.sleep(1.0)

    with ThreadWaits(clock, settle_limit_seconds=0.2) as waits:
        with waits.adopting():
            thread = threading.Thread(target=deaf, name="deaf")
            thread.start()
        with pytest.raises(SettleTimeout, match="deaf did not end"):
            waits.join_woken(thread)
        stop.set()


def test_settle_times_out_with_a_report_when_a_worker_never_waits() -> None:
    clock = VirtualClock(EPOCH)
    stop = threading.Event()

    def spinner() -> None:
        while not stop.is_set():
            pass

    with ThreadWaits(clock, settle_limit_seconds=0.2) as waits:
        with waits.adopting():
            thread = threading.Thread(target=spinner, name="spinner")
            thread.start()
        with pytest.raises(SettleTimeout, match="spinner"):
            waits.settle()
        stop.set()
        thread.join(5)


def test_the_gate_lets_bodies_in_only_at_a_dispatch_point() -> None:
    clock = VirtualClock(EPOCH)
    gate = DispatchGate(slots=1)
    scripts = {"a": TaskScript(), "b": TaskScript(), "c": TaskScript()}
    results: dict[str, object] = {}

    def worker(job_id: str) -> None:
        if gate.wait(job_id, ord(job_id)) and gate.wait_for_decision(job_id, scripts[job_id]):
            results[job_id] = scripts[job_id].run()
        else:
            results[job_id] = "released"

    with ThreadWaits(clock, settle_limit_seconds=5) as waits:
        with waits.adopting():
            threads = [threading.Thread(target=worker, args=(j,)) for j in scripts]
            for thread in threads:
                thread.start()
        waits.settle()
        assert gate.waiting() == ["a", "b", "c"] and not gate.started("a")
        gate.release("b")
        assert gate.open() == ["a"]
        waits.settle()
        assert gate.started("a") and not gate.started("b")
        assert results == {"b": "released"}
        scripts["a"].decide(Succeed(1))
        waits.settle()
        assert results == {"b": "released", "a": 1}
        assert gate.open() == []  # "a" still holds the only slot
        gate.finished("a")
        assert gate.open() == ["c"]
        scripts["c"].decide(Succeed(3))
        waits.settle()
        assert results["c"] == 3
        for thread in threads:
            thread.join(5)


def test_a_self_running_gate_lets_bodies_in_as_they_arrive_within_its_slots() -> None:
    clock = VirtualClock(EPOCH)
    gate = DispatchGate(slots=1, now=clock.now, on_arrival=True)
    began: list[str] = []

    def worker(job_id: str) -> None:
        if gate.wait(job_id, ord(job_id)):
            began.append(job_id)

    with ThreadWaits(clock, settle_limit_seconds=5) as waits:
        with waits.adopting():
            first = threading.Thread(target=worker, args=("a",))
            first.start()
        waits.settle()
        assert began == ["a"] and gate.started("a")  # no open(): its arrival let it in
        with waits.adopting():
            second = threading.Thread(target=worker, args=("b",))
            second.start()
        waits.settle()
        assert began == ["a"] and gate.waiting() == ["b"]  # the only slot is held
        clock.advance(2)
        gate.finished("a")
        waits.settle()
        assert began == ["a", "b"]
        assert gate.as_dispatched(JobRecord("b", "running", EPOCH)).started_at == (
            EPOCH + timedelta(seconds=2))
        for thread in (first, second):
            thread.join(5)


def _hand_off_in_turn() -> list[str]:
    """A scheduler that queues work and a worker that polls for it, both due at 1 s."""
    clock = VirtualClock(EPOCH)
    stop, queued, seen = threading.Event(), list[str](), list[str]()

    def scheduler() -> None:
        while not stop.wait(1.0):
            queued.append("retry")

    def worker() -> None:
        while not stop.wait(1.0):
            seen.append(queued.pop() if queued else "empty")

    with ThreadWaits(clock, settle_limit_seconds=5, in_turn=True) as waits:
        with waits.adopting():
            threads = [threading.Thread(target=body) for body in (scheduler, worker)]
            for thread in threads:
                thread.start()
        waits.settle()
        clock.advance(1)
        waits.settle()
        stop.set()
        for thread in threads:
            thread.join(5)
            assert not thread.is_alive()
    return seen


def test_in_turn_the_waits_a_jump_ends_run_one_at_a_time_in_a_fixed_order() -> None:
    """In turn, of two threads due at the same instant the one started first runs first,
    every time (at once, the worker might poll before the scheduler queued), and a notify
    (the stop flag) still ends every wait."""
    for _ in range(20):
        assert _hand_off_in_turn() == ["retry"]


def test_the_gate_on_the_asyncio_bridge() -> None:
    bridge = VirtualLoop(VirtualClock(EPOCH))
    gate = DispatchGate()
    began: list[str] = []

    async def body(job_id: str) -> None:
        if await gate.wait_async(job_id, 0):
            began.append(job_id)

    bridge.spawn(body("a"))
    bridge.settle()
    assert began == [] and gate.waiting() == ["a"]
    gate.open()
    bridge.settle()
    assert began == ["a"]
    bridge.close()


def test_derived_health_counts_each_outcome_once_and_keeps_it_after_cleanup() -> None:
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class View:
        job_id: str
        status: str

    health = DerivedHealth()
    first = health.read([View("1", "succeeded"), View("2", "running"), View("3", "queued")])
    assert (first.queued, first.running, first.total, first.processed) == (1, 1, 3, 1)
    after = health.read([View("2", "failed"), View("3", "cancelled")])  # 1 cleaned up
    # processed counts every body that ended, failed ones too (LC-025)
    assert (after.total, after.processed, after.failed, after.cancelled) == (2, 2, 1, 1)


# -- threading's and queue's own timeouts, the safety limits, a polling runtime's close ----
# These tests measure real time only as a bound on a wait that must end: a few seconds
# at most, whether the bridge holds or not.


def _ends_within(seconds: float, call: Callable[[], object]) -> object:
    """Run `call` in a harness thread; returns what it returned or raised.

    Raises:
        AssertionError: it was still running after `seconds` of real time.
    """
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as error:  # the caller asserts on what was raised
            outcome.append(error)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s of real time"
    return outcome[0]


def _stdlib_timed_waits(timeout: float) -> dict[str, object]:
    """The standard library's waits that reckon a timeout with threading's or queue's
    own timer, each given `timeout` and nothing that ends it sooner."""
    condition, semaphore = threading.Condition(), threading.Semaphore(0)
    with condition:
        waited_for = condition.wait_for(lambda: False, timeout)
    try:
        queue.Queue[int]().get(timeout=timeout)
        got: object = "an item"
    except queue.Empty:
        got = "empty"
    barrier = threading.Barrier(2)
    try:
        barrier.wait(timeout)
        crossed: object = "crossed"
    except threading.BrokenBarrierError:
        crossed = "broken"
    return {"wait_for": waited_for, "queue.get": got,
            "semaphore": semaphore.acquire(timeout=timeout), "barrier": crossed}


TIMED_OUT = {"wait_for": False, "queue.get": "empty", "semaphore": False, "barrier": "broken"}


def test_under_the_wall_clock_a_threads_stdlib_timeouts_end_in_real_time() -> None:
    """Not adopted by ThreadWaits, a thread's waits are real, and so is the reckoning of
    their timeouts, while what it reads of the date is virtual."""
    with WallClock(VirtualClock(EPOCH)):
        assert _ends_within(5, lambda: (_stdlib_timed_waits(0.05), datetime.now(UTC))) \
            == (TIMED_OUT, EPOCH)


def test_under_the_wall_clock_a_datetime_keeps_its_fold_through_astimezone() -> None:
    """freezegun's own conversion drops fold (spulec/freezegun#422): the second 01:30 of
    New York's repeated hour would read as the first. The bridge keeps it, and gives
    freezegun's conversion back when it stops."""
    from zoneinfo import ZoneInfo
    new_york = ZoneInfo("America/New_York")
    second = datetime(2026, 11, 1, 6, 30, tzinfo=UTC)  # 01:30 EST, the repeated hour
    converter = freezegun.api.datetime_to_fakedatetime
    with WallClock(VirtualClock(second)):
        now = datetime.now(UTC)
        local = now.astimezone(new_york)
        assert (type(now).__name__, local.fold, local.utcoffset()) == (
            "FakeDatetime", 1, timedelta(hours=-5))
        assert local.astimezone(UTC) == second
    assert freezegun.api.datetime_to_fakedatetime is converter


def test_in_an_adopted_thread_stdlib_timeouts_end_when_the_clock_passes_them() -> None:
    clock = VirtualClock(EPOCH)
    outcomes: list[tuple[dict[str, object], datetime]] = []
    with WallClock(clock), ThreadWaits(clock, settle_limit_seconds=5) as waits:
        with waits.adopting():
            thread = threading.Thread(
                target=lambda: outcomes.append((_stdlib_timed_waits(30), clock.now())))
            thread.start()
        for _ in range(3):  # each wait is 30 virtual seconds, however long real time is
            waits.settle()
            clock.advance(29.999)
            waits.settle()
            clock.advance(0.001)
        waits.settle()
        assert outcomes == [] and thread.is_alive()  # the barrier's 30 s are still on
        clock.advance(30)
        thread.join(5)
    assert outcomes == [(TIMED_OUT, EPOCH + timedelta(seconds=120))]


def test_a_poll_every_100_ms_ends_once_per_advance_of_100_ms() -> None:
    """The virtual clock counts whole microseconds; `queue` adds its timeout to a float
    (0.2 + 0.1 > 0.3). A poll must still end at its deadline, not one advance later."""
    clock = VirtualClock(EPOCH)
    polls: list[datetime] = []
    stop = threading.Event()

    def poller() -> None:
        while not stop.is_set():
            with contextlib.suppress(queue.Empty):
                queue.Queue[int]().get(timeout=0.1)
            polls.append(clock.now())

    with ThreadWaits(clock, settle_limit_seconds=5) as waits:
        with waits.adopting():
            thread = threading.Thread(target=poller)
            thread.start()
        for _ in range(30):
            waits.settle()
            clock.advance(0.1)
        waits.settle()
        stop.set()
        waits.closing()
        thread.join(5)
    assert polls[:30] == [EPOCH + timedelta(seconds=0.1 * n) for n in range(1, 31)]


class PollingRuntime:
    """The smallest runtime with a worker that polls a broker: a thread looping on
    `queue.get(timeout=...)`, a stop flag, and a close that joins the worker."""

    def __init__(self, poll_seconds: float) -> None:
        self.jobs: queue.Queue[Callable[[], object]] = queue.Queue()
        self.ran: list[object] = []
        self._poll_seconds = poll_seconds
        self._stopping = threading.Event()
        self._worker = threading.Thread(target=self._poll, name="poller")

    def start(self) -> None:
        self._worker.start()

    def _poll(self) -> None:
        while not self._stopping.is_set():
            try:
                job = self.jobs.get(timeout=self._poll_seconds)
            except queue.Empty:
                continue
            self.ran.append(job())

    def close(self) -> None:
        self._stopping.set()
        self._worker.join()


def test_a_polling_runtime_closes_at_once_on_the_bridges() -> None:
    clock = VirtualClock(EPOCH)
    with WallClock(clock), ThreadWaits(clock, settle_limit_seconds=5) as waits:
        runtime = PollingRuntime(poll_seconds=30)  # virtual seconds no one will advance
        with waits.adopting():
            runtime.start()
        runtime.jobs.put(lambda: datetime.now(UTC))
        waits.settle()
        assert runtime.ran == [EPOCH]  # the poll ends when work comes, as usual
        started = real_monotonic()
        waits.closing()  # the close recipe: timed waits end from here on, then the close
        _ends_within(5, runtime.close)
    assert real_monotonic() - started < 1.0


def test_a_polling_runtime_closes_within_its_poll_under_the_wall_clock_alone() -> None:
    with WallClock(VirtualClock(EPOCH)):
        runtime = PollingRuntime(poll_seconds=0.1)  # real: no ThreadWaits
        runtime.start()
        runtime.jobs.put(lambda: datetime.now(UTC))
        _ends_within(5, runtime.close)
    assert runtime.ran == [EPOCH]


@contextlib.contextmanager
def _frozen(kind: str) -> Iterator[None]:
    """The kit's own wall-clock bridge, or a test's own freezegun freeze (its default
    ignore list, which knows nothing of jobconform)."""
    if kind == "WallClock":
        with WallClock(VirtualClock(EPOCH)):
            yield
    else:
        with freezegun.freeze_time(EPOCH, tick=False):
            yield


@pytest.mark.parametrize("freezer", ["WallClock", "freeze_time"])
def test_the_settle_limit_fires_whatever_is_frozen(freezer: str) -> None:
    clock = VirtualClock(EPOCH)
    stop = threading.Event()

    def spinner() -> None:
        while not stop.is_set():
            pass

    with _frozen(freezer), ThreadWaits(clock, settle_limit_seconds=0.2) as waits:
        with waits.adopting():
            thread = threading.Thread(target=spinner, name="spinner")
            thread.start()
        try:
            outcome = _ends_within(5, waits.settle)
        finally:
            stop.set()
            thread.join(5)
    assert isinstance(outcome, SettleTimeout) and "spinner" in str(outcome)


@pytest.mark.parametrize("freezer", ["WallClock", "freeze_time"])
def test_the_loop_limit_fires_whatever_is_frozen(freezer: str) -> None:
    with _frozen(freezer):
        bridge = VirtualLoop(VirtualClock(EPOCH), safety_limit_seconds=0.2)
        outcome = _ends_within(5, lambda: bridge.run(asyncio.Event().wait(), name="never"))
        bridge.loop.close()
    assert isinstance(outcome, CoroutineNeverFinished)


@pytest.mark.parametrize("freezer", ["WallClock", "freeze_time"])
def test_the_hang_watchdog_fires_whatever_is_frozen(freezer: str) -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("the watchdog interrupts only the main thread; elsewhere it exits")
    started = real_monotonic()
    try:
        with (_frozen(freezer), pytest.raises(AdapterHung, match="a hung call"),
              guarded(0.2, "a hung call")):
            threading.Event().wait(5)  # a real wait: returns after 5 s if nothing fires
    finally:
        # The hang marks its scope hung for the process: a later test's guarded call
        # would not be tried (test_bad_input's, in the same xdist worker).
        forget_hangs()
    assert real_monotonic() - started < 4


# -- a runtime that keeps its own records ------------------------------------------------


class RecordKeepingRuntime:
    """A task manager with its own records: its worker marks a task running, stamped with
    the wall clock, as it picks it up, then calls the body."""

    def __init__(self) -> None:
        self.records: dict[str, JobRecord] = {}
        self._tasks: queue.Queue[tuple[str, Callable[[], object]] | None] = queue.Queue()
        self._worker = threading.Thread(target=self._work)

    def start(self) -> None:
        self._worker.start()

    def submit(self, job_id: str, body: Callable[[], object]) -> None:
        self.records[job_id] = JobRecord(job_id, "queued", datetime.now(UTC))
        self._tasks.put((job_id, body))

    def _work(self) -> None:
        while (task := self._tasks.get()) is not None:
            job_id, body = task
            record = self.records[job_id]
            if record.status != "queued":
                continue
            self.records[job_id] = record = JobRecord(job_id, "running", record.submitted_at,
                                                      started_at=datetime.now(UTC))
            result = body()
            status = "cancelled" if result is None else "succeeded"
            self.records[job_id] = JobRecord(job_id, status, record.submitted_at,
                                             record.started_at, datetime.now(UTC), result)

    def close(self) -> None:
        self._tasks.put(None)
        self._worker.join()


def test_a_runtime_that_marks_running_itself_is_read_through_the_gate() -> None:
    clock = VirtualClock(EPOCH)
    gate = DispatchGate(slots=1, now=lambda: datetime.now(UTC))
    scripts = {"a": TaskScript(), "b": TaskScript()}

    def body(job_id: str) -> object:  # the gate sits where the runtime calls the body
        if gate.wait(job_id, ord(job_id)) and gate.wait_for_decision(job_id, scripts[job_id]):
            return scripts[job_id].run()
        return None

    with WallClock(clock), ThreadWaits(clock, settle_limit_seconds=5) as waits:
        runtime = RecordKeepingRuntime()
        with waits.adopting():
            runtime.start()
        runtime.submit("a", lambda: body("a"))
        waits.settle()

        def seen(job_id: str) -> tuple[str, datetime | None]:
            record = gate.as_dispatched(runtime.records[job_id])
            return record.status, record.started_at

        assert runtime.records["a"].status == "running"  # its own record, at pickup
        assert seen("a") == ("queued", None)  # the body has not begun
        clock.advance(5)
        assert gate.open() == ["a"]  # the adapter's dispatch point
        waits.settle()
        assert seen("a") == ("running", EPOCH + timedelta(seconds=5))
        scripts["a"].decide(Succeed(1))
        waits.settle()
        gate.finished("a")
        assert seen("a") == ("succeeded", EPOCH + timedelta(seconds=5))
        assert runtime.records["a"].started_at == EPOCH  # what the gate corrects
        runtime.submit("b", lambda: body("b"))
        waits.settle()
        gate.release("b")  # cancelled while its body waits at the gate
        waits.settle()
        assert seen("b") == ("cancelled", None)
        runtime.close()
    with pytest.raises(ValueError, match="now="):
        DispatchGate().as_dispatched(runtime.records["a"])


def test_a_worker_that_installs_signal_handlers_leaves_the_harnesss_in_place() -> None:
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are set in the main thread only")
    harness = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}

    def warm_shutdown(signum: int, frame: object) -> None:
        """What a worker's own handler does: stop taking work."""

    with keeping_signal_handlers():
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR2):
            signal.signal(number, warm_shutdown)  # a worker's start, in the main thread
        assert signal.getsignal(signal.SIGTERM) is warm_shutdown
    assert {number: signal.getsignal(number) for number in harness} == harness
    assert signal.getsignal(signal.SIGUSR2) is not warm_shutdown  # the watchdog's
