"""Adoption (issue 29): a listed deviation never comes back under another requirement.

Every backend of the adoption gallery deviates in two or three places at once: it accepts
submissions the spec refuses, re-queues a retried job at the tail, or has a delay function
that raises. With exactly its causes listed, a run of every suite exits 0, each cause an
expected failure and nothing else failing or blocked; with one cause left out, the run
fails on that one alone.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from jobconform.backends.loading import load_backend
from jobconform.backends.protocol import Backend
from jobconform.conformance import runner, selftest, tolerance
from jobconform.conformance.cli import main
from jobconform.conformance.expectations import load_expectations
from jobconform.conformance.gallery.adoption import (
    ADOPTION_GALLERY,
    AdoptionEntry,
    due_tail_requeue,
    no_jitter_modes,
    over_cap_with_late_jitter,
    retry_after_ignored,
    tail_requeue,
)
from jobconform.conformance.harness import AdapterError, Harness, open_harness
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.lifecycle import Status
from jobconform.spec import load_registry

EXAMPLES = "20"
ENTRIES = {entry.name: entry for entry in ADOPTION_GALLERY}


Verdicts = dict[str, dict[str, str]]  # requirement -> suite -> verdict


@pytest.fixture(autouse=True)
def behave_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Behave runs in this process, as the self-test runs it for the same kind of backend:
    the adoption gallery's are memory backends, whose jobs run in the caller's thread
    (selftest.runs_in_process). A child Behave imported the kit and the gallery again for
    each of the module's 24 runs, a second or two of CPU each. The child's way with
    expected failures (the deviations file it writes) is the one test_expectations.py
    and the examples' runs in tox.ini check."""
    run_suites = runner.run_suites

    def in_process(config: runner.RunConfig, *rest: Any) -> list[runner.SuiteRun]:
        assert selftest.runs_in_process(load_backend(config.backend)), config.backend
        return run_suites(replace(config, behave_in_process=True), *rest)

    monkeypatch.setattr(runner, "run_suites", in_process)


def _run(entry: AdoptionEntry, tmp_path: Path, listed: Path) -> tuple[int, Verdicts, str,
                                                                      list[dict[str, object]]]:
    """Run every suite on the entry's areas with `listed` as the expected failures;
    (exit code, verdicts, output, the failed cases)."""
    areas = [option for area in entry.areas for option in ("--area", area)]
    result = CliRunner().invoke(main, [
        "run", "--backend", entry.target, "--profile", entry.profile, "--examples", EXAMPLES,
        "--report-dir", str(tmp_path), "--expected-failures", str(listed), *areas])
    report = json.loads((tmp_path / "report.json").read_text())
    verdicts = {rid: body["suites"] for rid, body in report["requirements"].items()}
    failed = [case for suite in report["suites"] for case in suite["cases"]
              if not case["passed"]]
    return result.exit_code, verdicts, result.output, failed


def _with(verdicts: Verdicts, verdict: str) -> set[str]:
    return {rid for rid, suites in verdicts.items() if verdict in suites.values()}


