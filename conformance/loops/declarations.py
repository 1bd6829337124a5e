"""What the loops area's suites say (LP-001..LP-020), declared once
(conformance/vocabulary.py): the commands, checks, setting and precondition from which its
Behave steps and Robot keywords are derived, in the feature file's and the Robot suite's
own words.

The keywords take parameters and costs as text (JSON, or NaN / inf / -inf / none); the
steps get a cost parsed already (the `LoopCost` type registered here), and start a loop
from the step's parameter table. Checks read the BACKEND's own loop record; loops are
named by aliases; seconds count from the virtual clock's start.
"""

from __future__ import annotations

import json
import math
from typing import Any

from behave import register_type

from jobconform.backends.loops.runner import LOOP_TRIGGER
from jobconform.conformance.area_steps import at
from jobconform.conformance.loops.harness import (
    LoopsHarness,
    loop_event_matches,
    run_event_matches,
    same_cost,
)
from jobconform.conformance.vocabulary import (
    Check,
    Declaration,
    OnHarness,
    Phrase,
    Precondition,
    Reading,
    Setting,
    Vocabulary,
    check_worded,
    command_worded,
)
from jobconform.reference.loops import commands as lc
from jobconform.reference.loops.oracle import FailResult, LoopParameters, RaiseError, Respond

SPECIAL_NUMBERS = {"NaN": math.nan, "inf": math.inf, "-inf": -math.inf, "none": None}


def written_value(text: str) -> Any:
    """A parameter or cost as a Robot test writes it: JSON, or NaN / inf / -inf / none.

    Raises:
        ValueError: neither.
    """
    if text in SPECIAL_NUMBERS:
        return SPECIAL_NUMBERS[text]
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{text!r} is not a JSON value ({error.msg}); write strings in"
                         ' double quotes, e.g. message="go"') from None


def start_loop(alias: str, **parameters: str) -> lc.StartLoop:
    """Start loop ``alias``; returns the answer (``started`` or a refusal)."""
    try:
        params = LoopParameters(**{name: written_value(text)
                                   for name, text in parameters.items()})
    except TypeError as error:
        raise ValueError(f"bad loop parameters: {error}") from None
    return lc.StartLoop(alias, params)


def run_responds(alias: str, text: str, cost: str = "0") -> lc.EndRun:
    return lc.EndRun(alias, Respond(text, written_value(cost)))


def run_sends_no_response(alias: str) -> lc.EndRun:
    return lc.EndRun(alias, Respond(None, 0.0))


def run_returns_non_success(alias: str, status: str, cost: str = "none") -> lc.EndRun:
    return lc.EndRun(alias, FailResult(status, written_value(cost)))


def run_raises(alias: str, error_type: str, message: str) -> lc.EndRun:
    return lc.EndRun(alias, RaiseError(error_type, message))


def stop_loop(alias: str) -> lc.StopLoop:
    return lc.StopLoop(alias)


def loop_clock_moves(seconds: float) -> lc.PassTime:
    return lc.PassTime(float(seconds))


def restart_loop_runtime() -> lc.RestartLoops:
    return lc.RestartLoops()


def responds(alias: str, text: str, cost: float | None = 0.0) -> lc.EndRun:
    """A phrase's response: a written ``\\n`` is a line break."""
    return lc.EndRun(alias, Respond(text.replace("\\n", "\n"), cost))


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


def started_with_table(alias: str, table: list[dict[str, str]]) -> lc.StartLoop:
    """A parameter table (| parameter | value |, values in JSON) as the loop's start."""
    values: dict[str, Any] = {}
    for row in table:
        text = row["value"]
        values[row["parameter"]] = _cost(text) if text in ("NaN", "inf", "-inf") else \
            json.loads(text)
    try:
        return lc.StartLoop(alias, LoopParameters(**values))
    except TypeError as error:
        raise ValueError(f"bad loop parameter table: {error}") from None


