"""Verdicts: a requirement passes only when covered and never failed or blamed."""

from __future__ import annotations

import pytest

from jobconform.conformance.expectations import ExpectedFailure
from jobconform.conformance.report import RunSummary, console_table
from jobconform.conformance.runner import CaseResult, SuiteRun, blamed_requirements
from jobconform.spec import Registry, load_registry


def summary(cases: list[CaseResult], capabilities: frozenset[str] = frozenset({"lifecycle"})
            ) -> RunSummary:
    return RunSummary("b", "canonical", capabilities, "0.1.0", 0, [SuiteRun("behave", 0.1,
                                                                           cases)])


def covering_all(registry: Registry) -> list[CaseResult]:
    return [CaseResult("behave", rid, (rid,), True) for rid in registry.ids()]


def test_all_covered_and_passing_passes(registry: Registry) -> None:
    run = summary(covering_all(registry))
    assert not run.failed(registry)
    assert set(run.verdicts(registry)["LC-001"].values()) == {"pass"}


def test_uncovered_requirement_is_untested_and_fails_the_run(registry: Registry) -> None:
    run = summary([case for case in covering_all(registry) if case.name != "LC-001"])
    assert run.verdicts(registry)["LC-001"]["behave"] == "untested"
    assert run.failed(registry)


def test_the_primary_fails_even_when_its_own_cases_pass(registry: Registry) -> None:
    # A case covering LC-002 stopped at a divergence whose primary is LC-003, with LC-011
    # only involved: LC-003 fails; LC-002 and LC-011 pass, other cases proved them.
    failing = CaseResult("behave", "x", ("LC-002",), False, "boom", ("LC-003", "LC-011"))
    cases = [*covering_all(registry), failing]
    verdicts = summary(cases).verdicts(registry)
    assert verdicts["LC-003"]["behave"] == "fail"
    assert verdicts["LC-002"]["behave"] == "pass"
    assert verdicts["LC-011"]["behave"] == "pass"
    assert verdicts["LC-004"]["behave"] == "pass"


def test_a_requirement_only_a_stopped_case_covers_is_blocked(registry: Registry) -> None:
    failing = CaseResult("behave", "x", ("LC-002",), False, "boom", ("LC-003",))
    cases = [case for case in covering_all(registry) if case.name != "LC-002"]
    verdicts = summary([*cases, failing]).verdicts(registry)
    assert verdicts["LC-002"]["behave"] == "blocked"
    assert verdicts["LC-003"]["behave"] == "fail"


def test_a_case_that_ran_past_listed_deviations_proves_the_rest(registry: Registry) -> None:
    ran_on = CaseResult("behave", "x", ("LC-002", "LC-003"), False, "listed", ("LC-003",),
                        completed=True)
    cases = [case for case in covering_all(registry) if case.name != "LC-002"]
    listed = {"LC-003": ExpectedFailure("LC-003", "known")}
    run = RunSummary("b", "canonical", frozenset({"lifecycle"}), "0.1.0", 0,
                     [SuiteRun("behave", 0.1, [*cases, ran_on])], listed)
    verdicts = run.verdicts(registry)
    assert verdicts["LC-002"]["behave"] == "pass"
    assert verdicts["LC-003"]["behave"] == "expected failure"


def test_areas_outside_the_profile_are_not_applicable(registry: Registry) -> None:
    profile = next(p for p in registry.profiles.values() if "retry" not in p.areas)
    run = RunSummary("b", profile.name, frozenset({"lifecycle", "retry"}), "0.1.0", 0,
                     [SuiteRun("behave", 0.1, covering_all(registry))])
    verdicts = run.verdicts(registry)
    assert set(verdicts["RT-001"].values()) == {"n/a"}
    assert set(verdicts["CB-001"].values()) == ({"n/a"} if "breaker" not in profile.areas
                                                else {"not claimed"})


def test_unclaimed_area_is_never_a_pass(registry: Registry) -> None:
    run = summary(covering_all(registry), capabilities=frozenset())
    assert set(run.verdicts(registry)["LC-001"].values()) == {"not claimed"}
    assert "0 passed" in console_table(run, registry)


def test_a_tag_naming_no_requirement_fails_the_run(registry: Registry) -> None:
    run = summary([*covering_all(registry), CaseResult("behave", "old", ("LC-999",), True)])
    assert run.unknown_tags(registry) == ["behave: old names unknown LC-999"]
    assert run.failed(registry)
    assert "STALE TAG" in console_table(run, registry)


def test_blamed_requirements_are_read_from_the_divergence_line() -> None:
    message = "diverges\n  requirement(s): LC-013 (Cancel ...), LC-025 (Outcome counters)\n LC-001"
    assert blamed_requirements(message) == ("LC-013", "LC-025")
    assert blamed_requirements("no such line LC-001") == ()


# -- published schema, Markdown, progress, rerun ----------------------------------------------

import json  # noqa: E402
from pathlib import Path  # noqa: E402