def test_the_gallery_has_the_cases_the_issue_asks_for() -> None:
    assert len(ADOPTION_GALLERY) >= 8
    assert all(2 <= len(entry.causes) <= 3 for entry in ADOPTION_GALLERY)
    for entry in ADOPTION_GALLERY:
        assert set(load_expectations(entry.deviations_file)) == set(entry.causes), entry.name
    # A refused submission accepted, a raising delay function, a tail re-queue.
    assert {"over_cap_with_late_jitter", "open_after_shutdown", "overflowing_delay",
            "no_jitter_modes", "tail_requeue"} <= set(ENTRIES)


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_exactly_its_causes_listed_the_run_passes_in_every_suite(name: str,
                                                                 tmp_path: Path) -> None:
    entry = ENTRIES[name]
    code, verdicts, output, failed = _run(entry, tmp_path, entry.deviations_file)
    assert code == 0, output
    assert _with(verdicts, "expected failure") == set(entry.causes), output
    assert _with(verdicts, "fail") == set(), output
    # Every case, the Hypothesis machine's too, went on to its end past the listed
    # deviations, raising ones included, and failed on its causes alone.
    assert {case["suite"] for case in failed} == {"behave", "robot", "hypothesis"}, output
    for case in failed:
        assert case["completed"], case["message"]
        assert set(case["primary"]) <= set(entry.causes), case["message"]


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_one_cause_left_out_the_run_fails_on_that_one_alone(name: str,
                                                            tmp_path: Path) -> None:
    entry = ENTRIES[name]
    left_out, *still_listed = entry.causes
    listed = tmp_path / "listed.yaml"
    listed.write_text("".join(f"{rid}:\n  reason: known\n" for rid in still_listed))
    code, verdicts, output, _ = _run(entry, tmp_path, listed)
    assert code == 1, output
    assert _with(verdicts, "fail") == {left_out}, output
    assert _with(verdicts, "expected failure") == set(still_listed), output


# -- the harness's side, command by command --------------------------------------------------


def _harness(backend: Backend, tolerated: set[str], **overrides: object) -> Harness:
    tolerance.take()  # nothing recorded from an earlier test
    return open_harness(backend, load_registry().profile("canonical"), safety_timeout=0,
                        tolerated=frozenset(tolerated), **overrides)


def test_a_submission_over_the_cap_the_runtime_accepted_is_held_by_the_oracle_too() -> None:
    harness = _harness(over_cap_with_late_jitter(), {"LC-009"}, max_tasks=1)
    harness.run_all([cmd.Submit("a"), cmd.Dispatch(), cmd.Finish("a", cmd.Succeed(1))])
    assert harness.run(cmd.Submit("b")) == cmd.ACCEPTED  # the spec refuses it: LC-009
    assert list(harness.model.jobs) == ["a", "b"]
    # Its consequences are the runtime's: it starts, ends, is listed and counted.
    harness.run_all([cmd.Dispatch(), cmd.Finish("b", cmd.Succeed(2)), cmd.Cleanup(0.0)])
    assert [deviation.primary for deviation in tolerance.take()] == ["LC-009"]
    harness.close()


def test_a_listed_delay_function_that_raises_is_recorded_and_the_harness_goes_on() -> None:
    question = cmd.ComputeDelay(RetryPolicy(), 1, Jitter.FULL, 0.5)
    harness = _harness(no_jitter_modes(), {"RT-009"})
    assert harness.run(question) is None
    [deviation] = tolerance.take()
    assert deviation.primary == "RT-009" and "no such jitter mode" in deviation.message
    harness.run_all([cmd.Submit("a"), cmd.Dispatch(), cmd.Finish("a", cmd.Succeed(1))])
    harness.close()
    # Unlisted, it stops the check as before, blamed on the part of the delay that raised.
    harness = _harness(no_jitter_modes(), set())
    with pytest.raises(AdapterError, match=r"requirement\(s\): RT-009;"):
        harness.run(question)
    harness.close()


def test_a_job_requeued_at_the_tail_waits_behind_the_jobs_the_runtime_started() -> None:
    retry_once = RetryPolicy(max_retries=1, retry_delay_ms=0.0, max_retry_delay_ms=0.0)
    harness = _harness(tail_requeue(), {"RT-003"}, max_concurrent=1)
    harness.run_all([cmd.Submit("j1", retry=retry_once), cmd.Submit("j2"), cmd.Submit("j3"),
                     cmd.Finish("j1", cmd.Raise("FlakyError", "no")), cmd.Dispatch()])
    # The oracle would start j1 again; the runtime starts j2, queued ahead of it now.
    harness.run(cmd.Dispatch())
    assert [deviation.primary for deviation in tolerance.take()] == ["RT-003"]
    assert harness.model.jobs["j1"].status is Status.QUEUED
    assert harness.model.scripts["j1"].starts == 1
    # j3 goes before j1, whose second attempt runs last, and nothing diverges again.
    harness.run_all([cmd.Finish("j1", cmd.Raise("FlakyError", "again")),
                     cmd.Finish("j2", cmd.Succeed(2)), cmd.Dispatch(),
                     cmd.Finish("j3", cmd.Succeed(3)), cmd.Dispatch()])
    assert harness.model.jobs["j1"].status is Status.FAILED
    assert tolerance.take() == []
    harness.close()


