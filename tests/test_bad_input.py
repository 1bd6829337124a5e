"""Bad input gets a clear answer and a report (issue 34): an adapter that tries to end the
process, and input files that cannot be read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from jobconform.conformance import watchdog
from jobconform.conformance.cli import main
from jobconform.conformance.clock import real_monotonic
from jobconform.conformance.watchdog import AdapterExited, AdapterHung, forget_hangs, guarded

BROKEN = "jobconform.conformance.gallery.broken_adapters"


def _run(tmp_path: Path, backend: str, *extra: str,
         env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Exit code, console output and every case message of a run against a broken adapter."""
    command = [sys.executable, "-m", "jobconform.conformance.cli", "run", "--backend",
               f"{BROKEN}:{backend}", "--examples", "5", "--report-dir", str(tmp_path),
               *extra]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=600,
                              env={**os.environ, **(env or {})}, check=False)
    output = finished.stdout + finished.stderr
    report = json.loads((tmp_path / "report.json").read_text()) if (
        tmp_path / "report.json").exists() else {"suites": []}
    messages = "\n".join(case["message"] for suite in report["suites"]
                         for case in suite["cases"])
    return finished.returncode, output, messages


# -- an adapter raising SystemExit --------------------------------------------------------

@pytest.mark.parametrize("suite", ["hypothesis", "robot", "behave"])
def test_an_adapter_exiting_in_a_command_fails_the_case_with_its_requirement(
        tmp_path: Path, suite: str) -> None:
    code, output, messages = _run(tmp_path, "exiting_submit", "--suite", suite)
    assert code == 1, output
    assert "Traceback" not in output
    assert (tmp_path / "junit.xml").exists()
    assert "the adapter raised SystemExit(7) during Submit(" in messages
    assert "requirement(s): LC-008" in messages


@pytest.mark.parametrize("backend, during", [
    ("exiting_open", "SystemExit(4) during opening backend 'broken.exiting_open'"),
    ("exiting_close", "SystemExit(5) during close"),
])
def test_an_adapter_exiting_in_open_or_close_is_reported(tmp_path: Path, backend: str,
                                                         during: str) -> None:
    code, output, messages = _run(tmp_path, backend, "--suite", "hypothesis")
    assert code == 1, output
    assert f"the adapter raised {during}" in messages


@pytest.mark.parametrize("suite", ["behave", "robot"])
def test_a_raising_close_fails_every_case_with_its_message_in_behave_and_robot_alike(
        tmp_path: Path, suite: str) -> None:
    code, output, messages = _run(tmp_path, "raising_close", "--suite", suite,
                                  "--requirement", "LC-001")
    assert code == 1, output
    report = json.loads((tmp_path / "report.json").read_text())
    cases = report["suites"][0]["cases"]
    assert cases and not any(case["passed"] for case in cases)
    assert all("closing the runtime: AdapterError: adapter 'broken.raising_close' raised"
               " RuntimeError: close exploded during close" in case["message"]
               for case in cases), messages


def test_an_adapter_declaring_an_unknown_profile_is_named_not_the_option(
        tmp_path: Path) -> None:
    code, output, _ = _run(tmp_path, "unknown_profile")
    assert code == 1, output
    assert (f"backend '{BROKEN}:unknown_profile' declares `profile = 'no-such-profile'`,"
            " which the spec does not define") in output
    assert "--profile:" not in output and "Traceback" not in output


def test_a_keyboard_interrupt_stops_the_run_but_its_report_is_written(
        tmp_path: Path) -> None:
    # The machines run in this process, where Ctrl-C raises KeyboardInterrupt: the run
    # stops there, Behave after it does not run, and what ran is reported.
    code, output, messages = _run(tmp_path, "interrupting_dispatch", "--suite",
                                  "hypothesis", "--suite", "behave", "--area", "lifecycle")
    assert code == 130, output
    assert "hypothesis interrupted: KeyboardInterrupt" in messages
    report = json.loads((tmp_path / "report.json").read_text())
    assert [suite["suite"] for suite in report["suites"]] == ["hypothesis"]
    assert (tmp_path / "junit.xml").exists()


def test_an_adapter_raising_keyboard_interrupt_under_robot_stops_the_run_with_a_report(
        tmp_path: Path) -> None:
    # Robot Framework takes a KeyboardInterrupt raised in a keyword as its own stop and
    # returns, its output.xml cut short: the run learns of it from the harness and stops
    # there all the same, with its report and exit code 130.
    code, output, messages = _run(tmp_path, "interrupting_dispatch", "--suite", "robot",
                                  "--suite", "behave", "--area", "lifecycle")
    assert code == 130, output
    assert "robot interrupted: KeyboardInterrupt" in messages
    report = json.loads((tmp_path / "report.json").read_text())
    assert [suite["suite"] for suite in report["suites"]] == ["robot"]


