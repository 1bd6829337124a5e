"""The idempotency gallery: the memory backend with its key runtime broken the way
idempotency layers get it wrong (seed 002 §10.10 and §10.10.1, the anchors' designs).

`GALLERY` joins the self-test: every suite must catch each entry, naming the
requirement in `catches`. A claim that is not atomic only shows when callers race, which
the single-process suites never do: `CheckThenInsertKeyStore` is caught by the races of
tests/test_idempotency.py instead.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import insert
from sqlalchemy.exc import IntegrityError

from jobconform.backends.idempotency.memory import MemoryKeyStore
from jobconform.backends.idempotency.protocol import (
    Claim,
    ClaimKind,
    Clock,
    IdempotencyAudit,
    IdempotencyConfig,
)
from jobconform.backends.idempotency.service import IdempotencyService, KeyEntry, key_digest
from jobconform.backends.idempotency.sql import KEYS, SqlKeyStore, entry_values
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import StoreUnavailable
from jobconform.conformance.gallery import GalleryEntry, declares, opener_entry
from jobconform.reference.commands import Outcome, Raise
from jobconform.reference.lifecycle import JsonValue

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []


@declares(GALLERY)
def entry(name: str, broken: type[IdempotencyService] | type[MemoryKeyStore], catches: str,
          source: str, store: type[MemoryKeyStore] = MemoryKeyStore) -> GalleryEntry:
    """The memory backend with a broken key runtime (over `store`) or a broken key store,
    loadable as `<this module>:<name>`."""
    service, store = ((IdempotencyService, broken) if issubclass(broken, MemoryKeyStore)
                      else (broken, store))

    def open_broken(_: MemoryBackend, clock: Clock, config: IdempotencyConfig,
                    audit: IdempotencyAudit | None = None) -> IdempotencyService:
        runtime = service(store(), clock, config)
        runtime.audit = audit
        return runtime

    return opener_entry(__name__, name, MemoryBackend, "open_idempotency", open_broken,
                        service if service is not IdempotencyService else store, catches,
                        source)


@entry("in_flight_replayed", "IK-002", "seed 002 §10.10: in-flight duplicate -> 409")
class InFlightReplayedService(IdempotencyService):
    """A duplicate that arrives while the first request is still running gets a replay
    (of nothing yet) with success, instead of a 409: the caller thinks the work is done."""

    def _claim(self, scope: str, key: str, fingerprint: str) -> Claim:
        claim = super()._claim(scope, key, fingerprint)
        if claim.kind is ClaimKind.CONFLICT:
            return Claim(ClaimKind.REPLAY, original=None, outcome=None)
        return claim


class NeverReleasedStore(MemoryKeyStore):
    """Releasing a claim refused at capacity answers true but keeps the record in flight,
    so the caller's retry is refused with 409 until the lock goes stale."""

    def release(self, holder: str, created_after: datetime) -> bool:
        self._faults.before_write()  # a write it would make, even if it then changes nothing
        return self._held_by(holder, created_after) is not None


@entry("prestart_claim_kept", "IK-004", "seed 002 §10.10: at-capacity rejections release the claim",
       store=NeverReleasedStore)
class PrestartClaimKeptService(IdempotencyService):
    """Releasing a claim refused at capacity answers true but keeps the record in flight,
    so the caller's retry is refused with 409 until the lock goes stale."""

    def complete(self, token: str, outcome: Outcome) -> bool:
        # A failure the profile releases (IK-013) frees its key as the shipped store
        # does: the bug is the release of a claim refused before the work started only.
        if self._release_failures and isinstance(outcome, Raise):
            return MemoryKeyStore.release(self._store, token,  # type: ignore[arg-type]
                                          self._clock.now() - self._ttl)
        return super().complete(token, outcome)


@entry("payload_mismatch_accepted", "IK-006", "anchors: IETF draft 422, Stripe")
class MismatchAcceptedService(IdempotencyService):
    """The payload fingerprint is never compared: a request reusing a key with another
    body gets the first request's answer instead of an error."""

    def fingerprint(self, payload: JsonValue) -> str:
        return "any payload"


@entry("expired_key_replayed", "IK-007", "seed 002 §10.10: 24 h TTL")
class ExpiredKeyReplayedService(IdempotencyService):
    """A claim never checks the key's age: until the retention sweep happens to run, a
    key older than the TTL still replays (or blocks) a new request."""

    def __init__(self, store: MemoryKeyStore, clock: Clock, config: IdempotencyConfig) -> None:
        super().__init__(store, clock, config)
        self._ttl = timedelta.max  # claims treat every key as young
        self._purge_age = timedelta(seconds=config.ttl_seconds)

    def complete(self, token: str, outcome: Outcome) -> bool:
        # Its one bug is the claim's age check: failures follow the policy as they should.
        if self._release_failures and isinstance(outcome, Raise):
            return self.release(token)
        return self._store.complete(token, outcome, self._clock.now() - self._purge_age)

    def release(self, token: str) -> bool:
        return self._store.release(token, self._clock.now() - self._purge_age)

    def purge(self) -> int:
        return self._store.purge(self._clock.now() - self._purge_age)