def test_a_job_the_oracle_started_and_requeued_is_put_back_if_the_runtime_did_not() -> None:
    # Found by the tenacity example at 200 examples: the runtime starts a retry early
    # (the listed RT-010) where the oracle starts the next queued job, whose body fails
    # back into the queue at once; adopted, that job has not started, and nothing
    # diverges again (before, it was LC-010 at the next dispatch).
    no_delay = RetryPolicy(max_retries=1, retry_delay_ms=0.0, max_retry_delay_ms=0.0)
    floored = RetryPolicy(max_retries=1, retry_delay_ms=0.0, max_retry_delay_ms=4000.0)
    harness = _harness(retry_after_ignored(), {"RT-010"}, max_concurrent=2)
    harness.run_all([cmd.Submit("j1", retry=floored), cmd.Submit("j2"),
                     cmd.Submit("j3", retry=no_delay),
                     cmd.Finish("j3", cmd.Raise("FlakyError", "no")), cmd.Dispatch(),
                     cmd.Finish("j3", cmd.Raise("FlakyError", "no")),
                     cmd.Finish("j1", cmd.Raise("FlakyError", "later", retry_after_ms=500.0))])
    harness.run(cmd.Dispatch())
    assert [deviation.primary for deviation in tolerance.take()] == ["RT-010"]
    assert harness.model.jobs["j3"].status is Status.QUEUED
    assert harness.model.jobs["j3"].started_at is None
    assert harness.model.scripts["j3"].starts == 0
    harness.run_all([cmd.Dispatch(), cmd.Finish("j1", cmd.Succeed(1)), cmd.Dispatch(),
                     cmd.Dispatch()])
    assert tolerance.take() == []
    harness.close()


def test_due_retries_left_behind_started_jobs_all_go_to_the_tail_in_their_order() -> None:
    # huey at 200 examples: two due retries, both left queued while the runtime started a
    # plain job; the oracle moved only the one it would have started (j2) to the tail, so
    # when a slot freed it started j3 where the runtime started j2 (the listed RT-003
    # again, blamed LC-004). The runtime queues every due retry at the tail alike.
    policy = RetryPolicy(max_retries=2, retry_delay_ms=5000.0)
    fail = cmd.Raise("FlakyError", "try again")
    harness = _harness(due_tail_requeue(), {"RT-003", "LC-015"}, max_concurrent=2,
                       max_tasks=4)
    harness.run_all([
        cmd.Submit("j2", retry=policy), cmd.Finish("j2", fail), cmd.Dispatch(),
        cmd.Submit("j3", retry=policy), cmd.Finish("j3", fail), cmd.Submit("j4"),
        cmd.Submit("j5"), cmd.Dispatch(), cmd.AdvanceTime(6.0), cmd.Dispatch(),
        cmd.AdvanceTime(6.0), cmd.Dispatch(),
        cmd.Finish("j2", cmd.Raise("ValueError", "attempt failed")), cmd.Cancel("j4"),
        cmd.Dispatch()])
    assert {deviation.primary for deviation in tolerance.take()} == {"RT-003"}
    assert harness.model.jobs["j2"].retry_count == 2  # j2 took the freed slot, as it did
    assert harness.model.jobs["j3"].status is Status.QUEUED
    harness.close()