RUN_OF = 'the run of loop "{alias}" '
DECLARATIONS = (
    Declaration("Start Loop", start_loop, (
        Phrase('loop "{alias}" is started with', started_with_table, table=True),
    )),
    Declaration("Run Responds", run_responds, (
        Phrase(RUN_OF + 'responds "{text}" costing {cost:LoopCost}', responds),
        Phrase(RUN_OF + 'responds "{text}"', responds),
        Phrase(RUN_OF + 'responds with {count:d} times "{text}"',
               lambda alias, count, text: lc.EndRun(alias, Respond(text * count, 0.0))),
        Phrase(RUN_OF + "responds with an empty text",
               lambda alias: lc.EndRun(alias, Respond("", 0.0))),
    )),
    command_worded("Run Sends No Response", run_sends_no_response, RUN_OF + "sends no response"),
    Declaration("Run Returns Non Success", run_returns_non_success, (
        Phrase(RUN_OF + "returns the non-success result {status:w}",
               lambda alias, status: lc.EndRun(alias, FailResult(status))),
    )),
    command_worded("Run Raises", run_raises, RUN_OF + 'raises {error_type:w} "{message}"'),
    command_worded("Stop Loop", stop_loop, 'loop "{alias}" is asked to stop'),
    command_worded("Loop Clock Moves", loop_clock_moves,
                   "the loop clock moves {seconds:g} seconds"),
    command_worded("Restart Loop Runtime", restart_loop_runtime, "the loop runtime restarts"),
)

# -- checks: what the backend's loop record shows ---------------------------------------------

NOT_STARTED = "<never started by the backend>"


def _view(through: Any, alias: str) -> Any:
    """The backend's record of loop `alias`, or why there is none."""
    harness: LoopsHarness = through.harness
    loop_id = harness.ids.get(alias)
    if loop_id is None:
        return NOT_STARTED
    view = harness.runtime.get_loop(loop_id)
    return "<not held>" if view is None else view


def _loop(alias: str, what: str, wanted: object, read: Any,
          agrees: Any = None) -> Reading:
    def shown(through: Any) -> object:
        view = _view(through, alias)
        return view if isinstance(view, str) else read(view)
    return Reading(f"loop {alias!r} {what}", shown, wanted,
                   *(() if agrees is None else (agrees,)))


def _run(alias: str, number: int, what: str, wanted: object, read: Any) -> Reading:
    def shown(view: Any) -> object:
        runs = view.runs
        return read(runs[number - 1]) if 1 <= number <= len(runs) else f"{len(runs)} runs"
    return _loop(alias, f"run {number} {what}", wanted, shown)


def loop_should_have_ended(alias: str, status: str, reason: str) -> Reading:
    return _loop(alias, "status and stop reason", (status, reason),
                 lambda view: (view.status, view.stop_reason))


def loop_should_be_running(alias: str, runs: int) -> Reading:
    return _loop(alias, "status, stop reason and runs", ("running", None, runs),
                 lambda view: (view.status, view.stop_reason, len(view.runs)))


def loop_run_counts_should_be(alias: str, runs: int, failed: int) -> Reading:
    return _loop(alias, "runs and failed runs", (runs, failed),
                 lambda view: (len(view.runs), view.failed_runs))


def run_message_should_be(alias: str, number: int, message: str) -> Reading:
    """The recorded message, and the one the agent received if the run was executed."""
    def shown(through: Any) -> object:
        recorded = _run(alias, number, "", None, lambda run: run.message).read(through)
        agent = through.harness.agents.get(alias)
        return recorded, (recorded if agent is None else agent.received.get(number, recorded))
    return Reading(f"loop {alias!r} run {number} message (recorded, sent)", shown,
                   (message, message))


def run_should_be_labelled(alias: str, number: int) -> Reading:
    """The agent was called for run ``number`` with triggered_by "loop" and the loop's id
    as start_loop answered it (LP-020)."""
    def shown(through: Any) -> object:
        agent = through.harness.agents.get(alias)
        return "<never executed>" if agent is None else agent.labels.get(
            number, "<never executed>")
    return Reading(f"loop {alias!r} run {number}: its execution's (triggered_by, loop_id)",
                   shown, OnHarness(lambda harness: (LOOP_TRIGGER, harness.ids.get(alias))))


def run_message_length(alias: str, number: int, length: int, tail: str) -> Reading:
    return _run(alias, number, "message length and end", (length, tail),
                lambda run: (len(run.message), run.message[-len(tail):]))


