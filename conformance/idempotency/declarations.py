"""The idempotency area's commands, declared once (conformance/vocabulary.py).

Each declaration names the Robot keyword that sends a command, builds the command from
the keyword's arguments, and lists the Gherkin wordings that send it. The Behave steps
(conformance/idempotency/steps.py) and the Robot keywords
(conformance/idempotency/keywords.py) are derived from this list; the wordings are the
feature file's and the Robot suite's own.

The keywords take payloads, results and arguments as JSON text and an effect's identity
as ``to=bob, channel=sms``; the steps get JSON parsed already (the lifecycle's `Json`
type), so a phrase builds its command directly. Every answer is kept under the name the
Then-checks read it by (`kept_as`).
"""

from __future__ import annotations

from jobconform.conformance.vocabulary import Declaration, Phrase, json_value
from jobconform.reference.commands import AdvanceTime, Raise, Succeed
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.idempotency import commands as ic


def identity_pairs(text: str) -> tuple[tuple[str, str], ...]:
    """`to=bob, channel=sms` as name-value pairs, in the order written.

    Raises:
        ValueError: a part is not name=value.
    """
    pairs = []
    for part in text.split(","):
        name, equals, value = part.strip().partition("=")
        if not equals or not name:
            raise ValueError(f"write an effect's identity as name=value pairs separated by"
                             f" commas, e.g. 'to=bob, channel=sms'; got {text!r}")
        pairs.append((name.strip(), value.strip()))
    return tuple(pairs)


def kept_as(command: ic.IdempotencyCommand) -> str:
    """The name a command's answer is kept under, as the Then-checks read it: a claim's
    handle, ``complete:<handle>``, ``release:<handle>``, ``scheduler:<execution>`` or
    ``purge``."""
    if isinstance(command, ic.IdempotencyStoreFault):
        return kept_as(command.command)
    if isinstance(command, ic.CompleteClaim):
        return f"complete:{command.handle}"
    if isinstance(command, ic.ReleaseClaim):
        return f"release:{command.handle}"
    if isinstance(command, ic.AskSchedulerKey):
        return f"scheduler:{command.execution_id}"
    if isinstance(command, ic.PurgeKeys):
        return "purge"
    if isinstance(command, AdvanceTime):
        raise ValueError("time passing has no answer to keep")
    return command.handle


def failing(write: int,
            command: ic.ClaimKey | ic.CompleteClaim | ic.ReleaseClaim) -> ic.IdempotencyStoreFault:
    """`command` while store write `write` during it fails (IK-015)."""
    return ic.IdempotencyStoreFault(StoreFault(FaultKind.FAIL, int(write)), command)


def claim_key(handle: str, scope: str, key: str, payload: str = "null") -> ic.ClaimKey:
    """Claim ``key`` in ``scope`` for a request with ``payload`` (a JSON value)."""
    return ic.ClaimKey(handle, scope, key, json_value(payload))


def claim_without_key(handle: str, scope: str, payload: str = "null") -> ic.ClaimKey:
    """A request carrying no idempotency key."""
    return ic.ClaimKey(handle, scope, None, json_value(payload))


def claim_webhook(handle: str, token: str, body: str, key: str | None = None) -> ic.ClaimWebhook:
    """A webhook delivery; without ``key`` the runtime derives one (IK-008)."""
    return ic.ClaimWebhook(handle, token, body, key)


def claim_tool_call(handle: str, tool: str, arguments: str = "{}") -> ic.ClaimCall:
    """An MCP tool call without a key; the runtime derives one from ``tool`` and
    ``arguments`` (a JSON object) (IK-016)."""
    return ic.ClaimCall(handle, tool, json_value(arguments))


def ask_scheduler_key(execution_id: str) -> ic.AskSchedulerKey:
    """Which key the scheduler sends for the execution (IK-009); returns the answer."""
    return ic.AskSchedulerKey(execution_id)


def claim_effect(handle: str, execution_id: str, effect_type: str, identity: str,
                 content: str = "null", dedup_label: str | None = None) -> ic.ClaimEffect:
    """An execution claims an outbound effect; ``identity`` is ``to=bob, channel=sms``."""
    return ic.ClaimEffect(handle, execution_id, effect_type, identity_pairs(identity),
                       json_value(content), dedup_label)


def claim_effect_without_execution(handle: str, effect_type: str, identity: str,
                                   content: str = "null") -> ic.ClaimEffect:
    """A caller with no execution id claims an outbound effect (IK-014, IK-018)."""
    return ic.ClaimEffect(handle, None, effect_type, identity_pairs(identity), json_value(content))



def complete_claim(handle: str, result: str = "null") -> ic.CompleteClaim:
    """The work ends with ``result`` (JSON); returns the backend's answer."""
    return ic.CompleteClaim(handle, Succeed(json_value(result)))


def fail_claim(handle: str, error_type: str, message: str) -> ic.CompleteClaim:
    """The work ends raising ``error_type(message)``; returns the backend's answer."""
    return ic.CompleteClaim(handle, Raise(error_type, message))


def release_claim(handle: str) -> ic.ReleaseClaim:
    """The work was refused before it started; returns the backend's answer."""
    return ic.ReleaseClaim(handle)


