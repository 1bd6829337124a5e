"""The job lifecycle as an explicit transition table and one pure step function.

Requirements: LC-001 (five states), LC-002 (legal transitions), LC-003 (terminal states
absorb), LC-004 (timestamps set at transitions).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from enum import StrEnum
from typing import TypeAlias

JsonValue: TypeAlias = bool | int | float | str | list["JsonValue"] | dict[str, "JsonValue"] | None


class Status(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL


TERMINAL = frozenset({Status.SUCCEEDED, Status.FAILED, Status.CANCELLED})
ACTIVE = frozenset({Status.QUEUED, Status.RUNNING})


class EventKind(StrEnum):
    START = "start"  # a worker picks the job up
    SUCCEED = "succeed"  # the body returned
    FAIL = "fail"  # the body raised
    CANCEL = "cancel"  # cancelled directly (queued) or by its owner (running)
    RETRY = "retry"  # the body raised and the retry policy allows another attempt (RT-003)
    REDELIVER = "redeliver"  # the job's lease expired under the re-delivery cap (RD-001)


TRANSITIONS: Mapping[tuple[Status, EventKind], Status] = {
    (Status.QUEUED, EventKind.START): Status.RUNNING,
    (Status.QUEUED, EventKind.CANCEL): Status.CANCELLED,
    (Status.RUNNING, EventKind.SUCCEED): Status.SUCCEEDED,
    (Status.RUNNING, EventKind.FAIL): Status.FAILED,
    (Status.RUNNING, EventKind.CANCEL): Status.CANCELLED,
    (Status.RUNNING, EventKind.RETRY): Status.QUEUED,
    (Status.RUNNING, EventKind.REDELIVER): Status.QUEUED,
}


class IllegalTransition(ValueError):
    """An event that the transition table does not allow in the job's current state."""

    def __init__(self, status: Status, kind: EventKind) -> None:
        allowed = sorted(k.value for (s, k) in TRANSITIONS if s is status)
        super().__init__(
            f"event {kind.value!r} is not allowed in state {status.value!r}"
            f" (allowed: {', '.join(allowed) or 'none, the state is terminal'})"
        )
        self.status = status
        self.kind = kind


@dataclass(frozen=True)
class Event:
    kind: EventKind
    at: datetime
    result: JsonValue = None
    error: str | None = None
    retry_at: datetime | None = None  # RETRY only: when the next attempt may start


@dataclass(frozen=True)
class JobState:
    """One job's record as the spec defines it (LC-004)."""

    status: Status
    submitted_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: JsonValue = None
    error: str | None = None
    retry_count: int = 0  # RT-008
    max_retries: int = 0
    next_attempt_at: datetime | None = None  # set while the job waits in backoff
    last_heartbeat: datetime | None = None  # ST-001: the start, then each heartbeat
    redelivery_count: int = 0  # RD-001, RD-004: lease expiries so far, never reset
    alerted: bool = False  # RD-003: an operator alert was raised for this job
    poisoned: bool = False  # RD-003: parked as poison at the re-delivery cap
    owner: str | None = None  # LC-033: who the job runs for, as submitted
    trigger: str | None = None  # LC-033: what started it, as submitted
    options: JsonValue = None  # LC-035: its execution options, as submitted


def new_job(submitted_at: datetime, max_retries: int = 0, owner: str | None = None,
            trigger: str | None = None, options: JsonValue = None) -> JobState:
    return JobState(status=Status.QUEUED, submitted_at=submitted_at, max_retries=max_retries,
                    owner=owner, trigger=trigger, options=options)


def step(job: JobState, event: Event) -> JobState:
    """Apply one event to a job.

    Raises:
        IllegalTransition: the table has no entry for (job.status, event.kind).
    """
    target = TRANSITIONS.get((job.status, event.kind))
    if target is None:
        raise IllegalTransition(job.status, event.kind)
    if target is Status.RUNNING:
        return replace(job, status=target, started_at=event.at, last_heartbeat=event.at)
    if event.kind is EventKind.REDELIVER:
        return replace(job, status=target, redelivery_count=job.redelivery_count + 1)
    if target is Status.QUEUED:
        return replace(job, status=target, retry_count=job.retry_count + 1,
                       next_attempt_at=event.retry_at)
    return replace(
        job,
        status=target,
        finished_at=event.at,
        result=event.result if target is Status.SUCCEEDED else None,
        error=event.error if target is Status.FAILED else None,
    )


