"""The scheduling area: the oracle's fire times through DST changes, the missed-fire
policies, the parameters, the SQL store on SQLite, PostgreSQL and MariaDB (durable across
a new engine, one execution per fire under two threaded schedulers), the machine's reach,
and the clear errors for bad input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import freezegun.api
import pytest
from lifecycle_only import LifecycleOnlyBackend
from sql_databases import DATABASES, database, schedule_store_on_a_new_engine

from jobconform.backends.loading import BackendLoadError, check_backend, load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.scheduling.memory import InMemoryScheduleStore
from jobconform.backends.scheduling.protocol import ScheduleNotFound, ScheduleRejected
from jobconform.backends.scheduling.runtime import StepSchedulingRuntime, first_fire_after
from jobconform.backends.scheduling.threaded import ThreadedSchedulingRuntime
from jobconform.backends.sql import SqlBackend
from jobconform.backends.threaded.sql_backend import ThreadedSqlBackend
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import AdapterError, Divergence, ListedDeviations
from jobconform.conformance.scheduling.gallery import GALLERY
from jobconform.conformance.scheduling.harness import (
    HarnessTarget,
    SchedulingHarness,
    config_for,
)
from jobconform.conformance.scheduling.machine import run_scheduling_machine
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling import commands as sc
from jobconform.reference.scheduling.oracle import (
    CREATED,
    MissedFires,
    PreCheckAnswer,
    SchedulingConfig,
    SchedulingOracle,
    Trigger,
    cron_problem,
    fires_before,
    next_fire,
    rejected,
)
from jobconform.spec import SpecError, load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")
NEW_YORK = "America/New_York"


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


# -- the oracle ------------------------------------------------------------------------------


@pytest.mark.parametrize(("expression", "after", "expected"), [
    # The spring-forward gap: 02:30 does not exist on 2026-03-08; the end of the gap fires.
    ("30 2 * * *", "2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z"),
    ("30 2 * * *", "2026-03-08T07:00:00Z", "2026-03-09T06:30:00Z"),
    # The repeated hour on 2026-11-01: a named hour fires at its first occurrence only.
    ("30 1 * * *", "2026-11-01T04:00:00Z", "2026-11-01T05:30:00Z"),
    ("30 1 * * *", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"),
    # A wildcard hour fires at both occurrences.
    ("0 * * * *", "2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z"),
])
def test_fire_times_through_daylight_saving(expression: str, after: str, expected: str) -> None:
    assert next_fire(expression, NEW_YORK, utc(after)) == utc(expected)


def test_half_hourly_fires_in_the_gap_become_one() -> None:
    fired, following = fires_before("*/30 * * * *", NEW_YORK, utc("2026-03-08T06:30:00Z"),
                                    utc("2026-03-08T08:00:00Z"))
    assert fired == [utc("2026-03-08T06:30:00Z"), utc("2026-03-08T07:00:00Z"),
                     utc("2026-03-08T07:30:00Z")]
    assert following == utc("2026-03-08T08:00:00Z")


def test_cron_problems_in_order() -> None:
    assert cron_problem("61 * * * *", "UTC", EPOCH) == "expression"
    assert cron_problem("0 0 30 2 *", "UTC", EPOCH) == "expression"  # never matches
    assert cron_problem("0 * * * *", "Mars/Olympus_Mons", EPOCH) == "timezone"
    assert cron_problem("nonsense", "Mars/Olympus_Mons", EPOCH) == "expression"
    assert cron_problem("0 * * * *", NEW_YORK, EPOCH) is None


@pytest.mark.parametrize(("policy", "expected"), [
    (MissedFires.ALL, ["2026-01-01T01:00:00Z", "2026-01-01T02:00:00Z"]),
    (MissedFires.ONE, ["2026-01-01T02:00:00Z"]),
    (MissedFires.NONE, []),
])
def test_missed_fires_follow_the_policy(policy: MissedFires, expected: list[str]) -> None:
    oracle = SchedulingOracle(SchedulingConfig(policy))
    assert oracle.create_cron("a", "hourly", "0 * * * *", "UTC", None, EPOCH) == CREATED
    oracle.restart(EPOCH + timedelta(hours=2, minutes=30))
    assert [e.scheduled_for for e in oracle.history["a"]] == [utc(t) for t in expected]
    assert {e.trigger for e in oracle.history["a"]} <= {"catch_up"}
    assert oracle.schedules["a"].next_fire_at == utc("2026-01-01T03:00:00Z")


def test_autonomy_back_on_drops_the_held_fires() -> None:
    oracle = SchedulingOracle(SchedulingConfig())
    oracle.create_cron("a", "poll", "*/30 * * * *", "UTC", None, EPOCH)
    oracle.set_autonomy(False, EPOCH)
    oracle.settle(EPOCH + timedelta(hours=2))
    oracle.set_autonomy(True, EPOCH + timedelta(hours=2))
    oracle.settle(EPOCH + timedelta(hours=2))
    assert [e.scheduled_for for e in oracle.history["a"]] == [utc("2026-01-01T02:00:00Z")]


def test_pre_check_outcomes() -> None:
    oracle = SchedulingOracle(SchedulingConfig())
    for alias, answer in (("s", PreCheckAnswer.SKIP), ("p", PreCheckAnswer.PROMPT),
                          ("e", PreCheckAnswer.ERROR), ("t", PreCheckAnswer.TIMEOUT)):
        oracle.create_cron(alias, "poll", "0 * * * *", "UTC", answer, EPOCH)
    oracle.settle(EPOCH + timedelta(hours=1))
    skipped = oracle.history["s"][0]
    assert (skipped.status, skipped.cost, skipped.message) == ("skipped", 0.0, None)
    assert oracle.history["p"][0].message == "work found by the pre-check"
    assert [oracle.history[a][0].message for a in "et"] == ["poll", "poll"]
    assert oracle.trigger("s", EPOCH + timedelta(hours=1)) == "triggered"
    assert oracle.history["s"][1].pre_check is None  # a manual trigger skips the hook
    assert oracle.pre_checks["s"] == 1


# -- parameters and errors -------------------------------------------------------------------


def test_profile_default_and_bad_values() -> None:
    assert config_for(CANONICAL).missed_fires is MissedFires.ONE
    assert config_for(CANONICAL, missed_fires="all").missed_fires is MissedFires.ALL
    with pytest.raises(ValueError, match="missed_fires must be one of one, all, none"):
        SchedulingConfig("some")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="known: missed_fires"):
        config_for(CANONICAL, catch_up="all")
    with pytest.raises(SpecError, match=r"area_parameters\.scheduling"):
        config_for(REGISTRY.profile("async-jobs"))


def test_a_backend_claiming_scheduling_without_an_opener_is_refused() -> None:
    with pytest.raises(BackendLoadError, match="open_scheduling"):
        check_backend(LifecycleOnlyBackend("scheduling", name="no-opener"), "no-opener")


def test_runtime_rejections_and_unknown_ids_say_what_is_wrong() -> None:
    runtime = MemoryBackend().open_scheduling(VirtualClock(), SchedulingConfig(),
                                              HarnessTarget())
    with pytest.raises(ScheduleRejected, match="schedule: give exactly one of run_at"):
        runtime.create_once("x")
    with pytest.raises(ScheduleRejected, match="timezone: not an IANA time zone") as caught:
        runtime.create_cron("x", "0 * * * *", "Nowhere/Else")
    assert caught.value.code == "timezone"
    with pytest.raises(ScheduleNotFound):
        runtime.trigger("ghost")
    with pytest.raises(ScheduleNotFound):
        runtime.history("ghost")


def test_divergence_names_the_requirement() -> None:
    broken = next(e for e in GALLERY if e.name == "scheduling_fires_early")
    harness = SchedulingHarness(load_backend(broken.target), CANONICAL, REGISTRY)
    harness.run(sc.CreateCron("a", "poll", "*/30 * * * *"))
    with pytest.raises(Divergence) as caught:
        harness.run(AdvanceTime(1799))
    assert "SC-006" in caught.value.requirements
    harness.close()


def test_a_gap_mistake_while_autonomy_is_off_is_blamed_on_the_gap() -> None:
    """A schedule created while autonomy is off, whose next fire time is wrong by the DST
    gap, has fired nothing: the gap's rule (SC-004) is broken, not the switch (SC-010)."""
    broken = next(e for e in GALLERY if e.name == "scheduling_dst_gap_naive")
    harness = SchedulingHarness(load_backend(broken.target), CANONICAL, REGISTRY,
                                start=datetime(2026, 3, 8, 6, 0, tzinfo=UTC))
    harness.run(sc.SetAutonomy(False))
    with pytest.raises(Divergence) as caught:
        harness.run(sc.CreateCron("a", "nightly", "30 2 * * *", "America/New_York"))
    assert caught.value.primary == "SC-004"
    harness.close()


