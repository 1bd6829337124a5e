"""What the scheduling area's suites say (SC-001..SC-024), declared once
(conformance/vocabulary.py): the commands, checks and settings from which its Behave steps
and Robot keywords are derived, in the feature file's and the Robot suite's own words.

Commands go through `SchedulingHarness.run` (the backend's scheduler(s) and the oracle,
compared after every command). Checks read what the BACKEND shows: its schedules, their
histories, the dispatches and pre-check calls its target saw, its operator alerts, and the
answers kept (a creation's under its alias, the last read under its own name). Instants
are written in ISO 8601 with their offset (2026-03-08T07:00:00Z), by the keywords and the
steps alike (the `Instant` type matches them and keeps the text); the scheduling clock
starts at the kit's epoch unless a setting or `Start Scheduling    start=...` says
otherwise, and moves only by the commands that advance it and by a restart's downtime.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from behave import register_type

from jobconform.backends.scheduling.protocol import ExecutionView, ScheduleView
from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.scheduling.harness import (
    CONFIG_PARAMETERS,
    SchedulingHarness,
    freeze,
)
from jobconform.conformance.step_library import ParameterType
from jobconform.conformance.vocabulary import (
    Check,
    Declaration,
    OnHarness,
    Phrase,
    Reading,
    Setting,
    Vocabulary,
    check_worded,
    command_worded,
    kept,
    parameter_setting,
    unchanged_since_read,
)
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling import commands as sc
from jobconform.reference.scheduling.oracle import (
    CREATED,
    ExecutionOutcome,
    PreCheckAnswer,
    ValidationRun,
    Verdict,
    rejected,
)

register_type(
    Instant=ParameterType(r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?(?:Z|[+-]\d\d:\d\d)", str),
    PreCheck=ParameterType("|".join(answer.value for answer in PreCheckAnswer), str),
)


def parse_instant(text: str | None) -> datetime | None:
    """An ISO 8601 instant with its offset, as the suites write it; None for none."""
    return None if text is None else datetime.fromisoformat(text)


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def pre_check_answer(text: str | None) -> PreCheckAnswer | None:
    """A pre-check's answer as the suites write it; None for a schedule without a hook."""
    return None if text is None else PreCheckAnswer(text)


def _created(command: sc.CreateOnce | sc.CreateCron) -> str:
    return command.schedule


def schedule_one_shot_job(alias: str, message: str = "run", delay: float | None = None,
                          run_at: str | None = None,
                          pre_check: str | None = None) -> sc.CreateOnce:
    """Schedule a one-shot job by ``delay`` seconds or ``run_at``; returns the answer."""
    return sc.CreateOnce(alias, message, parse_instant(run_at), delay, pre_check_answer(pre_check))


def create_cron_schedule(alias: str, expression: str, timezone: str = "UTC",
                         message: str = "run", pre_check: str | None = None) -> sc.CreateCron:
    """A cron schedule; ``pre_check`` is its hook's first answer (skip, prompt, error,
    timeout), none for a schedule without a hook."""
    return sc.CreateCron(alias, message, expression, timezone, pre_check_answer(pre_check))


def pre_check_answers(alias: str, answer: str) -> sc.ScriptPreCheck:
    return sc.ScriptPreCheck(alias, PreCheckAnswer(answer))


def end_execution(alias: str, scheduled_for: str, outcome: str,
                  cost: float | None = None) -> sc.EndExecution:
    """The runtime learns how the execution it dispatched for ``scheduled_for`` ended:
    ``outcome`` succeeded, failed or cancelled, ``cost`` none when unknown (SC-019);
    returns the answer (ended, refused or not_found)."""
    return sc.EndExecution(alias, _instant(scheduled_for), ExecutionOutcome(outcome), cost)


def set_validation(alias: str, enabled: bool, timeout: float = 600.0) -> sc.SetValidation:
    """Switch the schedule's business validation on or off, with its timeout in seconds
    (SC-020); returns the answer (validation_set, not_found or rejected:validation)."""
    return sc.SetValidation(alias, enabled, timeout)


def end_validation(alias: str, scheduled_for: str, verdict: str) -> sc.EndValidation:
    """The validation run of the execution dispatched for ``scheduled_for`` answers
    ``verdict``: pass, fail, prose (free text saying it passed) or odd_json (a member
    passed that is no boolean) (SC-022, SC-023); returns the answer (decided, refused or
    not_found)."""
    return sc.EndValidation(alias, _instant(scheduled_for), Verdict(verdict))


