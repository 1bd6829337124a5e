"""The threaded worker: real pool threads, driven by the virtual clock, judged by the oracle.

Waits in these tests are bounded by SAFETY seconds of real time and only ever guard against
a hang; time passes for the worker only when a test advances the virtual clock.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_sequences import lifecycle_commands

from jobconform.backends import ownership
from jobconform.backends.protocol import RuntimeSettings, RuntimeShutDown, TaskScript
from jobconform.backends.shipped import EVERY_SHIPPED_BACKEND
from jobconform.backends.store import (
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    InMemoryJobStore,
    StoredJob,
)
from jobconform.backends.threaded import (
    SettleTimeout,
    SystemClock,
    ThreadedBackend,
    ThreadedRuntime,
    WorkerConfig,
    WorkerConfigError,
    WorkerCrashed,
    WorkerDisabled,
    conformance_config,
)
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import Harness
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import (
    Command,
    ListJobs,
    Raise,
    Succeed,
)
from jobconform.reference.lifecycle import STUCK_ERROR
from jobconform.spec import load_registry

SAFETY = 10.0  # real seconds; only a guard against a hung test


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock()


class Workers:
    """Opens workers for one test and, at its end, closes them and checks that none of
    their threads is left."""

    def __init__(self, clock: VirtualClock) -> None:
        self.clock = clock
        self.opened: list[ThreadedRuntime] = []

    def open(self, store: InMemoryJobStore | None = None, slots: int = 2,
             poll_interval: float | None = None, poll_beats_jobs: bool = True,
             **options: Any) -> ThreadedRuntime:
        config = WorkerConfig(enabled=True, max_workers=slots, poll_interval=poll_interval,
                              poll_beats_jobs=poll_beats_jobs)
        worker = ThreadedRuntime(store if store is not None else InMemoryJobStore(),
                                 self.clock, config, **options)
        self.opened.append(worker)
        return worker


def threads_of(worker: ThreadedRuntime) -> list[str]:
    return [thread.name for thread in threading.enumerate()
            if thread.name.startswith(worker.worker_id)]


@pytest.fixture
def workers(clock: VirtualClock) -> Iterator[Workers]:
    opened = Workers(clock)
    yield opened
    for worker in opened.opened:
        worker.close()
        assert threads_of(worker) == [], f"{worker.worker_id} left threads after close"


def decided(outcome: Succeed | Raise, honours_cancellation: bool = True) -> TaskScript:
    script = TaskScript(honours_cancellation)
    script.decide(outcome)
    return script


def status(worker: ThreadedRuntime, job_id: str) -> str:
    job = worker.get(job_id)
    assert job is not None
    return job.status


# -- configuration ---------------------------------------------------------------------------


def test_config_defaults_are_the_first_seeds() -> None:
    config = WorkerConfig()
    assert (config.enabled, config.max_workers, config.poll_interval, config.job_timeout,
            config.job_ttl) == (False, 4, 1.0, 3600, 86_400)
    assert WorkerConfig.from_environment({}) == config
    assert config.describe() == ("Async workers: disabled, max_workers=4, poll_interval=1s,"
                                 " job_timeout=3600s, job_ttl=86400s")


def test_config_reads_every_variable() -> None:
    config = WorkerConfig.from_environment({
        "JOBCONFORM_ASYNC_ENABLED": "Yes",
        "JOBCONFORM_ASYNC_MAX_WORKERS": "8",
        "JOBCONFORM_ASYNC_POLL_INTERVAL": "0.25",
        "JOBCONFORM_ASYNC_JOB_TIMEOUT": "60",
        "JOBCONFORM_ASYNC_JOB_TTL": " 7200 ",
        "JOBCONFORM_UNRELATED": "x",
    })
    assert config == WorkerConfig(enabled=True, max_workers=8, poll_interval=0.25,
                                  job_timeout=60, job_ttl=7200)
    assert WorkerConfig.from_environment({"JOBCONFORM_ASYNC_MAX_WORKERS": "  "}).max_workers == 4
    assert WorkerConfig.from_environment({"JOBCONFORM_ASYNC_ENABLED": "off"}).enabled is False


@pytest.mark.parametrize(("variable", "value"), [
    ("JOBCONFORM_ASYNC_ENABLED", "maybe"),
    ("JOBCONFORM_ASYNC_MAX_WORKERS", "0"),
    ("JOBCONFORM_ASYNC_MAX_WORKERS", "four"),
    ("JOBCONFORM_ASYNC_MAX_WORKERS", "2.5"),
    ("JOBCONFORM_ASYNC_POLL_INTERVAL", "0"),
    ("JOBCONFORM_ASYNC_POLL_INTERVAL", "-1"),
    ("JOBCONFORM_ASYNC_POLL_INTERVAL", "inf"),
    ("JOBCONFORM_ASYNC_POLL_INTERVAL", "soon"),
    ("JOBCONFORM_ASYNC_JOB_TIMEOUT", "-5"),
    ("JOBCONFORM_ASYNC_JOB_TTL", "1e3"),
])
def test_a_bad_variable_is_an_error_naming_it(variable: str, value: str) -> None:
    with pytest.raises(WorkerConfigError, match=re.escape(variable)) as caught:
        WorkerConfig.from_environment({variable: value})
    assert repr(value) in str(caught.value) or value in str(caught.value)


@pytest.mark.parametrize("values", [
    {"max_workers": 0}, {"poll_interval": 0.0}, {"poll_interval": float("nan")},
    {"job_timeout": 0}, {"job_ttl": True},
])
def test_config_checks_its_own_fields(values: dict[str, Any]) -> None:
    with pytest.raises(WorkerConfigError, match=next(iter(values))):
        WorkerConfig(**values)


def test_a_disabled_worker_refuses_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JOBCONFORM_ASYNC_ENABLED", raising=False)
    with pytest.raises(WorkerDisabled, match="JOBCONFORM_ASYNC_ENABLED=1"):
        ThreadedRuntime(InMemoryJobStore())


def test_the_conformance_backend_polls_only_at_dispatch_points() -> None:
    config = conformance_config(RuntimeSettings(max_concurrent=3, max_tasks=None))
    assert config == WorkerConfig(enabled=True, max_workers=3, poll_interval=None,
                                  poll_beats_jobs=False)
    backend = ThreadedBackend()
    # Every shipped backend's claims, the health report, submissions from threads at once
    # and the audit events, and self-running; no planned faults in its job store.
    assert (backend.name, backend.profile, backend.capabilities) == (
        "threaded", "canonical", EVERY_SHIPPED_BACKEND | {
            "health-report", "concurrent-submit", "audit-events", "self-running"})


def test_a_periodic_poll_needs_a_clock_it_can_sleep_on() -> None:
    class WallTimeOnly:
        def now(self) -> datetime:
            return EPOCH

    with pytest.raises(TypeError, match="WallTimeOnly has no wait_until"):
        ThreadedRuntime(InMemoryJobStore(), WallTimeOnly(),
                        WorkerConfig(enabled=True, poll_interval=1.0))


def test_a_failed_attempt_waits_its_backoff_then_runs_again_in_a_pool_thread(
        workers: Workers, clock: VirtualClock) -> None:
    worker = workers.open()
    ran_in: list[str] = []

    class RecordingBody(TaskScript):
        def run(self, *given: Any) -> Any:
            ran_in.append(threading.current_thread().name)
            return super().run(*given)

    script = RecordingBody()
    job = worker.submit(script, RetryPolicy(max_retries=2, retry_delay_ms=1000))
    worker.dispatch()
    script.decide(Raise("ValueError", "flaky"))
    worker.settle()
    record = worker.get(job)
    assert record is not None
    assert (record.status, record.retry_count, record.next_attempt_at) == (
        QUEUED, 1, EPOCH + timedelta(seconds=1))
    assert worker.health().failed == 0  # a retried attempt is not an outcome
    clock.advance(0.999)
    worker.dispatch()
    assert status(worker, job) == QUEUED
    clock.advance(0.001)
    worker.dispatch()
    assert status(worker, job) == RUNNING
    script.decide(Succeed("second time"))
    worker.settle()
    assert worker.get_result(job) == "second time"
    assert len(ran_in) == 2 and all(name.startswith(f"{worker.worker_id}-job")
                                    for name in ran_in)


def test_the_last_retry_fails_the_job_and_frees_its_slot(workers: Workers) -> None:
    worker = workers.open(slots=1)
    script = TaskScript()
    job = worker.submit(script, RetryPolicy(max_retries=1, retry_delay_ms=0))
    other = worker.submit(decided(Succeed("next")))
    for _ in range(2):
        worker.dispatch()
        assert status(worker, job) == RUNNING
        script.decide(Raise("ValueError", "boom"))
        worker.settle()
    record = worker.get(job)
    assert record is not None
    assert (record.status, record.retry_count, record.error) == (FAILED, 1, "ValueError: boom")
    worker.dispatch()
    assert worker.get_result(other) == "next"


# -- the worker --------------------------------------------------------------------------------


def test_worker_id_and_health_report(workers: Workers, clock: VirtualClock) -> None:
    worker = workers.open(slots=1)
    assert re.fullmatch(r"worker-[0-9a-f]{8}", worker.worker_id)
    first = worker.submit(decided(Raise("ValueError", "bad")))
    worker.submit(TaskScript())
    health = worker.health()
    assert (health.queued, health.running, health.total, health.processed) == (2, 0, 2, 0)
    assert (health.worker_id, health.status, health.last_heartbeat) == (
        worker.worker_id, "running", None)
    clock.advance(3)
    worker.dispatch()
    health = worker.health()
    assert status(worker, first) == FAILED
    assert (health.queued, health.running, health.total) == (1, 0, 2)
    assert (health.processed, health.failed, health.cancelled) == (1, 1, 0)
    assert health.last_heartbeat == EPOCH + timedelta(seconds=3)
    worker.stop()
    assert worker.health().status == "stopped"


def test_jobs_really_run_concurrently_in_pool_threads(workers: Workers) -> None:
    barrier = threading.Barrier(3, timeout=SAFETY)
    ran_in: list[str] = []

    class MeetingBody(TaskScript):
        """Returns only once all three bodies run at the same time."""

        def run(self, *given: Any) -> Any:
            ran_in.append(threading.current_thread().name)
            barrier.wait()
            return super().run(*given)

    worker = workers.open(slots=3)
    jobs = []
    for number in range(3):
        script = MeetingBody()
        script.decide(Succeed(number))
        jobs.append(worker.submit(script))
    worker.dispatch()
    assert [worker.get_result(job) for job in jobs] == [0, 1, 2]
    assert len(set(ran_in)) == 3
    assert all(name.startswith(f"{worker.worker_id}-job") for name in ran_in)


def test_a_dispatch_fills_every_free_slot_oldest_first(workers: Workers) -> None:
    worker = workers.open(slots=2)
    jobs = [worker.submit(TaskScript()) for _ in range(3)]
    worker.dispatch()
    assert [status(worker, job) for job in jobs] == [RUNNING, RUNNING, QUEUED]
    assert len([name for name in threads_of(worker) if "-job" in name]) == 2


def test_without_a_poll_interval_only_dispatch_starts_jobs(workers: Workers,
                                                             clock: VirtualClock) -> None:
    worker = workers.open()
    job = worker.submit(decided(Succeed("done")))
    clock.advance(86_400)
    worker.settle()
    assert status(worker, job) == QUEUED
    worker.dispatch()
    assert worker.get_result(job) == "done"
    record = worker.get(job)
    assert record is not None
    assert record.started_at == record.finished_at == EPOCH + timedelta(days=1)


def test_a_periodic_poll_waits_on_the_virtual_clock(workers: Workers,
                                                    clock: VirtualClock) -> None:
    worker = workers.open(poll_interval=5.0)
    worker.settle()  # the first poll, at once
    job = worker.submit(TaskScript())
    clock.advance(4.5)
    worker.settle()
    assert status(worker, job) == QUEUED
    clock.advance(0.5)
    worker.settle()
    record = worker.get(job)
    assert record is not None and record.status == RUNNING
    assert record.started_at == EPOCH + timedelta(seconds=5)
    clock.advance(5)
    worker.settle()  # the next poll beats for the running job
    beaten = worker.get(job)
    assert beaten is not None and beaten.last_heartbeat == EPOCH + timedelta(seconds=10)


def test_each_poll_beats_for_the_running_jobs(workers: Workers, clock: VirtualClock) -> None:
    worker = workers.open()
    job = worker.submit(TaskScript())
    worker.dispatch()
    clock.advance(30)
    worker.dispatch()
    record = worker.get(job)
    assert record is not None
    assert (record.started_at, record.last_heartbeat) == (EPOCH,
                                                          EPOCH + timedelta(seconds=30))
    assert record.worker_id == worker.worker_id
    assert worker.health().last_heartbeat == EPOCH + timedelta(seconds=30)


# -- stuck jobs and re-delivery --------------------------------------------------------------------


def test_a_silent_body_is_failed_as_stuck_and_its_slot_is_freed(workers: Workers,
                                                                clock: VirtualClock) -> None:
    worker = workers.open(slots=1, poll_beats_jobs=False)
    silent = TaskScript()
    stuck = worker.submit(silent)
    worker.dispatch()
    clock.advance(30)
    worker.dispatch()  # this poll does not beat for the job: only its body would
    clock.advance(31)
    assert worker.detect_stuck(60) == 1
    record = worker.get(stuck)
    assert record is not None and (record.status, record.error) == (FAILED, STUCK_ERROR)
    after = worker.submit(decided(Succeed("next")))
    worker.dispatch()  # the stuck job's pool thread let go of the only slot
    assert worker.get_result(after) == "next"
    silent.decide(Succeed("late"))  # the body ends after all: nothing changes
    worker.settle()
    assert worker.get(stuck) == record
    assert (worker.health().processed, worker.health().failed) == (2, 1)


def test_a_heartbeat_keeps_a_job_from_being_stuck(workers: Workers,
                                                  clock: VirtualClock) -> None:
    worker = workers.open(slots=1, poll_beats_jobs=False)
    job = worker.submit(TaskScript())
    worker.dispatch()
    clock.advance(50)
    worker.heartbeat(job)
    clock.advance(50)
    assert worker.detect_stuck(60) == 0
    assert status(worker, job) == RUNNING


def test_an_expired_lease_requeues_the_job_and_the_cap_parks_it(workers: Workers,
                                                                clock: VirtualClock) -> None:
    worker = workers.open(slots=1, poll_beats_jobs=False, max_redelivery=1)
    script = TaskScript()
    job = worker.submit(script)
    worker.dispatch()
    clock.advance(31)
    assert worker.expire_leases(30) == {"requeued": 1, "parked": 0}
    record = worker.get(job)
    assert record is not None and (record.status, record.redelivery_count) == (QUEUED, 1)
    worker.dispatch()  # the same body runs again, in a new pool thread
    assert status(worker, job) == RUNNING
    clock.advance(31)
    assert worker.expire_leases(30) == {"requeued": 0, "parked": 1}
    parked = worker.get(job)
    assert parked is not None and (parked.status, parked.poisoned) == (FAILED, True)
    assert worker.operator_alerts() == [job]


def test_a_redelivered_job_runs_to_its_new_outcome(workers: Workers,
                                                   clock: VirtualClock) -> None:
    worker = workers.open(slots=1, poll_beats_jobs=False)
    script = TaskScript()
    job = worker.submit(script)
    worker.dispatch()
    clock.advance(31)
    worker.expire_leases(30)
    worker.dispatch()
    script.decide(Succeed("second delivery"))
    worker.settle()
    assert worker.get_result(job) == "second delivery"
    assert (worker.health().processed, worker.health().failed) == (1, 0)


# -- the reaper ----------------------------------------------------------------------------------


def test_the_reaper_sweeps_in_the_poll_thread_at_each_boundary(workers: Workers,
                                                               clock: VirtualClock) -> None:
    worker = workers.open(poll_interval=5.0)
    job = worker.submit(decided(Succeed("done")))
    worker.dispatch()
    assert status(worker, job) == "succeeded"
    worker.start_reaper(ttl_seconds=60, sweep_interval_ms=90_000)
    clock.advance(89)
    worker.settle()
    assert worker.reaper_status()["sweeps"] == 0
    clock.advance(1)  # the first boundary: the job finished 90 s ago, past its 60 s TTL
    worker.settle()
    assert worker.reaper_status() == {"running": True, "sweeps": 1, "failed_sweeps": 0,
                                      "deleted": 1}
    assert worker.get(job) is None


def test_a_reaper_boundary_wakes_a_worker_that_polls_only_at_dispatch(
        workers: Workers, clock: VirtualClock) -> None:
    worker = workers.open()
    worker.start_reaper(ttl_seconds=0, sweep_interval_ms=1_000)
    clock.advance(3.5)  # three boundaries passed while the poll thread slept
    worker.settle()
    assert worker.reaper_status()["sweeps"] == 3
    assert worker.stop_reaper() is True
    clock.advance(10)
    worker.settle()
    assert worker.reaper_status()["sweeps"] == 3


def test_the_reaper_needs_a_clock_it_can_sleep_on() -> None:
    class FixedClock:
        def now(self) -> datetime:
            return EPOCH

    with closing(ThreadedRuntime(InMemoryJobStore(), FixedClock(),
                                 WorkerConfig(enabled=True, poll_interval=None))) as worker:
        with pytest.raises(TypeError, match="wait_until"):
            worker.start_reaper()
        assert worker.reaper_status()["running"] is False


# -- cancellation ---------------------------------------------------------------------------------


def test_cancel_of_a_running_job_is_done_by_its_owner(workers: Workers) -> None:
    worker = workers.open()
    ignoring = worker.submit(TaskScript(honours_cancellation=False))
    honouring = worker.submit(TaskScript())
    worker.dispatch()
    assert worker.cancel(ignoring) is True
    worker.settle()
    record = worker.get(ignoring)
    assert record is not None and (record.status, record.cancel_requested) == (RUNNING, True)
    assert worker.cancel(ignoring) is False  # already requested (LC-015)
    assert worker.cancel(honouring) is True
    worker.settle()
    assert status(worker, honouring) == CANCELLED
    health = worker.health()
    assert (health.running, health.cancelled, health.processed) == (1, 1, 0)


def test_an_ignoring_body_ends_cancelled_when_it_returns(workers: Workers,
                                                         clock: VirtualClock) -> None:
    worker = workers.open()
    script = TaskScript(honours_cancellation=False)
    job = worker.submit(script)
    worker.dispatch()
    worker.cancel(job)
    clock.advance(2)
    script.decide(Succeed("dropped"))
    worker.settle()
    record = worker.get(job)
    assert record is not None
    assert (record.status, record.result) == (CANCELLED, None)
    assert record.finished_at == EPOCH + timedelta(seconds=2)
    health = worker.health()
    assert (health.cancelled, health.processed, health.failed) == (1, 0, 0)


def test_cancel_racing_a_pickup_leaves_one_legal_history(workers: Workers) -> None:
    # Either order is legal: cancelled while queued (never started), or started and then
    # cancelled by its owner. What must never happen is both, or neither.
    for _ in range(40):
        worker = workers.open(slots=1)
        job = worker.submit(TaskScript())
        answers: list[bool] = []

        def cancel(worker: ThreadedRuntime = worker, job: str = job,
                   answers: list[bool] = answers) -> None:
            answers.append(worker.cancel(job))

        canceller = threading.Thread(target=cancel)
        canceller.start()
        worker.dispatch()
        canceller.join(SAFETY)
        worker.settle()
        record = worker.get(job)
        assert record is not None
        assert answers == [True]
        assert record.status == CANCELLED
        health = worker.health()
        assert (health.cancelled, health.processed, health.running) == (1, 0, 0)
        assert (record.started_at is None) == (record.worker_id is None)
        worker.close()


def test_cancel_falls_back_to_a_request_when_another_worker_claims_first(
        workers: Workers) -> None:
    class ClaimedJustBeforeCancel(InMemoryJobStore):
        """Another worker claims the job between cancel's read and its conditional write."""

        def update(self, job_id: str, expected_status: str, **changes: Any) -> StoredJob | None:
            if expected_status == QUEUED and changes.get("status") == CANCELLED:
                self.claim("worker-other", 1, EPOCH)
            return super().update(job_id, expected_status, **changes)

    worker = workers.open(store=ClaimedJustBeforeCancel())
    job = worker.submit(TaskScript())
    assert worker.cancel(job) is True
    record = worker.get(job)
    assert record is not None
    assert (record.status, record.cancel_requested, record.worker_id) == (
        RUNNING, True, "worker-other")
    assert worker.health().cancelled == 0  # the owner counts it when it moves it


