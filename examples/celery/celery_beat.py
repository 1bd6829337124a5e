"""Celery beat: per time zone a Celery app (its `timezone`) and, per scheduler, an embedded beat
(a thread asleep under ThreadWaits, 1 s max interval) over its own PersistentScheduler file, on
WallClock. Schedules: each app's `beat_schedule`, merged into a beat as it starts and into a
running one; a one-shot job: every (run_at - creation) from its creation, fired once, eagerly."""

import logging
import shelve
import tempfile
import zoneinfo
from datetime import UTC, datetime
from types import SimpleNamespace

from celery import Celery, beat, schedules

from jobconform.backends.scheduling import memory, protocol, runtime
from jobconform.bridges import HeldSchedules, ThreadWaits, WallClock
from jobconform.reference.scheduling.oracle import Trigger

logging.getLogger("celery").setLevel(logging.CRITICAL)  # beat logs every fire it sends
MAX_INTERVAL = 1.0  # beat's longest sleep between its looks at the schedule (default 300 s)


def crontab(expression: str, timezone: str) -> schedules.crontab:
    try:  # cron's five fields (crontab's own order differs); the expression first, as the spec
        matches = schedules.crontab.from_string(expression)
    except ValueError as error:
        raise protocol.ScheduleRejected("expression", str(error)) from None
    if timezone not in zoneinfo.available_timezones():
        raise protocol.ScheduleRejected("timezone", f"not an IANA time zone: {timezone!r}")
    return matches
class FiringScheduler(beat.PersistentScheduler):
    def apply_async(self, entry: beat.ScheduleEntry, producer: object = None,
                    advance: bool = True, **kwargs: object) -> object:
        due = self.app.now() + entry.schedule.remaining_estimate(entry.last_run_at)
        if not isinstance(entry.schedule, schedules.crontab):  # a one-shot job's: it is done
            self.schedule.pop(entry.name, None)
        return self.app.tasks["fire"].apply_async((entry.name, due.astimezone(UTC)))
    def adjust(self, n: float | None, drift: float = 0.0) -> float | None:  # beat wakes 10 ms
        return n  # early against a sleep's overshoot; a virtual wait ends on time, and one
        # 10 ms or less before a fire time would spin without ever sleeping
