"""What the breaker's suites say, declared once (conformance/vocabulary.py): the commands,
checks and settings from which its Behave steps and Robot keywords are derived, in the
feature files' and the Robot suites' own words.

The suites number the check's two workers 1 and 2; the commands, 0 and 1. The answer to
a call or a piece of work is kept under its name, the backstop sweep's under BACKSTOP and
the concurrent callers' under CONCURRENT, for the Then-checks to read.
"""

from __future__ import annotations

import json
from typing import Any

from jobconform.conformance.area_steps import at
from jobconform.conformance.breaker.harness import BreakerHarness, breaker_settings
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
    with_settings,
)
from jobconform.reference.breaker import commands as bc
from jobconform.reference.breaker.oracle import BreakerSettings

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


def failing_calls(target: str, count: int, failure_class: str,
                  before: int) -> list[bc.Call | bc.Report]:
    """``count`` calls to ``target`` that each fail with ``failure_class``, named after the
    number of commands run ``before`` them."""
    commands: list[bc.Call | bc.Report] = []
    for number in range(1, count + 1):
        call = f"{target}-{failure_class}-{before}-{number}"
        commands += [bc.Call(target, call), bc.Report(target, call, "failure", failure_class)]
    return commands


def target_fails_calls(target: str, count: int, failure_class: str) -> OnHarness:
    """``count`` calls to ``target`` arrive and each fails with ``failure_class``. Not a
    command alone: each call is named after the commands run so far."""
    return OnHarness(lambda harness: failing_calls(target, count, failure_class,
                                                   len(harness.commands)))


def target_fails_below_threshold(target: str) -> OnHarness:
    """One counted failure fewer than the profile's threshold."""
    return OnHarness(lambda harness: failing_calls(
        target, harness.settings.failure_threshold - 1, "auth", len(harness.commands)))


def _read(harness: BreakerHarness, target: str, worker: int = 1) -> Any:
    return harness.workers[worker_index(worker)].read(target)


def _cooldown_passes(harness: BreakerHarness, target: str) -> bc.PassTime:
    cooldown = getattr(_read(harness, target), "cooldown_seconds", None)
    if not isinstance(cooldown, float):
        raise AssertionError(f"the backend reads no cooldown for {target!r}: {cooldown!r}")
    return bc.PassTime(cooldown)


def wait_out_cooldown(target: str) -> OnHarness:
    """The breaker clock moves by the cooldown the backend reads for ``target``."""
    return OnHarness(lambda harness: _cooldown_passes(harness, target))


def _failing_call(command: bc.Call | bc.Report) -> str | None:
    return command.call if isinstance(command, bc.Call) else None


CALL = 'call "{call}" to target "{target}"'
DECLARATIONS = (
    # A command whose fields are the keyword's arguments is its own builder.
    command_worded("Engage Breaker For", engage_breaker_for,
                   'the breaker is engaged for target "{target}"'),
    Declaration("Turn Global Breaker Switch", bc.SwitchBreaker, (
        Phrase("the global breaker switch is turned on", lambda: bc.SwitchBreaker(True)),
        Phrase("the global breaker switch is turned off", lambda: bc.SwitchBreaker(False)),
    )),
    Declaration("Opt In Target", bc.OptIn, (
        Phrase('target "{target}" opts in to the breaker', bc.OptIn),
        Phrase('target "{target}" opts out of the breaker',
               lambda target: bc.OptIn(target, False)),
    )),
    Declaration("Call Arrives", call_arrives, (
        Phrase(CALL + " arrives", lambda call, target: bc.Call(target, call)),
        Phrase(CALL + " arrives at worker {number:d}",
               lambda call, target, number: bc.Call(target, call, worker_index(number))),
    ), kept_as=_named),
    command_worded("Calls Arrive At Once", calls_arrive_at_once,
                   'calls "{calls}" to target "{target}" arrive at once',
                   kept_as=lambda command: CONCURRENT),
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
    command_worded("Queue Work", bc.AddWork,
                   'work "{work}" is queued for target "{target}"',
                   kept_as=_named),
    command_worded("Reset Breaker", bc.ResetBreaker, 'the breaker of target "{target}" is reset'),
    command_worded("Breaker Store Goes Down", store_goes_down, "the breaker store goes down"),
    command_worded("Breaker Store Comes Back", store_comes_back, "the breaker store comes back"),
    command_worded("Target Misses Heartbeat", target_misses_heartbeat,
                   'target "{target}" misses a heartbeat'),
    Declaration("Trip Drains Are Lost", trip_drains_are_lost, (
        Phrase("the breaker's trip drains are lost", trip_drains_are_lost),
        Phrase("the breaker's trip drains work again", lambda: trip_drains_are_lost(False)),
    )),
    command_worded("Backstop Sweep Runs", backstop_sweep_runs,
                   "the backstop sweep runs",
                   kept_as=lambda command: BACKSTOP),
    command_worded("Breaker Clock Moves", bc.PassTime,
                   "the breaker clock moves {seconds:g} seconds"),
    command_worded("Target Fails Calls", target_fails_calls,
                   'target "{target}" fails {count:d} calls with {failure_class:w}',
                   kept_as=_failing_call),
    # The profile's own values.
    command_worded("Target Fails Below Threshold", target_fails_below_threshold,
                   'target "{target}" fails one call fewer than the profile\'s threshold',
                   kept_as=_failing_call),
    command_worded("Wait Out Cooldown", wait_out_cooldown,
                   'the breaker clock moves by the breaker of target "{target}"\'s cooldown'),
)

