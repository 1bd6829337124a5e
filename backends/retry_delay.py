"""The shipped runtimes' own retry arithmetic: which failures are retried, how long each
retry waits, and the policy as the stores keep it (RT-001..RT-005, RT-009, RT-010).

Written apart from the oracle's `reference.backoff`, so that the retry suites compare two
readings of the spec; only the `RetryPolicy` and `Jitter` values are shared.
"""

from __future__ import annotations

import math

from jobconform.reference.backoff import Jitter, RetryPolicy

POLICY_FIELDS = ("max_retries", "retry_delay_ms", "backoff_multiplier", "max_retry_delay_ms",
                 "non_retryable")


def is_retried(policy: RetryPolicy, error_type: str, retries_taken: int) -> bool:
    """A failure is retried while retries remain and its type is not non-retryable."""
    return error_type not in policy.non_retryable and retries_taken < policy.max_retries


def _growing_delay_ms(policy: RetryPolicy, retries_taken: int) -> float:
    """retry_delay_ms * backoff_multiplier ** retries_taken, capped at max_retry_delay_ms;
    a power too large for a float is past the cap unless the base is tiny enough to bring
    it back, which only logarithms can tell."""
    if retries_taken < 0:
        raise ValueError(f"retries_taken starts at 0, not {retries_taken}")
    base, factor, cap = policy.retry_delay_ms, policy.backoff_multiplier, policy.max_retry_delay_ms
    if base == 0 or factor == 1:
        return min(base, cap)
    try:
        return min(base * factor ** retries_taken, cap)
    except OverflowError:
        exponent = math.log(base) + retries_taken * math.log(factor)
        return cap if exponent >= math.log(cap) else math.exp(exponent)


def retry_delay_ms(policy: RetryPolicy, retries_taken: int, jitter: Jitter = Jitter.NONE,
                   draw: float = 0.0, previous_ms: float | None = None,
                   retry_after_ms: float | None = None) -> float:
    """The wait before the next attempt.

    Args:
        policy: the job's retry policy.
        retries_taken: 0 before the first retry.
        jitter: the profile's jitter; FULL and EQUAL scale the capped delay, DECORRELATED
            grows from the previous wait (the base before the first).
        draw: the harness's uniform draw in [0, 1).
        previous_ms: the previous wait, for DECORRELATED.
        retry_after_ms: the server's Retry-After, a floor under the wait (never past the cap).

    Raises:
        ValueError: a draw outside [0, 1) or a negative retries_taken.
    """
    if not 0.0 <= draw < 1.0:
        raise ValueError(f"a draw is in [0, 1), not {draw}")
    cap = policy.max_retry_delay_ms
    if jitter is Jitter.DECORRELATED:
        start = policy.retry_delay_ms
        last = start if previous_ms is None else previous_ms
        wait = start + draw * max(3 * last - start, 0.0)
    else:
        grown = _growing_delay_ms(policy, retries_taken)
        wait = {Jitter.FULL: draw * grown, Jitter.EQUAL: grown / 2 + draw * grown / 2}.get(
            jitter, grown)
    if retry_after_ms is not None and retry_after_ms > wait:
        wait = retry_after_ms
    return min(wait, cap)


def policy_document(policy: RetryPolicy) -> dict[str, object]:
    """The policy as the stores keep it with the job (JSON)."""
    document: dict[str, object] = {name: getattr(policy, name) for name in POLICY_FIELDS}
    document["non_retryable"] = list(policy.non_retryable)
    return document


def policy_of_document(document: object) -> RetryPolicy | None:
    """The policy a store kept; None for a job without one.

    Raises:
        ValueError: the document is not a policy.
    """
    if document is None:
        return None
    if not isinstance(document, dict) or not set(document) <= set(POLICY_FIELDS):
        raise ValueError(f"a stored retry policy has the fields {POLICY_FIELDS}: {document!r}")
    values = {**document, "non_retryable": tuple(document.get("non_retryable", ()))}
    return RetryPolicy(**values)