def test_a_cancel_requested_through_the_store_reaches_the_owner(workers: Workers) -> None:
    store = InMemoryJobStore()
    worker = workers.open(store=store)
    job = worker.submit(TaskScript())
    worker.dispatch()
    claimed = store.get(job)
    assert claimed is not None
    assert ownership.request_cancellation(store, claimed) is not None  # another process
    worker.dispatch()  # the poll's heartbeat reads the request
    assert status(worker, job) == CANCELLED
    assert worker.health().cancelled == 1


def test_a_job_claimed_without_a_body_here_fails_clearly(workers: Workers) -> None:
    store = InMemoryJobStore()
    submitter, other = workers.open(store=store), workers.open(store=store)
    job = submitter.submit(TaskScript())
    other.dispatch()
    record = other.get(job)
    assert record is not None and record.status == FAILED
    assert record.error == f"LookupError: worker {other.worker_id} has no body for this job"


# -- stopping and shutdown ------------------------------------------------------------------------


def test_shutdown_cancels_everything_and_releases_every_thread(workers: Workers,
                                                                clock: VirtualClock) -> None:
    worker = workers.open(slots=1)
    running = worker.submit(TaskScript(honours_cancellation=False))  # never decided
    queued = worker.submit(TaskScript())
    worker.dispatch()
    clock.advance(7)
    worker.shutdown()
    assert threads_of(worker) == []  # the poll thread joined and the pool drained
    for job in (running, queued):
        record = worker.get(job)
        assert record is not None
        assert (record.status, record.finished_at) == (CANCELLED,
                                                       EPOCH + timedelta(seconds=7))
    health = worker.health()
    assert (health.cancelled, health.processed, health.status) == (2, 0, "stopped")
    with pytest.raises(RuntimeShutDown):
        worker.submit(TaskScript())
    worker.shutdown()  # idempotent
    worker.dispatch()
    worker.settle()
    assert worker.health().cancelled == 2


