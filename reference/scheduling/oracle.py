"""The scheduling oracle: seed 002 §10.1, §10.2 and §10.6.1 as a pure model.

Schedules are one-shot jobs (run at an instant, or after a delay) and cron schedules (an
expression read on a time zone's wall clock). Every method takes the current time from
its caller and changes only this model, so the same commands at the same instants give
the same executions. Cron expressions are read by cronsim, which follows Debian cron
through daylight-saving changes (SC-004, SC-005); zones come from zoneinfo. Nothing here
reads a clock, sleeps or does I/O.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from jobconform.reference.numbers import is_finite_number

ONCE, CRON = "once", "cron"
CREATED = "created"
TRIGGERED = "triggered"
EDITED = "edited"
DELETED = "deleted"
NOT_FOUND = "not_found"
ENDED = "ended"
REFUSED = "refused"
VALIDATION_SET = "validation_set"
DECIDED = "decided"
# What a pre-check that finds work prints; the harness's hook answers with it.
PRE_CHECK_PROMPT = "work found by the pre-check"
# Rejection codes of a creation, with the requirement of each.
REJECTIONS = {"schedule": "SC-001", "expression": "SC-003", "timezone": "SC-003",
              "validation": "SC-020"}


class MissedFires(StrEnum):
    """What a scheduler starting after downtime does with the fires it missed (SC-007)."""

    ONE = "one"
    ALL = "all"
    NONE = "none"


class Trigger(StrEnum):
    SCHEDULE = "schedule"
    CATCH_UP = "catch_up"
    MANUAL = "manual"


class ExecutionStatus(StrEnum):
    DISPATCHED = "dispatched"
    SKIPPED = "skipped"


class ExecutionOutcome(StrEnum):
    """How a dispatched execution ended, as the runtime learns it (SC-019)."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class BusinessStatus(StrEnum):
    """Whether a technically ended execution did the work it was for (SC-021, SC-022)."""

    PENDING_VALIDATION = "pending_validation"
    VALIDATED = "validated"
    FAILED_VALIDATION = "failed_validation"
    SKIPPED = "skipped"


class Verdict(StrEnum):
    """How a validation run answers, as the harness scripts it (SC-022, SC-023)."""

    PASS = "pass"
    FAIL = "fail"
    PROSE = "prose"  # free text that says the work passed: not a verdict
    ODD_JSON = "odd_json"  # a JSON object whose member passed is not a boolean


# The text each scripted answer sends the runtime.
VERDICT_TEXT = {
    Verdict.PASS: '{"passed": true, "reason": "the report was written"}',
    Verdict.FAIL: '{"passed": false, "reason": "no report was written"}',
    Verdict.PROSE: "PASSED: the task looks complete to me.",
    Verdict.ODD_JSON: '{"passed": "yes"}',
}


class PreCheckAnswer(StrEnum):
    """How a schedule's pre-check answers, as the harness scripts it (SC-012..SC-014)."""

    SKIP = "skip"  # empty output, exit 0
    PROMPT = "prompt"  # output: the work to do
    ERROR = "error"  # a non-zero exit or a malformed answer
    TIMEOUT = "timeout"


def rejected(code: str) -> str:
    return f"rejected:{code}"


@dataclass(frozen=True)
class SchedulingConfig:
    """The area's parameters (profile defaults, or a check's own values).

    Raises:
        ValueError: an unknown missed-fire policy; the message names the known ones.
    """

    missed_fires: MissedFires = MissedFires.ONE

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "missed_fires", MissedFires(self.missed_fires))
        except ValueError:
            raise ValueError(f"scheduling parameter missed_fires must be one of"
                             f" {', '.join(MissedFires)}, not {self.missed_fires!r}") from None


# -- the rules as pure functions (the shipped schedulers have their own: backends/scheduling) --


def resolve_run_at(run_at: datetime | None, delay_seconds: float | None,
                   now: datetime) -> datetime | None:
    """The instant a one-shot creation asks for, or None when its schedule is invalid."""
    if (run_at is None) == (delay_seconds is None):
        return None
    if run_at is not None:
        return run_at.astimezone(UTC) if run_at.utcoffset() is not None else None
    assert delay_seconds is not None
    if not is_finite_number(delay_seconds) or delay_seconds < 0:
        return None
    return now + timedelta(seconds=delay_seconds)


def valid_timeout(seconds: object) -> bool:
    """A validation timeout is a finite number of seconds above 0 (SC-020)."""
    return is_finite_number(seconds) and seconds > 0


