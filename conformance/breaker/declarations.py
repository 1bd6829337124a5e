"""The breaker area's commands, declared once (conformance/vocabulary.py).

Each declaration names the Robot keyword that sends a command, builds the command from
the keyword's arguments, and lists the Gherkin wordings that send it. The Behave steps
(conformance/breaker/steps.py) and the Robot keywords (conformance/breaker/keywords.py)
are derived from this list; the wordings are the feature files' and Robot suites' own.

The suites number the check's two workers 1 and 2; the commands, 0 and 1. The answer to
a call or a piece of work is kept under its name, the backstop sweep's under BACKSTOP and
the concurrent callers' under CONCURRENT, for the Then-checks to read.
"""

from __future__ import annotations

from jobconform.conformance.vocabulary import Declaration, Phrase
from jobconform.reference.breaker import commands as bc

BACKSTOP = "<backstop>"  # where the number of pieces of work the sweep failed is kept
CONCURRENT = "<concurrent>"  # where the concurrent callers' answers are kept


def names(text: str) -> tuple[str, ...]:
    """`a, b` as names, blanks dropped."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def worker_index(number: int) -> int:
    """Worker 1 or 2 of a scenario, as the command's index.

    Raises:
        ValueError: not 1 or 2.
    """
    if number not in (1, 2):
        raise ValueError(f"a check has workers 1 and 2, not {number}")
    return number - 1


def concurrent_answers_of(answers: dict[str, object]) -> dict[str, int]:
    """How many of the concurrent callers got each answer (CONCURRENT's value), {} before
    they called."""
    answer = answers.get(CONCURRENT, {})
    assert isinstance(answer, dict)
    return {str(key): int(value) for key, value in answer.items()}


def _named(command: bc.Call | bc.AddWork) -> str:
    return command.call if isinstance(command, bc.Call) else command.work


def engage_breaker_for(target: str) -> list[bc.SwitchBreaker | bc.OptIn]:
    """Turn the global switch on and opt ``target`` in."""
    return [bc.SwitchBreaker(True), bc.OptIn(target, True)]


def call_arrives(target: str, call: str, worker: int = 1) -> bc.Call:
    return bc.Call(target, call, worker - 1)


def calls_arrive_at_once(target: str, calls: str) -> bc.CallsAtOnce:
    return bc.CallsAtOnce(target, names(calls))


def call_ends(target: str, call: str, outcome: str, failure_class: str | None = None,
              worker: int = 1) -> bc.Report:
    """``outcome`` is success, failure (give ``failure_class``) or cancelled."""
    return bc.Report(target, call, outcome, failure_class, worker - 1)


def call_ends_raw(target: str, call: str, signal: str | None = None,
                  exit_code: int | None = None, output: bool = False, error_text: str = "",
                  worker: int = 1) -> bc.CallEndsRaw:
    """The call failed; the runtime classes its raw end (``signal`` such as SIGKILL or
    None, ``exit_code``, whether it gave ``output``, its ``error_text``) and answers the
    class (CB-016, CB-017), kept under the call's name."""
    return bc.CallEndsRaw(target, call, signal, exit_code, output, error_text, worker - 1)


def end_reported(call: str, signal: str | None = None, exit_code: int | None = None,
                 output: bool = False, error_text: str = "",
                 worker: int = 1) -> bc.EndReported:
    """The error the runtime reports for a failed end (``signal``, ``exit_code``,
    ``output``, ``error_text`` as for Call Ends Raw), kept under ``call``: its class, the
    signal that killed it and a silent failure's possible causes (CB-018, CB-019)."""
    return bc.EndReported(call, signal, exit_code, output, error_text, worker - 1)


def store_goes_down() -> bc.StoreOutage:
    return bc.StoreOutage(True)


def store_comes_back() -> bc.StoreOutage:
    return bc.StoreOutage(False)


def target_misses_heartbeat(target: str, worker: int = 1) -> bc.MissedHeartbeat:
    return bc.MissedHeartbeat(target, worker - 1)


def trip_drains_are_lost(lost: bool = True) -> bc.DrainLost:
    """While on, a trip's inline drain is lost (the backstop must fail the work)."""
    return bc.DrainLost(lost)


def backstop_sweep_runs(worker: int = 1) -> bc.BackstopSweep:
    return bc.BackstopSweep(worker - 1)


CALL = 'call "{call}" to target "{target}"'
DECLARATIONS = (
    # A command whose fields are the keyword's arguments is its own builder.
    Declaration("Engage Breaker For", engage_breaker_for, (
        Phrase('the breaker is engaged for target "{target}"', engage_breaker_for),
    )),
    Declaration("Turn Global Breaker Switch", bc.SwitchBreaker, (
        Phrase("the global breaker switch is turned on", lambda: bc.SwitchBreaker(True)),
        Phrase("the global breaker switch is turned off", lambda: bc.SwitchBreaker(False)),
    )),
    Declaration("Opt In Target", bc.OptIn, (
        Phrase('target "{target}" opts in to the breaker', lambda target: bc.OptIn(target)),
        Phrase('target "{target}" opts out of the breaker',
               lambda target: bc.OptIn(target, False)),
    )),
    Declaration("Call Arrives", call_arrives, (
        Phrase(CALL + " arrives", lambda call, target: bc.Call(target, call)),
        Phrase(CALL + " arrives at worker {number:d}",
               lambda call, target, number: bc.Call(target, call, worker_index(number))),
    ), kept_as=_named),
    Declaration("Calls Arrive At Once", calls_arrive_at_once, (
        Phrase('calls "{calls}" to target "{target}" arrive at once', calls_arrive_at_once),
    ), kept_as=lambda command: CONCURRENT),
    Declaration("Call Ends", call_ends, (
        Phrase(CALL + " succeeds", lambda call, target: bc.Report(target, call, "success")),
        Phrase(CALL + " fails with {failure_class:w}",
               lambda call, target, failure_class: bc.Report(target, call, "failure",
                                                             failure_class)),
        Phrase(CALL + " fails with {failure_class:w} at worker {number:d}",
               lambda call, target, failure_class, number: bc.Report(
                   target, call, "failure", failure_class, worker_index(number))),
        Phrase(CALL + " is cancelled", lambda call, target: bc.Report(target, call,
                                                                      "cancelled")),
    )),
    Declaration("Call Ends Raw", call_ends_raw, (
        Phrase(CALL + " is killed by {signal:w}",
               lambda call, target, signal: bc.CallEndsRaw(target, call, signal)),
        Phrase(CALL + " exits with code {code:d} and no output",
               lambda call, target, code: bc.CallEndsRaw(target, call, None, code)),
        Phrase(CALL + ' exits with code {code:d} saying "{text}"',
               lambda call, target, code, text: bc.CallEndsRaw(target, call, None, code,
                                                               True, text)),
        Phrase(CALL + ' exits with code {code:d}, no output, saying "{text}"',
               lambda call, target, code, text: bc.CallEndsRaw(target, call, None, code,
                                                               False, text)),
    ), kept_as=lambda command: command.call),
    Declaration("Report End", end_reported, (
        Phrase('the end of call "{call}" killed by {signal:w} is reported',
               lambda call, signal: bc.EndReported(call, signal)),
        Phrase('the end of call "{call}" exiting with code {code:d} and no output is reported',
               lambda call, code: bc.EndReported(call, None, code)),
        Phrase('the end of call "{call}" exiting with code {code:d} saying "{text}" is'
               " reported",
               lambda call, code, text: bc.EndReported(call, None, code, True, text)),
    ), kept_as=lambda command: command.call),
    Declaration("Queue Work", bc.AddWork, (
        Phrase('work "{work}" is queued for target "{target}"', bc.AddWork),
    ), kept_as=_named),
    Declaration("Reset Breaker", bc.ResetBreaker, (
        Phrase('the breaker of target "{target}" is reset', bc.ResetBreaker),
    )),
    Declaration("Breaker Store Goes Down", store_goes_down, (
        Phrase("the breaker store goes down", store_goes_down),
    )),
    Declaration("Breaker Store Comes Back", store_comes_back, (
        Phrase("the breaker store comes back", store_comes_back),
    )),
    Declaration("Target Misses Heartbeat", target_misses_heartbeat, (
        Phrase('target "{target}" misses a heartbeat', target_misses_heartbeat),
    )),
    Declaration("Trip Drains Are Lost", trip_drains_are_lost, (
        Phrase("the breaker's trip drains are lost", trip_drains_are_lost),
        Phrase("the breaker's trip drains work again", lambda: trip_drains_are_lost(False)),
    )),
    Declaration("Backstop Sweep Runs", backstop_sweep_runs, (
        Phrase("the backstop sweep runs", backstop_sweep_runs),
    ), kept_as=lambda command: BACKSTOP),
    Declaration("Breaker Clock Moves", bc.PassTime, (
        Phrase("the breaker clock moves {seconds:g} seconds", bc.PassTime),
    )),
)
