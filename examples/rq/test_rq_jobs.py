"""The RQ example: RQ's worker and scheduler on the virtual clock over the local Redis.

Run with `tox -e example-rq` (installs the `rq-example` extra; Redis on 127.0.0.1:6379).
"""

from __future__ import annotations

import importlib
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest
import redis

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.adapter_testing import adapter_importable, need_server, run_kit
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import Raise, Succeed

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True)
def redis_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """RQ keeps its queues in Redis (127.0.0.1:6379); CI must have it running."""
    need_server("Redis", "127.0.0.1:6379",
                redis.Redis(host="127.0.0.1", port=6379, socket_timeout=2).ping,
                (redis.RedisError,))
    # The adapter module must import here and in the Behave child process.
    adapter_importable(monkeypatch, HERE)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(EPOCH)


def opened(module: str, name: str, clock: VirtualClock, slots: int) -> Iterator[object]:
    """An adapter's runtime, closed after the test, leaving nothing of it in Redis."""
    runtime_class = getattr(importlib.import_module(module), name)
    with closing(runtime_class(RuntimeSettings(max_concurrent=slots, max_tasks=None),
                               clock)) as runtime:
        yield runtime
    assert time.time() > EPOCH.timestamp() + 86_400 * 30  # real time again
    assert not list(runtime.redis.scan_iter(f"*{runtime.name}*"))


@pytest.fixture
def runtime(clock: VirtualClock) -> Iterator[object]:
    yield from opened("rq_jobs", "RQRuntime", clock, 2)


def test_with_its_deviation_list_the_retry_area_passes(tmp_path: Path) -> None:
    done = run_kit("rq_jobs:RQBackend", tmp_path, "--suite", "robot", "--area", "retry",
                   "--expected-failures", str(HERE / "expected-failures.yaml"))
    assert done.exit_code == 0, (done.output, done.report["expectation_problems"])
    suites = done.verdicts("robot")
    assert suites["RT-003"] == suites["RT-005"] == "expected failure"
    # Under retry-intervals the kit never blames the formula RQ does not have.
    assert suites["RT-002"] == "not claimed"
    passed = {rid for rid, verdict in suites.items() if verdict == "pass"}
    assert passed == {"RT-001", "RT-004", "RT-006", "RT-007", "RT-008"}


def test_rqs_worker_starts_and_stamps_on_the_virtual_clock(runtime, clock) -> None:  # type: ignore[no-untyped-def]
    from rq.job import Job, JobStatus

    script = TaskScript()
    job_id = runtime.submit(script)
    clock.advance(3600)  # RQ's workers are idle until a dispatch point pops the queue
    runtime.settle()
    assert runtime.get(job_id).status == "queued"
    runtime.dispatch()
    clock.advance(1.5)
    script.decide(Succeed("done"))
    runtime.settle()
    view = runtime.get(job_id)
    assert (view.status, view.result) == ("succeeded", "done")
    assert (view.started_at - EPOCH, view.finished_at - EPOCH) == (
        timedelta(hours=1), timedelta(hours=1, seconds=1.5))
    stored = Job.fetch(job_id, connection=runtime.redis)  # RQ's own record, on the same clock
    assert stored.get_status() == JobStatus.FINISHED
    assert stored.started_at.timestamp() == (EPOCH + timedelta(hours=1)).timestamp()


def test_a_retry_waits_in_rqs_schedule_which_counts_whole_seconds(runtime, clock) -> None:  # type: ignore[no-untyped-def]
    from rq.job import Job, JobStatus

    script = TaskScript()
    job_id = runtime.submit(script, RetryPolicy(max_retries=2, retry_delay_ms=1000))
    clock.advance(0.5)
    runtime.dispatch()
    script.decide(Raise("ValueError", "flaky"))
    runtime.settle()
    view = runtime.get(job_id)
    assert (view.status, view.retry_count, view.error) == ("queued", 1, None)
    assert Job.fetch(job_id, connection=runtime.redis).get_status() == JobStatus.SCHEDULED
    # Due at 1.5 s; RQ's ScheduledJobRegistry scores the time in whole seconds (1), and its
    # scheduler compares whole seconds too, so the retry goes back to the queue at 1.0 s.
    clock.advance(0.5)
    runtime.dispatch()
    assert runtime.get(job_id).status == "running"
    script.decide(Raise("ValueError", "flaky again"))
    runtime.settle()
    clock.advance(2)
    runtime.dispatch()
    script.decide(Raise("ValueError", "for good"))
    runtime.settle()
    view = runtime.get(job_id)
    assert (view.status, view.retry_count, view.error) == ("failed", 2, "ValueError: for good")


