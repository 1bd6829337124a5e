"""Celery beat: per zone an app whose `beat_schedule` each scheduler's embedded beat (ThreadWaits,
WallClock, its PersistentScheduler file) merges; a one-shot job: (run_at - creation), once."""

import logging
import shelve
import tempfile
from datetime import UTC, datetime
from types import SimpleNamespace

from celery import Celery, beat, schedules

from jobconform import bridges
from jobconform.backends.scheduling import memory, protocol, runtime

logging.getLogger("celery").setLevel(logging.CRITICAL)  # beat logs every fire it sends
MAX_INTERVAL = 1.0  # beat's longest sleep between its looks at the schedule (default 300 s)

def crontab(expression: str, timezone: str) -> schedules.crontab:
    try:  # cron's five fields (crontab's own order differs); the expression first, as the spec
        matches = schedules.crontab.from_string(expression)
    except ValueError as error:
        raise protocol.ScheduleRejected("expression", str(error)) from None
    bridges.known_zone(timezone)
    return matches

class FiringScheduler(beat.PersistentScheduler):
    def apply_async(self, entry: beat.ScheduleEntry, producer: object = None,
                    advance: bool = True, **kwargs: object) -> object:
        due = self.app.now() + entry.schedule.remaining_estimate(entry.last_run_at)
        if not isinstance(entry.schedule, schedules.crontab):  # a one-shot job's: it is done
            self.schedule.pop(entry.name, None)
        return self.app.tasks["fire"].apply_async((entry.name, due.astimezone(UTC)))
    def adjust(self, n: float | None, drift: float = 0.0) -> float | None:
        return n  # no 10 ms early wake: a virtual wait ends on time, and an early one spins

class CeleryBeats:  # one scheduler's beats, a beat per zone; HeldSchedules keeps the records
    def __init__(self, shared: SimpleNamespace, slot: str) -> None:
        self.shared, self.slot, self.now, self.group = shared, slot, shared.now, shared.schedulers
        self.beats: dict[str, beat.Service] = {}  # zone -> this scheduler's beat
        self.held = bridges.HeldSchedules(  # its library: this, asked next_fire of a cron only
            shared.store, shared.target, self.now, self.next_fire, self, once_as_held=True)
        self.check = crontab  # what HeldSchedules asks of a cron before it keeps it

    def again(self, restart: bool) -> "CeleryBeats":  # a restart: its slot's files again
        return CeleryBeats(self.shared, self.slot if restart else f"peer{len(self.group.running)}")

    def app(self, zone: str) -> Celery:  # one app per zone: a crontab reads its app's zone
        if zone not in self.shared.apps:
            self.shared.apps[zone] = app = Celery(f"beat-{zone}", broker="memory://")
            app.conf.update(timezone=zone, task_always_eager=True, beat_schedule={})
            app.task(name="fire", shared=False, typing=False)(self.fire)
        return self.shared.apps[zone]

    def filename(self, zone: str) -> str:  # a scheduler's file for a zone: its restart's too
        return f"{self.shared.folder}/{self.slot}-{zone.replace('/', '_')}"

    def fire(self, schedule_id: str, due: datetime) -> None:  # beat's due time: the fire's
        if (fired := self.held.fired(schedule_id, due)) and fired.kind == "once":
            self.app("UTC").conf.beat_schedule.pop(schedule_id, None)  # a restart: not again

    def declare(self, schedule: runtime.StoredSchedule) -> None:  # an entry as beat builds one
        zone, entry = schedule.timezone or "UTC", {"task": "fire", "last_run_at": self.now()}
        if schedule.kind == "once":  # every (run_at - creation) from its creation
            entry.update(last_run_at=schedule.created_at,
                         schedule=schedule.next_fire_at - schedule.created_at)
        else:  # a new cron entry, or a new timetable: its last run is now
            entry.update(schedule=crontab(str(schedule.expression), zone))
        self.app(zone).conf.beat_schedule[schedule.schedule_id] = entry
        self.merge(zone)

    def withdraw(self, schedule: runtime.StoredSchedule) -> None:
        zone = schedule.timezone or "UTC"
        self.app(zone).conf.beat_schedule.pop(schedule.schedule_id, None)
        self.merge(zone)

    def merge(self, zone: str) -> None:  # what a beat merges in as it starts, a running one now
        for scheduler in self.group.running:  # a new zone: a new beat in every scheduler
            scheduler.start()
        for running in [s.beats[zone] for s in self.group.running if zone in s.beats]:
            running.service.scheduler.merge_inplace(self.app(zone).conf.beat_schedule)

    def next_fire(self, schedule: runtime.StoredSchedule) -> datetime | None:  # a cron's
        zone, sid = str(schedule.timezone), schedule.schedule_id  # its entry's last run:
        if zone in self.beats:  # its running beat's, else its file's, else as declared
            entry = self.beats[zone].service.scheduler.schedule.get(sid)
        else:
            with shelve.open(self.filename(zone)) as kept:
                entry = kept.get("entries", {}).get(sid)
        declared = self.app(zone).conf.beat_schedule[sid]  # its crontab, on its zone's app
        last = entry.last_run_at if entry else declared["last_run_at"]
        timetable = schedules.maybe_schedule(declared["schedule"], app=self.app(zone))
        left = timetable.remaining_estimate(last)
        return (self.now() + left).astimezone(UTC)

    def start(self) -> None:  # a beat for every zone, reading its app's beat_schedule
        zones = [z for z in self.shared.apps if z not in self.beats] if self.group.autonomy else []
        for zone in zones:
            self.beats[zone] = service = beat.EmbeddedService(
                self.shared.apps[zone], thread=True, max_interval=MAX_INTERVAL,
                schedule_filename=self.filename(zone), scheduler_cls=FiringScheduler)
            with self.shared.waits.adopting():
                service.start()
        self.shared.waits.settle()

    def stop(self) -> None:  # each stops at its next look (its sleep ends): its file synced
        for service in self.beats.values():
            service.service.stop()
            self.shared.waits.join_woken(service)
        self.beats.clear()

class CeleryBeatBackend:  # jobconform run --backend celery_beat:CeleryBeatBackend
    name, profile, libraries = "celery-beat", "canonical", ("celery",)
    capabilities = frozenset({"scheduling"})
    def open_scheduling(self, clock: runtime.Clock, config: protocol.SchedulingConfig,
                        target: protocol.SchedulingTarget) -> bridges.HeldScheduler[CeleryBeats]:
        wall, waits = bridges.WallClock(clock).start(), bridges.ThreadWaits(clock).start()
        shared = SimpleNamespace(now=clock.now, target=target, store=memory.InMemoryScheduleStore(),
                                 apps={}, folder=tempfile.mkdtemp(prefix="celery-beat-"),
                                 waits=waits, schedulers=bridges.Schedulers(waits, wall))
        return bridges.HeldScheduler(CeleryBeats(shared, "main"), shared.schedulers, waits.settle)
