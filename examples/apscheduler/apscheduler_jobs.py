"""APScheduler 3: an `AsyncIOScheduler` per scheduler, jobs in PostgreSQL (`SQLAlchemyJobStore`, a
table a restart and a peer reopen), one `VirtualLoop` and `WallClock`, run inline (`DebugExecutor`).
It keeps no runs: the kit's schedule store does; EVENT_JOB_EXECUTED (its fire time) runs a fire."""

import uuid
from datetime import UTC, datetime
from types import SimpleNamespace

from apscheduler.events import EVENT_JOB_EXECUTED, JobExecutionEvent
from apscheduler.executors.debug import DebugExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.date import DateTrigger

from jobconform.backends.scheduling import memory, protocol, runtime
from jobconform.bridges import HeldSchedules, VirtualLoop, WallClock
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
        self.held = HeldSchedules(shared.records, shared.target, shared.now, self.next_fire)
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
        self.get, self.history, self.trigger = self.held.get, self.held.history, self.held.trigger
        self.list_schedules = self.held.list_schedules
    def executed(self, event: JobExecutionEvent) -> None:
        schedule, fire = self.held.held(event.job_id), event.scheduled_run_time.astimezone(UTC)
        missed = self.booting and schedule.kind == "cron" and fire < self.now()  # run at start
        self.held.run(schedule, fire, Trigger.CATCH_UP if missed else Trigger.SCHEDULE)
    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        trigger = timetable(expression, timezone)
        schedule_id = self.held.add_cron(message, expression, timezone, pre_check)
        self.scheduler.add_job(fired, trigger, args=(schedule_id,), id=schedule_id)
        return schedule_id
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        once = self.held.add_once(message, run_at, delay_seconds, pre_check)
        self.scheduler.add_job(fired, DateTrigger(once.next_fire_at), args=(once.schedule_id,),
                               id=once.schedule_id, misfire_grace_time=None)  # it always runs
        return once.schedule_id
    def edit(self, sid: str, message: str | None = None, expression: str | None = None,
             timezone: str | None = None) -> None:
        new, retimed = self.held.edited(sid, message, expression, timezone)
        if retimed:  # its first fire at or after now
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
    def next_fire(self, schedule: runtime.StoredSchedule) -> datetime | None:
        job = self.scheduler.get_job(schedule.schedule_id)  # a one-shot job that ran: gone
        return job.next_run_time.astimezone(UTC) if job is not None else None
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
