"""The idempotency area's adapter protocol (spec/idempotency.yaml, IK-001..IK-018).

A backend that claims the `idempotency` capability has a method

    open_idempotency(clock, config) -> IdempotencyRuntime

returning a fresh runtime with no records, which reads the time from `clock` and takes
the TTL, the mismatch status, the stale-lock timeout, the failure policy and whether
executions may be re-delivered from `config`
(`jobconform.reference.idempotency.oracle.IdempotencyConfig`).

The runtime guards the boundaries where work starts: a trigger (an API call, a webhook
delivery, an MCP tool call, a scheduler send) claims its key before it creates an execution, and an
execution claims each outbound effect before it performs it. The caller then completes
the claim with the outcome, or releases it when the work was refused before it started.
Payloads and outcomes are JSON values; the runtime fingerprints payloads itself.
Nothing here needs inheriting.

Audit events (IK-017) are an optional capability: a backend that also claims
`audit-events` is opened as `open_idempotency(clock, config, audit)`, with a kit-owned
`IdempotencyAudit`, and its runtime calls `audit.replayed(scope, key, original)` once for
every replay it answers (a duplicate answered with the stored outcome), never for a
started, conflicting or mismatched claim. A backend that does not claim it is opened with
two arguments, as before.

Store faults (IK-015) are an optional capability: a backend that also claims
`store-faults:idempotency` gives its runtime `inject_store_fault(fault)` and
`store_fault_struck()` (`jobconform.backends.faults`). While a plan is armed, a call whose
store write fails raises `jobconform.backends.protocol.StoreUnavailable` and holds nothing
of the call: no key, no outcome, no release, no purge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from jobconform.backends.protocol import Clock
from jobconform.reference.commands import Outcome
from jobconform.reference.idempotency.oracle import ClaimKind, IdempotencyConfig
from jobconform.reference.lifecycle import JsonValue

__all__ = ["Claim", "ClaimKind", "Clock", "IdempotencyAudit", "IdempotencyConfig",
           "IdempotencyRuntime"]


@dataclass(frozen=True)
class Claim:
    """A runtime's answer to a claim.

    Attributes:
        kind: started, conflict, replay, mismatch or refused (an effect without an
            execution id while executions may be re-delivered, IK-018).
        status: the HTTP status a router answers for a refusal: 409 for conflict,
            the configured mismatch status for mismatch, 400 for refused; None otherwise.
        token: for started, the claim token the caller completes or releases with (None
            when no key was given, IK-005); None otherwise.
        original: for replay, the token of the claim whose outcome is replayed.
        outcome: for replay, the stored outcome (`Succeed(result)` or `Raise(type, msg)`).
    """

    kind: ClaimKind
    status: int | None = None
    token: str | None = None
    original: str | None = None
    outcome: Outcome | None = None


class IdempotencyAudit(Protocol):
    """The kit's audit sink for replays (IK-017); it never raises into the runtime."""

    def replayed(self, scope: str, key: str, original: str) -> None:
        """One event `idempotent_replay`: a claim of `key` in `scope` was answered with
        the stored outcome of the claim whose token is `original`. Called once per replay,
        before the replay is answered."""
        ...


class IdempotencyRuntime(Protocol):
    def claim(self, scope: str, key: str | None, payload: JsonValue) -> Claim:
        """Claim `key` in `scope` for a request with this payload (IK-001..IK-007, IK-010).

        Args:
            scope: the namespace of the key (a caller, an endpoint).
            key: the caller's idempotency key, at most 255 characters; None means no
                de-duplication.
            payload: the request, fingerprinted as a JSON value.

        Returns:
            The answer; a started answer's token is unique within the runtime.
        """
        ...

    def claim_webhook(self, token: str, body: str, key: str | None) -> Claim:
        """Claim a webhook delivery (IK-008): in the webhook's scope, under `key` or, when
        it is None, under a key derived from the webhook token and a hash of the body."""
        ...

    def claim_call(self, tool: str, arguments: JsonValue) -> Claim:
        """Claim an MCP tool call that carries no key (IK-016): in the tool's scope, under a
        key derived from the tool and its arguments (a JSON object, compared as a JSON
        value), so a transport retry of the same call is the same key and a call with
        other arguments another."""
        ...

    def scheduler_key(self, execution_id: str) -> str:
        """The key the scheduler sends for this execution (IK-009)."""
        ...

    def claim_effect(self, execution_id: str | None, effect_type: str,
                     identity: Mapping[str, str], content: JsonValue,
                     dedup_label: str | None) -> Claim:
        """Claim an outbound effect of an execution before performing it (IK-011, IK-012).

        Args:
            execution_id: None when the caller has none: the guard fails open (IK-014),
                answering started with no token, unless `config.redelivery` is
                "enabled", where it fails closed (IK-018), answering refused with status
                400; either way it records nothing.
            identity: the resolved identifying arguments (recipient, channel, file name).
            content: the generated content; it must not affect the key.
            dedup_label: lets one execution repeat an effect to the same target on purpose.
        """
        ...

    def complete(self, token: str, outcome: Outcome) -> bool:
        """Store the outcome of the work `token` started (IK-003).

        Returns:
            True if stored; False if the token holds no live in-flight claim (released,
            completed, taken over or expired), in which case nothing changes.
        """
        ...

    def release(self, token: str) -> bool:
        """Drop the in-flight claim: the work was refused before it started (IK-004).

        Returns:
            True if the claim was removed; False if the token held none.
        """
        ...

    def purge(self) -> int:
        """Remove every record at least the TTL old; return how many (IK-007)."""
        ...

    def close(self) -> None:
        """Release what the runtime holds (connections, threads)."""
        ...
