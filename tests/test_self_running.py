"""The self-running area (SR-001..SR-009): the window oracle, the harness that only lets
time pass, the threaded worker's own clockwork, the reference child's over the pipe, and a
claim without stuck or redelivery checked in part."""

from __future__ import annotations

import json
import sys
from contextlib import closing
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from jobconform.backends.loading import load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.process import ProcessBackend
from jobconform.backends.protocol import Clock, RuntimeSettings
from jobconform.backends.scheduling.protocol import ExecutionEnd, SchedulingConfig
from jobconform.backends.scheduling.threaded import ThreadedSchedulingRuntime
from jobconform.backends.self_running import (
    SELF_RUNNING,
    Clockwork,
    PassesOnSettle,
    WithOwnClockwork,
)
from jobconform.backends.threaded import ThreadedBackend
from jobconform.conformance.applicability import skip_reason, unclaimed
from jobconform.conformance.cli import main
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import AdapterError, Divergence
from jobconform.conformance.partial_claims import (
    SELF_RUNNING_WITHOUT_WATCHES_BACKEND,
    SelfRunningWithoutWatchesBackend,
)
from jobconform.conformance.self_running.gallery import GALLERY
from jobconform.conformance.self_running.harness import SelfRunningHarness
from jobconform.conformance.self_running.machine import run_self_running_machine
from jobconform.conformance.self_running.schedules import EndPlan
from jobconform.reference import commands as cmd
from jobconform.reference import self_running as oracle
from jobconform.reference.backoff import RetryPolicy
from jobconform.spec import Registry


def at(seconds: float) -> object:
    return EPOCH + timedelta(seconds=seconds)


def test_a_stuck_window_is_open_after_the_timeout_and_closes_one_poll_later() -> None:
    window = oracle.stuck_window(EPOCH, 60, 1)
    assert window.forbids(at(60)) and not window.forbids(at(60.5))
    assert not window.requires(at(60.5)) and window.requires(at(61))
    assert window.read_points() == (at(60), at(60.5), at(61))
    assert window.holds(at(61)) and not window.holds(at(60)) and not window.holds(at(61.1))


def test_a_start_may_happen_at_its_due_time_and_is_read_half_a_poll_before() -> None:
    window = oracle.retry_window(EPOCH, RetryPolicy(max_retries=1, retry_delay_ms=5000), 0, 1)
    assert (window.opens, window.closes) == (at(5), at(6))
    assert window.holds(at(5)) and window.forbids(at(4.9))
    assert window.read_points() == (at(4.5), at(5.5), at(6))


def test_a_reap_window_is_open_after_the_ttl_and_closes_one_sweep_interval_later() -> None:
    window = oracle.reap_window(EPOCH, 3600, 300_000)
    assert (window.opens, window.closes) == (at(3600), at(3900))
    assert window.forbids(at(3600)) and not window.forbids(at(3600.5))  # strict, RP-003
    assert window.read_points() == (at(3600), at(3750), at(3900))


def test_clockwork_refuses_a_non_positive_interval() -> None:
    with pytest.raises(ValueError, match="poll_interval_seconds"):
        Clockwork(0, 60, 60)


