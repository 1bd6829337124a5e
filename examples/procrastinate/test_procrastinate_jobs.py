"""The procrastinate example: procrastinate's asyncio worker on the virtual clock, and its report.

Run with `tox -e example-procrastinate` (installs the `procrastinate-example` extra).
"""

from __future__ import annotations

import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.adapter_testing import KitRun, adapter_importable, run_kit
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import Raise, Succeed

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter module must import here and in the Behave child process."""
    adapter_importable(monkeypatch, HERE)


def run(tmp_path: Path, *options: str) -> KitRun:
    return run_kit("procrastinate_jobs:ProcrastinateBackend", tmp_path, *options)


def test_every_lifecycle_requirement_passes_with_no_deviation_list(tmp_path: Path) -> None:
    done = run(tmp_path, "--suite", "robot", "--area", "lifecycle")
    verdicts = {requirement: verdict for requirement, verdict in done.verdicts("robot").items()
                if verdict not in ("not claimed", "n/a", "not run")}
    # One retry case is tagged LC-004 too; it fails at procrastinate's delay (RT-002, listed).
    assert {r for r, verdict in verdicts.items() if verdict != "pass"} == {"RT-002"}
    assert sum(r.startswith("LC-") for r in verdicts) == 28  # LC-031, LC-038, LC-039 among them
    assert "health counters derived" in done.report["notes"][0]


def test_the_retry_scenarios_fail_only_as_listed(tmp_path: Path) -> None:
    # RT-003 is named by one retry scenario only: a due retry waits for the worker's next
    # poll (expected-failures.yaml says why).
    done = run(tmp_path, "--suite", "behave", "--area", "retry",
               "--expected-failures", str(HERE / "expected-failures.yaml"))
    assert done.exit_code == 0, done.report["expectation_problems"]
    assert sorted(done.report["expected_failures"]) == ["RT-002", "RT-003", "RT-010"]
    assert done.report["counts"]["pass"] == 6


def test_the_worker_polls_and_stamps_on_the_virtual_clock() -> None:
    from procrastinate_jobs import ProcrastinateRuntime

    clock = VirtualClock(EPOCH)
    with closing(ProcrastinateRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                      clock)) as runtime:
        first, second = TaskScript(), TaskScript()
        first_id, second_id = runtime.submit(first), runtime.submit(second)
        clock.advance(3600)  # the worker polls, beats and fetches; no body may start
        runtime.settle()
        queries = [name for name, _ in runtime.app.connector.queries]  # InMemoryConnector's log
        assert queries.count("update_heartbeat") == 360  # every 10 s, on the virtual clock
        # Its one slot is held by the first body, waiting at the gate: the worker, started
        # by the first submission's defer, fetched it at once and fetches nothing more.
        assert queries.count("fetch_job") == 1
        statuses = [getattr(runtime.get(job), "status", None) for job in (first_id, second_id)]
        assert statuses == ["queued", "queued"]
        runtime.dispatch()
        clock.advance(1.5)
        first.decide(Succeed("done"))
        runtime.settle()
        view = runtime.get(first_id)
        assert view is not None and view.status == "succeeded" and view.result == "done"
        assert (view.started_at - EPOCH).total_seconds() == 3600  # type: ignore[operator]
        assert (view.finished_at - EPOCH).total_seconds() == 3601.5  # type: ignore[operator]
        assert runtime.get(second_id).status == "queued"  # type: ignore[union-attr]  # one slot
    assert time.time() > EPOCH.timestamp() + 86_400 * 30  # real time again


def test_procrastinate_aborts_a_running_body_unless_the_body_ignores_it() -> None:
    from procrastinate_jobs import ProcrastinateRuntime

    clock = VirtualClock(EPOCH)
    with closing(ProcrastinateRuntime(RuntimeSettings(max_concurrent=2, max_tasks=None),
                                      clock)) as runtime:
        honours, ignores = TaskScript(), TaskScript(honours_cancellation=False)
        honours_id, ignores_id = runtime.submit(honours), runtime.submit(ignores)
        runtime.dispatch()
        assert runtime.cancel(honours_id) and runtime.cancel(ignores_id)
        assert runtime.get(honours_id).status == "cancelled"  # type: ignore[union-attr]
        assert runtime.get(ignores_id).status == "running"  # type: ignore[union-attr]
        assert not runtime.cancel(ignores_id)  # already asked
        ignores.decide(Succeed("late"))
        runtime.settle()
        assert runtime.get(ignores_id).status == "cancelled"  # type: ignore[union-attr]


def test_a_body_that_ignores_cancellation_does_not_hang_close() -> None:
    from procrastinate_jobs import ProcrastinateRuntime

    clock = VirtualClock(EPOCH)
    runtime = ProcrastinateRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None), clock)
    job_id = runtime.submit(TaskScript(honours_cancellation=False))
    runtime.dispatch()
    connector = runtime.app.connector  # InMemoryConnector: procrastinate's own tables
    assert runtime.get(job_id).status == "running"  # type: ignore[union-attr]
    assert len(connector.workers) == 1
    # procrastinate's worker waits for its running job as it stops: the body must end, or
    # the loop's close would raise CoroutineNeverFinished after its safety limit.
    runtime.close()
    assert runtime.get(job_id).status == "cancelled"  # type: ignore[union-attr]
    # The worker finished the job in procrastinate's table and unregistered: it stopped,
    # rather than being left behind on a loop nobody runs.
    (job,) = connector.jobs.values()
    assert (job["status"], job["worker_id"]) == ("aborted", None)
    assert connector.workers == {}
    assert [name for name, _ in connector.queries][-2:] == ["finish_job", "unregister_worker"]


def test_procrastinate_retries_when_its_strategy_says_and_its_worker_polls() -> None:
    from procrastinate_jobs import ProcrastinateRuntime

    clock = VirtualClock(EPOCH)
    with closing(ProcrastinateRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                      clock)) as runtime:
        script = TaskScript()
        job_id = runtime.submit(script, RetryPolicy(max_retries=1))  # 1 s, doubling
        runtime.dispatch()
        script.decide(Raise("ValueError", "flaky"))
        runtime.settle()
        view = runtime.get(job_id)
        assert view is not None and (view.status, view.retry_count) == ("queued", 1)  # type: ignore[attr-defined]
        (job,) = runtime.app.connector.jobs.values()  # procrastinate's own table
        # exponential_wait=2: 2 ** (attempts + 1) = 2 s, where the spec waits 1 s (RT-002).
        assert (job["status"], (job["scheduled_at"] - EPOCH).total_seconds()) == ("todo", 2)
        clock.advance(4.999)
        runtime.dispatch()  # due since 2 s, but its worker fetches at its next poll (5 s)
        assert runtime.get(job_id).status == "queued"  # type: ignore[union-attr]
        clock.advance(0.001)
        runtime.dispatch()
        view = runtime.get(job_id)
        assert view is not None and view.status == "running"
        assert (view.started_at - EPOCH).total_seconds() == 5  # type: ignore[operator]
        script.decide(Raise("ValueError", "last"))
        runtime.settle()
        view = runtime.get(job_id)
        assert view is not None and (view.status, view.error) == ("failed", "ValueError: last")
        assert job["status"] == "failed" and script.invocations == 2


def test_a_non_retryable_error_and_a_cancel_in_backoff_end_the_job_for_good() -> None:
    from procrastinate_jobs import ProcrastinateRuntime

    clock = VirtualClock(EPOCH)
    with closing(ProcrastinateRuntime(RuntimeSettings(max_concurrent=2, max_tasks=None),
                                      clock)) as runtime:
        policy = RetryPolicy(max_retries=3, non_retryable=("Fatal",))
        fatal, backoff = TaskScript(), TaskScript()
        fatal_id, backoff_id = runtime.submit(fatal, policy), runtime.submit(backoff, policy)
        runtime.dispatch()
        fatal.decide(Raise("Fatal", "no"))
        backoff.decide(Raise("ValueError", "flaky"))
        runtime.settle()
        assert runtime.get(fatal_id).status == "failed"  # type: ignore[union-attr]
        assert runtime.get(backoff_id).status == "queued"  # type: ignore[union-attr]
        assert runtime.cancel(backoff_id)  # procrastinate cancels the job waiting to retry
        clock.advance(60)
        runtime.dispatch()
        assert runtime.get(backoff_id).status == "cancelled"  # type: ignore[union-attr]
        statuses = [job["status"] for job in runtime.app.connector.jobs.values()]
        assert statuses == ["failed", "cancelled"]
        assert (fatal.invocations, backoff.invocations) == (1, 1)


# -- periodic tasks (procrastinate_periodic.py) against the scheduling area -------------------


def open_periodic(clock: VirtualClock) -> tuple[Any, Any]:
    from procrastinate_periodic import ProcrastinatePeriodicBackend

    from jobconform.conformance.scheduling.harness import HarnessTarget
    from jobconform.reference.scheduling.oracle import MissedFires, SchedulingConfig

    target = HarnessTarget()
    config = SchedulingConfig(MissedFires.ONE)
    return ProcrastinatePeriodicBackend().open_scheduling(clock, config, target), target


def test_a_periodic_task_is_deferred_half_a_second_after_its_fire_time() -> None:
    """SC-006's entry: the deferrer oversleeps every fire time by its MARGIN, 0.5 s."""
    clock = VirtualClock(EPOCH)
    runtime, target = open_periodic(clock)
    try:
        schedule_id = runtime.create_cron("tick", "*/30 * * * *", "UTC")
        clock.advance(1800)  # 00:30:00, its fire time
        runtime.settle()
        assert runtime.history(schedule_id) == []
        clock.advance(0.5)
        runtime.settle()
        [execution] = runtime.history(schedule_id)
        assert execution.scheduled_for == EPOCH.replace(minute=30)
        assert (execution.started_at - execution.scheduled_for).total_seconds() == 0.5
        assert len(target.dispatches) == 1
    finally:
        runtime.close()


