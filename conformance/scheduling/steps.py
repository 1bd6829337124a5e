"""Behave steps for the scheduling area (seed 002 §10.1, §10.2, §10.6.1).

Every When-step sends one command through `SchedulingHarness.run`, which applies it to the
backend's scheduler(s) and to the oracle and compares everything; a `Divergence`
propagates as the scenario's failure. Every Then-step reads what the BACKEND shows (its
schedules, its histories, the dispatches and pre-check calls it made) and checks it
against the value the scenario states. Instants are written in ISO 8601 with their
offset (2026-03-08T07:00:00Z); the scheduling clock starts at the kit's epoch unless the
scenario says otherwise, and moves only by "the scheduling clock advances ...".

Registered by `features/steps/scheduling_steps.py`; the steps' wording names schedules so
that they cannot clash with other areas'.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from behave import register_type

from jobconform.backends.scheduling.protocol import ExecutionView, ScheduleView
from jobconform.conformance.area_steps import (
    CheckingScenario,
    alias_list,
    before_first_step,
    set_parameter,
)
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.scenario import RunConfig, state_of
from jobconform.conformance.scheduling.declarations import DECLARATIONS
from jobconform.conformance.scheduling.harness import (
    CONFIG_PARAMETERS,
    SchedulingHarness,
    freeze,
)
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling import commands as sc
from jobconform.reference.scheduling.oracle import (
    CREATED,
    PreCheckAnswer,
    ValidationRun,
    rejected,
)

__all__: list[str] = []
AREA = "scheduling"


class _InstantType:
    """An ISO 8601 instant with its offset, as a parse type."""

    pattern = r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d)?(?:Z|[+-]\d\d:\d\d)"

    def __call__(self, text: str) -> datetime:
        return datetime.fromisoformat(text)


class _AnswerType:
    pattern = "|".join(answer.value for answer in PreCheckAnswer)

    def __call__(self, text: str) -> PreCheckAnswer:
        return PreCheckAnswer(text)


register_type(Instant=_InstantType(), PreCheck=_AnswerType())


class _Scheduling(CheckingScenario[SchedulingHarness]):
    """One scenario's scheduling harness, its answers and the schedule read last."""

    SHOWS = "the backend's schedules do not"
    PREFIX = "SC-"
    NOUN = "schedule"

    def __init__(self, config: RunConfig, overrides: dict[str, str], start: datetime) -> None:
        super().__init__(SchedulingHarness(config.backend, config.profile, config.registry,
                                           overrides=overrides, start=start))


def _scheduling(context: Any) -> _Scheduling:
    overrides = dict(getattr(context, "scheduling_overrides", {}))
    start = getattr(context, "scheduling_start", EPOCH)
    return state_of(context).area_state(AREA, lambda config: _Scheduling(config, overrides,
                                                                         start))


def _check(context: Any, ok: bool, what: str, expected: object, actual: object) -> None:
    _scheduling(context).check(context, ok, what, expected, actual)


def _id(context: Any, alias: str) -> str:
    return _scheduling(context).created(alias)


def _view(context: Any, alias: str) -> ScheduleView:
    view: ScheduleView = _scheduling(context).view(context, alias)
    return view


def _history(context: Any, alias: str) -> Sequence[ExecutionView]:
    return _scheduling(context).harness.runtime.history(_id(context, alias))


def _execution(context: Any, number: int, alias: str) -> ExecutionView:
    history = _history(context, alias)
    _check(context, 1 <= number <= len(history), f"execution {number} of {alias!r}",
           f"at least {number} executions", len(history))
    return history[number - 1]


# -- Given: the area's parameters and the clock's start -------------------------------------


@setup_step("scheduling with {name:w} set to {value:w}")
def step_scheduling_parameter(context: Any, name: str, value: str) -> None:
    set_parameter(context, AREA, "scheduling", CONFIG_PARAMETERS, name, value)


@setup_step("the scheduling clock starts at {start:Instant}")
def step_scheduling_start(context: Any, start: datetime) -> None:
    before_first_step(context, AREA, "the scheduling clock's start", "scheduling")
    context.scheduling_start = start


# -- Given/When: commands, derived from their declarations (declarations.py) ---------------

derive_steps(DECLARATIONS, _scheduling)


@action_step("the scheduling clock advances to {instant:Instant}")
def step_advance_to(context: Any, instant: datetime) -> None:
    """Not a command alone: how far to advance depends on where the clock is."""
    area = _scheduling(context)
    seconds = (instant - area.harness.clock.now()).total_seconds()
    if seconds < 0:
        raise ValueError(f"the scheduling clock is already past {instant.isoformat()}")
    area.run(AdvanceTime(seconds))


@action_step('schedule "{alias}" is read')
def step_read(context: Any, alias: str) -> None:
    area = _scheduling(context)
    area.run(sc.GetSchedule(alias))
    area.keep_read(alias, freeze)