def _scenarios(harness_of: object) -> None:
    """Every requirement once: a start, a stuck job, a lease lapse, a due retry, an ended
    job removed by the runtime's own reaper, and schedules fired by themselves."""
    open_harness = harness_of  # (job_timeout, lease) -> SelfRunningHarness
    with closing(open_harness(30.0, 6000.0)) as stuck:  # type: ignore[operator]
        stuck.submit("a")
        stuck.pass_time(10)
        stuck.heartbeat("a")
        stuck.pass_through_windows()
        assert stuck.view_of("a").status == "failed"
        assert stuck.view_of("a").finished_at == at(41)
    with closing(open_harness(6000.0, 20.0)) as lease:  # type: ignore[operator]
        lease.submit("a")
        lease.pass_time(23)
        assert (lease.view_of("a").status, lease.view_of("a").redelivery_count) == (
            "running", 1)
    with closing(open_harness(6000.0, 6000.0)) as retry:  # type: ignore[operator]
        retry.submit("a", RetryPolicy(max_retries=2, retry_delay_ms=5000))
        retry.pass_time(1)
        retry.finish("a", cmd.Raise("IOError", "boom"))
        retry.pass_through_windows()
        retry.pass_time(0.5)  # the next retry comes due between two polls
        retry.finish("a", cmd.Raise("IOError", "boom"))
        retry.pass_through_windows()
        retry.finish("a", cmd.Succeed(1))
        assert retry.view_of("a").status == "succeeded"
        assert retry.exercised == {"SR-001", "SR-004"}
    with closing(open_harness(6000.0, 6000.0)) as reaper:  # type: ignore[operator]
        if reaper.watches_reaper:
            reaper.submit("a")
            reaper.pass_time(1)
            reaper.finish("a", cmd.Succeed(1))
            reaper.pass_time(3600)  # finished_at + ttl: still held (RP-003 is strict)
            assert reaper.view_of("a").status == "succeeded"
            reaper.pass_through_windows()
            assert reaper.status_of("a") == "removed"
            assert "SR-005" in reaper.exercised
    with closing(open_harness(6000.0, 6000.0)) as fires:  # type: ignore[operator]
        if fires.schedules.claimed:
            fires.schedule_once("once", 30)
            fires.schedule_cron("cron", "*/2 * * * *")
            fires.pass_time(29)
            assert fires.schedules.fired("once") == 0
            fires.pass_time(250)
            assert (fires.schedules.check_history("once"),
                    fires.schedules.check_history("cron")) == (1, 2)
            assert fires.exercised == {"SR-006"}
    with closing(open_harness(6000.0, 6000.0)) as ends:  # type: ignore[operator]
        if ends.schedules.watches_ends:
            ends.schedule_once("once", 30, EndPlan(5.5, "succeeded"))
            ends.schedule_cron("cron", "*/2 * * * *", ends=EndPlan(10, "failed", None))
            ends.pass_time(35)  # the one-shot execution ends at 35.5 at the earliest
            assert ends.schedules.check_ends("once") == 0
            ends.pass_time(250)
            assert (ends.schedules.check_ends("once"),
                    ends.schedules.check_ends("cron")) == (1, 2)
            assert ends.exercised == {"SR-006", "SR-009"}
    with closing(open_harness(6000.0, 6000.0)) as sweeps:  # type: ignore[operator]
        if sweeps.backstop.claimed:
            sweeps.pass_time(10)
            sweeps.trip_breaker_with_lost_drain("t", ("w1", "w2"))
            sweeps.pass_time(49)  # one tick before the first boundary: still queued
            breaker = sweeps.backstop.breaker
            assert breaker is not None and tuple(breaker.queued("t")) == ("w1", "w2")
            sweeps.pass_time(1)  # the boundary, 60 s after the opening: swept
            assert tuple(breaker.failed_work("t")) == ("w1", "w2")
            assert sweeps.exercised == {"SR-007"}
    with closing(open_harness(6000.0, 6000.0)) as reminds:  # type: ignore[operator]
        if reminds.reminders.claimed:
            reminds.remind("r1", 60)
            reminds.remind("r2", 90, failures=1)
            reminds.pass_time(59)  # one tick before r1's due time: not dispatched
            assert reminds.reminders.delivered("r1") == 0
            reminds.pass_time(1)
            assert (reminds.reminders.delivered("r1"), reminds.reminders.check("r1")) == (
                1, "fired")
            reminds.pass_time(30)  # r2's dispatch fails: due again 60 s later (RM-009)
            assert reminds.reminders.check("r2") == "pending"
            reminds.pass_time(60)
            assert (reminds.reminders.delivered("r2"), reminds.reminders.check("r2")) == (
                2, "fired")
            assert reminds.exercised == {"SR-008"}


@pytest.mark.parametrize("name", ["threaded", "threaded+sql"])
def test_the_threaded_backends_run_their_own_clockwork(name: str, registry: Registry) -> None:
    backend = load_backend(name)
    assert SELF_RUNNING in backend.capabilities
    profile = registry.profile("canonical")
    _scenarios(lambda timeout, lease: SelfRunningHarness(
        backend, profile, registry, job_timeout_seconds=timeout, lease_seconds=lease))


def test_a_step_runtime_runs_self_running_with_passes_on_settle(registry: Registry) -> None:
    backend = WithOwnClockwork(MemoryBackend())
    profile = registry.profile("canonical")
    _scenarios(lambda timeout, lease: SelfRunningHarness(
        backend, profile, registry, job_timeout_seconds=timeout,  # type: ignore[arg-type]
        lease_seconds=lease))


