"""Behave steps for the admission area (AD-001..AD-020).

Every When-step sends one admission command through `AdmissionHarness.run`, which applies
it to the backend and to the oracle and compares everything; a `Divergence` propagates as
the scenario's failure. Every Then-step reads the BACKEND's admission runtime and checks
the value the scenario states, so each scenario states its expectation on its own too.

The steps speak of owners, executions, calls, schedules and the fleet ceiling, words the
lifecycle steps never use, so the two libraries share behave's global registry safely.
Register them with `from jobconform.conformance.admission.steps import *` in a
features/steps module.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from jobconform.backends.admission.protocol import ExecutionView
from jobconform.conformance.admission.harness import AdmissionHarness
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.lifecycle.steps import (
    REQUIREMENT_TAG,
    RunConfig,
    action_step,
    check_step,
    setup_step,
    state_of,
)
from jobconform.reference import admission as ad

__all__: list[str] = []

AREA = "admission"


def _harness(context: Any, **overrides: Any) -> AdmissionHarness:
    """The scenario's admission harness, opened with the profile's defaults on first use."""

    def open_area(config: RunConfig) -> AdmissionHarness:
        return AdmissionHarness(config.backend, config.profile, config.registry, overrides)

    return state_of(context).area_state(AREA, open_area)


def _run(context: Any, command: ad.AdmissionCommand) -> object:
    return _harness(context).run(command)


def _aliases(text: str) -> list[str]:
    return [alias.strip() for alias in text.split(",") if alias.strip()]


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not a JSON value: {text!r} ({error})") from error


def _check(context: Any, ok: bool, what: str, expected: object, actual: object) -> None:
    """Fail a Then-step naming the scenario's requirement tags and the commands so far."""
    if ok:
        return
    scenario = getattr(context, "scenario", None)
    tags = sorted({str(t) for t in getattr(scenario, "effective_tags", ())
                   if REQUIREMENT_TAG.fullmatch(str(t))})
    harness = state_of(context).areas.get(AREA)
    commands = harness.commands if isinstance(harness, AdmissionHarness) else []
    steps = "\n".join(f"    {i}. {ad.describe(c)}" for i, c in enumerate(commands, 1))
    raise AssertionError(
        "the backend's admission state does not meet the scenario's expectation\n"
        f"  requirement(s): {', '.join(tags)}\n  what: {what}\n"
        f"  expected: {expected!r}\n  actual:   {actual!r}\n"
        f"  commands so far:\n{steps or '    (none)'}"
    )


def _view(context: Any, execution: str) -> ExecutionView:
    view = _harness(context).runtime.execution(execution)
    _check(context, view is not None, f"execution {execution!r} should be recorded",
           "a record", None)
    assert view is not None
    return view


# -- Given: the runtime ---------------------------------------------------------------------


@setup_step("an admission runtime")
def step_admission_runtime(context: Any) -> None:
    _harness(context)


@setup_step("an admission runtime with {settings}")
def step_admission_runtime_with(context: Any, settings: str) -> None:
    """`settings` is `name=value, ...` of jobconform.reference.admission.AdmissionConfig."""
    if AREA in state_of(context).areas:
        raise ValueError("configure the admission runtime before its first command")
    overrides: dict[str, Any] = {}
    for pair in _aliases(settings):
        name, _, value = pair.partition("=")
        overrides[name.strip()] = _json(value.strip())
    _harness(context, **overrides)


# -- Given/When: commands ---------------------------------------------------------------------


@action_step('owner "{owner}" is added')
def step_add_owner(context: Any, owner: str) -> None:
    _run(context, ad.AddOwner(owner))


@action_step('owners "{owners}" are added')
def step_add_owners(context: Any, owners: str) -> None:
    for owner in _aliases(owners):
        _run(context, ad.AddOwner(owner))


@action_step("the fleet ceiling is set to {value:d}")
def step_set_ceiling(context: Any, value: int) -> None:
    _run(context, ad.SetCeiling(value))


@action_step("the settings store holds a fleet ceiling of {value:d}")
def step_raw_ceiling(context: Any, value: int) -> None:
    _run(context, ad.StoreRawCeiling(value))


@action_step("reads of the settings store fail")
def step_settings_reads_fail(context: Any) -> None:
    _run(context, ad.FailSettingsReads(True))


@action_step("reads of the settings store succeed again")
def step_settings_reads_recover(context: Any) -> None:
    _run(context, ad.FailSettingsReads(False))


@action_step("the fleet ceiling is read")
def step_read_ceiling(context: Any) -> None:
    _run(context, ad.ReadCeiling())


