"""The values of the process protocol and their JSON forms, shared by both sides.

Everything that crosses the pipe is one JSON object per line. This module turns the
kit's values (timestamps, settings, retry policies, task outcomes, job records, health)
into their JSON forms and back. It does no I/O and never reads a clock: the parent sends
its virtual clock's reading with every request, and the child keeps only that.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jobconform.backends.protocol import HealthView, JobView, RuntimeSettings
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.commands import Outcome, Raise, Succeed
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.model import Health

# The major version of the protocol. A change that an existing child could misread
# increments it. The kit offers the newest version first and falls back to the older one
# when the child refuses it (docs/process-protocol.md, the handshake).
PROTOCOL_VERSION = 2
SUPPORTED_VERSIONS = (2, 1)
# Version 1 is the hand-written protocol of the job runtime's calls (this module's
# operations below); version 2 carries every area's interface generically
# (interfaces.py, codec.py).
V1 = 1
# The areas whose calls and record fields version 1 carries. A version-1 child wrapping
# a runtime that claims more claims only these: an area the pipe cannot carry must show
# as "not claimed", never as failed or passed.
PROTOCOL_AREAS = frozenset({"lifecycle", "retry", "stuck"})

# Operations on an open runtime (each request names one); `hello`, `open` and `goodbye`
# are the session's own.
RUNTIME_OPERATIONS = (
    "submit", "dispatch", "settle", "cancel", "get", "get_result", "list_jobs", "cleanup",
    "shutdown", "health", "close", "compute_delay_ms", "heartbeat", "detect_stuck",
)
SESSION_OPERATIONS = ("hello", "open", "goodbye")
OPERATIONS = SESSION_OPERATIONS + RUNTIME_OPERATIONS

# The structured errors a child may answer with, and the operations each one fits. Any
# other failure of the child is an `InternalError`; a request the child cannot
# understand is answered with a `ProtocolError`.
ALLOWED_ERRORS: dict[str, frozenset[str]] = {
    "CapacityExceeded": frozenset({"submit"}),
    "RuntimeShutDown": frozenset({"submit"}),
    "JobNotFound": frozenset({"get_result"}),
    "JobNotCompleted": frozenset({"get_result"}),
    "ProtocolError": frozenset(OPERATIONS),
    "InternalError": frozenset(OPERATIONS),
}

JOB_FIELDS = ("job_id", "status", "submitted_at", "started_at", "finished_at", "result",
              "error")
RETRY_FIELDS = ("retry_count", "max_retries")
STUCK_FIELDS = ("last_heartbeat",)
HEALTH_FIELDS = ("queued", "running", "total", "processed", "failed", "cancelled")
TIMESTAMP_FIELDS = ("submitted_at", "started_at", "finished_at", "last_heartbeat")


class WireError(ValueError):
    """A JSON value does not have the form the protocol gives it."""


# -- answers, checked without the schemas ------------------------------------------------------


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_versions(value: object) -> bool:
    """A hello's `libraries`: each library the child wraps, by name, with its version."""
    return isinstance(value, dict) and all(
        isinstance(name, str) and isinstance(version, str) for name, version in value.items())


def _is_count(value: object) -> bool:
    return _is_int(value) and value >= 0  # type: ignore[operator]


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_job(value: object) -> bool:
    return isinstance(value, dict)  # its fields are checked by decode_job


# What each operation's result must be. The schemas say the same in full; this cheap check
# runs on every answer, the schemas when validation is switched on (tests, child authors).
RESULT_CHECKS: dict[str, tuple[str, Any]] = {
    "hello": ("an object with protocol, name, profile and capabilities (and libraries,"
              " an object of version strings, if given)",
              lambda r: isinstance(r, dict) and _is_int(r.get("protocol"))
              and isinstance(r.get("name"), str) and isinstance(r.get("profile"), str)
              and isinstance(r.get("capabilities"), list)
              and all(isinstance(c, str) for c in r["capabilities"])
              and _is_versions(r.get("libraries", {}))),
    "open": ("an object with a runtime handle",
             lambda r: isinstance(r, dict) and isinstance(r.get("runtime"), str)
             and bool(r["runtime"])),
    "submit": ("an object with a job_id",
               lambda r: isinstance(r, dict) and isinstance(r.get("job_id"), str)
               and bool(r["job_id"])),
    "cancel": ("true or false", lambda r: isinstance(r, bool)),
    "get": ("a job record or null", lambda r: r is None or _is_job(r)),
    "get_result": ("any JSON value", lambda r: True),
    "list_jobs": ("an array of job records",
                  lambda r: isinstance(r, list) and all(_is_job(j) for j in r)),
    "cleanup": ("a count (integer >= 0)", _is_count),
    "detect_stuck": ("a count (integer >= 0)", _is_count),
    "health": ("an object of six counts",
               lambda r: isinstance(r, dict) and set(r) == set(HEALTH_FIELDS)
               and all(_is_count(v) for v in r.values())),
    "compute_delay_ms": ("a number of milliseconds >= 0",
                         lambda r: _is_number(r) and r >= 0),
}