class EarlyReaperBackend(WithOwnClockwork):
    """A step runtime whose own reaper counts a TTL one sweep interval short: it removes
    an ended job before finished_at + ttl."""

    def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                          clockwork: Clockwork) -> PassesOnSettle:
        runtime = MemoryBackend().open(settings, clock)
        runtime.start_reaper(settings.reaper_ttl_seconds
                             - settings.reaper_sweep_interval_ms / 1000)
        return PassesOnSettle(runtime, clock, clockwork)


def test_a_reaper_that_removes_before_the_ttl_is_caught_at_sr_005(registry: Registry) -> None:
    with closing(SelfRunningHarness(EarlyReaperBackend(MemoryBackend()),  # type: ignore[arg-type]
                                    registry.profile("canonical"), registry)) as harness:
        harness.submit("a")
        harness.pass_time(1)
        harness.finish("a", cmd.Succeed(1))
        with pytest.raises(Divergence) as caught:
            harness.pass_time(3600)
        assert caught.value.primary == "SR-005"


def test_memory_and_sql_keep_the_commanded_mode() -> None:
    assert SELF_RUNNING not in load_backend("memory").capabilities
    assert SELF_RUNNING not in load_backend("sql").capabilities


def test_the_reference_child_carries_the_claim_over_the_pipe(registry: Registry) -> None:
    backend = ProcessBackend([sys.executable, "-m", "jobconform.backends.process.child",
                              "--self-running"])
    assert SELF_RUNNING in backend.capabilities
    with closing(SelfRunningHarness(backend, registry.profile("canonical"), registry,
                                    job_timeout_seconds=30.0)) as harness:
        harness.submit("a")
        harness.pass_through_windows()  # started
        harness.pass_through_windows()  # failed as stuck, in its window
        harness.pass_through_windows()  # removed by its own reaper, in its window
        assert harness.status_of("a") == "removed"
        harness.schedule_once("once", 5)  # the child's step scheduler fires on its settle
        harness.pass_through_windows()
        assert harness.schedules.check_history("once") == 1
        # ... and polls the kit's target for the ends of what it dispatched (SR-009)
        harness.schedule_once("ends", 2, EndPlan(3.5, "cancelled"))
        harness.pass_time(8)
        assert harness.schedules.check_ends("ends") == 1
        harness.trip_breaker_with_lost_drain("t", ("w",))  # its breaker sweeps on settle
        harness.pass_time(60)
        harness.remind("r", 60)  # its step reminders fire on its settle too
        harness.pass_time(60)
        assert harness.reminders.check("r") == "fired"
        assert harness.exercised == {"SR-001", "SR-002", "SR-005", "SR-006", "SR-007",
                                     "SR-008", "SR-009"}


@pytest.mark.parametrize("entry", GALLERY, ids=[entry.name for entry in GALLERY])
def test_each_broken_clockwork_is_caught_at_its_requirement(entry: object,
                                                            registry: Registry) -> None:
    backend = load_backend(entry.target)  # type: ignore[attr-defined]
    profile = registry.profile("canonical")
    with pytest.raises(Divergence) as caught:
        _scenarios(lambda timeout, lease: SelfRunningHarness(
            backend, profile, registry, job_timeout_seconds=timeout, lease_seconds=lease))
    assert caught.value.primary == entry.catches  # type: ignore[attr-defined]


# -- applicability by claim: SR-002 with stuck, SR-003 with redelivery, SR-004 with retry --

def test_each_pass_of_the_area_needs_the_claim_of_the_area_it_times(registry: Registry) -> None:
    needs = {r.id: set(r.needs) for r in registry.requirements if r.area == SELF_RUNNING}
    assert needs == {"SR-001": set(), "SR-002": {"stuck"}, "SR-003": {"redelivery"},
                     "SR-004": {"retry"}, "SR-005": {"reaper"}, "SR-006": {"scheduling"},
                     "SR-007": {"breaker-seams"}, "SR-008": {"reminders"},
                     "SR-009": {"scheduling", "scheduling-ends"}}
    backend = SelfRunningWithoutWatchesBackend()
    assert unclaimed(registry.requirement("SR-002"), backend.capabilities) == (
        "does not claim stuck")
    assert skip_reason(registry, backend, registry.profile("canonical"), ["SR-003"]) == (
        "backend self-running-without-watches does not claim redelivery (SR-003)")
    for rid in ("SR-001", "SR-004"):
        assert unclaimed(registry.requirement(rid), backend.capabilities) is None