def claim_key_write_fails(write: int, handle: str, scope: str, key: str,
                          payload: str = "null") -> ic.IdempotencyStoreFault:
    """Claim as ``Claim Key`` does while store write ``write`` of the claim fails."""
    return failing(write, claim_key(handle, scope, key, payload))


def complete_claim_write_fails(write: int, handle: str,
                               result: str = "null") -> ic.IdempotencyStoreFault:
    return failing(write, complete_claim(handle, result))


def release_claim_write_fails(write: int, handle: str) -> ic.IdempotencyStoreFault:
    return failing(write, ic.ReleaseClaim(handle))


def advance_key_clock(seconds: float) -> AdvanceTime:
    """Let ``seconds`` of virtual time pass for the key runtime."""
    return AdvanceTime(float(seconds))


def purge_expired_keys() -> ic.PurgeKeys:
    """Run one purge; returns how many records the backend removed."""
    return ic.PurgeKeys()


CLAIM = 'claim "{handle}"'
MADE_ON = CLAIM + ' is made on key "{key}" in scope "{scope}" with payload {payload:Json}'
EFFECT = ' for "{effect_type}" to "{identity}" with content {content:Json}'
WRITE_FAILS = "store write {write:d} fails while "
DECLARATIONS = (
    Declaration("Claim Key", claim_key, (
        Phrase(MADE_ON, lambda handle, key, scope, payload: ic.ClaimKey(handle, scope, key,
                                                                     payload)),
    ), kept_as=kept_as),
    Declaration("Claim Without Key", claim_without_key, (
        Phrase(CLAIM + ' is made without a key in scope "{scope}" with payload {payload:Json}',
               lambda handle, scope, payload: ic.ClaimKey(handle, scope, None, payload)),
    ), kept_as=kept_as),
    Declaration("Claim Webhook", claim_webhook, (
        Phrase('webhook claim "{handle}" arrives for token "{token}" with body "{body}"',
               claim_webhook),
        Phrase('keyed webhook claim "{handle}" arrives for token "{token}" with key "{key}"'
               ' and body "{body}"', claim_webhook),
    ), kept_as=kept_as),
    Declaration("Claim Tool Call", claim_tool_call, (
        Phrase('tool call claim "{handle}" is made to "{tool}" with arguments'
               " {arguments:Json}", ic.ClaimCall),
    ), kept_as=kept_as),
    Declaration("Ask Scheduler Key", ask_scheduler_key, (
        Phrase('the scheduler key of execution "{execution}" is asked for',
               lambda execution: ic.AskSchedulerKey(execution)),
    ), kept_as=kept_as),
    Declaration("Claim Effect", claim_effect, (
        Phrase('effect claim "{handle}" is made by execution "{execution}"' + EFFECT,
               lambda handle, execution, effect_type, identity, content: ic.ClaimEffect(
                   handle, execution, effect_type, identity_pairs(identity), content)),
        Phrase('labelled effect claim "{handle}" with dedup label "{label}" is made by'
               ' execution "{execution}"' + EFFECT,
               lambda handle, label, execution, effect_type, identity, content: ic.ClaimEffect(
                   handle, execution, effect_type, identity_pairs(identity), content, label)),
    ), kept_as=kept_as),
    Declaration("Claim Effect Without Execution", claim_effect_without_execution, (
        Phrase('effect claim "{handle}" is made with no execution id' + EFFECT,
               lambda handle, effect_type, identity, content: ic.ClaimEffect(
                   handle, None, effect_type, identity_pairs(identity), content)),
    ), kept_as=kept_as),
    Declaration("Complete Claim", complete_claim, (
        Phrase(CLAIM + " completes with result {result:Json}",
               lambda handle, result: ic.CompleteClaim(handle, Succeed(result))),
    ), kept_as=kept_as),
    Declaration("Fail Claim", fail_claim, (
        Phrase(CLAIM + ' fails with {error_type} "{message}"', fail_claim),
    ), kept_as=kept_as),
    Declaration("Release Claim", release_claim, (
        Phrase(CLAIM + " is released", release_claim),
    ), kept_as=kept_as),
    Declaration("Claim Key While Store Write Fails", claim_key_write_fails, (
        Phrase(WRITE_FAILS + MADE_ON,
               lambda write, handle, key, scope, payload: failing(
                   write, ic.ClaimKey(handle, scope, key, payload))),
    ), kept_as=kept_as),
    Declaration("Complete Claim While Store Write Fails", complete_claim_write_fails, (
        Phrase(WRITE_FAILS + CLAIM + " completes with result {result:Json}",
               lambda write, handle, result: failing(write,
                                                     ic.CompleteClaim(handle, Succeed(result)))),
    ), kept_as=kept_as),
    Declaration("Release Claim While Store Write Fails", release_claim_write_fails, (
        Phrase(WRITE_FAILS + CLAIM + " is released", release_claim_write_fails),
    ), kept_as=kept_as),
    Declaration("Advance Key Clock", advance_key_clock, (
        Phrase("{seconds:g} seconds pass on the key clock", advance_key_clock),
        Phrase("{hours:g} hours pass on the key clock",
               lambda hours: advance_key_clock(hours * 3600)),
    )),
    Declaration("Purge Expired Keys", purge_expired_keys, (
        Phrase("the expired keys are purged", purge_expired_keys),
    ), kept_as=kept_as),
)
