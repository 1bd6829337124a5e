"""Known deviations as data: a broken backend with two deviations, and its list.

The suites run once against `two_deviations`; the verdicts are then judged against
several lists, which is what `--expected-failures` does after the run.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from jobconform.conformance.cli import main
from jobconform.conformance.compare import listed_reason
from jobconform.conformance.expectations import (
    ExpectationsError,
    ExpectedFailure,
    load_expectations,
    parse_expectations,
)
from jobconform.conformance.gallery.deviations import DEVIATIONS_FILE, TWO_DEVIATIONS
from jobconform.conformance.report import EXPECTED_FAILURE, FAIL, RunSummary, to_json
from jobconform.conformance.runner import RunConfig, SuiteRun, run_suites
from jobconform.spec import Registry

LISTED = load_expectations(DEVIATIONS_FILE)


@pytest.fixture(scope="module")
def runs(registry: Registry, tmp_path_factory: pytest.TempPathFactory) -> list[SuiteRun]:
    config = RunConfig(backend=TWO_DEVIATIONS, profile="canonical",
                       work_dir=tmp_path_factory.mktemp("two"))
    return run_suites(config, registry)


def judged(runs: list[SuiteRun], expected: dict[str, ExpectedFailure]) -> RunSummary:
    capabilities = frozenset({"lifecycle", "retry", "stuck"})
    return RunSummary(TWO_DEVIATIONS, "canonical", capabilities, "x", 0, runs, expected)


def with_verdict(summary: RunSummary, registry: Registry, verdict: str) -> set[str]:
    return {rid for rid, row in summary.verdicts(registry).items() if verdict in row.values()}


def test_the_listed_deviations_are_reported_as_expected_and_the_run_passes(
        runs: list[SuiteRun], registry: Registry) -> None:
    summary = judged(runs, LISTED)
    assert with_verdict(summary, registry, EXPECTED_FAILURE) == set(LISTED)
    assert with_verdict(summary, registry, FAIL) == set()
    assert summary.expectation_problems(registry) == []
    assert not summary.failed(registry)


def test_an_unlisted_deviation_fails_the_run(runs: list[SuiteRun], registry: Registry) -> None:
    retry_only = {rid: e for rid, e in LISTED.items() if rid.startswith("RT-")}
    summary = judged(runs, retry_only)
    assert summary.failed(registry)
    assert with_verdict(summary, registry, FAIL) == {"ST-003"}
    assert with_verdict(summary, registry, EXPECTED_FAILURE) == set(retry_only)


def test_without_a_list_every_deviation_fails(runs: list[SuiteRun], registry: Registry) -> None:
    summary = judged(runs, {})
    assert summary.failed(registry)
    scenario_suites = [run for run in runs if run.suite != "hypothesis"]
    assert with_verdict(judged(scenario_suites, {}), registry, FAIL) == set(LISTED)
    # The machine's divergence fails its primary only; what it exercised passes.
    assert with_verdict(summary, registry, FAIL) == set(LISTED)


def test_a_stale_entry_fails_the_run(runs: list[SuiteRun], registry: Registry) -> None:
    stale = {**LISTED, "LC-999": ExpectedFailure("LC-999", "renamed long ago")}
    summary = judged(runs, stale)
    assert summary.failed(registry)
    [problem] = summary.expectation_problems(registry)
    assert problem.startswith("LC-999: stale entry")


def test_an_unexpected_pass_fails_the_run(runs: list[SuiteRun], registry: Registry) -> None:
    passing = {**LISTED, "LC-011": ExpectedFailure("LC-011", "was broken in 1.x")}
    summary = judged(runs, passing)
    assert summary.failed(registry)
    [problem] = summary.expectation_problems(registry)
    assert problem.startswith("LC-011: unexpected pass")
    assert to_json(summary, registry)["expectation_problems"] == [problem]


def test_the_command_line_reads_the_file_and_passes(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [
        "run", "--backend", TWO_DEVIATIONS, "--suite", "behave", "--suite", "robot",
        "--expected-failures", str(DEVIATIONS_FILE), "--report-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "EXPECTED FAILURE ST-003" in result.output
    suites = ET.parse(tmp_path / "junit.xml").getroot().findall("testsuite")
    assert [s.get("failures") for s in suites] == ["0", "0"]
    assert all(int(s.get("skipped", "0")) > 0 for s in suites)
    skipped = suites[0].find("testcase/skipped")
    assert skipped is not None and "expected failure (" in skipped.get("message", "")
    stale = tmp_path / "stale.yaml"
    stale.write_text(DEVIATIONS_FILE.read_text() + "XY-123:\n  reason: gone\n")
    # Refused before anything runs: no suite starts, no report is written.
    result = CliRunner().invoke(main, [
        "run", "--backend", TWO_DEVIATIONS, "--suite", "behave",
        "--expected-failures", str(stale), "--report-dir", str(tmp_path / "stale")])
    assert result.exit_code == 2, result.output
    assert "XY-123: stale entry, the spec" in result.output
    assert not (tmp_path / "stale").exists()


@pytest.mark.parametrize(("text", "complaint"), [
    ("LC-001:\n  reason: a\nLC-001:\n  reason: b\n",
     "'LC-001' is listed twice (lines 1 and 3)"),
    ("LC-001:\n  reason: a\n  link: not a url\n", "does not match '^https?://"),
])
def test_a_file_listing_an_id_twice_or_a_link_that_is_no_url_is_refused(
        tmp_path: Path, text: str, complaint: str) -> None:
    listed = tmp_path / "expected.yaml"
    listed.write_text(text)
    result = CliRunner().invoke(main, ["run", "--expected-failures", str(listed),
                                       "--report-dir", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert complaint in result.output
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(("document", "complaint"), [
    ({"LC-001": {}}, "'reason' is a required property"),
    ({"LC-001": {"reason": "x", "ticket": 3}}, "Additional properties"),
    ({"not an id": {"reason": "x"}}, "does not match"),
    (["LC-001"], "is not of type 'object'"),
    ({"LC-001": {"reason": "x", "suites": []}}, "should be non-empty"),
    ({"LC-001": {"reason": "x", "suites": ["pytest"]}}, "is not one of"),
    ({"LC-001": {"reason": "x", "suites": ["robot", "robot"]}}, "non-unique"),
])
def test_a_malformed_list_is_refused_with_what_to_fix(document: object, complaint: str) -> None:
    with pytest.raises(ExpectationsError,
                       match=re.escape("reason: text, link: optional http(s) URL")) as error:
        parse_expectations(document, "deviations.yaml")
    assert complaint in str(error.value)


def test_an_empty_file_lists_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "none.yaml"
    empty.write_text("# nothing known\n")
    assert load_expectations(empty) == {}
    with pytest.raises(ExpectationsError, match="cannot read"):
        load_expectations(tmp_path / "missing.yaml")


def scoped(entries: dict[str, ExpectedFailure], *suites: str) -> dict[str, ExpectedFailure]:
    return {rid: replace(entry, suites=frozenset(suites)) for rid, entry in entries.items()}


def test_an_entry_limited_to_some_suites_excuses_its_failures_there_only(
        runs: list[SuiteRun], registry: Registry) -> None:
    everywhere = judged(runs, scoped(LISTED, "behave", "robot", "hypothesis"))
    assert everywhere.verdicts(registry) == judged(runs, LISTED).verdicts(registry)
    assert not everywhere.failed(registry)
    behave_only = judged(runs, scoped(LISTED, "behave"))
    for rid in LISTED:
        row = behave_only.verdicts(registry)[rid]
        assert row["behave"] == EXPECTED_FAILURE
        assert FAIL in {row["robot"], row["hypothesis"]}
    assert behave_only.expectation_problems(registry) == []
    assert behave_only.failed(registry)  # the failures in Robot or Hypothesis are failures


def test_an_entry_limited_to_suites_that_pass_it_is_an_unexpected_pass(
        runs: list[SuiteRun], registry: Registry) -> None:
    passing = {**LISTED, "LC-011": ExpectedFailure("LC-011", "machine only",
                                                   suites=frozenset({"hypothesis"}))}
    [problem] = judged(runs, passing).expectation_problems(registry)
    assert problem.startswith("LC-011: unexpected pass")
    # Not checked in a run that leaves out every suite it names.
    scenarios = [run for run in runs if run.suite != "hypothesis"]
    assert "LC-011" not in " ".join(judged(scenarios, passing).expectation_problems(registry))


def test_the_suites_of_an_entry_are_read_and_kept_in_the_report(
        runs: list[SuiteRun], registry: Registry) -> None:
    parsed = parse_expectations({"RT-009": {"reason": "x", "suites": ["robot", "behave"]}},
                                "deviations.yaml")
    assert parsed["RT-009"].suites == frozenset({"behave", "robot"})
    assert parsed["RT-009"].applies_to("robot") and not parsed["RT-009"].applies_to("hypothesis")
    assert LISTED["RT-009"].suites is None and LISTED["RT-009"].applies_to("hypothesis")
    document = to_json(judged(runs, {**LISTED, **parsed}), registry)
    assert document["expected_failures"]["RT-009"]["suites"] == ["behave", "robot"]
    assert "suites" not in document["expected_failures"]["ST-003"]
    assert listed_reason(document["expected_failures"]["RT-009"]) == (
        "x (listed for behave, robot only)")


def test_the_command_line_tolerates_a_limited_entry_in_its_suites_only(tmp_path: Path) -> None:
    limited = tmp_path / "robot-only.yaml"
    limited.write_text(DEVIATIONS_FILE.read_text().replace("  reason:", "  suites: [robot]\n"
                                                           "  reason:"))
    assert all(e.suites == {"robot"} for e in load_expectations(limited).values())
    result = CliRunner().invoke(main, [
        "run", "--backend", TWO_DEVIATIONS, "--suite", "behave", "--suite", "robot",
        "--expected-failures", str(limited), "--report-dir", str(tmp_path / "r"),
        "--markdown", str(tmp_path / "summary.md")])
    assert result.exit_code == 1, result.output
    assert "EXPECTED FAILURE ST-003 [robot only]" in result.output
    assert "- **ST-003** (robot only): " in (tmp_path / "summary.md").read_text()
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["requirements"]["ST-003"]["suites"] == {"behave": FAIL,
                                                         "robot": EXPECTED_FAILURE}
    behave = next(s for s in report["suites"] if s["suite"] == "behave")
    # Not tolerated in Behave: its case stopped at the deviation instead of running past it.
    assert not any("ran to its end past" in case["message"] for case in behave["cases"])
