"""Minimal reproducers: a divergence the machine finds on a gallery backend becomes a trace
and a .feature; both replay the failure there and pass on the memory backend."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from jobconform.backends.loading import load_backend
from jobconform.conformance.cli import main
from jobconform.conformance.partial_claims import LIFECYCLE_ONLY
from jobconform.conformance.trace import (
    TraceError,
    gherkin_step,
    parse_trace,
    read_trace,
    replay,
    to_gherkin,
)
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.spec import load_registry

BROKEN = "jobconform.conformance.lifecycle.gallery:late_completion"


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report folder of a Hypothesis run that found late_completion's bug."""
    folder = tmp_path_factory.mktemp("found")
    result = CliRunner().invoke(main, ["run", "--backend", BROKEN, "--suite", "hypothesis",
                                       "--examples", "50", "--report-dir", str(folder)])
    assert result.exit_code == 1, result.output
    return folder


def test_the_machine_writes_a_trace_and_a_feature(found: Path) -> None:
    report = json.loads((found / "report.json").read_text())
    [case] = [c for c in report["suites"][0]["cases"] if c["name"].startswith("lifecycle machine")]
    trace_path, feature_path = (Path(p) for p in case["artifacts"])
    trace = read_trace(trace_path)
    assert (trace.backend, trace.profile, trace.seed) == (BROKEN, "canonical", 0)
    assert trace.spec_version == load_registry().version
    assert "LC-003" in trace.requirements
    assert trace.commands and isinstance(trace.commands[-1], cmd.Finish)
    assert "Scenario: Shrunk counterexample" in feature_path.read_text()


def test_the_trace_replays_the_failure_on_its_backend_and_passes_on_memory(found: Path) -> None:
    trace = found / "traces" / "lifecycle-machine.json"
    on_broken = CliRunner().invoke(main, ["replay", str(trace), "--backend", BROKEN])
    assert on_broken.exit_code == 1
    assert "DIVERGES at command" in on_broken.output and "LC-003" in on_broken.output
    on_memory = CliRunner().invoke(main, ["replay", str(trace), "--backend", "memory"])
    assert on_memory.exit_code == 0, on_memory.output
    assert "AGREES" in on_memory.output


def test_the_behave_suite_runs_traces_as_regression_scenarios(found: Path,
                                                              tmp_path: Path) -> None:
    traces = found / "traces"
    for backend, code in ((BROKEN, 1), ("memory", 0)):
        result = CliRunner().invoke(main, [
            "run", "--backend", backend, "--suite", "behave", "--regressions", str(traces),
            "--report-dir", str(tmp_path / str(code))])
        assert result.exit_code == code, result.output
        report = json.loads((tmp_path / str(code) / "report.json").read_text())
        [regression] = [c for c in report["suites"][0]["cases"]
                        if c["name"].startswith("Regression lifecycle-machine")]
        assert regression["passed"] is (code == 0)


def test_every_command_becomes_a_step_and_odd_ones_carry_their_json() -> None:
    assert gherkin_step(cmd.Submit("a")) == 'job "a" is submitted'
    assert gherkin_step(cmd.Finish("a", cmd.Raise("ValueError", "x"))) == (
        'job "a" raises ValueError "x"')
    assert gherkin_step(cmd.AdvanceTime(1.5)) == "1.5 seconds pass"
    quoted = gherkin_step(cmd.Finish("a", cmd.Raise("ValueError", 'say "hi"')))
    assert quoted.startswith("the recorded command {")
    body = json.loads(quoted.removeprefix("the recorded command ").removesuffix(" is replayed"))
    assert cmd.command_from_json(body) == cmd.Finish("a", cmd.Raise("ValueError", 'say "hi"'))


def test_a_bad_trace_is_refused_with_where_it_is_wrong(found: Path) -> None:
    document = json.loads((found / "traces" / "lifecycle-machine.json").read_text())
    with pytest.raises(TraceError, match="at format"):
        parse_trace({**document, "format": "jobconform-trace/9"}, "t.json")
    with pytest.raises(TraceError, match="command 1 does not rebuild"):
        parse_trace({**document, "commands": [{"command": "Explode"}]}, "t.json")
    bad = CliRunner().invoke(main, ["replay", str(found / "report.json")])
    assert bad.exit_code == 1 and "is not a jobconform-trace/1 trace" in bad.output


def test_replay_agrees_on_every_shipped_single_process_backend(found: Path) -> None:
    trace = read_trace(found / "traces" / "lifecycle-machine.json")
    registry = load_registry()
    for name in ("memory", "sql", "threaded"):
        outcome = replay(trace, load_backend(name), registry.profile("canonical"), registry)
        assert outcome.agreed, (name, outcome)
    # A trace that submits with a retry policy cannot run on a lifecycle-only backend.
    with_retry = replace(trace, commands=(cmd.Submit("a", retry=RetryPolicy(max_retries=1)),))
    unclaimed = replay(with_retry, load_backend(LIFECYCLE_ONLY), registry.profile("canonical"),
                       registry)
    assert unclaimed.not_checkable and "does not claim the retry area" in unclaimed.not_checkable
    assert "@regression" in to_gherkin(trace, "t")


