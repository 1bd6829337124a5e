"""The Celery example: Celery's embedded worker on RabbitMQ and Redis, on the virtual clock.

Run with `tox -e example-celery` (installs the `celery-example` extra); it needs RabbitMQ on
127.0.0.1:5672 (guest/guest) and Redis on 127.0.0.1:6379.
"""

from __future__ import annotations

import socket
import sys
from contextlib import closing
from pathlib import Path

import pytest

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.adapter_testing import adapter_importable, need_server, run_kit
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.expectations import load_expectations
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import Raise, Succeed

HERE = Path(__file__).resolve().parent
DEVIATIONS = HERE / "expected-failures.yaml"
sys.path.insert(0, str(HERE))


@pytest.fixture(autouse=True)
def servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Celery's broker and result store run on loopback; CI must have both running. The
    adapter module must import here and in the Behave child process."""
    for name, port in (("RabbitMQ", 5672), ("Redis", 6379)):
        need_server(name, f"127.0.0.1:{port}",
                    lambda port=port: socket.create_connection(("127.0.0.1", port),
                                                               timeout=2).close())
    adapter_importable(monkeypatch, HERE)


def test_the_retry_cases_fail_exactly_where_the_deviation_list_says(tmp_path: Path) -> None:
    done = run_kit("celery_jobs:CeleryBackend", tmp_path, "--suite", "robot", "--area", "retry",
                   "--expected-failures", str(DEVIATIONS))
    assert done.exit_code == 0, done.report["expectation_problems"]
    verdicts = {rid: body["suites"]["robot"] for rid, body in done.report["requirements"].items()
                if body["area"] == "retry"}
    listed = set(load_expectations(DEVIATIONS))
    assert {rid for rid, verdict in verdicts.items() if verdict == "expected failure"} == listed
    # RT-011 is seed 004's deprecated attempt_number, which needs the deprecated-aliases
    # capability: a Celery task has no such name, so it is "not claimed".
    assert verdicts["RT-011"] == "not claimed"
    assert {verdicts[rid] for rid in verdicts.keys() - listed - {"RT-011"}} == {"pass"}


def test_a_retry_waits_out_celerys_countdown_on_the_virtual_clock() -> None:
    from celery_jobs import CeleryRuntime

    clock = VirtualClock(EPOCH)
    with closing(CeleryRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None),
                               clock)) as runtime:
        script = TaskScript()
        job_id = runtime.submit(script, RetryPolicy(max_retries=2, retry_delay_ms=2000.0))
        clock.advance(3600)  # the worker has the message; no body may start before dispatch
        runtime.dispatch()
        script.decide(Raise("ValueError", "flaky"))
        runtime.settle()
        view = runtime.get(job_id)
        assert view is not None and (view.status, view.retry_count) == ("queued", 1)
        clock.advance(1.999)  # retry_backoff=2: Celery's countdown is 2 s, held by its timer
        runtime.dispatch()
        assert getattr(runtime.get(job_id), "status", None) == "queued"
        clock.advance(0.001)
        runtime.dispatch()
        script.decide(Succeed("done"))
        runtime.settle()
        view = runtime.get(job_id)
        assert view is not None and (view.status, view.result) == ("succeeded", "done")
        assert (view.started_at - EPOCH).total_seconds() == 3602  # type: ignore[operator]
    stored = runtime.app.AsyncResult(job_id)  # Celery's own record, in Redis
    assert (stored.state, stored.result) == ("SUCCESS", "done")