def test_a_restart_catches_up_only_a_fire_within_max_delay_and_zones_are_refused() -> None:
    """SC-007's and SC-003's entries: the latest missed fire only if at most 600 s ago."""
    from jobconform.backends.scheduling.protocol import ScheduleRejected

    clock = VirtualClock(EPOCH.replace(minute=20))
    runtime, _ = open_periodic(clock)
    try:
        with pytest.raises(ScheduleRejected) as refused:
            runtime.create_cron("x", "0 9 * * *", "Europe/Berlin")
        assert refused.value.code == "timezone"
        schedule_id = runtime.create_cron("hourly", "0 * * * *", "UTC")
        runtime.crash()
        clock.advance(10500)  # down over 01:00, 02:00 and 03:00, up at 03:15
        runtime = runtime.reopen()
        assert runtime.history(schedule_id) == []  # 03:00 was 15 minutes ago: past max_delay
        runtime.crash()
        clock.advance(3000)  # down over 04:00, up at 04:05: five minutes after it
        runtime = runtime.reopen()
        runs = [(e.trigger, e.scheduled_for.hour) for e in runtime.history(schedule_id)]
        assert runs == [("catch_up", 4)]
    finally:
        runtime.close()


def test_a_new_periodic_task_runs_its_fire_of_the_last_ten_minutes_at_once() -> None:
    """A worker that starts defers each task's latest past fire within max_delay, a task
    declared a moment ago included: created at 00:10, its 00:00 fire runs then."""
    clock = VirtualClock(EPOCH.replace(minute=10))
    runtime, _ = open_periodic(clock)
    try:
        schedule_id = runtime.create_cron("hourly", "0 * * * *", "UTC")
        runs = [(e.trigger, e.scheduled_for.minute) for e in runtime.history(schedule_id)]
        assert runs == [("catch_up", 0)]
    finally:
        runtime.close()