@entry("stale_lock_kept", "IK-010", "anchors: Brandur's stale lock after 90 s")
class StaleLockKeptService(IdempotencyService):
    """An in-flight claim whose holder died is never taken over: the key answers 409 for
    the whole TTL."""

    def __init__(self, store: MemoryKeyStore, clock: Clock, config: IdempotencyConfig) -> None:
        super().__init__(store, clock, config)
        self._stale_after = timedelta.max


@entry("stale_at_timeout", "IK-010",
       "issue 18: exact boundaries (exactly the timeout old is not stale)")
class StaleAtTimeoutService(IdempotencyService):
    """A claim exactly stale_lock_timeout_seconds old is taken over (>= for >): the
    threshold sits one tick (a microsecond) early, so a slow but live holder loses its
    key on the boundary."""

    def __init__(self, store: MemoryKeyStore, clock: Clock, config: IdempotencyConfig) -> None:
        super().__init__(store, clock, config)
        self._stale_after -= timedelta(microseconds=1)


@entry("content_in_effect_key", "IK-011", "seed 002 §10.10.1: never the LLM-generated body")
class ContentInEffectKeyService(IdempotencyService):
    """The effect key hashes the generated message body too: a re-run writes a new body
    and sends the message a second time."""

    def claim_effect(self, execution_id: str | None, effect_type: str,
                     identity: Mapping[str, str], content: JsonValue,
                     dedup_label: str | None) -> Claim:
        with_content = {**identity, "content": repr(content)}
        return super().claim_effect(execution_id, effect_type, with_content, content,
                                    dedup_label)


@entry("effect_without_execution_guarded", "IK-014",
       "seed 002 §10.10.1: fail-open when the execution id is absent")
class EffectWithoutExecutionGuardedService(IdempotencyService):
    """An effect claimed without an execution id is guarded under an empty one, so a
    second send to the same target fails closed (409, or a replay) instead of going out."""

    def claim_effect(self, execution_id: str | None, effect_type: str,
                     identity: Mapping[str, str], content: JsonValue,
                     dedup_label: str | None) -> Claim:
        if execution_id is None and self._effects_fail_closed:
            # Refused as the shipped service refuses it once executions may be delivered
            # again (IK-018): the bug is the guard where the effect must go out.
            return super().claim_effect(None, effect_type, identity, content, dedup_label)
        return super().claim_effect(execution_id or "", effect_type, identity, content,
                                    dedup_label)


@entry("scheduler_key_per_attempt", "IK-009", "seed 002 §10.10: sched:{execution_id}")
class SchedulerKeyPerAttemptService(IdempotencyService):
    """The scheduler's key carries the send attempt, so a re-send after a 5xx is a new key
    and creates a second execution."""

    def __init__(self, store: MemoryKeyStore, clock: Clock, config: IdempotencyConfig) -> None:
        super().__init__(store, clock, config)
        self._sends: dict[str, int] = {}

    def scheduler_key(self, execution_id: str) -> str:
        self._sends[execution_id] = self._sends.get(execution_id, 0) + 1
        return f"sched:{execution_id}:{self._sends[execution_id]}"


@entry("absent_key_deduped", "IK-005", "seed 002 §10.10: absent key -> no dedup")
class AbsentKeyDedupedService(IdempotencyService):
    """A request without a key is stored under a placeholder key, so the second keyless
    call in a scope is refused or replayed instead of running."""

    def claim(self, scope: str, key: str | None, payload: JsonValue) -> Claim:
        return self._claim(scope, key or "none", self.fingerprint(payload))


@entry("webhook_key_from_token_only", "IK-008", "seed 002 §10.10: key from (token, body_hash)")
class WebhookKeyFromTokenOnlyService(IdempotencyService):
    """A webhook's derived key ignores the body: the next, different event from the same
    sender is refused as a mismatch."""

    def claim_webhook(self, token: str, body: str, key: str | None) -> Claim:
        return super().claim_webhook(token, body, key if key is not None else f"hook:{token}")


@entry("mcp_call_key_per_request", "IK-016",
       "seed 002 §10.10: MCP forwards a deterministic key over the call args")
class CallKeyPerRequestService(IdempotencyService):
    """The key an MCP tool call forwards is built from its JSON-RPC request id as well as
    its arguments: a transport retry is a new request with a new id, so it is a new key
    and starts the work a second time."""

    def __init__(self, store: MemoryKeyStore, clock: Clock, config: IdempotencyConfig) -> None:
        super().__init__(store, clock, config)
        self._requests = 0

    def claim_call(self, tool: str, arguments: JsonValue) -> Claim:
        self._requests += 1
        return self._claim(f"mcp:{tool}", f"call:{self._requests}:{key_digest([tool, arguments])}",
                           self.fingerprint(arguments))


