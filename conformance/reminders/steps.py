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

from datetime import datetime, timedelta, timezone
from typing import Any

from jobconform.backends.reminders.protocol import ReminderView
from jobconform.conformance.area_steps import (
    AreaScenario,
    alias_list,
    at,
    created_id,
    expectation_failure,
)
from jobconform.conformance.lifecycle.steps import (
    RunConfig,
    action_step,
    check_step,
    setup_step,
    state_of,
)
from jobconform.conformance.reminders.harness import (
    CONFIG_PARAMETERS,
    ReminderHarness,
    ReminderRecord,
    freeze,
)
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.reminders import commands as rc
from jobconform.reference.reminders.oracle import (
    CREATED,
    REPLAYED,
    DeliveryOutcome,
    ReminderStatus,
    rejected,
)

__all__: list[str] = []
AREA = "reminders"
OUTCOME_WORDS = {"lands": DeliveryOutcome.LANDS, "fails": DeliveryOutcome.FAILS,
                 "times out": DeliveryOutcome.UNKNOWN}


class _Reminders(AreaScenario[ReminderHarness]):
    """One scenario's reminders harness, its answers and the reminder read last."""

    def __init__(self, config: RunConfig, overrides: dict[str, float]) -> None:
        super().__init__(ReminderHarness(config.backend, config.profile, config.registry,
                                         overrides=overrides))
        self.read: tuple[ReminderView, ReminderRecord] | None = None


def _reminders(context: Any) -> _Reminders:
    overrides = dict(getattr(context, "reminder_overrides", {}))
    return state_of(context).area_state(AREA, lambda config: _Reminders(config, overrides))


def _check(context: Any, ok: bool, what: str, expected: object, actual: object) -> None:
    if ok:
        return
    area = state_of(context).areas.get(AREA)
    commands = area.harness.commands if isinstance(area, _Reminders) else []
    raise expectation_failure(context, "the backend's reminders do not", "RM-", commands,
                              what, expected, actual)


def _view(context: Any, alias: str) -> ReminderView:
    area = _reminders(context)
    view = area.harness.runtime.get(created_id(area.harness.ids, area.answers, "reminder",
                                               alias))
    _check(context, view is not None, f"reminder {alias!r} should be held", "a record", None)
    assert view is not None
    return view


# -- Given: the area's parameters -------------------------------------------------------------


@setup_step("reminders with {name:w} set to {value:g}")
def step_reminder_parameter(context: Any, name: str, value: float) -> None:
    """A parameter of this scenario's reminders, before its first reminder command."""
    if AREA in state_of(context).areas:
        raise ValueError("set reminder parameters before the scenario's first reminder step")
    if name not in CONFIG_PARAMETERS:
        raise ValueError(f"unknown reminder parameter {name!r}; known:"
                         f" {', '.join(CONFIG_PARAMETERS)}")
    overrides = dict(getattr(context, "reminder_overrides", {}))
    overrides[name] = value
    context.reminder_overrides = overrides


# -- Given/When: commands ------------------------------------------------------------------


def _create(context: Any, alias: str, message: str, fire_at: datetime | None = None,
            delay: float | None = None, key: str | None = None) -> None:
    area = _reminders(context)
    area.answers[alias] = area.run(rc.CreateReminder(alias, message, fire_at, delay, key))


@action_step('reminder "{alias}" is created with message "{message}", a delay of'
             ' {seconds:g} seconds and idempotency key "{key}"')
def step_create_keyed(context: Any, alias: str, message: str, seconds: float,
                      key: str) -> None:
    _create(context, alias, message, delay=seconds, key=key)


@action_step('reminder "{alias}" is created with message "{message}" and a delay of'
             " {seconds:g} seconds")
def step_create_delay(context: Any, alias: str, message: str, seconds: float) -> None:
    _create(context, alias, message, delay=seconds)


