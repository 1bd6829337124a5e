"""The spec gate: coverage both ways, CHANGELOG and lock, and the impact of a spec change."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from jobconform.conformance import spec_gate
from jobconform.conformance.cli import main
from jobconform.conformance.spec_gate import Change, Coverage, TaggedTest
from jobconform.spec import Registry, spec_files


def test_the_shipped_suites_cover_every_must_and_should(registry: Registry) -> None:
    coverage = spec_gate.static_coverage()
    assert spec_gate.coverage_problems(registry, coverage) == []
    assert {t.suite for t in coverage.tests} == {"behave", "robot"}


def test_a_requirement_without_a_robot_test_and_a_stale_tag_are_reported(
        registry: Registry) -> None:
    coverage = spec_gate.static_coverage()
    without = Coverage([t for t in coverage.tests
                        if not (t.suite == "robot" and "LC-011" in t.requirements)])
    without.tests.append(TaggedTest("behave", "old.feature: gone", ("LC-998",)))
    problems = spec_gate.coverage_problems(registry, without)
    assert "LC-011 (MUST) has no robot test: add LC-011 to a test's [Tags]" in problems
    assert any("tagged LC-998, which the spec" in p for p in problems)
    assert len(problems) == 2


def test_a_requirement_whose_cases_in_a_suite_are_all_edges_is_reported(
        registry: Registry) -> None:
    coverage = spec_gate.static_coverage()
    # The shipped suites mark edge cases: LP-010's NaN and infinite costs in both suites.
    assert any(t.edge and "LP-010" in t.requirements and "NaN" in t.name
               for t in coverage.tests if t.suite == "behave")
    assert any(t.edge and "LP-010" in t.requirements for t in coverage.tests
               if t.suite == "robot")
    # Without its plain case (the finite costs summed), LP-010 has only edges in Behave.
    only_edges = Coverage([t for t in coverage.tests
                           if not (t.suite == "behave" and "LP-010" in t.requirements
                                   and not t.edge)])
    [problem] = spec_gate.coverage_problems(registry, only_edges)
    assert problem.startswith("LP-010 (MUST) has only edge cases in behave (loops.feature:")
    assert problem.endswith("add its plain case, a test not tagged edge")
    # A plain case in one suite does not stand for the other.
    robot_edges = Coverage([replace(t, edge=True) if "LP-010" in t.requirements
                            and t.suite == "robot" else t for t in coverage.tests])
    [problem] = spec_gate.coverage_problems(registry, robot_edges)
    assert problem.startswith("LP-010 (MUST) has only edge cases in robot")


def test_the_cases_issue_33_found_missing_are_in_both_suites() -> None:
    # Hypothesis alone checked them: a continue-mode loop that ends with no failure (the
    # plain case of LP-015/LP-016) and a budget fed infinite costs (Robot had only -inf).
    coverage = spec_gate.static_coverage()
    for suite in ("behave", "robot"):
        plain_continue = [t for t in coverage.tests if t.suite == suite and not t.edge
                          and {"LP-015", "LP-016"} <= set(t.requirements)
                          and "all succeed" in t.name.lower()]
        infinite_budget = [t for t in coverage.tests if t.suite == suite
                           and {"LP-010", "LP-011"} <= set(t.requirements)
                           and "infinite cost" in t.name.lower()]
        assert plain_continue and infinite_budget, suite


def test_the_plain_cases_the_edge_audit_found_missing_are_in_both_suites() -> None:
    # The gate counts a test as a requirement's plain case by its tags alone. An audit of
    # the tags (issue 33) found a suite whose only case of a requirement, or of its main
    # clause, was an edge or a combination: LP-005 in Robot only beside a crossed budget,
    # LP-016 in Robot only after a timeout, and AD-003's clamp of a ceiling over the range
    # tagged edge in Behave. Each suite now has the plain case, tagged as such.
    coverage = spec_gate.static_coverage()
    for suite in ("behave", "robot"):
        plain = [t for t in coverage.tests if t.suite == suite and not t.edge]
        assert any(t.requirements == ("LP-005",) and "substring" in t.name.lower()
                   for t in plain), suite
        assert any(t.requirements == ("LP-016",) and "tolerated failures" in t.name.lower()
                   for t in plain), suite
        assert any(t.requirements == ("AD-003",) and "read as 32" in t.name.lower()
                   for t in plain), suite


def test_a_version_without_a_changelog_entry_fails(registry: Registry) -> None:
    assert spec_gate.changelog_problems(registry) == []
    [problem] = spec_gate.changelog_problems(replace(registry, version="9.9.9"))
    assert "no '## 9.9.9' entry" in problem


def test_changed_normative_text_without_a_bump_fails_with_what_to_do(
        registry: Registry, tmp_path: Path) -> None:
    first, *rest = registry.requirements
    edited = replace(registry, requirements=(replace(first, statement="Anything goes."), *rest))
    problems = spec_gate.check(edited, tmp_path, run_oracle=False)
    assert problems == [f"{first.id}: normative text changed (or is new) without a VERSION"
                        " bump; bump spec/VERSION, add a CHANGELOG line, then run"
                        " `jobconform spec lock`"]


def test_the_gate_passes_statically_on_the_shipped_spec() -> None:
    result = CliRunner().invoke(main, ["spec", "check", "--no-run"])
    assert result.exit_code == 0, result.output
    assert ("every MUST/SHOULD requirement has a Behave and a Robot test (a plain case"
            " among each suite's)") in result.output


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture()
def old_spec(tmp_path: Path) -> Path:
    """A git repository whose only commit holds the lifecycle area, with LC-011 reworded."""
    (tmp_path / "spec").mkdir()
    source = Path(str(spec_files()))
    text = (source / "lifecycle.yaml").read_text(encoding="utf-8")
    marker = "- id: LC-011"
    assert marker in text
    start = text.index("statement:", text.index(marker))
    reworded = text[:start] + "statement: An older wording.\n    sources:" + text[
        text.index("sources:", start) + len("sources:"):]
    (tmp_path / "spec" / "lifecycle.yaml").write_text(reworded, encoding="utf-8")
    shutil.copy(source / "VERSION", tmp_path / "spec" / "VERSION")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "old")
    return tmp_path


def test_impact_names_the_changed_and_added_requirements(registry: Registry,
                                                          old_spec: Path) -> None:
    changes = spec_gate.changes_since(registry, spec_gate.base_hashes(old_spec, "HEAD"))
    assert Change("LC-011", "changed") in changes
    assert {c.requirement_id for c in changes if c.kind == "added"} == {
        r.id for r in registry.requirements if r.area != "lifecycle"}
    assert not [c for c in changes if c.kind == "removed"]


def test_impact_shows_tests_and_results_on_the_chosen_backend(old_spec: Path,
                                                              tmp_path: Path) -> None:
    # A backend that claims the lifecycle area only: the others show as not claimed.
    backend = "jobconform.conformance.partial_claims:LifecycleOnlyBackend"
    result = CliRunner().invoke(main, [
        "spec", "impact", "--base", "HEAD", "--repo", str(old_spec), "--backend", backend,
        "--work-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "LC-011 changed: Cancel of a queued job" in result.output
    assert "cancel.feature: Cancelling a queued job cancels it at once" in result.output
    rows = [line.split() for line in result.output.splitlines() if line.startswith("LC-011 ")]
    assert rows == [["LC-011", backend, "pass", "pass", "pass"]]
    stuck = [line.split() for line in result.output.splitlines() if line.startswith("ST-001 ")]
    assert stuck[0][:3] == ["ST-001", backend, "not"]  # not claimed, never passed


def test_impact_refuses_an_unknown_revision(old_spec: Path) -> None:
    result = CliRunner().invoke(main, ["spec", "impact", "--base", "v0-nope", "--repo",
                                       str(old_spec)])
    assert result.exit_code == 1
    assert "'v0-nope' is not a commit" in result.output


# -- coverage over seeds (issue 18) -----------------------------------------------------------


def test_a_requirement_unreached_on_one_seed_is_a_problem_naming_the_seed() -> None:
    from jobconform.conformance.seed_coverage import MachineSeeds, problems, summary

    record = MachineSeeds("breaker machine", "canonical", ("CB-001", "CB-002"),
                          reached={0: frozenset({"CB-001", "CB-002"}),
                                   1: frozenset({"CB-001"})},
                          seconds={0: 1.0, 1: 1.0})
    assert record.unreached() == {"CB-002": (1,)}
    assert problems([record]) == ["CB-002: the breaker machine (canonical) does not reach it"
                                  " on seed(s) 1; aim a rule at it"]
    table = summary([record])
    assert "  CB-001      ##  2/2" in table
    assert "  CB-002      #.  1/2" in table


def test_the_seed_gate_measures_the_machines_on_the_given_seeds(registry: Registry) -> None:
    """One cheap machine on one seed: the oracle reaches every governor requirement."""
    from jobconform.conformance.seed_coverage import measure, problems

    results = measure(registry, (0,), examples=50, profiles=("canonical",),
                      machine_names=("governor machine",))
    assert [(r.machine, r.profile) for r in results] == [("governor machine", "canonical")]
    assert set(results[0].requirements) == {r.id for r in registry.requirements
                                            if r.area == "governor"}
    assert problems(results) == []


def test_spec_check_refuses_a_bad_seed_range() -> None:
    result = CliRunner().invoke(main, ["spec", "check", "--no-run", "--seeds", "nine"])
    assert result.exit_code == 2
    assert "is not a seed range" in result.output


def test_fine_steps_are_the_precision_half_a_millisecond_and_half_a_second() -> None:
    from jobconform.conformance.aim import fine_steps

    assert fine_steps() == (0.000001, 0.0005, 0.5)
    # A profile keeping milliseconds draws nothing finer than its precision (issue 33).
    assert fine_steps(0.001) == (0.001, 0.5)
    with pytest.raises(ValueError, match="precision"):
        fine_steps(0.0)


def test_steps_to_edge_land_a_microsecond_before_on_and_past_the_boundary() -> None:
    from jobconform.conformance.aim import steps_to_edge

    assert steps_to_edge(0.0, 90.0) == (89.999999, 0.000001, 0.000001)
    assert steps_to_edge(89.5, 90.0) == (0.499999, 0.000001, 0.000001)
    assert steps_to_edge(95.0, 90.0) == ()
    # A relaxed precision (a profile whose store keeps milliseconds) lands a millisecond off.
    assert steps_to_edge(0.0, 2.0, precision=0.001) == (1.999, 0.001, 0.001)
    with pytest.raises(ValueError):
        steps_to_edge(0.0, -1.0)
    with pytest.raises(ValueError):
        steps_to_edge(0.0, 1.0, precision=0.0)


def test_a_profile_may_relax_the_time_precision_and_the_report_says_so(
        registry: Registry) -> None:
    from jobconform.conformance.aim import precision_notes
    from jobconform.spec import MICROSECOND

    canonical = registry.profile("canonical")
    assert canonical.time_precision_seconds == MICROSECOND
    assert precision_notes(canonical) == ()
    milliseconds = replace(canonical, name="ms-store", time_precision_seconds=0.001)
    [note] = precision_notes(milliseconds)
    assert "'ms-store' declares a time precision of 0.001 s" in note
    assert "LC-005" in note


def test_steps_to_edge_land_exactly_on_the_clock() -> None:
    """The landings are whole microseconds on the virtual clock, whatever the float sums."""
    from datetime import timedelta

    from jobconform.conformance.aim import steps_to_edge
    from jobconform.conformance.clock import VirtualClock

    for elapsed, boundary in ((0.0, 0.1), (0.3, 86_400.0), (1.5, 3600.0), (0.0, 0.0)):
        clock = VirtualClock()
        start = clock.now()
        clock.advance(elapsed)
        landed = []
        for step in steps_to_edge(elapsed, boundary):
            clock.advance(step)
            landed.append(clock.now() - start)
        assert landed[-2:] == [timedelta(seconds=boundary),
                               timedelta(seconds=boundary, microseconds=1)]


def test_steps_onto_stop_a_microsecond_short_then_land_on_the_boundary() -> None:
    from jobconform.conformance.aim import steps_onto

    assert steps_onto(0.0, 30.0) == (29.999999, 0.000001)
    assert steps_onto(0.0, 0.0) == (0.0,)  # a boundary at the start: straight onto it
    assert steps_onto(40.0, 30.0) == ()


def test_spec_check_fails_when_a_seed_leaves_a_requirement_unreached(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from jobconform.conformance import seed_coverage
    from jobconform.conformance.seed_coverage import MachineSeeds

    def measure(*args: object, **kwargs: object) -> list[MachineSeeds]:
        return [MachineSeeds("loops machine", "canonical", ("LP-009",),
                             reached={0: frozenset({"LP-009"}), 1: frozenset()},
                             seconds={0: 1.0, 1: 1.0})]

    monkeypatch.setattr(seed_coverage, "measure", measure)
    result = CliRunner().invoke(main, ["spec", "check", "--no-run", "--seeds", "0-1"])
    assert result.exit_code == 1
    assert ("LP-009: the loops machine (canonical) does not reach it on seed(s) 1; aim a rule"
            " at it") in result.output


def test_the_loops_timing_rule_crosses_timeout_and_delay(registry: Registry) -> None:
    """The aimed rule alone reaches LP-008, LP-009 and LP-016, whatever else a seed draws."""
    from jobconform.backends.loading import load_backend
    from jobconform.conformance.loops.machine import make_loops_machine
    from jobconform.conformance.machine_runner import MachineRun
    from jobconform.reference.loops.oracle import Respond

    run = MachineRun()
    machine_type = make_loops_machine(load_backend("memory"), registry.profile("canonical"),
                                      registry, run)
    machine: object = machine_type()
    try:
        machine.timing_edges(Respond("a", 0.25), 5)  # type: ignore[attr-defined]
    finally:
        machine.teardown()  # type: ignore[attr-defined]
    assert run.divergence is None
    assert {"LP-008", "LP-009", "LP-016"} <= run.exercised
    steps = [c for c in machine.harness.commands]  # type: ignore[attr-defined]
    waits = [c.seconds for c in steps if hasattr(c, "seconds")]
    # A microsecond before the 30 s timeout, on it and past it; the run fails there, at
    # 30.000001 s, and the next one starts 5 s later: a microsecond before, on and past.
    assert waits == [29.999999, 1e-06, 1e-06, 4.999998, 1e-06, 1e-06]
