"""The schedule bookkeeping of a library that keeps no records of its own.

A real scheduler (huey's periodic tasks, procrastinate's, APScheduler, celery beat) knows
when to fire, but not seed 002's fields of a schedule (its message, pre-check, creation
instant) nor its executions. `HeldSchedules` keeps them in a schedule store for the
adapter, next to the library, and answers the protocol's reads from it: `get`,
`list_schedules` (each schedule's next fire time as the library reckons it, through
`next_fire`), `history` and `trigger`, with the rules every adapter would repeat (an
unknown id, a one-shot creation's run_at or delay, an edit that retimes a one-shot job).
Where the library fires, the adapter calls `run`, or `fired` with the schedule's id.

Given the library's side as a `ScheduleLibrary` (check a timetable, declare a schedule,
withdraw one), it also answers the protocol's writes in the order every adapter would
repeat them: `create_cron`, `create_once`, `edit` and `delete`.

`Schedulers` is the other half every adapter repeats: the scheduler runtimes one
`open_scheduling` made (the first, its peers, its restarts), their autonomy, a crash, and
the close that stops every one and then the bridges.
"""

from __future__ import annotations

import uuid
import zoneinfo
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime
from typing import Generic, Protocol, Self, TypeVar

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


def known_zone(timezone: str) -> None:
    """Refuse a time zone that is not an IANA name this machine's zone data knows.

    Raises:
        ScheduleRejected: code timezone, with the spec's text.
    """
    if timezone not in zoneinfo.available_timezones():
        raise ScheduleRejected("timezone", REJECTION_TEXT["timezone"])


class ScheduleLibrary(Protocol):
    """The library's side of the writes `HeldSchedules` answers for an adapter."""

    def check(self, expression: str, timezone: str) -> None:
        """Refuse a cron timetable the library cannot run, before anything is kept.

        Raises:
            ScheduleRejected: the library cannot read the expression or the zone.
        """

    def declare(self, schedule: StoredSchedule) -> None:
        """Hand the library a schedule to fire: a new one, or a cron's new timetable."""

    def withdraw(self, schedule: StoredSchedule) -> None:
        """Take a schedule, as it is held, away from the library."""


class HeldSchedules:
    """The kit's records of a library's schedules.

    Args:
        store: where the schedules and their executions are kept (an
            `InMemoryScheduleStore` shared by a runtime and its peers).
        target: the harness's target, for the pre-check and the dispatch of a fire.
        now: the virtual clock's reading.
        next_fire: the library's next fire time of a held schedule, or None.
        library: the library's side of the writes, for `create_cron`, `create_once`,
            `edit` and `delete` (an adapter that applies the writes itself gives none).
        once_as_held: a one-shot job's next fire time is the one held (`fired` clears
            it), and `next_fire` is asked of cron schedules only.
    """

    def __init__(self, store: ScheduleStore, target: SchedulingTarget,
                 now: Callable[[], datetime],
                 next_fire: Callable[[StoredSchedule], datetime | None],
                 library: ScheduleLibrary | None = None, once_as_held: bool = False) -> None:
        self.store = store
        self.target = target
        self.now = now
        self.next_fire = next_fire
        self.library = library
        self.once_as_held = once_as_held

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
        return [s if self.once_as_held and s.kind == ONCE else
                replace(s, next_fire_at=self.next_fire(s)) for s in self.store.list()]

    def get(self, schedule_id: str) -> StoredSchedule | None:
        return next((s for s in self.list_schedules() if s.schedule_id == schedule_id), None)

    def history(self, schedule_id: str) -> list[StoredExecution]:
        self.held(schedule_id)
        return self.store.history(schedule_id)

    def run(self, schedule: StoredSchedule, scheduled_for: datetime, trigger: Trigger) -> None:
        """One execution, now: the pre-check as the seed asks it, a dispatch, a record."""
        execute_as_seeded(self.store, self.target, schedule, scheduled_for, trigger,
                          self.now())

    def fired(self, schedule_id: str, scheduled_for: datetime) -> StoredSchedule | None:
        """The library fired a schedule: one execution if it is still held (a delete may
        come between the library's fire and its run), after which a one-shot job is done
        (no next fire). Returns the schedule as it was, or None when it is gone."""
        schedule = self.store.get(schedule_id)
        if schedule is None:
            return None
        self.run(schedule, scheduled_for, Trigger.SCHEDULE)
        if schedule.kind == ONCE:
            self.store.claim(schedule_id, schedule.next_fire_at, None)
        return schedule

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

    def writing(self) -> ScheduleLibrary:
        if self.library is None:
            raise TypeError("HeldSchedules was made without a library: it cannot write")
        return self.library

    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        """The protocol's create_cron: the library's check first (a refusal keeps no
        record), then the record, then the library's declaration."""
        self.writing().check(expression, timezone)
        schedule_id = self.add_cron(message, expression, timezone, pre_check)
        self.writing().declare(self.held(schedule_id))
        return schedule_id

    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        """The protocol's create_once: the record (SC-001's checks), then the declaration."""
        once = self.add_once(message, run_at, delay_seconds, pre_check)
        self.writing().declare(once)
        return once.schedule_id

    def edit(self, schedule_id: str, message: str | None = None,
             expression: str | None = None, timezone: str | None = None) -> None:
        """The protocol's edit: a new timetable is checked by the library, the old one
        withdrawn and the new one declared, then the edit is stored."""
        new, retimed = self.edited(schedule_id, message, expression, timezone)
        if retimed:
            self.writing().check(str(new.expression), str(new.timezone))
            self.writing().withdraw(self.held(schedule_id))
            self.writing().declare(new)
        self.store.replace(new)

    def delete(self, schedule_id: str) -> None:
        """The protocol's delete: withdrawn from the library, then forgotten.

        Raises:
            ScheduleNotFound: no schedule has this id.
        """
        self.writing().withdraw(self.held(schedule_id))
        self.store.remove(schedule_id)


