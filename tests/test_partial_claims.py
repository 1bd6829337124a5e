"""Partial claims: a backend claims an area in part, and what it leaves out is "not claimed".

Two correct backends (conformance/partial_claims.py) claim retry in part: one with no
jitter modes, one whose retries wait out a list of intervals. Each must exit 0 in every
suite with exactly the requirements its claim leaves out "not claimed" and the rest of
the area passed; the same runtime claiming the whole area must fail there.
"""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from jobconform.backends.loading import QUALIFYING_CAPABILITIES, BackendLoadError, check_backend
from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import (
    LIFECYCLE,
    RETRY,
    RETRY_INTERVALS,
    RETRY_WITHOUT_JITTER,
    SCHEDULING_UTC_ONLY,
    Clock,
    RuntimeSettings,
)
from jobconform.bridges.translate import retry_intervals_ms
from jobconform.conformance.applicability import PARTIAL_CLAIMS, left_out, skip_reason, unclaimed
from jobconform.conformance.cli import main
from jobconform.conformance.gallery.adoption import TailRequeueStore
from jobconform.conformance.harness import AdapterError, Divergence, Harness
from jobconform.conformance.lifecycle.machine import run_lifecycle_machine
from jobconform.conformance.partial_claims import (
    RETRY_INTERVALS_BACKEND,
    RETRY_WITHOUT_JITTER_BACKEND,
    RetryIntervalsBackend,
    RetryWithoutJitterBackend,
)
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.spec import load_registry

LEFT_OUT = {RETRY_WITHOUT_JITTER: {"RT-009"}, RETRY_INTERVALS: {"RT-002", "RT-009", "RT-010"},
            SCHEDULING_UTC_ONLY: {"SC-004", "SC-005"}}


def test_each_partial_claim_leaves_out_requirements_of_its_own_area() -> None:
    registry = load_registry()
    assert {claim: set(ids) for claim, ids in PARTIAL_CLAIMS.items()} == LEFT_OUT
    for claim, ids in PARTIAL_CLAIMS.items():
        area = QUALIFYING_CAPABILITIES[claim][0]
        assert {registry.requirement(rid).area for rid in ids} == {area}


def test_a_left_out_requirement_is_not_claimed_and_skipped_with_its_reason() -> None:
    registry = load_registry()
    backend, profile = RetryWithoutJitterBackend(), registry.profile("canonical")
    jitter = registry.requirement("RT-009")
    assert unclaimed(jitter, backend.capabilities) == (
        "claims retry in part (retry-without-jitter)")
    assert unclaimed(jitter, MemoryBackend.capabilities) is None
    assert left_out(backend.capabilities) == {"RT-009": RETRY_WITHOUT_JITTER}
    assert left_out(MemoryBackend.capabilities) == {}
    reason = skip_reason(registry, backend, profile, ["RT-010", "RT-009"])
    assert reason == ("backend retry-without-jitter claims retry in part"
                      " (retry-without-jitter) (RT-009)")
    assert skip_reason(registry, backend, profile, ["RT-003", "RT-010"]) is None


def test_a_partial_claim_without_its_area_is_refused() -> None:
    class IntervalsWithoutRetry(MemoryBackend):
        capabilities = frozenset({LIFECYCLE, RETRY_INTERVALS})

    with pytest.raises(BackendLoadError, match=RETRY_INTERVALS):
        check_backend(IntervalsWithoutRetry(), "intervals-without-retry")
    check_backend(RetryIntervalsBackend(), "retry-intervals")


def test_the_intervals_of_a_policy_are_its_delays_one_per_retry() -> None:
    policy = RetryPolicy(max_retries=4, retry_delay_ms=1000.0, backoff_multiplier=3.0,
                         max_retry_delay_ms=20_000.0)
    assert retry_intervals_ms(policy) == [1000.0, 3000.0, 9000.0, 20_000.0]
    assert retry_intervals_ms(RetryPolicy()) == []


