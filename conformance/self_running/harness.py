"""The self-running harness: the runtime acts by itself, the harness only lets time pass
and reads (spec area self-running, SR-001..SR-009).

The backend's runtime is opened with `open_self_running(settings, clock, clockwork)` and is
never told to dispatch, detect stuck jobs or expire leases. The harness submits jobs,
decides their bodies, sends heartbeats and advances the virtual clock. It never jumps over
a read point: `pass_time` stops at every instant the oracle (`jobconform.reference.
self_running`) marks in an open window (the last instant the action is still forbidden,
one inside the window, its close), settles the runtime and reads every job there. So an
action taken too early fails as surely as one taken late or never; the instant the runtime
recorded for it (started_at, finished_at) must lie in its window too.

A job waiting for a slot gets its start window when one frees, the oldest first (LC-010);
a retry or re-delivery that falls due while every slot is held is outside the model, so
checks that let jobs fail into retries or lose their leases give every job a slot.

Each job is followed through a small model: queued with the window its start falls in
(none while it waits for a slot), running since an instant with a last heartbeat, or
ended. A running job is watched only for the silences the backend claims a pass for: a
job timeout if it claims `stuck` (SR-002), a lease if it claims `redelivery` (SR-003); a
runtime that claims neither leaves a silent job running, and that is right for it. An ended
job is watched for its removal by the runtime's own reaper if the backend claims `reaper`
(SR-005): the runtime is opened with the profile's TTL and sweep interval in its settings,
and the job must still be held at finished_at + ttl and be gone one sweep interval later.
A backend that also claims `scheduling` has its scheduler watched the same way (SR-006,
`ScheduleWatch` in schedules.py): each fire's dispatch must reach the harness's target
inside its window, with nothing read from the scheduler on the way; claiming
`scheduling-ends` too, its scheduler is told to poll for the ends of what it dispatched
and must learn each within one poll interval after it (SR-009). A backend that also
claims `breaker-seams` has its breaker opened with the runtime and its backstop started
(SR-007, `BackstopWatch` in backstop.py): a lost drain's work must still be queued one
tick before each sweep boundary and be failed at it. A backend that also claims
`reminders` has its reminders opened on the first creation (SR-008, `ReminderWatch` in
reminders.py): each dispatch must reach the harness's target at the reminder's due time,
none one tick before it, with nothing read from the reminders on the way.
Windows are computed from the instants the runtime itself recorded once they have passed
their own check, so one late start does not shift every later verdict. The first
difference raises `Divergence` naming the requirement of the window it broke.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

from jobconform.backends.protocol import (
    REAPER,
    REDELIVERY,
    RETRY,
    STUCK,
    Backend,
    JobView,
    Runtime,
    RuntimeSettings,
    TaskScript,
)
from jobconform.backends.self_running import SELF_RUNNING, Clockwork
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import (
    SAFETY_TIMEOUT_SECONDS,
    AdapterError,
    Divergence,
)
from jobconform.conformance.self_running.backstop import BackstopWatch, watches_backstop
from jobconform.conformance.self_running.reminders import ReminderWatch, watches_reminders
from jobconform.conformance.self_running.schedules import (
    END_REQUIREMENT,
    FIRE_REQUIREMENT,
    EndPlan,
    ScheduleWatch,
    watches_ends,
)
from jobconform.conformance.watchdog import guarded
from jobconform.reference import commands as cmd
from jobconform.reference import self_running as oracle
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.breaker.commands import TripWithLostDrain
from jobconform.reference.lifecycle import POISON_ERROR, STUCK_ERROR
from jobconform.reference.reminders.commands import CreateReminder
from jobconform.reference.scheduling.commands import CreateCron, CreateOnce
from jobconform.reference.self_running import Window
from jobconform.spec import Profile, Registry

T = TypeVar("T")

QUEUED, RUNNING, SUCCEEDED, FAILED = "queued", "running", "succeeded", "failed"
# An ended job the runtime's own reaper removed (SR-005): nothing of it is read any more.
REMOVED = "removed"
# A re-delivered job's new start: within one more poll interval after its re-queue (SR-003).
RESTART = "start again (re-delivered)"

REQUIREMENT_OF_ACTION = {
    oracle.START: "SR-001",
    oracle.FAIL_STUCK: "SR-002",
    oracle.REQUEUE: "SR-003",
    RESTART: "SR-003",
    oracle.START_RETRY: "SR-004",
    oracle.REAP: "SR-005",
    oracle.FIRE: FIRE_REQUIREMENT,
    oracle.DELIVER: "SR-008",
    oracle.LEARN_END: END_REQUIREMENT,
}
# A job's body decided by the harness ends at once (LC-002's transitions); a retried
# failure goes back to the queue (RT-003), whose new start SR-004 bounds.
OUTCOME_REQUIREMENTS = ("LC-002",)
RETRY_REQUIREMENTS = ("SR-004", "RT-003")


# What a test tells the harness to do: one of its methods, called by `run`. The runtime
# acts by itself, so no command goes to an oracle for an answer; each method records the
# job command it stands for.
Act = Callable[["SelfRunningHarness"], None]


def poll_interval_of(profile: Profile) -> float:
    """The profile's poll interval, which every bound of the area counts in."""
    return float(profile.parameter(SELF_RUNNING, "poll_interval_seconds"))  # type: ignore[arg-type]