@pytest.mark.parametrize("pre_check", [None, PreCheckAnswer.SKIP])
def test_a_second_fire_of_a_schedule_the_command_did_not_name_is_blamed_on_the_fire(
        pre_check: PreCheckAnswer | None) -> None:
    """A scheduler that fires another cron schedule's minute again when a schedule is
    created breaks "every fire time once" (SC-006), not the creation's rule (SC-001); with
    a pre-check that answers "skip" the second fire dispatches nothing and shows only in
    the pre-check calls, which are classified the same way (huey's periodic example)."""
    broken = next(e for e in GALLERY if e.name == "scheduling_tick_on_change_refires")
    harness = SchedulingHarness(load_backend(broken.target), CANONICAL, REGISTRY)
    harness.run(sc.CreateCron("a", "hourly", "0 * * * *", pre_check=pre_check))
    harness.run(sc.SetAutonomy(True))
    harness.run(AdvanceTime(3600))
    with pytest.raises(Divergence) as caught:
        harness.run(sc.CreateOnce("b", "now", delay_seconds=0.0))
    assert caught.value.primary == "SC-006"
    harness.close()


@pytest.mark.parametrize("pre_check", [None, *PreCheckAnswer])
def test_a_missed_fire_run_as_an_ordinary_fire_is_blamed_on_the_catch_up(
        pre_check: PreCheckAnswer | None) -> None:
    """A missed fire run after a restart under the trigger schedule, not catch_up, breaks
    the catch-up's rule (SC-007) whatever the pre-check answered: the two records of that
    fire differ in their trigger, not in the hook's answer (celery beat's; before the fix
    a pre-check that answered "skip" named SC-012)."""
    broken = next(e for e in GALLERY if e.name == "scheduling_catch_up_as_ordinary_fire")
    harness = SchedulingHarness(load_backend(broken.target), CANONICAL, REGISTRY)
    harness.run(sc.CreateCron("a", "hourly", "0 * * * *", pre_check=pre_check))
    with pytest.raises(Divergence) as caught:
        harness.run(sc.RestartScheduling(7200.0))
    assert caught.value.primary == "SC-007"
    harness.close()