def test_a_worker_whose_heartbeat_stops_has_its_job_rescued_under_the_same_id() -> None:
    from procrastinate_redelivery import ProcrastinateRedeliveryRuntime

    clock = VirtualClock(EPOCH)
    with closing(ProcrastinateRedeliveryRuntime(RuntimeSettings(max_concurrent=2, max_tasks=None),
                                                clock)) as runtime:
        script = TaskScript()
        job_id = runtime.submit(script, RetryPolicy(max_retries=2))
        runtime.dispatch()  # a worker per free slot; one fetches it and begins its body
        (job,) = runtime.app.connector.jobs.values()  # procrastinate's own table
        first_worker = job["worker_id"]
        clock.advance(30)
        runtime.heartbeat(job_id)  # its worker beats: silent from 30 s on
        clock.advance(60)
        assert runtime.expire_leases(60) == {"requeued": 0, "parked": 0}  # exactly the lease
        clock.advance(0.5)
        assert runtime.expire_leases(60) == {"requeued": 1, "parked": 0}  # get_stalled_jobs
        view = runtime.get(job_id)
        assert view is not None and view.status == "queued"
        # retry_job spends an attempt, a retry to its RetryStrategy (RD-001, listed).
        assert (view.redelivery_count, view.retry_count) == (1, 1)  # type: ignore[attr-defined]
        assert (job["status"], job["attempts"]) == ("todo", 1)
        runtime.dispatch()  # a new worker takes the dead one's slot and the job
        assert job["status"] == "doing" and job["worker_id"] != first_worker
        script.decide(Succeed("done"))
        runtime.settle()
        assert runtime.get(job_id).status == "succeeded"  # type: ignore[union-attr]
        assert script.invocations == 1  # the dead worker's body never ran the script