def turn_autonomy(state: str) -> sc.SetAutonomy:
    """Turn autonomy ``off`` (no schedule fires) or ``on``."""
    if state not in ("on", "off"):
        raise ValueError(f"autonomy is turned on or off, not {state!r}")
    return sc.SetAutonomy(state == "on")


def advance_scheduling_clock_to(instant: str) -> OnHarness:
    """Advance the scheduling clock to ``instant``: as far as that is from where it is."""
    wanted = _instant(instant)

    def advance(harness: SchedulingHarness) -> AdvanceTime:
        seconds = (wanted - harness.clock.now()).total_seconds()
        if seconds < 0:
            raise ValueError(f"the scheduling clock is already past {instant}")
        return AdvanceTime(seconds)

    return OnHarness(advance)


def restart_schedulers(down: float = 0.0) -> sc.RestartScheduling:
    """Crash every scheduler, let ``down`` seconds pass, start one over the store."""
    return sc.RestartScheduling(down)


READ = "read:"  # the name the last read's answer is kept under (a creation's: its alias)
ONE_SHOT = 'one-shot job "{alias}" is scheduled with message "{message}"'
CRON = 'cron schedule "{alias}" runs "{message}" at "{expression}" in {timezone:S}'
ENDS = 'the execution of schedule "{alias}" for {scheduled_for:Instant} ends {outcome:w}'
DECLARATIONS = (
    command_worded("Schedule One-Shot Job", schedule_one_shot_job,
                   ONE_SHOT + " and a delay of {delay:g} seconds",
                   ONE_SHOT + " to run at {run_at:Instant}",
                   ONE_SHOT + ", a delay of {delay:g} seconds and a run time of"
                   " {run_at:Instant}",
                   ONE_SHOT + " and no time",
                   kept_as=_created),
    command_worded("Create Cron Schedule", create_cron_schedule,
                   CRON,
                   CRON + " with a pre-check that answers {pre_check:PreCheck}",
                   kept_as=_created),
    command_worded("Pre-Check Answers", pre_check_answers,
                   'the pre-check of schedule "{alias}" answers {answer:PreCheck}'),
    command_worded("Trigger Schedule", sc.TriggerSchedule,
                   'schedule "{schedule}" is triggered by hand'),
    command_worded("End Execution", end_execution, ENDS, ENDS + " at a cost of {cost:g}"),
    Declaration("Set Validation", set_validation, (
        Phrase('schedule "{alias}" validates its successes within {seconds:g} seconds',
               lambda alias, seconds: set_validation(alias, True, seconds)),
        Phrase('schedule "{alias}" stops validating, with a timeout of {seconds:g} seconds',
               lambda alias, seconds: set_validation(alias, False, seconds)),
    )),
    command_worded("End Validation", end_validation,
                   'the validation of schedule "{alias}" for {scheduled_for:Instant} answers'
                   ' {verdict:w}'),
    command_worded("Edit Schedule", sc.EditSchedule,
                   'schedule "{schedule}" is edited to run "{message}"',
                   'schedule "{schedule}" is edited to run at "{expression}" in {timezone:S}',
                   'schedule "{schedule}" is edited to run in {timezone:S}'),
    command_worded("Delete Schedule", sc.DeleteSchedule, 'schedule "{schedule}" is deleted'),
    command_worded("Turn Autonomy", turn_autonomy, "autonomy is turned {state:w}"),
    command_worded("Start Second Scheduler", sc.StartSecondScheduler, "a second scheduler starts"),
    command_worded("Advance Scheduling Clock", AdvanceTime,
                   "the scheduling clock advances {seconds:g} seconds",
                   "the scheduling clock advances {seconds:g} second"),
    command_worded("Advance Scheduling Clock To", advance_scheduling_clock_to,
                   "the scheduling clock advances to {instant:Instant}"),
    command_worded("Restart Schedulers", restart_schedulers,
                   "the schedulers are down for {down:g} seconds and one restarts"),
    command_worded("List Schedules", sc.ListSchedules, "all schedules are listed"),
    command_worded("Read Schedule", sc.GetSchedule,
                   'schedule "{schedule}" is read',
                   kept_as=lambda command: READ),
    command_worded("Read History", sc.ReadHistory, 'the history of schedule "{schedule}" is read'),
)