@pytest.mark.parametrize("backend", [RETRY_WITHOUT_JITTER_BACKEND, RETRY_INTERVALS_BACKEND])
def test_a_partial_claim_passes_the_rest_of_its_area_in_every_suite(
        backend: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--backend", backend, "--area", RETRY,
                                       "--examples", "30", "--report-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    left_out = set().union(*(ids for claim, ids in LEFT_OUT.items()
                             if claim in report["capabilities"]))
    assert left_out
    registry = load_registry()
    for rid, body in report["requirements"].items():
        if body["area"] == RETRY:
            # A requirement needing a capability beyond the area (RT-011's deprecated
            # aliases) is not claimed by a backend without it, whole or partial.
            beyond = not registry.requirement(rid).needs <= set(report["capabilities"])
            wanted = "not claimed" if rid in left_out or beyond else "pass"
            assert set(body["suites"].values()) == {wanted}, (rid, body["suites"])


class WholeRetryWithoutJitter(RetryWithoutJitterBackend):
    """The runtime without jitter modes, claiming the whole retry area."""

    capabilities = frozenset({LIFECYCLE, RETRY})


class WholeRetryAsIntervals(RetryIntervalsBackend):
    """The interval-list runtime, claiming the whole retry area."""

    capabilities = frozenset({LIFECYCLE, RETRY})


def test_the_same_runtime_claiming_the_whole_area_fails_what_the_claim_left_out() -> None:
    registry = load_registry()
    profile = registry.profile("canonical")
    jittered = cmd.ComputeDelay(RetryPolicy(max_retries=3), 1, Jitter.FULL, 0.5)
    with (closing(Harness(WholeRetryAsIntervals(), profile, registry)) as harness,
          pytest.raises(Divergence) as caught):
        harness.run(jittered)  # the list's 2000 ms, not the draw's half of it
    assert caught.value.primary == "RT-009"
    # A raising delay function is an adapter error today; a divergence names RT-009.
    with (closing(Harness(WholeRetryWithoutJitter(), profile, registry)) as harness,
          pytest.raises((AdapterError, Divergence), match=r"no such jitter mode|RT-009")):
        harness.run(jittered)
    run = run_lifecycle_machine(WholeRetryAsIntervals(), profile, registry, examples=30)
    assert run.divergence is not None
    assert run.divergence.primary in {"RT-002", "RT-009", "RT-010"}, run.divergence
    # Declared, the machine never asks what the claim leaves out.
    for backend in (RetryWithoutJitterBackend(), RetryIntervalsBackend()):
        assert run_lifecycle_machine(backend, profile, registry, examples=30).divergence is None


class WithoutDelayFunction:
    """A memory runtime whose retry queue puts a retried job at the tail, with no delay
    function: a `retry-intervals` runtime need have none (the kit never asks it)."""

    def __init__(self, runtime: MemoryRuntime) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        if name == "compute_delay_ms":
            raise AttributeError(name)
        return getattr(self._runtime, name)


class TailRequeueIntervalsBackend(MemoryBackend):
    name = "tail-requeue-intervals"
    capabilities = frozenset({LIFECYCLE, RETRY, RETRY_INTERVALS})

    def open(self, settings: RuntimeSettings, clock: Clock) -> WithoutDelayFunction:  # type: ignore[override]
        return WithoutDelayFunction(MemoryRuntime(settings, clock, store=TailRequeueStore()))


def test_under_retry_intervals_a_due_retry_out_of_its_turn_is_rt003_not_the_left_out_rt002(
        ) -> None:
    # The interval the kit gave is the job's delay: a due retry that waits behind jobs
    # queued after it broke the backoff's turn (RT-003), never the formula the claim
    # leaves out (RT-002), even with no delay function to ask.
    registry = load_registry()
    harness = Harness(TailRequeueIntervalsBackend(), registry.profile("canonical"), registry,
                      max_concurrent=1)
    retry = RetryPolicy(max_retries=1, retry_delay_ms=1000)
    try:
        with pytest.raises(Divergence) as caught:
            for command in (cmd.Submit("a", retry=retry), cmd.Submit("b"), cmd.Submit("c"),
                            cmd.Dispatch(), cmd.Finish("a", cmd.Raise("ValueError", "flaky")),
                            cmd.Dispatch(), cmd.Finish("b", cmd.Succeed(1)),
                            cmd.AdvanceTime(1.0), cmd.Dispatch()):
                harness.run(command)
    finally:
        harness.close()
    assert caught.value.primary == "RT-003"
