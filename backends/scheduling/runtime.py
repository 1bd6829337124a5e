"""The step scheduler: seed 002's schedules over any schedule store.

Deterministic and single-threaded: `settle` is the scheduler's wake-up, firing what the
clock has reached. A fire is claimed before it is executed, by moving the schedule's
next_fire_at with a compare-and-set on the store: of two schedulers only the one whose
move lands executes it (SC-008). A scheduler opening over a store runs the boot catch-up
first: the fires of each cron schedule that fell while no scheduler ran follow the
profile's missed_fires (SC-007).
"""

from __future__ import annotations

import builtins
import json
import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache, partial
from typing import Protocol
from zoneinfo import ZoneInfo

from jobconform.backends.protocol import Clock
from jobconform.backends.scheduling.protocol import (
    PreCheckFailed,
    PreCheckTimedOut,
    ScheduleNotFound,
    ScheduleRejected,
    SchedulingConfig,
    SchedulingTarget,
)
from jobconform.backends.scheduling.timetable import (
    CronSyntaxError,
    fire_times,
    next_fire_time,
    parse,
    zone,
)
from jobconform.reference.scheduling.oracle import (
    CRON,
    ONCE,
    BusinessStatus,
    ExecutionOutcome,
    ExecutionStatus,
    MissedFires,
    PreCheckAnswer,
    Trigger,
)

REJECTION_TEXT = {
    "schedule": "give exactly one of run_at (a timezone-aware instant) and delay_seconds"
                " (a finite number of seconds, at least 0)",
    "expression": "not a five-field cron expression that ever matches",
    "timezone": "not an IANA time zone name (such as Europe/Berlin)",
}
VALIDATION_REJECTION_TEXT = "a validation timeout is a finite number of seconds above 0"
EDIT_REJECTION_TEXT = {
    "schedule": "a one-shot job has no cron expression or time zone to change",
}
# An expression is checked for ever firing on UTC, whatever its zone (SC-003).
UTC_ZONE = ZoneInfo("UTC")



def run_at_asked(run_at: datetime | None, delay_seconds: float | None,
                 now: datetime) -> datetime | None:
    """The instant a one-shot creation asks for (SC-001), or None: exactly one of an aware
    run_at and a finite, non-negative delay_seconds must be given."""
    if run_at is not None and delay_seconds is None:
        return run_at.astimezone(UTC) if run_at.utcoffset() is not None else None
    if run_at is None and isinstance(delay_seconds, int | float) and not isinstance(
            delay_seconds, bool) and math.isfinite(delay_seconds) and delay_seconds >= 0:
        return now + timedelta(seconds=delay_seconds)
    return None


def timetable_problem(expression: str, timezone: str, now: datetime) -> str | None:
    """Why a cron timetable is refused (SC-003): code expression for an expression that
    does not parse or never fires, checked before code timezone for an unknown zone."""
    try:
        cron = parse(expression)
    except CronSyntaxError:
        return "expression"
    if next_fire_time(cron, UTC_ZONE, now) is None:
        return "expression"
    return "timezone" if zone(timezone) is None else None


# A pure function of its arguments (the instant `after` is, whatever its offset), which
# every settle asks again of the same timetables and fires, and each answer walks the local
# times of a day or more: the latest answers are kept.
@lru_cache(maxsize=4096)
def first_fire_after(expression: str, timezone: str, after: datetime) -> datetime:
    """The first fire time strictly after `after` of a timetable that passed its check."""
    tz = zone(timezone)
    fire = None if tz is None else next_fire_time(parse(expression), tz, after)
    assert fire is not None, f"{expression!r} in {timezone!r} passed its check yet never fires"
    return fire


def fires_until(expression: str, timezone: str, first: datetime,
                limit: datetime) -> tuple[list[datetime], datetime]:
    """The fire times from `first` (a fire time itself) up to, not including, `limit`, and
    the first one at or after `limit`."""
    if first >= limit:
        return [], first
    tz = zone(timezone)
    assert tz is not None
    passed = [first]
    for fire in fire_times(parse(expression), tz, first):
        if fire >= limit:
            return passed, fire
        passed.append(fire)
    raise AssertionError(f"{expression!r} in {timezone!r} stopped firing")

