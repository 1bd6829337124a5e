"""What the idempotency area's suites say (IK-001..IK-018), declared once
(conformance/vocabulary.py): the commands, checks, settings and preconditions from which
its Behave steps and Robot keywords are derived, in the feature file's and the Robot
suite's own words.

The keywords take payloads, results and arguments as JSON text and an effect's identity
as ``to=bob, channel=sms``; the steps get JSON parsed already (the lifecycle's `Json`
type), so a phrase builds its command directly. Every answer is kept under the name the
Then-checks read it by (`kept_as`). Steps speak of claims, keys and the key clock so that
they cannot clash with the lifecycle steps; a Robot keyword before `Start Key Runtime`
opens the runtime with the profile's parameters.
"""

from __future__ import annotations

import operator
from typing import Any

from jobconform.conformance.idempotency.harness import ComparedAnswer, IdempotencyHarness
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
    json_value,
    kept,
)
from jobconform.reference.commands import AdvanceTime, Raise, Succeed
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.idempotency import commands as ic
from jobconform.reference.idempotency.oracle import (
    CONFLICT_STATUS,
    MISSING_EXECUTION_STATUS,
    UNAVAILABLE,
    canonical_json,
)
from jobconform.reference.lifecycle import JsonValue

SCHEDULER_SCOPE = "scheduler"


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


def _scheduler_claim(handle: str, execution_id: str, payload: JsonValue) -> OnHarness:
    def claim(harness: IdempotencyHarness) -> ic.ClaimKey:
        key = harness.run(ic.AskSchedulerKey(execution_id))
        if not isinstance(key, str):
            raise AssertionError(f"the scheduler key should be a string, backend answered"
                                 f" {key!r}")
        return ic.ClaimKey(handle, SCHEDULER_SCOPE, key, payload)

    return OnHarness(claim)