# -- checks: what the backend answered or shows ----------------------------------------------


def answer_should_be(name: str, expected: str) -> Reading:
    """The backend's answer to call or work ``name``: admitted, probe, refused, queued; or
    the class it gave a call's raw end."""
    return Reading(f"the answer to {name!r}", kept(name, "<never sent>"), expected)


def report_should_be(name: str, expected: str) -> Reading:
    """The report kept under ``name`` (Report End), given as JSON (CB-018, CB-019)."""
    return Reading(f"the report of {name!r}", kept(name, "<never sent>"), json.loads(expected))


def backstop_failed(count: int) -> Reading:
    return Reading("the work the backstop sweep failed", kept(BACKSTOP, "<never run>"), count)


def concurrent_should_get(probes: int, refused: int) -> Reading:
    wanted = {key: value for key, value in (("probe", probes), ("refused", refused)) if value}
    return Reading("the concurrent callers' answers",
                   lambda through: concurrent_answers_of(through.answers), wanted)


def _read_field(target: str, field: str, unread: object = None,
                worker: int = 1) -> Any:
    return lambda through: getattr(_read(through.harness, target, worker), field, unread)


def state_should_be(target: str, state: str, worker: int = 1) -> Reading:
    return Reading(f"worker {worker}'s state of {target!r}", lambda through: getattr(
        readout := _read(through.harness, target, worker), "state", readout), state)


def failures_should_be(target: str, failures: int) -> Reading:
    return Reading(f"the failure count of {target!r}", _read_field(target, "failures"),
                   failures)


def cooldown_should_be(target: str, seconds: float) -> Reading:
    return Reading(f"the cooldown of {target!r}", _read_field(target, "cooldown_seconds"),
                   seconds)


def open_until_should_be(target: str, second: float) -> Reading:
    return Reading(f"the end of {target!r}'s open period", _read_field(target, "open_until"),
                   at(second))


def probe_should_be(target: str, call: str | None) -> Reading:
    """``call`` is the probe in flight; give None for no probe."""
    return Reading(f"the probe of {target!r}", _read_field(target, "probe", "<unreadable>"),
                   None if call in (None, "None") else call)


def state_unknown(target: str) -> Reading:
    return Reading(f"the read of {target!r} while the store is down",
                   lambda through: _read(through.harness, target), None)


def queue_should_hold(target: str, works: str = "") -> Reading:
    return Reading(f"the queue of {target!r}", lambda through: tuple(
        through.harness.workers[0].queued(target)), names(works))


def failed_should_be(target: str, works: str = "") -> Reading:
    return Reading(f"the failed work of {target!r}", lambda through: tuple(
        through.harness.workers[0].failed_work(target)), names(works))


