"""Behave steps for sequential agent loops (spec/loops.yaml, LP-001..LP-019).

Every When-step sends one loop command through `LoopsHarness.run` (the steps of the
commands declared in conformance/loops/declarations.py are derived from them), which
applies it to the backend and to the oracle and compares every loop; a `Divergence`
propagates as the scenario's failure. Every Then-step reads the BACKEND's own loop record
and checks the value the scenario states. Loops are named by aliases; seconds count from
the virtual clock's start. Register with `from jobconform.conformance.loops.steps import *`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from behave import register_type

from jobconform.backends.loops.protocol import LoopSnapshot, RunSnapshot
from jobconform.backends.loops.runner import LOOP_TRIGGER
from jobconform.conformance.area_steps import AreaScenario, at, expectation_failure
from jobconform.conformance.loops.declarations import DECLARATIONS
from jobconform.conformance.loops.harness import (
    LoopsHarness,
    loop_event_matches,
    run_event_matches,
    same_cost,
)
from jobconform.conformance.scenario import RunConfig, state_of
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference.loops import commands as lc
from jobconform.reference.loops.oracle import LoopParameters

__all__: list[str] = []

# A cost as a scenario writes it: a number, NaN, inf, -inf, or none (no cost reported).
COST_WORDS = {"none": None, "NaN": math.nan, "inf": math.inf, "-inf": -math.inf}


def _cost(text: str) -> float | None:
    if text in COST_WORDS:
        return COST_WORDS[text]
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"not a cost: {text!r}; write a number, NaN, inf, -inf or none"
                         ) from None


class _Cost:
    pattern = r"none|NaN|-?inf|-?\d+(?:\.\d+)?(?:e-?\d+)?"

    def __call__(self, text: str) -> float | None:
        return _cost(text)


register_type(LoopCost=_Cost())


def _open_loops(config: RunConfig) -> AreaScenario[LoopsHarness]:
    """The loops harness of one scenario, opened on first use and closed after it."""
    return AreaScenario(LoopsHarness(config.backend, config.profile, config.registry))


def _scenario(context: Any) -> AreaScenario[LoopsHarness]:
    scenario: AreaScenario[LoopsHarness] = state_of(context).area_state("loops", _open_loops)
    return scenario


def _loops(context: Any) -> LoopsHarness:
    return _scenario(context).harness


def _fail(context: Any, what: str, expected: object, actual: object) -> AssertionError:
    return expectation_failure(context, "the backend's loop does not", "LP-",
                               _loops(context).commands, what, expected, actual,
                               lc.describe_loop_command)


def _view(context: Any, alias: str) -> LoopSnapshot:
    harness = _loops(context)
    loop_id = harness.ids.get(alias)
    if loop_id is None:
        raise AssertionError(f"loop {alias!r} was never started by the backend")
    view = harness.runtime.get_loop(loop_id)
    if view is None:
        raise _fail(context, f"loop {alias!r} should be held", "a record", None)
    return view


def _run(context: Any, alias: str, number: int) -> RunSnapshot:
    runs = _view(context, alias).runs
    if not 1 <= number <= len(runs):
        raise _fail(context, f"loop {alias!r} should have a run {number}", f"run {number}",
                    f"{len(runs)} runs")
    return runs[number - 1]


def _parameters(context: Any) -> LoopParameters:
    """A parameter table (| parameter | value |, values in JSON) as LoopParameters."""
    values: dict[str, Any] = {}
    for row in context.table:
        text = row["value"]
        values[row["parameter"]] = _cost(text) if text in ("NaN", "inf", "-inf") else \
            json.loads(text)
    try:
        return LoopParameters(**values)
    except TypeError as error:
        raise ValueError(f"bad loop parameter table: {error}") from None


# -- Given / When -----------------------------------------------------------------------------


@setup_step("a loop runtime")
def a_loop_runtime(context: Any) -> None:
    _loops(context)


# The other commands' steps are derived from their declarations (declarations.py); this
# one reads the step's parameter table.
@action_step('loop "{alias}" is started with')
def loop_is_started(context: Any, alias: str) -> None:
    _scenario(context).run(lc.StartLoop(alias, _parameters(context)))


derive_steps(DECLARATIONS, _scenario)


# -- Then ------------------------------------------------------------------------------------


@check_step('loop "{alias}" ended {status:w} with stop reason {reason:w}')
def loop_ended(context: Any, alias: str, status: str, reason: str) -> None:
    view = _view(context, alias)
    if (view.status, view.stop_reason) != (status, reason):
        raise _fail(context, f"loop {alias!r} status and stop reason", (status, reason),
                    (view.status, view.stop_reason))


@check_step('loop "{alias}" is running with {count:d} runs')
def loop_running(context: Any, alias: str, count: int) -> None:
    view = _view(context, alias)
    if (view.status, view.stop_reason, len(view.runs)) != ("running", None, count):
        raise _fail(context, f"loop {alias!r} status, stop reason and runs",
                    ("running", None, count), (view.status, view.stop_reason, len(view.runs)))


@check_step('loop "{alias}" has {count:d} runs and {failed:d} failed runs')
def loop_counts(context: Any, alias: str, count: int, failed: int) -> None:
    view = _view(context, alias)
    if (len(view.runs), view.failed_runs) != (count, failed):
        raise _fail(context, f"loop {alias!r} runs and failed runs", (count, failed),
                    (len(view.runs), view.failed_runs))


@check_step('run {number:d} of loop "{alias}" has the message "{message}"')
def run_message(context: Any, alias: str, number: int, message: str) -> None:
    """The recorded message, and the one the agent received if the run was executed."""
    message = message.replace("\\n", "\n")
    shown = _run(context, alias, number).message
    sent = _loops(context).agents[alias].received.get(number, shown)
    if (shown, sent) != (message, message):
        raise _fail(context, f"loop {alias!r} run {number} message (recorded, sent)",
                    (message, message), (shown, sent))


@check_step('run {number:d} of loop "{alias}" was executed as triggered by its loop')
def run_labelled(context: Any, alias: str, number: int) -> None:
    """The labels the agent was called with for the run (LP-020): "loop" and the loop's id
    as start_loop answered it."""
    harness = _loops(context)
    wanted = (LOOP_TRIGGER, harness.ids[alias])
    labels = harness.agents[alias].labels.get(number, "<never executed>")
    if labels != wanted:
        raise _fail(context, f"loop {alias!r} run {number}: its execution's (triggered_by,"
                    " loop_id)", wanted, labels)


@check_step('run {number:d} of loop "{alias}" has a message of {length:d} characters'
            ' ending in "{tail}"')
def run_message_length(context: Any, alias: str, number: int, length: int, tail: str) -> None:
    shown = _run(context, alias, number).message
    if len(shown) != length or not shown.endswith(tail):
        raise _fail(context, f"loop {alias!r} run {number} message length and end",
                    (length, tail), (len(shown), shown[-len(tail):]))


@check_step('run {number:d} of loop "{alias}" is {status:w} with error "{error}"')
def run_failed(context: Any, alias: str, number: int, status: str, error: str) -> None:
    run = _run(context, alias, number)
    if (run.status, run.error) != (status, error):
        raise _fail(context, f"loop {alias!r} run {number} status and error", (status, error),
                    (run.status, run.error))


@check_step('run {number:d} of loop "{alias}" is {status:w}')
def run_status(context: Any, alias: str, number: int, status: str) -> None:
    run = _run(context, alias, number)
    if run.status != status:
        raise _fail(context, f"loop {alias!r} run {number} status", status, run.status)


@check_step('run {number:d} of loop "{alias}" started at second {seconds:g}')
def run_started(context: Any, alias: str, number: int, seconds: float) -> None:
    run = _run(context, alias, number)
    if run.started_at != at(seconds):
        raise _fail(context, f"loop {alias!r} run {number} started_at", at(seconds),
                    run.started_at)


@check_step('loop "{alias}" ended at second {seconds:g}')
def loop_completed_at(context: Any, alias: str, seconds: float) -> None:
    view = _view(context, alias)
    if view.completed_at != at(seconds):
        raise _fail(context, f"loop {alias!r} completed_at", at(seconds), view.completed_at)


@check_step('loop "{alias}" has spent {total:g}')
def loop_spent(context: Any, alias: str, total: float) -> None:
    view = _view(context, alias)
    if not same_cost(total, view.total_cost):
        raise _fail(context, f"loop {alias!r} total_cost", total, view.total_cost)


@check_step('loop "{alias}" logged a missing cost for runs "{numbers}"')
def loop_cost_warnings(context: Any, alias: str, numbers: str) -> None:
    wanted = tuple(int(n) for n in numbers.split(",") if n.strip())
    view = _view(context, alias)
    if tuple(view.cost_warnings) != wanted:
        raise _fail(context, f"loop {alias!r} cost_warnings", wanted, view.cost_warnings)


@check_step('loop "{alias}" shows {seconds:g} elapsed seconds')
def loop_elapsed(context: Any, alias: str, seconds: float) -> None:
    view = _view(context, alias)
    if abs(view.elapsed_seconds - seconds) > 1e-6:
        raise _fail(context, f"loop {alias!r} elapsed_seconds", seconds, view.elapsed_seconds)


@check_step('the start of loop "{alias}" is refused for "{parameters}"')
def loop_refused(context: Any, alias: str, parameters: str) -> None:
    wanted = lc.Refused(tuple(p.strip() for p in parameters.split(",")))
    harness = _loops(context)
    actual = harness.last_answer
    if actual != wanted or alias in harness.ids:
        raise _fail(context, f"the answer to starting loop {alias!r}", wanted, actual)


@check_step('the stop answer is "{answer}"')
def stop_answer(context: Any, answer: str) -> None:
    actual = _loops(context).last_answer
    if actual != answer:
        raise _fail(context, "the answer to the stop request", answer, actual)


# -- loop events (LP-019) ---------------------------------------------------------------------


@setup_step("the loop events are emitted")
def loop_events_emitted(context: Any) -> None:
    """LP-019 needs a backend claiming loop-events; elsewhere the scenario is skipped, never
    passed."""
    harness = _loops(context)
    if not harness.emits_events:
        context.scenario.skip(f"backend {harness.backend.name} does not report loop events"
                              " to an event sink (loop-events)")


def _event(context: Any, alias: str, index: int) -> tuple[object, ...]:
    events = _loops(context).loop_events(alias)
    if not 1 <= index <= len(events):
        raise _fail(context, f"loop {alias!r} should have emitted an event {index}",
                    f"event {index}", events)
    return events[index - 1]


@check_step('loop "{alias}" has emitted {count:d} events')
def loop_event_count(context: Any, alias: str, count: int) -> None:
    events = _loops(context).loop_events(alias)
    if len(events) != count:
        raise _fail(context, f"the number of events loop {alias!r} emitted", count, events)


@check_step('event {index:d} of loop "{alias}" reports run {run:d} {status:w} costing'
            ' {cost:LoopCost} in {duration:g} ms')
def run_event(context: Any, index: int, alias: str, run: int, status: str,
              cost: float | None, duration: float) -> None:
    event = _event(context, alias, index)
    if not run_event_matches(event, run, status, cost, duration):
        raise _fail(context, f"event {index} of loop {alias!r} (event, run, execution, cost,"
                    " duration ms, the run's status when emitted)",
                    ("loop_run_completed", run, "<an execution id of its own>", cost,
                     duration, status), event)


@check_step('event {index:d} of loop "{alias}" reports the loop {status:w} with stop reason'
            ' {reason:w}')
def loop_event(context: Any, index: int, alias: str, status: str, reason: str) -> None:
    event = _event(context, alias, index)
    if not loop_event_matches(event, status, reason):
        raise _fail(context, f"event {index} of loop {alias!r} (event, status, stop reason,"
                    " the loop's status and stop reason when emitted)",
                    ("loop_completed", status, reason, status, reason), event)