# -- an adapter hanging in every case ------------------------------------------------------

def test_an_adapter_hanging_in_every_case_costs_one_safety_limit_per_suite_process(
        tmp_path: Path) -> None:
    # Behave runs in a child process, Robot and Hypothesis in this one: two hangs in all,
    # each waiting the 2 s limit; every other case is not tried and says why.
    code, output, _ = _run(tmp_path, "hanging_settle", "--area", "lifecycle",
                           env={"JOBCONFORM_SAFETY_TIMEOUT": "2"})
    assert code == 1, output
    assert "Traceback" not in output
    report = json.loads((tmp_path / "report.json").read_text())
    cases = [case for suite in report["suites"] for case in suite["cases"]]
    assert cases and all(case["hung"] and not case["passed"] and case["primary"] == []
                         for case in cases), output
    first = [case for case in cases if "the stacks of the threads when it hung" in
             case["message"]]
    assert [case["suite"] for case in first] == ["behave", "robot"], output
    assert "in settle" in first[0]["message"] and "threading.Event().wait()" in (
        first[0]["message"])
    assert all("was not tried: an earlier call of the same adapter hung" in case["message"]
               for case in cases if case not in first)
    verdicts = {verdict for body in report["requirements"].values()
                for verdict in body["suites"].values()}
    assert "fail" not in verdicts and "pass" not in verdicts and "blocked" in verdicts
    assert "ADAPTER HUNG" in output
    # The machines' progress lines end with the hang, not "DIVERGED".
    assert "steps, ADAPTER HUNG" in output and "DIVERGED" not in output


def test_the_guard_turns_an_exit_into_an_error_but_lets_ctrl_c_through() -> None:
    for seconds in (0, 30):  # with and without the real-time limit
        with pytest.raises(AdapterExited, match=r"GeneratorExit during a call"), \
                guarded(seconds, "a call"):
            raise GeneratorExit
        with pytest.raises(KeyboardInterrupt), guarded(seconds, "a call"):
            raise KeyboardInterrupt


@pytest.mark.parametrize("ending", ["returned", "raised"])
def test_a_call_that_ends_past_its_limit_hung_however_it_ended(
        monkeypatch: pytest.MonkeyPatch, ending: str) -> None:
    # The watchdog looks twice a second; here it never does, so the call ends past its
    # limit unseen, as a library's join that gives up at the same limit (Celery's) does.
    monkeypatch.setattr(watchdog._WATCHDOG, "arm", lambda *args: None)
    forget_hangs()
    with pytest.raises(AdapterHung, match=(
            r"^ADAPTER HUNG: close did not return within 0.05 s of real time \(the kit's"
            r" real-time safety timeout\): it ended after 0.\d s" + (
                ", raising RuntimeError: join gave up" if ending == "raised" else "")
            + "; the adapter hangs\n")), guarded(0.05, "close", "a scope"):
        ends = real_monotonic() + 0.1
        while real_monotonic() < ends:  # no wait the watchdog could end
            pass
        if ending == "raised":
            raise RuntimeError("join gave up")
    with pytest.raises(AdapterHung, match="close was not tried: an earlier call"), \
            guarded(0.05, "close", "a scope"):
        pass
    forget_hangs()


# -- input files that are not text ---------------------------------------------------------

def test_an_expected_failures_file_not_in_utf8_is_refused_before_the_run(
        tmp_path: Path) -> None:
    listed = tmp_path / "expected.yaml"
    listed.write_bytes("LC-016:\n  reason: caf\u00e9\n".encode("latin-1"))
    result = CliRunner().invoke(main, ["run", "--expected-failures", str(listed),
                                       "--report-dir", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    assert (f"the expected-failures file {listed} is not UTF-8 text (invalid continuation"
            " byte at byte 21): save it as UTF-8") in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "r").exists()


def test_compare_refuses_a_binary_file(tmp_path: Path) -> None:
    binary = tmp_path / "report.json"
    binary.write_bytes(bytes(range(256)))
    result = CliRunner().invoke(main, ["compare", str(binary),
                                       "--output-dir", str(tmp_path / "c")])
    assert result.exit_code == 2, result.output
    assert f"{binary} is not a report.json: not UTF-8 text" in result.output
    assert isinstance(result.exception, SystemExit)
