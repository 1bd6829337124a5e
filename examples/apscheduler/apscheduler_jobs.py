"""APScheduler 3 against scheduling: an `AsyncIOScheduler` per scheduler, jobs (cron in the zone,
date) in PostgreSQL (`SQLAlchemyJobStore`, a table a restart and a peer open again), on one
`VirtualLoop` with `WallClock` (each timer at its deadline); jobs run inline (`DebugExecutor`).
It keeps no history and has no manual trigger: the kit's in-memory schedule store keeps fields
and runs, and EVENT_JOB_EXECUTED (which names the fire time) runs the pre-check and dispatch."""

import contextlib
import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from apscheduler.events import EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.executors.debug import DebugExecutor
from apscheduler.jobstores.base import JobLookupError
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger

from jobconform.backends.protocol import Clock
from jobconform.backends.scheduling import protocol as sp
from jobconform.backends.scheduling.memory import InMemoryScheduleStore
from jobconform.backends.scheduling.runtime import StoredExecution, StoredSchedule, run_at_asked
from jobconform.bridges import VirtualLoop, WallClock

DATABASE = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
# missed_fires as APScheduler says it: (coalesce, misfire_grace_time); 1 s is its least.
POLICY = {"all": (False, None), "one": (True, None), "none": (True, 1)}


def fired(schedule_id: str) -> str:  # the job: importable, as the job store pickles its name
    return schedule_id


def timetable(expression: str, timezone: str) -> CronTrigger:
    for zone, code in (("UTC", "expression"), (timezone, "timezone")):  # expression first
        try:
            trigger = CronTrigger.from_crontab(expression, timezone=zone)
        except (ValueError, KeyError) as error:  # an unknown zone: ZoneInfoNotFoundError
            raise sp.ScheduleRejected(code, str(error)) from None
    return trigger


