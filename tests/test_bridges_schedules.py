"""`HeldSchedules`: the schedule bookkeeping the scheduler examples share."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from jobconform.backends.scheduling.memory import InMemoryScheduleStore
from jobconform.backends.scheduling.protocol import ScheduleNotFound, ScheduleRejected
from jobconform.backends.scheduling.runtime import StoredSchedule
from jobconform.bridges import HeldScheduler, HeldSchedules, Schedulers, known_zone
from jobconform.reference.scheduling.oracle import Trigger

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LIBRARY_NEXT = datetime(2026, 1, 1, 1, tzinfo=UTC)


@dataclass
class Target:
    answer: str = "from the hook"
    dispatched: list[tuple[str, datetime, str]] = field(default_factory=list)

    def pre_check(self, schedule_id: str) -> str:
        return self.answer

    def dispatch(self, schedule_id: str, scheduled_for: datetime, message: str) -> None:
        self.dispatched.append((schedule_id, scheduled_for, message))


def library_next(schedule: StoredSchedule) -> datetime | None:
    """A library's reckoning: a cron's next fire is its own, a one-shot job's as stored."""
    return LIBRARY_NEXT if schedule.kind == "cron" else schedule.next_fire_at


def held(target: Target | None = None) -> HeldSchedules:
    return HeldSchedules(InMemoryScheduleStore(), target or Target(), lambda: NOW, library_next)


def test_reads_give_each_schedule_the_librarys_next_fire_in_creation_order() -> None:
    schedules = held()
    cron = schedules.add_cron("tick", "0 * * * *", "UTC", pre_check=False)
    once = schedules.add_once("once", None, 90.0, pre_check=False)
    assert once.next_fire_at == NOW + timedelta(seconds=90) and once.created_at == NOW
    listed = schedules.list_schedules()
    assert [s.schedule_id for s in listed] == [cron, once.schedule_id]
    assert [s.next_fire_at for s in listed] == [LIBRARY_NEXT, once.next_fire_at]
    assert schedules.get(cron) == listed[0]
    assert schedules.get("unknown") is None
    assert schedules.held(cron).next_fire_at is None  # as stored: the library keeps it


@pytest.mark.parametrize(("run_at", "delay"), [
    (None, None), (NOW, 5.0), (datetime(2026, 1, 1), None), (None, -1.0), (None, float("inf")),
])
def test_a_one_shot_job_needs_exactly_one_of_an_aware_instant_and_a_delay(
        run_at: datetime | None, delay: float | None) -> None:
    schedules = held()
    with pytest.raises(ScheduleRejected) as error:
        schedules.add_once("once", run_at, delay, pre_check=False)
    assert error.value.code == "schedule"
    assert schedules.list_schedules() == []


def test_a_fire_and_a_manual_trigger_are_recorded_and_dispatched() -> None:
    target = Target()
    schedules = held(target)
    checked = schedules.add_cron("tick", "0 * * * *", "UTC", pre_check=True)
    schedules.run(schedules.held(checked), LIBRARY_NEXT, Trigger.SCHEDULE)
    schedules.trigger(checked)  # a manual trigger never asks the pre-check
    assert target.dispatched == [(checked, LIBRARY_NEXT, "from the hook"), (checked, NOW, "tick")]
    # Both started now: the history orders them by the instant each was for.
    assert [(e.trigger, e.pre_check) for e in schedules.history(checked)] == [
        ("manual", None), ("schedule", "prompt")]
    with pytest.raises(ScheduleNotFound):
        schedules.trigger("unknown")
    with pytest.raises(ScheduleNotFound):
        schedules.history("unknown")


def test_an_edit_is_checked_and_returned_for_the_library_to_apply() -> None:
    schedules = held()
    cron = schedules.add_cron("tick", "0 * * * *", "UTC", pre_check=False)
    once = schedules.add_once("once", NOW + timedelta(hours=2), None, pre_check=False)
    renamed, retimed = schedules.edited(cron, "tock", None, None)
    assert (renamed.message, renamed.expression, retimed) == ("tock", "0 * * * *", False)
    moved, retimed = schedules.edited(cron, None, "*/5 * * * *", None)
    assert (moved.message, moved.expression, moved.timezone, retimed) == (
        "tick", "*/5 * * * *", "UTC", True)
    assert schedules.held(cron).expression == "0 * * * *"  # nothing stored yet
    with pytest.raises(ScheduleRejected) as error:
        schedules.edited(once.schedule_id, None, None, "Europe/Berlin")
    assert error.value.code == "schedule"
    with pytest.raises(ScheduleNotFound):
        schedules.edited("unknown", "x", None, None)


