"""Robot Framework keywords for idempotency keys (robot/idempotency.robot, IK-001..IK-012).

Every keyword that claims, completes, releases, purges or lets time pass drives the
`IdempotencyHarness`, so the backend and the oracle see the same command and a difference
fails the test with the harness's `Divergence`. The assertion keywords then compare the
BACKEND's own answer with the value the test states.

Usage::

    *** Settings ***
    Resource    lifecycle.resource
    Library     jobconform.conformance.idempotency.keywords.IdempotencyLibrary

The backend and profile come from ``${BACKEND}`` and ``${PROFILE}`` as for the lifecycle
library, whose listener also skips tests tagged with requirements the backend does not
claim. Claims are named by handles the test picks; time passes only through
``Advance Key Clock``.
"""

from __future__ import annotations

import json
from typing import Any

from robot.api import SkipExecution
from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.loading import load_backend
from jobconform.conformance import tolerance
from jobconform.conformance.idempotency.harness import ComparedAnswer, IdempotencyHarness
from jobconform.conformance.lifecycle.keywords import (
    DEFAULT_BACKEND,
    close_at_end_of_test,
    requirement_tags,
)
from jobconform.reference.commands import AdvanceTime, Raise, Succeed
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.idempotency.commands import (
    AskSchedulerKey,
    ClaimCall,
    ClaimEffect,
    ClaimKey,
    ClaimWebhook,
    CompleteClaim,
    IdempotencyCommand,
    IdempotencyStoreFault,
    PurgeKeys,
    ReleaseClaim,
)
from jobconform.reference.idempotency.oracle import CONFLICT_STATUS, UNAVAILABLE, canonical_json
from jobconform.reference.lifecycle import JsonValue
from jobconform.spec import load_registry

SCHEDULER_SCOPE = "scheduler"


def _json(text: str) -> JsonValue:
    try:
        value: JsonValue = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{text!r} is not a JSON value ({error.msg}); write strings in double"
                         ' quotes, e.g. "done", and null for no value') from None
    return value


