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
from jobconform.conformance.admission.declarations import DECLARATIONS
from jobconform.conformance.admission.harness import AdmissionHarness
from jobconform.conformance.area_steps import AreaScenario, alias_list
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.requirement_tags import REQUIREMENT_TAG
from jobconform.conformance.scenario import RunConfig, state_of
from jobconform.conformance.step_library import check_step, setup_step
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference import admission as ad

__all__: list[str] = []

AREA = "admission"


def _admission(context: Any, **overrides: Any) -> AreaScenario[AdmissionHarness]:
    """The scenario's admission harness, opened with the profile's defaults (and
    `overrides`) on first use."""

    def open_area(config: RunConfig) -> AreaScenario[AdmissionHarness]:
        return AreaScenario(AdmissionHarness(config.backend, config.profile, config.registry,
                                             overrides))

    return state_of(context).area_state(AREA, open_area)


def _harness(context: Any) -> AdmissionHarness:
    return _admission(context).harness


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
    area = state_of(context).areas.get(AREA)
    commands = area.harness.commands if isinstance(area, AreaScenario) else []
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
    for pair in alias_list(settings):
        name, _, value = pair.partition("=")
        overrides[name.strip()] = _json(value.strip())
    _admission(context, **overrides)


# -- Given/When: commands, derived from their declarations (declarations.py) ---------------

derive_steps(DECLARATIONS, _admission)


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
    for execution in alias_list(executions):
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
    _check(context, actual == alias_list(executions), f"owner {owner!r} backlog, oldest first",
           alias_list(executions), actual)


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


@check_step("the fleet ceiling's changes are {changes}")
def check_ceiling_changes(context: Any, changes: str) -> None:
    """`changes` is JSON: [{"value": 5, "by": "ann", "second": 0}, ...], oldest first,
    "second" counted from the check's start (AD-022)."""
    actual = [{"value": c.value, "by": c.by, "second": (c.at - EPOCH).total_seconds()}
              for c in _harness(context).runtime.ceiling_changes()]
    _check(context, actual == _json(changes), "the fleet ceiling's changes",
           _json(changes), actual)


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