def test_a_rescued_jobs_old_worker_can_still_end_it_and_nothing_is_parked() -> None:
    from procrastinate_redelivery import ProcrastinateRedeliveryRuntime

    clock = VirtualClock(EPOCH)
    with closing(ProcrastinateRedeliveryRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                                clock)) as runtime:
        job_id = runtime.submit(TaskScript())
        assert runtime.stale_owner_write(job_id, "outcome") is False  # never rescued
        for _ in range(5):  # no cap: re-queued however often (RD-002, listed)
            runtime.dispatch()
            clock.advance(61)
            assert runtime.expire_leases(60) == {"requeued": 1, "parked": 0}
        assert runtime.operator_alerts() == []  # nor parks, nor alerts
        runtime.dispatch()
        assert runtime.stale_owner_write(job_id, "heartbeat") is False  # the dead worker's row
        assert runtime.stale_owner_write(job_id, "outcome") is True  # no fencing (RD-006)
        (job,) = runtime.app.connector.jobs.values()
        assert job["status"] == "succeeded"
        assert runtime.get(job_id).status == "succeeded"  # type: ignore[union-attr]


def test_with_its_own_deviation_list_the_redelivery_area_passes(tmp_path: Path) -> None:
    done = run_kit("procrastinate_redelivery:ProcrastinateRedeliveryBackend", tmp_path,
                   "--suite", "behave", "--area", "redelivery",
                   "--expected-failures", str(HERE / "redelivery-expected-failures.yaml"))
    assert done.exit_code == 0, (done.output, done.report["expectation_problems"])
    behave = done.verdicts("behave")
    assert behave["RD-003"] == behave["RD-004"] == behave["RD-005"] == "pass"
    assert {behave[rid] for rid in ("RD-001", "RD-002", "RD-006")} == {"expected failure"}
    assert behave["RD-007"] == "not claimed"
