"""The idempotency oracle (IK-001..IK-018): which answer a claim on (scope, key) gets.

A record per (scope, key) says whether the first caller is still working (in flight) or
has finished (completed, with its stored outcome). One pure function, `decide_claim`,
maps a record, the new payload's fingerprint and the time to an answer; the small
`IdempotencyOracle` keeps the records and applies completions, releases and purges.
Time always comes in as an argument. The key derivations (webhook, scheduler, effect)
are pure functions too, so the oracle and a runtime can be compared answer by answer.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from enum import StrEnum

from jobconform.reference.commands import Outcome, Raise
from jobconform.reference.lifecycle import JsonValue

CONFLICT_STATUS = 409
# The answer to a call whose store write failed (IK-015): the caller gets an error (a
# router answers 503) and the runtime holds nothing of the call.
UNAVAILABLE = "unavailable"
# Stripe's limit, kept so that keys fit a primary key on every database.
MAX_KEY_LENGTH = 255
# What completing a claim with an error does: store it for replay, or free the key.
FAILURE_POLICIES = ("store", "release")
# Whether the runtime may deliver an execution more than once (pull mode, a lease that
# lapses): where it may, an effect claimed without an execution id fails closed (IK-018).
REDELIVERY_MODES = ("disabled", "enabled")
# The status of an effect refused for want of an execution id: the IETF draft answers a
# request missing a required key with 400.
MISSING_EXECUTION_STATUS = 400


class ClaimKind(StrEnum):
    STARTED = "started"  # the caller does the work
    CONFLICT = "conflict"  # the first caller is still working
    REPLAY = "replay"  # the stored outcome, again
    MISMATCH = "mismatch"  # the same key with another payload
    REFUSED = "refused"  # an effect without an execution id, once re-delivery is on


@dataclass(frozen=True)
class IdempotencyConfig:
    """The area's parameters, as a profile sets them or a check overrides them."""

    ttl_seconds: float
    mismatch_status: int
    stale_lock_timeout_seconds: float
    failure_policy: str = "store"  # or "release" (IK-013)
    redelivery: str = "disabled"  # or "enabled": effects fail closed (IK-018)

    def __post_init__(self) -> None:
        if self.redelivery not in REDELIVERY_MODES:
            raise ValueError(f"redelivery is one of {', '.join(REDELIVERY_MODES)}, not"
                             f" {self.redelivery!r}")
        if self.failure_policy not in FAILURE_POLICIES:
            raise ValueError(f"failure_policy is one of {', '.join(FAILURE_POLICIES)}, not"
                             f" {self.failure_policy!r}")
        if not 0 < self.ttl_seconds < float("inf"):
            raise ValueError(f"ttl_seconds must be finite and > 0, not {self.ttl_seconds!r}")
        if not 0 <= self.stale_lock_timeout_seconds < float("inf"):
            raise ValueError("stale_lock_timeout_seconds must be finite and >= 0, not"
                             f" {self.stale_lock_timeout_seconds!r}")
        if not 400 <= self.mismatch_status <= 499:
            raise ValueError("mismatch_status is an HTTP client error status (422 in the"
                             f" IETF draft, 409 elsewhere), not {self.mismatch_status!r}")


@dataclass(frozen=True)
class KeyRecord:
    """What a runtime keeps for one (scope, key)."""

    fingerprint: str
    holder: str  # the claim token of the claim that started the work last
    created_at: datetime  # the first claim: the TTL counts from here
    claimed_at: datetime  # the holder's claim: staleness counts from here
    outcome: Outcome | None = None  # None while in flight

    @property
    def in_flight(self) -> bool:
        return self.outcome is None


@dataclass(frozen=True)
class ClaimAnswer:
    """A claim's answer in the oracle's terms; `original` names the claim that started the
    work whose outcome is replayed."""

    kind: ClaimKind
    status: int | None = None
    original: str | None = None
    outcome: Outcome | None = None