class LateOneShotRuntime(StepSchedulingRuntime):
    """A one-shot job fires at the first step after its time, never at it (huey's worker
    takes a task queued at its eta on its next poll)."""

    def _fire_due(self, now: datetime) -> None:
        for schedule in self._store.due(now):
            fire = schedule.next_fire_at
            if schedule.kind == "cron" or fire is None or fire >= now:
                continue
            if self._store.claim(schedule.schedule_id, fire, None):
                self._execute(schedule, fire, Trigger.SCHEDULE, now)


class LateOneShotBackend(MemoryBackend):
    def open_scheduling(self, clock: Any, config: Any, target: Any) -> StepSchedulingRuntime:
        return LateOneShotRuntime(InMemoryScheduleStore(), clock, config, target)


@pytest.mark.parametrize("timezone", [None, "UTC"])
def test_a_late_one_shot_seen_through_an_edit_is_the_fire_rules(timezone: str | None) -> None:
    """A one-shot job fired late, listed (SC-002) and adopted at its time, is fired by the
    oracle at the next command; an edit there of its message, or one naming a zone (a
    one-shot job's is refused), gives it no new timetable, so the next fire time it still
    shows is the late fire's (SC-002), not an edit that left the old timetable in place
    (SC-017): huey's periodic example, whose worker takes a task at its next poll."""
    harness = SchedulingHarness(LateOneShotBackend(), CANONICAL, REGISTRY,
                                listed=ListedDeviations(tolerated=frozenset({"SC-002"})))
    harness.run(sc.CreateOnce("a", "once", delay_seconds=60.0))
    harness.run(AdvanceTime(60.0))
    harness.run(sc.EditSchedule("a", "edited", None, timezone))
    assert harness.listed.steps == {2: "SC-002", 3: "SC-002"}
    harness.close()


