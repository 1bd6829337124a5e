"""The admission runtimes' own terms: states, setting ranges and refusal documents
(AD-001..AD-019), written from the spec apart from the oracle's `reference.admission`.

The refusals are the answers the harness compares field by field, so the runtimes build
them here, not with the oracle's functions.
"""

from __future__ import annotations

from jobconform.reference.lifecycle import JsonValue

# The bounds each setting must lie within, both included.
CEILING_RANGE = (1, 32)
BACKLOG_DEPTH_RANGE = (1, 200)
TIMEOUT_RANGE = (60, 7200)
# A running execution's slot is reclaimed this long after its timeout (AD-017).
LEASE_BUFFER_SECONDS = 300

# An execution's states.
QUEUED, RUNNING = "queued", "running"
FINISHED, CANCELLED, EXPIRED = "finished", "cancelled", "expired"
BUDGET_EXHAUSTED, TIMED_OUT, LEASE_EXPIRED = "budget_exhausted", "timed_out", "lease_expired"
ENDED_STATES = frozenset({FINISHED, CANCELLED, EXPIRED, BUDGET_EXHAUSTED, TIMED_OUT,
                          LEASE_EXPIRED})
# A call's states.
CALL_IN_FLIGHT, CALL_WAITING, CALL_ENDED = "in_flight", "waiting", "ended"
CALL_WITHDRAWN, CALL_REFUSED = "withdrawn", "budget_exhausted"


def refusal(error: str, **details: JsonValue) -> dict[str, JsonValue]:
    """A refusal document: its error code first, then what the caller needs to act on it."""
    return {"error": error, **details}


def refused(kind: str, subject: str) -> dict[str, JsonValue]:
    """The refusals that name only what they refuse: owner_exists, execution_exists,
    call_exists, caller_not_running, caller_busy, schedule_exists, unknown_schedule."""
    return refusal(kind, subject=subject)
