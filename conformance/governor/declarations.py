"""What the governor's suites say, declared once (conformance/vocabulary.py): the
commands, checks and settings from which its Behave steps and Robot keywords are derived,
in the feature file's and the Robot suite's own words.

The suites number the check's two governors 1 and 2; the commands, 0 and 1. The answer
to the last wait asked, to the last offer and to the last question of re-send times are
kept (under WAIT, OFFER and RESEND) for the checks to read.
"""

from __future__ import annotations

from datetime import datetime
from functools import partial

from jobconform.conformance.area_steps import alias_list, at
from jobconform.conformance.governor.harness import GovernorHarness, governor_settings
from jobconform.conformance.vocabulary import (
    AfterCommands,
    Check,
    Declaration,
    Phrase,
    Reading,
    Setting,
    Vocabulary,
    check_worded,
    command_worded,
    with_settings,
)
from jobconform.reference.governor import commands as gc

WAIT = "the re-delivery wait"  # where the last wait asked is kept
OFFER = "the re-delivery offer"  # where the answer to the last offer is kept
RESEND = "the envelopes' re-send times"  # where the last answer of resend_times is kept


def offer_redelivery(target: str, governor: int = 1) -> gc.Offer:
    return gc.Offer(target, governor - 1)


def record_failure_result(target: str, result: str, failure_class: str,
                          governor: int = 1) -> gc.RecordFailure:
    return gc.RecordFailure(target, failure_class, result, governor - 1)


def record_rate_limited_result(target: str, result: str,
                                governor: int = 1) -> gc.RecordRateLimited:
    """A result the agent answered with HTTP 429 (RG-010)."""
    return gc.RecordRateLimited(target, result, governor - 1)


def record_raw_end_result(target: str, result: str, signal: str | None = None,
                          exit_code: int | None = None, output: bool = False,
                          error_text: str = "", governor: int = 1) -> gc.RecordRawEnd:
    """A terminal failure given as its raw end, which the governor classes itself as the
    breaker does: a kill never counts as auth (RG-014)."""
    return gc.RecordRawEnd(target, result, signal, exit_code, output, error_text,
                           governor - 1)


def failures_named_after(targets: str, failure_class: str) -> list[AfterCommands]:
    """One failure result of each target, named after the commands run before it."""
    return [AfterCommands(partial(_failure_named_after, target, failure_class))
            for target in alias_list(targets)]


def _failure_named_after(target: str, failure_class: str, count: int) -> gc.RecordFailure:
    return gc.RecordFailure(target, failure_class, f"{target}-{failure_class}-{count}")


def rate_limits_named_after(targets: str) -> list[AfterCommands]:
    """The agents of several targets answer HTTP 429 at one moment (RG-010); each result
    is named after the commands run before it."""
    return [AfterCommands(partial(_rate_limit_named_after, target))
            for target in alias_list(targets)]


def _rate_limit_named_after(target: str, count: int) -> gc.RecordRateLimited:
    return gc.RecordRateLimited(target, f"{target}-429-{count}")


def governor_store_outage(down: bool) -> gc.GovernorStoreOutage:
    """The governors' shared store goes down (True) or comes back (False) (RG-011)."""
    return gc.GovernorStoreOutage(down)


def switch_governor(enabled: bool, governor: int = 1) -> gc.SwitchGovernor:
    """Governor ``governor``'s master switch is turned on (True) or off (RG-013)."""
    return gc.SwitchGovernor(enabled, governor - 1)


def ask_resend_times(draws: str, governor: int = 1) -> gc.AskResendTimes:
    """When governor ``governor``'s sweep sends one envelope per draw; ``draws`` is a
    comma-separated list of uniform draws in [0, 1), empty for none (RG-012)."""
    return gc.AskResendTimes(tuple(float(d) for d in draws.split(",") if d.strip()),
                             governor - 1)


def governor_restarts(draw: float, governor: int = 1) -> gc.Restart:
    """Governor ``governor`` restarts; its initial jitter takes ``draw`` in [0, 1)."""
    return gc.Restart(draw, governor - 1)