@entry("failure_policy_ignored", "IK-013", "anchors: Brandur's design unlocks the key on failure")
class FailureAlwaysStoredService(IdempotencyService):
    """The failure policy is ignored: an error is always stored, so under a design that
    frees the key on failure, the client's retry gets the old error instead of a new run."""

    def __init__(self, store: MemoryKeyStore, clock: Clock, config: IdempotencyConfig) -> None:
        super().__init__(store, clock, config)
        self._release_failures = False


@entry("outcome_overwritten", "IK-003", "anchors: IETF draft, the stored result is returned")
class OutcomeOverwrittenStore(MemoryKeyStore):
    """Completion checks the holder but not that the work is still in flight: a second
    report of the same work (a retried callback) overwrites the stored outcome."""

    def complete(self, holder: str, outcome: Outcome, created_after: datetime) -> bool:
        self._faults.before_write()
        with self._lock:
            for place, entry in self._entries.items():
                if entry.holder == holder and entry.created_at > created_after:
                    self._entries[place] = replace(entry, outcome=outcome)
                    return True
            return False


class CheckThenInsertKeyStore(SqlKeyStore):
    """The claim reads the key and, finding none, inserts it ignoring a duplicate-key error
    (an INSERT ... ON CONFLICT DO NOTHING whose row count nobody checks): two callers that
    both read before either writes both start the work."""

    def insert_if_absent(self, entry: KeyEntry) -> KeyEntry | None:
        held = self.read(entry.scope, entry.key)
        if held is not None:
            return held
        try:
            with self._transaction() as connection:
                connection.execute(insert(KEYS).values(**entry_values(entry)))
        except IntegrityError:
            pass  # "someone inserted it meanwhile, fine"
        return None


@entry("idempotency_claim_fails_open", "IK-015",
       "seed 002 §10.10: claim before creating the execution; issue 18 (store faults)")
class ClaimFailsOpenService(IdempotencyService):
    """When the key store fails the insert of a claim, the claim answers started anyway, so
    that an outage of the store does not block the API: no key is held, and the next
    duplicate starts the work a second time."""

    def _claim(self, scope: str, key: str, fingerprint: str) -> Claim:
        try:
            return super()._claim(scope, key, fingerprint)
        except StoreUnavailable:
            return Claim(ClaimKind.STARTED, token=str(uuid.uuid4()))


@entry("idempotency_lost_completion_reported_stored", "IK-015",
       "anchors: IETF draft, the stored result is returned; issue 18")
class LostCompletionReportedStoredService(IdempotencyService):
    """A completion whose write the store refused answers stored: the caller moves on,
    the outcome is lost and the key stays in flight, so duplicates conflict until the lock
    goes stale and the work is then taken over and run again."""

    def complete(self, token: str, outcome: Outcome) -> bool:
        try:
            return super().complete(token, outcome)
        except StoreUnavailable:
            return True


@entry("effect_without_execution_fails_open_on_redelivery", "IK-018",
       "seed 002 §10.10.1: pull mode requires fail-closed-when-absent")
class EffectFailsOpenUnderRedeliveryService(IdempotencyService):
    """An effect without an execution id is always let through, as the guard did before
    pull mode: once executions may be re-delivered, a re-run of the same turn sends the
    message, places the call or settles the payment a second time."""

    def claim_effect(self, execution_id: str | None, effect_type: str,
                     identity: Mapping[str, str], content: JsonValue,
                     dedup_label: str | None) -> Claim:
        if execution_id is None:
            return Claim(ClaimKind.STARTED)
        return super().claim_effect(execution_id, effect_type, identity, content,
                                    dedup_label)


@entry("replay_audit_on_claim", "IK-017",
       "seed 002 §10.10: audit event idempotent_replay on every replay")
class ClaimAuditedService(IdempotencyService):
    """The audit event `idempotent_replay` is emitted where the key is looked up, for
    every claim that finds or takes it: the first, claiming call is logged as a replay too,
    and a duplicate storm's count is off by the originals."""

    def _claim(self, scope: str, key: str, fingerprint: str) -> Claim:
        claim = super()._claim(scope, key, fingerprint)
        if claim.kind is ClaimKind.STARTED and self.audit is not None and claim.token:
            self.audit.replayed(scope, key, claim.token)
        return claim

@entry("idempotency_ttl_in_whole_seconds", "IK-007",
       "issue 33: time finer than a second (a record's creation kept in whole seconds)")
class CreatedInWholeSecondsStore(MemoryKeyStore):
    """The store keeps a record's creation time in whole seconds, as an epoch-second column
    does: a key first claimed half a second into a second expires half a second early, so
    a duplicate a moment before the TTL starts the work again (issue 33: time finer than a
    second)."""

    def insert_if_absent(self, entry: KeyEntry) -> KeyEntry | None:
        return super().insert_if_absent(_created_in_whole_seconds(entry))

    def swap(self, expected: KeyEntry, new: KeyEntry) -> bool:
        return super().swap(expected, _created_in_whole_seconds(new))


def _created_in_whole_seconds(entry: KeyEntry) -> KeyEntry:
    return replace(entry, created_at=entry.created_at.replace(microsecond=0))