class ApschedulerRuntime:
    def __init__(self, shared: SimpleNamespace, owner: bool = True) -> None:
        self.shared, self.owner, self.records, self.now = shared, owner, shared.records, shared.now
        self.store = SQLAlchemyJobStore(url=DATABASE, tablename=shared.table)
        self.scheduler = AsyncIOScheduler(
            event_loop=shared.loop.loop, timezone=UTC, jobstores={"default": self.store},
            executors={"default": DebugExecutor()},
            job_defaults={"coalesce": shared.policy[0], "misfire_grace_time": shared.policy[1]})
        self.scheduler.add_listener(self.executed, EVENT_JOB_EXECUTED)
        self.booting, self.settle = True, shared.loop.settle
        self.scheduler.start(paused=not shared.autonomy)  # autonomy is pause() and resume()
        self.settle()  # its start runs the fires missed while down, as coalesce and grace say
        self.booting = shared.running.append(self.scheduler) or False
        self.open_peer = lambda: ApschedulerRuntime(shared, owner=False)
        self.reopen = lambda: ApschedulerRuntime(shared)
        self.history = lambda sid: (self.held(sid), self.records.history(sid))[1]
        self.trigger = lambda sid: self.record(sid, self.now(), "manual", None,
                                               self.held(sid).message)
        self.get = lambda sid: next((s for s in self.list_schedules() if s.schedule_id == sid),
                                    None)
    def executed(self, event: JobExecutionEvent) -> None:
        schedule, fire = self.held(event.job_id), event.scheduled_run_time.astimezone(UTC)
        late = datetime.now(UTC) - fire >= timedelta(seconds=1)  # run late, at its start
        trigger = "catch_up" if self.booting and late and schedule.kind == "cron" else "schedule"
        checked, message = None, schedule.message
        try:  # a broken hook fails open, with the schedule's own message
            if schedule.pre_check:
                output = self.shared.target.pre_check(schedule.schedule_id)
                checked, message = (("skip", None) if output == "" else ("prompt", output)
                                    if isinstance(output, str) else ("error", message))
        except (sp.PreCheckTimedOut, sp.PreCheckFailed) as error:
            checked = "timeout" if isinstance(error, TimeoutError) else "error"
        self.record(schedule.schedule_id, fire, trigger, checked, message)
    def record(self, schedule_id: str, fire: datetime, trigger: str, checked: str | None,
               message: str | None) -> None:
        if checked != "skip":
            self.shared.target.dispatch(schedule_id, fire, str(message))
        self.records.record(StoredExecution(schedule_id, fire, self.now(), trigger, *(
            ("skipped", None, 0.0) if checked == "skip" else ("dispatched", message, None)),
            checked))
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        when = run_at_asked(run_at, delay_seconds, self.now())
        if when is None:
            raise sp.ScheduleRejected("schedule", "exactly one of an aware run_at and a delay")
        return self.add("once", message, None, None, pre_check, DateTrigger(when))
    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        trigger = timetable(expression, timezone)
        return self.add("cron", message, expression, timezone, pre_check, trigger)
    def add(self, kind: str, message: str, expression: str | None, timezone: str | None,
            checked: bool, trigger: CronTrigger | DateTrigger) -> str:
        schedule_id = str(uuid.uuid4())
        self.records.add(StoredSchedule(schedule_id, kind, message, expression, timezone,
                                        checked, self.now(), None))
        self.scheduler.add_job(fired, trigger, args=(schedule_id,), id=schedule_id, **(
            {"misfire_grace_time": None} if kind == "once" else {}))  # a one-shot always runs
        return schedule_id
    def held(self, schedule_id: str) -> StoredSchedule:
        schedule = self.records.get(schedule_id)
        if schedule is None:
            raise sp.ScheduleNotFound(schedule_id)
        return schedule
    def edit(self, schedule_id: str, message: str | None = None,
             expression: str | None = None, timezone: str | None = None) -> None:
        old = self.held(schedule_id)
        new = replace(old, message=old.message if message is None else message,
                      expression=expression or old.expression, timezone=timezone or old.timezone)
        if expression is not None or timezone is not None:
            if old.kind != "cron":
                raise sp.ScheduleRejected("schedule", "a one-shot job has no timetable")
            self.scheduler.reschedule_job(schedule_id, trigger=timetable(
                str(new.expression), str(new.timezone)))  # the first fire at or after now
        self.records.replace(new)
    def delete(self, schedule_id: str) -> None:
        if not self.records.remove(schedule_id):
            raise sp.ScheduleNotFound(schedule_id)
        with contextlib.suppress(JobLookupError):  # a one-shot job that ran is gone already
            self.scheduler.remove_job(schedule_id)
    def set_autonomy(self, enabled: bool) -> None:
        self.shared.autonomy = enabled
        for scheduler in (s for s in self.shared.running if s.running):
            scheduler.resume() if enabled else scheduler.pause()
    def list_schedules(self) -> list[StoredSchedule]:
        fires = {job.id: job.next_run_time.astimezone(UTC) for job in self.scheduler.get_jobs()}
        return [replace(s, next_fire_at=fires.get(s.schedule_id)) for s in self.records.list()]
    def crash(self) -> None:
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)  # AsyncIOScheduler's runs on its loop, settled
        self.settle()
    def close(self) -> None:
        self.crash()
        if self.owner:  # the table, then the loop and the wall clock
            self.store.jobs_t.drop(self.store.engine, checkfirst=True)
            self.store.engine.dispose()
            self.shared.loop.close()
            self.shared.wall.stop()


class ApschedulerBackend:  # jobconform run --backend apscheduler_jobs:ApschedulerBackend
    name, profile, capabilities = "apscheduler", "canonical", frozenset({"scheduling"})

    def open_scheduling(self, clock: Clock, config: sp.SchedulingConfig,
                        target: sp.SchedulingTarget) -> ApschedulerRuntime:
        wall = WallClock(clock).start()
        return ApschedulerRuntime(SimpleNamespace(
            table=f"apscheduler_{uuid.uuid4().hex}", now=clock.now, target=target, wall=wall,
            loop=VirtualLoop(clock, on_step=wall.move_to), policy=POLICY[config.missed_fires.value],
            autonomy=True, running=[], records=InMemoryScheduleStore()))