def run_status_should_be(alias: str, number: int, status: str, error: str = "") -> Reading:
    return _run(alias, number, "status and error", (status, error or None),
                lambda run: (run.status, run.error))


def _run_status(alias: str, number: int, status: str) -> Reading:
    return _run(alias, number, "status", status, lambda run: run.status)


def run_should_have_started_at(alias: str, number: int, seconds: float) -> Reading:
    return _run(alias, number, "started_at", at(seconds), lambda run: run.started_at)


def loop_should_have_ended_at(alias: str, seconds: float) -> Reading:
    return _loop(alias, "completed_at", at(seconds), lambda view: view.completed_at)


def loop_should_have_spent(alias: str, total: float) -> Reading:
    return _loop(alias, "total_cost", total, lambda view: view.total_cost,
                 lambda actual, wanted: not isinstance(actual, str)
                 and same_cost(wanted, actual))


def loop_cost_warnings_should_be(alias: str, *numbers: int) -> Reading:
    return _loop(alias, "cost_warnings", tuple(numbers),
                 lambda view: tuple(view.cost_warnings))


def loop_elapsed_seconds_should_be(alias: str, seconds: float) -> Reading:
    return _loop(alias, "elapsed_seconds", seconds, lambda view: view.elapsed_seconds,
                 lambda actual, wanted: isinstance(actual, float | int)
                 and abs(actual - seconds) <= 1e-6)


def stop_answer_should_be(alias: str, answer: str) -> Reading:
    """Ask loop ``alias`` to stop; the backend must answer ``answer``."""
    return Reading(f"the answer to stopping loop {alias!r}",
                   lambda through: through.run(stop_loop(alias)), answer)


def _refused(refused: str) -> lc.Refused:
    return lc.Refused(tuple(name.strip() for name in refused.split(",")))


def start_should_be_refused(alias: str, refused: str, **parameters: str) -> Reading:
    """Start loop ``alias``; it must be refused naming ``refused`` (comma-separated)."""
    return Reading(f"the answer to starting loop {alias!r}",
                   lambda through: through.run(start_loop(alias, **parameters)),
                   _refused(refused))


def _start_refused(alias: str, parameters: str) -> Reading:
    """The last answer refused the start, and the backend holds no loop of the alias."""
    return Reading(f"the answer to starting loop {alias!r} (answer, started)",
                   lambda through: (through.harness.last_answer, alias in through.harness.ids),
                   (_refused(parameters), False))


def _events(through: Any, alias: str) -> Any:
    return through.harness.loop_events(alias)


def loop_should_have_emitted(alias: str, count: int) -> Reading:
    """Loop ``alias`` emitted ``count`` events so far (LP-019)."""
    return Reading(f"the number of events loop {alias!r} emitted",
                   lambda through: _events(through, alias), count,
                   lambda actual, wanted: isinstance(actual, list | tuple)
                   and len(actual) == wanted)


def _event(alias: str, index: int, what: str, wanted: object,
           matches: Any) -> Reading:
    def shown(through: Any) -> object:
        events = _events(through, alias)
        return events[index - 1] if 1 <= index <= len(events) else events
    return Reading(f"event {index} of loop {alias!r} ({what})", shown, wanted,
                   lambda actual, _: isinstance(actual, tuple) and matches(actual))


def _run_event(alias: str, index: int, run: int, status: str, cost: float | None,
               duration_ms: float) -> Reading:
    return _event(alias, index, "event, run, execution, cost, duration ms, the run's status"
                  " when emitted", ("loop_run_completed", run, "<an execution id of its own>",
                                    cost, duration_ms, status),
                  lambda event: run_event_matches(event, run, status, cost, duration_ms))


def run_event_should_be(alias: str, index: int, run: int, status: str, cost: str,
                        duration_ms: float) -> Reading:
    """Event ``index`` of loop ``alias`` is loop_run_completed for run ``run``, with an
    execution id of its own, ``cost`` (a number or none) and ``duration_ms``, the run
    recorded ``status`` when it came."""
    return _run_event(alias, index, run, status, written_value(cost), duration_ms)