# LC-038: every answer about the held jobs holds however many are held. The checks hold
# at least VOLUME jobs (the requirement's parameter); a listing that drops jobs once it
# holds CUT_FLOOR or more, every job before the cut right, was cut at a page or a limit.
VOLUME = 300
CUT_FLOOR = 100


def cut_short(expected: list[str], actual: list[str]) -> bool:
    """Whether `actual` is `expected` cut at a page: its first jobs, CUT_FLOOR or more,
    and none of the rest (LC-038)."""
    return CUT_FLOOR <= len(actual) < len(expected) and actual == expected[:len(actual)]


# LC-039: an error or a result comes back whole whatever its length. The checks use texts
# of LONG_TEXT characters, past the 65 535 bytes of a MySQL TEXT column; a text cut short
# from LONG_CUT_FLOOR characters on was cut to a column's width or a store's limit.
LONG_TEXT = 70_000
LONG_CUT_FLOOR = 200
_LONG_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def long_text(length: int) -> str:
    """A text of `length` characters, the same for a length every time: runs of the
    alphabet, each ending in its own count, so a text cut or spliced anywhere differs."""
    if length < 0:
        raise ValueError(f"a text has 0 characters or more, not {length}")
    parts: list[str] = []
    total = 0
    run = 0
    while total < length:
        run += 1
        part = f"{_LONG_ALPHABET}#{run};"
        parts.append(part)
        total += len(part)
    return "".join(parts)[:length]


def cut_text(expected: object, actual: object) -> bool:
    """Whether `actual` is the text `expected` cut short, LONG_CUT_FLOOR characters or
    more kept (LC-039)."""
    return (isinstance(expected, str) and isinstance(actual, str)
            and LONG_CUT_FLOOR <= len(actual) < len(expected)
            and expected.startswith(actual))


STUCK_ERROR = "Heartbeat timeout — job stuck"  # seed 000's wording (ST-002)
POISON_ERROR = "poison_lease: re-delivery cap reached"  # seed 002's poison tag (RD-003)


def error_message(error_type: str, message: str) -> str:
    """The recorded form of a body's exception (LC-007)."""
    return f"{error_type}: {message}"


# Module ids (LC-027): dot-separated segments, each a lowercase letter then lowercase
# letters, digits or underscores ("data.process_batch"); the seed names the errors, the
# format is the kit's choice.
MODULE_ID_MAX_LENGTH = 128
_MODULE_ID = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*")

# How a submission's module id is refused (LC-027), or None if it is accepted.
INVALID_MODULE_ID = "invalid module id"
MODULE_NOT_FOUND = "module not found"


def module_id_problem(module_id: str, known: Collection[str]) -> str | None:
    """Why a submission naming `module_id` is refused: INVALID_MODULE_ID for a malformed
    id, MODULE_NOT_FOUND for a well-formed one not in `known`, None if it is accepted."""
    if len(module_id) > MODULE_ID_MAX_LENGTH or not _MODULE_ID.fullmatch(module_id):
        return INVALID_MODULE_ID
    if module_id not in known:
        return MODULE_NOT_FOUND
    return None


def arguments_text(arguments: JsonValue) -> str:
    """A job's arguments as one canonical JSON text (LC-036): two values are the same
    arguments exactly when their texts are equal. Types stay apart (1, 1.0 and true
    differ, as do -0.0 and 0.0), strings compare code point by code point, and an
    object's keys may come back in any order, as JSON objects have none.

    Raises:
        ValueError, TypeError: the value is not JSON (NaN, an infinity, a non-string key,
            an object of another type).
    """
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, allow_nan=False)