@action_step('reminder "{alias}" is created with an empty message and a delay of'
             " {seconds:g} seconds")
def step_create_empty(context: Any, alias: str, seconds: float) -> None:
    _create(context, alias, "", delay=seconds)


@action_step('reminder "{alias}" is created with a message of {count:d} characters and a'
             " delay of {seconds:g} seconds")
def step_create_long(context: Any, alias: str, count: int, seconds: float) -> None:
    _create(context, alias, "m" * count, delay=seconds)


@action_step('reminder "{alias}" is created with message "{message}" to fire at second'
             " {second:g}")
def step_create_at(context: Any, alias: str, message: str, second: float) -> None:
    _create(context, alias, message, fire_at=at(second))


@action_step('reminder "{alias}" is created with message "{message}" to fire at second'
             " {second:g} written {hours:d} hours ahead of UTC")
def step_create_at_offset(context: Any, alias: str, message: str, second: float,
                          hours: int) -> None:
    """The same instant as "to fire at second ...", written at another UTC offset: a
    different fire_at as given (RM-018), shown in UTC (RM-001)."""
    _create(context, alias, message, fire_at=at(second).astimezone(
        timezone(timedelta(hours=hours))))


@action_step('reminder "{alias}" is created with message "{message}", a delay of'
             " {seconds:g} seconds and a fire time of second {second:g}")
def step_create_both(context: Any, alias: str, message: str, seconds: float,
                     second: float) -> None:
    _create(context, alias, message, fire_at=at(second), delay=seconds)


@action_step('reminder "{alias}" is created with message "{message}" and no schedule')
def step_create_neither(context: Any, alias: str, message: str) -> None:
    _create(context, alias, message)


@action_step('reminders "{aliases}" are created with a delay of {seconds:g} seconds')
def step_create_many(context: Any, aliases: str, seconds: float) -> None:
    for alias in alias_list(aliases):
        _create(context, alias, f"remember {alias}", delay=seconds)


@action_step('reminder "{alias}" is cancelled')
def step_cancel_reminder(context: Any, alias: str) -> None:
    _reminders(context).run(rc.CancelReminder(alias))


@action_step('the dispatch of reminder "{alias}" {outcome}')
def step_deliver(context: Any, alias: str, outcome: str) -> None:
    if outcome not in OUTCOME_WORDS:
        raise ValueError(f"a dispatch {' or '.join(OUTCOME_WORDS)}, not {outcome!r}")
    _reminders(context).run(rc.DeliverReminder(alias, OUTCOME_WORDS[outcome]))


@action_step("the reminder clock advances {seconds:g} seconds",
             "the reminder clock advances {seconds:g} second")
def step_reminder_clock(context: Any, seconds: float) -> None:
    _reminders(context).run(AdvanceTime(seconds))


@setup_step("the reminders runtime takes store faults")
def step_takes_store_faults(context: Any) -> None:
    """RM-014 needs a runtime that takes store faults (`jobconform.backends.faults`);
    elsewhere the scenario is skipped, never passed."""
    area = _reminders(context)
    if not area.harness.takes_store_faults:
        context.scenario.skip(f"backend {area.harness.backend.name} does not take store"
                              " faults for its reminders (store-faults:reminders)")


def _fault(kind: FaultKind, write: int) -> StoreFault:
    return StoreFault(kind, write)


@action_step("store write {write:d} fails while the reminder clock advances {seconds:g} seconds")
def step_clock_write_fails(context: Any, write: int, seconds: float) -> None:
    _reminders(context).run(rc.ReminderStoreFault(_fault(FaultKind.FAIL, write),
                                                  AdvanceTime(seconds)))


@action_step("the process crashes at store write {write:d} while the reminder clock advances"
             " {seconds:g} seconds")
def step_clock_crash(context: Any, write: int, seconds: float) -> None:
    _reminders(context).run(rc.ReminderStoreFault(_fault(FaultKind.CRASH, write),
                                                  AdvanceTime(seconds)))


