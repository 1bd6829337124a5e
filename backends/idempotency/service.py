"""The shipped idempotency runtime: claim decisions over a store of key records.

The decisions (start, conflict, replay, mismatch, takeover) are made here, once, for
every store. A store offers only two atomic steps, which is all a claim needs to have
exactly one winner per key however many callers race:

- `insert_if_absent`: add the record unless the (scope, key) exists; else return it;
- `swap`: replace the record only if it is still the one the caller read (same holder,
  same state), a compare-and-set.

A caller that loses a swap reads again and decides again. The memory store does both
under a lock; the SQL store with a primary key on (scope, key) and a conditional UPDATE.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from jobconform.backends.idempotency.protocol import (
    Claim,
    ClaimKind,
    Clock,
    IdempotencyAudit,
)
from jobconform.reference.commands import Outcome, Raise
from jobconform.reference.faults import StoreFault
from jobconform.reference.idempotency.oracle import IdempotencyConfig
from jobconform.reference.lifecycle import JsonValue

# A claim the key's first request still holds is refused with 409 Conflict (the spec's
# idempotency area).
CONFLICT_STATUS = 409
# An effect refused because it names no execution while re-delivery is on: the status a
# router answers a request missing what it requires (Bad Request).
MISSING_EXECUTION_STATUS = 400
# Scopes and keys are 1 to 255 characters: Stripe's limit, which fits a primary key on
# every database the SQL store supports.
MAX_KEY_LENGTH = 255
# A claim that keeps losing swaps means a store whose compare-and-set never succeeds: a
# bug, reported instead of spinning forever.
MAX_CLAIM_ROUNDS = 100


@dataclass(frozen=True)
class KeyEntry:
    """One stored (scope, key): its payload fingerprint, holder and outcome."""

    scope: str
    key: str
    fingerprint: str
    holder: str  # the claim token of the last claim that started the work
    created_at: datetime
    claimed_at: datetime
    outcome: Outcome | None = None  # None while in flight

    @property
    def in_flight(self) -> bool:
        return self.outcome is None


class KeyStore(Protocol):
    def insert_if_absent(self, entry: KeyEntry) -> KeyEntry | None:
        """Add `entry` unless its (scope, key) is held; return the held entry, else None."""
        ...

    def swap(self, expected: KeyEntry, new: KeyEntry) -> bool:
        """Replace `expected` by `new` if the stored entry still has expected's holder and
        state; return whether it did."""
        ...

    def complete(self, holder: str, outcome: Outcome, created_after: datetime) -> bool:
        """Store the outcome of the in-flight entry `holder` holds, if created after the
        given instant."""
        ...

    def release(self, holder: str, created_after: datetime) -> bool:
        """Delete the in-flight entry `holder` holds, if created after the given instant."""
        ...

    def purge(self, created_at_or_before: datetime) -> int:
        """Delete the entries created at or before the instant; return how many."""
        ...

    def inject_fault(self, fault: StoreFault | None) -> None:
        """Arm (None: disarm) a store fault for the writes from now on: every method
        above is one write (`jobconform.backends.faults`)."""
        ...

    def fault_struck(self) -> bool:
        """Whether the fault armed last has struck a write."""
        ...

    def close(self) -> None: ...


def key_digest(value: object) -> str:
    """The SHA-256 of `value` as canonical JSON: the kit's spelling of a derived key
    (public so that the self-test gallery derives keys the same way when it breaks them)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_key(what: str, value: str) -> None:
    """Keys and scopes are non-empty and fit the store's primary key."""
    if not value or len(value) > MAX_KEY_LENGTH:
        raise ValueError(f"an idempotency {what} has 1 to {MAX_KEY_LENGTH} characters;"
                         f" got {len(value)}: {value[:40]!r}...")