class Machinery(Protocol):
    """A scheduler runtime's own firing machinery: its beat, worker or consumer."""

    def start(self) -> None:
        """Start it, as the group's autonomy allows (a no-op when already running)."""

    def stop(self) -> None:
        """Stop it, and return once it has stopped."""


class Stoppable(Protocol):
    def stop(self) -> object: ...


M = TypeVar("M", bound=Machinery)


class HeldMachinery(Machinery, Protocol):
    """A library's side of a `HeldScheduler`: its machinery, its records, its restarts."""

    held: HeldSchedules

    def again(self, restart: bool) -> Self:
        """The library's side of another runtime over the same records: this one's restart
        (`restart`, its own files and names again) or a peer (new ones)."""


L = TypeVar("L", bound=HeldMachinery)


class Schedulers(Generic[M]):
    """The scheduler runtimes one `open_scheduling` made, over the same records.

    Args:
        bridges: what the runtimes run on (a `ThreadWaits`, a `WallClock`), stopped in
            this order after every runtime, at the close of the one that was opened first.
    """

    def __init__(self, *bridges: Stoppable) -> None:
        self.running: list[M] = []
        self.autonomy = True
        self.bridges = bridges

    def join(self, scheduler: M) -> None:
        """A new runtime (the first, a peer or a restart): kept, and its machinery started."""
        self.running.append(scheduler)
        scheduler.start()

    def set_autonomy(self, enabled: bool) -> None:
        """The protocol's set_autonomy: off stops every runtime's machinery, on starts it."""
        self.autonomy = enabled
        for scheduler in list(self.running):
            if enabled:
                scheduler.start()
            else:
                scheduler.stop()

    def crash(self, scheduler: M) -> None:
        """The protocol's crash: its machinery stops, and it is no longer running."""
        scheduler.stop()
        if scheduler in self.running:
            self.running.remove(scheduler)

    def close(self, scheduler: M, everything: bool) -> None:
        """The protocol's close: a peer stops only itself; the first runtime (or its
        restart: `everything`) stops every one, then the bridges."""
        for running in list(self.running) if everything else [scheduler]:
            self.crash(running)
        for bridge in self.bridges if everything else ():
            bridge.stop()


class HeldScheduler(Generic[L]):
    """A whole scheduling runtime over a library's side: the protocol's reads and writes
    are the library side's `held`, its autonomy, crash and close `group`'s, and the
    library side joins the group as its machinery.

    Args:
        library: this runtime's side of the library (`HeldMachinery`).
        group: the runtimes of this open.
        settle: the bridges' settle.
        first: the runtime the open made (its restarts are first too): its close stops
            every runtime of the group, then the bridges; a peer's only itself.
    """

    def __init__(self, library: L, group: Schedulers[L], settle: Callable[[], object],
                 first: bool = True) -> None:
        self.library, self.group, self.settle, self.first = library, group, settle, first
        held = library.held
        self.get, self.list_schedules, self.history = held.get, held.list_schedules, held.history
        self.create_cron, self.create_once = held.create_cron, held.create_once
        self.edit, self.delete, self.trigger = held.edit, held.delete, held.trigger
        self.set_autonomy = group.set_autonomy
        group.join(library)

    def open_peer(self) -> HeldScheduler[L]:
        return HeldScheduler(self.library.again(restart=False), self.group, self.settle, False)

    def reopen(self) -> HeldScheduler[L]:
        return HeldScheduler(self.library.again(restart=True), self.group, self.settle,
                             self.first)

    def crash(self) -> None:
        self.group.crash(self.library)

    def close(self) -> None:
        self.group.close(self.library, everything=self.first)