def test_stop_cancels_running_jobs_but_leaves_queued_ones(workers: Workers) -> None:
    worker = workers.open(slots=1)
    running = worker.submit(TaskScript())
    queued = worker.submit(TaskScript())
    worker.dispatch()
    worker.stop()
    assert (status(worker, running), status(worker, queued)) == (CANCELLED, QUEUED)
    assert worker.wait_stopped(timeout=0) is True
    with pytest.raises(RuntimeShutDown, match="is stopped"):
        worker.submit(TaskScript())


def test_close_releases_a_body_blocked_on_an_undecided_script(clock: VirtualClock) -> None:
    with ThreadedRuntime(InMemoryJobStore(), clock,
                         WorkerConfig(enabled=True, poll_interval=None)) as worker:
        worker.submit(TaskScript(honours_cancellation=False))
        worker.dispatch()
        assert len(threads_of(worker)) == 2  # the poll thread and one pool thread
    assert threads_of(worker) == []


def test_sigterm_stops_the_worker_and_restores_the_handlers(workers: Workers) -> None:
    # The handlers before the worker, not Python's defaults: a shell starts a background
    # job with SIGINT ignored, and the worker must give back whatever it found (RS-008).
    # The signal is the worker's shutdown (RS-004): the queued job ends cancelled too.
    previous = signal.getsignal(signal.SIGTERM)
    previous_interrupt = signal.getsignal(signal.SIGINT)
    worker = workers.open(slots=1, install_signal_handlers=True)
    assert signal.getsignal(signal.SIGTERM) is not previous
    running = worker.submit(TaskScript(honours_cancellation=False))
    queued = worker.submit(TaskScript())
    worker.dispatch()
    signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is previous
    assert signal.getsignal(signal.SIGINT) is previous_interrupt
    assert worker.wait_stopped(timeout=SAFETY)
    assert (status(worker, running), status(worker, queued)) == (CANCELLED, CANCELLED)