def test_without_stuck_or_redelivery_a_silent_job_stays_running(registry: Registry) -> None:
    """The harness watches no silence the backend does not claim a pass for: a job left
    silent for far longer than the job timeout it was given is running, and that passes."""
    with closing(SelfRunningHarness(SelfRunningWithoutWatchesBackend(),
                                    registry.profile("canonical"), registry,
                                    job_timeout_seconds=5.0, lease_seconds=5.0)) as harness:
        harness.submit("a")
        harness.pass_time(60)
        assert harness.view_of("a").status == "running"
        with pytest.raises(AdapterError, match="heartbeat"):
            harness.heartbeat("a")  # the worker refuses one: no check may send it


def test_the_same_worker_claiming_stuck_is_caught_at_sr_002(registry: Registry) -> None:
    class ClaimingStuck(SelfRunningWithoutWatchesBackend):
        capabilities = SelfRunningWithoutWatchesBackend.capabilities | {"stuck"}

    with closing(SelfRunningHarness(ClaimingStuck(), registry.profile("canonical"), registry,
                                    job_timeout_seconds=5.0)) as harness:
        harness.submit("a")
        with pytest.raises(Divergence) as caught:
            harness.pass_time(10)
        assert caught.value.primary == "SR-002"


def test_the_machine_draws_only_what_the_backend_claims(registry: Registry) -> None:
    # Its worker raises on a heartbeat, and a silent job would be checked running: 30
    # examples without a divergence means no heartbeat and no watched silence was drawn.
    run = run_self_running_machine(SelfRunningWithoutWatchesBackend(),
                                   registry.profile("canonical"), registry, examples=30)
    assert run.divergence is None
    assert run.exercised == {"SR-001", "SR-004"}


def test_a_partial_self_running_claim_is_checked_in_part_in_every_suite(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--backend", SELF_RUNNING_WITHOUT_WATCHES_BACKEND,
                                       "--area", SELF_RUNNING, "--examples", "20",
                                       "--report-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    verdicts = {rid: set(body["suites"].values())
                for rid, body in report["requirements"].items() if rid.startswith("SR-")}
    assert verdicts == {"SR-001": {"pass"}, "SR-002": {"not claimed"},
                        "SR-003": {"not claimed"}, "SR-004": {"pass"},
                        "SR-005": {"not claimed"}, "SR-006": {"not claimed"},
                        "SR-007": {"not claimed"}, "SR-008": {"not claimed"},
                        "SR-009": {"not claimed"}}


# -- SR-006: schedules fired by the runtime itself -------------------------------------------

def test_a_fire_window_opens_at_the_fire_time_and_closes_one_poll_later() -> None:
    window = oracle.fire_window(at(30), 1.0)  # type: ignore[arg-type]
    assert (window.forbids(at(29.9)), window.holds(at(30)), window.requires(at(31))) == (  # type: ignore[arg-type]
        True, True, True)
    assert window.read_points() == (at(29.5), at(30.5), at(31))


def _watch_of(registry: Registry) -> SelfRunningHarness:
    return SelfRunningHarness(load_backend("threaded"), registry.profile("canonical"),
                              registry)


def test_a_one_shot_job_dispatched_twice_is_caught_at_sr_006(registry: Registry) -> None:
    with closing(_watch_of(registry)) as harness:
        harness.schedule_once("once", 5)
        harness.pass_time(5)
        schedule_id = harness.schedules.schedules["once"].schedule_id
        harness.schedules.recorder.dispatch(schedule_id, at(5), "again")  # type: ignore[arg-type]
        with pytest.raises(Divergence) as caught:
            harness.read()
        assert caught.value.requirements[:2] == ("SR-006", "SC-002")


def test_a_fire_dispatched_for_another_time_is_caught_at_sr_006(registry: Registry) -> None:
    with closing(_watch_of(registry)) as harness:
        harness.schedule_cron("cron", "*/2 * * * *")
        schedule_id = harness.schedules.schedules["cron"].schedule_id
        harness.schedules.recorder.dispatch(schedule_id, at(240), "ahead")  # type: ignore[arg-type]
        with pytest.raises(Divergence) as caught:
            harness.read()
        assert caught.value.primary == "SR-006"
        assert "scheduled_for 2026-01-01T00:02:00+00:00" in str(caught.value)