# -- checks: what the backend shows ---------------------------------------------------------


def _harness(through: Any) -> SchedulingHarness:
    harness: SchedulingHarness = through.harness
    return harness


def _never_created(alias: str) -> str:
    return f"no schedule {alias!r} (never created)"


def _schedule(through: Any, alias: str) -> ScheduleView | str | None:
    """What the backend holds of schedule `alias` (None: nothing), or what says it was
    never created."""
    harness = _harness(through)
    schedule_id = harness.ids.get(alias)
    return _never_created(alias) if schedule_id is None else harness.runtime.get(schedule_id)


def _history(through: Any, alias: str) -> list[ExecutionView] | str:
    harness = _harness(through)
    schedule_id = harness.ids.get(alias)
    if schedule_id is None:
        return _never_created(alias)
    return list(harness.runtime.history(schedule_id))


def _execution(through: Any, alias: str, number: int) -> ExecutionView | str:
    """Execution `number` (from 1) of the schedule's history, or what says there is none."""
    history = _history(through, alias)
    if isinstance(history, str):
        return history
    if not 1 <= number <= len(history):
        return f"no execution {number} ({len(history)} held)"
    return history[number - 1]


def _fields(view: object, names: tuple[str, ...]) -> object:
    """The fields `names` of a view as shown (one alone, several as a tuple)."""
    if view is None:
        return "no record held"
    if isinstance(view, str):
        return view  # there is no view: what says why
    shown = tuple(getattr(view, name, "<missing>") for name in names)
    return shown[0] if len(shown) == 1 else shown