@dataclass(frozen=True)
class StoredSchedule:
    """One schedule; frozen, so handing it out is handing out a snapshot (SC-016)."""

    schedule_id: str
    kind: str
    message: str
    expression: str | None
    timezone: str | None
    pre_check: bool
    created_at: datetime
    next_fire_at: datetime | None
    validation: bool = False  # its successes are validated (SC-020)
    validation_timeout: float | None = None


@dataclass(frozen=True)
class StoredValidationRun:
    """A validation run started for one execution's technical success (SC-021)."""

    run_id: str
    schedule_id: str
    validates: str  # the execution_id of the execution it validates
    started_at: datetime
    timeout_seconds: float


@dataclass(frozen=True)
class StoredExecution:
    schedule_id: str
    scheduled_for: datetime
    started_at: datetime
    trigger: str
    status: str
    message: str | None
    cost: float | None
    pre_check: str | None
    outcome: str | None = None  # how it ended, once the runtime learns it (SC-019)
    execution_id: str | None = None  # named by its validation run (SC-021)
    business_status: str | None = None  # set with the end (SC-021), then by the verdict
    validation_run: str | None = None  # the run_id of its validation run


# How a validation run's verdict is judged: the run, read back, to the business status.
Judge = Callable[[StoredValidationRun], BusinessStatus]


class ScheduleStore(Protocol):
    """The durable half of a scheduler; time comes from the caller."""

    def add(self, schedule: StoredSchedule) -> None:
        """Keep a new schedule, after every one added before it (creation order)."""
        ...

    def get(self, schedule_id: str) -> StoredSchedule | None: ...

    def list(self) -> builtins.list[StoredSchedule]: ...

    def due(self, now: datetime) -> builtins.list[StoredSchedule]:
        """Schedules whose next_fire_at is at or before `now`, earliest first."""
        ...

    def next_due(self) -> datetime | None:
        """The earliest next_fire_at, or None."""
        ...

    def claim(self, schedule_id: str, expected: datetime | None,
              following: datetime | None) -> bool:
        """Move next_fire_at from `expected` to `following`, only if it is `expected`."""
        ...

    def replace(self, schedule: StoredSchedule) -> bool:
        """Write every field of a held schedule (an edit, SC-017), keeping its place in
        creation order; False when no schedule has its id."""
        ...

    def remove(self, schedule_id: str) -> bool:
        """Delete the schedule, its executions and their validation runs (SC-018); False
        when none has the id. Operator alerts stay (SC-024)."""
        ...

    def set_validation(self, schedule_id: str, enabled: bool, timeout_seconds: float) -> bool:
        """Write the schedule's validation switch and timeout alone (SC-020), never its
        next_fire_at, which another scheduler may be claiming; False when none has the id."""
        ...

    def record(self, execution: StoredExecution) -> None: ...

    def end(self, schedule_id: str, scheduled_for: datetime, outcome: str,
            cost: float | None, business_status: str | None = None,
            validation: StoredValidationRun | None = None) -> bool:
        """Set the outcome and cost of the first dispatched execution of that fire, in
        history order, that has no outcome yet (SC-019); False when there is none. With
        them, in the same write, its business status and its validation run, which the
        store keeps with `validates` set to that execution's id (SC-021)."""
        ...

    def decide(self, schedule_id: str, scheduled_for: datetime, judge: Judge) -> bool:
        """Set the business status `judge` gives the validation run of the first
        execution of that fire, in history order, pending validation, and in the same write
        an operator alert for a failed one (SC-022, SC-024); False when there is none."""
        ...

    def validation_run(self, run_id: str) -> StoredValidationRun | None: ...

    def alerts(self) -> builtins.list[str]:
        """The execution ids alerted, in the order alerted (SC-024)."""
        ...

    def history(self, schedule_id: str) -> builtins.list[StoredExecution]:
        """The schedule's executions by started_at, then scheduled_for, then as recorded."""
        ...

    def autonomy(self) -> bool:
        """The master switch; on until first set."""
        ...

    def set_autonomy(self, enabled: bool) -> None: ...

    def reopen(self) -> ScheduleStore:
        """A new store object over the same data, as after a process restart; it takes
        over this one's resources."""
        ...

    def share(self) -> ScheduleStore:
        """A second store object over the same data, for a second scheduler."""
        ...

    def close(self) -> None: ...


