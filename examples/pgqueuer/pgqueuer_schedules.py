"""pgqueuer's own scheduler: per scheduler (a process, its own connection to one scratch schema
whose NOW() is virtual: `pgqueuer_clock`) a SchedulerManager, crons by `schedule(entrypoint,
expression)` kept in its schedules table (next_run: the next fire shown). Crons are code read
at start: a cron change is a deploy (each SchedulerManager anew); autonomy off: none runs. A
one-shot job: a job deferred on its queue (`pgqueuer_deferred`). A body is the fire.
Refused: zones but UTC (croniter reads crontabs on UTC)."""

import asyncio
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import croniter
from pgqueuer.core.sm import SchedulerManager
from pgqueuer.domain.models import Schedule, utc_now
from pgqueuer_clock import any_busy, drop, open_queries, scratch_schema
from pgqueuer_deferred import Deferrals

from jobconform.backends.scheduling import memory, protocol, runtime
from jobconform.bridges import HeldSchedules, VirtualLoop, WallClock
from jobconform.reference.scheduling.oracle import Trigger


def timetable(shared: SimpleNamespace, expression: str, timezone: str) -> None:
    try:  # pgqueuer's own check of a crontab (croniter's), as `schedule` makes it
        SchedulerManager(shared.queries).schedule("check", expression)
    except ValueError as error:
        raise protocol.ScheduleRejected("expression", str(error)) from None
    if timezone != "UTC":
        raise protocol.ScheduleRejected("timezone", f"pgqueuer's crontab has no zone: {timezone}")
def next_fire(shared: SimpleNamespace, schedule: runtime.StoredSchedule) -> datetime | None:
    if schedule.kind == "once":  # as stored; none once it ran
        return schedule.next_fire_at
    rows = shared.loop.run(shared.queries.peek_schedule(), name="peek_schedule")
    return next((r.next_run for r in rows if r.entrypoint == schedule.schedule_id), None)
class PgqueuerSchedulesRuntime:
    def __init__(self, shared: SimpleNamespace, peer: bool = False) -> None:
        self.shared, self.store, self.now, self.peer = shared, shared.store, shared.now, peer
        self.queries = open_queries(shared.loop, shared.schema, shared.connections)
        self.task: asyncio.Task[None] | None = None  # its SchedulerManager's run
        self.deferrals = Deferrals(shared, self.queries)  # its QueueManager's
        self.started = shared.running.append(self) or self.now()  # a fire before it: catch-up
        self.deploy()  # its SchedulerManager fires at its first settle what its table says
        self.open_peer = lambda: PgqueuerSchedulesRuntime(shared, peer=True)
        self.reopen = lambda: PgqueuerSchedulesRuntime(shared)
        self.held, self.get, self.history = shared.held.held, shared.held.get, shared.held.history
        self.trigger, self.list_schedules = shared.held.trigger, shared.held.list_schedules
        self.settle()  # is overdue: its boot catch-up
    async def cron(self, schedule: Schedule) -> None:  # the fire: the latest match by its now
        if (held := self.store.get(schedule.entrypoint)) is not None:
            cron = croniter.croniter(schedule.expression, utc_now() + timedelta(microseconds=1))
            at = datetime.fromtimestamp(cron.get_prev(float), UTC)
            late = Trigger.CATCH_UP if at < self.started else Trigger.SCHEDULE
            self.shared.held.run(held, at, late)
    def deploy(self) -> None:  # its SchedulerManager stopped, then anew with every cron
        self.stop()
        self.sm = SchedulerManager(self.queries)
        for schedule in (s for s in self.store.list() if s.kind == "cron"):
            self.sm.schedule(schedule.schedule_id, str(schedule.expression))(self.cron)
        if self.shared.autonomy and self.sm.registry:  # with none it would poll every second
            self.task = self.shared.loop.spawn(self.sm.run(), name="SchedulerManager")
        self.deferrals.work()
    def stop(self) -> None:  # cancelled: nothing more written
        if self.task is not None:
            self.task.cancel()
            self.task = None
        self.shared.loop.settle()
    def settle(self) -> None:
        self.shared.loop.settle()
        for scheduler in self.shared.running:
            scheduler.deferrals.work()
    def redeploy(self) -> None:
        for scheduler in self.shared.running:
            scheduler.deploy()
    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        timetable(self.shared, expression, timezone)
        sid = self.shared.held.add_cron(message, expression, timezone, pre_check)
        return self.redeploy() or sid
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        once = self.shared.held.add_once(message, run_at, delay_seconds, pre_check)
        self.deferrals.defer(once)
        return self.deferrals.work() or once.schedule_id
    def edit(self, sid: str, message: str | None = None, expression: str | None = None,
             timezone: str | None = None) -> None:
        new, retimed = self.shared.held.edited(sid, message, expression, timezone)
        timetable(self.shared, str(new.expression), str(new.timezone)) if retimed else None
        self.store.replace(new)
        self.delete_rows(sid) or self.redeploy() if retimed else None  # its row anew
    def delete_rows(self, sid: str) -> None:
        self.shared.loop.run(self.shared.queries.delete_schedule(set(), {sid}), name="delete")
    def delete(self, sid: str) -> None:  # a cron's row; a one-shot's job: pgqueuer's cancel
        self.store.remove(self.held(sid).schedule_id)
        self.delete_rows(sid) if sid not in self.shared.jobs else self.deferrals.cancel(sid)
    def set_autonomy(self, enabled: bool) -> None:
        self.shared.autonomy = enabled  # on: every scheduler starts again
        self.redeploy()
    def crash(self) -> None:
        self.stop() or self.deferrals.stop()
        self.shared.running.remove(self)
    def close(self) -> None:  # a peer stops its own, the first scheduler every one
        for scheduler in [s for s in self.shared.running if s is self or not self.peer]:
            scheduler.crash()
        if not self.peer:
            drop(self.shared.loop, self.shared.schema, self.shared.connections)
            self.shared.loop.close() or self.shared.wall.stop()
class PgqueuerSchedulesBackend:  # --backend pgqueuer_schedules:PgqueuerSchedulesBackend
    name, profile, libraries = "pgqueuer-schedules", "canonical", ("pgqueuer",)
    capabilities = frozenset({"scheduling", "scheduling-utc-only"})
    def open_scheduling(self, clock: runtime.Clock, config: protocol.SchedulingConfig,
                        target: protocol.SchedulingTarget) -> PgqueuerSchedulesRuntime:
        wall, store, connections = WallClock(clock).start(), memory.InMemoryScheduleStore(), []
        loop = VirtualLoop(clock, wall.move_to, busy=any_busy(connections))
        shared = SimpleNamespace(loop=loop, wall=wall, now=clock.now, store=store, running=[],
                                 jobs={}, autonomy=True, connections=connections,
                                 schema=scratch_schema())
        shared.queries = open_queries(loop, shared.schema, connections, create=True)
        shared.held = HeldSchedules(store, target, clock.now, lambda s: next_fire(shared, s))
        return PgqueuerSchedulesRuntime(shared)
