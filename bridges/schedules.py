"""The schedule bookkeeping of a library that keeps no records of its own.

A real scheduler (huey's periodic tasks, procrastinate's, APScheduler, celery beat) knows
when to fire, but not seed 002's fields of a schedule (its message, pre-check, creation
instant) nor its executions. `HeldSchedules` keeps them in a schedule store for the
adapter, next to the library, and answers the protocol's reads from it: `get`,
`list_schedules` (each schedule's next fire time as the library reckons it, through
`next_fire`), `history` and `trigger`, with the rules every adapter would repeat (an
unknown id, a one-shot creation's run_at or delay, an edit that retimes a one-shot job).
Where the library fires, the adapter calls `run`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from jobconform.backends.scheduling.protocol import (
    ScheduleNotFound,
    ScheduleRejected,
    SchedulingTarget,
)
from jobconform.backends.scheduling.runtime import (
    REJECTION_TEXT,
    ScheduleStore,
    StoredExecution,
    StoredSchedule,
    execute_as_seeded,
    run_at_asked,
)
from jobconform.reference.scheduling.oracle import CRON, ONCE, Trigger


class HeldSchedules:
    """The kit's records of a library's schedules.

    Args:
        store: where the schedules and their executions are kept (an
            `InMemoryScheduleStore` shared by a runtime and its peers).
        target: the harness's target, for the pre-check and the dispatch of a fire.
        now: the virtual clock's reading.
        next_fire: the library's next fire time of a held schedule, or None.
    """

    def __init__(self, store: ScheduleStore, target: SchedulingTarget,
                 now: Callable[[], datetime],
                 next_fire: Callable[[StoredSchedule], datetime | None]) -> None:
        self.store = store
        self.target = target
        self.now = now
        self.next_fire = next_fire

    def held(self, schedule_id: str) -> StoredSchedule:
        """The schedule as stored.

        Raises:
            ScheduleNotFound: no schedule has this id.
        """
        schedule = self.store.get(schedule_id)
        if schedule is None:
            raise ScheduleNotFound(schedule_id)
        return schedule

    def list_schedules(self) -> list[StoredSchedule]:
        """Every schedule in creation order, each with the library's next fire time."""
        return [replace(s, next_fire_at=self.next_fire(s)) for s in self.store.list()]

    def get(self, schedule_id: str) -> StoredSchedule | None:
        return next((s for s in self.list_schedules() if s.schedule_id == schedule_id), None)

    def history(self, schedule_id: str) -> list[StoredExecution]:
        self.held(schedule_id)
        return self.store.history(schedule_id)

    def run(self, schedule: StoredSchedule, scheduled_for: datetime, trigger: Trigger) -> None:
        """One execution, now: the pre-check as the seed asks it, a dispatch, a record."""
        execute_as_seeded(self.store, self.target, schedule, scheduled_for, trigger,
                          self.now())

    def trigger(self, schedule_id: str) -> None:
        """A manual trigger: one execution at once, whatever the timetable (no pre-check)."""
        self.run(self.held(schedule_id), self.now(), Trigger.MANUAL)

    def add_cron(self, message: str, expression: str, timezone: str,
                 pre_check: bool) -> str:
        """Keep a cron schedule the library accepted; its next fire time is the library's."""
        schedule_id = str(uuid.uuid4())
        self.store.add(StoredSchedule(schedule_id, CRON, message, expression, timezone,
                                      pre_check, self.now(), None))
        return schedule_id

    def add_once(self, message: str, run_at: datetime | None, delay_seconds: float | None,
                 pre_check: bool) -> StoredSchedule:
        """Keep a one-shot job at the instant its creation asks for (SC-001).

        Raises:
            ScheduleRejected: not exactly one of an aware run_at and a finite delay >= 0.
        """
        when = run_at_asked(run_at, delay_seconds, self.now())
        if when is None:
            raise ScheduleRejected("schedule", REJECTION_TEXT["schedule"])
        schedule = StoredSchedule(str(uuid.uuid4()), ONCE, message, None, None, pre_check,
                                  self.now(), when)
        self.store.add(schedule)
        return schedule

    def edited(self, schedule_id: str, message: str | None, expression: str | None,
               timezone: str | None) -> tuple[StoredSchedule, bool]:
        """The schedule as an edit leaves it, not yet stored, and whether its timetable
        changed (the library's to check and apply before the adapter stores it).

        Raises:
            ScheduleNotFound: no schedule has this id.
            ScheduleRejected: a one-shot job given an expression or a zone.
        """
        old = self.held(schedule_id)
        retimed = bool(expression or timezone)
        if retimed and old.kind != CRON:
            raise ScheduleRejected("schedule", "a one-shot job has no timetable")
        new = replace(old, message=old.message if message is None else message,
                      expression=expression or old.expression,
                      timezone=timezone or old.timezone)
        return new, retimed