class CeleryBeatRuntime:
    def __init__(self, shared: SimpleNamespace, slot: str) -> None:
        self.shared, self.slot, self.beats = shared, slot, {}  # zone -> this scheduler's beat
        self.now, self.settle = shared.now, shared.waits.settle
        self.held = HeldSchedules(shared.store, shared.target, shared.now, self.next_fire)
        self.get, self.list_schedules = self.held.get, self.held.list_schedules
        self.history, self.trigger = self.held.history, self.held.trigger
        shared.running.append(self)
        self.start_beats()
        self.open_peer = lambda: CeleryBeatRuntime(shared, f"peer{len(shared.running)}")
        self.reopen = lambda: CeleryBeatRuntime(shared, slot)
    def app(self, zone: str) -> Celery:  # one app per zone: a crontab reads its app's zone
        if zone not in self.shared.apps:
            self.shared.apps[zone] = app = Celery(f"beat-{zone}", broker="memory://")
            app.conf.update(timezone=zone, task_always_eager=True, beat_schedule={})
            app.task(name="fire", shared=False, typing=False)(self.fire)
        return self.shared.apps[zone]
    def filename(self, zone: str) -> str:  # a scheduler's file for a zone: its restart's too
        return f"{self.shared.folder}/{self.slot}-{zone.replace('/', '_')}"
    def fire(self, schedule_id: str, due: datetime) -> None:  # beat's due time: the fire's
        if (schedule := self.shared.store.get(schedule_id)) is not None:
            self.held.run(schedule, due, Trigger.SCHEDULE)
        if schedule is not None and schedule.kind == "once":  # done: a restart drops it
            self.shared.store.claim(schedule_id, schedule.next_fire_at, None)
            self.app("UTC").conf.beat_schedule.pop(schedule_id, None)
    def start_beats(self) -> None:  # a beat for every zone, reading its app's beat_schedule
        for zone in [z for z in self.shared.apps if z not in self.beats and self.shared.autonomy]:
            self.beats[zone] = service = beat.EmbeddedService(
                self.shared.apps[zone], thread=True, max_interval=MAX_INTERVAL,
                schedule_filename=self.filename(zone), scheduler_cls=FiringScheduler)
            with self.shared.waits.adopting():
                service.start()
        self.settle()
    def declare(self, zone: str, schedule_id: str, entry: dict[str, object] | None) -> None:
        declared = self.app(zone).conf.beat_schedule  # what a beat merges in as it starts,
        declared.pop(schedule_id, None) if entry is None else declared.update({schedule_id: entry})
        for scheduler in self.shared.running:  # and a running one now (a new zone: a new beat)
            scheduler.start_beats()
        for running in [s.beats[zone] for s in self.shared.running if zone in s.beats]:
            running.service.scheduler.merge_inplace(declared)
    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        matches = crontab(expression, timezone)  # its app: the beat's, as beat builds an entry
        sid = self.held.add_cron(message, expression, timezone, pre_check)
        self.declare(timezone, sid, {"task": "fire", "schedule": matches,
                                     "last_run_at": self.now()})
        return sid
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        once = self.held.add_once(message, run_at, delay_seconds, pre_check)
        self.declare("UTC", once.schedule_id, {"task": "fire", "last_run_at": once.created_at,
                                               "schedule": once.next_fire_at - once.created_at})
        return once.schedule_id
    def edit(self, sid: str, message: str | None = None, expression: str | None = None,
             timezone: str | None = None) -> None:
        new, retimed = self.held.edited(sid, message, expression, timezone)
        if retimed:  # a new entry: its last run is now, as for a new schedule
            matches = crontab(str(new.expression), str(new.timezone))
            self.declare(str(self.held.held(sid).timezone), sid, None)
            self.declare(str(new.timezone), sid, {"task": "fire", "schedule": matches,
                                                  "last_run_at": self.now()})
        self.shared.store.replace(new)
    def delete(self, schedule_id: str) -> None:
        self.declare(self.held.held(schedule_id).timezone or "UTC", schedule_id, None)
        self.shared.store.remove(schedule_id)
    def set_autonomy(self, enabled: bool) -> None:  # off: every beat stops; on: they start
        self.shared.autonomy = enabled
        for scheduler in list(self.shared.running):
            scheduler.stop_beats() if not enabled else scheduler.start_beats()
    def next_fire(self, schedule: runtime.StoredSchedule) -> datetime | None:
        if schedule.kind == "once":
            return schedule.next_fire_at
        zone, sid = str(schedule.timezone), schedule.schedule_id  # its entry's last run:
        if zone in self.beats:  # its running beat's, else its file's, else as declared
            entry = self.beats[zone].service.scheduler.schedule.get(sid)
        else:
            with shelve.open(self.filename(zone)) as kept:
                entry = kept.get("entries", {}).get(sid)
        last = entry.last_run_at if entry else self.app(zone).conf.beat_schedule[sid]["last_run_at"]
        timetable = crontab(str(schedule.expression), zone)  # on its zone's app, as in beat
        left = schedules.maybe_schedule(timetable, app=self.app(zone)).remaining_estimate(last)
        return (self.now() + left).astimezone(UTC)
    def stop_beats(self) -> None:  # each stops at its next look (its sleep ends), syncing
        for service in self.beats.values():  # its file
            service.service.stop()
            self.shared.waits.join_woken(service)
        self.beats.clear()
    def crash(self) -> None:
        self.stop_beats()
        self.shared.running.remove(self) if self in self.shared.running else None
    def close(self) -> None:  # a peer stops its beats; the first scheduler every one
        for scheduler in list(self.shared.running) if self.slot == "main" else [self]:
            scheduler.crash()
        if self.slot == "main":  # the bridges last: a restart's reopen still needs them
            self.shared.waits.stop()
            self.shared.wall.stop()
class CeleryBeatBackend:  # jobconform run --backend celery_beat:CeleryBeatBackend
    name, profile, libraries = "celery-beat", "canonical", ("celery",)
    capabilities = frozenset({"scheduling"})
    def open_scheduling(self, clock: runtime.Clock, config: protocol.SchedulingConfig,
                        target: protocol.SchedulingTarget) -> CeleryBeatRuntime:
        return CeleryBeatRuntime(SimpleNamespace(
            now=clock.now, target=target, store=memory.InMemoryScheduleStore(), apps={},
            running=[], autonomy=True, folder=tempfile.mkdtemp(prefix="celery-beat-"),
            wall=WallClock(clock).start(), waits=ThreadWaits(clock).start()), "main")
