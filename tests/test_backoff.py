"""The reference delay function: the properties RT-002, RT-009 and RT-010 promise."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobconform.reference.backoff import (
    Jitter,
    RetryPolicy,
    delay_ms,
    exponential_ms,
    policy_from_json,
    policy_to_json,
)

EXAMPLES = settings(max_examples=300, deadline=None, database=None, derandomize=True)


@st.composite
def policies(draw: st.DrawFn) -> RetryPolicy:
    base = draw(st.floats(0, 10_000))
    return RetryPolicy(
        max_retries=draw(st.integers(0, 10)),
        retry_delay_ms=base,
        backoff_multiplier=draw(st.floats(1, 10)),
        max_retry_delay_ms=base + draw(st.floats(0, 1_000_000)),
    )


def test_seed_defaults_give_one_two_four_seconds() -> None:
    policy = RetryPolicy(max_retries=3)
    assert [delay_ms(policy, n) for n in range(3)] == [1000, 2000, 4000]


def test_huge_attempt_is_the_cap_not_an_overflow() -> None:
    policy = RetryPolicy(max_retries=3, backoff_multiplier=10.0, max_retry_delay_ms=30_000)
    assert delay_ms(policy, 10_000) == 30_000
    assert exponential_ms(policy, 10_000) == math.inf


@given(policy=policies(), attempt=st.integers(0, 100_000), jitter=st.sampled_from(list(Jitter)),
       draw=st.floats(0, 1, exclude_max=True),
       previous=st.one_of(st.none(), st.floats(0, 1e7)),
       retry_after=st.one_of(st.none(), st.floats(0, 1e7)))
@EXAMPLES
def test_never_above_the_cap_never_below_zero(policy: RetryPolicy, attempt: int, jitter: Jitter,
                                             draw: float, previous: float | None,
                                             retry_after: float | None) -> None:
    delay = delay_ms(policy, attempt, jitter, draw, previous, retry_after)
    assert 0 <= delay <= policy.max_retry_delay_ms
    if retry_after is not None:
        assert delay >= min(retry_after, policy.max_retry_delay_ms)


@given(policy=policies(), attempt=st.integers(0, 60))
@EXAMPLES
def test_without_jitter_the_delay_never_shrinks(policy: RetryPolicy, attempt: int) -> None:
    assert delay_ms(policy, attempt) <= delay_ms(policy, attempt + 1)


def test_full_and_equal_jitter_stay_random_at_the_cap() -> None:
    policy = RetryPolicy(max_retries=3, max_retry_delay_ms=10_000)
    full = {delay_ms(policy, 500, Jitter.FULL, u) for u in (0.1, 0.5, 0.9)}
    equal = {delay_ms(policy, 500, Jitter.EQUAL, u) for u in (0.1, 0.5, 0.9)}
    assert full == {1000, 5000, 9000}
    assert equal == {5500, 7500, 9500}


def test_decorrelated_grows_from_the_previous_delay_and_is_capped() -> None:
    policy = RetryPolicy(max_retries=3, max_retry_delay_ms=10_000)
    assert delay_ms(policy, 0, Jitter.DECORRELATED, 0.5) == 2000  # 1000 + 0.5 * (3000 - 1000)
    assert delay_ms(policy, 0, Jitter.DECORRELATED, 0.5, previous_ms=2000) == 3500
    assert delay_ms(policy, 0, Jitter.DECORRELATED, 0.99, previous_ms=9000) == 10_000


@pytest.mark.parametrize("bad", [
    {"max_retries": -1}, {"retry_delay_ms": -1.0}, {"backoff_multiplier": 0.5},
    {"retry_delay_ms": 5000.0, "max_retry_delay_ms": 1000.0}, {"retry_delay_ms": math.nan},
])
def test_invalid_policies_are_refused_with_the_reason(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="invalid retry policy"):
        RetryPolicy(**bad)  # type: ignore[arg-type]


def test_draw_outside_the_unit_interval_is_refused() -> None:
    with pytest.raises(ValueError, match=r"draw must be in \[0, 1\)"):
        delay_ms(RetryPolicy(), 0, Jitter.FULL, 1.0)


def test_policy_json_round_trip_and_bad_documents() -> None:
    policy = RetryPolicy(max_retries=2, non_retryable=("KeyError",))
    assert policy_from_json(policy_to_json(policy)) == policy
    assert policy_from_json(None) is None
    with pytest.raises(ValueError, match="JSON object"):
        policy_from_json([1, 2])
    with pytest.raises(ValueError, match="does not fit"):
        policy_from_json({"retries": 2})
