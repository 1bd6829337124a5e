"""`HeldSchedules`: the schedule bookkeeping the scheduler examples share."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import pytest

from jobconform.backends.scheduling.memory import InMemoryScheduleStore
from jobconform.backends.scheduling.protocol import ScheduleNotFound, ScheduleRejected
from jobconform.backends.scheduling.runtime import StoredSchedule
from jobconform.bridges import HeldSchedules
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