def test_close_restores_the_signal_handlers(clock: VirtualClock) -> None:
    previous = signal.getsignal(signal.SIGINT)
    worker = ThreadedRuntime(InMemoryJobStore(), clock,
                             WorkerConfig(enabled=True, poll_interval=None),
                             install_signal_handlers=True)
    assert signal.getsignal(signal.SIGINT) != previous
    worker.close()
    assert signal.getsignal(signal.SIGINT) is previous


def test_signal_handlers_are_installed_only_from_the_main_thread(clock: VirtualClock) -> None:
    errors: list[BaseException] = []

    def open_off_main() -> None:
        try:
            ThreadedRuntime(InMemoryJobStore(), clock,
                            WorkerConfig(enabled=True, poll_interval=None),
                            install_signal_handlers=True)
        except RuntimeError as error:
            errors.append(error)

    opener = threading.Thread(target=open_off_main)
    opener.start()
    opener.join(SAFETY)
    assert len(errors) == 1 and "main thread" in str(errors[0])


# -- settle and its safety limit ------------------------------------------------------------------


def test_settle_reports_a_stuck_body_with_every_threads_stack(workers: Workers) -> None:
    release = threading.Event()

    class StuckBody(TaskScript):
        def run(self, *given: Any) -> Any:
            release.wait(SAFETY)
            return super().run(*given)

    # Half a second, not less: the stack must show the body already waiting, and a loaded
    # machine can take longer than a tenth to start its thread.
    worker = workers.open(settle_limit=0.5)
    script = StuckBody()
    script.decide(Succeed(1))
    job = worker.submit(script)
    with pytest.raises(SettleTimeout) as caught:
        worker.dispatch()
    message = str(caught.value)
    assert f"worker {worker.worker_id}: the worker did not settle within 0.5 s" in message
    assert f"job {job}: its body can end" in message
    assert f"--- thread {worker.worker_id}-job" in message
    assert "release.wait(SAFETY)" in message
    release.set()
    worker.settle()
    assert worker.get_result(job) == 1


