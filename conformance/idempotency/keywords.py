"""Robot Framework keywords for idempotency keys (robot/idempotency.robot, IK-001..IK-018).

Every keyword that claims, completes, releases, purges or lets time pass (those that send
one command alone are derived from conformance/idempotency/declarations.py) drives the
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

from robot.api import SkipExecution
from robot.api.deco import keyword, library

from jobconform.conformance.area_keywords import AreaLibrary
from jobconform.conformance.idempotency.declarations import (
    DECLARATIONS,
    ask_scheduler_key,
    claim_key,
    purge_expired_keys,
)
from jobconform.conformance.idempotency.harness import ComparedAnswer, IdempotencyHarness
from jobconform.conformance.vocabulary import derive_keywords, json_value
from jobconform.reference.idempotency.oracle import (
    CONFLICT_STATUS,
    MISSING_EXECUTION_STATUS,
    UNAVAILABLE,
    canonical_json,
)

SCHEDULER_SCOPE = "scheduler"


@library(scope="TEST", auto_keywords=False)
class IdempotencyLibrary(AreaLibrary[IdempotencyHarness]):
    """Drive one backend's idempotency runtime and the oracle per test."""

    START = "Start Key Runtime"
    OPENS = "key runtime"

    @property
    def harness(self) -> IdempotencyHarness:
        """The test's harness; a command before `Start Key Runtime` opens it with the
        profile's parameters."""
        if self._harness is None:
            self.start_key_runtime()
        return super().harness

    def _answer(self, handle: str) -> ComparedAnswer:
        answer = self._answers.get(handle)
        if not isinstance(answer, ComparedAnswer):
            raise RuntimeError(f"claim {handle!r} has no answer yet; make the claim first")
        return answer

    # -- setting up ------------------------------------------------------------------------

    @keyword("Start Key Runtime")
    def start_key_runtime(self, ttl_seconds: float | None = None,
                          mismatch_status: int | None = None,
                          stale_lock_timeout_seconds: float | None = None,
                          failure_policy: str | None = None,
                          redelivery: str | None = None) -> None:
        """Open the backend's idempotency runtime; unset parameters are the profile's.

        Claim keywords open it with the profile's parameters when a test has not.
        """
        if self._harness is not None:
            raise RuntimeError("the key runtime is already open in this test; call `Start Key"
                               " Runtime` before the first claim")
        given = {"ttl_seconds": ttl_seconds, "mismatch_status": mismatch_status,
                 "stale_lock_timeout_seconds": stale_lock_timeout_seconds}
        overrides: dict[str, float | str] = {
            name: float(value) for name, value in given.items() if value is not None}
        if failure_policy is not None:
            overrides["failure_policy"] = failure_policy
        if redelivery is not None:
            overrides["redelivery"] = redelivery
        self._start(lambda backend, profile, registry: IdempotencyHarness(
            backend, profile, registry, overrides=overrides))

    # -- commands: derived from declarations.py (derive_keywords, at the end); what stays
    # -- here is not a command alone (a claim whose key is an earlier answer) ------------

    @keyword("Claim Scheduler Send")
    def claim_scheduler_send(self, handle: str, execution_id: str,
                             payload: str = "null") -> None:
        """The scheduler sends an execution under the key the runtime gives for it."""
        key = self.run(ask_scheduler_key(execution_id))
        if not isinstance(key, str):
            raise self._fail(f"the scheduler key should be a string, backend answered {key!r}")
        self._answers[handle] = self.run(claim_key(handle, SCHEDULER_SCOPE, key, payload))

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

    @keyword("Answer Should Be Unavailable")
    def answer_should_be_unavailable(self, what: str) -> None:
        """``what`` is a claim's handle, ``complete:<handle>`` or ``release:<handle>``."""
        answer = self._answers.get(what)
        if answer != UNAVAILABLE:
            raise self._fail(f"{what!r} met a failed store write and should answer"
                             f" {UNAVAILABLE!r}, holding nothing; backend answered {answer!r}")

    @keyword("Purge Should Remove")
    def purge_should_remove(self, count: int) -> None:
        """Run one purge; the backend must answer ``count`` removed records."""
        answer = self.run(purge_expired_keys())
        if answer != int(count) or isinstance(answer, bool):
            raise self._fail(f"the purge should remove {count} records, backend answered"
                             f" {answer!r}")

    @keyword("Scheduler Key Should Be")
    def scheduler_key_should_be(self, execution_id: str, expected: str) -> None:
        answer = self.run(ask_scheduler_key(execution_id))
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

    @keyword("Claim Should Be Refused Without Execution")
    def claim_should_be_refused_without_execution(self, handle: str) -> None:
        """The effect named no execution while executions may be re-delivered (IK-018):
        refused with status 400 and no token."""
        answer = self._answer(handle)
        if (answer.kind, answer.status, answer.with_token) != (
                "refused", MISSING_EXECUTION_STATUS, False):
            raise self._fail(f"claim {handle!r} should be refused with status"
                             f" {MISSING_EXECUTION_STATUS} and no token, backend answered"
                             f" {answer}")

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
        wanted = ("replay", original, ("returns", canonical_json(json_value(result))))
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


derive_keywords(IdempotencyLibrary, DECLARATIONS, lambda library: library)