# -- Then: checks on what the backend shows ---------------------------------------------------


@check_step('the creation of schedule "{alias}" is accepted')
def step_accepted(context: Any, alias: str) -> None:
    _scheduling(context).check_creation(context, alias, CREATED)


@check_step('the creation of schedule "{alias}" is rejected with "{code}"')
def step_rejected(context: Any, alias: str, code: str) -> None:
    _scheduling(context).check_creation(context, alias, rejected(code))


@check_step('schedule "{alias}" is not held')
def step_not_held(context: Any, alias: str) -> None:
    view = _scheduling(context).harness.runtime.get(_id(context, alias))
    _check(context, view is None, f"schedule {alias!r} after its deletion", None, view)


@check_step('schedule "{alias}" runs "{message}"')
def step_message(context: Any, alias: str, message: str) -> None:
    actual = _view(context, alias).message
    _check(context, actual == message, f"schedule {alias!r} message", message, actual)


@check_step('schedule "{alias}" next fires at {instant:Instant}')
def step_next_fire(context: Any, alias: str, instant: datetime) -> None:
    actual = _view(context, alias).next_fire_at
    _check(context, actual == instant, f"schedule {alias!r} next_fire_at", instant, actual)


@check_step('schedule "{alias}" has no next fire')
def step_no_next_fire(context: Any, alias: str) -> None:
    actual = _view(context, alias).next_fire_at
    _check(context, actual is None, f"schedule {alias!r} next_fire_at", None, actual)


@check_step('schedule "{alias}" was created at {instant:Instant}')
def step_created_at(context: Any, alias: str, instant: datetime) -> None:
    actual = _view(context, alias).created_at
    _check(context, actual == instant, f"schedule {alias!r} created_at", instant, actual)


@check_step('schedule "{alias}" has {count:d} executions',
            'schedule "{alias}" has {count:d} execution')
def step_execution_count(context: Any, alias: str, count: int) -> None:
    actual = len(_history(context, alias))
    _check(context, actual == count, f"executions of schedule {alias!r}", count, actual)


@check_step('execution {number:d} of schedule "{alias}" is a {trigger:w} run for'
            " {instant:Instant}")
def step_execution_for(context: Any, number: int, alias: str, trigger: str,
                       instant: datetime) -> None:
    execution = _execution(context, number, alias)
    actual = (execution.trigger, execution.scheduled_for)
    _check(context, actual == (trigger, instant), f"execution {number} of {alias!r}",
           (trigger, instant), actual)


@check_step('execution {number:d} of schedule "{alias}" started at {instant:Instant}')
def step_execution_started(context: Any, number: int, alias: str, instant: datetime) -> None:
    actual = _execution(context, number, alias).started_at
    _check(context, actual == instant, f"execution {number} of {alias!r} started_at",
           instant, actual)


@check_step('execution {number:d} of schedule "{alias}" is skipped at zero cost')
def step_execution_skipped(context: Any, number: int, alias: str) -> None:
    execution = _execution(context, number, alias)
    actual = (execution.status, execution.cost, execution.message)
    _check(context, actual == ("skipped", 0, None), f"execution {number} of {alias!r}",
           ("skipped", 0, None), actual)


@check_step('execution {number:d} of schedule "{alias}" dispatched "{message}"')
def step_execution_message(context: Any, number: int, alias: str, message: str) -> None:
    execution = _execution(context, number, alias)
    actual = (execution.status, execution.message)
    _check(context, actual == ("dispatched", message), f"execution {number} of {alias!r}",
           ("dispatched", message), actual)


@check_step('execution {number:d} of schedule "{alias}" records the pre-check as'
            " {answer:PreCheck}")
def step_execution_pre_check(context: Any, number: int, alias: str,
                             answer: PreCheckAnswer) -> None:
    actual = _execution(context, number, alias).pre_check
    _check(context, actual == answer.value, f"execution {number} of {alias!r} pre_check",
           answer.value, actual)


@check_step('execution {number:d} of schedule "{alias}" ran no pre-check')
def step_execution_no_pre_check(context: Any, number: int, alias: str) -> None:
    actual = _execution(context, number, alias).pre_check
    _check(context, actual is None, f"execution {number} of {alias!r} pre_check", None,
           actual)


@check_step('execution {number:d} of schedule "{alias}" ended {outcome:w} at a cost of {cost:g}')
def step_execution_ended(context: Any, number: int, alias: str, outcome: str,
                         cost: float) -> None:
    execution = _execution(context, number, alias)
    actual = (getattr(execution, "outcome", "<missing>"), execution.cost)
    _check(context, actual == (outcome, cost), f"execution {number} of {alias!r} (outcome,"
           " cost)", (outcome, cost), actual)


