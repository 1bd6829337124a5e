"""APScheduler 3: an `AsyncIOScheduler` per scheduler, jobs in PostgreSQL (`SQLAlchemyJobStore`, a
table a restart and a peer reopen), one `VirtualLoop` and `WallClock`, run inline (`DebugExecutor`).
It keeps no runs: the kit's schedule store does; EVENT_JOB_EXECUTED (its fire time) runs a fire."""

import uuid
from dataclasses import replace
from datetime import UTC, datetime
from types import SimpleNamespace

from apscheduler.events import EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.executors.debug import DebugExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger

from jobconform.backends.scheduling import memory, protocol, runtime
from jobconform.bridges import VirtualLoop, WallClock
from jobconform.reference.scheduling.oracle import Trigger

DATABASE = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
POLICY = {"all": (False, None), "one": (True, None), "none": (True, 1)}  # coalesce, least grace

def fired(schedule_id: str) -> str:  # the job: importable, as the job store pickles its name
    return schedule_id

def timetable(expression: str | None, timezone: str | None) -> CronTrigger:
    for zone, code in (("UTC", "expression"), (timezone, "timezone")):  # expression first
        try:
            trigger = CronTrigger.from_crontab(expression, timezone=zone)
        except (ValueError, KeyError) as error:  # an unknown zone: ZoneInfoNotFoundError
            raise protocol.ScheduleRejected(code, str(error)) from None
    return trigger

class ApschedulerRuntime:
    def __init__(self, shared: SimpleNamespace, peer: bool = False) -> None:
        self.shared, self.peer, self.records, self.now = shared, peer, shared.records, shared.now
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
        self.open_peer = lambda: ApschedulerRuntime(shared, peer=True)
        self.reopen = lambda: ApschedulerRuntime(shared)
        self.history = lambda sid: (self.held(sid), self.records.history(sid))[1]
        self.trigger = lambda sid: runtime.execute_as_seeded(
            self.records, shared.target, self.held(sid), self.now(), Trigger.MANUAL, self.now())
        self.create_cron = lambda message, expression, timezone, pre_check=False: self.add(
            "cron", message, expression, timezone, pre_check, timetable(expression, timezone))
        self.get = lambda i: next((s for s in self.list_schedules() if s.schedule_id == i), None)
    def executed(self, event: JobExecutionEvent) -> None:
        schedule, fire = self.held(event.job_id), event.scheduled_run_time.astimezone(UTC)
        missed = self.booting and schedule.kind == "cron" and fire < self.now()  # run at start
        runtime.execute_as_seeded(self.records, self.shared.target, schedule, fire,
                                  Trigger.CATCH_UP if missed else Trigger.SCHEDULE, self.now())
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        if (when := runtime.run_at_asked(run_at, delay_seconds, self.now())) is None:
            raise protocol.ScheduleRejected("schedule", "one of an aware run_at and a delay")
        return self.add("once", message, None, None, pre_check, DateTrigger(when))
    def add(self, kind: str, message: str, expression: str | None, timezone: str | None,
            checked: bool, trigger: CronTrigger | DateTrigger) -> str:
        schedule_id = str(uuid.uuid4())
        self.records.add(runtime.StoredSchedule(
            schedule_id, kind, message, expression, timezone, checked, self.now(), None))
        self.scheduler.add_job(fired, trigger, args=(schedule_id,), id=schedule_id, **(
            {"misfire_grace_time": None} if kind == "once" else {}))  # a one-shot always runs
        return schedule_id
    def held(self, schedule_id: str) -> runtime.StoredSchedule:
        if (schedule := self.records.get(schedule_id)) is None:
            raise protocol.ScheduleNotFound(schedule_id)
        return schedule
    def edit(self, sid: str, message: str | None = None, expression: str | None = None,
             timezone: str | None = None) -> None:
        old = self.held(sid)
        if (expression or timezone) and old.kind != "cron":
            raise protocol.ScheduleRejected("schedule", "a one-shot job has no timetable")
        new = replace(old, message=old.message if message is None else message,
                      expression=expression or old.expression, timezone=timezone or old.timezone)
        if expression or timezone:  # its first fire at or after now
            self.scheduler.reschedule_job(sid, None, timetable(new.expression, new.timezone))
        self.records.replace(new)
    def delete(self, schedule_id: str) -> None:
        if not self.records.remove(schedule_id):
            raise protocol.ScheduleNotFound(schedule_id)
        if self.scheduler.get_job(schedule_id):  # a one-shot job that ran is gone already
            self.scheduler.remove_job(schedule_id)
    def set_autonomy(self, enabled: bool) -> None:
        self.shared.autonomy = enabled
        for scheduler in (s for s in self.shared.running if s.running):
            scheduler.resume() if enabled else scheduler.pause()
    def list_schedules(self) -> list[runtime.StoredSchedule]:
        fires = {job.id: job.next_run_time.astimezone(UTC) for job in self.scheduler.get_jobs()}
        return [replace(s, next_fire_at=fires.get(s.schedule_id)) for s in self.records.list()]
    def crash(self) -> None:
        if self.scheduler.running:  # AsyncIOScheduler shuts down on its loop: at the settle
            self.scheduler.shutdown(wait=False)
        self.settle()
    def close(self) -> None:
        self.crash()  # its job store disposed of its engine; a peer leaves the rest
        if not self.peer:
            self.store.jobs_t.drop(self.store.engine, checkfirst=True)
            self.store.engine.dispose()
            self.shared.loop.close()
            self.shared.wall.stop()  # last: the loop's close still reads the clock

class ApschedulerBackend:  # jobconform run --backend apscheduler_jobs:ApschedulerBackend
    name, profile, capabilities = "apscheduler", "canonical", frozenset({"scheduling"})
    def open_scheduling(self, clock: runtime.Clock, config: protocol.SchedulingConfig,
                        target: protocol.SchedulingTarget) -> ApschedulerRuntime:
        wall = WallClock(clock).start()
        return ApschedulerRuntime(SimpleNamespace(
            table=f"apscheduler_{uuid.uuid4().hex}", now=clock.now, target=target, wall=wall,
            loop=VirtualLoop(clock, on_step=wall.move_to), policy=POLICY[config.missed_fires.value],
            autonomy=True, running=[], records=memory.InMemoryScheduleStore()))
