"""The huey example: huey's own consumer threads on the virtual clock, and its report.

Run with `tox -e example-huey` (installs the `huey-example` extra).
"""

from __future__ import annotations

import sys
import time
from contextlib import closing
from pathlib import Path

import pytest

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.adapter_testing import adapter_importable, run_kit
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import Raise, Succeed

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter module must import here and in the Behave child process."""
    adapter_importable(monkeypatch, HERE)


def test_the_robot_suite_passes_but_for_the_listed_deviations(tmp_path: Path) -> None:
    # SR-004's listed cause is found by Robot's retry due between two polls, as by the
    # self-running machine.
    done = run_kit("huey_jobs:HueyBackend", tmp_path, "--suite", "robot",
                   "--expected-failures", str(HERE / "expected-failures.yaml"))
    report = done.report
    assert done.exit_code == 0, report["expectation_problems"]
    # Every lifecycle requirement, LC-031, LC-038 and LC-039 among them, and SR-001 of
    # self-running (SR-002, SR-003 need stuck and redelivery).
    assert report["counts"]["pass"] == 35
    assert sorted(report["expected_failures"]) == ["RT-002", "RT-003", "RT-010", "SR-004"]
    assert "health counters derived" in report["notes"][0]


def test_huey_workers_poll_and_stamp_on_the_virtual_clock() -> None:
    from huey_jobs import HueyRuntime

    clock = VirtualClock(EPOCH)
    with closing(HueyRuntime(RuntimeSettings(max_concurrent=2, max_tasks=None), clock)) as runtime:
        script = TaskScript()
        job_id = runtime.submit(script)
        clock.advance(3600)  # huey's workers poll many times; none may start the body
        runtime.settle()
        assert runtime.get(job_id).status == "queued"  # type: ignore[union-attr]
        runtime.dispatch()
        clock.advance(1.5)
        script.decide(Succeed("done"))
        runtime.settle()
        view = runtime.get(job_id)
        assert view is not None and view.status == "succeeded" and view.result == "done"
        assert (view.started_at - EPOCH).total_seconds() == 3600  # type: ignore[operator]
        assert (view.finished_at - EPOCH).total_seconds() == 3601.5  # type: ignore[operator]
    assert time.time() > EPOCH.timestamp() + 86_400 * 30  # real time again


def test_huey_retries_after_its_delay_times_its_backoff_on_the_virtual_clock() -> None:
    from huey_jobs import HueyRuntime

    clock = VirtualClock(EPOCH)
    with closing(HueyRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None), clock)) as runtime:
        script = TaskScript()
        job_id = runtime.submit(script, RetryPolicy(max_retries=2, retry_delay_ms=1000.0,
                                                    backoff_multiplier=3.0))
        for waited in (1.0, 3.0):  # huey's retry_delay, then retry_delay * retry_backoff
            runtime.dispatch()
            script.decide(Raise("ValueError", "flaky"))
            runtime.settle()
            clock.advance(waited - 0.001)
            runtime.dispatch()  # huey's scheduler keeps the retry: not due yet
            assert runtime.get(job_id).status == "queued"  # type: ignore[union-attr]
            clock.advance(0.001)
        runtime.dispatch()
        view = runtime.get(job_id)
        assert view is not None and view.status == "running"
        assert (view.started_at - EPOCH).total_seconds() == 4  # type: ignore[operator]
        script.decide(Raise("ValueError", "last"))
        runtime.settle()
        view = runtime.get(job_id)
        assert view is not None and (view.status, view.error) == ("failed", "ValueError: last")
        assert (view.retry_count, view.max_retries) == (2, 2)  # type: ignore[attr-defined]
        assert script.invocations == 3


def test_a_non_retryable_error_and_a_cancel_in_backoff_end_the_job_for_good() -> None:
    from huey_jobs import HueyRuntime

    clock = VirtualClock(EPOCH)
    with closing(HueyRuntime(RuntimeSettings(max_concurrent=2, max_tasks=None), clock)) as runtime:
        policy = RetryPolicy(max_retries=3, non_retryable=("Fatal",))
        fatal, backoff = TaskScript(), TaskScript()
        fatal_id, backoff_id = runtime.submit(fatal, policy), runtime.submit(backoff, policy)
        runtime.dispatch()
        fatal.decide(Raise("Fatal", "no"))
        backoff.decide(Raise("ValueError", "flaky"))
        runtime.settle()
        assert runtime.get(fatal_id).status == "failed"  # type: ignore[union-attr]
        assert runtime.get(backoff_id).status == "queued"  # type: ignore[union-attr]
        assert runtime.cancel(backoff_id)  # huey revokes the task waiting in its schedule
        clock.advance(60)
        runtime.dispatch()
        assert runtime.get(backoff_id).status == "cancelled"  # type: ignore[union-attr]
        assert (fatal.invocations, backoff.invocations) == (1, 1)


def test_huey_runs_its_own_clockwork_its_idle_poll_the_profiles_interval(tmp_path: Path) -> None:
    """Self-running: no dispatch; its workers poll once a second and its scheduler brings
    a due retry back: SR-001 in every suite at 50 examples, and SR-004 but for a retry due
    between two polls (Behave's and Robot's case of it, the test below); no job timeout or
    lease."""
    done = run_kit("huey_jobs:HueyBackend", tmp_path, "--area", "self-running",
                   "--examples", "50")
    assert done.exit_code == 1, done.output
    verdicts = {rid: set(body["suites"].values())
                for rid, body in done.report["requirements"].items() if rid.startswith("SR-")}
    assert verdicts == {"SR-001": {"pass"}, "SR-002": {"not claimed"},
                        "SR-003": {"not claimed"}, "SR-004": {"fail", "pass"},
                        "SR-005": {"not claimed"},  # no reaper either
                        "SR-006": {"not claimed"},  # its periodic tasks: huey_periodic.py
                        "SR-007": {"not claimed"},  # no breaker
                        "SR-008": {"not claimed"},  # no reminders
                        "SR-009": {"not claimed"}}  # nor a scheduler here



def test_a_due_retry_waits_for_the_scheduler_tick_and_then_for_a_worker_poll() -> None:
    """SR-004's listed deviation, as the self-running machine found it (and Behave's and
    Robot's retry due between two polls now check it): the retry is due
    at 4.5 s; huey's Scheduler moves it to the queue at its 5 s tick, after the worker's
    5 s poll found the queue empty, so it starts at the worker's next poll, at 6 s, where
    the spec's window closes at 5.5 s."""
    from huey_jobs import HueyBackend

    from jobconform.conformance.harness import Divergence
    from jobconform.conformance.self_running.harness import SelfRunningHarness
    from jobconform.spec import load_registry

    registry = load_registry()
    with closing(SelfRunningHarness(HueyBackend(), registry.profile("canonical"),
                                    registry)) as harness:
        harness.submit("a", RetryPolicy(max_retries=2, retry_delay_ms=3000.0,
                                        backoff_multiplier=1.0))
        for step in (0.5, 1.0):  # it starts by itself at its first poll, at 1 s
            harness.pass_time(step)
        harness.finish("a", Raise("IOError", "boom"))  # at 1.5 s: due again at 4.5 s
        for step in (0.5, 0.5, 1.0):
            harness.pass_time(step)
        with pytest.raises(Divergence, match=r"(?s)SR-004.*read at 2026-01-01T00:00:05.5"):
            harness.pass_time(2.0)
        harness.clock.advance(0.5)
        harness.runtime.settle()
        view = harness.runtime.get(harness.jobs["a"].job_id)
        assert view is not None and view.status == "running"
        assert (view.started_at - EPOCH).total_seconds() == 6  # type: ignore[operator]


