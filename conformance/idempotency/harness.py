"""The idempotency harness: each command goes to the backend's idempotency runtime and to
the oracle, and their answers must agree.

Claims are named by handles; the harness maps the runtime's claim tokens to them, so a
replay naming the claim it came from is compared by handle. The first difference raises
`Divergence` naming the requirement IDs that decided the oracle's answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import ClassVar

from jobconform.backends.idempotency.protocol import Claim, IdempotencyRuntime
from jobconform.backends.protocol import AUDIT_EVENTS, IDEMPOTENCY, StoreUnavailable
from jobconform.conformance.area_harness import AreaHarness, profile_parameters
from jobconform.conformance.harness import AdapterError
from jobconform.conformance.sinks import ReplayAudit
from jobconform.conformance.watchdog import guarded
from jobconform.reference.commands import AdvanceTime, Raise, Succeed
from jobconform.reference.idempotency import oracle
from jobconform.reference.idempotency.commands import (
    CLAIM_COMMANDS,
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
    describe_idempotency,
)
from jobconform.reference.idempotency.oracle import (
    MAX_KEY_LENGTH,
    ClaimAnswer,
    ClaimKind,
    Decision,
    IdempotencyConfig,
    IdempotencyOracle,
    canonical_json,
)
from jobconform.spec import Profile

CONFIG_PARAMETERS = ("ttl_seconds", "mismatch_status", "stale_lock_timeout_seconds",
                     "failure_policy", "redelivery")
# Requirements a completion's answer rests on: it is refused after a release, a takeover
# or expiry, and stored otherwise.
COMPLETION_REQUIREMENTS = ("IK-003", "IK-004", "IK-007", "IK-010", "IK-013")
# The rules that decide a claim by the key's record (freed by a release or a failure, its
# payload, its age, its stale lock), whatever way its key was derived.
RECORD_RULES = frozenset({"IK-004", "IK-006", "IK-007", "IK-010", "IK-013"})
# The rules that derive a delivery's, a tool call's or an effect's key.
KEY_RULES = frozenset({"IK-008", "IK-011", "IK-012", "IK-016"})
# How close to its stale-lock timeout an in-flight claim is "on the boundary": a runtime
# that takes it over there has the boundary one tick (or a rounding) off.
BOUNDARY_WINDOW = timedelta(seconds=1)


def derives_key(command: IdempotencyCommand) -> bool:
    """The claim's key is derived by the runtime (an effect, a tool call, a webhook without
    a key)."""
    return isinstance(command, ClaimEffect | ClaimCall) or (isinstance(command, ClaimWebhook)
                                                            and command.key is None)


def config_for(profile: Profile, **overrides: float | str) -> IdempotencyConfig:
    """The area's parameters from the profile, with a check's own values on top.

    Raises:
        ValueError: an unknown parameter name or an invalid value.
        SpecError: the profile sets no defaults for the area.
    """
    values = profile_parameters(profile, IDEMPOTENCY, CONFIG_PARAMETERS, overrides)
    return IdempotencyConfig(ttl_seconds=float(values["ttl_seconds"]),
                             mismatch_status=int(values["mismatch_status"]),
                             stale_lock_timeout_seconds=float(
                                 values["stale_lock_timeout_seconds"]),
                             failure_policy=str(values["failure_policy"]),
                             redelivery=str(values["redelivery"]))


@dataclass(frozen=True)
class ComparedAnswer:
    """A claim's answer reduced to what the spec fixes, tokens replaced by handles."""

    kind: str
    status: object
    original: str | None
    outcome: object
    with_token: bool


def _outcome_form(outcome: object) -> object:
    """An outcome as comparable data: 1 and true stay apart, members in any order."""
    if isinstance(outcome, Succeed):
        return ("returns", canonical_json(outcome.result))
    if isinstance(outcome, Raise):
        return ("raises", outcome.error_type, outcome.message)
    return outcome