@pytest.fixture
def stuck_runtime(clock: VirtualClock) -> Iterator[object]:
    yield from opened("rq_stuck", "RQStuckRuntime", clock, 1)


def test_with_its_own_deviation_list_rqs_cleanup_passes_stuck_and_redelivery(
        tmp_path: Path) -> None:
    done = run_kit("rq_redelivery:RQRedeliveryBackend", tmp_path, "--suite", "robot",
                   "--area", "stuck", "--area", "redelivery",
                   "--expected-failures", str(HERE / "expected-failures-abandoned.yaml"))
    assert done.exit_code == 0, (done.output, done.report["expectation_problems"])
    suites = done.verdicts("robot")
    assert {rid for rid, verdict in suites.items() if verdict == "expected failure"} == {
        "ST-001", "ST-002", "ST-003", "LC-003", "LC-010", "RD-001", "RD-002", "RD-003",
        "RD-005", "RD-006"}
    # RD-004: the uncounted re-delivery is RD-001's cause; once the kit adopts RQ's count
    # after that listed deviation, a re-delivered job claimed again reads the count it has.
    assert {rid for rid, verdict in suites.items() if verdict == "pass"} == {"ST-004", "RD-004"}
    assert suites["ST-005"] == "not claimed"  # no health-report claim
    assert suites["RD-007"] == "not claimed"  # no fault plan reaches RQ's Redis writes


def test_rqs_cleanup_fails_a_silent_job_and_its_late_body_overwrites_it(  # type: ignore[no-untyped-def]
        stuck_runtime, clock) -> None:
    from rq.job import Job, JobStatus
    from rq.registry import FailedJobRegistry

    script = TaskScript()
    job_id = stuck_runtime.submit(script)
    stuck_runtime.dispatch()
    clock.advance(30)
    stuck_runtime.heartbeat(job_id)  # RQ's execution entry renewed: silent from 30 s on
    assert stuck_runtime.get(job_id).last_heartbeat == EPOCH + timedelta(seconds=30)
    clock.advance(60)
    assert stuck_runtime.detect_stuck(60) == 1  # 60 s silent: RQ's bound is inclusive
    view = stuck_runtime.get(job_id)
    assert (view.status, view.error) == ("failed", "Heartbeat timeout — job stuck")
    stored = Job.fetch(job_id, connection=stuck_runtime.redis)
    assert stored.get_status() == JobStatus.FAILED
    assert "AbandonedJobError" in stored.latest_result().exc_string
    script.decide(Succeed("late"))  # the worker was alive all along: its body returns
    stuck_runtime.settle()
    assert Job.fetch(job_id, connection=stuck_runtime.redis).get_status() == JobStatus.FINISHED
    assert job_id in FailedJobRegistry(queue=stuck_runtime.queue)
    view = stuck_runtime.get(job_id)
    assert (view.status, view.result) == ("succeeded", "late")  # as RQ now stores it


def test_rqs_cleanup_retries_a_silent_job_with_a_retry_left(stuck_runtime, clock) -> None:  # type: ignore[no-untyped-def]
    from rq.job import Job, JobStatus

    script = TaskScript()
    job_id = stuck_runtime.submit(script, RetryPolicy(max_retries=1, retry_delay_ms=0))
    stuck_runtime.dispatch()
    clock.advance(61)
    assert stuck_runtime.detect_stuck(60) == 0
    view = stuck_runtime.get(job_id)
    assert (view.status, view.retry_count) == ("queued", 1)
    assert Job.fetch(job_id, connection=stuck_runtime.redis).get_status() == JobStatus.QUEUED


@pytest.fixture
def lease_runtime(clock: VirtualClock) -> Iterator[object]:
    yield from opened("rq_redelivery", "RQRedeliveryRuntime", clock, 2)