def _named(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"({', '.join(names)})"


def _schedule_shows(alias: str, names: tuple[str, ...], wanted: object) -> Reading:
    return Reading(f"schedule {alias!r} {_named(names)}",
                   lambda through: _fields(_schedule(through, alias), names), wanted)


def _execution_shows(alias: str, number: int, names: tuple[str, ...],
                     wanted: object) -> Reading:
    return Reading(f"execution {number} of {alias!r} {_named(names)}",
                   lambda through: _fields(_execution(through, alias, number), names), wanted)


def creation_should_be_accepted(alias: str) -> Reading:
    return Reading(f"the creation of {alias!r}", kept(alias), CREATED)


def creation_should_be_rejected(alias: str, code: str) -> Reading:
    return Reading(f"the creation of {alias!r}", kept(alias), rejected(code))


def next_fire_should_be(alias: str, instant: str) -> Reading:
    return _schedule_shows(alias, ("next_fire_at",), _instant(instant))


def should_have_no_next_fire(alias: str) -> Reading:
    return _schedule_shows(alias, ("next_fire_at",), None)


def schedule_should_not_be_held(alias: str) -> Reading:
    """The backend holds no record of the schedule any more (it was deleted)."""
    return Reading(f"schedule {alias!r} after its deletion",
                   lambda through: _schedule(through, alias), None)


def message_should_be(alias: str, message: str) -> Reading:
    return _schedule_shows(alias, ("message",), message)


def created_at_should_be(alias: str, instant: str) -> Reading:
    return _schedule_shows(alias, ("created_at",), _instant(instant))


def executions_should_be(alias: str, count: int) -> Reading:
    def executions(through: Any) -> object:
        history = _history(through, alias)
        return history if isinstance(history, str) else len(history)

    return Reading(f"the executions of {alias!r}", executions, count)


def execution_should_be(alias: str, number: int, trigger: str,
                        scheduled_for: str) -> Reading:
    return _execution_shows(alias, number, ("trigger", "scheduled_for"),
                            (trigger, _instant(scheduled_for)))


def execution_should_have_started_at(alias: str, number: int, instant: str) -> Reading:
    return _execution_shows(alias, number, ("started_at",), _instant(instant))


def execution_should_be_skipped(alias: str, number: int) -> Reading:
    return _execution_shows(alias, number, ("status", "cost", "message"), ("skipped", 0, None))


def execution_should_have_dispatched(alias: str, number: int, message: str) -> Reading:
    return _execution_shows(alias, number, ("status", "message"), ("dispatched", message))


def execution_pre_check_should_be(alias: str, number: int,
                                  outcome: str | None = None) -> Reading:
    """The pre-check's outcome recorded on the execution; none when none ran."""
    return _execution_shows(alias, number, ("pre_check",), outcome)


def execution_should_have_ended(alias: str, number: int, outcome: str,
                                cost: float | None = None) -> Reading:
    """The end recorded on the execution (SC-019): its outcome and cost (none when
    unknown)."""
    return _execution_shows(alias, number, ("outcome", "cost"), (outcome, cost))


def execution_should_not_have_ended(alias: str, number: int) -> Reading:
    return _execution_shows(alias, number, ("outcome", "cost"), (None, None))


def business_status_should_be(alias: str, number: int, status: str | None = None) -> Reading:
    """The execution's business status (SC-021, SC-022): pending_validation, validated,
    failed_validation or skipped; none before its end."""
    return _execution_shows(alias, number, ("business_status",), status)


def validation_run_should_be(alias: str, number: int, started_at: str | None = None,
                             timeout: float | None = None) -> Reading:
    """The execution's validation run, which names it back (SC-021); none without
    ``started_at``."""
    wanted = (None if started_at is None
              else ValidationRun(_instant(started_at), float(timeout or 0)))

    def run(through: Any) -> object:
        execution = _execution(through, alias, number)
        if isinstance(execution, str):
            return execution
        return _harness(through).validation_shown(execution)

    return Reading(f"execution {number} of {alias!r} validation run", run, wanted)


def schedule_validation_should_be(alias: str, enabled: bool,
                                  timeout: float | None = None) -> Reading:
    """The schedule's validation switch and timeout (SC-020)."""
    return _schedule_shows(alias, ("validation", "validation_timeout"), (enabled, timeout))


def scheduling_alerts_should_be(*places: str) -> Reading:
    """The operator alerts of failed validations, as alias:number, in order (SC-024)."""
    return Reading("operator_alerts(), in the order raised",
                   lambda through: _harness(through).alerts_by_place(), list(places))


def dispatches_should_be(alias: str, count: int) -> Reading:
    def dispatched(through: Any) -> object:
        harness = _harness(through)
        schedule_id = harness.ids.get(alias)
        dispatches, _ = harness.target.made()
        return _never_created(alias) if schedule_id is None else sum(
            1 for made_for, _, _ in dispatches if made_for == schedule_id)

    return Reading(f"the dispatches of {alias!r}", dispatched, count)


def pre_check_calls_should_be(alias: str, count: int) -> Reading:
    def called(through: Any) -> object:
        harness = _harness(through)
        schedule_id = harness.ids.get(alias)
        _, calls = harness.target.made()
        return _never_created(alias) if schedule_id is None else calls.count(schedule_id)

    return Reading(f"the pre-check calls of {alias!r}", called, count)


def _last_answer(through: Any) -> object:
    return _harness(through).last_answer


def answer_should_be(answer: object, expected: str) -> Reading:
    """``answer`` is what the command's keyword returned."""
    return Reading("the answer", lambda through: answer, expected)


def listed_schedules_should_be(listed: object, *aliases: str) -> Reading:
    """``listed`` is what `List Schedules` returned."""
    return Reading("the listing", lambda through: listed, list(aliases))


def schedule_read_earlier_should_be_unchanged() -> Reading:
    """The record the last `Read Schedule` returned still reads as it did then: read as
    (what it read then, what it reads now)."""
    return unchanged_since_read(
        "schedule", lambda command: command.schedule if isinstance(command, sc.GetSchedule)
        else None, READ, lambda harness, view: freeze(view, harness.validates))


CREATION_OF = 'the creation of schedule "{alias}" '
SCHEDULE = 'schedule "{alias}" '
EXECUTION = 'execution {number:d} of schedule "{alias}" '
CHECKS = (
    check_worded("Creation Should Be Accepted", creation_should_be_accepted,
                 CREATION_OF + "is accepted"),
    check_worded("Creation Should Be Rejected", creation_should_be_rejected,
                 CREATION_OF + 'is rejected with "{code}"'),
    check_worded("Schedule Should Not Be Held", schedule_should_not_be_held,
                 SCHEDULE + "is not held"),
    check_worded("Message Should Be", message_should_be, SCHEDULE + 'runs "{message}"'),
    check_worded("Next Fire Should Be", next_fire_should_be,
                 SCHEDULE + "next fires at {instant:Instant}"),
    check_worded("Should Have No Next Fire", should_have_no_next_fire,
                 SCHEDULE + "has no next fire"),
    check_worded("Created At Should Be", created_at_should_be,
                 SCHEDULE + "was created at {instant:Instant}"),
    check_worded("Executions Should Be", executions_should_be,
                 SCHEDULE + "has {count:d} executions",
                 SCHEDULE + "has {count:d} execution"),
    check_worded("Execution Should Be", execution_should_be,
                 EXECUTION + "is a {trigger:w} run for {scheduled_for:Instant}"),
    check_worded("Execution Should Have Started At", execution_should_have_started_at,
                 EXECUTION + "started at {instant:Instant}"),
    check_worded("Execution Should Be Skipped At Zero Cost", execution_should_be_skipped,
                 EXECUTION + "is skipped at zero cost"),
    check_worded("Execution Should Have Dispatched", execution_should_have_dispatched,
                 EXECUTION + 'dispatched "{message}"'),
    check_worded("Execution Pre-Check Should Be", execution_pre_check_should_be,
                 EXECUTION + "records the pre-check as {outcome:PreCheck}",
                 EXECUTION + "ran no pre-check"),
    check_worded("Execution Should Have Ended", execution_should_have_ended,
                 EXECUTION + "ended {outcome:w} at a cost of {cost:g}"),
    check_worded("Execution Should Not Have Ended", execution_should_not_have_ended,
                 EXECUTION + "has not ended"),
    check_worded("Business Status Should Be", business_status_should_be,
                 EXECUTION + "is {status:w}",
                 EXECUTION + "has no business status"),
    check_worded("Validation Run Should Be", validation_run_should_be,
                 EXECUTION + "has a validation run started at {started_at:Instant} within"
                 " {timeout:g} seconds",
                 EXECUTION + "has no validation run"),
    Check("Schedule Validation Should Be", schedule_validation_should_be, (
        Phrase(SCHEDULE + "shows validation {state:w} with a timeout of {timeout:g} seconds",
               lambda alias, state, timeout: schedule_validation_should_be(
                   alias, state == "on", timeout)),
        Phrase(SCHEDULE + "shows validation off and no timeout",
               lambda alias: schedule_validation_should_be(alias, False)),
    )),
    Check("Scheduling Alerts Should Be", scheduling_alerts_should_be, (
        Phrase('the scheduling alerts are "{places}"',
               lambda places: scheduling_alerts_should_be(*alias_list(places))),
        Phrase("no scheduling alert was raised", scheduling_alerts_should_be),
    )),
    check_worded("Dispatches Should Be", dispatches_should_be,
                 SCHEDULE + "was dispatched {count:d} times",
                 SCHEDULE + "was dispatched {count:d} time"),
    check_worded("Pre-Check Calls Should Be", pre_check_calls_should_be,
                 'the pre-check of schedule "{alias}" was called {count:d} times',
                 'the pre-check of schedule "{alias}" was called {count:d} time'),
    Check("Answer Should Be", answer_should_be, (
        Phrase('the schedule answer is "{expected}"',
               lambda expected: Reading("the answer", _last_answer, expected)),
    )),
    Check("Listed Schedules Should Be", listed_schedules_should_be, (
        Phrase('the schedules listed are "{aliases}"', lambda aliases: Reading(
            "the listing", _last_answer, alias_list(aliases))),
    )),
    check_worded("Schedule Read Earlier Should Be Unchanged",
                 schedule_read_earlier_should_be_unchanged,
                 "the schedule read earlier still reads as it did"),
)

# -- settings: the clock's start and the area's parameters, before the first command -------

SETTINGS = (
    parameter_setting("scheduling with {name:w} set to {value:w}", "scheduling",
                      CONFIG_PARAMETERS),
    Setting("the scheduling clock starts at {start:Instant}", lambda start: {"start": start}),
)


def open_scheduling(backend: Any, profile: Any, registry: Any,
                    overrides: dict[str, Any]) -> SchedulingHarness:
    """The scheduling harness, its clock at the ``start`` the overrides name (the kit's
    epoch by default), the other overrides replacing the profile's parameters."""
    parameters = dict(overrides)
    start = parameters.pop("start", None)
    return SchedulingHarness(backend, profile, registry, overrides=parameters,
                             start=EPOCH if start is None else _instant(start))


VOCABULARY = Vocabulary(area="scheduling", noun="scheduling", start="Start Scheduling",
                        commands=DECLARATIONS, checks=CHECKS, settings=SETTINGS,
                        open=open_scheduling)
