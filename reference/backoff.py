"""Retry backoff: the delay before the next attempt, as one pure function (RT-002, RT-009,
RT-010).

The uniform draw is an argument, not a call to a random source: the caller draws it
from an injected, seeded generator, so the same inputs give the same delay everywhere
and an SDK's own delay function can be compared with this one value by value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

# Below this natural log the power itself is a finite float, so the exact product is used.
MAX_EXACT_LOG = 700.0


class Jitter(StrEnum):
    NONE = "none"
    FULL = "full"
    EQUAL = "equal"
    DECORRELATED = "decorrelated"


@dataclass(frozen=True)
class RetryPolicy:
    """A job's retry configuration (RT-001)."""

    max_retries: int = 0
    retry_delay_ms: float = 1000.0
    backoff_multiplier: float = 2.0
    max_retry_delay_ms: float = 60_000.0
    non_retryable: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        problems = []
        if self.max_retries < 0:
            problems.append(f"max_retries must be >= 0, not {self.max_retries}")
        if not 0 <= self.retry_delay_ms < math.inf:
            problems.append(f"retry_delay_ms must be finite and >= 0, not {self.retry_delay_ms}")
        if not 1 <= self.backoff_multiplier < math.inf:
            problems.append(
                f"backoff_multiplier must be finite and >= 1, not {self.backoff_multiplier}")
        if not self.retry_delay_ms <= self.max_retry_delay_ms < math.inf:
            problems.append(f"max_retry_delay_ms must be finite and >= retry_delay_ms, not"
                            f" {self.max_retry_delay_ms}")
        if problems:
            raise ValueError("invalid retry policy: " + "; ".join(problems))

    def retries(self, error_type: str, retries_taken: int) -> bool:
        """Whether a failed attempt with this error type is retried (RT-004, RT-005)."""
        return retries_taken < self.max_retries and error_type not in self.non_retryable


def exponential_ms(policy: RetryPolicy, attempt: int) -> float:
    """retry_delay_ms * backoff_multiplier ** attempt, saturating instead of overflowing."""
    if attempt < 0:
        raise ValueError(f"attempt counts retries already taken and starts at 0, not {attempt}")
    if policy.backoff_multiplier == 1 or policy.retry_delay_ms == 0:
        return policy.retry_delay_ms
    # Work in logarithms: past the cap the exact value does not matter, and neither
    # multiplier ** attempt (attempt 10_000) nor a tiny base times a huge power may overflow.
    log_delay = math.log(policy.retry_delay_ms) + attempt * math.log(policy.backoff_multiplier)
    if log_delay > math.log(policy.max_retry_delay_ms):
        return math.inf
    if attempt * math.log(policy.backoff_multiplier) < MAX_EXACT_LOG:
        return policy.retry_delay_ms * policy.backoff_multiplier ** attempt
    return math.exp(log_delay)


def delay_ms(policy: RetryPolicy, attempt: int, jitter: Jitter = Jitter.NONE,
             draw: float = 0.0, previous_ms: float | None = None,
             retry_after_ms: float | None = None) -> float:
    """The delay before the next attempt.

    Args:
        policy: the job's retry policy.
        attempt: retries already taken (0 before the first retry).
        jitter: the profile's jitter mode.
        draw: a uniform draw in [0, 1) from the injected seeded source (ignored by NONE).
        previous_ms: the previous delay, for decorrelated jitter (retry_delay_ms if None).
        retry_after_ms: a server-provided retry-after, a floor on the delay.

    Raises:
        ValueError: draw outside [0, 1), or a negative attempt.
    """
    if not 0 <= draw < 1:
        raise ValueError(f"draw must be in [0, 1), not {draw}")
    base = policy.retry_delay_ms
    cap = policy.max_retry_delay_ms
    if jitter is Jitter.DECORRELATED:
        previous = base if previous_ms is None else previous_ms
        raw = base + draw * max(3 * previous - base, 0.0)
    else:
        # Jitter scales the capped delay: it can never push the result past the cap, and
        # it does not vanish once the exponential has reached the cap.
        capped = min(exponential_ms(policy, attempt), cap)
        if jitter is Jitter.FULL:
            raw = draw * capped
        elif jitter is Jitter.EQUAL:
            raw = capped / 2 + draw * capped / 2
        else:
            raw = capped
    if retry_after_ms is not None:
        raw = max(raw, retry_after_ms)
    return min(raw, cap)


def policy_to_json(policy: RetryPolicy) -> dict[str, object]:
    """The policy as JSON-ready data, for stores that persist it with the job."""
    return {
        "max_retries": policy.max_retries,
        "retry_delay_ms": policy.retry_delay_ms,
        "backoff_multiplier": policy.backoff_multiplier,
        "max_retry_delay_ms": policy.max_retry_delay_ms,
        "non_retryable": list(policy.non_retryable),
    }


def policy_from_json(document: object) -> RetryPolicy | None:
    """Rebuild a stored policy; None stays None (the job has no retry policy).

    Raises:
        ValueError: the document is not a policy.
    """
    if document is None:
        return None
    if not isinstance(document, dict):
        raise ValueError(f"a stored retry policy is a JSON object, not {document!r}")
    values = dict(document)
    values["non_retryable"] = tuple(values.get("non_retryable", ()))
    try:
        return RetryPolicy(**values)
    except TypeError as error:
        raise ValueError(f"stored retry policy does not fit RetryPolicy: {error}") from None