@dataclass
class IdempotencyHarness(AreaHarness[IdempotencyCommand]):
    """Differential execution of idempotency commands on one backend and the oracle.

    Args:
        overrides: parameters of this check (ttl_seconds, mismatch_status,
            stale_lock_timeout_seconds, failure_policy, redelivery) replacing the
            profile's (the other arguments, and what opening raises, are every area
            harness's: see `AreaHarness`).
    """

    AREA: ClassVar[str] = IDEMPOTENCY

    overrides: dict[str, float | str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._require_area("its keys cannot be checked")
        self.config = config_for(self.profile, **self.overrides)
        self.oracle = IdempotencyOracle(self.config)
        self.tokens: dict[str, str] = {}  # handle -> the runtime's claim token
        self.handles: dict[str, str] = {}  # the runtime's claim token -> handle
        self.claimed: set[str] = set()  # handles used by a claim command
        self.last_answer: object = None
        self.purge_suspects: tuple[str, ...] = ()  # see IdempotencyOracle.purge_suspects
        opener = self._opener("clock, config")
        # Only a backend claiming audit-events is handed the audit sink (IK-017); any
        # other is opened with two arguments, as before, and IK-017 is "not claimed".
        self.audit: ReplayAudit | None = (
            ReplayAudit() if AUDIT_EVENTS in self.backend.capabilities else None)
        audit = self.audit
        # Events of claims whose key the runtime derives (an effect, a tool call, a webhook
        # without a key), by index in the oracle's replays: their scope and key are the
        # runtime's own spelling, matched to the oracle's one to one (`_spelled`).
        self._derived_events: set[int] = set()
        self._places: dict[tuple[str, str], tuple[str, str]] = {}  # runtime's -> oracle's
        self._place_of: dict[tuple[str, str], tuple[str, str]] = {}  # oracle's -> runtime's
        self.runtime: IdempotencyRuntime = self._open(
            lambda: (opener(self.clock, self.config) if audit is None
                     else opener(self.clock, self.config, audit)))

    # -- the one operation ---------------------------------------------------------------

    def run(self, command: IdempotencyCommand) -> object:
        """Apply `command` to both sides and compare the answers; return the backend's.

        Raises:
            Divergence: the answers differ.
            AdapterError: the adapter raised or hung.
            ValueError: the command is malformed (a handle claimed twice, a bad key).
        """
        self._check_command(command)
        self.commands.append(command)
        if isinstance(command, IdempotencyStoreFault):
            return self._run_under_fault(command)
        expected, requirements = self._expect_noting_derived(command)
        self.exercised.update(requirements)
        with guarded(self.safety_timeout, partial(describe_idempotency, command),
                     self.hang_scope):
            actual = self._apply(command)
        self.last_answer = actual
        # Answers are all the runtime shows of its keys: a listed deviation is recorded
        # and the oracle keeps its records.
        self.listed.check(len(self.commands),
                          partial(self._compare, command, expected, actual, requirements))
        self._check_audit(command)
        return actual

    def run_oracle(self, command: IdempotencyCommand) -> object:
        """The command applied to the oracle alone (a store fault taken as one that did not
        strike), the clock moved as `_apply` moves it: the oracle's answer (the cost floor,
        see machine_runner.oracle_alone)."""
        self._check_command(command)
        self.commands.append(command)
        inner = command.command if isinstance(command, IdempotencyStoreFault) else command
        if isinstance(inner, CLAIM_COMMANDS):
            self.claimed.add(inner.handle)
        if isinstance(inner, AdvanceTime):
            self.clock.advance(inner.seconds)
        return self._expect_noting_derived(inner)[0]

    def _run_under_fault(self, command: IdempotencyStoreFault) -> object:
        """Apply the command with its write failing (IK-015). Whether the failure struck
        is the runtime's to say (only it sees its store's writes). Where it struck, the
        call answers unavailable and the oracle stays as it was: nothing is held of it.
        Where it did not (the call wrote less), the command is checked as without it."""
        runtime = self._faulted(self.runtime)
        inner = command.command
        with guarded(self.safety_timeout, partial(describe_idempotency, command),
                     self.hang_scope):
            self._call("inject_store_fault", lambda: runtime.inject_store_fault(command.fault))
            try:
                actual = self._apply_or_unavailable(inner)
                struck = self._call("store_fault_struck", runtime.store_fault_struck)
            finally:
                self._call("inject_store_fault", lambda: runtime.inject_store_fault(None))
        if isinstance(inner, CLAIM_COMMANDS):
            self.claimed.add(inner.handle)
        if struck:
            expected: object = oracle.UNAVAILABLE
            requirements: tuple[str, ...] = ("IK-015",)
        else:
            expected, requirements = self._expect_noting_derived(inner)
            requirements = (*requirements, "IK-015")
        self.exercised.update(requirements)
        self.last_answer = actual
        self._compare(command, expected, actual, requirements)
        self._check_audit(inner)
        return actual

    def _apply_or_unavailable(self, command: IdempotencyCommand) -> object:
        """The runtime's answer, or UNAVAILABLE when it raised `StoreUnavailable` as its
        contract says of a failed store write."""
        try:
            return self._apply(command)
        except AdapterError as error:
            if isinstance(error.__cause__, StoreUnavailable):
                return oracle.UNAVAILABLE
            raise

    def run_all(self, commands: list[IdempotencyCommand]) -> None:
        for command in commands:
            self.run(command)

    def _to_close(self) -> list[IdempotencyRuntime]:
        return [self.runtime]

    # -- checks on the command -----------------------------------------------------------

    def _check_command(self, command: IdempotencyCommand) -> None:
        if isinstance(command, CLAIM_COMMANDS):
            if command.handle in self.claimed:
                raise ValueError(f"claim handle {command.handle!r} is already used; pick a"
                                 " new one")
            keys = [getattr(command, name, None) for name in ("key", "scope")]
            for value in keys:
                if value is not None and not 0 < len(value) <= MAX_KEY_LENGTH:
                    raise ValueError(f"keys and scopes have 1 to {MAX_KEY_LENGTH}"
                                     f" characters, not {len(value)}")
        if isinstance(command, ClaimCall) and (
                not isinstance(command.arguments, dict)
                or not command.tool or len(oracle.call_scope(command.tool)) > MAX_KEY_LENGTH):
            raise ValueError("a tool call names a tool (its scope has at most"
                             f" {MAX_KEY_LENGTH} characters) and takes a JSON object of"
                             f" arguments, not {command.tool!r} with {command.arguments!r}")
        if isinstance(command, IdempotencyStoreFault):
            self._require_store_faults("IK-015")
            self._check_command(command.command)
        if isinstance(command, AdvanceTime) and not 0 <= command.seconds < float("inf"):
            raise ValueError(f"time advances by a finite amount >= 0, not {command.seconds!r}")

    # -- the oracle's side ---------------------------------------------------------------

    def _expect(self, command: IdempotencyCommand) -> tuple[object, tuple[str, ...]]:
        now = self.clock.now()
        model = self.oracle
        match command:
            case ClaimKey():
                decision = model.claim(command.scope, command.key, command.payload,
                                       command.handle, now)
                return (self._form(decision.answer, command.key is not None),
                        self._boundary_first(decision, now))
            case ClaimWebhook():
                key = (command.key if command.key is not None
                       else oracle.webhook_key(command.token, command.body))
                decision = model.claim(oracle.webhook_scope(command.token), key, command.body,
                                       command.handle, now)
                # A claim the key's record decided (RECORD_RULES) breaks that rule,
                # whatever the key; any other difference on a delivery starts with how
                # its key is derived.
                return (self._form(decision.answer, True),
                        self._key_rules_placed(decision, now, ("IK-008",)))
            case ClaimCall():
                key = oracle.call_key(command.tool, command.arguments)
                decision = model.claim(oracle.call_scope(command.tool), key, command.arguments,
                                       command.handle, now)
                return (self._form(decision.answer, True),
                        self._key_rules_placed(decision, now, ("IK-016",)))
            case ClaimEffect(execution_id=None):
                # No execution id: the guard fails open, as a claim without a key does
                # (IK-014), or closed once executions may be re-delivered (IK-018).
                decision = oracle.decide_effect_without_execution(self.config)
                return self._form(decision.answer, False), decision.requirements
            case ClaimEffect(execution_id=str(execution_id)):
                key = oracle.effect_key(execution_id, command.effect_type,
                                        dict(command.identity), command.dedup_label)
                decision = model.claim(oracle.effect_scope(execution_id), key, key,
                                       command.handle, now)
                return (self._form(decision.answer, True),
                        self._key_rules_placed(decision, now, ("IK-011", "IK-012")))
            case CompleteClaim():
                answer = model.complete(command.handle, command.outcome, now)
                return answer, self._freed_first(command.handle, answer,
                                                 COMPLETION_REQUIREMENTS)
            case ReleaseClaim():
                answer = model.release(command.handle, now)
                return answer, self._freed_first(command.handle, answer,
                                                 ("IK-004", "IK-007", "IK-010"))
            case PurgeKeys():
                self.purge_suspects = model.purge_suspects(now)
                return model.purge(now), ("IK-007",)
            case AskSchedulerKey():
                return oracle.scheduler_key(command.execution_id), ("IK-009",)
            case AdvanceTime():
                return None, ()
        raise ValueError(f"not an idempotency command: {command!r}")

    def _freed_first(self, handle: str, answer: bool,
                     requirements: tuple[str, ...]) -> tuple[str, ...]:
        """A completion or release the oracle refuses because the claim's record was
        removed: the requirement that removed it is the one a runtime still holding it
        broke."""
        freed_by = self.oracle.freed_claims.get(handle)
        if answer or freed_by is None:
            return requirements
        return (freed_by, *(r for r in requirements if r != freed_by))

    def _key_rules_placed(self, decision: Decision, now: datetime,
                          key_rules: tuple[str, ...]) -> tuple[str, ...]:
        """A derived key's claim: its key rules last when the key's record decided the
        answer (RECORD_RULES, the oracle's first reason), first otherwise."""
        if decision.requirements[:1] and decision.requirements[0] in RECORD_RULES:
            return (*decision.requirements, *key_rules)
        return self._boundary_first(decision, now, key_rules)

    def _boundary_first(self, decision: Decision, now: datetime,
                        leading: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The claim's requirements, `leading` first, unless the key is in flight within a
        second of going stale, or live within a second of its TTL: there that boundary
        (IK-010: exactly the timeout old is not stale; IK-007: younger than the TTL is
        live) decides the answer, and a difference breaks that rule first."""
        record = decision.record
        if decision.answer.kind is ClaimKind.CONFLICT and record is not None:
            stale_after = timedelta(seconds=self.oracle.config.stale_lock_timeout_seconds)
            if stale_after - BOUNDARY_WINDOW <= now - record.claimed_at <= stale_after:
                return ("IK-010", *leading, *decision.requirements)
        if decision.answer.kind is not ClaimKind.STARTED and record is not None:
            # Live within a second of its TTL: a runtime keeping or comparing the record's
            # age coarser than the microsecond (in whole seconds, say) starts the work
            # afresh here, which breaks the TTL (IK-007: live while younger than it).
            ttl = timedelta(seconds=self.oracle.config.ttl_seconds)
            if ttl - BOUNDARY_WINDOW <= now - record.created_at < ttl:
                return ("IK-007", *leading, *decision.requirements)
        return (*leading, *decision.requirements)

    @staticmethod
    def _form(answer: ClaimAnswer, with_token: bool) -> ComparedAnswer:
        started = answer.kind is ClaimKind.STARTED
        return ComparedAnswer(answer.kind.value, answer.status, answer.original,
                              _outcome_form(answer.outcome), started and with_token)

    # -- the backend's side --------------------------------------------------------------

    def _token(self, handle: str) -> str:
        # A claim that started nothing has no token: use one no runtime holds.
        return self.tokens.get(handle, f"unknown-{handle}")

    def _apply(self, command: IdempotencyCommand) -> object:
        runtime = self.runtime
        match command:
            case ClaimKey():
                c = command
                return self._claimed(c.handle, self._call(
                    "claim", lambda: runtime.claim(c.scope, c.key, c.payload)))
            case ClaimWebhook():
                w = command
                return self._claimed(w.handle, self._call(
                    "claim_webhook", lambda: runtime.claim_webhook(w.token, w.body, w.key)))
            case ClaimCall():
                call = command
                return self._claimed(call.handle, self._call(
                    "claim_call", lambda: runtime.claim_call(call.tool, call.arguments)))
            case ClaimEffect():
                e = command
                return self._claimed(e.handle, self._call(
                    "claim_effect", lambda: runtime.claim_effect(
                        e.execution_id, e.effect_type, dict(e.identity), e.content,
                        e.dedup_label)))
            case CompleteClaim():
                token, outcome = self._token(command.handle), command.outcome
                return self._call("complete", lambda: runtime.complete(token, outcome))
            case ReleaseClaim():
                token = self._token(command.handle)
                return self._call("release", lambda: runtime.release(token))
            case PurgeKeys():
                return self._call("purge", runtime.purge)
            case AskSchedulerKey():
                execution_id = command.execution_id
                return self._call("scheduler_key", lambda: runtime.scheduler_key(execution_id))
            case AdvanceTime():
                self.clock.advance(command.seconds)
        return None

    def _claimed(self, handle: str, claim: Claim) -> ComparedAnswer:
        """The backend's answer in handles; a started claim's token is registered."""
        self.claimed.add(handle)
        kind = getattr(claim, "kind", "<missing>")
        kind_name = kind.value if isinstance(kind, ClaimKind) else str(kind)
        token = getattr(claim, "token", None)
        if kind_name == ClaimKind.STARTED.value and token is not None:
            if token in self.handles:
                raise self._fail(("IK-001",), f"the claim token of {handle!r}",
                                 "a token no earlier claim had",
                                 f"{token!r}, the token of {self.handles[token]!r}")
            self.tokens[handle] = token
            self.handles[token] = handle
        original = getattr(claim, "original", None)
        original_handle = (None if original is None
                           else self.handles.get(original, f"<unknown token {original}>"))
        return ComparedAnswer(kind_name, getattr(claim, "status", None), original_handle,
                              _outcome_form(getattr(claim, "outcome", None)),
                              token is not None)

    # -- the audit events ------------------------------------------------------------------

    @property
    def audits(self) -> bool:
        """Whether the backend claims audit-events, so IK-017 is checked on it."""
        return self.audit is not None

    def audit_events(self) -> list[tuple[str, str, str]]:
        """The runtime's `idempotent_replay` events so far: (scope, key, the original
        claim's handle), in the order emitted; [] where it does not claim audit-events."""
        if self.audit is None:
            return []
        return [(scope, key, self.handles.get(original, f"<unknown token {original}>"))
                for scope, key, original in self.audit.events()]

    def _expect_noting_derived(self, command: IdempotencyCommand
                               ) -> tuple[object, tuple[str, ...]]:
        """`_expect`, noting a replay event of a claim whose key the runtime derives."""
        before = len(self.oracle.replays)
        expected = self._expect(command)
        if derives_key(command) and len(self.oracle.replays) > before:
            self._derived_events.add(before)
        return expected

    def _spelled(self, index: int, event: tuple[str, str, str],
                 expected: list[tuple[str, str, str]]) -> tuple[str, str, str]:
        """A runtime's event with a derived key in the oracle's spelling, where it names
        the place (scope, key) the oracle's event does and that place is spelled one way
        only: the same key always alike, two keys never alike. Any other event as it is."""
        scope, key, original = event
        if index not in self._derived_events or index >= len(expected):
            return event
        theirs, ours = (scope, key), expected[index][:2]
        known = self._places.get(theirs)
        owner = self._place_of.get(ours)
        if known is None and owner is None:
            self._places[theirs], self._place_of[ours] = ours, theirs
            known, owner = ours, theirs
        if known == ours and owner == theirs:
            return (*ours, original)
        return event

    def _check_audit(self, command: IdempotencyCommand) -> None:
        """After every command: exactly the replay events the oracle expects, in order
        (IK-017): one per replay naming its scope, key and original claim, none for a
        start, a conflict or a mismatch."""
        if self.audit is None:
            return
        if isinstance(command, CLAIM_COMMANDS):
            self.exercised.add("IK-017")
        expected = list(self.oracle.replays)
        actual = [self._spelled(index, event, expected)
                  for index, event in enumerate(self.audit_events())]
        if actual != expected:
            raise self._fail(("IK-017",), "the audit events idempotent_replay (scope, key,"
                             f" original) after {describe_idempotency(command)}",
                             expected, actual)

    # -- comparing -------------------------------------------------------------------------

    def _compare(self, command: IdempotencyCommand, expected: object, actual: object,
                 requirements: tuple[str, ...]) -> None:
        if expected == actual and type(expected) is type(actual):
            return
        if (isinstance(command, PurgeKeys) and isinstance(expected, int)
                and isinstance(actual, int) and actual > expected and self.purge_suspects):
            # The runtime purged a record the oracle had removed before: the rule of that
            # removal is the one it broke.
            requirements = (*self.purge_suspects,
                            *(r for r in requirements if r not in self.purge_suspects))
        if (isinstance(expected, ComparedAnswer) and isinstance(actual, ComparedAnswer)
                and requirements[:1] == ("IK-010",)
                and expected.kind == ClaimKind.CONFLICT.value
                and actual.kind != ClaimKind.STARTED.value):
            # On the stale-lock boundary a boundary error takes the key over (started);
            # any other answer to an in-flight key is not about the boundary.
            requirements = (*requirements[1:], "IK-010")
        if (isinstance(expected, ComparedAnswer) and isinstance(actual, ComparedAnswer)
                and requirements[:1] == ("IK-007",)
                and expected.kind != ClaimKind.STARTED.value
                and actual.kind != ClaimKind.STARTED.value):
            # Likewise on the TTL's boundary: only a fresh start is an expiry come early.
            requirements = (*requirements[1:], "IK-007")
        if (isinstance(expected, ComparedAnswer) and isinstance(actual, ComparedAnswer)
                and ClaimKind.STARTED.value not in (expected.kind, actual.kind)):
            # Both sides found a record for the key (a conflict, a replay, a mismatch):
            # the key was derived alike, and the record's rule is the one broken.
            requirements = (*(r for r in requirements if r not in KEY_RULES),
                            *(r for r in requirements if r in KEY_RULES))
        elif (isinstance(expected, ComparedAnswer) and isinstance(actual, ComparedAnswer)
              and expected.kind == ClaimKind.STARTED.value
              and actual.kind == ClaimKind.MISMATCH.value and derives_key(command)):
            # Where the oracle found the key free, the runtime found another payload under
            # it: another request's record, so the key was derived wrong.
            requirements = (*(r for r in requirements if r in KEY_RULES),
                            *(r for r in requirements if r not in KEY_RULES))
        raise self._fail(requirements, f"the answer to {describe_idempotency(command)}",
                         expected, actual)

