"""The reaper (spec area "reaper", RP-001..RP-007): the oracle's rules, list_expired and
delete on every store, sweeps on the virtual clock, and stopping with real threads.

The SQL cases run on SQLite, PostgreSQL and MariaDB (tests/sql_databases.py).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sql_databases import JOB_STORE_KINDS, job_store

from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import ReaperAlreadyRunning, RuntimeSettings, TaskScript
from jobconform.backends.reaper import Reaper
from jobconform.backends.sql import SqlJobStore
from jobconform.backends.step_runtime import StepRuntime
from jobconform.backends.store import (
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    InMemoryJobStore,
    JobStore,
    StoredJob,
)
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import AdapterError, Harness
from jobconform.reference import commands as cmd
from jobconform.reference.commands import Succeed, command_from_json, command_to_json
from jobconform.reference.lifecycle import JobState, Status
from jobconform.reference.reaper import (
    ReaperSchedule,
    check_reaper_settings,
    due_sweeps,
    is_expired,
)
from jobconform.spec import load_registry

# A real-time limit for the threaded tests: only a guard against a hang.
SAFETY_SECONDS = 10.0


def at(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


# -- the oracle's rules ---------------------------------------------------------------------


def test_expiry_is_strict_and_terminal_only() -> None:
    finished = JobState(Status.SUCCEEDED, at(0), at(0), at(10))
    assert not is_expired(finished, at(10))
    assert is_expired(finished, at(10.000001))
    for status in (Status.FAILED, Status.CANCELLED):
        assert is_expired(JobState(status, at(0), None, at(1)), at(2))
    assert not is_expired(JobState(Status.RUNNING, at(0), at(0)), at(1000))
    assert not is_expired(JobState(Status.QUEUED, at(0)), at(1000))


def test_sweeps_fall_on_every_boundary_the_clock_reaches() -> None:
    schedule = ReaperSchedule.started(at(3), ttl_seconds=60, sweep_interval_ms=2500)
    assert list(due_sweeps(schedule, at(5.4))) == []
    assert list(due_sweeps(schedule, at(10.5))) == [at(5.5), at(8), at(10.5)]


@pytest.mark.parametrize(("ttl", "interval", "wrong"), [
    (-1.0, 1000.0, "ttl_seconds"), (float("inf"), 1000.0, "ttl_seconds"),
    (10.0, 0.0, "sweep_interval_ms"), (10.0, -5.0, "sweep_interval_ms"),
    (10.0, float("nan"), "sweep_interval_ms"),
])
def test_bad_reaper_settings_are_named(ttl: float, interval: float, wrong: str) -> None:
    with pytest.raises(ValueError, match=wrong):
        check_reaper_settings(ttl, interval)


def test_new_commands_round_trip_through_json() -> None:
    for command in (cmd.StartReaper(), cmd.StartReaper(5.0, 1000.0), cmd.StopReaper(),
                    cmd.StoreOutage(2), cmd.ReaperStatus(), cmd.ListExpired(3.5),
                    cmd.ExpireLeases(60.0), cmd.OperatorAlerts()):
        assert command_from_json(command_to_json(command)) == command
    assert cmd.describe(cmd.StartReaper(ttl_seconds=5.0)) == "StartReaper(ttl_seconds=5.0)"


# -- list_expired and delete on every store ----------------------------------------------------


@pytest.fixture(params=JOB_STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobStore]:
    with job_store(request.param, tmp_path) as opened:
        yield opened


def finished(job_id: str, status: str, seconds: float) -> StoredJob:
    return StoredJob(job_id, status, at(0), at(0), at(seconds))


def test_list_expired_is_strict_terminal_only_and_in_submission_order(store: JobStore) -> None:
    for job in (finished("late", SUCCEEDED, 20), finished("edge", FAILED, 10),
                StoredJob("queued", QUEUED, at(0)),
                StoredJob("running", RUNNING, at(0), at(0)),
                finished("early", CANCELLED, 5)):
        store.add(job, None)
    assert [job.job_id for job in store.list_expired(at(10))] == ["early"]
    assert [job.job_id for job in store.list_expired(at(10.5))] == ["edge", "early"]
    assert [job.job_id for job in store.list_expired(at(1e6))] == ["late", "edge", "early"]
    store.delete("edge")
    store.delete("no-such-job")  # an unknown id is a no-op
    assert [job.job_id for job in store.list()] == ["late", "queued", "running", "early"]


# -- the reaper on a store, driven by the caller's clock ---------------------------------------


def test_a_24_hour_ttl_is_checked_in_milliseconds(store: JobStore) -> None:
    store.add(finished("a", SUCCEEDED, 0), None)
    reaper = Reaper(store, default_ttl_seconds=86_400, default_sweep_interval_ms=300_000)
    started = time.perf_counter()
    reaper.start(at(0))
    reaper.run_due(at(86_400))  # the boundary at exactly the TTL: not yet expired
    assert store.get("a") is not None
    reaper.run_due(at(86_700))
    assert store.get("a") is None
    assert reaper.status() == {"running": True, "sweeps": 289, "failed_sweeps": 0,
                               "deleted": 1}
    assert time.perf_counter() - started < SAFETY_SECONDS


def test_starting_twice_is_refused_and_keeps_the_running_schedule() -> None:
    reaper = Reaper(InMemoryJobStore(), 3600, 300_000)
    reaper.start(at(0), ttl_seconds=5, sweep_interval_ms=10_000)
    with pytest.raises(ReaperAlreadyRunning, match="stop it before starting it again"):
        reaper.start(at(1), ttl_seconds=100, sweep_interval_ms=1000)
    reaper.run_due(at(9.9))
    assert reaper.counters.sweeps == 0
    reaper.run_due(at(10))
    assert reaper.counters.sweeps == 1


# -- stopping waits for the sweep in flight (RP-007), with real threads --------------------------


class HeldStore:
    """A store whose list_expired blocks until the test lets it go: a sweep in flight."""

    def __init__(self, store: JobStore) -> None:
        self.store = store
        self.sweeping = threading.Event()
        self.release = threading.Event()

    def list_expired(self, before: datetime) -> list[StoredJob]:
        self.sweeping.set()
        assert self.release.wait(SAFETY_SECONDS), "the test never released the sweep"
        return self.store.list_expired(before)

    def delete(self, job_id: str) -> None:
        self.store.delete(job_id)


class ObservedLock:
    """The reaper's lock, reporting when a thread other than the sweeper waits for it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.waiting = threading.Event()

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            self.waiting.set()
            self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