@dataclass(frozen=True)
class Decision:
    answer: ClaimAnswer
    record: KeyRecord | None  # the record after the claim
    requirements: tuple[str, ...]  # the IDs that decided the answer


# -- derivations -----------------------------------------------------------------------


def canonical_json(value: object) -> str:
    """One text per JSON value: object members sorted, no spaces."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def payload_fingerprint(payload: JsonValue) -> str:
    """Equal JSON values, members in any order, have one fingerprint (IK-006)."""
    return sha256_hex(canonical_json(payload))


def webhook_scope(token: str) -> str:
    return f"webhook:{token}"


def webhook_key(token: str, body: str) -> str:
    """The key of a webhook delivery that carries none (IK-008)."""
    return f"derived:{sha256_hex(canonical_json([token, sha256_hex(body)]))}"


def call_scope(tool: str) -> str:
    return f"mcp:{tool}"


def call_key(tool: str, arguments: JsonValue) -> str:
    """The key an MCP tool call forwards (IK-016): the tool and its arguments as one JSON
    value, so a transport retry of the same call (its members in any order) is the same
    key, and other arguments another."""
    return f"call:{sha256_hex(canonical_json([tool, arguments]))}"


def scheduler_key(execution_id: str) -> str:
    """The scheduler's deterministic key (IK-009)."""
    return f"sched:{execution_id}"


def effect_scope(execution_id: str) -> str:
    return f"effect:{execution_id}"


def effect_key(execution_id: str, effect_type: str, identity: Mapping[str, str],
               dedup_label: str | None) -> str:
    """The key of an outbound effect: resolved identity only, never content (IK-011).

    The parts are encoded as one JSON array, so no separator inside a part can make two
    different effects collide; the identity is sorted, so its order does not matter.
    """
    parts = [execution_id, effect_type, sorted(identity.items()), dedup_label]
    return f"{effect_type}:{sha256_hex(canonical_json(parts))}"


# -- the decision ------------------------------------------------------------------------


def is_expired(record: KeyRecord, now: datetime, config: IdempotencyConfig) -> bool:
    """At least ttl_seconds old: removable, and no longer de-duplicating (IK-007)."""
    return now - record.created_at >= timedelta(seconds=config.ttl_seconds)


def is_stale(record: KeyRecord, now: datetime, config: IdempotencyConfig) -> bool:
    """In flight for strictly more than the stale-lock timeout (IK-010)."""
    return record.in_flight and (
        now - record.claimed_at > timedelta(seconds=config.stale_lock_timeout_seconds))


def decide_claim(record: KeyRecord | None, fingerprint: str, token: str, now: datetime,
                 config: IdempotencyConfig) -> Decision:
    """The answer to a claim of one (scope, key) and the record it leaves.

    The order matters: an expired record counts as none; a payload mismatch wins over
    every state; a stale lock is taken over; otherwise in flight is a conflict and
    completed is a replay.
    """
    started = ClaimAnswer(ClaimKind.STARTED)
    if record is None:
        return Decision(started, KeyRecord(fingerprint, token, now, now), ("IK-001",))
    if is_expired(record, now, config):
        return Decision(started, KeyRecord(fingerprint, token, now, now), ("IK-007", "IK-001"))
    if record.fingerprint != fingerprint:
        return Decision(ClaimAnswer(ClaimKind.MISMATCH, config.mismatch_status), record,
                        ("IK-006",))
    if is_stale(record, now, config):
        return Decision(started, replace(record, holder=token, claimed_at=now),
                        ("IK-010", "IK-001"))
    if record.in_flight:
        return Decision(ClaimAnswer(ClaimKind.CONFLICT, CONFLICT_STATUS), record,
                        ("IK-002", "IK-010"))
    return Decision(ClaimAnswer(ClaimKind.REPLAY, None, record.holder, record.outcome), record,
                    ("IK-003",))