from click.testing import CliRunner  # noqa: E402

from jobconform.backends.loading import load_backend  # noqa: E402
from jobconform.conformance.applicability import unclaimed  # noqa: E402
from jobconform.conformance.cli import main  # noqa: E402
from jobconform.conformance.report import (  # noqa: E402
    ReportError,
    read_report,
    to_json,
    to_markdown,
    validate_report,
)

BROKEN = "jobconform.conformance.lifecycle.gallery:cancel_always_true"


def test_the_json_report_matches_its_published_schema(registry: Registry) -> None:
    document = to_json(summary(covering_all(registry)), registry)
    validate_report(document)
    with pytest.raises(ReportError, match="at verdict"):
        validate_report({**document, "verdict": "maybe"})
    with pytest.raises(ReportError, match="'counts' is a required property"):
        validate_report({k: v for k, v in document.items() if k != "counts"})


def test_markdown_puts_failures_first_and_folds_the_passes(registry: Registry) -> None:
    failing = CaseResult("behave", "x | y", ("LC-002",), False, "boom", ("LC-002",))
    text = to_markdown(summary([*covering_all(registry), failing]), registry)
    assert text.startswith("## jobconform: ❌ FAIL")
    attention = text.split("### Needs attention")[1].split("<details>")[0]
    assert "| LC-002 | MUST |" in attention and "LC-001" not in attention
    # The run claims `lifecycle` alone: a requirement needing more (LC-029's health
    # report) is not claimed.
    lifecycle = [r for r in registry.requirements
                 if r.area == "lifecycle" and "canonical" in r.profiles and not r.needs]
    assert f"{len(lifecycle) - 1} requirements pass in every suite" in text
    assert "⬜ not claimed" in attention  # the unclaimed areas are shown, never passed
    assert "behave: x \\| y" in text  # a pipe in a name cannot break the table


def test_a_run_writes_markdown_the_step_summary_and_progress(tmp_path: Path) -> None:
    step_summary = tmp_path / "step.md"
    step_summary.write_text("earlier step\n")
    result = CliRunner().invoke(
        main, ["run", "--backend", BROKEN, "--suite", "behave",
               "--report-dir", str(tmp_path), "--markdown", str(tmp_path / "summary.md")],
        env={"GITHUB_STEP_SUMMARY": str(step_summary)})
    assert result.exit_code == 1
    assert "[1/1] behave: running against" in result.stderr
    assert "failed" in result.stderr.splitlines()[-1]
    markdown = (tmp_path / "summary.md").read_text()
    assert "| LC-015 | MUST |" in markdown
    assert step_summary.read_text() == "earlier step\n" + markdown
    read_report(tmp_path / "report.json")


def _unselected(rid: str, verdict: str) -> set[str]:
    """The verdict of a requirement a run left out, on BROKEN (memory, canonical)."""
    requirement = load_registry().requirement(rid)
    if "canonical" not in requirement.profiles:
        return {"n/a"}
    if unclaimed(requirement, load_backend(BROKEN).capabilities) is not None:
        return {"not claimed"}
    return {verdict}


def test_rerun_failed_runs_only_what_failed(tmp_path: Path) -> None:
    first = tmp_path / "first"
    CliRunner().invoke(main, ["run", "--backend", BROKEN, "--suite", "behave",
                              "--report-dir", str(first)])
    earlier = json.loads((first / "report.json").read_text())
    failed = {rid for rid, body in earlier["requirements"].items()
              if "fail" in body["suites"].values()}
    assert "LC-015" in failed
    second = tmp_path / "second"
    result = CliRunner().invoke(main, ["run", "--rerun-failed", str(first / "report.json"),
                                       "--suite", "behave", "--report-dir", str(second)])
    assert result.exit_code == 1
    rerun = json.loads((second / "report.json").read_text())
    assert rerun["backend"] == BROKEN and set(rerun["rerun_of"]) == failed
    for rid, body in rerun["requirements"].items():
        if rid not in failed:
            # A requirement outside the profile is n/a, and one of an area the backend
            # does not claim (self-running: memory keeps the commanded mode) not claimed,
            # whatever was selected.
            assert set(body["suites"].values()) == _unselected(rid, "not rerun"), rid
    for before, after in zip(earlier["suites"], rerun["suites"], strict=True):
        assert 0 < len(after["cases"]) < len(before["cases"])
        for case in after["cases"]:
            assert set(case["requirements"]) & failed, case["name"]


def test_rerun_refuses_a_file_that_is_not_a_report(tmp_path: Path) -> None:
    bogus = tmp_path / "report.json"
    bogus.write_text('{"verdict": "pass"}')
    result = CliRunner().invoke(main, ["run", "--rerun-failed", str(bogus)])
    assert result.exit_code == 1
    assert "does not match report.schema.json" in result.output


