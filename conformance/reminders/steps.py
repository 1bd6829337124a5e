"""Behave steps for the reminders area (seed 002 §10.14).

Every When-step sends one command through `ReminderHarness.run`, which applies it to the
backend's reminders runtime and to the oracle and compares everything; a `Divergence`
propagates as the scenario's failure. Every Then-step reads what the BACKEND shows (its
reminder records, its answers, the dispatches it made) and checks it against the value
the scenario states. Seconds count from the virtual clock's start; the reminders have a
clock of their own, advanced only by "the reminder clock advances ...".

Registered by `features/steps/reminders_steps.py`; the steps' wording names reminders
so that they cannot clash with the lifecycle's.
"""

from __future__ import annotations

from typing import Any

from jobconform.backends.reminders.protocol import REMINDER_TRIGGER, ReminderView
from jobconform.conformance.area_steps import (
    CheckingScenario,
    alias_list,
    at,
    set_parameter,
)
from jobconform.conformance.reminders.declarations import DECLARATIONS
from jobconform.conformance.reminders.harness import (
    CONFIG_PARAMETERS,
    ReminderHarness,
    freeze,
)
from jobconform.conformance.scenario import RunConfig, state_of
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference.reminders import commands as rc
from jobconform.reference.reminders.oracle import (
    CREATED,
    REPLAYED,
    rejected,
)

__all__: list[str] = []
AREA = "reminders"


class _Reminders(CheckingScenario[ReminderHarness]):
    """One scenario's reminders harness, its answers and the reminder read last."""

    SHOWS = "the backend's reminders do not"
    PREFIX = "RM-"
    NOUN = "reminder"

    def __init__(self, config: RunConfig, overrides: dict[str, float]) -> None:
        super().__init__(ReminderHarness(config.backend, config.profile, config.registry,
                                         overrides=overrides))


def _reminders(context: Any) -> _Reminders:
    overrides = dict(getattr(context, "reminder_overrides", {}))
    return state_of(context).area_state(AREA, lambda config: _Reminders(config, overrides))


def _check(context: Any, ok: bool, what: str, expected: object, actual: object) -> None:
    _reminders(context).check(context, ok, what, expected, actual)


def _view(context: Any, alias: str) -> ReminderView:
    view: ReminderView = _reminders(context).view(context, alias)
    return view


# -- Given: the area's parameters -------------------------------------------------------------


@setup_step("reminders with {name:w} set to {value:g}")
def step_reminder_parameter(context: Any, name: str, value: float) -> None:
    """A parameter of this scenario's reminders, before its first reminder command."""
    set_parameter(context, AREA, "reminder", CONFIG_PARAMETERS, name, value)


# -- Given/When: commands, derived from their declarations (declarations.py) ---------------

derive_steps(DECLARATIONS, _reminders)


@setup_step("the reminders runtime takes store faults")
def step_takes_store_faults(context: Any) -> None:
    """RM-014 needs a runtime that takes store faults (`jobconform.backends.faults`);
    elsewhere the scenario is skipped, never passed."""
    area = _reminders(context)
    if not area.harness.takes_store_faults:
        context.scenario.skip(f"backend {area.harness.backend.name} does not take store"
                              " faults for its reminders (store-faults:reminders)")


@action_step('reminder "{alias}" is read')
def step_read_reminder(context: Any, alias: str) -> None:
    area = _reminders(context)
    area.run(rc.GetReminder(alias))
    area.keep_read(alias, freeze)


# -- Then: checks on what the backend shows ---------------------------------------------------


@check_step('the creation of reminder "{alias}" is accepted')
def step_accepted(context: Any, alias: str) -> None:
    _reminders(context).check_creation(context, alias, CREATED)


@check_step('the creation of reminder "{alias}" answers reminder "{original}"')
def step_replayed(context: Any, alias: str, original: str) -> None:
    _reminders(context).check_creation(context, alias, f"{REPLAYED}:{original}")


@check_step('the creation of reminder "{alias}" is rejected with "{code}"')
def step_rejected(context: Any, alias: str, code: str) -> None:
    _reminders(context).check_creation(context, alias, rejected(code))


@check_step('the cancel answers "{answer}"')
def step_cancel_answer(context: Any, answer: str) -> None:
    actual = _reminders(context).last_answer
    _check(context, actual == answer, "the cancel's answer", answer, actual)


@check_step('reminder "{alias}" is {status:w}')
def step_status(context: Any, alias: str, status: str) -> None:
    actual = _view(context, alias).status
    _check(context, actual == status, f"reminder {alias!r} status", status, actual)


@check_step('reminder "{alias}" has {count:d} attempts', 'reminder "{alias}" has {count:d} attempt')
def step_attempts(context: Any, alias: str, count: int) -> None:
    actual = _view(context, alias).attempts
    _check(context, actual == count, f"reminder {alias!r} attempts", count, actual)