def decide_effect_without_execution(config: IdempotencyConfig) -> Decision:
    """An effect claimed with no execution id: nothing to scope a key to, so it is not
    guarded (IK-014), unless executions may be re-delivered, where performing it unguarded
    could repeat it, so it is refused and not performed (IK-018). Nothing is recorded."""
    if config.redelivery == "enabled":
        return Decision(ClaimAnswer(ClaimKind.REFUSED, MISSING_EXECUTION_STATUS), None,
                        ("IK-018", "IK-014"))
    return Decision(ClaimAnswer(ClaimKind.STARTED), None, ("IK-014", "IK-018"))


class IdempotencyOracle:
    """The records of one runtime, changed only through the area's operations.

    Claim tokens are chosen by the caller (the harness uses its own handle names), so
    that answers can be compared with a runtime's whatever tokens the runtime makes.
    """

    def __init__(self, config: IdempotencyConfig) -> None:
        self.config = config
        self.records: dict[tuple[str, str], KeyRecord] = {}
        # Keys whose record a release or a purge removed, and the requirement that removed
        # it: the next claim of such a key starts because of that requirement.
        self.freed: dict[tuple[str, str], str] = {}
        # The same, by the claim that held the record: a completion or release of that
        # claim is refused because of that requirement.
        self.freed_claims: dict[str, str] = {}
        # Records a release or the failure policy removed, in the order removed, with the
        # requirement: a runtime that kept one purges it later (see `purge_suspects`).
        self.removed: dict[tuple[str, str], tuple[str, KeyRecord]] = {}
        # The audit events `idempotent_replay` (IK-017): (scope, key, the original claim's
        # token) for every replay, in order; a start, a conflict or a mismatch adds none.
        self.replays: list[tuple[str, str, str]] = []

    def claim(self, scope: str, key: str | None, payload: JsonValue, token: str,
              now: datetime) -> Decision:
        if key is None:
            return Decision(ClaimAnswer(ClaimKind.STARTED), None, ("IK-005",))
        place = (scope, key)
        decision = decide_claim(self.records.get(place), payload_fingerprint(payload),
                                token, now, self.config)
        freed_by = self.freed.pop(place, None)
        self.removed.pop(place, None)
        if freed_by is not None:
            decision = replace(decision, requirements=(freed_by, *decision.requirements))
        if decision.record is not None:
            self.records[place] = decision.record
        if decision.answer.kind is ClaimKind.REPLAY and decision.answer.original is not None:
            self.replays.append((scope, key, decision.answer.original))
        return decision

    def _held_by(self, token: str, now: datetime) -> tuple[str, str] | None:
        """The live in-flight record `token` holds, if any."""
        for place, record in self.records.items():
            if record.holder == token and record.in_flight:
                return None if is_expired(record, now, self.config) else place
        return None

    def complete(self, token: str, outcome: Outcome, now: datetime) -> bool:
        place = self._held_by(token, now)
        if place is None:
            return False
        if isinstance(outcome, Raise) and self.config.failure_policy == "release":
            self._remove(place, "IK-013")
            return True
        self.records[place] = replace(self.records[place], outcome=outcome)
        return True

    def release(self, token: str, now: datetime) -> bool:
        place = self._held_by(token, now)
        if place is None:
            return False
        self._remove(place, "IK-004")
        return True

    def _remove(self, place: tuple[str, str], requirement: str) -> None:
        record = self.records.pop(place)
        self.freed[place] = requirement
        self.freed_claims[record.holder] = requirement
        self.removed.pop(place, None)
        self.removed[place] = (requirement, record)

    def purge(self, now: datetime) -> int:
        expired = [place for place, record in self.records.items()
                   if is_expired(record, now, self.config)]
        for place in expired:
            self.freed_claims[self.records.pop(place).holder] = "IK-007"
            self.freed[place] = "IK-007"
        return len(expired)

    def purge_suspects(self, now: datetime) -> tuple[str, ...]:
        """The requirements that removed records a purge now would find expired, the most
        recent first: a runtime purging more than the oracle kept one of them."""
        suspects = [requirement for requirement, record in reversed(self.removed.values())
                    if is_expired(record, now, self.config)]
        return tuple(dict.fromkeys(suspects))