def verdict_passes(verdict: str) -> bool:
    """Only a JSON object whose member passed is true is a pass (SC-022); free text is
    never read for a pass, whatever it says (SC-023)."""
    try:
        answer = json.loads(verdict)
    except ValueError:
        return False
    return isinstance(answer, dict) and answer.get("passed") is True


def runs_pre_check(schedule: StoredSchedule, trigger: Trigger) -> bool:
    """Whether an execution asks the schedule's pre-check: a scheduled fire (or catch-up) of
    a schedule with a hook does; a manual trigger never does, as explicit operator intent
    always fires (seed 002 §10.6.1)."""
    return schedule.pre_check and trigger is not Trigger.MANUAL


def pre_check_verdict(target: SchedulingTarget, schedule_id: str) -> PreCheckAnswer | str:
    """The hook's verdict: SKIP, its output to dispatch, or a failure that fails open
    (SC-012..SC-014)."""
    try:
        output: object = target.pre_check(schedule_id)
    except PreCheckTimedOut:
        return PreCheckAnswer.TIMEOUT
    except PreCheckFailed:
        return PreCheckAnswer.ERROR
    if not isinstance(output, str):
        return PreCheckAnswer.ERROR  # a malformed answer fails open too
    return output if output else PreCheckAnswer.SKIP  # empty output: skip (SC-012)


def execute(store: ScheduleStore, target: SchedulingTarget, schedule: StoredSchedule,
            scheduled_for: datetime, trigger: Trigger, now: datetime,
            ask: Callable[[str], PreCheckAnswer | str] | None) -> None:
    """One execution of a fire or a manual trigger, as seed 002 makes it, recorded in
    `store` (SC-015): `ask` (None: no pre-check) gives the pre-check's verdict first; a
    skip records a skipped execution at cost 0, anything else dispatches to `target` the
    hook's output or the schedule's message. A runtime that keeps no executions of its own
    calls this from where its library runs a fire (examples/apscheduler does).

    Args:
        ask: the pre-check, usually `partial(pre_check_verdict, target)` when
            `runs_pre_check(schedule, trigger)`, else None.
    """
    message, outcome = schedule.message, None
    if ask is not None:
        verdict = ask(schedule.schedule_id)
        if isinstance(verdict, PreCheckAnswer):
            outcome = verdict
        else:  # the hook's output replaces the message for this fire (SC-013)
            outcome, message = PreCheckAnswer.PROMPT, verdict
        if outcome is PreCheckAnswer.SKIP:
            store.record(StoredExecution(
                schedule.schedule_id, scheduled_for, now, trigger.value,
                ExecutionStatus.SKIPPED.value, None, 0.0, outcome.value,
                execution_id=str(uuid.uuid4())))
            return
    target.dispatch(schedule.schedule_id, scheduled_for, message)
    store.record(StoredExecution(
        schedule.schedule_id, scheduled_for, now, trigger.value,
        ExecutionStatus.DISPATCHED.value, message, None,
        None if outcome is None else outcome.value, execution_id=str(uuid.uuid4())))


def execute_as_seeded(store: ScheduleStore, target: SchedulingTarget, schedule: StoredSchedule,
                      scheduled_for: datetime, trigger: Trigger, now: datetime) -> None:
    """`execute` with the seed's pre-check: asked through `target` when `runs_pre_check`."""
    ask = partial(pre_check_verdict, target) if runs_pre_check(schedule, trigger) else None
    execute(store, target, schedule, scheduled_for, trigger, now, ask)