@action_step('owner "{owner}" parallel cap is set to {value:d}')
def step_set_cap(context: Any, owner: str, value: int) -> None:
    _run(context, ad.SetParallelCap(owner, value))


@action_step('owner "{owner}" backlog depth is set to {value:d}')
def step_set_depth(context: Any, owner: str, value: int) -> None:
    _run(context, ad.SetBacklogDepth(owner, value))


@action_step('owner "{owner}" execution timeout is set to {seconds:d} seconds')
def step_set_timeout(context: Any, owner: str, seconds: int) -> None:
    _run(context, ad.SetExecutionTimeout(owner, seconds))


@action_step('owner "{owner}" is read')
def step_read_owner(context: Any, owner: str) -> None:
    _run(context, ad.ReadOwner(owner))


@action_step('owner "{owner}" is deleted')
def step_delete_owner(context: Any, owner: str) -> None:
    _run(context, ad.DeleteOwner(owner))


@action_step('execution "{execution}" arrives for owner "{owner}"')
def step_admit(context: Any, execution: str, owner: str) -> None:
    _run(context, ad.Admit(execution, owner))


@action_step('execution "{execution}" arrives for owner "{owner}" with its own timeout of'
             " {seconds:d} seconds")
def step_admit_with_timeout(context: Any, execution: str, owner: str, seconds: int) -> None:
    _run(context, ad.Admit(execution, owner, timeout_seconds=seconds))


@action_step('execution "{execution}" arrives for owner "{owner}" on behalf of {identity:w}')
def step_admit_on_behalf(context: Any, execution: str, owner: str, identity: str) -> None:
    _run(context, ad.Admit(execution, owner, identity=identity))


@action_step("the admission runtime restarts")
def step_restart(context: Any) -> None:
    _run(context, ad.Restart())


@action_step('executions "{executions}" arrive for owner "{owner}"')
def step_admit_many(context: Any, executions: str, owner: str) -> None:
    for execution in _aliases(executions):
        _run(context, ad.Admit(execution, owner))


@action_step('execution "{execution}" completes')
def step_finish(context: Any, execution: str) -> None:
    _run(context, ad.FinishExecution(execution))


@action_step('execution "{execution}" is cancelled')
def step_cancel(context: Any, execution: str) -> None:
    _run(context, ad.CancelExecution(execution))


@action_step("an admission maintenance pass runs")
def step_maintain(context: Any) -> None:
    _run(context, ad.Maintain())


@action_step("{seconds:g} seconds pass on the admission clock")
def step_pass_time(context: Any, seconds: float) -> None:
    _run(context, ad.PassTime(seconds))


@action_step('execution "{execution}" calls owner "{target}" as call "{call}"')
def step_start_call(context: Any, execution: str, target: str, call: str) -> None:
    _run(context, ad.StartCall(call, execution, target))


@action_step('call "{call}" returns')
def step_end_call(context: Any, call: str) -> None:
    _run(context, ad.EndCall(call))


@action_step('schedule "{schedule}" of owner "{owner}" is created with a timeout of'
             " {seconds:d} seconds")
def step_add_schedule(context: Any, schedule: str, owner: str, seconds: int) -> None:
    _run(context, ad.AddSchedule(owner, schedule, seconds))


@action_step('schedule "{schedule}" of owner "{owner}" is changed to a timeout of'
             " {seconds:d} seconds")
def step_change_schedule(context: Any, schedule: str, owner: str, seconds: int) -> None:
    _run(context, ad.ChangeSchedule(owner, schedule, seconds))


@action_step('schedule "{schedule}" of owner "{owner}" is removed')
def step_remove_schedule(context: Any, schedule: str, owner: str) -> None:
    _run(context, ad.RemoveSchedule(owner, schedule))


# -- Then: checks on what the backend shows ---------------------------------------------------


@check_step("the admission answer is {answer}")
def check_answer(context: Any, answer: str) -> None:
    """`answer` is JSON: "running", "queued", true, 2, ..."""
    expected = _json(answer)
    actual = _harness(context).last_answer
    _check(context, expected == actual and type(expected) is type(actual),
           "the answer to the last admission command", expected, actual)


@check_step('the admission refusal is "{error}"')
def check_refusal(context: Any, error: str) -> None:
    actual = _harness(context).last_answer
    _check(context, isinstance(actual, dict) and actual.get("error") == error,
           "the refusal of the last admission command", error, actual)


@check_step('the admission refusal is "{error}" with {details}')
def check_refusal_with(context: Any, error: str, details: str) -> None:
    actual = _harness(context).last_answer
    wanted = {"error": error, **_json(details)}
    shown = ({key: actual.get(key) for key in wanted} if isinstance(actual, dict) else actual)
    _check(context, shown == wanted, "the refusal of the last admission command", wanted,
           actual)