def read_verdict(text: str) -> bool | None:
    """True for a clear pass, False for a clear fail, None for an answer that is not a
    verdict (SC-022, SC-023): only a JSON object with a boolean member passed is one."""
    try:
        answer = json.loads(text)
    except ValueError:
        return None
    passed = answer.get("passed") if isinstance(answer, dict) else None
    return passed if isinstance(passed, bool) else None


def zone(name: str) -> ZoneInfo | None:
    """The IANA zone of that name, or None when there is none."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def edited_timetable(kind: str, expression: str | None, timezone: str | None,
                     current_expression: str | None,
                     current_timezone: str | None) -> tuple[str, str] | None:
    """The expression and zone a cron schedule has after an edit that names either
    (SC-017): each the current one when not given. None for an edit that names neither."""
    if expression is None and timezone is None:
        return None
    if kind != CRON:
        return ("", "")  # a one-shot job has no timetable to change: see edit_problem
    assert current_expression is not None and current_timezone is not None
    return (current_expression if expression is None else expression,
            current_timezone if timezone is None else timezone)


def edit_problem(kind: str, timetable: tuple[str, str] | None, now: datetime) -> str | None:
    """The rejection code of an edit (SC-017), or None: an expression or zone given for a
    one-shot job is code schedule; a cron schedule's new timetable is checked as at
    creation (expression, then timezone). Any message is accepted."""
    if timetable is None:
        return None
    if kind != CRON:
        return "schedule"
    return cron_problem(timetable[0], timetable[1], now)


def cron_problem(expression: str, timezone: str, now: datetime) -> str | None:
    """The rejection code of a cron creation (SC-003), or None: an expression that does
    not parse, or never matches, comes before an unknown zone."""
    try:
        next(CronSim(expression, now.astimezone(UTC)))
    except (CronSimError, StopIteration, ValueError):
        return "expression"
    return "timezone" if zone(timezone) is None else None


def fire_times(expression: str, timezone: str, after: datetime) -> Iterator[datetime]:
    """The fire times strictly after `after`, as UTC instants (SC-003..SC-005).

    cronsim walks the zone's wall clock: a matching local time inside a forward gap comes
    out as the first instant after the gap, and a matching time in a repeated hour comes
    out once unless the hour field starts with `*`. Equal instants are given once.
    """
    tz = zone(timezone)
    assert tz is not None, f"unknown zone {timezone!r} passed validation"
    previous = after
    for local in CronSim(expression, after.astimezone(tz)):
        instant = local.astimezone(UTC)
        if instant > previous:
            previous = instant
            yield instant


def next_fire(expression: str, timezone: str, after: datetime) -> datetime:
    """The first fire time strictly after `after`."""
    return next(fire_times(expression, timezone, after))


def fires_before(expression: str, timezone: str, first: datetime,
                 limit: datetime) -> tuple[list[datetime], datetime]:
    """The fire times from `first` (itself a fire time) up to, not including, `limit`,
    and the first fire time at or after `limit` (SC-007, SC-011)."""
    passed: list[datetime] = []
    current = first
    while current < limit:
        passed.append(current)
        current = next_fire(expression, timezone, current)
    return passed, current


def missed_to_run(missed: list[datetime], policy: MissedFires) -> list[datetime]:
    """Which of the missed fire times give an execution under the policy (SC-007)."""
    if policy is MissedFires.ALL:
        return list(missed)
    if policy is MissedFires.ONE:
        return missed[-1:]
    return []


# -- the model ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScheduleState:
    kind: str  # ONCE or CRON
    message: str
    expression: str | None
    timezone: str | None
    pre_check: bool
    created_at: datetime
    next_fire_at: datetime | None  # None: a one-shot job that has fired
    validation: bool = False  # SC-020
    validation_timeout: float | None = None


@dataclass(frozen=True)
class ValidationRun:
    """A validation run as its execution names it (SC-021): when it started and the
    timeout it carries; it validates the execution that names it."""

    started_at: datetime
    timeout_seconds: float


@dataclass(frozen=True)
class ExecutionState:
    scheduled_for: datetime
    started_at: datetime
    trigger: str
    status: str
    message: str | None
    cost: float | None
    pre_check: str | None
    outcome: str | None = None  # how it ended, once the runtime learns it (SC-019)
    business_status: str | None = None  # SC-021, SC-022
    validation: ValidationRun | None = None


@dataclass
class SchedulingOracle:
    config: SchedulingConfig
    schedules: dict[str, ScheduleState] = field(default_factory=dict)  # alias, creation order
    history: dict[str, list[ExecutionState]] = field(default_factory=dict)
    scripts: dict[str, PreCheckAnswer] = field(default_factory=dict)  # alias -> its hook's answer
    autonomy: bool = True
    # Dispatches made, by (alias, scheduled_for, message); pre-check calls, by alias.
    dispatches: Counter[tuple[str, datetime, str]] = field(default_factory=Counter)
    pre_checks: Counter[str] = field(default_factory=Counter)
    # Operator alerts raised, in order, by (alias, scheduled_for, trigger) (SC-024).
    alerts: list[tuple[str, datetime, str]] = field(default_factory=list)

    def create_once(self, alias: str, message: str, run_at: datetime | None,
                    delay_seconds: float | None, pre_check: PreCheckAnswer | None,
                    now: datetime) -> str:
        resolved = resolve_run_at(run_at, delay_seconds, now)
        if resolved is None:
            return rejected("schedule")
        self._add(alias, ScheduleState(ONCE, message, None, None, pre_check is not None, now,
                                       resolved), pre_check)
        return CREATED

    def create_cron(self, alias: str, message: str, expression: str, timezone: str,
                    pre_check: PreCheckAnswer | None, now: datetime) -> str:
        problem = cron_problem(expression, timezone, now)
        if problem is not None:
            return rejected(problem)
        first = next_fire(expression, timezone, now)
        self._add(alias, ScheduleState(CRON, message, expression, timezone,
                                       pre_check is not None, now, first), pre_check)
        return CREATED

    def _add(self, alias: str, state: ScheduleState, pre_check: PreCheckAnswer | None) -> None:
        self.schedules[alias] = state
        self.history[alias] = []
        if pre_check is not None:
            self.scripts[alias] = pre_check

    def script(self, alias: str, answer: PreCheckAnswer) -> None:
        """The schedule's pre-check answers `answer` from now on."""
        if alias in self.scripts:
            self.scripts[alias] = answer

    def trigger(self, alias: str, now: datetime) -> str:
        if alias not in self.schedules:
            return NOT_FOUND
        self._execute(alias, now, Trigger.MANUAL, now)
        return TRIGGERED

    def edit(self, alias: str, message: str | None, expression: str | None,
             timezone: str | None, now: datetime) -> str:
        """Change the fields given (SC-017); a new expression or zone restarts the
        timetable from `now`, anything else keeps next_fire_at."""
        state = self.schedules.get(alias)
        if state is None:
            return NOT_FOUND
        timetable = edited_timetable(state.kind, expression, timezone, state.expression,
                                     state.timezone)
        problem = edit_problem(state.kind, timetable, now)
        if problem is not None:
            return rejected(problem)
        edited = replace(state, message=state.message if message is None else message)
        if timetable is not None:
            edited = replace(edited, expression=timetable[0], timezone=timetable[1],
                             next_fire_at=next_fire(timetable[0], timetable[1], now))
        self.schedules[alias] = edited
        return EDITED

    def delete(self, alias: str) -> str:
        """Remove the schedule and its history (SC-018); it never fires again."""
        if alias not in self.schedules:
            return NOT_FOUND
        del self.schedules[alias]
        del self.history[alias]
        self.scripts.pop(alias, None)
        return DELETED

    def end_execution(self, alias: str, scheduled_for: datetime, outcome: ExecutionOutcome,
                      cost: float | None, now: datetime | None = None) -> str:
        """Record how a dispatched execution of that fire ended (SC-019): on the first
        of them, in history order, with no end yet; the first end stays. With `now`
        (a runtime that validates) the end also sets the business status (SC-021)."""
        if alias not in self.schedules:
            return NOT_FOUND
        history = self.history[alias]
        for index in self._in_history_order(alias):
            execution = history[index]
            if (execution.scheduled_for == scheduled_for and execution.outcome is None
                    and execution.status == ExecutionStatus.DISPATCHED):
                execution = replace(execution, outcome=outcome.value, cost=cost)
                if now is not None:
                    status, run = self._business_start(alias, outcome, now)
                    execution = replace(execution, business_status=status, validation=run)
                history[index] = execution
                return ENDED
        return REFUSED

    def _in_history_order(self, alias: str) -> list[int]:
        history = self.history[alias]
        return sorted(range(len(history)),
                      key=lambda i: (history[i].started_at, history[i].scheduled_for))

    def _business_start(self, alias: str, outcome: ExecutionOutcome,
                        now: datetime) -> tuple[str, ValidationRun | None]:
        """What a technical end at `now` makes of the business status (SC-021): a success
        with validation on waits for a validation run started now; anything else, a
        failure or a cancellation above all, is skipped."""
        state = self.schedules[alias]
        if outcome is ExecutionOutcome.SUCCEEDED and state.validation:
            assert state.validation_timeout is not None
            return (BusinessStatus.PENDING_VALIDATION.value,
                    ValidationRun(now, state.validation_timeout))
        return BusinessStatus.SKIPPED.value, None

    def set_validation(self, alias: str, enabled: bool, timeout_seconds: float) -> str:
        """The schedule's validation switch and timeout (SC-020)."""
        state = self.schedules.get(alias)
        if state is None:
            return NOT_FOUND
        if not valid_timeout(timeout_seconds):
            return rejected("validation")
        self.schedules[alias] = replace(state, validation=enabled,
                                        validation_timeout=float(timeout_seconds))
        return VALIDATION_SET

    def end_validation(self, alias: str, scheduled_for: datetime, text: str,
                       now: datetime) -> str:
        """A validation run's verdict (SC-022..SC-024): on the first execution of that fire
        pending validation; a late or unreadable verdict fails it, and a failure alerts."""
        if alias not in self.schedules:
            return NOT_FOUND
        history = self.history[alias]
        for index in self._in_history_order(alias):
            execution = history[index]
            if (execution.scheduled_for != scheduled_for or execution.business_status
                    != BusinessStatus.PENDING_VALIDATION):
                continue
            run = execution.validation
            assert run is not None
            in_time = now <= run.started_at + timedelta(seconds=run.timeout_seconds)
            passed = in_time and read_verdict(text) is True
            status = BusinessStatus.VALIDATED if passed else BusinessStatus.FAILED_VALIDATION
            history[index] = replace(execution, business_status=status.value)
            if not passed:
                self.alerts.append((alias, scheduled_for, execution.trigger))
            return DECIDED
        return REFUSED

    def set_autonomy(self, enabled: bool, now: datetime) -> None:
        if enabled and not self.autonomy:
            for alias, state in self.schedules.items():
                if state.kind == CRON and state.next_fire_at is not None:
                    assert state.expression is not None and state.timezone is not None
                    _, following = fires_before(state.expression, state.timezone,
                                                state.next_fire_at, now)
                    self.schedules[alias] = replace(state, next_fire_at=following)
        self.autonomy = enabled

    def settle(self, now: datetime) -> None:
        """Every fire the clock has reached, each once (SC-002, SC-006)."""
        if not self.autonomy:
            return
        for alias, state in self.schedules.items():
            while state.next_fire_at is not None and state.next_fire_at <= now:
                fire = state.next_fire_at
                state = replace(state, next_fire_at=self._following(state, fire))
                self.schedules[alias] = state
                self._execute(alias, fire, Trigger.SCHEDULE, now)

    def restart(self, now: datetime) -> None:
        """A scheduler starts at `now` after downtime: the missed fires of each cron
        schedule follow the policy (SC-007); one-shot jobs are left due (SC-002)."""
        if not self.autonomy:
            return
        for alias, state in self.schedules.items():
            if state.kind != CRON or state.next_fire_at is None or state.next_fire_at >= now:
                continue
            assert state.expression is not None and state.timezone is not None
            missed, following = fires_before(state.expression, state.timezone,
                                             state.next_fire_at, now)
            self.schedules[alias] = replace(state, next_fire_at=following)
            for fire in missed_to_run(missed, self.config.missed_fires):
                self._execute(alias, fire, Trigger.CATCH_UP, now)

    def _following(self, state: ScheduleState, fire: datetime) -> datetime | None:
        if state.kind == ONCE:
            return None
        assert state.expression is not None and state.timezone is not None
        return next_fire(state.expression, state.timezone, fire)

    def _execute(self, alias: str, scheduled_for: datetime, trigger: Trigger,
                 now: datetime) -> None:
        state = self.schedules[alias]
        message, outcome = state.message, None
        if state.pre_check and trigger is not Trigger.MANUAL:
            self.pre_checks[alias] += 1
            answer = self.scripts[alias]
            outcome = answer.value
            if answer is PreCheckAnswer.SKIP:
                self.history[alias].append(ExecutionState(
                    scheduled_for, now, trigger.value, ExecutionStatus.SKIPPED.value, None, 0.0,
                    outcome))
                return
            if answer is PreCheckAnswer.PROMPT:
                message = PRE_CHECK_PROMPT
        self.dispatches[(alias, scheduled_for, message)] += 1
        self.history[alias].append(ExecutionState(
            scheduled_for, now, trigger.value, ExecutionStatus.DISPATCHED.value, message, None,
            outcome))

    def executions(self, alias: str) -> list[ExecutionState]:
        """The schedule's history as it is read: by started_at, then scheduled_for
        (SC-015); Python's sort keeps the order made among equal keys."""
        return sorted(self.history[alias], key=lambda e: (e.started_at, e.scheduled_for))

    def list(self) -> list[str]:
        return list(self.schedules)
