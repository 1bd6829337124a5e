"""The procrastinate example: procrastinate's asyncio worker on the virtual clock, and its report.

Run with `tox -e example-procrastinate` (installs the `procrastinate-example` extra).
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
        "run", "--backend", "procrastinate_jobs:ProcrastinateBackend", "--suite", "robot",
        "--report-dir", str(tmp_path), "--expected-failures", str(HERE / "expected-failures.yaml")])
    report = json.loads((tmp_path / "report.json").read_text())
    assert result.exit_code == 0, report["expectation_problems"]
    assert report["counts"]["pass"] == 26  # LC-031 among them
    assert "health counters derived" in report["notes"][0]


def test_the_worker_polls_and_stamps_on_the_virtual_clock() -> None:
    from procrastinate_jobs import ProcrastinateRuntime

    clock = VirtualClock(EPOCH)
    runtime = ProcrastinateRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None), clock)
    try:
        first, second = TaskScript(), TaskScript()
        first_id, second_id = runtime.submit(first), runtime.submit(second)
        clock.advance(3600)  # the worker polls, beats and fetches; no body may start
        runtime.settle()
        queries = [name for name, _ in runtime.app.connector.queries]  # InMemoryConnector's log
        assert queries.count("update_heartbeat") == 360  # every 10 s, on the virtual clock
        # Its one slot is held by the first body, waiting at the gate: the worker waits for
        # the slot and fetches nothing more (its first fetch at start found nothing).
        assert queries.count("fetch_job") == 2
        statuses = [getattr(runtime.get(job), "status", None) for job in (first_id, second_id)]
        assert statuses == ["queued", "queued"]
        runtime.dispatch()
        clock.advance(1.5)
        first.decide(Succeed("done"))
        runtime.settle()
        view = runtime.get(first_id)
        assert view is not None and view.status == "succeeded" and view.result == "done"
        assert (view.started_at - EPOCH).total_seconds() == 3600  # type: ignore[operator]
        assert (view.finished_at - EPOCH).total_seconds() == 3601.5  # type: ignore[operator]
        assert runtime.get(second_id).status == "queued"  # type: ignore[union-attr]  # one slot
    finally:
        runtime.close()
    assert time.time() > EPOCH.timestamp() + 86_400 * 30  # real time again


def test_procrastinate_aborts_a_running_body_unless_the_body_ignores_it() -> None:
    from procrastinate_jobs import ProcrastinateRuntime

    clock = VirtualClock(EPOCH)
    runtime = ProcrastinateRuntime(RuntimeSettings(max_concurrent=2, max_tasks=None), clock)
    try:
        honours, ignores = TaskScript(), TaskScript(honours_cancellation=False)
        honours_id, ignores_id = runtime.submit(honours), runtime.submit(ignores)
        runtime.dispatch()
        assert runtime.cancel(honours_id) and runtime.cancel(ignores_id)
        assert runtime.get(honours_id).status == "cancelled"  # type: ignore[union-attr]
        assert runtime.get(ignores_id).status == "running"  # type: ignore[union-attr]
        assert not runtime.cancel(ignores_id)  # already asked
        ignores.decide(Succeed("late"))
        runtime.settle()
        assert runtime.get(ignores_id).status == "cancelled"  # type: ignore[union-attr]
    finally:
        runtime.close()


def test_a_body_that_ignores_cancellation_does_not_hang_close() -> None:
    from procrastinate_jobs import ProcrastinateRuntime

    clock = VirtualClock(EPOCH)
    runtime = ProcrastinateRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None), clock)
    job_id = runtime.submit(TaskScript(honours_cancellation=False))
    runtime.dispatch()
    connector = runtime.app.connector  # InMemoryConnector: procrastinate's own tables
    assert runtime.get(job_id).status == "running"  # type: ignore[union-attr]
    assert len(connector.workers) == 1
    # procrastinate's worker waits for its running job as it stops: the body must end, or
    # the loop's close would raise CoroutineNeverFinished after its safety limit.
    runtime.close()
    assert runtime.get(job_id).status == "cancelled"  # type: ignore[union-attr]
    # The worker finished the job in procrastinate's table and unregistered: it stopped,
    # rather than being left behind on a loop nobody runs.
    (job,) = connector.jobs.values()
    assert (job["status"], job["worker_id"]) == ("aborted", None)
    assert connector.workers == {}
    assert [name for name, _ in connector.queries][-2:] == ["finish_job", "unregister_worker"]
