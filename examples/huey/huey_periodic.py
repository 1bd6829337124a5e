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
    if (schedule := shared.records.get(schedule_id)) is None:
        return  # deleted between its queueing and its run
    now = shared.now()  # a cron fire's time: the minute huey's crontab matched
    when = schedule.next_fire_at if schedule.kind == "once" else now.replace(second=0)
    runtime.execute_as_seeded(shared.records, shared.target, schedule, when, Trigger.SCHEDULE, now)
    shared.records.replace(replace(schedule, next_fire_at=None)) if schedule.kind == "once" else 0

class HueyPeriodicRuntime:
    def __init__(self, shared: SimpleNamespace, peer: bool = False) -> None:
        self.shared, self.records, self.huey, self.now = shared, shared.records, shared.huey, (
            shared.now)
        self.consumer, self.peer = self.huey.create_consumer(workers=1, periodic=True), peer
        with shared.waits.adopting(), keeping_signal_handlers():
            self.consumer.start()  # its Scheduler tests the crontabs at once, then each minute
        shared.consumers.append(self.consumer)
        self.settle()  # a peer: a second consumer; reopen: a new one, same storage and tasks
        self.open_peer, self.reopen = (lambda: HueyPeriodicRuntime(shared, peer=True),
                                       lambda: HueyPeriodicRuntime(shared))
        self.get = lambda i: next((s for s in self.list_schedules() if s.schedule_id == i), None)
        self.history = lambda sid: (self.held(sid), self.records.history(sid))[1]
        self.trigger = lambda sid: runtime.execute_as_seeded(
            self.records, shared.target, self.held(sid), self.now(), Trigger.MANUAL, self.now())
    def settle(self) -> None:
        self.shared.waits.settle()  # then a worker takes a queued task at once, as one
        while self.huey.pending_count():  # blocked on RedisHuey's queue would
            self.shared.waits.wake_sleepers() or self.shared.waits.settle()
    def declare(self, sid: str, matches: crontab) -> None:  # revoked while autonomy is off
        self.shared.tasks[sid] = task = self.huey.periodic_task(matches, name=f"cron-{sid}")(
            lambda: fire(self.shared, sid))
        task.revoke() if not self.shared.autonomy else None
    def add(self, kind: str, message: str, expression: str | None, timezone: str | None,
            pre_check: bool, first: datetime | None) -> str:
        self.records.add(schedule := runtime.StoredSchedule(
            str(uuid.uuid4()), kind, message, expression, timezone, pre_check, self.now(), first))
        return schedule.schedule_id
    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        matches = timetable(expression, timezone)  # refused first: then nothing was created
        self.declare(sid := self.add("cron", message, expression, timezone, pre_check, None),
                     matches)
        return sid
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        if (when := runtime.run_at_asked(run_at, delay_seconds, self.now())) is None:
            raise protocol.ScheduleRejected("schedule", "one of an aware run_at and a delay")
        schedule_id = self.add("once", message, None, None, pre_check, when)
        eta = when.astimezone(UTC).replace(tzinfo=None)  # huey's naive eta, on its clock
        self.shared.once.schedule(args=(schedule_id,), eta=eta, id=schedule_id)
        self.settle()
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
        if expression or timezone:  # huey cannot change a periodic task: a new one replaces it
            matches = timetable(str(new.expression), str(new.timezone))
            self.shared.tasks.pop(sid).unregister()
            self.declare(sid, matches)
        self.records.replace(new)
    def delete(self, schedule_id: str) -> None:
        if self.held(schedule_id).kind == "cron":
            self.shared.tasks.pop(schedule_id).unregister()
        self.huey.revoke_by_id(schedule_id)  # a one-shot's queued run: skipped when due
        self.records.remove(schedule_id)
    def set_autonomy(self, enabled: bool) -> None:
        self.shared.autonomy = enabled  # huey keeps a revocation in its storage
        for task in (self.shared.once, *self.shared.tasks.values()):
            task.restore() if enabled else task.revoke()
    def list_schedules(self) -> list[runtime.StoredSchedule]:
        return [s if s.kind == "once" else replace(s, next_fire_at=self.next_match(s))
                for s in self.records.list()]
    def next_match(self, schedule: runtime.StoredSchedule) -> datetime | None:
        # The first minute after now that huey's crontab matches (its own test of a minute).
        matches = timetable(str(schedule.expression), str(schedule.timezone))
        minute = self.now().replace(second=0, microsecond=0, tzinfo=None)
        return next((minute.replace(tzinfo=UTC) + timedelta(minutes=step) for step in range(
            1, 366 * 24 * 60) if matches(minute + timedelta(minutes=step))), None)  # or a year
    def crash(self) -> None:  # its stop flag ends every wait of its threads at once
        self.consumer.stop() or self.shared.waits.settle()
    def close(self) -> None:  # a peer stops its consumer, the first scheduler every one
        for consumer in [self.consumer] if self.peer else self.shared.consumers:
            consumer.stop()
        self.shared.waits.settle() if self.peer else self.shared.waits.stop()
        self.shared.wall.stop() if not self.peer else None

class HueyPeriodicBackend:  # jobconform run --backend huey_periodic:HueyPeriodicBackend
    name, profile, capabilities = "huey-periodic", "canonical", frozenset({"scheduling"})
    def open_scheduling(self, clock: runtime.Clock, config: protocol.SchedulingConfig,
                        target: protocol.SchedulingTarget) -> HueyPeriodicRuntime:
        huey = MemoryHuey(f"jobconform-{uuid.uuid4().hex}", utc=False)  # naive, on WallClock
        shared = SimpleNamespace(huey=huey, now=clock.now, target=target, tasks={},
                                 consumers=[], wall=WallClock(clock).start(), autonomy=True,
                                 waits=ThreadWaits(clock, in_turn=True).start(),
                                 records=memory.InMemoryScheduleStore())
        shared.once = huey.task(name="once")(lambda schedule_id: fire(shared, schedule_id))
        return HueyPeriodicRuntime(shared)
