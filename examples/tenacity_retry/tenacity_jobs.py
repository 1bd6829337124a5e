"""A jobconform adapter for tenacity's backoff: does tenacity's wait strategy meet the spec?

tenacity (https://github.com/jd/tenacity) is the retry library most Python SDKs reach
for. Its job is the delay between attempts; it has no job queue. So this adapter puts
tenacity where a job runtime keeps its delay function: the kit's step runtime (the job
system here) asks `compute_delay_ms` for every retry it schedules, and the harness asks
it directly for RT-002, RT-009 and RT-010. Everything else about the jobs is the step
runtime's, which is why the adapter claims `lifecycle` and `retry` and leaves `stuck`
unclaimed: the report shows it as "not claimed", never as passed.

Two things tenacity does differently from the spec's vocabulary need a translation,
written here on purpose so the guide can show them:
- tenacity counts attempts from 1 (`attempt_number`); the spec counts retries already
  taken from 0, so attempt n of the spec is tenacity's attempt n + 1.
- tenacity works in seconds, the spec in milliseconds.
Its randomness comes from the `random` module; the kit hands the adapter the uniform
draw to use, and the adapter feeds that draw to tenacity's own jitter code.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from unittest import mock

import tenacity
import tenacity.wait

from jobconform.backends.memory import MemoryRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings
from jobconform.reference.backoff import Jitter, RetryPolicy


class _DrawnRandom:
    """Stands in for the `random` module inside tenacity.wait: uniform() returns the
    point the kit's draw picks in [a, b], so tenacity's jitter becomes deterministic."""

    def __init__(self, draw: float) -> None:
        self._draw = draw

    def uniform(self, a: float, b: float) -> float:
        return a + self._draw * (b - a)


def _tenacity_draws(draw: float) -> AbstractContextManager[object]:
    """While active, tenacity's jitter draws the kit's value (the step runtime is
    single-threaded, so swapping the module's `random` for the call is safe)."""
    return mock.patch.object(tenacity.wait, "random", _DrawnRandom(draw))


def _state(attempt: int) -> tenacity.RetryCallState:
    state = tenacity.RetryCallState(retry_object=tenacity.Retrying(), fn=None, args=(),
                                    kwargs={})
    state.attempt_number = attempt + 1  # tenacity's first retry waits after attempt 1
    return state


def tenacity_wait(policy: RetryPolicy, jitter: Jitter) -> tenacity.wait.wait_base:
    """The tenacity wait strategy closest to a policy and jitter mode.

    tenacity has exponential backoff with a cap (`wait_exponential`) and full jitter
    (`wait_random_exponential`); it has no equal or decorrelated jitter, so those fall
    back to the un-jittered strategy (a known deviation, listed in expected-failures.yaml).
    """
    arguments = {"multiplier": policy.retry_delay_ms / 1000.0,
                 "exp_base": policy.backoff_multiplier,
                 "max": policy.max_retry_delay_ms / 1000.0}
    if jitter is Jitter.FULL:
        return tenacity.wait_random_exponential(**arguments)
    return tenacity.wait_exponential(**arguments)


class TenacityRuntime(MemoryRuntime):
    """The step runtime, with tenacity deciding how long each retry waits."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        # previous_ms (decorrelated jitter) and retry_after_ms (a server's Retry-After)
        # have no place in tenacity's wait strategies: they are ignored, as tenacity would.
        with _tenacity_draws(draw):
            seconds = tenacity_wait(policy, jitter)(_state(attempt))
        return float(seconds) * 1000.0


class TenacityBackend:
    """`jobconform run --backend tenacity_jobs:TenacityBackend`"""

    name = "tenacity"
    profile = "canonical"
    capabilities = frozenset({"lifecycle", "retry"})

    def open(self, settings: RuntimeSettings, clock: Clock) -> TenacityRuntime:
        return TenacityRuntime(settings, clock)