def test_a_failing_store_write_in_a_pool_thread_is_reported(workers: Workers) -> None:
    class TerminalWriteFails(InMemoryJobStore):
        def update(self, job_id: str, expected_status: str, **changes: Any) -> StoredJob | None:
            if "finished_at" in changes:
                raise ConnectionError("database went away")
            return super().update(job_id, expected_status, **changes)

    worker = workers.open(store=TerminalWriteFails())
    job = worker.submit(decided(Succeed(1)))
    with pytest.raises(WorkerCrashed, match=f"job {job}:(.|\n)*ConnectionError: database"):
        worker.dispatch()
    worker.settle()  # reported once


def test_a_failing_claim_is_reported_and_the_loop_keeps_serving(workers: Workers) -> None:
    class ClaimFails(InMemoryJobStore):
        def claim(self, worker_id: str, limit: int, now: datetime) -> list[StoredJob]:
            raise ConnectionError("database went away")

    worker = workers.open(store=ClaimFails())
    for _ in range(2):
        with pytest.raises(WorkerCrashed, match="poll at 2026-01-01T00:00:00"):
            worker.dispatch()


# -- the clocks and the task script ---------------------------------------------------------------


def test_virtual_clock_wakes_a_sleeper_only_at_its_deadline(clock: VirtualClock) -> None:
    condition = threading.Condition()
    deadline = EPOCH + timedelta(seconds=10)
    woke_at: list[datetime] = []

    def sleeper() -> None:
        with condition:
            while clock.now() < deadline:
                clock.wait_until(condition, deadline)
            woke_at.append(clock.now())

    thread = threading.Thread(target=sleeper)
    thread.start()
    clock.advance(6)
    clock.advance(6)
    thread.join(SAFETY)
    assert woke_at == [EPOCH + timedelta(seconds=12)]
    with condition:
        clock.wait_until(condition, EPOCH)  # already past: returns at once