class StopWithoutWaitingReaper(Reaper):
    """A stop that clears the schedule without waiting for the sweep in flight."""

    def stop(self) -> bool:
        was_running = self.running
        self._ttl = self._next_sweep = None
        return was_running


def stop_during_sweep(reaper_type: type[Reaper], store: JobStore) -> list[str]:
    """Start a sweep that blocks in the store, call stop from a second thread, and return
    the order in which the sweep ended and stop returned."""
    store.add(finished("a", SUCCEEDED, 0), None)
    held = HeldStore(store)
    events: list[str] = []

    class Recorded(reaper_type):  # type: ignore[valid-type,misc]
        def _sweep(self, before: datetime) -> None:
            super()._sweep(before)
            events.append("swept")

    reaper = Recorded(held, 0, 1000)
    lock = ObservedLock()
    reaper._lock = lock
    reaper.start(at(0))
    sweeper = threading.Thread(target=reaper.run_due, args=(at(1),))
    stopper = threading.Thread(target=lambda: (reaper.stop(), events.append("stopped")))
    sweeper.start()
    assert held.sweeping.wait(SAFETY_SECONDS), "the sweep never reached the store"
    stopper.start()
    # Either stop blocks on the lock held by the sweep, or it returns without waiting.
    deadline = time.monotonic() + SAFETY_SECONDS
    while not lock.waiting.is_set() and stopper.is_alive():
        assert time.monotonic() < deadline, "stop neither waited nor returned"
        stopper.join(timeout=0.001)  # wakes as soon as stop returns
    held.release.set()
    for thread in (sweeper, stopper):
        thread.join(SAFETY_SECONDS)
        assert not thread.is_alive(), "a reaper thread hung"
    return events


@pytest.mark.parametrize("kind", ("memory", "sqlite"))
def test_stop_returns_only_after_the_sweep_in_flight(kind: str, tmp_path: Path) -> None:
    store: JobStore = (InMemoryJobStore() if kind == "memory"
                       else SqlJobStore.connect(f"sqlite:///{tmp_path / 'jobs.db'}"))
    assert stop_during_sweep(Reaper, store) == ["swept", "stopped"]
    assert store.get("a") is None  # the sweep in flight finished its deletions


