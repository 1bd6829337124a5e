"""procrastinate's `app.periodic`: its worker's deferrer on a `VirtualLoop` and `WallClock`,
jobs in an InMemoryConnector. Periodic tasks are code, read as a worker starts: a cron change
is a deploy (a new App declaring them, its workers restarted); autonomy off: no worker; a
one-shot: `schedule_at`. A job's body is the fire. Refused: zones but UTC (crons have none)."""

import logging
from dataclasses import replace
from datetime import UTC, datetime
from types import SimpleNamespace

import croniter
import procrastinate
from procrastinate.testing import InMemoryConnector

from jobconform.backends.scheduling import memory, protocol, runtime
from jobconform.bridges import HeldSchedules, VirtualLoop, WallClock
from jobconform.reference.scheduling.oracle import Trigger


def checked(expression: str, timezone: str) -> None:  # croniter: the deferrer's parser
    if len(expression.split()) != 5 or not croniter.croniter.is_valid(expression):
        raise protocol.ScheduleRejected("expression", f"not for croniter: {expression!r}")
    if timezone != "UTC":  # the deferrer reads its crons on POSIX timestamps: UTC
        raise protocol.ScheduleRejected("timezone", f"procrastinate's cron has no zone: {timezone}")
def next_fire(schedule: runtime.StoredSchedule, now: datetime) -> datetime | None:
    if schedule.kind == "once":  # the deferrer's own reckoning: croniter on timestamps
        return schedule.next_fire_at
    cron = croniter.croniter(str(schedule.expression), now.timestamp())
    return datetime.fromtimestamp(cron.get_next(float), UTC)
class ProcrastinatePeriodicRuntime:
    def __init__(self, shared: SimpleNamespace, peer: bool = False) -> None:
        self.shared, self.store, self.now, self.peer = shared, shared.store, shared.now, peer
        self.worker: object = shared.running.append(self)  # None: no worker yet
        self.deploy()  # a worker that starts defers the latest fire missed within max_delay
        self.open_peer = lambda: ProcrastinatePeriodicRuntime(shared, peer=True)
        self.reopen, self.settle = lambda: ProcrastinatePeriodicRuntime(shared), shared.loop.settle
        self.held, self.get, self.history = shared.held.held, shared.held.get, shared.held.history
        self.trigger, self.list_schedules = shared.held.trigger, shared.held.list_schedules
    async def fire(self, schedule_id: str, timestamp: int | None = None) -> None:
        if (schedule := self.store.get(schedule_id)) is None:
            return  # a one-shot job deleted after its job was fetched
        at = schedule.next_fire_at if timestamp is None else datetime.fromtimestamp(timestamp, UTC)
        late = timestamp is not None and timestamp < self.shared.started.timestamp()
        self.shared.held.run(schedule, at, Trigger.CATCH_UP if late else Trigger.SCHEDULE)
        self.store.replace(replace(schedule, next_fire_at=None)) if timestamp is None else None
    def deploy(self) -> None:  # this scheduler's worker: stopped, then started on a new App
        self.crash(again=True)
        self.app = app = procrastinate.App(connector=self.shared.connector)
        task = app.task(name="fire")(self.fire)
        for s in (s for s in self.store.list() if s.kind == "cron"):
            app.periodic(cron=str(s.expression), periodic_id=s.schedule_id,
                         task_kwargs={"schedule_id": s.schedule_id})(task)
        self.shared.loop.run(app.open_async(), name="open_async")
        if self.shared.autonomy:
            self.shared.started, self.worker = self.now(), self.shared.loop.spawn(
                app.run_worker_async(concurrency=1, install_signal_handlers=False), name="worker")
        self.shared.loop.settle()
    def redeploy(self) -> None:
        for scheduler in self.shared.running:
            scheduler.deploy()
    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        checked(expression, timezone)
        sid = self.shared.held.add_cron(message, expression, timezone, pre_check)
        return self.redeploy() or sid
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        once = self.shared.held.add_once(message, run_at, delay_seconds, pre_check)
        deferring = self.app.configure_task("fire", schedule_at=once.next_fire_at).defer_async(
            schedule_id=(sid := once.schedule_id))
        self.shared.jobs[sid] = self.shared.loop.run(deferring, name="defer")
        return sid
    def edit(self, sid: str, message: str | None = None, expression: str | None = None,
             timezone: str | None = None) -> None:
        new, retimed = self.shared.held.edited(sid, message, expression, timezone)
        checked(str(new.expression), str(new.timezone)) if retimed else None
        self.store.replace(new)
        self.redeploy() if retimed else None  # a deploy of the new timetable
    def delete(self, schedule_id: str) -> None:
        kind = self.held(schedule_id).kind  # a cron: a deploy without it
        self.store.remove(schedule_id)
        self.redeploy() if kind == "cron" else self.shared.loop.run(
            self.app.job_manager.cancel_job_by_id_async(self.shared.jobs[schedule_id]))
    def set_autonomy(self, enabled: bool) -> None:
        self.shared.autonomy = enabled  # off: every worker stops; on: they start again
        self.redeploy()
    def crash(self, again: bool = False) -> None:  # its worker cancelled (again: redeployed)
        self.worker.cancel() if self.worker is not None else None  # type: ignore[attr-defined]
        self.worker = self.shared.loop.settle()
        self.shared.running.remove(self) if not again else None
    def close(self) -> None:  # a peer stops its worker, the first scheduler every one
        for scheduler in [s for s in self.shared.running if s is self or not self.peer]:
            scheduler.crash()
        self.shared.loop.close() or self.shared.wall.stop() if not self.peer else None
class ProcrastinatePeriodicBackend:  # --backend procrastinate_periodic:ProcrastinatePeriodicBackend
    name, profile, libraries = "procrastinate-periodic", "canonical", ("procrastinate",)
    capabilities = frozenset({"scheduling", "scheduling-utc-only"})
    def open_scheduling(self, clock: runtime.Clock, config: protocol.SchedulingConfig,
                        target: protocol.SchedulingTarget) -> ProcrastinatePeriodicRuntime:
        logging.getLogger("procrastinate").setLevel(logging.CRITICAL)  # its own warnings
        wall, store = WallClock(clock).start(), memory.InMemoryScheduleStore()
        return ProcrastinatePeriodicRuntime(SimpleNamespace(
            connector=InMemoryConnector(), loop=VirtualLoop(clock, on_step=wall.move_to),
            wall=wall, now=clock.now, target=target, store=store, running=[], jobs={},
            autonomy=True, started=clock.now(),
            held=HeldSchedules(store, target, clock.now, lambda s: next_fire(s, clock.now()))))