@check_step('execution "{execution}" is {state:w}')
def check_execution_state(context: Any, execution: str, state: str) -> None:
    _check(context, _view(context, execution).state == state,
           f"execution {execution!r} state", state, _view(context, execution).state)


@check_step('executions "{executions}" are {state:w}')
def check_execution_states(context: Any, executions: str, state: str) -> None:
    for execution in _aliases(executions):
        check_execution_state(context, execution, state)


@check_step('execution "{execution}" started at second {seconds:g}')
def check_started(context: Any, execution: str, seconds: float) -> None:
    started = _view(context, execution).started_at
    wanted = EPOCH + timedelta(seconds=seconds)
    _check(context, started == wanted, f"execution {execution!r} started_at", wanted, started)


@check_step('execution "{execution}" ended at second {seconds:g}')
def check_ended(context: Any, execution: str, seconds: float) -> None:
    ended = _view(context, execution).ended_at
    wanted = EPOCH + timedelta(seconds=seconds)
    _check(context, ended == wanted, f"execution {execution!r} ended_at", wanted, ended)


@check_step('execution "{execution}" has a timeout of {seconds:d} seconds')
def check_timeout(context: Any, execution: str, seconds: int) -> None:
    actual = _view(context, execution).timeout_seconds
    _check(context, actual == seconds, f"execution {execution!r} timeout_seconds", seconds,
           actual)


@check_step('execution "{execution}" acts on behalf of {identity:w}')
def check_identity(context: Any, execution: str, identity: str) -> None:
    actual = _view(context, execution).identity
    _check(context, actual == identity, f"execution {execution!r} identity", identity, actual)


@check_step('execution "{execution}" never started')
def check_never_started(context: Any, execution: str) -> None:
    started = _view(context, execution).started_at
    _check(context, started is None, f"execution {execution!r} started_at", None, started)


@check_step('the backlog of owner "{owner}" is "{executions}"')
def check_backlog(context: Any, owner: str, executions: str) -> None:
    actual = list(_harness(context).runtime.backlog(owner))
    _check(context, actual == _aliases(executions), f"owner {owner!r} backlog, oldest first",
           _aliases(executions), actual)


@check_step('the backlog of owner "{owner}" is empty')
def check_backlog_empty(context: Any, owner: str) -> None:
    actual = list(_harness(context).runtime.backlog(owner))
    _check(context, actual == [], f"owner {owner!r} backlog", [], actual)


@check_step('owner "{owner}" shows {fields}')
def check_owner(context: Any, owner: str, fields: str) -> None:
    """`fields` is a JSON object of OwnerView fields to check, e.g. {"effective_cap": 2}."""
    view = _harness(context).runtime.owner(owner)
    wanted = _json(fields)
    shown = None if view is None else {key: getattr(view, key, "<missing>") for key in wanted}
    _check(context, shown == wanted, f"owner {owner!r}", wanted, shown)


@check_step('owner "{owner}" no longer exists')
def check_owner_gone(context: Any, owner: str) -> None:
    view = _harness(context).runtime.owner(owner)
    _check(context, view is None, f"owner {owner!r}", None, view)


@check_step("the stored fleet ceiling is unknown and the ceiling in force is {in_force:d}")
def check_ceiling_unreadable(context: Any, in_force: int) -> None:
    view = _harness(context).runtime.ceiling()
    _check(context, (view.stored, view.in_force) == (None, in_force),
           "the fleet ceiling (stored, in force)", (None, in_force),
           (view.stored, view.in_force))


@check_step("the stored fleet ceiling is {stored:d} and the ceiling in force is {in_force:d}")
def check_ceiling(context: Any, stored: int, in_force: int) -> None:
    view = _harness(context).runtime.ceiling()
    _check(context, (view.stored, view.in_force) == (stored, in_force),
           "the fleet ceiling (stored, in force)", (stored, in_force),
           (view.stored, view.in_force))


@check_step('outbound call "{call}" is {state:w}')
def check_call(context: Any, call: str, state: str) -> None:
    actual = _harness(context).runtime.call_state(call)
    _check(context, actual == state, f"call {call!r} state", state, actual)


@check_step('the schedules of owner "{owner}" are {schedules}')
def check_schedules(context: Any, owner: str, schedules: str) -> None:
    """`schedules` is JSON: [["nightly", 600], ...] in creation order."""
    actual = [list(s) for s in _harness(context).runtime.schedules(owner)]
    _check(context, actual == _json(schedules), f"owner {owner!r} schedules",
           _json(schedules), actual)