def test_system_clock_is_aware_utc_and_returns_on_notify() -> None:
    system = SystemClock()
    assert system.now().utcoffset() == timedelta(0)
    condition = threading.Condition()
    with condition:
        system.wait_until(condition, system.now() - timedelta(seconds=1))
    notified = threading.Event()

    def notify_once_waiting() -> None:
        with condition:
            condition.notify_all()
        notified.set()

    with condition:
        threading.Thread(target=notify_once_waiting).start()
        system.wait_until(condition, system.now() + timedelta(seconds=SAFETY))
    assert notified.wait(SAFETY)


def test_task_script_wakes_waiters_on_decide_and_on_wake() -> None:
    script = TaskScript()
    released = threading.Event()
    answers: list[bool] = []
    waiters = [threading.Thread(target=lambda: answers.append(
        script.wait_for_decision(released.is_set))) for _ in range(2)]
    waiters[0].start()
    released.set()
    script.wake()
    waiters[0].join(SAFETY)
    assert answers == [False]
    released.clear()
    waiters[1].start()
    script.decide(Succeed(1))
    waiters[1].join(SAFETY)
    assert answers == [False, True]


# -- differential: the threaded backend agrees with the oracle ------------------------------------

outcomes = st.one_of(st.builds(Succeed, st.none() | st.integers(0, 2)),
                     st.builds(Raise, st.sampled_from(["ValueError", "Boom"]), st.just("x")))