class FirstFireAtCreationRuntime(StepSchedulingRuntime):
    """A timetable whose first fire time may be the creation's instant itself."""

    def _first_fire(self, expression: str, timezone: str, now: datetime) -> datetime:
        return first_fire_after(expression, timezone, now - timedelta(microseconds=1))


class FirstFireAtCreationBackend(MemoryBackend):
    def open_scheduling(self, clock: Any, config: Any, target: Any) -> StepSchedulingRuntime:
        return FirstFireAtCreationRuntime(InMemoryScheduleStore(), clock, config, target)


@pytest.mark.parametrize("autonomy", [True, False])
def test_a_first_fire_at_the_creation_instant_is_the_timetables_mistake(autonomy: bool) -> None:
    """Fired at once (autonomy on) or shown as next (off), a first fire time at the very
    instant of creation or edit breaks one rule either way: SC-003, and SC-017 for an edit."""
    harness = SchedulingHarness(FirstFireAtCreationBackend(), CANONICAL, REGISTRY)
    harness.run(sc.SetAutonomy(autonomy))
    with pytest.raises(Divergence) as created:
        harness.run(sc.CreateCron("a", "poll", "0 * * * *"))
    assert created.value.primary == "SC-003"
    harness.close()
    harness = SchedulingHarness(FirstFireAtCreationBackend(), CANONICAL, REGISTRY,
                                start=EPOCH + timedelta(minutes=10))
    harness.run(sc.SetAutonomy(autonomy))
    harness.run(sc.CreateCron("a", "poll", "0 * * * *"))
    harness.run(AdvanceTime(1200))  # 00:30, no fire of the hourly timetable
    with pytest.raises(Divergence) as edited:
        harness.run(sc.EditSchedule("a", None, "*/30 * * * *", None))
    assert edited.value.primary == "SC-017"
    harness.close()
    # Edited on the instant it has just fired, to the same timetable: it fires again.
    harness = SchedulingHarness(FirstFireAtCreationBackend(), CANONICAL, REGISTRY,
                                start=EPOCH + timedelta(minutes=10))
    harness.run(sc.CreateCron("a", "poll", "0 * * * *"))
    harness.run(AdvanceTime(3000))  # 01:00, its fire
    with pytest.raises(Divergence) as again:
        harness.run(sc.EditSchedule("a", "edited", None, "UTC"))
    assert again.value.primary == "SC-017"
    harness.close()


class FakeClockFirstFireRuntime(FirstFireAtCreationRuntime):
    """The same mistake, its instants freezegun's `FakeDatetime`, as a runtime under the
    wall-clock bridge hands them back (APScheduler's)."""

    def _first_fire(self, expression: str, timezone: str, now: datetime) -> datetime:
        fire = super()._first_fire(expression, timezone, now)
        return freezegun.api.FakeDatetime(fire.year, fire.month, fire.day, fire.hour,
                                          fire.minute, fire.second, fire.microsecond,
                                          fire.tzinfo)


class FakeClockFirstFireBackend(MemoryBackend):
    def open_scheduling(self, clock: Any, config: Any, target: Any) -> StepSchedulingRuntime:
        return FakeClockFirstFireRuntime(InMemoryScheduleStore(), clock, config, target)