@dataclass
class Library:
    """A library's side: it records what it was asked, and refuses the expression "never"."""

    calls: list[tuple[str, str]] = field(default_factory=list)
    running: bool = False
    held: HeldSchedules | None = None

    def check(self, expression: str, timezone: str) -> None:
        if expression == "never":
            raise ScheduleRejected("expression", "never fires")
        known_zone(timezone)

    def declare(self, schedule: StoredSchedule) -> None:
        self.calls.append(("declare", str(schedule.expression or schedule.kind)))

    def withdraw(self, schedule: StoredSchedule) -> None:
        self.calls.append(("withdraw", str(schedule.expression or schedule.kind)))

    def start(self) -> None:
        self.running = True

    def stop(self) -> None:
        self.running = False

    def again(self, restart: bool) -> Library:
        library = Library()
        library.held = self.held
        return library


def test_the_writes_ask_the_library_in_order_and_a_refusal_keeps_nothing() -> None:
    library = Library()
    schedules = HeldSchedules(InMemoryScheduleStore(), Target(), lambda: NOW, library_next,
                              library, once_as_held=True)
    with pytest.raises(ScheduleRejected) as error:
        schedules.create_cron("tick", "never", "UTC")
    with pytest.raises(ScheduleRejected) as zone:
        schedules.create_cron("tick", "0 * * * *", "Mars/Olympus")
    assert (error.value.code, zone.value.code, schedules.list_schedules()) == (
        "expression", "timezone", [])
    cron = schedules.create_cron("tick", "0 * * * *", "UTC")
    once = schedules.create_once("once", None, 60.0)
    schedules.edit(cron, expression="*/5 * * * *")
    schedules.edit(cron, message="tock")  # no new timetable: the library is not asked
    schedules.delete(once)
    assert library.calls == [("declare", "0 * * * *"), ("declare", "once"),
                             ("withdraw", "0 * * * *"), ("declare", "*/5 * * * *"),
                             ("withdraw", "once")]
    assert [(s.message, s.expression) for s in schedules.list_schedules()] == [
        ("tock", "*/5 * * * *")]


def test_a_fire_runs_a_held_schedule_once_and_ends_a_one_shot_job() -> None:
    target = Target()
    schedules = HeldSchedules(InMemoryScheduleStore(), target, lambda: NOW, library_next,
                              once_as_held=True)
    once = schedules.add_once("once", None, 60.0, pre_check=False)
    assert schedules.list_schedules()[0].next_fire_at == once.next_fire_at  # as held
    assert schedules.fired(once.schedule_id, once.next_fire_at) == once
    assert schedules.held(once.schedule_id).next_fire_at is None  # done
    assert schedules.fired("deleted meanwhile", NOW) is None
    assert target.dispatched == [(once.schedule_id, once.next_fire_at, "once")]
    with pytest.raises(TypeError):
        schedules.create_once("no library", None, 1.0)


def test_a_peer_closes_itself_and_the_first_closes_every_one_then_the_bridges() -> None:
    stopped: list[str] = []

    @dataclass
    class Bridge:
        name: str

        def stop(self) -> None:
            stopped.append(self.name)

    group: Schedulers[Library] = Schedulers(Bridge("waits"), Bridge("wall"))
    library = Library()
    library.held = held()
    first = HeldScheduler(library, group, lambda: None)
    peer = first.open_peer()
    assert (library.running, peer.library.running, peer.first) == (True, True, False)
    first.set_autonomy(False)
    assert not library.running and not peer.library.running and not group.autonomy
    first.set_autonomy(True)
    peer.close()
    assert (group.running, stopped) == ([library], [])
    restarted = first.reopen()
    first.crash()
    assert group.running == [restarted.library] and restarted.first
    restarted.close()
    assert (group.running, stopped, restarted.library.running) == ([], ["waits", "wall"], False)
