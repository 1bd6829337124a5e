"""Precise verdicts (issue 15): one cause, one requirement, and the rest still proven.

`three_deviations` has three independent deviations in three areas (retry RT-009,
lifecycle LC-015, reaper RP-003). A plain run names exactly those three as failing, each
as the primary requirement of its divergences; with the three listed as expected
failures the run exits 0 and every other requirement of the claimed areas passes in every
suite, none "blocked". `service_deviations` proves the same for the service areas'
harnesses: breaker CB-003 and admission AD-006 change state, idempotency IK-006 an answer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from jobconform.conformance.blame import ranked, stuck_primary
from jobconform.conformance.cli import main
from jobconform.conformance.expectations import load_expectations
from jobconform.conformance.gallery.deviations import (
    SERVICE_DEVIATIONS,
    SERVICE_DEVIATIONS_FILE,
    THREE_DEVIATIONS,
    THREE_DEVIATIONS_FILE,
)
from jobconform.conformance.harness import Divergence
from jobconform.spec import load_registry

DEVIATIONS = {"RT-009", "LC-015", "RP-003"}
CLAIMED_AREAS = {"lifecycle", "retry", "reaper"}
EXAMPLES = "60"


def _run(tmp_path: Path, *extra: str) -> tuple[int, dict[str, object], str]:
    result = CliRunner().invoke(main, ["run", "--backend", THREE_DEVIATIONS, "--examples",
                                       EXAMPLES, "--report-dir", str(tmp_path), *extra])
    report = json.loads((tmp_path / "report.json").read_text())
    return result.exit_code, report, result.output


def test_the_deviation_file_lists_exactly_the_three() -> None:
    assert set(load_expectations(THREE_DEVIATIONS_FILE)) == DEVIATIONS


@pytest.mark.parametrize("listed", [False, True], ids=["plain", "listed"])
def test_three_independent_deviations_fail_three_requirements(tmp_path: Path,
                                                              listed: bool) -> None:
    extra = ("--expected-failures", str(THREE_DEVIATIONS_FILE)) if listed else ()
    code, report, output = _run(tmp_path, *extra)
    requirements = report["requirements"]
    assert isinstance(requirements, dict)
    wanted = "expected failure" if listed else "fail"
    failing = {rid for rid, body in requirements.items() if wanted in body["suites"].values()}
    assert failing == DEVIATIONS, output
    suites = report["suites"]
    assert isinstance(suites, list)
    primaries = {rid for suite in suites for case in suite["cases"] if not case["passed"]
                 for rid in case["primary"]}
    assert primaries == DEVIATIONS
    if not listed:
        assert code == 1
        return
    assert code == 0, output
    claims = set(report["capabilities"])
    for rid, body in requirements.items():
        requirement = load_registry().requirement(rid)
        if "canonical" not in requirement.profiles:
            assert set(body["suites"].values()) == {"n/a"}, rid
        elif body["area"] not in CLAIMED_AREAS or not requirement.needs <= claims:
            assert set(body["suites"].values()) == {"not claimed"}, rid
        elif rid not in DEVIATIONS:
            assert set(body["suites"].values()) == {"pass"}, (rid, body["suites"])


SERVICE_DEVIATION_IDS = {"CB-003", "AD-006", "IK-006"}
SERVICE_AREAS = {"breaker", "admission", "idempotency"}


def test_the_service_deviation_file_lists_exactly_the_three() -> None:
    assert set(load_expectations(SERVICE_DEVIATIONS_FILE)) == SERVICE_DEVIATION_IDS


@pytest.mark.parametrize("listed", [False, True], ids=["plain", "listed"])
def test_service_area_deviations_fail_their_requirements_and_hide_nothing(
        tmp_path: Path, listed: bool) -> None:
    extra = ("--expected-failures", str(SERVICE_DEVIATIONS_FILE)) if listed else ()
    result = CliRunner().invoke(main, ["run", "--backend", SERVICE_DEVIATIONS, "--examples",
                                       EXAMPLES, "--report-dir", str(tmp_path), *extra])
    output = result.output
    report = json.loads((tmp_path / "report.json").read_text())
    requirements = report["requirements"]
    wanted = "expected failure" if listed else "fail"
    failing = {rid for rid, body in requirements.items() if wanted in body["suites"].values()}
    assert failing == SERVICE_DEVIATION_IDS, output
    primaries = {rid for suite in report["suites"] for case in suite["cases"]
                 if not case["passed"] for rid in case["primary"]}
    assert primaries == SERVICE_DEVIATION_IDS
    if not listed:
        assert result.exit_code == 1
        return
    assert result.exit_code == 0, output
    registry = load_registry()
    for rid, body in requirements.items():
        if body["area"] not in SERVICE_AREAS:
            continue
        if "canonical" not in registry.requirement(rid).profiles:
            assert set(body["suites"].values()) == {"n/a"}, rid
        elif registry.requirement(rid).needs:
            # It needs a capability besides its area (store faults, audit events, the
            # breaker's seams) the backend lacks.
            assert set(body["suites"].values()) == {"not claimed"}, rid
        elif rid not in SERVICE_DEVIATION_IDS:
            # Every suite proves it, past the listed deviations: none is "blocked".
            assert set(body["suites"].values()) == {"pass"}, (rid, body["suites"])


def test_a_divergence_names_its_primary_first() -> None:
    divergence = Divergence(("RT-002", "RT-009", "RT-010"), "delay", 1.0, 2.0, [], {},
                            primary="RT-009")
    assert divergence.requirements == ("RT-009", "RT-002", "RT-010")
    assert "requirement(s): RT-009; also involved: RT-002, RT-010" in str(divergence)
    # Without a given primary, the generic observation requirements rank last.
    assert ranked(("LC-001", "LC-002", "LC-013")) == ("LC-013", "LC-001", "LC-002")


def test_stuck_counts_are_blamed_on_the_rule_they_follow() -> None:
    from dataclasses import replace

    from jobconform.conformance.clock import EPOCH
    from jobconform.reference.lifecycle import Status, new_job
    job = replace(new_job(EPOCH, 0), status=Status.RUNNING, started_at=EPOCH,
                  last_heartbeat=EPOCH)
    later = EPOCH.__class__.fromtimestamp(EPOCH.timestamp() + 30, EPOCH.tzinfo)
    assert stuck_primary(30.0, 1, {"a": job}, later) == "ST-003"
    assert stuck_primary(30.0, 2, {"a": job}, later) == "ST-002"


def test_a_shrunk_trace_replayed_past_its_primary_names_what_else_is_broken() -> None:
    from jobconform.backends.loading import load_backend
    from jobconform.conformance.runner import broken_on_their_own
    from jobconform.conformance.trace import Trace, replay
    from jobconform.reference import commands as cmd
    from jobconform.reference.backoff import Jitter, RetryPolicy
    from jobconform.spec import load_registry

    registry = load_registry()
    backend = load_backend(THREE_DEVIATIONS)
    profile = registry.profile("canonical")
    question = cmd.ComputeDelay(RetryPolicy(max_retries=3), 2, Jitter.FULL, 0.5)
    commands = (cmd.Submit("a"), cmd.Cancel("a"), cmd.Cancel("a"), question)
    trace = Trace(THREE_DEVIATIONS, "canonical", registry.version, "hand-made", 0, 2, 4,
                  ("LC-015",), "", "", "", commands)
    first = replay(trace, backend, profile, registry).divergence
    assert first is not None and first.primary == "LC-015"
    assert broken_on_their_own(trace, backend, profile, registry, first) == ("RT-009",)