def test_a_divergence_shows_freezeguns_instants_as_plain_datetimes() -> None:
    """A reader of a finding knows `datetime.datetime`, not freezegun's `FakeDatetime`:
    neither the backend's answer nor the oracle's, which adopted the backend's instant at
    a listed deviation, shows that type (APScheduler's SC-017 finding did)."""
    harness = SchedulingHarness(FakeClockFirstFireBackend(), CANONICAL, REGISTRY)
    harness.run(sc.SetAutonomy(False))
    with pytest.raises(Divergence) as answered:
        harness.run(sc.CreateCron("a", "poll", "0 * * * *"))
    harness.close()
    harness = SchedulingHarness(FakeClockFirstFireBackend(), CANONICAL, REGISTRY,
                                listed=ListedDeviations(tolerated=frozenset({"SC-003"})))
    harness.run(sc.CreateCron("a", "poll", "0 * * * *"))  # fires at once: listed, adopted
    with pytest.raises(Divergence) as adopted:
        harness.run(sc.EditSchedule("a", "edited", None, "UTC"))
    harness.close()
    assert answered.value.primary == "SC-003"
    assert "actual:   datetime.datetime(2026, 1, 1, 0, 0," in str(answered.value)
    assert adopted.value.primary == "SC-017"
    assert "expected: [ExecutionRecord(scheduled_for=datetime.datetime(2026, 1, 1, 0, 0," in (
        str(adopted.value))
    for divergence in (answered.value, adopted.value):
        assert "FakeDatetime" not in str(divergence)
        assert "FakeDatetime" not in repr(divergence.expected) + repr(divergence.actual)


def test_a_reused_alias_is_a_malformed_command() -> None:
    harness = SchedulingHarness(MemoryBackend(), CANONICAL, REGISTRY)
    harness.run(sc.CreateCron("a", "poll", "0 * * * *"))
    with pytest.raises(ValueError, match="alias 'a' is already used"):
        harness.run(sc.CreateOnce("a", "again", delay_seconds=5))
    harness.close()


def test_a_raising_runtime_is_an_adapter_error() -> None:
    class Raising(MemoryBackend):
        def open_scheduling(self, clock: Any, config: Any, target: Any) -> Any:
            raise RuntimeError("no scheduler today")

    with pytest.raises(AdapterError, match="no scheduler today"):
        SchedulingHarness(Raising(), CANONICAL, REGISTRY)


# -- the machine -----------------------------------------------------------------------------


def test_the_machine_reaches_every_requirement_with_few_examples() -> None:
    run = run_scheduling_machine(MemoryBackend(), CANONICAL, REGISTRY, seed=0, examples=50)
    assert run.divergence is None
    wanted = {r.id for r in REGISTRY.requirements if r.area == "scheduling"}
    assert wanted - run.exercised == set()


# -- the SQL store on every database, and two threaded schedulers -----------------------------


@pytest.mark.parametrize("kind", DATABASES)
def test_sql_schedules_survive_a_new_engine(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        clock = VirtualClock()
        backend = SqlBackend(url)
        runtime = backend.open_scheduling(clock, SchedulingConfig(MissedFires.ALL),
                                          HarnessTarget())
        schedule_id = runtime.create_cron("poll", "0 * * * *", "UTC")
        runtime.set_autonomy(False)
        runtime.trigger(schedule_id)
        runtime.close()
        with schedule_store_on_a_new_engine(url) as store:
            assert store.autonomy() is False
            (schedule,) = store.list()
            assert schedule.next_fire_at == utc("2026-01-01T01:00:00Z")
            assert [e.trigger for e in store.history(schedule_id)] == ["manual"]


@pytest.mark.parametrize("kind", DATABASES)
def test_two_threaded_schedulers_execute_each_fire_once(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        harness = SchedulingHarness(ThreadedSqlBackend(url), CANONICAL, REGISTRY)
        harness.run(sc.CreateCron("a", "poll", "*/30 * * * *"))
        harness.run(sc.CreateCron("b", "tick", "0 * * * *", pre_check=PreCheckAnswer.PROMPT))
        harness.run(sc.StartSecondScheduler())
        assert isinstance(harness.peer, ThreadedSchedulingRuntime)
        for _ in range(12):  # every step both threads wake and race for the same fires
            harness.run(AdvanceTime(1800))
        assert len(harness.oracle.history["a"]) == 12
        assert harness.run(sc.CreateOnce("c", "x")) == rejected("schedule")
        harness.close()
