"""The governor area's commands, declared once (conformance/vocabulary.py).

Each declaration names the Robot keyword that sends a command, builds the command from
the keyword's arguments, and lists the Gherkin wordings that send it. The Behave steps
(conformance/governor/steps.py) and the Robot keywords (conformance/governor/keywords.py)
are derived from this list; the wordings are the feature file's and Robot suite's own.

The suites number the check's two governors 1 and 2; the commands, 0 and 1. The answer
to the last wait asked and to the last offer are kept (under WAIT and OFFER) for the
Then-checks to read.
"""

from __future__ import annotations

from jobconform.conformance.vocabulary import Declaration, Phrase
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
    )),
    Declaration("Record Rate-Limited Result", record_rate_limited_result, (
        Phrase('target "{target}" records rate-limited result "{result}"',
               lambda target, result: record_rate_limited_result(target, result)),
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
    Declaration("Governor Clock Moves", gc.Elapse, (
        Phrase("the governor clock moves {seconds:g} seconds", gc.Elapse),
    )),
)