DECLARATIONS = (
    # A command whose fields are the keyword's arguments is its own builder.
    Declaration("Ask Re-Delivery Wait", gc.AskWait, (
        Phrase("the re-delivery wait is asked after {previous:g} ms with draw {draw:g}",
               lambda previous, draw: gc.AskWait(previous, draw)),
        Phrase("the first re-delivery wait is asked with draw {draw:g}",
               lambda draw: gc.AskWait(None, draw)),
        Phrase("the re-delivery wait is asked after {previous:g} ms with draw {draw:g} and a"
               " retry-after of {floor:g} ms",
               lambda previous, draw, floor: gc.AskWait(previous, draw, floor)),
    ), kept_as=lambda command: WAIT),
    Declaration("Offer Re-Delivery", offer_redelivery, (
        Phrase('a re-delivery for target "{target}" is offered',
               lambda target: offer_redelivery(target)),
        Phrase('a re-delivery for target "{target}" is offered at governor {number:d}',
               lambda target, number: offer_redelivery(target, number)),
        Phrase('{count:d} re-deliveries for target "{target}" are offered',
               lambda count, target: [offer_redelivery(target)] * count),
    ), kept_as=lambda command: OFFER),
    Declaration("Record Failure Result", record_failure_result, (
        Phrase('target "{target}" records failure result "{result}" of class'
               " {failure_class:w}", record_failure_result),
        Phrase('targets "{targets}" each record a failure result of class {failure_class:w}',
               failures_named_after),
    )),
    Declaration("Record Rate-Limited Result", record_rate_limited_result, (
        Phrase('target "{target}" records rate-limited result "{result}"',
               lambda target, result: record_rate_limited_result(target, result)),
        Phrase('targets "{targets}" each record a rate-limited result',
               rate_limits_named_after),
    )),
    Declaration("Record Raw End Result", record_raw_end_result, (
        Phrase('target "{target}" records failure result "{result}" killed by {signal:w}',
               lambda target, result, signal: record_raw_end_result(target, result, signal)),
        Phrase('target "{target}" records failure result "{result}" exiting with code'
               ' {code:d} saying "{text}"',
               lambda target, result, code, text: record_raw_end_result(
                   target, result, None, code, False, text)),
    )),
    Declaration("Governor Store Outage", governor_store_outage, (
        Phrase("the governor store becomes unreachable", lambda: governor_store_outage(True)),
        Phrase("the governor store is reachable again", lambda: governor_store_outage(False)),
    )),
    Declaration("Switch Governor", switch_governor, (
        Phrase("governor {number:d} is switched off",
               lambda number: switch_governor(False, number)),
        Phrase("governor {number:d} is switched on",
               lambda number: switch_governor(True, number)),
    )),
    Declaration("Ask Re-Send Times", ask_resend_times, (
        Phrase('governor {number:d} is asked when its sweep re-sends envelopes with draws'
               ' "{draws}"', lambda number, draws: ask_resend_times(draws, number)),
    ), kept_as=lambda command: RESEND),
    Declaration("Governor Restarts", governor_restarts, (
        Phrase("governor {number:d} restarts with draw {draw:g}",
               lambda number, draw: governor_restarts(draw, number)),
    )),
    command_worded("Governor Clock Moves", gc.Elapse,
                   "the governor clock moves {seconds:g} seconds"),
)


# -- checks: what the backend answered or shows --------------------------------------------


def wait_should_be(ms: float) -> Reading:
    """The last re-delivery wait asked is ``ms``, to a millisecond."""
    return Reading("the re-delivery wait", lambda through: through.answers.get(WAIT), ms,
                   lambda actual, wanted: isinstance(actual, float)
                   and isinstance(wanted, float) and abs(actual - wanted) <= 1.0)


def should_be_accepted() -> Reading:
    """The last offer was accepted."""
    return Reading("the last offer's answer", lambda through: through.answers.get(OFFER),
                   (True, None))


def _refused(actual: object, wanted: object) -> bool:
    return (isinstance(actual, tuple) and isinstance(wanted, tuple) and actual[0] is False
            and isinstance(actual[1], int | float) and abs(actual[1] - wanted[1]) < 1e-6)


def should_be_refused(retry_after_seconds: float) -> Reading:
    """The last offer was refused, to retry after ``retry_after_seconds``."""
    return Reading("the last offer's answer", lambda through: through.answers.get(OFFER),
                   (False, retry_after_seconds), _refused)


