"""The huey example: huey's own consumer threads on the virtual clock, and its report.

Run with `tox -e example-huey` (installs the `huey-example` extra).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.cli import main
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference.commands import Succeed

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter module must import here and in the Behave child process."""
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setenv("PYTHONPATH", str(HERE))


def test_the_lifecycle_suites_pass_with_an_empty_deviation_list(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [
        "run", "--backend", "huey_jobs:HueyBackend", "--suite", "robot", "--report-dir",
        str(tmp_path), "--expected-failures", str(HERE / "expected-failures.yaml")])
    report = json.loads((tmp_path / "report.json").read_text())
    assert result.exit_code == 0, report["expectation_problems"]
    assert report["counts"]["pass"] == 26  # LC-031 among them
    assert "health counters derived" in report["notes"][0]


def test_huey_workers_poll_and_stamp_on_the_virtual_clock() -> None:
    from huey_jobs import HueyRuntime

    clock = VirtualClock(EPOCH)
    runtime = HueyRuntime(RuntimeSettings(max_concurrent=2, max_tasks=None), clock)
    try:
        script = TaskScript()
        job_id = runtime.submit(script)
        clock.advance(3600)  # huey's workers poll many times; none may start the body
        runtime.settle()
        assert runtime.get(job_id).status == "queued"  # type: ignore[union-attr]
        runtime.dispatch()
        clock.advance(1.5)
        script.decide(Succeed("done"))
        runtime.settle()
        view = runtime.get(job_id)
        assert view is not None and view.status == "succeeded" and view.result == "done"
        assert (view.started_at - EPOCH).total_seconds() == 3600  # type: ignore[operator]
        assert (view.finished_at - EPOCH).total_seconds() == 3601.5  # type: ignore[operator]
    finally:
        runtime.close()
    assert time.time() > EPOCH.timestamp() + 86_400 * 30  # real time again