@st.composite
def command_sequences(draw: st.DrawFn) -> list[Command]:
    """Random commands, then a listing: what the threaded runtime holds at the end."""
    commands = draw(lifecycle_commands(
        max_size=25, outcomes=outcomes,
        kinds=["submit", "submit", "dispatch", "dispatch", "finish", "finish", "cancel", "time",
               "cleanup", "shutdown", "read"],
        seconds=[0, 1, 30], ages=[0, 30]))
    return [*commands, ListJobs()]


@given(command_sequences(), st.integers(1, 3), st.sampled_from([None, 3]))
@settings(max_examples=60, deadline=None, database=None, derandomize=True)
def test_threaded_backend_agrees_with_oracle(commands: list[Command], max_concurrent: int,
                                             max_tasks: int | None) -> None:
    with closing(Harness(ThreadedBackend(), load_registry().profile("canonical"),
                         max_concurrent=max_concurrent, max_tasks=max_tasks,
                         unlimited_tasks=max_tasks is None)) as check:
        check.run_all(commands)  # raises Divergence on the first disagreement
    assert isinstance(check.runtime, ThreadedRuntime)
    assert threads_of(check.runtime) == []


# -- the task manager's interrupting cancel and the drain (LC-026, LC-028) --------------------


def test_an_interrupting_cancel_releases_a_pool_thread_blocked_in_a_body_that_ignores_it(
        workers: Workers) -> None:
    worker = workers.open(slots=1, cancel_interrupts=True)
    script = TaskScript(honours_cancellation=False)
    job_id = worker.submit(script)
    worker.dispatch()
    assert worker.cancel(job_id) is True
    worker.settle()
    assert status(worker, job_id) == CANCELLED and script.interrupted
    script.decide(Succeed(1))
    worker.settle()
    assert script.invocations == 0 and status(worker, job_id) == CANCELLED


