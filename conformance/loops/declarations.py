"""The loops area's commands, declared once (conformance/vocabulary.py).

Each declaration names the Robot keyword that sends a command, builds the command from
the keyword's arguments, and lists the Gherkin wordings that send it. The Behave steps
(conformance/loops/steps.py) and the Robot keywords (conformance/loops/keywords.py) are
derived from this list; the wordings are the feature file's and the Robot suite's own.

The keywords take parameters and costs as text (JSON, or NaN / inf / -inf / none); the
steps get a cost parsed already (the `LoopCost` type steps.py registers). Starting a loop
has no phrase: its step reads the step's parameter table, so it stays in steps.py.
"""

from __future__ import annotations

import json
import math
from typing import Any

from jobconform.conformance.vocabulary import Declaration, Phrase
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


RUN_OF = 'the run of loop "{alias}" '
DECLARATIONS = (
    Declaration("Start Loop", start_loop),
    Declaration("Run Responds", run_responds, (
        Phrase(RUN_OF + 'responds "{text}" costing {cost:LoopCost}', responds),
        Phrase(RUN_OF + 'responds "{text}"', responds),
        Phrase(RUN_OF + 'responds with {count:d} times "{text}"',
               lambda alias, count, text: lc.EndRun(alias, Respond(text * count, 0.0))),
        Phrase(RUN_OF + "responds with an empty text",
               lambda alias: lc.EndRun(alias, Respond("", 0.0))),
    )),
    Declaration("Run Sends No Response", run_sends_no_response, (
        Phrase(RUN_OF + "sends no response", run_sends_no_response),
    )),
    Declaration("Run Returns Non Success", run_returns_non_success, (
        Phrase(RUN_OF + "returns the non-success result {status:w}",
               lambda alias, status: lc.EndRun(alias, FailResult(status))),
    )),
    Declaration("Run Raises", run_raises, (
        Phrase(RUN_OF + 'raises {error_type:w} "{message}"', run_raises),
    )),
    Declaration("Stop Loop", stop_loop, (
        Phrase('loop "{alias}" is asked to stop', stop_loop),
    )),
    Declaration("Loop Clock Moves", loop_clock_moves, (
        Phrase("the loop clock moves {seconds:g} seconds", loop_clock_moves),
    )),
    Declaration("Restart Loop Runtime", restart_loop_runtime, (
        Phrase("the loop runtime restarts", restart_loop_runtime),
    )),
)