def answer_problem(message: dict[str, Any], operation: str) -> str | None:
    """Why `message` is not an answer to `operation` (the envelope and the result's form),
    or None when it is one."""
    ok = message.get("ok")
    if not isinstance(ok, bool):
        return "'ok' must be true or false"
    next_attempt = message.get("next_attempt", [])
    if not isinstance(next_attempt, list) or not all(isinstance(j, str) for j in next_attempt):
        return "'next_attempt' must be an array of job ids"
    if not ok:
        error = message.get("error")
        if not isinstance(error, dict) or error.get("type") not in ALLOWED_ERRORS or (
                not isinstance(error.get("message"), str)):
            return (f"'error' must be an object with a type (one of {sorted(ALLOWED_ERRORS)})"
                    " and a message")
        if error["type"] == "JobNotCompleted" and not isinstance(error.get("status"), str):
            return "a JobNotCompleted error names the job's status"
        return None
    if "result" not in message:
        return "an ok answer has a 'result'"
    wanted, check = RESULT_CHECKS.get(operation, ("null", lambda r: r is None))
    if not check(message["result"]):
        return f"the result of {operation} must be {wanted}, not {message['result']!r}"
    return None


# -- lines -------------------------------------------------------------------------------


def encode_line(message: dict[str, Any]) -> str:
    """One message as one line of compact JSON (no NaN or Infinity: they are not JSON).

    Raises:
        WireError: the message holds something JSON cannot carry.
    """
    try:
        return json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n"
    except (TypeError, ValueError) as error:
        raise WireError(f"cannot send {message.get('op', 'a message')!r} as JSON: {error}"
                        ) from None


def decode_line(line: str) -> dict[str, Any]:
    """The JSON object on one line.

    Raises:
        WireError: the line is not one JSON object.
    """
    try:
        message = json.loads(line, parse_constant=_no_constant)
    except ValueError as error:
        raise WireError(f"not a JSON line ({error}): {_clip(line)}") from None
    if not isinstance(message, dict):
        raise WireError(f"a message is a JSON object, not {_clip(line)}")
    return message


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def _clip(line: str, limit: int = 200) -> str:
    text = line.rstrip("\n")
    return repr(text if len(text) <= limit else text[:limit] + "…")


# -- timestamps ----------------------------------------------------------------------------


def encode_timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC with microseconds and a `Z`: `2026-01-01T00:00:05.000000Z`.

    Raises:
        WireError: the datetime is naive; the kit's clock never is.
    """
    if moment.tzinfo is None:
        raise WireError(f"a naive datetime has no UTC reading: {moment!r}")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def decode_timestamp(text: object) -> datetime:
    """A timestamp exactly as written: its offset is kept, a missing one stays missing.

    The child's observations are judged by the suites (LC-004, LC-005), so a wrong
    offset must reach them intact rather than be corrected here.

    Raises:
        WireError: not an ISO 8601 date-time string.
    """
    if not isinstance(text, str):
        raise WireError(f"a timestamp is an ISO 8601 string, not {text!r}")
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise WireError(f"not an ISO 8601 timestamp: {text!r}") from None


def decode_optional_timestamp(text: object) -> datetime | None:
    return None if text is None else decode_timestamp(text)


# -- settings, policies, outcomes ------------------------------------------------------------


def encode_settings(settings: RuntimeSettings) -> dict[str, Any]:
    return {"max_concurrent": settings.max_concurrent, "max_tasks": settings.max_tasks}


def decode_settings(document: dict[str, Any]) -> RuntimeSettings:
    return RuntimeSettings(max_concurrent=int(document["max_concurrent"]),
                           max_tasks=document["max_tasks"])


def encode_policy(policy: RetryPolicy) -> dict[str, Any]:
    return {
        "max_retries": policy.max_retries,
        "retry_delay_ms": policy.retry_delay_ms,
        "backoff_multiplier": policy.backoff_multiplier,
        "max_retry_delay_ms": policy.max_retry_delay_ms,
        "non_retryable": list(policy.non_retryable),
    }


def decode_policy(document: dict[str, Any]) -> RetryPolicy:
    """Raises: WireError when the values do not make a valid policy."""
    try:
        return RetryPolicy(
            max_retries=int(document["max_retries"]),
            retry_delay_ms=float(document["retry_delay_ms"]),
            backoff_multiplier=float(document["backoff_multiplier"]),
            max_retry_delay_ms=float(document["max_retry_delay_ms"]),
            non_retryable=tuple(str(name) for name in document["non_retryable"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise WireError(f"not a retry policy: {error}") from None


def encode_jitter(jitter: Jitter) -> str:
    return jitter.value


def decode_jitter(text: str) -> Jitter:
    try:
        return Jitter(text)
    except ValueError:
        raise WireError(f"unknown jitter {text!r}; one of {[j.value for j in Jitter]}"
                        ) from None


def encode_outcome(outcome: Outcome) -> dict[str, Any]:
    """How a decided body ends, as the protocol carries it: the value it returns, or the
    exception's type name, message and retry-after (RT-010)."""
    if isinstance(outcome, Raise):
        return {"kind": "raises", "error_type": outcome.error_type, "message": outcome.message,
                "retry_after_ms": outcome.retry_after_ms}
    return {"kind": "returns", "result": outcome.result}