def test_the_watch_reads_nothing_of_the_scheduler_while_time_passes(registry: Registry) -> None:
    """The scheduling area's checks read the schedules after every command; here nothing
    is read while time passes, which is what lets a scheduler fired by reads be caught."""
    harness = _watch_of(registry)
    reads: list[str] = []
    try:
        harness.schedule_cron("cron", "*/2 * * * *")
        scheduler = harness.schedules.scheduler
        for name in ("get", "list_schedules", "history"):
            original = getattr(scheduler, name)
            setattr(scheduler, name, lambda *args, _name=name, _original=original: (
                reads.append(_name), _original(*args))[1])
        harness.pass_time(600)
        assert reads == []
        assert harness.schedules.check_history("cron") == 5
        assert reads == ["history"]
    finally:
        harness.close()


# -- SR-009: the ends of dispatched executions, learned by the scheduler itself ---------------

def test_an_end_window_opens_at_the_end_and_closes_one_poll_later() -> None:
    window = oracle.end_window(at(40), 1.0)  # type: ignore[arg-type]
    assert (window.forbids(at(39.9)), window.holds(at(40)), window.holds(at(41)),  # type: ignore[arg-type]
            window.requires(at(41))) == (True, True, True, True)  # type: ignore[arg-type]
    assert window.read_points() == (at(39.5), at(40.5), at(41))


class _Ends:
    """A scheduling target whose executions end 2.5 s after their fire, succeeded at 0.5."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.asked: list[float] = []

    def pre_check(self, schedule_id: str) -> str:
        raise AssertionError("no pre-check here")

    def dispatch(self, schedule_id: str, scheduled_for: object, message: str) -> None:
        pass

    def execution_end(self, schedule_id: str, scheduled_for: object) -> ExecutionEnd | None:
        now = self.clock.now()
        self.asked.append((now - EPOCH).total_seconds())
        ended = now >= scheduled_for + timedelta(seconds=2.5)  # type: ignore[operator]
        return ExecutionEnd("succeeded", 0.5) if ended else None


def test_a_step_scheduler_polls_for_ends_only_once_told_and_then_on_its_boundaries() -> None:
    clock = VirtualClock(EPOCH)
    target = _Ends(clock)
    scheduler = MemoryBackend().open_scheduling(clock, SchedulingConfig(), target)
    schedule_id = scheduler.create_once("report", delay_seconds=1)
    clock.advance(1)
    scheduler.settle()  # fired; not told to poll: the commanded mode never asks
    clock.advance(5)
    scheduler.settle()
    assert target.asked == []
    with pytest.raises(ValueError):
        scheduler.start_end_polls(0)
    scheduler.start_end_polls(2)  # boundaries at 6, 8, 10, ... from the call
    scheduler.settle()  # at 6: the execution of 1 ended at 3.5
    assert target.asked == [6.0]
    assert [e.outcome for e in scheduler.history(schedule_id)] == ["succeeded"]
    clock.advance(2)
    scheduler.settle()  # nothing without an end is left to ask about
    assert target.asked == [6.0]


class _InfersFailureScheduler(ThreadedSchedulingRuntime):
    """It marks each execution failed as soon as it is dispatched (a dropped call taken
    for a failure), before the execution has ended."""

    def _execute(self, schedule: Any, scheduled_for: Any, trigger: Any, now: Any) -> None:
        super()._execute(schedule, scheduled_for, trigger, now)
        self.end_execution(schedule.schedule_id, scheduled_for, "failed", None)


class _InfersFailureBackend(ThreadedBackend):
    def open_scheduling(self, clock: Clock, config: SchedulingConfig,
                        target: Any) -> ThreadedSchedulingRuntime:
        return _InfersFailureScheduler(self.new_schedule_store(), clock, config, target)


def test_an_end_recorded_before_the_execution_ended_is_caught_at_sr_009(
        registry: Registry) -> None:
    with closing(SelfRunningHarness(_InfersFailureBackend(), registry.profile("canonical"),
                                    registry)) as harness:
        harness.schedule_once("report", 5, EndPlan(3, "succeeded"))
        with pytest.raises(Divergence) as caught:
            harness.pass_time(20)
        assert caught.value.primary == "SR-009"