def _deliver(alias: str, outcome: str) -> rc.DeliverReminder:
    if outcome not in OUTCOME_WORDS:
        raise ValueError(f"a dispatch {' or '.join(OUTCOME_WORDS)}, not {outcome!r}")
    return rc.DeliverReminder(alias, OUTCOME_WORDS[outcome])


@action_step('store write {write:d} fails while the dispatch of reminder "{alias}" {outcome}')
def step_deliver_write_fails(context: Any, write: int, alias: str, outcome: str) -> None:
    _reminders(context).run(rc.ReminderStoreFault(_fault(FaultKind.FAIL, write),
                                                  _deliver(alias, outcome)))


@action_step('the process crashes at store write {write:d} while the dispatch of reminder'
             ' "{alias}" {outcome}')
def step_deliver_crash(context: Any, write: int, alias: str, outcome: str) -> None:
    _reminders(context).run(rc.ReminderStoreFault(_fault(FaultKind.CRASH, write),
                                                  _deliver(alias, outcome)))


@action_step("the reminders runtime restarts")
def step_restart(context: Any) -> None:
    _reminders(context).run(rc.RestartReminders())


@action_step("the reminders runtime is down for {seconds:g} seconds and restarts")
def step_restart_after(context: Any, seconds: float) -> None:
    _reminders(context).run(rc.RestartReminders(seconds))


@action_step("the agent's autonomy is turned {state:w}")
def step_autonomy(context: Any, state: str) -> None:
    if state not in ("on", "off"):
        raise ValueError(f"autonomy is turned on or off, not {state!r}")
    _reminders(context).run(rc.SetAutonomy(state == "on"))


@action_step("the reminder retention sweep runs")
def step_sweep(context: Any) -> None:
    _reminders(context).run(rc.SweepReminders())


@action_step('reminder "{alias}" is read')
def step_read_reminder(context: Any, alias: str) -> None:
    area = _reminders(context)
    area.run(rc.GetReminder(alias))
    reminder_id = area.harness.ids.get(alias, f"unknown-{alias}")
    view = area.harness.runtime.get(reminder_id)
    area.read = None if view is None else (view, freeze(view))


@action_step("the {status:w} reminders are listed")
def step_list_status(context: Any, status: str) -> None:
    _reminders(context).run(rc.ListReminders(ReminderStatus(status)))


@action_step("all reminders are listed")
def step_list_all(context: Any) -> None:
    _reminders(context).run(rc.ListReminders(None))


# -- Then: checks on what the backend shows ---------------------------------------------------


@check_step('the creation of reminder "{alias}" is accepted')
def step_accepted(context: Any, alias: str) -> None:
    answer = _reminders(context).answers.get(alias)
    _check(context, answer == CREATED, f"the creation of {alias!r}", CREATED, answer)


@check_step('the creation of reminder "{alias}" answers reminder "{original}"')
def step_replayed(context: Any, alias: str, original: str) -> None:
    answer = _reminders(context).answers.get(alias)
    wanted = f"{REPLAYED}:{original}"
    _check(context, answer == wanted, f"the creation of {alias!r}", wanted, answer)


@check_step('the creation of reminder "{alias}" is rejected with "{code}"')
def step_rejected(context: Any, alias: str, code: str) -> None:
    answer = _reminders(context).answers.get(alias)
    _check(context, answer == rejected(code), f"the creation of {alias!r}", rejected(code),
           answer)


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
    read = _reminders(context).read
    _check(context, read is not None, "the reminder read", "a record", None)
    assert read is not None
    view, record = read
    _check(context, freeze(view) == record, "the reminder read earlier", record, freeze(view))


@check_step("no reminder was read")
def step_read_nothing(context: Any) -> None:
    read = _reminders(context).read
    _check(context, read is None, "the read of an unknown reminder", None, read)