class StepSchedulingRuntime:
    def __init__(self, store: ScheduleStore, clock: Clock, config: SchedulingConfig,
                 target: SchedulingTarget) -> None:
        self._store = store
        self._clock = clock
        self._config = config
        self._target = target
        # SR-009: the interval of its own polls for the ends of what it dispatched, and
        # the next boundary; None until start_end_polls (the commanded mode).
        self._end_polls: timedelta | None = None
        self._next_end_poll: datetime | None = None
        self._catch_up()

    # -- creating -------------------------------------------------------------------------

    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        now = self._clock.now()
        resolved = run_at_asked(run_at, delay_seconds, now)
        if resolved is None:
            raise ScheduleRejected("schedule", REJECTION_TEXT["schedule"])
        return self._add(ONCE, message, None, None, pre_check, now, resolved)

    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        now = self._clock.now()
        problem = timetable_problem(expression, timezone, now)
        if problem is not None:
            raise ScheduleRejected(problem, f"{REJECTION_TEXT[problem]}: {expression!r},"
                                            f" {timezone!r}")
        return self._add(CRON, message, expression, timezone, pre_check, now,
                         self._first_fire(expression, timezone, now))

    def _first_fire(self, expression: str, timezone: str, now: datetime) -> datetime:
        return first_fire_after(expression, timezone, now)

    def _add(self, kind: str, message: str, expression: str | None, timezone: str | None,
             pre_check: bool, now: datetime, first: datetime) -> str:
        schedule_id = str(uuid.uuid4())
        self._store.add(StoredSchedule(schedule_id, kind, message, expression, timezone,
                                       pre_check, now, first))
        self._schedules_changed()
        return schedule_id

    # -- editing and deleting -------------------------------------------------------------

    def edit(self, schedule_id: str, message: str | None = None,
             expression: str | None = None, timezone: str | None = None) -> None:
        schedule = self._store.get(schedule_id)
        if schedule is None:
            raise ScheduleNotFound(schedule_id)
        now = self._clock.now()
        timetable = None  # an edit that names neither keeps the timetable (SC-017)
        if expression is not None or timezone is not None:
            if schedule.kind != CRON:
                raise ScheduleRejected("schedule", f"{EDIT_REJECTION_TEXT['schedule']}:"
                                                   f" {expression!r}, {timezone!r}")
            assert schedule.expression is not None and schedule.timezone is not None
            timetable = (schedule.expression if expression is None else expression,
                         schedule.timezone if timezone is None else timezone)
            problem = timetable_problem(*timetable, now)
            if problem is not None:
                raise ScheduleRejected(problem, f"{REJECTION_TEXT[problem]}: {expression!r},"
                                                f" {timezone!r}")
        edited = replace(schedule, message=schedule.message if message is None else message)
        if timetable is not None:
            edited = replace(edited, expression=timetable[0], timezone=timetable[1],
                             next_fire_at=self._retimed(schedule, timetable, now))
        if not self._store.replace(edited):
            raise ScheduleNotFound(schedule_id)
        self._schedules_changed()

    def _retimed(self, schedule: StoredSchedule, timetable: tuple[str, str],
                 now: datetime) -> datetime | None:
        """The next fire time after an edit that changed the expression or zone: a new
        timetable starts from the edit, so fires of the old one not yet reached are
        dropped and the new one's first is strictly after now."""
        del schedule  # the old timetable does not count
        return self._first_fire(timetable[0], timetable[1], now)

    def delete(self, schedule_id: str) -> None:
        if not self._store.remove(schedule_id):
            raise ScheduleNotFound(schedule_id)
        self._schedules_changed()

    # -- the switch and manual triggers ---------------------------------------------------

    def set_autonomy(self, enabled: bool) -> None:
        if enabled and not self._store.autonomy():
            now = self._clock.now()
            for schedule in self._store.list():
                if schedule.kind == CRON and schedule.next_fire_at is not None:
                    self._resume(schedule, now)
        self._store.set_autonomy(enabled)
        self._schedules_changed()

    def _resume(self, schedule: StoredSchedule, now: datetime) -> None:
        """Drop the fires that fell while autonomy was off (SC-011)."""
        assert schedule.expression is not None and schedule.timezone is not None
        assert schedule.next_fire_at is not None
        _, following = fires_until(schedule.expression, schedule.timezone,
                                   schedule.next_fire_at, now)
        self._store.claim(schedule.schedule_id, schedule.next_fire_at, following)

    def trigger(self, schedule_id: str) -> None:
        schedule = self._store.get(schedule_id)
        if schedule is None:
            raise ScheduleNotFound(schedule_id)
        now = self._clock.now()
        self._execute(schedule, now, Trigger.MANUAL, now)
        self._schedules_changed()

    # -- how an execution ended -----------------------------------------------------------

    def end_execution(self, schedule_id: str, scheduled_for: datetime, outcome: str,
                      cost: float | None) -> bool:
        """The first end of an execution stays (SC-019): the store sets it only on an
        execution with none yet."""
        schedule = self._store.get(schedule_id)
        if schedule is None:
            raise ScheduleNotFound(schedule_id)
        status, run = self._business_start(schedule, outcome)
        return self._store.end(schedule_id, scheduled_for, outcome, cost, status, run)

    def _business_start(self, schedule: StoredSchedule, outcome: str
                        ) -> tuple[str, StoredValidationRun | None]:
        """What a technical end makes of the business status (SC-021): a success with
        validation on waits for a validation run started now; anything else, a failure
        or a cancellation above all, is skipped."""
        if outcome != ExecutionOutcome.SUCCEEDED or not schedule.validation:
            return BusinessStatus.SKIPPED.value, None
        assert schedule.validation_timeout is not None
        run = StoredValidationRun(str(uuid.uuid4()), schedule.schedule_id, "",
                                  self._clock.now(), schedule.validation_timeout)
        return BusinessStatus.PENDING_VALIDATION.value, run

    def start_end_polls(self, interval_seconds: float) -> None:
        """Poll the target for the ends of dispatched executions at every interval
        boundary from now on (SR-009); a step scheduler polls in `settle` once a boundary
        has come, a threaded one wakes for it."""
        if (isinstance(interval_seconds, bool) or not isinstance(interval_seconds, int | float)
                or not math.isfinite(interval_seconds) or interval_seconds <= 0):
            raise ValueError(f"an end poll interval is a finite number of seconds above 0,"
                             f" not {interval_seconds!r}")
        self._end_polls = timedelta(seconds=interval_seconds)
        self._next_end_poll = self._clock.now()
        self._schedules_changed()

    def _poll_ends_due(self, now: datetime) -> None:
        """One poll for ends if a boundary has come by `now`; the clock may have jumped
        over several, and one poll then sees every end they would have."""
        interval, due = self._end_polls, self._next_end_poll
        if interval is None or due is None or now < due:
            return
        self._poll_ends()
        while due <= now:
            due += interval
        self._next_end_poll = due

    def _poll_ends(self) -> None:
        """Ask the target about every dispatched execution with no end yet, and record
        each end it answers (SC-019's rule: the first end stays)."""
        for schedule in self._store.list():
            for execution in self._store.history(schedule.schedule_id):
                if (execution.status != ExecutionStatus.DISPATCHED.value
                        or execution.outcome is not None):
                    continue
                end = self._target.execution_end(schedule.schedule_id,
                                                 execution.scheduled_for)
                if end is not None:
                    self.end_execution(schedule.schedule_id, execution.scheduled_for,
                                       end.outcome, end.cost)

    # -- business validation ------------------------------------------------------------

    def set_validation(self, schedule_id: str, enabled: bool, timeout_seconds: float) -> None:
        if self._store.get(schedule_id) is None:
            raise ScheduleNotFound(schedule_id)
        if (isinstance(timeout_seconds, bool) or not isinstance(timeout_seconds, int | float)
                or not math.isfinite(timeout_seconds) or timeout_seconds <= 0):
            raise ScheduleRejected("validation", f"{VALIDATION_REJECTION_TEXT}:"
                                                 f" {timeout_seconds!r}")
        if not self._store.set_validation(schedule_id, enabled, float(timeout_seconds)):
            raise ScheduleNotFound(schedule_id)

    def end_validation(self, schedule_id: str, scheduled_for: datetime, verdict: str) -> bool:
        if self._store.get(schedule_id) is None:
            raise ScheduleNotFound(schedule_id)
        now = self._clock.now()

        def judge(run: StoredValidationRun) -> BusinessStatus:
            # A verdict after the run's time is up is not waited for (SC-022).
            in_time = now <= run.started_at + timedelta(seconds=run.timeout_seconds)
            return (BusinessStatus.VALIDATED if in_time and self._passes(verdict)
                    else BusinessStatus.FAILED_VALIDATION)

        return self._store.decide(schedule_id, scheduled_for, judge)

    def _passes(self, verdict: str) -> bool:
        return verdict_passes(verdict)

    def validation_run(self, run_id: str) -> StoredValidationRun | None:
        return self._store.validation_run(run_id)

    def operator_alerts(self) -> builtins.list[str]:
        return self._store.alerts()

    # -- reads ----------------------------------------------------------------------------

    def get(self, schedule_id: str) -> StoredSchedule | None:
        return self._store.get(schedule_id)

    def list_schedules(self) -> Sequence[StoredSchedule]:
        return self._store.list()

    def history(self, schedule_id: str) -> Sequence[StoredExecution]:
        if self._store.get(schedule_id) is None:
            raise ScheduleNotFound(schedule_id)
        return self._store.history(schedule_id)

    # -- firing ---------------------------------------------------------------------------

    def settle(self) -> None:
        now = self._clock.now()
        self._fire_due(now)
        self._poll_ends_due(now)

    def _fire_due(self, now: datetime) -> None:
        if not self._autonomy_on():
            return
        for schedule in self._store.due(now):
            fire = schedule.next_fire_at
            while fire is not None and fire <= now:
                following = self._following(schedule, fire)
                if not self._store.claim(schedule.schedule_id, fire, following):
                    break  # another scheduler took this fire: it executes it
                self._execute(schedule, fire, Trigger.SCHEDULE, now)
                fire = following

    def _autonomy_on(self) -> bool:
        """Read from the store at every pass: another scheduler may have flipped it."""
        return self._store.autonomy()

    def _following(self, schedule: StoredSchedule, fire: datetime) -> datetime | None:
        if schedule.kind == ONCE:
            return None
        assert schedule.expression is not None and schedule.timezone is not None
        return first_fire_after(schedule.expression, schedule.timezone, fire)

    def _catch_up(self) -> None:
        """Boot: the cron fires missed while no scheduler ran (SC-007). One-shot jobs
        stay due and fire at the next settle, whatever the policy (SC-002)."""
        if not self._store.autonomy():
            return  # held fires are dropped when autonomy comes back (SC-011)
        now = self._clock.now()
        for schedule in self._store.list():
            fire = schedule.next_fire_at
            if schedule.kind != CRON or fire is None or fire >= now:
                continue
            assert schedule.expression is not None and schedule.timezone is not None
            missed, following = fires_until(schedule.expression, schedule.timezone, fire, now)
            if self._store.claim(schedule.schedule_id, fire, following):
                for missed_fire in self._missed_to_run(missed):
                    self._execute(schedule, missed_fire, Trigger.CATCH_UP, now)

    def _missed_to_run(self, missed: list[datetime]) -> list[datetime]:
        """The missed fires that run on a catch-up, by the profile's policy (SC-007)."""
        policy = self._config.missed_fires
        if policy is MissedFires.ALL:
            return list(missed)
        if policy is MissedFires.ONE:
            return missed[-1:]  # the latest fire stands for the ones it follows
        return []

    def _execute(self, schedule: StoredSchedule, scheduled_for: datetime, trigger: Trigger,
                 now: datetime) -> None:
        """One execution of a claimed fire (or a manual trigger), recorded (SC-015)."""
        ask = self._pre_check if self._runs_pre_check(schedule, trigger) else None
        execute(self._store, self._target, schedule, scheduled_for, trigger, now, ask)

    def _runs_pre_check(self, schedule: StoredSchedule, trigger: Trigger) -> bool:
        return runs_pre_check(schedule, trigger)

    def _pre_check(self, schedule_id: str) -> PreCheckAnswer | str:
        return pre_check_verdict(self._target, schedule_id)

    def _schedules_changed(self) -> None:
        """A hook for schedulers with a thread: the next fire time may have moved."""

    # -- lifetime -------------------------------------------------------------------------

    def open_peer(self) -> StepSchedulingRuntime:
        return type(self)(self._store.share(), self._clock, self._config, self._target)

    def crash(self) -> None:
        self._stop()

    def reopen(self) -> StepSchedulingRuntime:
        return type(self)(self._store.reopen(), self._clock, self._config, self._target)

    def _stop(self) -> None:
        """Stop firing; a runtime with threads joins them here."""

    def close(self) -> None:
        self._stop()
        self._store.close()