def claim_scheduler_send(handle: str, execution_id: str, payload: str = "null") -> OnHarness:
    """The scheduler sends an execution under the key the runtime gives for it: not a
    command alone, the claim's key is the answer to the question before it."""
    return _scheduler_claim(handle, execution_id, json_value(payload))


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
    command_worded("Claim Webhook", claim_webhook,
                   'webhook claim "{handle}" arrives for token "{token}" with body "{body}"',
                   'keyed webhook claim "{handle}" arrives for token "{token}" with key "{key}"'
                   ' and body "{body}"',
                   kept_as=kept_as),
    Declaration("Claim Tool Call", claim_tool_call, (
        Phrase('tool call claim "{handle}" is made to "{tool}" with arguments'
               " {arguments:Json}", ic.ClaimCall),
    ), kept_as=kept_as),
    Declaration("Ask Scheduler Key", ask_scheduler_key, (
        Phrase('the scheduler key of execution "{execution}" is asked for',
               lambda execution: ic.AskSchedulerKey(execution)),
    ), kept_as=kept_as),
    Declaration("Claim Scheduler Send", claim_scheduler_send, (
        Phrase('scheduler claim "{handle}" is sent for execution "{execution}" with payload'
               " {payload:Json}", lambda handle, execution, payload: _scheduler_claim(
                   handle, execution, payload)),
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
    command_worded("Fail Claim", fail_claim, CLAIM + ' fails with {error_type} "{message}"',
                   kept_as=kept_as),
    command_worded("Release Claim", release_claim, CLAIM + " is released", kept_as=kept_as),
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
    command_worded("Release Claim While Store Write Fails", release_claim_write_fails,
                   WRITE_FAILS + CLAIM + " is released", kept_as=kept_as),
    Declaration("Advance Key Clock", advance_key_clock, (
        Phrase("{seconds:g} seconds pass on the key clock", advance_key_clock),
        Phrase("{hours:g} hours pass on the key clock",
               lambda hours: advance_key_clock(hours * 3600)),
    )),
    command_worded("Purge Expired Keys", purge_expired_keys, "the expired keys are purged",
                   kept_as=kept_as),
)

# -- checks: what the backend answered ------------------------------------------------------


def _answer_fields(handle: str, *names: str) -> Any:
    """The fields of claim ``handle``'s answer, or the answer itself where it is none."""
    def read(through: Any) -> object:
        answer = through.answers.get(handle)
        if not isinstance(answer, ComparedAnswer):
            return answer if answer is not None else "no answer yet (make the claim first)"
        return tuple(getattr(answer, name) for name in names)
    return read


def claim_should_be_started(handle: str) -> Reading:
    return Reading(f"claim {handle!r} (kind, with a token)",
                   _answer_fields(handle, "kind", "with_token"), ("started", True))


def claim_should_be_started_without_token(handle: str) -> Reading:
    return Reading(f"claim {handle!r} (kind, with a token)",
                   _answer_fields(handle, "kind", "with_token"), ("started", False))


def claim_should_be_refused_without_execution(handle: str) -> Reading:
    """The effect named no execution while executions may be re-delivered (IK-018):
    refused with status 400 and no token."""
    return Reading(f"claim {handle!r} (kind, status, with a token)",
                   _answer_fields(handle, "kind", "status", "with_token"),
                   ("refused", MISSING_EXECUTION_STATUS, False))


def claim_should_conflict(handle: str) -> Reading:
    return Reading(f"claim {handle!r} (kind, status)", _answer_fields(handle, "kind", "status"),
                   ("conflict", CONFLICT_STATUS))


def claim_should_mismatch(handle: str, status: int) -> Reading:
    return Reading(f"claim {handle!r} (kind, status)", _answer_fields(handle, "kind", "status"),
                   ("mismatch", status))


def _replays(handle: str, original: str, outcome: tuple[object, ...]) -> Reading:
    return Reading(f"claim {handle!r} (kind, original, outcome)",
                   _answer_fields(handle, "kind", "original", "outcome"),
                   ("replay", original, outcome))


def claim_should_replay_result(handle: str, original: str, result: str) -> Reading:
    """``result`` is JSON."""
    return _replays(handle, original, ("returns", canonical_json(json_value(result))))


def claim_should_replay_error(handle: str, original: str, error_type: str,
                              message: str) -> Reading:
    return _replays(handle, original, ("raises", error_type, message))


def _answered(name: str, what: str, wanted: bool) -> Reading:
    return Reading(what, kept(name), wanted, operator.is_)


def completion_should_be_stored(handle: str) -> Reading:
    return _answered(f"complete:{handle}", f"completing {handle!r}", True)


def completion_should_be_refused(handle: str) -> Reading:
    return _answered(f"complete:{handle}", f"completing {handle!r}", False)


def release_should_be_accepted(handle: str) -> Reading:
    return _answered(f"release:{handle}", f"releasing {handle!r}", True)


def release_should_be_refused(handle: str) -> Reading:
    return _answered(f"release:{handle}", f"releasing {handle!r}", False)


def answer_should_be_unavailable(what: str) -> Reading:
    """``what`` is a claim's handle, ``complete:<handle>`` or ``release:<handle>``: it met
    a failed store write and holds nothing (IK-015)."""
    return Reading(f"the answer to {what!r}", kept(what), UNAVAILABLE)


def _call_unavailable(what: str, handle: str) -> Reading:
    name = {"completion": "complete", "release": "release"}.get(what)
    if name is None:
        raise ValueError(f"a completion or a release is answered, not a {what!r}")
    return answer_should_be_unavailable(f"{name}:{handle}")


def _count(actual: object, wanted: object) -> bool:
    return actual == wanted and not isinstance(actual, bool)


def purge_should_remove(count: int) -> Reading:
    """Run one purge; the backend must answer ``count`` removed records."""
    return Reading("the records the purge removed",
                   lambda through: through.run(purge_expired_keys()), count, _count)


def _purged(count: int) -> Reading:
    return Reading("the records the purge removed", kept("purge"), count, _count)


def scheduler_key_should_be(execution_id: str, expected: str) -> Reading:
    """Ask the key the scheduler sends for the execution (IK-009)."""
    return Reading(f"the scheduler key of {execution_id!r}",
                   lambda through: through.run(ask_scheduler_key(execution_id)), expected)


def audit_log_should_hold(count: int, original: str | None = None, key: str | None = None,
                          scope: str | None = None) -> Reading:
    """The runtime emitted ``count`` idempotent_replay events (IK-017), the last
    naming ``scope``, ``key`` and the claim ``original`` whose outcome it replayed."""
    last = [] if original is None else [(scope, key, original)]

    def holds(actual: object, wanted: object) -> bool:
        return (isinstance(actual, list) and len(actual) == count
                and (not last or actual[-1:] == last))

    return Reading("the idempotent_replay events of the audit log",
                   lambda through: through.harness.audit_events(),
                   f"{count} events{f', the last {last[0]}' if last else ''}", holds)


CHECKS = (
    check_worded("Claim Should Be Started", claim_should_be_started, CLAIM + " is started"),
    check_worded("Claim Should Be Started Without Token", claim_should_be_started_without_token,
                 CLAIM + " is started without a token"),
    check_worded("Claim Should Be Refused Without Execution",
                 claim_should_be_refused_without_execution,
                 CLAIM + " is refused for want of an execution id"),
    check_worded("Claim Should Conflict", claim_should_conflict,
                 CLAIM + " is refused as a conflict"),
    check_worded("Claim Should Mismatch", claim_should_mismatch,
                 CLAIM + " is refused as a mismatch with status {status:d}"),
    Check("Claim Should Replay Result", claim_should_replay_result, (
        Phrase(CLAIM + ' replays claim "{original}" returning {result:Json}',
               lambda handle, original, result: _replays(
                   handle, original, ("returns", canonical_json(result)))),
    )),
    check_worded("Claim Should Replay Error", claim_should_replay_error,
                 CLAIM + ' replays claim "{original}" raising {error_type} "{message}"'),
    check_worded("Completion Should Be Stored", completion_should_be_stored,
                 'the completion of claim "{handle}" is stored'),
    check_worded("Completion Should Be Refused", completion_should_be_refused,
                 'the completion of claim "{handle}" is refused'),
    check_worded("Release Should Be Accepted", release_should_be_accepted,
                 'the release of claim "{handle}" is accepted'),
    check_worded("Release Should Be Refused", release_should_be_refused,
                 'the release of claim "{handle}" is refused'),
    Check("Answer Should Be Unavailable", answer_should_be_unavailable, (
        Phrase(CLAIM + " is answered unavailable",
               lambda handle: answer_should_be_unavailable(handle)),
        Phrase('the {what:w} of claim "{handle}" is answered unavailable', _call_unavailable),
    )),
    Check("Purge Should Remove", purge_should_remove, (
        Phrase("{count:d} key records were purged", _purged),
    )),
    Check("Scheduler Key Should Be", scheduler_key_should_be, (
        Phrase('the scheduler key of execution "{execution}" is "{key}"',
               lambda execution, key: Reading(f"the scheduler key of {execution!r}",
                                              kept(f"scheduler:{execution}"), key)),
    )),
    Check("Audit Log Should Hold", audit_log_should_hold, (
        Phrase("the audit log holds {count:d} idempotent_replay events, the last for claim"
               ' "{original}" on key "{key}" in scope "{scope}"', audit_log_should_hold),
        Phrase("the audit log holds no idempotent_replay event",
               lambda: audit_log_should_hold(0)),
    )),
)

# -- settings and preconditions: what a scenario fixes or needs before its first claim ------

PARAMETER_NAMES = {"TTL": "ttl_seconds", "mismatch status": "mismatch_status",
                   "stale-lock timeout": "stale_lock_timeout_seconds"}


def _parameter(name: str, value: float) -> dict[str, object]:
    if name not in PARAMETER_NAMES:
        raise ValueError(f"unknown idempotency parameter {name!r}; use one of"
                         f" {', '.join(PARAMETER_NAMES)}")
    return {PARAMETER_NAMES[name]: value}


SETTINGS = (
    Setting("idempotency keys with a {name} of {value:g}", _parameter),
    Setting("idempotency keys that are released when the work fails",
            lambda: dict(failure_policy="release")),
    Setting("idempotency keys whose executions may be re-delivered",
            lambda: dict(redelivery="enabled")),
    Setting("idempotency keys with a {name} of {value:g} seconds", _parameter),
)


PRECONDITIONS = (
    # IK-015 and IK-017 need a capability beyond the area: elsewhere skipped, never passed.
    Precondition.claimed(
        "Require Store Faults", "the idempotency keys take store faults",
        lambda harness: harness.takes_store_faults,
        "take store faults for its idempotency keys (store-faults:idempotency)"),
    Precondition.claimed(
        "Require Audit Events", "the idempotency keys emit audit events",
        lambda harness: harness.audits,
        "report replays to an audit sink (audit-events)"),
)


def open_keys(backend: Any, profile: Any, registry: Any,
              overrides: dict[str, Any]) -> IdempotencyHarness:
    """The idempotency harness; Robot's ``name=value`` text is converted by the config."""
    return IdempotencyHarness(backend, profile, registry, overrides=overrides)


VOCABULARY = Vocabulary(area="idempotency", noun="idempotency", start="Start Key Runtime",
                        commands=DECLARATIONS, checks=CHECKS, settings=SETTINGS,
                        preconditions=PRECONDITIONS, opens_on_first_use=True,
                        open=open_keys)
