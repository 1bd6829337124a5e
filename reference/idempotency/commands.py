"""The idempotency area's commands: plain data every front-end speaks.

Claims are named by handles the check picks ("c1", "first"): the harness maps each
runtime's claim tokens to these handles, and the oracle uses the handles as its tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from jobconform.reference.commands import (
    AdvanceTime,
    Outcome,
    Raise,
    Succeed,
    fields_given,
    written,
)
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.lifecycle import JsonValue


@dataclass(frozen=True)
class ClaimKey:
    """A trigger claims `key` in `scope` for a request with `payload` (None: no key)."""

    handle: str
    scope: str
    key: str | None
    payload: JsonValue = None


@dataclass(frozen=True)
class ClaimWebhook:
    """A webhook delivery with this token and body, with or without a key (IK-008)."""

    handle: str
    token: str
    body: str
    key: str | None = None


@dataclass(frozen=True)
class ClaimCall:
    """An MCP tool call (chat_with_agent, fan_out) forwarded without a key of its own: the
    runtime derives the key from the tool and its arguments (IK-016)."""

    handle: str
    tool: str
    arguments: JsonValue  # a JSON object: the call's arguments


@dataclass(frozen=True)
class ClaimEffect:
    """An execution claims an outbound effect before performing it (IK-011, IK-012)."""

    handle: str
    execution_id: str | None  # None: the guard fails open (IK-014)
    effect_type: str
    identity: tuple[tuple[str, str], ...]
    content: JsonValue = None
    dedup_label: str | None = None


@dataclass(frozen=True)
class CompleteClaim:
    """The work the claim started ends with this outcome."""

    handle: str
    outcome: Outcome


@dataclass(frozen=True)
class ReleaseClaim:
    """The work was refused before it started (at capacity): give the key back."""

    handle: str


@dataclass(frozen=True)
class PurgeKeys:
    """One retention sweep of the key records (IK-007)."""


@dataclass(frozen=True)
class AskSchedulerKey:
    """Which key does the scheduler send for this execution (IK-009)?"""

    execution_id: str


@dataclass(frozen=True)
class IdempotencyStoreFault:
    """Run `command` while the key store's `fault.write`-th write during it fails (IK-015).

    Only `fail`: the runtime keeps nothing outside its store, so a crash at a write is a
    failed write whose answer no caller receives.

    Raises:
        ValueError: a crash was planned.
    """

    fault: StoreFault
    command: (ClaimKey | ClaimWebhook | ClaimCall | ClaimEffect | CompleteClaim | ReleaseClaim
              | PurgeKeys)

    def __post_init__(self) -> None:
        if self.fault.kind is not FaultKind.FAIL:
            raise ValueError("the idempotency keys take failed writes only, not"
                             f" {self.fault.kind.value}")


IdempotencyCommand: TypeAlias = (
    ClaimKey | ClaimWebhook | ClaimCall | ClaimEffect | CompleteClaim | ReleaseClaim
    | PurgeKeys | AskSchedulerKey | AdvanceTime | IdempotencyStoreFault
)
CLAIM_COMMANDS = (ClaimKey, ClaimWebhook, ClaimCall, ClaimEffect)


def describe_outcome(outcome: Outcome | None) -> str:
    if isinstance(outcome, Succeed):
        return f"returns {outcome.result!r}"
    if isinstance(outcome, Raise):
        return f"raises {outcome.error_type}({outcome.message!r})"
    return "none"


def describe_idempotency(command: IdempotencyCommand) -> str:
    """One readable line per command, for failure messages."""
    if isinstance(command, IdempotencyStoreFault):
        return f"{describe_idempotency(command.command)} while {command.fault.describe()}"
    if isinstance(command, CompleteClaim):
        return f"CompleteClaim({command.handle!r}, {describe_outcome(command.outcome)})"
    return written(command, fields_given(command, always=("key",)))
