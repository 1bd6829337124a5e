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
from jobconform.bridges import ThreadWaits, WallClock, keeping_signal_handlers
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
def fire(shared: SimpleNamespace, schedule_id: str) -> None:  # every task's body: one fire
    if (schedule := shared.store.get(schedule_id)) is None:
        return  # deleted between its queueing and its run
    now = shared.now()  # a cron fire's time: the minute huey's crontab matched
    when = schedule.next_fire_at if schedule.kind == "once" else now.replace(second=0)
    runtime.execute_as_seeded(shared.store, shared.target, schedule, when, Trigger.SCHEDULE, now)
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
        self.get = lambda i: next((s for s in self.list_schedules() if s.schedule_id == i), None)
        self.history = lambda sid: (self.held(sid), self.store.history(sid))[1]
        self.trigger = lambda sid: runtime.execute_as_seeded(
            self.store, shared.target, self.held(sid), self.now(), Trigger.MANUAL, self.now())
    def settle(self) -> None:  # a worker takes a queued task at once, as one blocked on
        while self.shared.waits.settle() or self.huey.pending_count():  # RedisHuey's would
            self.shared.waits.wake_sleepers()
    def declare(self, sid: str, matches: crontab) -> None:  # revoked while autonomy is off
        self.shared.tasks[sid] = task = self.huey.periodic_task(matches, name=f"cron-{sid}")(
            lambda: fire(self.shared, sid))
        task.revoke() if not self.shared.autonomy else None
    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        matches, sid = timetable(expression, timezone), str(uuid.uuid4())  # refused: no record
        self.store.add(runtime.StoredSchedule(
            sid, "cron", message, expression, timezone, pre_check, self.now(), None))
        self.declare(sid, matches)
        return sid
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        if (when := runtime.run_at_asked(run_at, delay_seconds, self.now())) is None:
            raise protocol.ScheduleRejected("schedule", "one of an aware run_at and a delay")
        self.store.add(runtime.StoredSchedule(sid := str(uuid.uuid4()), "once", message, None,
                                              None, pre_check, self.now(), when))
        self.shared.once.schedule(args=(sid,), eta=when.astimezone(UTC).replace(tzinfo=None),
                                  id=sid)  # huey's eta: naive, on its own clock
        return sid
    def held(self, schedule_id: str) -> runtime.StoredSchedule:
        if (schedule := self.store.get(schedule_id)) is None:
            raise protocol.ScheduleNotFound(schedule_id)
        return schedule
    def edit(self, sid: str, message: str | None = None, expression: str | None = None,
             timezone: str | None = None) -> None:
        old = self.held(sid)
        if (expression or timezone) and old.kind != "cron":
            raise protocol.ScheduleRejected("schedule", "a one-shot job has no timetable")
        new = replace(old, message=old.message if message is None else message,
                      expression=expression or old.expression, timezone=timezone or old.timezone)
        if expression or timezone:  # huey cannot change a periodic task: a new one replaces it
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
    def list_schedules(self) -> list[runtime.StoredSchedule]:
        return [s if s.kind == "once" else replace(s, next_fire_at=self.next_match(s))
                for s in self.store.list()]
    def next_match(self, schedule: runtime.StoredSchedule) -> datetime | None:  # a year on
        matches = timetable(str(schedule.expression), str(schedule.timezone))  # huey's test
        minutes = (self.now().replace(second=0, microsecond=0, tzinfo=None) + timedelta(minutes=n)
                   for n in range(1, 366 * 24 * 60))  # of each minute after now
        return next((m.replace(tzinfo=UTC) for m in minutes if matches(m)), None)
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
        return HueyPeriodicRuntime(shared)