# -- periodic tasks (huey_periodic.py) against the scheduling area ----------------------------


def open_periodic(clock: VirtualClock) -> tuple[object, object]:
    from huey_periodic import HueyPeriodicBackend

    from jobconform.conformance.scheduling.harness import HarnessTarget
    from jobconform.reference.scheduling.oracle import MissedFires, SchedulingConfig

    target = HarnessTarget()
    config = SchedulingConfig(MissedFires.ONE)
    return HueyPeriodicBackend().open_scheduling(clock, config, target), target


def test_a_periodic_task_fires_on_its_minute_and_skips_those_one_step_passed() -> None:
    """SC-006's entry: one clock step over several fire times is a stall to huey's Scheduler,
    which tests the current minute only."""
    clock = VirtualClock(EPOCH)
    runtime, target = open_periodic(clock)
    try:
        schedule_id = runtime.create_cron("tick", "*/30 * * * *", "UTC")  # type: ignore[attr-defined]
        clock.advance(1800)  # 00:30: reached on its own minute
        runtime.settle()  # type: ignore[attr-defined]
        clock.advance(5400)  # over 01:00 and 01:30 onto 02:00
        runtime.settle()  # type: ignore[attr-defined]
        fires = [e.scheduled_for.strftime("%H:%M")
                 for e in runtime.history(schedule_id)]  # type: ignore[attr-defined]
        assert fires == ["00:30", "02:00"]
        assert len(target.dispatches) == 2  # type: ignore[attr-defined]
    finally:
        runtime.close()  # type: ignore[attr-defined]


def test_a_restarted_consumer_catches_nothing_up_and_zones_are_refused() -> None:
    """SC-007's and SC-003's entries: no catch-up after downtime; no zone but UTC."""
    from jobconform.backends.scheduling.protocol import ScheduleRejected

    clock = VirtualClock(EPOCH.replace(minute=10))
    runtime, _ = open_periodic(clock)
    try:
        with pytest.raises(ScheduleRejected) as refused:
            runtime.create_cron("x", "0 9 * * *", "Europe/Berlin")  # type: ignore[attr-defined]
        assert refused.value.code == "timezone"
        schedule_id = runtime.create_cron("hourly", "0 * * * *", "UTC")  # type: ignore[attr-defined]
        runtime.crash()  # type: ignore[attr-defined]
        clock.advance(3 * 3600)  # down over 01:00, 02:00 and 03:00
        runtime = runtime.reopen()  # type: ignore[attr-defined]
        assert runtime.history(schedule_id) == []  # type: ignore[attr-defined]
        assert runtime.get(schedule_id).next_fire_at.hour == 4  # type: ignore[attr-defined]
    finally:
        runtime.close()  # type: ignore[attr-defined]