def decode_outcome(document: dict[str, Any]) -> Outcome:
    """The outcome a task body must reproduce in the child."""
    if document.get("kind") == "returns":
        result: JsonValue = document.get("result")
        return Succeed(result)
    if document.get("kind") == "raises":
        retry_after = document.get("retry_after_ms")
        return Raise(str(document["error_type"]), str(document["message"]),
                     None if retry_after is None else float(retry_after))
    raise WireError(f"an outcome's kind is 'returns' or 'raises', not {document.get('kind')!r}")


# -- observations --------------------------------------------------------------------------


def encode_job(view: JobView, with_retry: bool, with_stuck: bool) -> dict[str, Any]:
    """A job record as the child reports it; area fields only for the areas it claims."""
    document: dict[str, Any] = {"job_id": view.job_id, "status": view.status,
                                "result": view.result, "error": view.error}
    names = ["submitted_at", "started_at", "finished_at"]
    if with_retry:
        document.update({name: getattr(view, name) for name in RETRY_FIELDS})
    if with_stuck:
        names.append("last_heartbeat")
    for name in names:
        value = getattr(view, name)
        document[name] = None if value is None else encode_timestamp(value)
    return document


@dataclass(frozen=True)
class JobRecord:
    """A job record received from a child: always a fresh snapshot (LC-016).

    The area fields are None unless the child claims their area.
    """

    job_id: str
    status: str
    submitted_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    result: JsonValue
    error: str | None
    retry_count: int | None = None
    max_retries: int | None = None
    last_heartbeat: datetime | None = None


def decode_job(document: dict[str, Any], with_retry: bool, with_stuck: bool) -> JobRecord:
    """Raises: WireError when a field the child's claims need is missing or mistyped."""
    wanted = JOB_FIELDS + (RETRY_FIELDS if with_retry else ()) + (
        STUCK_FIELDS if with_stuck else ())
    missing = [name for name in wanted if name not in document]
    if missing:
        raise WireError(f"job record lacks {', '.join(missing)} (the child's claims need"
                        f" them): {document!r}")
    mistyped = [name for name, ok in (
        ("job_id", isinstance(document["job_id"], str)),
        ("status", isinstance(document["status"], str)),
        ("error", document["error"] is None or isinstance(document["error"], str)),
        ("retry_count", not with_retry or _is_count(document["retry_count"])),
        ("max_retries", not with_retry or _is_count(document["max_retries"])),
    ) if not ok]
    if mistyped:
        raise WireError(f"job record has a mistyped {', '.join(mistyped)}: {document!r}")
    return JobRecord(
        job_id=str(document["job_id"]),
        status=str(document["status"]),
        submitted_at=decode_timestamp(document["submitted_at"]),
        started_at=decode_optional_timestamp(document["started_at"]),
        finished_at=decode_optional_timestamp(document["finished_at"]),
        result=document["result"],
        error=document["error"],
        retry_count=document["retry_count"] if with_retry else None,
        max_retries=document["max_retries"] if with_retry else None,
        last_heartbeat=(decode_optional_timestamp(document["last_heartbeat"]) if with_stuck
                        else None),
    )


def encode_health(view: HealthView) -> dict[str, int]:
    return {name: int(getattr(view, name)) for name in HEALTH_FIELDS}


def decode_health(document: dict[str, Any]) -> Health:
    return Health(**{name: document[name] for name in HEALTH_FIELDS})


def encode_delay(delay: float) -> float:
    """Raises: WireError for a delay JSON cannot carry (NaN, infinity)."""
    if not math.isfinite(delay):
        raise WireError(f"a delay is a finite number of milliseconds, not {delay!r}")
    return float(delay)
