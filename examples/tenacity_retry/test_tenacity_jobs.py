"""The tenacity example: its report, its deviation list, and the translation it needs.

Run with `tox -e example-tenacity` (installs the `tenacity-example` extra).
"""

from __future__ import annotations

import sys
from contextlib import closing
from pathlib import Path

import pytest

from jobconform.conformance.adapter_testing import KitRun, adapter_importable, run_kit
from jobconform.conformance.expectations import load_expectations
from jobconform.reference import backoff
from jobconform.reference.backoff import Jitter, RetryPolicy

HERE = Path(__file__).resolve().parent
BACKEND = "tenacity_jobs:TenacityBackend"
DEVIATIONS = HERE / "expected-failures.yaml"


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter module must import here and in the Behave child process."""
    adapter_importable(monkeypatch, HERE)


def run(tmp_path: Path, *options: str) -> KitRun:
    return run_kit(BACKEND, tmp_path, *options)


def test_with_its_deviation_list_the_run_passes_and_reports_them(tmp_path: Path) -> None:
    # Every suite: each divergence fails only its primary, one per deviation.
    done = run(tmp_path, "--expected-failures", str(DEVIATIONS))
    assert done.exit_code == 0, done.report["expectation_problems"]
    assert done.requirements_with("expected failure") == set(load_expectations(DEVIATIONS))
    for rid in ("ST-001", "ST-002", "ST-003", "ST-004"):  # stuck is not claimed
        assert set(done.report["requirements"][rid]["suites"].values()) == {"not claimed"}


def test_without_the_list_the_deviations_fail_the_run(tmp_path: Path) -> None:
    done = run(tmp_path, "--suite", "robot")
    assert done.exit_code == 1
    failed = done.requirements_with("fail")
    assert failed == set(load_expectations(DEVIATIONS))  # the primaries of its deviations


def test_tenacity_agrees_with_the_spec_once_attempts_are_counted_from_zero() -> None:
    sys.path.insert(0, str(HERE))
    from tenacity_jobs import TenacityRuntime

    from jobconform.backends.protocol import RuntimeSettings
    from jobconform.conformance.clock import EPOCH, VirtualClock

    with closing(TenacityRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                 VirtualClock(EPOCH))) as runtime:
        assert_agrees(runtime)


def assert_agrees(runtime: object) -> None:
    compute = runtime.compute_delay_ms  # type: ignore[attr-defined]
    for policy in (RetryPolicy(retry_delay_ms=250.0, backoff_multiplier=3.0,
                               max_retry_delay_ms=20_000.0), RetryPolicy()):
        for attempt in (0, 1, 2, 5, 12, 64, 10_000):
            for jitter, draw in ((Jitter.NONE, 0.0), (Jitter.FULL, 0.0), (Jitter.FULL, 0.37),
                                 (Jitter.FULL, 0.99)):
                mine = compute(policy, attempt, jitter, draw)
                spec = backoff.delay_ms(policy, attempt, jitter, draw)
                assert mine == pytest.approx(spec, abs=1.0), (policy, attempt, jitter, draw)


def test_without_the_translation_every_delay_is_one_power_short() -> None:
    import tenacity
    from tenacity_jobs import tenacity_wait

    policy = RetryPolicy()
    wait = tenacity_wait(policy, Jitter.NONE)
    for attempt in (1, 2, 3):
        untranslated = tenacity.RetryCallState(retry_object=tenacity.Retrying(), fn=None,
                                               args=(), kwargs={})
        untranslated.attempt_number = attempt  # the spec's count, passed through as is
        short = wait(untranslated) * 1000.0
        assert short * policy.backoff_multiplier == backoff.delay_ms(policy, attempt)