class _HeldOnceReleased(TaskScript):
    """A body that ignores its token, whose pool thread, once its wait ends, is held until
    the test lets it go: whatever the worker would record only in that thread, a read made
    meanwhile cannot see. It forces the interleaving in which cancel has returned and the
    pool thread has not yet run."""

    def __init__(self) -> None:
        super().__init__(honours_cancellation=False)
        self.hold = threading.Event()

    def wait_for_decision(self, released: Any) -> bool:
        decided = super().wait_for_decision(released)
        self.hold.wait(SAFETY)
        return decided


def _cancelled_at_once(worker: ThreadedRuntime, job_id: str, cancelled: int) -> None:
    """What a caller reads straight after an interrupting cancel returned true (LC-026):
    the job is cancelled, finished now, and counted, in every read of the runtime."""
    job = worker.get(job_id)
    assert job is not None and (job.status, job.finished_at) == (CANCELLED, EPOCH)
    assert [(job.job_id, job.status) for job in worker.list_jobs(RUNNING)] == []
    assert job_id in [job.job_id for job in worker.list_jobs(CANCELLED)]
    health = worker.health()
    assert (health.running, health.cancelled, health.processed) == (0, cancelled, 0)


def test_an_interrupting_cancel_has_cancelled_the_job_when_it_returns(
        workers: Workers) -> None:
    """The pool thread is held once its body is released, so nothing it would record can
    reach a read made straight after cancel returned: the cancel itself must have."""
    worker = workers.open(slots=1, cancel_interrupts=True)
    script = _HeldOnceReleased()
    job_id = worker.submit(script)
    worker.dispatch()
    try:
        assert worker.cancel(job_id) is True
        _cancelled_at_once(worker, job_id, cancelled=1)
        assert script.interrupted
    finally:
        script.hold.set()
    script.decide(Succeed(1))  # the body's later outcome is never recorded (LC-026)
    worker.settle()
    _cancelled_at_once(worker, job_id, cancelled=1)
    assert script.invocations == 0 and worker.cancel(job_id) is False


def test_interrupting_cancels_read_at_once_many_times(workers: Workers) -> None:
    """Without a hold: 200 cancels of a running job, each read the moment cancel returns,
    while its pool thread races to wake up; the slot is free for the next job at once."""
    worker = workers.open(slots=1, cancel_interrupts=True)
    for done in range(1, 201):
        job_id = worker.submit(TaskScript(honours_cancellation=False))
        worker.dispatch()
        assert status(worker, job_id) == RUNNING
        assert worker.cancel(job_id) is True
        _cancelled_at_once(worker, job_id, cancelled=done)
        worker.settle()
        _cancelled_at_once(worker, job_id, cancelled=done)


def test_shutdown_cancels_the_jobs_of_the_store_it_did_not_submit(workers: Workers,
                                                                     clock: VirtualClock) -> None:
    """LC-022 over a store another runtime filled (RS-004 after a restart): a job queued
    there and one running under a worker that is gone end cancelled with its own."""
    store = InMemoryJobStore()
    before = workers.open(store=store, slots=1)
    lost, earlier = before.submit(TaskScript()), before.submit(TaskScript())
    before.dispatch()
    before.halt()  # the process is gone: `lost` stays running, `earlier` queued
    after = workers.open(store=store, slots=1)
    own = after.submit(TaskScript())
    clock.advance(4)
    after.shutdown()
    for job in (lost, earlier, own):
        record = after.get(job)
        assert record is not None
        assert (record.status, record.finished_at) == (CANCELLED, EPOCH + timedelta(seconds=4))
    assert after.health().cancelled == 3


def test_the_poll_thread_ends_a_drain_at_its_deadline(workers: Workers,
                                                      clock: VirtualClock) -> None:
    worker = workers.open(slots=1, shutdown_mode="drain", drain_timeout_seconds=30.0)
    running, queued = TaskScript(honours_cancellation=False), TaskScript()
    first, second = worker.submit(running), worker.submit(queued)
    worker.dispatch()
    worker.shutdown()
    with pytest.raises(RuntimeShutDown):
        worker.submit(TaskScript())
    clock.advance(29)
    worker.dispatch()
    assert (status(worker, first), status(worker, second)) == (RUNNING, QUEUED)
    clock.advance(31)  # past the deadline in one step
    worker.settle()
    jobs = [worker.get(first), worker.get(second)]
    assert [(job.status, job.finished_at) for job in jobs if job is not None] == [
        (CANCELLED, EPOCH + timedelta(seconds=30))] * 2
    assert running.invocations == queued.invocations == 0