class IdempotencyService:
    """The `IdempotencyRuntime` of the shipped backends, over any `KeyStore`.

    `audit`, where given, hears of every replay (IK-017); it may be set after opening.
    """

    def __init__(self, store: KeyStore, clock: Clock, config: IdempotencyConfig,
                 audit: IdempotencyAudit | None = None) -> None:
        self.audit = audit
        self._store = store
        self._clock = clock
        self._ttl = timedelta(seconds=config.ttl_seconds)
        self._stale_after = timedelta(seconds=config.stale_lock_timeout_seconds)
        self._mismatch_status = config.mismatch_status
        self._release_failures = config.failure_policy == "release"
        # An execution may be delivered again (pull mode): an unguarded effect could repeat.
        self._effects_fail_closed = config.redelivery == "enabled"

    # -- triggers ----------------------------------------------------------------------

    def claim(self, scope: str, key: str | None, payload: JsonValue) -> Claim:
        if key is None:
            return Claim(ClaimKind.STARTED)  # no key, no de-duplication
        return self._claim(scope, key, self.fingerprint(payload))

    def claim_webhook(self, token: str, body: str, key: str | None) -> Claim:
        if key is None:
            body_hash = hashlib.sha256(body.encode("utf-8")).hexdigest()
            key = f"derived:{key_digest([token, body_hash])}"
        return self._claim(f"webhook:{token}", key, self.fingerprint(body))

    def claim_call(self, tool: str, arguments: JsonValue) -> Claim:
        # The MCP server forwards a key over the call's arguments, so a transport retry of
        # the same call dedupes; the arguments are the payload too.
        return self._claim(f"mcp:{tool}", f"call:{key_digest([tool, arguments])}",
                           self.fingerprint(arguments))

    def scheduler_key(self, execution_id: str) -> str:
        return f"sched:{execution_id}"

    # -- effects -------------------------------------------------------------------------

    def claim_effect(self, execution_id: str | None, effect_type: str,
                     identity: Mapping[str, str], content: JsonValue,
                     dedup_label: str | None) -> Claim:
        if execution_id is None:
            # No execution to scope it to. Once an execution can be delivered again, a
            # re-run would perform the effect a second time: refuse it (fail closed).
            # Without re-delivery the guard fails open. Either way nothing is recorded.
            if self._effects_fail_closed:
                return Claim(ClaimKind.REFUSED, status=MISSING_EXECUTION_STATUS)
            return Claim(ClaimKind.STARTED)
        key = self.effect_key(execution_id, effect_type, identity, dedup_label)
        # The content is generated anew on a re-run: it is neither key nor fingerprint.
        return self._claim(f"effect:{execution_id}", key, key)

    def effect_key(self, execution_id: str, effect_type: str, identity: Mapping[str, str],
                   dedup_label: str | None) -> str:
        digest = key_digest([execution_id, effect_type, dict(identity), dedup_label])
        return f"{effect_type}:{digest}"

    def fingerprint(self, payload: JsonValue) -> str:
        return key_digest(payload)

    # -- the claim -------------------------------------------------------------------------

    def _claim(self, scope: str, key: str, fingerprint: str) -> Claim:
        check_key("scope", scope)
        check_key("key", key)
        for _ in range(MAX_CLAIM_ROUNDS):
            now = self._clock.now()
            token = str(uuid.uuid4())
            held = self._store.insert_if_absent(
                KeyEntry(scope, key, fingerprint, token, now, now))
            if held is None:
                return Claim(ClaimKind.STARTED, token=token)
            if now - held.created_at >= self._ttl:  # expired: as if absent
                fresh = KeyEntry(scope, key, fingerprint, token, now, now)
                if self._store.swap(held, fresh):
                    return Claim(ClaimKind.STARTED, token=token)
                continue
            if held.fingerprint != fingerprint:
                return Claim(ClaimKind.MISMATCH, status=self._mismatch_status)
            if held.in_flight and now - held.claimed_at > self._stale_after:
                if self._store.swap(held, replace(held, holder=token, claimed_at=now)):
                    return Claim(ClaimKind.STARTED, token=token)
                continue
            if held.in_flight:
                return Claim(ClaimKind.CONFLICT, status=CONFLICT_STATUS)
            if self.audit is not None:  # every replay, once: duplicate storms show (IK-017)
                self.audit.replayed(scope, key, held.holder)
            return Claim(ClaimKind.REPLAY, original=held.holder, outcome=held.outcome)
        raise RuntimeError(f"claim of {key!r} in {scope!r} lost {MAX_CLAIM_ROUNDS} swaps in a"
                           " row; the key store's compare-and-set is broken")

    # -- after the claim -------------------------------------------------------------------

    def complete(self, token: str, outcome: Outcome) -> bool:
        if self._release_failures and isinstance(outcome, Raise):
            return self._store.release(token, self._clock.now() - self._ttl)
        return self._store.complete(token, outcome, self._clock.now() - self._ttl)

    def release(self, token: str) -> bool:
        return self._store.release(token, self._clock.now() - self._ttl)

    def purge(self) -> int:
        return self._store.purge(self._clock.now() - self._ttl)

    # -- faults ----------------------------------------------------------------------------

    # A write the store refuses raises `StoreWriteFailed` (a `StoreUnavailable`) out of
    # the call that made it, and nothing is held: a claim never answers started, nor a
    # completion stored, on a write that did not land (IK-015).

    def inject_store_fault(self, fault: StoreFault | None) -> None:
        self._store.inject_fault(fault)

    def store_fault_struck(self) -> bool:
        return self._store.fault_struck()

    def close(self) -> None:
        self._store.close()