def outages_should_be(count: int) -> Reading:
    return Reading("operations logged as store outages", lambda through: sum(
        worker.logged_outages() for worker in through.harness.workers), count)


def _grown_cooldown(settings: BreakerSettings, failed_probes: int) -> float:
    wanted = settings.cooldown_seconds
    for _ in range(failed_probes):
        wanted = min(wanted * settings.cooldown_multiplier, settings.cooldown_max_seconds)
    return wanted


def cooldown_follows_profile(target: str, failed_probes: int) -> Reading:
    """The profile's base cooldown grown by ``failed_probes`` failed probes, capped."""
    return Reading(f"the cooldown of {target!r}", _read_field(target, "cooldown_seconds"),
                   OnHarness(lambda harness: _grown_cooldown(harness.settings,
                                                             failed_probes)))


TARGET = 'the breaker of target "{target}"'
CHECKS = (
    check_worded("Answer Should Be", answer_should_be,
                 'call "{name}" is {expected:w}',
                 'the end of call "{name}" is classed {expected:w}',
                 'work "{name}" is {expected:w}'),
    check_worded("Report Should Be", report_should_be, 'the report of call "{name}" is {expected}'),
    check_worded("Backstop Should Have Failed", backstop_failed,
                 "the backstop sweep failed {count:d} pieces of work"),
    check_worded("Concurrent Calls Should Get", concurrent_should_get,
                 "the concurrent calls got {probes:d} probe and {refused:d} refused"),
    check_worded("Breaker Should Be", state_should_be,
                 TARGET + " is {state:w}",
                 TARGET + " is {state:w} at worker {worker:d}"),
    check_worded("Breaker Should Count", failures_should_be,
                 TARGET + " counts {failures:d} failures"),
    check_worded("Cooldown Should Be", cooldown_should_be,
                 TARGET + " has a cooldown of {seconds:g} seconds"),
    check_worded("Breaker Should Be Open Until Second", open_until_should_be,
                 TARGET + " is open until second {second:g}"),
    Check("Probe Should Be", probe_should_be, (
        Phrase('the probe of target "{target}" is call "{call}"', probe_should_be),
        Phrase('target "{target}" has no probe in flight',
               lambda target: probe_should_be(target, None)),
    )),
    check_worded("Breaker State Should Be Unknown", state_unknown,
                 'the breaker state of target "{target}" is unknown'),
    check_worded("Queue Should Hold", queue_should_hold,
                 'the queue of target "{target}" holds "{works}"',
                 'the queue of target "{target}" is empty'),
    check_worded("Failed Work Should Be", failed_should_be,
                 'the failed work of target "{target}" is "{works}"'),
    check_worded("Logged Store Outages Should Be", outages_should_be,
                 "{count:d} breaker store outages are logged"),
    Check("Cooldown Should Follow The Profile", cooldown_follows_profile, (
        Phrase(TARGET + " has the profile's base cooldown",
               lambda target: cooldown_follows_profile(target, 0)),
        Phrase(TARGET + " has the profile's cooldown after {failed_probes:d} failed probes",
               cooldown_follows_profile),
    )),
)

# -- settings: the parameters a feature fixes before its first command ----------------------

SETTINGS = (
    Setting("a breaker tripping after {threshold:d} failures with a {cooldown:g} s cooldown"
            " growing {multiplier:g}-fold up to {cap:g} s",
            lambda threshold, cooldown, multiplier, cap: dict(
                failure_threshold=threshold, cooldown_seconds=cooldown,
                cooldown_multiplier=multiplier, cooldown_max_seconds=cap)),
    Setting('a breaker that counts only "{classes}" failures',
            lambda classes: dict(counted_classes=",".join(names(classes)))),
    Setting("a breaker whose probe lease is {lease:g} seconds",
            lambda lease: dict(probe_lease_seconds=lease)),
)


VOCABULARY = Vocabulary(area="breaker", noun="breaker", start="Start Breaker",
                        commands=DECLARATIONS, checks=CHECKS, settings=SETTINGS,
                        open=with_settings(BreakerHarness, breaker_settings))