def test_rqs_cleanup_re_delivers_a_lapsed_job_only_as_a_retry(lease_runtime, clock) -> None:  # type: ignore[no-untyped-def]
    from rq.job import Job, JobStatus

    with_retry, without = TaskScript(), TaskScript()
    retried = lease_runtime.submit(with_retry, RetryPolicy(max_retries=1, retry_delay_ms=0))
    failed = lease_runtime.submit(without)
    lease_runtime.dispatch()
    clock.advance(61)
    assert lease_runtime.expire_leases(60) == {"requeued": 1, "parked": 1}
    view = lease_runtime.get(retried)  # back in the queue, one retry spent, nothing counted
    assert (view.status, view.retry_count, view.redelivery_count) == ("queued", 1, 0)
    assert Job.fetch(retried, connection=lease_runtime.redis).get_status() == JobStatus.QUEUED
    view = lease_runtime.get(failed)  # no retry left: RQ fails it, alerting nobody
    assert (view.status, view.error, view.alerted, view.poisoned) == (
        "failed", "AbandonedJobError", False, False)
    assert lease_runtime.operator_alerts() == ()


def test_the_worker_rqs_cleanup_took_a_job_from_still_writes_it(lease_runtime, clock) -> None:  # type: ignore[no-untyped-def]
    from rq.job import Job, JobStatus

    job_id = lease_runtime.submit(TaskScript(), RetryPolicy(max_retries=1, retry_delay_ms=0))
    assert lease_runtime.stale_owner_write(job_id, "outcome") is False  # no expiry yet
    lease_runtime.dispatch()
    clock.advance(61)
    lease_runtime.expire_leases(60)
    lease_runtime.dispatch()  # the other worker claims it again
    assert Job.fetch(job_id, connection=lease_runtime.redis).get_status() == JobStatus.STARTED
    assert lease_runtime.stale_owner_write(job_id, "outcome") is True
    # The first worker's success, with its old execution, is stored over the running one.
    assert Job.fetch(job_id, connection=lease_runtime.redis).get_status() == JobStatus.FINISHED


def test_rqs_job_timeout_fires_on_the_clock_but_a_waiting_body_runs_on(clock) -> None:  # type: ignore[no-untyped-def]
    # Why job timeouts are not claimed (README): the adapter's TimerDeathPenalty starts a
    # threading.Timer from the body's thread, which ThreadWaits adopts, so the timer fires
    # on the virtual clock; what it fires is PyThreadState_SetAsyncExc, an exception the
    # body's thread raises only at its next bytecode, so a body blocked in a wait is not
    # stopped at its timeout, and the exception lands wherever the thread resumes.
    import threading
    import uuid

    from rq import Queue
    from rq.job import Job, JobStatus
    from rq_jobs import BODIES, ThreadWorker, run_body

    from jobconform.bridges import ThreadWaits, WallClock
    from jobconform.conformance.clock import real_monotonic

    began, released = real_monotonic(), threading.Event()
    body: threading.Thread | None = None
    job_id = f"jobconform-timeout-{uuid.uuid4().hex}"
    BODIES[job_id] = released.wait  # a body busy in a wait, as one waiting on a socket
    with WallClock(clock), ThreadWaits(clock) as waits, redis.Redis(db=6) as connection:
        queue = Queue(job_id, connection=connection)
        try:
            queue.enqueue(run_body, job_id, job_id=job_id, job_timeout=5)
            worker = ThreadWorker([queue], name=job_id, connection=connection)
            job, _ = worker.dequeue_job_and_maintain_ttl(None)  # as the adapter's dispatch
            body = threading.Thread(target=worker.execute_job, args=(job, queue))
            with waits.adopting():
                body.start()
            waits.settle()
            clock.advance(600)  # the 5 s timer fired long ago, on the virtual clock
            waits.settle()
            assert Job.fetch(job_id, connection=connection).get_status() == JobStatus.STARTED
            assert real_monotonic() - began < 5  # so no real-time timer could have fired
            # Where the pending exception lands once the body wakes depends on the thread
            # scheduling (in the body, failing the job, or in RQ's own code after it,
            # leaving it finished), so the test stops at what is certain: no stop at the
            # timeout.
        finally:
            released.set()
            waits.settle()
            if body is not None:
                body.join(timeout=5)  # real-time safety: the woken body ends before cleanup
            queue.delete(delete_jobs=True)
            connection.delete(*connection.scan_iter(f"*{job_id}*"))
            BODIES.clear()
