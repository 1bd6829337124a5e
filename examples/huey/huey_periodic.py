"""huey's periodic tasks: one MemoryHuey, a consumer per scheduler (its Scheduler tests the
`crontab`s once a minute, its worker runs what that queued) on `ThreadWaits` and `WallClock`.
Cron: a `periodic_task` declared live (edit: anew; delete: unregister); one-shot: `schedule`
with an eta; autonomy: `revoke()`/`restore()`. A body is the fire. Refused: zones but UTC."""

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from huey.api import MemoryHuey, crontab

from jobconform.backends.scheduling import memory, protocol, runtime
from jobconform.bridges import HeldSchedules, ThreadWaits, WallClock, keeping_signal_handlers
from jobconform.reference.scheduling.oracle import Trigger


def timetable(expression: str, timezone: str) -> crontab:
    try:  # cron's five fields, in crontab's order; strict: it refuses what it cannot read
        minute, hour, day, month, weekday = expression.split()
        matches = crontab(minute, hour, day, month, weekday, strict=True)
    except ValueError as error:
        raise protocol.ScheduleRejected("expression", str(error)) from None
    if timezone != "UTC":  # huey tests every crontab on its one clock, UTC here
        raise protocol.ScheduleRejected("timezone", f"huey's crontab has no zone: {timezone}")
    return matches
def next_match(schedule: runtime.StoredSchedule, now: datetime) -> datetime | None:
    if schedule.kind == "once":  # a one-shot job's, as stored; a cron's: a year on at most
        return schedule.next_fire_at
    matches = timetable(str(schedule.expression), str(schedule.timezone))  # huey's test
    minutes = (now.replace(second=0, microsecond=0, tzinfo=None) + timedelta(minutes=n)
               for n in range(1, 366 * 24 * 60))  # of each minute after now
    return next((m.replace(tzinfo=UTC) for m in minutes if matches(m)), None)
def fire(shared: SimpleNamespace, schedule_id: str) -> None:  # every task's body: one fire
    if (schedule := shared.store.get(schedule_id)) is None:
        return  # deleted between its queueing and its run
    now = shared.now()  # a cron fire's time: the minute huey's crontab matched
    when = schedule.next_fire_at if schedule.kind == "once" else now.replace(second=0)
    shared.held.run(schedule, when, Trigger.SCHEDULE)
    shared.store.replace(replace(schedule, next_fire_at=None)) if schedule.kind == "once" else 0
class HueyPeriodicRuntime:
    def __init__(self, shared: SimpleNamespace, peer: bool = False) -> None:
        self.shared, self.store, self.huey, self.now = shared, shared.store, shared.huey, shared.now
        self.consumer, self.peer = self.huey.create_consumer(workers=1, periodic=True), peer
        with shared.waits.adopting(), keeping_signal_handlers():
            self.consumer.start()  # its Scheduler tests the crontabs at once, then each minute
        shared.consumers.append(self.consumer)
        self.settle()  # a peer: a second consumer; reopen: a new one, same storage and tasks
        self.open_peer, self.reopen = (lambda: HueyPeriodicRuntime(shared, peer=True),
                                       lambda: HueyPeriodicRuntime(shared))
        self.held, self.get, self.history = shared.held.held, shared.held.get, shared.held.history
        self.trigger, self.list_schedules = shared.held.trigger, shared.held.list_schedules
    def settle(self) -> None:  # a worker takes a queued task at once, as one blocked on
        while self.shared.waits.settle() or self.huey.pending_count():  # RedisHuey's would
            self.shared.waits.wake_sleepers()
    def declare(self, sid: str, matches: crontab) -> None:  # revoked while autonomy is off
        self.shared.tasks[sid] = task = self.huey.periodic_task(matches, name=f"cron-{sid}")(
            lambda: fire(self.shared, sid))
        task.revoke() if not self.shared.autonomy else None
    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        matches = timetable(expression, timezone)  # refused: no record
        self.declare(sid := self.shared.held.add_cron(message, expression, timezone, pre_check),
                     matches)
        return sid
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        once = self.shared.held.add_once(message, run_at, delay_seconds, pre_check)
        when, sid = once.next_fire_at, once.schedule_id  # huey's eta: naive, on its own clock
        self.shared.once.schedule(args=(sid,), eta=when.astimezone(UTC).replace(tzinfo=None),
                                  id=sid)
        return sid
    def edit(self, sid: str, message: str | None = None, expression: str | None = None,
             timezone: str | None = None) -> None:
        new, retimed = self.shared.held.edited(sid, message, expression, timezone)
        if retimed:  # huey cannot change a periodic task: a new one replaces it
            matches = timetable(str(new.expression), str(new.timezone))
            self.shared.tasks.pop(sid).unregister()
            self.declare(sid, matches)
        self.store.replace(new)
    def delete(self, schedule_id: str) -> None:  # a one-shot's queued run: skipped when due
        if self.held(schedule_id).kind == "cron":
            self.shared.tasks.pop(schedule_id).unregister()
        self.huey.revoke_by_id(schedule_id) or self.store.remove(schedule_id)
    def set_autonomy(self, enabled: bool) -> None:
        self.shared.autonomy = enabled  # huey keeps a revocation in its storage
        for task in (self.shared.once, *self.shared.tasks.values()):
            task.restore() if enabled else task.revoke()
    def crash(self) -> None:  # its stop flag ends every wait of its threads at once
        self.consumer.stop() or self.shared.waits.settle()
    def close(self) -> None:  # a peer stops its consumer, the first scheduler every one
        for consumer in [self.consumer] if self.peer else self.shared.consumers:
            consumer.stop()
        self.shared.waits.settle() if self.peer else self.shared.waits.stop()
        self.shared.wall.stop() if not self.peer else None
class HueyPeriodicBackend:  # jobconform run --backend huey_periodic:HueyPeriodicBackend
    name, profile, libraries = "huey-periodic", "canonical", ("huey",)
    capabilities = frozenset({"scheduling", "scheduling-utc-only"})
    def open_scheduling(self, clock: runtime.Clock, config: protocol.SchedulingConfig,
                        target: protocol.SchedulingTarget) -> HueyPeriodicRuntime:
        shared = SimpleNamespace(  # a naive clock (utc=False): datetime.now() on WallClock
            huey=MemoryHuey(f"jobconform-{uuid.uuid4().hex}", utc=False), now=clock.now,
            target=target, tasks={}, consumers=[], autonomy=True, wall=WallClock(clock).start(),
            waits=ThreadWaits(clock, in_turn=True).start(), store=memory.InMemoryScheduleStore())
        shared.once = shared.huey.task(name="once")(lambda sid: fire(shared, sid))
        shared.held = HeldSchedules(shared.store, target, clock.now,
                                    lambda s: next_match(s, clock.now()))
        return HueyPeriodicRuntime(shared)