def test_the_stop_check_catches_a_stop_that_does_not_wait() -> None:
    assert stop_during_sweep(StopWithoutWaitingReaper, InMemoryJobStore()) == [
        "stopped", "swept"]


# -- the step runtime: sweeps in settle, outages, defaults ---------------------------------------


def runtime(clock: VirtualClock, **settings: Any) -> MemoryRuntime:
    return MemoryRuntime(RuntimeSettings(max_concurrent=2, max_tasks=None, **settings), clock)


def finish_one(step: StepRuntime) -> str:
    script = TaskScript()
    job_id = step.submit(script)
    step.dispatch()
    script.decide(Succeed(1))
    step.settle()
    return job_id


def test_the_runtime_sweeps_when_it_settles_after_the_clock_moved() -> None:
    clock = VirtualClock(EPOCH)
    step = runtime(clock, reaper_ttl_seconds=10, reaper_sweep_interval_ms=5000)
    job_id = finish_one(step)
    clock.advance(1000)
    step.settle()
    assert step.get(job_id) is not None  # opt-in (RP-001)
    step.start_reaper()  # the configured defaults (RP-002): first sweep 5 s from now
    clock.advance(4.9)
    step.settle()
    assert step.get(job_id) is not None
    clock.advance(0.1)
    step.settle()
    assert step.get(job_id) is None
    assert step.reaper_status() == {"running": True, "sweeps": 1, "failed_sweeps": 0,
                                    "deleted": 1}


def test_a_store_outage_is_logged_and_the_next_sweep_catches_up(
        caplog: pytest.LogCaptureFixture) -> None:
    clock = VirtualClock(EPOCH)
    step = runtime(clock)
    job_id = finish_one(step)
    step.start_reaper(ttl_seconds=1, sweep_interval_ms=2000)
    step.inject_store_outage(2)
    clock.advance(4)
    with caplog.at_level("WARNING", logger="jobconform.reaper"):
        step.settle()
    assert [record.levelname for record in caplog.records] == ["WARNING", "WARNING"]
    assert "retrying at the next sweep" in caplog.records[0].getMessage()
    assert step.get(job_id) is not None
    clock.advance(2)
    step.settle()
    assert step.get(job_id) is None
    assert step.reaper_status() == {"running": True, "sweeps": 1, "failed_sweeps": 2,
                                    "deleted": 1}


# -- harness: bad input and a backend missing the methods it claims ------------------------------


def test_the_harness_names_bad_reaper_commands() -> None:
    registry = load_registry()
    harness = Harness(MemoryBackend(), registry.profile("canonical"), registry)
    with pytest.raises(ValueError, match="ttl_seconds must be finite and >= 0"):
        harness.run(cmd.StartReaper(ttl_seconds=-1))
    with pytest.raises(ValueError, match="at least 1 sweep"):
        harness.run(cmd.StoreOutage(0))
    with pytest.raises(ValueError, match="list_expired needs a finite age"):
        harness.run(cmd.ListExpired(float("nan")))
    harness.close()


class NoReaperBackend(MemoryBackend):
    """Claims the reaper, but its runtime has no reaper methods."""

    name = "no-reaper"

    def open(self, settings: RuntimeSettings, clock: Any) -> Any:
        class Plain:
            def __init__(self) -> None:
                self._runtime = MemoryRuntime(settings, clock)

            def __getattr__(self, name: str) -> object:
                if "reaper" in name:
                    raise AttributeError(name)
                return getattr(self._runtime, name)

        return Plain()


def test_a_backend_claiming_the_reaper_without_its_methods_gets_a_clear_error() -> None:
    registry = load_registry()
    harness = Harness(NoReaperBackend(), registry.profile("canonical"), registry)
    with pytest.raises(AdapterError, match=r"Runtime\.start_reaper"):
        harness.run(cmd.StartReaper())


def test_a_backend_not_claiming_the_reaper_cannot_be_asked_to_reap() -> None:
    registry = load_registry()

    class LifecycleOnly(MemoryBackend):
        capabilities = frozenset({"lifecycle"})

    harness = Harness(LifecycleOnly(), registry.profile("canonical"), registry)
    with pytest.raises(ValueError, match="does not claim the reaper area"):
        harness.run(cmd.StartReaper())
    harness.close()