def test_a_shipped_regression_is_skipped_where_its_area_is_not_claimed(tmp_path: Path) -> None:
    shipped = CliRunner().invoke(main, ["run", "--backend", LIFECYCLE_ONLY, "--suite", "behave",
                                        "--report-dir", str(tmp_path)])
    assert shipped.exit_code == 0, shipped.output
    feature = (tmp_path / "regressions" / "late-completion-after-cancel.feature").read_text()
    assert 'Given the backend claims the areas "retry"' in feature
    report = json.loads((tmp_path / "report.json").read_text())
    assert not [c for c in report["suites"][0]["cases"] if c["name"].startswith("Regression")]
    behave = json.loads((tmp_path / "behave.json").read_text())
    [scenario] = [s for f in behave if f["name"].startswith("Regression")
                  for s in f["elements"]]
    assert scenario["status"] == "skipped"  # never run, never passed


# -- every other area's machine (conformance/area_trace.py) ------------------------------------

AREA_ENTRIES = {
    "admission": "jobconform.conformance.admission.gallery:admission_expires_at_max_age",
    "breaker": "jobconform.conformance.breaker.gallery:breaker_open_until_at_offset",
    "composite": "jobconform.conformance.composite.gallery:composite_drains_during_pause",
    "governor": "jobconform.conformance.governor.gallery:governor_pause_at_offset",
    "idempotency": "jobconform.conformance.idempotency.gallery:stale_at_timeout",
    "loops": "jobconform.conformance.loops.gallery:loops_nan_cost_counts",
    "reminders": "jobconform.conformance.reminders.gallery:reminder_fires_early",
    "scheduling": "jobconform.conformance.scheduling.gallery:scheduling_fires_early",
    "redelivery": "jobconform.conformance.reaper.gallery:redelivery_without_cap",
    "store": "jobconform.conformance.store.gallery:store_expiry_inclusive",
}


@pytest.mark.parametrize("area", sorted(AREA_ENTRIES))
def test_an_area_machine_writes_a_trace_that_replays_and_a_feature(area: str,
                                                                   tmp_path: Path) -> None:
    from jobconform.conformance.area_trace import read_area_trace, replay_area_trace

    target = AREA_ENTRIES[area]
    result = CliRunner().invoke(main, ["run", "--backend", target, "--suite", "hypothesis",
                                       "--area", area, "--examples", "200",
                                       "--report-dir", str(tmp_path)])
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    [case] = [c for c in report["suites"][0]["cases"] if not c["passed"]]
    trace_path, feature_path = (Path(p) for p in case["artifacts"])
    trace = read_area_trace(trace_path)
    assert trace.requirements[0] == case["primary"][0]
    registry = load_registry()
    profile = registry.profile(trace.profile)
    broken = replay_area_trace(trace, load_backend(target), profile, registry)
    assert broken.divergence is not None
    assert broken.divergence.primary == trace.requirements[0]
    assert replay_area_trace(trace, load_backend("memory"), profile, registry).agreed
    assert f'Given the harness of the "{trace.machine}"' in feature_path.read_text()


def test_an_area_trace_runs_as_a_behave_regression_failing_where_it_diverged(
        tmp_path: Path) -> None:
    target = AREA_ENTRIES["idempotency"]  # a machine whose examples draw their setup
    found = tmp_path / "found"
    CliRunner().invoke(main, ["run", "--backend", target, "--suite", "hypothesis",
                              "--area", "idempotency", "--report-dir", str(found)])
    traces = tmp_path / "traces"
    traces.mkdir()
    for path in (found / "traces").glob("*.json"):
        (traces / path.name).write_text(path.read_text())
    for backend, code in ((target, 1), ("memory", 0)):
        out = tmp_path / backend.replace(":", "-")
        result = CliRunner().invoke(main, ["run", "--backend", backend, "--suite", "behave",
                                           "--area", "idempotency", "--regressions",
                                           str(traces), "--report-dir", str(out)])
        report = json.loads((out / "report.json").read_text())
        [case] = [c for c in report["suites"][0]["cases"] if c["name"].startswith("Regression")]
        assert case["passed"] is (code == 0), result.output


def test_an_area_trace_names_only_the_kits_own_classes() -> None:
    from jobconform.conformance.area_trace import AreaTraceError, decode

    with pytest.raises(AreaTraceError, match="only the kit's own classes"):
        decode({"$type": "os:system", "fields": {}})


def test_replay_takes_an_area_trace(tmp_path: Path) -> None:
    target = AREA_ENTRIES["governor"]
    CliRunner().invoke(main, ["run", "--backend", target, "--suite", "hypothesis",
                              "--area", "governor", "--report-dir", str(tmp_path)])
    [trace] = (tmp_path / "traces").glob("*.json")
    broken = CliRunner().invoke(main, ["replay", str(trace), "--backend", target])
    assert broken.exit_code == 1 and "DIVERGES at command" in broken.output
    assert "RG-008" in broken.output
    agreed = CliRunner().invoke(main, ["replay", str(trace), "--backend", "memory",
                                       "--gherkin", str(tmp_path / "again.feature")])
    assert agreed.exit_code == 0 and "AGREES" in agreed.output
    assert "the machine's recorded command" in (tmp_path / "again.feature").read_text()


def test_an_area_trace_keeps_a_str_enum_as_its_member() -> None:
    # A StrEnum is a str too; written as a plain string it came back as one, and a
    # scheduling trace with a pre-check answer could not be replayed.
    from jobconform.conformance.area_trace import decode, encode
    from jobconform.reference.scheduling.commands import CreateCron
    from jobconform.reference.scheduling.oracle import PreCheckAnswer

    command = CreateCron(schedule="s1", message="run s1", expression="0 * * * *",
                         pre_check=PreCheckAnswer.SKIP)
    again = decode(json.loads(json.dumps(encode(command))))
    assert again == command
    assert type(again.pre_check) is PreCheckAnswer