@check_step('execution {number:d} of schedule "{alias}" has not ended')
def step_execution_not_ended(context: Any, number: int, alias: str) -> None:
    execution = _execution(context, number, alias)
    actual = (getattr(execution, "outcome", "<missing>"), execution.cost)
    _check(context, actual == (None, None), f"execution {number} of {alias!r} (outcome, cost)",
           (None, None), actual)


@check_step('execution {number:d} of schedule "{alias}" is {status:w}')
def step_business_status(context: Any, number: int, alias: str, status: str) -> None:
    """The business status (SC-021, SC-022): pending_validation, validated,
    failed_validation or skipped."""
    actual = getattr(_execution(context, number, alias), "business_status", "<missing>")
    _check(context, actual == status, f"execution {number} of {alias!r} business_status",
           status, actual)


@check_step('execution {number:d} of schedule "{alias}" has no business status')
def step_no_business_status(context: Any, number: int, alias: str) -> None:
    actual = getattr(_execution(context, number, alias), "business_status", "<missing>")
    _check(context, actual is None, f"execution {number} of {alias!r} business_status",
           None, actual)


@check_step('execution {number:d} of schedule "{alias}" has a validation run started at'
            ' {started_at:Instant} within {seconds:g} seconds')
def step_validation_run(context: Any, number: int, alias: str, started_at: datetime,
                        seconds: float) -> None:
    """Its validation run, which names it back (SC-021)."""
    execution = _execution(context, number, alias)
    actual = _scheduling(context).harness.validation_shown(execution)
    wanted = ValidationRun(started_at, seconds)
    _check(context, actual == wanted, f"execution {number} of {alias!r} validation run",
           wanted, actual)


@check_step('execution {number:d} of schedule "{alias}" has no validation run')
def step_no_validation_run(context: Any, number: int, alias: str) -> None:
    actual = _scheduling(context).harness.validation_shown(_execution(context, number, alias))
    _check(context, actual is None, f"execution {number} of {alias!r} validation run", None,
           actual)


@check_step('the scheduling alerts are "{places}"')
def step_scheduling_alerts(context: Any, places: str) -> None:
    """The operator alerts of failed validations (SC-024), as "alias:number" in order."""
    actual = _scheduling(context).harness.alerts_by_place()
    _check(context, actual == alias_list(places), "operator_alerts(), in the order raised",
           alias_list(places), actual)


@check_step("no scheduling alert was raised")
def step_no_scheduling_alerts(context: Any) -> None:
    actual = _scheduling(context).harness.alerts_by_place()
    _check(context, actual == [], "operator_alerts()", [], actual)


@check_step('schedule "{alias}" shows validation {state:w} with a timeout of {seconds:g}'
            ' seconds')
def step_schedule_validation(context: Any, alias: str, state: str, seconds: float) -> None:
    view = _view(context, alias)
    actual = (getattr(view, "validation", "<missing>"),
              getattr(view, "validation_timeout", "<missing>"))
    _check(context, actual == (state == "on", seconds), f"schedule {alias!r} (validation,"
           " validation_timeout)", (state == "on", seconds), actual)


@check_step('schedule "{alias}" shows validation off and no timeout')
def step_schedule_no_validation(context: Any, alias: str) -> None:
    view = _view(context, alias)
    actual = (getattr(view, "validation", "<missing>"),
              getattr(view, "validation_timeout", "<missing>"))
    _check(context, actual == (False, None), f"schedule {alias!r} (validation,"
           " validation_timeout)", (False, None), actual)


@check_step('schedule "{alias}" was dispatched {count:d} times',
            'schedule "{alias}" was dispatched {count:d} time')
def step_dispatched(context: Any, alias: str, count: int) -> None:
    area = _scheduling(context)
    schedule_id = _id(context, alias)
    dispatches, _ = area.harness.target.made()
    made = sum(1 for made_for, _, _ in dispatches if made_for == schedule_id)
    _check(context, made == count, f"dispatches of schedule {alias!r}", count, made)


@check_step('the pre-check of schedule "{alias}" was called {count:d} times',
            'the pre-check of schedule "{alias}" was called {count:d} time')
def step_pre_check_calls(context: Any, alias: str, count: int) -> None:
    schedule_id = _id(context, alias)
    _, calls = _scheduling(context).harness.target.made()
    made = calls.count(schedule_id)
    _check(context, made == count, f"pre-check calls of schedule {alias!r}", count, made)


@check_step('the schedule answer is "{answer}"')
def step_answer(context: Any, answer: str) -> None:
    actual = _scheduling(context).last_answer
    _check(context, actual == answer, "the answer", answer, actual)


@check_step('the schedules listed are "{aliases}"')
def step_listed(context: Any, aliases: str) -> None:
    actual = _scheduling(context).last_answer
    _check(context, actual == alias_list(aliases), "the listing", alias_list(aliases), actual)


@check_step("the schedule read earlier still reads as it did")
def step_read_unchanged(context: Any) -> None:
    _scheduling(context).check_read_unchanged(context, freeze)