def test_a_run_that_checked_nothing_fails(registry: Registry) -> None:
    empty = summary([], capabilities=frozenset())
    assert empty.nothing_checked() and empty.failed(registry)
    assert "NOTHING CHECKED" in console_table(empty, registry)


def test_behave_results_cut_off_by_the_hang_watchdog_are_no_results(tmp_path: Path) -> None:
    # The watchdog ends a hung behave at once, so its JSON file may stop mid-write; the
    # run then reports the hang from the log instead of failing on the JSON.
    from jobconform.conformance.runner import _read_behave_results

    cut = tmp_path / "cut.json"
    cut.write_text('[{"name": "Lifecycle", "elements": [{"keyword": "Sce', encoding="utf-8")
    whole = tmp_path / "whole.json"
    whole.write_text('[{"name": "Lifecycle", "elements": []}]', encoding="utf-8")
    assert _read_behave_results(cut) is None
    assert _read_behave_results(tmp_path / "missing.json") is None
    assert _read_behave_results(whole) == [{"name": "Lifecycle", "elements": []}]


def test_area_runs_only_that_area_and_reports_the_rest_as_not_run(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--backend", BROKEN, "--suite", "behave",
                                       "--area", "stuck", "--report-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    for rid, body in report["requirements"].items():
        expected = {"pass"} if body["area"] == "stuck" else _unselected(rid, "not run")
        assert set(body["suites"].values()) == expected, rid
    one = CliRunner().invoke(main, ["run", "--backend", BROKEN, "--suite", "behave",
                                    "--requirement", "LC-015", "--report-dir",
                                    str(tmp_path / "one")])
    assert one.exit_code == 1
    assert "[LC-015]" in one.output


def test_blocked_and_untested_are_counted_per_suite(registry: Registry) -> None:
    # Behave passes everything; the machine stopped early at LC-003, blocking the other
    # requirements it covers. The folded totals count them as passes (Behave checked them),
    # but the Hypothesis column's 'blocked' is shown beside them, in every report format.
    machine = CaseResult("hypothesis", "lifecycle machine", ("LC-001", "LC-002", "LC-003"),
                         False, "boom", ("LC-003",))
    lifecycle = [r.id for r in registry.requirements
                 if r.area == "lifecycle" and "canonical" in r.profiles and not r.needs]
    run = RunSummary("b", "canonical", frozenset({"lifecycle"}), "0.1.0", 0,
                     [SuiteRun("behave", 0.1, covering_all(registry)),
                      SuiteRun("hypothesis", 0.1, [machine])])
    verdicts = run.verdicts(registry)
    assert verdicts["LC-004"] == {"behave": "pass", "hypothesis": "blocked"}
    # All but LC-003, which fails, and LC-001 and LC-002, which the machine exercised.
    blocked = len(lifecycle) - 3
    document = to_json(run, registry)
    validate_report(document)
    assert document["counts"]["blocked"] == 0  # type: ignore[index]
    assert document["suite_counts"] == {"behave": {"blocked": 0, "untested": 0},
                                        "hypothesis": {"blocked": blocked, "untested": 0}}
    line = f"per suite: blocked in hypothesis {blocked}"
    assert line in console_table(run, registry).splitlines()[-1]
    assert line in to_markdown(run, registry)
    with pytest.raises(ReportError, match="suite_counts"):
        validate_report({**document, "suite_counts": {"hypothesis": {"blocked": -1,
                                                                     "untested": 0}}})


def test_nothing_per_suite_is_shown_when_every_suite_checked_everything(
        registry: Registry) -> None:
    run = summary(covering_all(registry))
    assert "per suite" not in console_table(run, registry)


# -- the libraries a backend wraps ---------------------------------------------------------------


def test_the_report_names_the_versions_of_the_libraries_a_backend_wraps() -> None:
    from importlib import metadata

    from jobconform.conformance.report import NOT_INSTALLED, library_versions

    class Declared:
        name, libraries = "mine", ("click", "no-such-distribution")

    class NamedAsItsLibrary:  # an adapter named after the library it wraps, as the examples
        name = "hypothesis"

    class NoLibrary:
        name = "memory"

    class Garbage:
        name, libraries = "mine", "click"

    class SaysItsVersions:  # a process child's, from its handshake
        name, libraries = "process:node-p-queue", {"p-queue": "8.1.1"}

    class MistypedVersions:
        name, libraries = "mine", {"p-queue": 8}

    assert library_versions(Declared) == {"click": metadata.version("click"),
                                          "no-such-distribution": NOT_INSTALLED}
    assert library_versions(NamedAsItsLibrary) == {"hypothesis": metadata.version("hypothesis")}
    assert library_versions(NoLibrary) == {}
    assert library_versions(SaysItsVersions) == {"p-queue": "8.1.1"}
    with pytest.raises(ValueError, match="`libraries` must be a tuple of distribution names"):
        library_versions(Garbage)
    with pytest.raises(ValueError, match="must map names to version strings"):
        library_versions(MistypedVersions)