def _identity(text: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for part in text.split(","):
        name, equals, value = part.strip().partition("=")
        if not equals or not name:
            raise ValueError("write an effect's identity as name=value pairs separated by"
                             f" commas, e.g. 'to=bob, channel=sms'; got {text!r}")
        pairs.append((name.strip(), value.strip()))
    return tuple(pairs)


@library(scope="TEST", auto_keywords=False)
class IdempotencyLibrary:
    """Drive one backend's idempotency runtime and the oracle per test."""

    def __init__(self) -> None:
        self._harness: IdempotencyHarness | None = None
        self._answers: dict[str, Any] = {}
        self.ROBOT_LIBRARY_LISTENER = self

    def end_test(self, data: Any, result: Any) -> None:
        """Close the test's runtime, whatever the outcome."""
        harness, self._harness = self._harness, None
        close_at_end_of_test(harness, result)

    # -- helpers ---------------------------------------------------------------------------

    def _variable(self, name: str) -> str | None:
        value = BuiltIn().get_variable_value(name)
        return None if value is None or value == "" else str(value)

    @property
    def harness(self) -> IdempotencyHarness:
        if self._harness is None:
            self.start_key_runtime()
        assert self._harness is not None
        return self._harness

    def _run(self, command: IdempotencyCommand) -> object:
        return self.harness.run(command)

    def _fail(self, message: str) -> AssertionError:
        ids = requirement_tags(BuiltIn().get_variable_value("@{TEST_TAGS}") or [])
        suffix = f" [test checks {', '.join(ids)}]" if ids else ""
        return tolerance.robot_failure(message + suffix, ids)

    def _answer(self, handle: str) -> ComparedAnswer:
        answer = self._answers.get(handle)
        if not isinstance(answer, ComparedAnswer):
            raise RuntimeError(f"claim {handle!r} has no answer yet; make the claim first")
        return answer

    def _claim(self, handle: str, command: IdempotencyCommand) -> None:
        self._answers[handle] = self._run(command)

    # -- setting up ------------------------------------------------------------------------

    @keyword("Start Key Runtime")
    def start_key_runtime(self, ttl_seconds: float | None = None,
                          mismatch_status: int | None = None,
                          stale_lock_timeout_seconds: float | None = None,
                          failure_policy: str | None = None) -> None:
        """Open the backend's idempotency runtime; unset parameters are the profile's.

        Claim keywords open it with the profile's parameters when a test has not.
        """
        if self._harness is not None:
            raise RuntimeError("the key runtime is already open in this test; call `Start Key"
                               " Runtime` before the first claim")
        backend = load_backend(self._variable("${BACKEND}") or DEFAULT_BACKEND)
        registry = load_registry()
        profile = registry.profile(self._variable("${PROFILE}") or backend.profile)
        given = {"ttl_seconds": ttl_seconds, "mismatch_status": mismatch_status,
                 "stale_lock_timeout_seconds": stale_lock_timeout_seconds}
        overrides: dict[str, float | str] = {
            name: float(value) for name, value in given.items() if value is not None}
        if failure_policy is not None:
            overrides["failure_policy"] = failure_policy
        self._harness = IdempotencyHarness(backend, profile, registry, overrides=overrides)

    # -- commands ----------------------------------------------------------------------------

    @keyword("Claim Key")
    def claim_key(self, handle: str, scope: str, key: str, payload: str = "null") -> None:
        """Claim ``key`` in ``scope`` for a request with ``payload`` (a JSON value)."""
        self._claim(handle, ClaimKey(handle, scope, key, _json(payload)))

    @keyword("Claim Without Key")
    def claim_without_key(self, handle: str, scope: str, payload: str = "null") -> None:
        """A request carrying no idempotency key."""
        self._claim(handle, ClaimKey(handle, scope, None, _json(payload)))

    @keyword("Claim Webhook")
    def claim_webhook(self, handle: str, token: str, body: str, key: str | None = None) -> None:
        """A webhook delivery; without ``key`` the runtime derives one (IK-008)."""
        self._claim(handle, ClaimWebhook(handle, token, body, key))

    @keyword("Claim Tool Call")
    def claim_tool_call(self, handle: str, tool: str, arguments: str = "{}") -> None:
        """An MCP tool call without a key; the runtime derives one from ``tool`` and
        ``arguments`` (a JSON object) (IK-016)."""
        self._claim(handle, ClaimCall(handle, tool, _json(arguments)))

    @keyword("Claim Scheduler Send")
    def claim_scheduler_send(self, handle: str, execution_id: str,
                             payload: str = "null") -> None:
        """The scheduler sends an execution under the key the runtime gives for it."""
        key = self._run(AskSchedulerKey(execution_id))
        if not isinstance(key, str):
            raise self._fail(f"the scheduler key should be a string, backend answered {key!r}")
        self._claim(handle, ClaimKey(handle, SCHEDULER_SCOPE, key, _json(payload)))

    @keyword("Claim Effect")
    def claim_effect(self, handle: str, execution_id: str, effect_type: str, identity: str,
                     content: str = "null", dedup_label: str | None = None) -> None:
        """An execution claims an outbound effect; ``identity`` is ``to=bob, channel=sms``."""
        self._claim(handle, ClaimEffect(handle, execution_id, effect_type, _identity(identity),
                                        _json(content), dedup_label))

    @keyword("Claim Effect Without Execution")
    def claim_effect_without_execution(self, handle: str, effect_type: str, identity: str,
                                       content: str = "null") -> None:
        """A caller with no execution id claims an outbound effect (IK-014)."""
        self._claim(handle, ClaimEffect(handle, None, effect_type, _identity(identity),
                                        _json(content)))

    @keyword("Complete Claim")
    def complete_claim(self, handle: str, result: str = "null") -> bool:
        """The work ends with ``result`` (JSON); returns the backend's answer."""
        answer = self._run(CompleteClaim(handle, Succeed(_json(result))))
        self._answers[f"complete:{handle}"] = answer
        return bool(answer)

    @keyword("Fail Claim")
    def fail_claim(self, handle: str, error_type: str, message: str) -> bool:
        """The work ends raising ``error_type(message)``; returns the backend's answer."""
        answer = self._run(CompleteClaim(handle, Raise(error_type, message)))
        self._answers[f"complete:{handle}"] = answer
        return bool(answer)

    @keyword("Release Claim")
    def release_claim(self, handle: str) -> bool:
        """The work was refused before it started; returns the backend's answer."""
        answer = self._run(ReleaseClaim(handle))
        self._answers[f"release:{handle}"] = answer
        return bool(answer)

    # -- store faults (IK-015) ---------------------------------------------------------------

    @keyword("Require Store Faults")
    def require_store_faults(self) -> None:
        """Skip the test where the backend does not claim store-faults:idempotency: IK-015
        cannot be checked there, so it is not run."""
        harness = self.harness
        if not harness.takes_store_faults:
            raise SkipExecution(f"backend {harness.backend.name} does not take store faults"
                                " for its idempotency keys (store-faults:idempotency)")

    # -- audit events of replays (IK-017) --------------------------------------------------

    @keyword("Require Audit Events")
    def require_audit_events(self) -> None:
        """Skip the test where the backend does not claim audit-events: IK-017 cannot be
        checked there, so it is not run."""
        harness = self.harness
        if not harness.audits:
            raise SkipExecution(f"backend {harness.backend.name} does not report replays to"
                                " an audit sink (audit-events)")

    @keyword("Audit Log Should Hold")
    def audit_log_should_hold(self, count: int, original: str | None = None,
                              key: str | None = None, scope: str | None = None) -> None:
        """The runtime emitted ``count`` idempotent_replay events (IK-017), the last
        naming ``scope``, ``key`` and the claim ``original`` whose outcome it replayed."""
        events = self.harness.audit_events()
        last = [] if original is None else [(scope, key, original)]
        if len(events) != int(count) or (last and events[-1:] != last):
            raise self._fail(f"the audit log should hold {count} idempotent_replay events"
                             f"{'' if not last else f', the last {last[0]}'}; it holds"
                             f" {events}")

    def _failing(self, write: int,
                 command: ClaimKey | CompleteClaim | ReleaseClaim) -> IdempotencyStoreFault:
        return IdempotencyStoreFault(StoreFault(FaultKind.FAIL, int(write)), command)

    @keyword("Claim Key While Store Write Fails")
    def claim_key_write_fails(self, write: int, handle: str, scope: str, key: str,
                              payload: str = "null") -> None:
        """Claim as ``Claim Key`` does while store write ``write`` of the claim fails."""
        self._claim(handle, self._failing(write, ClaimKey(handle, scope, key, _json(payload))))

    @keyword("Complete Claim While Store Write Fails")
    def complete_claim_write_fails(self, write: int, handle: str, result: str = "null") -> object:
        answer = self._run(self._failing(write, CompleteClaim(handle, Succeed(_json(result)))))
        self._answers[f"complete:{handle}"] = answer
        return answer

    @keyword("Release Claim While Store Write Fails")
    def release_claim_write_fails(self, write: int, handle: str) -> object:
        answer = self._run(self._failing(write, ReleaseClaim(handle)))
        self._answers[f"release:{handle}"] = answer
        return answer

    @keyword("Answer Should Be Unavailable")
    def answer_should_be_unavailable(self, what: str) -> None:
        """``what`` is a claim's handle, ``complete:<handle>`` or ``release:<handle>``."""
        answer = self._answers.get(what)
        if answer != UNAVAILABLE:
            raise self._fail(f"{what!r} met a failed store write and should answer"
                             f" {UNAVAILABLE!r}, holding nothing; backend answered {answer!r}")

    @keyword("Advance Key Clock")
    def advance_key_clock(self, seconds: float) -> None:
        """Let ``seconds`` of virtual time pass for the key runtime."""
        self._run(AdvanceTime(float(seconds)))

    @keyword("Purge Should Remove")
    def purge_should_remove(self, count: int) -> None:
        """Run one purge; the backend must answer ``count`` removed records."""
        answer = self._run(PurgeKeys())
        if answer != int(count) or isinstance(answer, bool):
            raise self._fail(f"the purge should remove {count} records, backend answered"
                             f" {answer!r}")

    @keyword("Scheduler Key Should Be")
    def scheduler_key_should_be(self, execution_id: str, expected: str) -> None:
        answer = self._run(AskSchedulerKey(execution_id))
        if answer != expected:
            raise self._fail(f"the scheduler key of {execution_id!r} should be {expected!r},"
                             f" backend answered {answer!r}")

    # -- assertions ----------------------------------------------------------------------------

    @keyword("Claim Should Be Started")
    def claim_should_be_started(self, handle: str) -> None:
        answer = self._answer(handle)
        if answer.kind != "started" or not answer.with_token:
            raise self._fail(f"claim {handle!r} should be started with a token, backend"
                             f" answered {answer}")

    @keyword("Claim Should Be Started Without Token")
    def claim_should_be_started_without_token(self, handle: str) -> None:
        answer = self._answer(handle)
        if answer.kind != "started" or answer.with_token:
            raise self._fail(f"claim {handle!r} should be started with no token, backend"
                             f" answered {answer}")

    @keyword("Claim Should Conflict")
    def claim_should_conflict(self, handle: str) -> None:
        answer = self._answer(handle)
        if (answer.kind, answer.status) != ("conflict", CONFLICT_STATUS):
            raise self._fail(f"claim {handle!r} should be a conflict with status"
                             f" {CONFLICT_STATUS}, backend answered {answer}")

    @keyword("Claim Should Mismatch")
    def claim_should_mismatch(self, handle: str, status: int) -> None:
        answer = self._answer(handle)
        if (answer.kind, answer.status) != ("mismatch", int(status)):
            raise self._fail(f"claim {handle!r} should be a mismatch with status {status},"
                             f" backend answered {answer}")

    @keyword("Claim Should Replay Result")
    def claim_should_replay_result(self, handle: str, original: str, result: str) -> None:
        answer = self._answer(handle)
        wanted = ("replay", original, ("returns", canonical_json(_json(result))))
        if (answer.kind, answer.original, answer.outcome) != wanted:
            raise self._fail(f"claim {handle!r} should replay {original!r}'s result {result},"
                             f" backend answered {answer}")

    @keyword("Claim Should Replay Error")
    def claim_should_replay_error(self, handle: str, original: str, error_type: str,
                                  message: str) -> None:
        answer = self._answer(handle)
        wanted = ("replay", original, ("raises", error_type, message))
        if (answer.kind, answer.original, answer.outcome) != wanted:
            raise self._fail(f"claim {handle!r} should replay {original!r}'s error"
                             f" {error_type}({message!r}), backend answered {answer}")

    @keyword("Completion Should Be Stored")
    def completion_should_be_stored(self, handle: str) -> None:
        self._boolean(f"complete:{handle}", True, f"completing {handle!r}")

    @keyword("Completion Should Be Refused")
    def completion_should_be_refused(self, handle: str) -> None:
        self._boolean(f"complete:{handle}", False, f"completing {handle!r}")

    @keyword("Release Should Be Accepted")
    def release_should_be_accepted(self, handle: str) -> None:
        self._boolean(f"release:{handle}", True, f"releasing {handle!r}")

    @keyword("Release Should Be Refused")
    def release_should_be_refused(self, handle: str) -> None:
        self._boolean(f"release:{handle}", False, f"releasing {handle!r}")

    def _boolean(self, key: str, wanted: bool, what: str) -> None:
        answer = self._answers.get(key)
        if answer is not wanted:
            raise self._fail(f"{what} should answer {wanted}, backend answered {answer!r}")
