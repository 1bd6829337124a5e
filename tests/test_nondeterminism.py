"""A backend that answers the same commands differently gets a verdict of its own,
"nondeterministic backend", with both runs, and blames no requirement."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from jobconform.backends.loading import load_backend
from jobconform.conformance import tolerance
from jobconform.conformance.cli import main
from jobconform.conformance.compare import build_matrix
from jobconform.conformance.compare import to_markdown as compare_markdown
from jobconform.conformance.expectations import ExpectedFailure
from jobconform.conformance.lifecycle.machine import run_lifecycle_machine
from jobconform.conformance.machine_runner import shared_prefix
from jobconform.conformance.report import RunSummary, console_table, read_report
from jobconform.conformance.runner import CaseResult, SuiteRun
from jobconform.reference.commands import describe
from jobconform.spec import load_registry

ALTERNATING = "jobconform.conformance.gallery.nondeterministic:alternating_cancel"
ALTERNATING_OPEN = "jobconform.conformance.gallery.nondeterministic:alternating_open"


def test_a_replay_that_behaves_differently_is_recorded_with_both_runs() -> None:
    registry = load_registry()
    run = run_lifecycle_machine(load_backend(ALTERNATING), registry.profile("canonical"),
                                registry, seed=0, examples=50)
    found = run.nondeterminism
    assert found is not None and run.divergence is None
    assert found.hypothesis_says.startswith("Flaky")
    # The first run diverged on the alternating answer; the replay of the same commands
    # got the other answer and passed them all.
    assert found.first.divergence is not None
    assert found.first.divergence.primary == "LC-015"
    assert describe(found.first.commands[-1]).startswith("Cancel(")
    assert found.replay.divergence is None
    assert [describe(c) for c in found.replay.commands] == [
        describe(c) for c in found.first.commands]


def test_the_memory_backend_is_not_called_nondeterministic() -> None:
    registry = load_registry()
    run = run_lifecycle_machine(load_backend("memory"), registry.profile("canonical"),
                                registry, seed=0, examples=50)
    assert run.nondeterminism is None and run.divergence is None


def test_the_report_gives_the_backend_the_verdict_and_blames_no_requirement(
        tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [
        "run", "--backend", ALTERNATING, "--suite", "hypothesis", "--examples", "50",
        "--report-dir", str(tmp_path), "--markdown", str(tmp_path / "summary.md")])
    assert result.exit_code == 1  # a verdict that cannot be reproduced is not a pass
    assert "NONDETERMINISTIC BACKEND lifecycle machine" in result.output
    # The machine's progress line says so too, not "DIVERGED" (no divergence from the spec).
    assert "steps, NONDETERMINISTIC BACKEND" in result.output
    document = read_report(tmp_path / "report.json")  # valid against the schema
    [case] = document["suites"][0]["cases"]  # type: ignore[index]
    assert case["nondeterministic"] is True and case["blamed"] == []
    assert "first run (diverged" in case["message"] and "replay (passed" in case["message"]
    # LC-015, the answer that alternated, is not failed: what the machine covered was not
    # checked, so it is blocked.
    requirements = document["requirements"]
    assert requirements["LC-015"]["suites"] == {"hypothesis": "blocked"}  # type: ignore[index]
    assert not any("fail" in body["suites"].values()  # type: ignore[attr-defined]
                   for body in requirements.values())  # type: ignore[attr-defined]
    [trace] = case["artifacts"]
    both = json.loads(Path(trace).read_text())
    assert both["verdict"] == "nondeterministic backend"
    assert both["first"]["divergence"]["primary"] == "LC-015"
    assert both["replay"]["divergence"] is None
    assert both["replay"]["commands"] == both["first"]["commands"]
    markdown = (tmp_path / "summary.md").read_text()
    assert "- nondeterministic backend: hypothesis: lifecycle machine" in markdown
    # The comparison page says it of the run, and the blocked cells show both runs.
    matrix = build_matrix([str(tmp_path / "report.json")])
    assert "| ❌ fail (nondeterministic backend) |" in compare_markdown(matrix)
    cell = next(row for row in matrix.rows if row.requirement == "LC-015").cells[0]
    assert cell.verdict == "blocked" and "replay (passed" in cell.message


def test_no_deviation_file_excuses_a_nondeterministic_backend() -> None:
    # Even with every requirement the machine covered listed, the backend's verdict stands.
    registry = load_registry()
    case = CaseResult("hypothesis", "lifecycle machine", ("LC-015",), False, "two runs",
                      nondeterministic=True)
    listed = {"LC-015": ExpectedFailure("LC-015", "cancel of an ended job answers true")}
    summary = RunSummary("b", "canonical", frozenset({"lifecycle"}), registry.version, 0,
                         [SuiteRun("hypothesis", 0.1, [case])], listed)
    assert not summary.excused(case)
    assert summary.failed(registry)
    assert "NONDETERMINISTIC BACKEND lifecycle machine" in console_table(summary, registry)


def test_a_merged_campaign_keeps_the_verdict() -> None:
    # `jobconform merge` reads each shard's cases back from its report.json.
    from jobconform.conformance.campaign import _case
    from jobconform.conformance.report import to_json

    registry = load_registry()
    case = CaseResult("hypothesis", "lifecycle machine", ("LC-015",), False, "two runs",
                      artifacts=("traces/lifecycle-machine-nondeterministic.json",),
                      nondeterministic=True)
    summary = RunSummary("b", "canonical", frozenset({"lifecycle"}), registry.version, 0,
                         [SuiteRun("hypothesis", 0.1, [case])])
    [written] = to_json(summary, registry)["suites"][0]["cases"]  # type: ignore[index]
    assert _case(written) == case


def test_a_first_run_that_raised_before_its_first_command_says_what_it_raised(
        tmp_path: Path) -> None:
    # A runtime that sometimes cannot open (a broker refusing a connection under load):
    # the example that met it raised, the replay passed; the message says what was raised,
    # not "passed, 0 commands".
    result = CliRunner().invoke(main, [
        "run", "--backend", ALTERNATING_OPEN, "--suite", "hypothesis", "--examples", "20",
        "--report-dir", str(tmp_path)])
    assert result.exit_code == 1
    document = read_report(tmp_path / "report.json")
    [case] = document["suites"][0]["cases"]  # type: ignore[index]
    assert case["nondeterministic"] is True, case["message"]
    assert "first run (raised AdapterError:" in case["message"], case["message"]
    assert "the broker refused the connection" in case["message"]
    [trace] = case["artifacts"]
    assert "the broker refused" in json.loads(Path(trace).read_text())["first"]["raised"]



LOST_CANCEL = "jobconform.conformance.gallery.nondeterministic:lost_cancel"
# The lost cancel's divergences: listed, the oracle adopts the job still running, and the
# machine's next rules follow the alternation (cancel_running's precondition).
LOST_CANCEL_LISTED = ("LC-013", "LC-014")
LOST_CANCEL_SEED = 2  # a seed whose examples meet the inconsistency within 100


def test_choices_that_draw_other_rules_after_a_listed_deviation_show_both_runs() -> None:
    # Hypothesis finds no failure to replay: a later example made the same choices as an
    # earlier one and drew differently ("inconsistent data generation"). Both are shown.
    registry = load_registry()
    with tolerance.tolerating(LOST_CANCEL_LISTED):
        run = run_lifecycle_machine(load_backend(LOST_CANCEL), registry.profile("canonical"),
                                    registry, seed=LOST_CANCEL_SEED, examples=100)
    found = run.nondeterminism
    assert found is not None and run.divergence is None
    assert found.hypothesis_says.startswith("FlakyStrategyDefinition"), found.hypothesis_says
    first, replay = found.first.commands, found.replay.commands
    assert first and replay
    # The two made the same choices up to where the lost cancel led them apart: the same
    # commands up to there, and a cancel among them.
    agreed = shared_prefix(first, replay)
    assert agreed > 0 and first != replay
    assert any(describe(c).startswith("Cancel(") for c in first[:agreed])


def test_the_reproducer_of_choices_that_drew_differently_holds_both_runs(
        tmp_path: Path) -> None:
    listed = tmp_path / "listed.yaml"
    listed.write_text("".join(f"{rid}:\n  reason: a cancel lost to the worker\n"
                              for rid in LOST_CANCEL_LISTED), encoding="utf-8")
    result = CliRunner().invoke(main, [
        "run", "--backend", LOST_CANCEL, "--suite", "hypothesis", "--examples", "100",
        "--seed", str(LOST_CANCEL_SEED), "--expected-failures", str(listed),
        "--report-dir", str(tmp_path)])
    assert result.exit_code == 1
    document = read_report(tmp_path / "report.json")
    [case] = [c for c in document["suites"][0]["cases"]  # type: ignore[index]
              if c["nondeterministic"]]
    assert "FlakyStrategyDefinition" in case["message"], case["message"]
    assert "first run (passed, 0 commands)" not in case["message"]
    assert "the two runs agree on their first" in case["message"]
    [trace] = case["artifacts"]
    both = json.loads(Path(trace).read_text())
    assert both["first"]["commands"] and both["replay"]["commands"]
    assert both["first"]["commands"] != both["replay"]["commands"]