@dataclass
class JobModel:
    """What the harness knows of one job, and the window its next action falls in."""

    alias: str
    job_id: str
    script: TaskScript
    retry: RetryPolicy | None
    status: str = QUEUED
    window: Window | None = None  # a queued job's start window; None: waits for a slot
    started_at: datetime | None = None
    last_heartbeat: datetime | None = None
    finished_at: datetime | None = None  # an ended job's, which its reaper window counts from
    redeliveries: int = 0
    retries: int = 0


def _shown(view: JobView) -> str:
    fields = ("status", "started_at", "finished_at", "error", "last_heartbeat",
              "redelivery_count", "retry_count")
    values = []
    for name in fields:
        value = getattr(view, name, None)
        if value is not None:
            values.append(f"{name}={value.isoformat() if isinstance(value, datetime) else value!r}")
    return f"Job({', '.join(values)})"


@dataclass
class SelfRunningHarness:
    """One self-running runtime of `backend`, driven only by time, checked against the
    oracle's windows.

    Args:
        max_concurrent: the runtime's slots (SR-001's limit).
        job_timeout_seconds, lease_seconds: the runtime's clockwork besides the profile's
            poll interval; a check keeps the one it does not look at far away.
    """

    backend: Backend
    profile: Profile
    registry: Registry | None = None
    max_concurrent: int = 2
    job_timeout_seconds: float = 60.0
    lease_seconds: float = 6000.0
    safety_timeout: float = SAFETY_TIMEOUT_SECONDS
    clock: VirtualClock = field(default_factory=lambda: VirtualClock(EPOCH))
    commands: list[cmd.Command] = field(default_factory=list)
    exercised: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.poll_interval = poll_interval_of(self.profile)
        # SR-002, SR-003 and SR-004 apply only with the backend's claim of the pass they
        # time (spec/self-running.yaml `needs`): unclaimed, the harness never expects it.
        claims = frozenset(self.backend.capabilities)
        self.watches_stuck, self.watches_leases = STUCK in claims, REDELIVERY in claims
        self.retries = RETRY in claims
        # SR-005 with the claim of `reaper`, and the profile's TTL and sweep interval.
        self.watches_reaper = REAPER in claims and REAPER in self.profile.areas
        defaults = RuntimeSettings(max_concurrent=self.max_concurrent, max_tasks=None)
        self.reaper_ttl_seconds, self.reaper_sweep_interval_ms = (
            (float(self.profile.parameter(REAPER, "ttl_seconds")),  # type: ignore[arg-type]
             float(self.profile.parameter(REAPER, "sweep_interval_ms")))  # type: ignore[arg-type]
            if REAPER in self.profile.areas
            else (defaults.reaper_ttl_seconds, defaults.reaper_sweep_interval_ms))
        self.clockwork = Clockwork(self.poll_interval, self.job_timeout_seconds,
                                   self.lease_seconds)
        max_redelivery = (int(self.profile.parameter(REDELIVERY, "max_redelivery"))  # type: ignore[arg-type]
                          if REDELIVERY in self.profile.areas else 3)
        self.settings = RuntimeSettings(max_concurrent=self.max_concurrent,
                                        max_tasks=self.profile.max_tasks,
                                        max_redelivery=max_redelivery,
                                        reaper_ttl_seconds=self.reaper_ttl_seconds,
                                        reaper_sweep_interval_ms=self.reaper_sweep_interval_ms)
        self._titles = ({r.id: r.title for r in self.registry.requirements}
                        if self.registry else {})
        self.jobs: dict[str, JobModel] = {}
        self._freed_at: list[datetime] = []  # when slots freed since the last read
        opener: Any = getattr(self.backend, "open_self_running", None)
        if not callable(opener):
            raise AdapterError(f"adapter {self.backend.name!r} claims {SELF_RUNNING} but has"
                               " no open_self_running(settings, clock, clockwork)")
        self.runtime: Runtime = self._call("open_self_running", lambda: opener(
            self.settings, self.clock, self.clockwork))
        # SR-006: the scheduler, opened on the first schedule, over the same clock.
        self.schedules = ScheduleWatch(self.backend, self.profile, self.clock,
                                       self.poll_interval, self._fail, self._call,
                                       self.exercised,
                                       watches_ends(self.backend, self.profile,
                                                    self.registry))
        # SR-007: the breaker, opened on the first trip, sweeping by itself.
        self.backstop = BackstopWatch(self.backend, self.profile, self.clock,
                                      watches_backstop(self.backend, self.profile,
                                                       self.registry),
                                      self._fail, self._call, self.exercised)
        if self.backstop.claimed:
            # Started with the runtime, so its boundaries count from the opening.
            self.backstop.open()
        # SR-008: the reminders, opened on the first creation, over the same clock.
        self.reminders = ReminderWatch(self.backend, self.profile, self.clock,
                                       watches_reminders(self.backend, self.profile,
                                                         self.registry),
                                       self._fail, self._call, self.exercised)

    # -- commands ------------------------------------------------------------------------

    def run(self, act: Act) -> None:
        """Do what a step or keyword says (conformance/self_running/declarations.py)."""
        act(self)

    def run_oracle(self, act: Act) -> None:
        """As `run`: the oracle here is the windows read off the runtime as time passes,
        with no model to run alone, so an oracle-only run (machine_runner.oracle_alone)
        runs the runtime too and is no floor."""
        act(self)

    def submit(self, alias: str, retry: RetryPolicy | None = None) -> None:
        """Submit a job whose body waits for the harness; it must start by itself."""
        if alias in self.jobs:
            raise ValueError(f"job {alias!r} is submitted already; use a new alias")
        if retry is not None and not self.retries:
            raise ValueError(f"backend {self.backend.name!r} does not claim {RETRY}:"
                             " submit without a retry policy")
        self.commands.append(cmd.Submit(alias, retry=retry))
        script = TaskScript()
        runtime = self.runtime
        job_id = self._call("submit", lambda: runtime.submit(script, retry) if retry is not None
                            else runtime.submit(script))
        self.jobs[alias] = JobModel(alias, str(job_id), script, retry)
        self._give_free_slots(self.clock.now())
        self.read()

    def finish(self, alias: str, outcome: cmd.Outcome) -> None:
        """Decide the body of a running job; the runtime records it at once (LC-002), and a
        failure its policy retries goes back to the queue with its due time (SR-004)."""
        job = self._job(alias)
        if job.status != RUNNING:
            raise ValueError(f"job {alias!r} is {job.status}; only a running body ends")
        self.commands.append(cmd.Finish(alias, outcome))
        job.script.decide(outcome)
        self._settle()
        now = self.clock.now()
        view = self._view(job)
        retried = (isinstance(outcome, cmd.Raise) and job.retry is not None
                   and job.retry.retries(outcome.error_type, job.retries))
        if retried:
            assert job.retry is not None
            if view.status != QUEUED or getattr(view, "retry_count", None) != job.retries + 1:
                raise self._fail(RETRY_REQUIREMENTS, f"job {alias!r} after a retried failure",
                                 f"queued with retry_count {job.retries + 1}", _shown(view))
            job.status, job.started_at, job.last_heartbeat = QUEUED, None, None
            job.window = oracle.retry_window(now, job.retry, job.retries, self.poll_interval)
            job.retries += 1
            job.script.next_attempt()
        else:
            wanted = SUCCEEDED if isinstance(outcome, cmd.Succeed) else FAILED
            if view.status != wanted:
                raise self._fail(OUTCOME_REQUIREMENTS, f"job {alias!r} after its body ended",
                                 wanted, _shown(view))
            self._ended(job, wanted, view.finished_at)
        self._give_free_slots(now)
        self.read()

    def schedule_once(self, alias: str, delay_seconds: float,
                      ends: EndPlan | None = None) -> None:
        """Create a one-shot job `delay_seconds` from now; it must fire by itself (SR-006),
        and with `ends` the scheduler must learn by itself how its execution ended
        (SR-009)."""
        # The scheduling area's own command, listed with the job commands in a reproducer.
        self.commands.append(cast(cmd.Command, CreateOnce(alias, f"one-shot {alias}",
                                                          delay_seconds=delay_seconds)))
        self.schedules.create_once(alias, delay_seconds, ends)
        self.read()

    def schedule_cron(self, alias: str, expression: str, timezone: str = "UTC",
                      ends: EndPlan | None = None) -> None:
        """Create a cron schedule; each of its fire times must fire by itself (SR-006),
        and with `ends` each execution's end must be learned by itself (SR-009)."""
        self.commands.append(cast(cmd.Command, CreateCron(alias, f"cron {alias}", expression,
                                                          timezone)))
        self.schedules.create_cron(alias, expression, timezone, ends)
        self.read()

    def trip_breaker_with_lost_drain(self, target: str, works: tuple[str, ...]) -> None:
        """Queue `works` for `target` and trip its breaker with the drain lost: the
        runtime's own backstop must fail them at its next sweep, not before (SR-007)."""
        self.commands.append(cast(cmd.Command, TripWithLostDrain(target, works)))
        self.read()
        self.backstop.trip_with_lost_drain(target, works)
        self.read()

    def remind(self, alias: str, delay_seconds: float, failures: int = 0) -> None:
        """Create a reminder `delay_seconds` from now whose first `failures` dispatches
        fail cleanly: each dispatch must come by itself at its due time (SR-008)."""
        self.commands.append(cast(cmd.Command, CreateReminder(
            alias, f"reminder {alias}", delay_seconds=delay_seconds)))
        self.reminders.create(alias, delay_seconds, failures)
        self.read()

    def heartbeat(self, alias: str) -> None:
        """The body of a running job reports progress: its windows move (ST-001)."""
        job = self._job(alias)
        self.commands.append(cmd.Heartbeat(alias))
        heartbeat: Any = getattr(self.runtime, "heartbeat", None)
        if not callable(heartbeat):
            raise AdapterError(f"adapter {self.backend.name!r}: its runtime has no heartbeat")
        self._call("heartbeat", lambda: heartbeat(job.job_id))
        if job.status == RUNNING:
            job.last_heartbeat = self.clock.now()
        self.read()

    def pass_time(self, seconds: float) -> None:
        """Let `seconds` pass, stopping to read at every read point of an open window on
        the way: the runtime acts by itself, or fails to."""
        if seconds < 0:
            raise ValueError(f"time only moves forward, not by {seconds}")
        self.commands.append(cmd.AdvanceTime(seconds))
        target = self.clock.now() + timedelta(seconds=seconds)
        while True:
            now = self.clock.now()
            points = [at for window in self._windows() for at in window.read_points()
                      if now < at < target] + [
                          at for at in (*self.backstop.read_points(),
                                        *self.reminders.read_points())
                          if now < at < target]
            stop = min(points, default=target)
            self.clock.advance((stop - now).total_seconds())
            self.read()
            if stop >= target:
                return

    def pass_through_windows(self) -> None:
        """Let time pass until every window now open has closed, reading on the way."""
        windows = self._windows()
        if windows:
            last = max(window.closes for window in windows)
            self.pass_time(max((last - self.clock.now()).total_seconds(), 0.0))

    def close(self) -> None:
        try:
            self.schedules.close()
            self.backstop.close()
            self.reminders.close()
        finally:
            runtime = self.runtime
            self._call("close", runtime.close)

    # -- reads ---------------------------------------------------------------------------

    def read(self) -> None:
        """Settle the runtime, then check every job against its window at this instant."""
        self._settle()
        now = self.clock.now()
        # Running jobs first: one that ended frees its slot for a queued job, whose start
        # window then opens at the instant the slot freed.
        for job in [job for job in self.jobs.values() if job.status == RUNNING]:
            self._check_running(job, self._view(job), now)
        self._give_free_slots(min(self._freed_at, default=now))
        self._freed_at.clear()
        for job in [job for job in self.jobs.values() if job.status == QUEUED]:
            self._check_queued(job, self._view(job), now)
        self._give_free_slots(now)
        if self.watches_reaper:
            for job in [job for job in self.jobs.values() if job.status in (SUCCEEDED, FAILED)]:
                self._check_ended(job, now)
        self.schedules.read(now)
        self.backstop.read(now)
        self.reminders.read(now)

    def status_of(self, alias: str) -> str:
        return self._job(alias).status

    def view_of(self, alias: str) -> JobView:
        return self._view(self._job(alias))

    def _check_queued(self, job: JobModel, view: JobView, now: datetime) -> None:
        window = job.window
        if view.status == QUEUED:
            if window is not None and window.requires(now):
                raise self._late(job, window, now, view)
            return
        if view.status != RUNNING:
            requirement = REQUIREMENT_OF_ACTION[window.action] if window else "SR-001"
            raise self._fail((requirement,), f"job {job.alias!r} while queued",
                             "queued, or running once started", _shown(view))
        started = view.started_at
        if window is None:
            raise self._fail(("SR-001", "LC-010"), f"job {job.alias!r} at"
                             f" {now.isoformat()}: every one of the {self.max_concurrent}"
                             " slots is taken", "queued", _shown(view))
        if window.forbids(now) or started is None or not window.holds(started):
            raise self._early_or_outside(job, window, started, view)
        self.exercised.add(REQUIREMENT_OF_ACTION[window.action])
        job.status, job.window, job.started_at = RUNNING, None, started
        job.last_heartbeat = getattr(view, "last_heartbeat", None) or started

    def _ended(self, job: JobModel, status: str, finished_at: datetime | None) -> None:
        """A job reached its end; a reaper the backend claims removes it in its window."""
        if self.watches_reaper and finished_at is None:
            raise self._fail(("SR-005",), f"job {job.alias!r} {status}", "a finished_at,"
                             " which the reaper's TTL counts from", None)
        job.status, job.finished_at = status, finished_at

    def _reap_window(self, job: JobModel) -> Window:
        assert job.finished_at is not None
        return oracle.reap_window(job.finished_at, self.reaper_ttl_seconds,
                                  self.reaper_sweep_interval_ms)

    def _check_ended(self, job: JobModel, now: datetime) -> None:
        """An ended job is held up to finished_at + ttl and gone a sweep interval after
        (SR-005): the runtime's own reaper removed it, with no start_reaper or sweep."""
        window = self._reap_window(job)
        runtime = self.runtime
        view = self._call("get", lambda: runtime.get(job.job_id))
        if view is not None:
            if window.requires(now):
                raise self._late(job, window, now, view)
            return
        if window.forbids(now):
            raise self._fail(("SR-005",), f"job {job.alias!r} read at {now.isoformat()}:"
                             " removed before its window", window.describe(), None)
        self.exercised.add("SR-005")
        job.status = REMOVED

    def _running_windows(self, job: JobModel) -> list[Window]:
        """The windows of the passes the backend claims, the first due first: none for a
        runtime with neither a stuck pass nor leases."""
        assert job.last_heartbeat is not None
        windows = []
        if self.watches_stuck:
            windows.append(oracle.stuck_window(job.last_heartbeat, self.job_timeout_seconds,
                                               self.poll_interval))
        if self.watches_leases:
            windows.append(oracle.lease_window(job.last_heartbeat, self.lease_seconds,
                                               self.poll_interval))
        return sorted(windows, key=lambda window: window.opens)

    def _check_running(self, job: JobModel, view: JobView, now: datetime) -> None:
        windows = self._running_windows(job)
        redelivered = getattr(view, "redelivery_count", 0) or 0
        if (view.status == RUNNING and redelivered == job.redeliveries
                and view.started_at == job.started_at):
            if windows and windows[0].requires(now):
                raise self._late(job, windows[0], now, view)
            return
        if not windows:
            # Only its body ends a job when no pass of the runtime's own is claimed.
            raise self._fail(OUTCOME_REQUIREMENTS, f"job {job.alias!r} at {now.isoformat()}"
                             " (no stuck pass or lease claimed)", "running until its body"
                             " ends", _shown(view))
        first = windows[0]
        if view.status == FAILED and view.error == STUCK_ERROR:
            if first.action != oracle.FAIL_STUCK or first.forbids(now):
                raise self._early_or_outside(job, first, view.finished_at, view)
            finished = view.finished_at
            if finished is None or not first.holds(finished):
                raise self._early_or_outside(job, first, finished, view)
            self.exercised.add("SR-002")
            self._ended(job, FAILED, finished)
            self._freed_at.append(finished)
            return
        if (view.status == FAILED and view.error == POISON_ERROR
                and job.redeliveries >= self.settings.max_redelivery):
            # At the cap the lease pass parks the job instead (RD-003), in the same window.
            finished = view.finished_at
            if (first.action != oracle.REQUEUE or first.forbids(now) or finished is None
                    or not first.holds(finished)):
                raise self._early_or_outside(job, first, finished, view)
            self.exercised.add("SR-003")
            self._ended(job, FAILED, finished)
            self._freed_at.append(finished)
            return
        if redelivered == job.redeliveries + 1 and view.status in (QUEUED, RUNNING):
            if first.action != oracle.REQUEUE or first.forbids(now):
                raise self._early_or_outside(job, first, None, view)
            self.exercised.add("SR-003")
            self._freed_at.append(first.opens)
            job.redeliveries += 1
            job.status, job.started_at, job.last_heartbeat = QUEUED, None, None
            # Re-queued within the lease window, started again within one more interval.
            job.window = Window(RESTART, first.opens,
                                first.closes + oracle.poll(self.poll_interval),
                                at_opening=False)
            job.script.next_attempt()
            self._check_queued(job, view, now)
            return
        raise self._fail((REQUIREMENT_OF_ACTION[first.action],),
                         f"job {job.alias!r} at {now.isoformat()}",
                         f"running until it is due to {first.describe()}", _shown(view))

    def _give_free_slots(self, now: datetime) -> None:
        """A queued job waiting for a slot gets its start window when one frees: the
        oldest first (LC-010's submission order)."""
        running = sum(job.status == RUNNING for job in self.jobs.values())
        promised = sum(job.status == QUEUED and job.window is not None
                       for job in self.jobs.values())
        free = self.max_concurrent - running - promised
        for job in self.jobs.values():
            if free <= 0:
                return
            if job.status == QUEUED and job.window is None:
                job.window = oracle.start_window(now, self.poll_interval)
                free -= 1

    def _windows(self) -> list[Window]:
        windows: list[Window] = []
        for job in self.jobs.values():
            if job.status == QUEUED and job.window is not None:
                windows.append(job.window)
            elif job.status == RUNNING:
                windows.extend(self._running_windows(job)[:1])
            elif job.status in (SUCCEEDED, FAILED) and self.watches_reaper:
                windows.append(self._reap_window(job))
        return windows + self.schedules.windows() + self.reminders.windows()

    # -- verdicts ------------------------------------------------------------------------

    def _late(self, job: JobModel, window: Window, now: datetime, view: JobView) -> Divergence:
        return self._fail((REQUIREMENT_OF_ACTION[window.action],),
                          f"job {job.alias!r} read at {now.isoformat()}, the window's close:"
                          f" nothing happened by itself", window.describe(), _shown(view))

    def _early_or_outside(self, job: JobModel, window: Window, at: datetime | None,
                          view: JobView) -> Divergence:
        when = "at an instant it records outside" if at is not None and self.clock.now() >= (
            window.opens) else "before"
        return self._fail((REQUIREMENT_OF_ACTION[window.action],),
                          f"job {job.alias!r} read at {self.clock.now().isoformat()}: it acted"
                          f" {when} its window", window.describe(), _shown(view))

    def _fail(self, requirements: tuple[str, ...], what: str, expected: object,
              actual: object) -> Divergence:
        return Divergence(requirements, what, expected, actual, self.commands, self._titles)

    # -- calls ---------------------------------------------------------------------------

    def _job(self, alias: str) -> JobModel:
        try:
            return self.jobs[alias]
        except KeyError:
            raise ValueError(f"no job {alias!r} was submitted; submit it first") from None

    def _view(self, job: JobModel) -> JobView:
        runtime = self.runtime
        view = self._call("get", lambda: runtime.get(job.job_id))
        if view is None:
            raise self._fail(("LC-018",), f"job {job.alias!r}", "held by the runtime", None)
        return view

    def _settle(self) -> None:
        self._call("settle", self.runtime.settle)
        self.schedules.settle()
        self.backstop.settle()
        self.reminders.settle()

    def _call(self, action: str, function: Callable[[], T]) -> T:
        with guarded(self.safety_timeout, f"{self.backend.name}: {action}"):
            try:
                return function()
            except (Divergence, AdapterError):
                raise
            except Exception as error:
                raise AdapterError(f"adapter {self.backend.name!r} raised in {action}:"
                                   f" {type(error).__name__}: {error}") from error