def _second(second: float | None) -> datetime | None:
    return None if second is None else at(second)


def pause_should_end(second: float | None, governor: int = 2) -> Reading:
    """Governor ``governor`` reports the pause ending at ``second`` (None: no pause)."""
    return Reading(f"the pause governor {governor} reads", lambda through: through.harness
                   .workers[governor - 1].paused_until(), _second(second))


def sweep_due(second: float | None, governor: int = 1) -> Reading:
    """Governor ``governor``'s first re-send sweep is due at ``second`` (None: none is
    due, no restart yet)."""
    return Reading(f"when governor {governor}'s re-send sweep is due", lambda through:
                   through.harness.workers[governor - 1].resend_sweep_at(), _second(second))


def _same_instants(actual: object, wanted: object) -> bool:
    return (isinstance(actual, tuple) and isinstance(wanted, tuple)
            and len(actual) == len(wanted) and all(
                abs((got - want).total_seconds()) < 1e-6
                for got, want in zip(actual, wanted, strict=True)))


def envelopes_at(seconds: str) -> Reading:
    """The envelopes asked about are re-sent at ``seconds`` (comma-separated)."""
    return Reading("when the envelopes are re-sent",
                   lambda through: through.answers.get(RESEND),
                   tuple(at(float(s)) for s in alias_list(seconds)), _same_instants)


def no_envelopes() -> Reading:
    """The governor asked has not restarted: no sweep, nothing re-sent."""
    return Reading("the envelopes' re-send times, before any restart",
                   lambda through: through.answers.get(RESEND, "nothing asked"), None)


CHECKS = (
    check_worded("Re-Delivery Wait Should Be", wait_should_be, "the re-delivery wait is {ms:g} ms"),
    check_worded("Re-Delivery Should Be Accepted", should_be_accepted,
                 "the re-delivery is accepted"),
    check_worded("Re-Delivery Should Be Refused", should_be_refused,
                 "the re-delivery is refused, to retry after {retry_after_seconds:g} seconds"),
    Check("Pause Should End At Second", pause_should_end, (
        Phrase("re-delivery is paused until second {second:g}", pause_should_end),
        Phrase("re-delivery is not paused", lambda: pause_should_end(None, 1)),
        Phrase("governor {number:d} reads no pause",
               lambda number: pause_should_end(None, number)),
    )),
    Check("Re-Send Sweep Should Be Due At Second", sweep_due, (
        Phrase("governor {number:d}'s first re-send sweep is due at second {second:g}",
               lambda number, second: sweep_due(second, number)),
        Phrase("governor {number:d} has no re-send sweep due",
               lambda number: sweep_due(None, number)),
    )),
    check_worded("Envelopes Should Be Re-Sent At Seconds", envelopes_at,
                 'the envelopes are re-sent at seconds "{seconds}"'),
    check_worded("No Envelope Should Be Re-Sent", no_envelopes, "no envelope is re-sent"),
)

# -- settings: the parameters a feature fixes before its first command ----------------------

SETTINGS = (
    Setting("a governor allowing {target_limit:d} re-deliveries per target and"
            " {fleet_limit:d} in all per {window:g} s",
            lambda target_limit, fleet_limit, window: dict(
                target_limit=target_limit, fleet_limit=fleet_limit,
                target_window_seconds=window, fleet_window_seconds=window)),
    Setting("a governor pausing {ttl:g} s when {threshold:d} targets fail alike within"
            " {window:g} s",
            lambda ttl, threshold, window: dict(
                pause_ttl_seconds=ttl, pause_threshold=threshold, pause_window_seconds=window,
                pause_classes="auth,billing", pause_retry_after_seconds=30)),
    Setting("a governor waiting from {base:g} ms up to {cap:g} ms",
            lambda base, cap: dict(base_ms=base, cap_ms=cap)),
    Setting("a governor whose restart jitter is at most {seconds:g} s",
            lambda seconds: dict(initial_jitter_max_seconds=seconds)),
)


VOCABULARY = Vocabulary(area="governor", noun="governor", start="Start Governor",
                        commands=DECLARATIONS, checks=CHECKS, settings=SETTINGS,
                        open=with_settings(GovernorHarness, governor_settings))