def loop_event_should_be(alias: str, index: int, status: str, reason: str) -> Reading:
    """Event ``index`` of loop ``alias`` is loop_completed naming ``status`` and
    ``reason``, the loop recorded so when it came."""
    return _event(alias, index, "event, status, stop reason, the loop's status and stop"
                  " reason when emitted", ("loop_completed", status, reason, status, reason),
                  lambda event: loop_event_matches(event, status, reason))


LOOP = 'loop "{alias}"'
RUN = 'run {number:d} of loop "{alias}"'
CHECKS = (
    check_worded("Loop Should Have Ended", loop_should_have_ended,
                 LOOP + " ended {status:w} with stop reason {reason:w}"),
    Check("Loop Should Be Running", loop_should_be_running, (
        Phrase(LOOP + " is running with {count:d} runs",
               lambda alias, count: loop_should_be_running(alias, count)),
    )),
    Check("Loop Run Counts Should Be", loop_run_counts_should_be, (
        Phrase(LOOP + " has {count:d} runs and {failed:d} failed runs",
               lambda alias, count, failed: loop_run_counts_should_be(alias, count, failed)),
    )),
    Check("Run Message Should Be", run_message_should_be, (
        Phrase(RUN + ' has the message "{message}"', lambda number, alias, message:
               run_message_should_be(alias, number, message.replace("\\n", "\n"))),
    )),
    check_worded("Run Should Be Labelled As Its Loop's", run_should_be_labelled,
                 RUN + " was executed as triggered by its loop"),
    check_worded(None, run_message_length,
                 RUN + ' has a message of {length:d} characters ending in "{tail}"'),
    Check("Run Status Should Be", run_status_should_be, (
        Phrase(RUN + ' is {status:w} with error "{error}"', run_status_should_be),
        Phrase(RUN + " is {status:w}", _run_status),
    )),
    check_worded("Run Should Have Started At", run_should_have_started_at,
                 RUN + " started at second {seconds:g}"),
    check_worded("Loop Should Have Ended At", loop_should_have_ended_at,
                 LOOP + " ended at second {seconds:g}"),
    check_worded("Loop Should Have Spent", loop_should_have_spent, LOOP + " has spent {total:g}"),
    Check("Loop Cost Warnings Should Be", loop_cost_warnings_should_be, (
        Phrase(LOOP + ' logged a missing cost for runs "{numbers}"',
               lambda alias, numbers: loop_cost_warnings_should_be(
                   alias, *(int(n) for n in numbers.split(",") if n.strip()))),
    )),
    check_worded("Loop Elapsed Seconds Should Be", loop_elapsed_seconds_should_be,
                 LOOP + " shows {seconds:g} elapsed seconds"),
    Check("Start Of Loop Should Be Refused", start_should_be_refused, (
        Phrase('the start of loop "{alias}" is refused for "{parameters}"', _start_refused),
    )),
    Check("Stop Answer Should Be", stop_answer_should_be, (
        Phrase('the stop answer is "{answer}"',
               lambda answer: Reading("the answer to the stop request", lambda through:
                                      through.harness.last_answer, answer)),
    )),
    check_worded("Loop Should Have Emitted", loop_should_have_emitted,
                 LOOP + " has emitted {count:d} events"),
    Check("Run Event Should Be", run_event_should_be, (
        Phrase('event {index:d} of loop "{alias}" reports run {run:d} {status:w} costing'
               " {cost:LoopCost} in {duration:g} ms",
               lambda index, alias, run, status, cost, duration: _run_event(
                   alias, index, run, status, cost, duration)),
    )),
    check_worded("Loop Event Should Be", loop_event_should_be,
                 'event {index:d} of loop "{alias}" reports the loop {status:w} with stop'
                 " reason {reason:w}"),
)


VOCABULARY = Vocabulary(
    area="loops", noun="loop", start="Start Loop Runtime", commands=DECLARATIONS,
    checks=CHECKS, settings=(Setting("a loop runtime", dict),),
    # LP-019 needs a backend claiming loop-events: elsewhere skipped, never passed.
    preconditions=(Precondition.claimed(
        "Require Loop Events", "the loop events are emitted",
        lambda harness: harness.emits_events,
        "report loop events to an event sink (loop-events)"),),
    open=lambda backend, profile, registry, overrides: LoopsHarness(backend, profile,
                                                                    registry))