@check_step('reminder "{alias}" was dispatched {count:d} times',
            'reminder "{alias}" was dispatched {count:d} time')
def step_dispatched(context: Any, alias: str, count: int) -> None:
    area = _reminders(context)
    reminder_id = area.harness.ids.get(alias)
    made = sum(1 for d in area.harness.target.made() if d.reminder_id == reminder_id)
    _check(context, made == count, f"dispatches of reminder {alias!r}", count, made)


@check_step('every dispatch of reminder "{alias}" was labelled as triggered by it')
def step_dispatches_labelled(context: Any, alias: str) -> None:
    """Each dispatch made for the reminder carries triggered_by "reminder" (RM-021)."""
    area = _reminders(context)
    reminder_id = area.harness.ids.get(alias)
    labels = [d.triggered_by for d in area.harness.target.made()
              if d.reminder_id == reminder_id]
    wanted = [REMINDER_TRIGGER] * len(labels)
    _check(context, bool(labels) and labels == wanted,
           f"what triggered each dispatch of reminder {alias!r}", wanted or [REMINDER_TRIGGER],
           labels)


@check_step('reminder "{alias}" is due at second {second:g}')
def step_due(context: Any, alias: str, second: float) -> None:
    actual = _view(context, alias).due_at
    _check(context, actual == at(second), f"reminder {alias!r} due_at", at(second), actual)


@check_step('reminder "{alias}" is not due')
def step_not_due(context: Any, alias: str) -> None:
    actual = _view(context, alias).due_at
    _check(context, actual is None, f"reminder {alias!r} due_at", None, actual)


@check_step('reminder "{alias}" fires at second {second:g}')
def step_fire_at(context: Any, alias: str, second: float) -> None:
    actual = _view(context, alias).fire_at
    _check(context, actual == at(second), f"reminder {alias!r} fire_at", at(second), actual)


@check_step('reminder "{alias}" was created at second {second:g}')
def step_created_at(context: Any, alias: str, second: float) -> None:
    actual = _view(context, alias).created_at
    _check(context, actual == at(second), f"reminder {alias!r} created_at", at(second),
           actual)


@check_step('reminder "{alias}" fired at second {second:g}')
def step_fired_at(context: Any, alias: str, second: float) -> None:
    actual = _view(context, alias).fired_at
    _check(context, actual == at(second), f"reminder {alias!r} fired_at", at(second), actual)


@check_step('reminder "{alias}" has not fired')
def step_not_fired(context: Any, alias: str) -> None:
    actual = _view(context, alias).fired_at
    _check(context, actual is None, f"reminder {alias!r} fired_at", None, actual)


@check_step('reminder "{alias}" has the message "{message}"')
def step_message(context: Any, alias: str, message: str) -> None:
    actual = _view(context, alias).message
    _check(context, actual == message, f"reminder {alias!r} message", message, actual)


@check_step("the sweep deleted {count:d} reminders", "the sweep deleted {count:d} reminder")
def step_swept(context: Any, count: int) -> None:
    actual = _reminders(context).last_answer
    _check(context, actual == count, "reminders the sweep deleted", count, actual)


@check_step('reminder "{alias}" is no longer held')
def step_not_held(context: Any, alias: str) -> None:
    area = _reminders(context)
    reminder_id = area.harness.ids.get(alias)
    if reminder_id is None:
        raise AssertionError(f"reminder {alias!r} was never created")
    view = area.harness.runtime.get(reminder_id)
    _check(context, view is None, f"reminder {alias!r} after the sweep", None,
           None if view is None else view.status)


@check_step('the reminders listed are "{aliases}"')
def step_listed(context: Any, aliases: str) -> None:
    actual = _reminders(context).last_answer
    _check(context, actual == alias_list(aliases), "the listing", alias_list(aliases), actual)


@check_step("no reminders are listed")
def step_listed_none(context: Any) -> None:
    actual = _reminders(context).last_answer
    _check(context, actual == [], "the listing", [], actual)


@check_step("the reminder read is {status:w}")
def step_read_status(context: Any, status: str) -> None:
    read = _reminders(context).read
    _check(context, read is not None, "the reminder read", "a record", None)
    assert read is not None
    _check(context, read[1].status == status, "the status of the reminder read", status,
           read[1].status)


@check_step("the reminder read earlier still reads as it did")
def step_read_unchanged(context: Any) -> None:
    _reminders(context).check_read_unchanged(context, freeze)


@check_step("no reminder was read")
def step_read_nothing(context: Any) -> None:
    read = _reminders(context).read
    _check(context, read is None, "the read of an unknown reminder", None, read)
