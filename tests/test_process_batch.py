"""Batches of the process protocol: a command and the reads the harness makes after it go to
the child in one exchange, answer for answer what they would be one by one, and a child
that does not announce `batch` is spoken to one request at a time."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import Any

import pytest

from jobconform.backends.process import ProcessBackend
from jobconform.backends.process.backend import reference_child_command
from jobconform.backends.process.session import ChildSession
from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance import read_ahead
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference.commands import Succeed

SAFETY_SECONDS = 30.0


@pytest.fixture()
def exchanges(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[ProcessBackend, list[str]]]:
    """A process backend over a session of its own, and the ops of each exchange."""
    session = ChildSession(reference_child_command(), SAFETY_SECONDS)
    sent: list[str] = []
    exchange = session._exchange

    def recording(request: dict[str, Any], operation: str) -> dict[str, Any]:
        sent.append(operation)
        return exchange(request, operation)

    monkeypatch.setattr(session, "_exchange", recording)
    yield ProcessBackend(session=session), sent
    session.close()


def _observation(runtime: Any) -> list[read_ahead.PlannedCall]:
    return [(runtime, "settle", {}), (runtime, "list_jobs", {"status": None}),
            (runtime, "health", {})]


def test_a_command_and_its_observation_are_one_exchange_with_the_same_answers(
        exchanges: tuple[ProcessBackend, list[str]]) -> None:
    backend, sent = exchanges
    assert backend.session.claims.batches
    clock = VirtualClock(EPOCH)
    runtime = backend.open(RuntimeSettings(max_concurrent=1, max_tasks=None), clock)
    script = TaskScript()
    job_id = runtime.submit(script)
    sent.clear()

    script.decide(Succeed("done"))  # as a Finish does, before the calls
    read_ahead.plan_reads(_observation(runtime), with_next_call=True)
    runtime.dispatch()
    runtime.settle()  # the body's callbacks were made within the batch
    listed = runtime.list_jobs(None)
    health = runtime.health()

    assert sent == ["JobRuntime.dispatch + JobRuntime.settle + JobRuntime.list_jobs"
                    " + JobRuntime.health"]
    assert [(view.job_id, view.status, view.result) for view in listed] == [
        (job_id, "succeeded", "done")]
    assert (health.running, health.total) == (0, 1)
    runtime.list_jobs(None)  # unplanned: a request of its own
    assert sent[1:] == ["JobRuntime.list_jobs"]


def test_a_call_the_plan_did_not_name_drops_the_reads_brought_ahead(
        exchanges: tuple[ProcessBackend, list[str]]) -> None:
    backend, sent = exchanges
    runtime = backend.open(RuntimeSettings(max_concurrent=1, max_tasks=None),
                           VirtualClock(EPOCH))
    job_id = runtime.submit(TaskScript())
    sent.clear()

    read_ahead.plan_reads(_observation(runtime))
    runtime.settle()  # the first planned call sends the plan
    assert runtime.cancel(job_id) is True  # not the list that was planned
    listed = runtime.list_jobs(None)

    assert sent == ["JobRuntime.settle + JobRuntime.list_jobs + JobRuntime.health",
                    "JobRuntime.cancel", "JobRuntime.list_jobs"]
    assert [view.status for view in listed] == ["cancelled"]  # read after the cancel


def test_a_child_without_batch_is_asked_one_call_at_a_time() -> None:
    with closing(ChildSession(reference_child_command(), SAFETY_SECONDS)) as session:
        object.__setattr__(session.claims, "batches", False)  # as a child that predates it
        backend = ProcessBackend(session=session)
        runtime = backend.open(RuntimeSettings(max_concurrent=1, max_tasks=None),
                               VirtualClock(EPOCH))
        sent: list[str] = []
        exchange = session._exchange

        def recording(request: dict[str, Any], operation: str) -> dict[str, Any]:
            sent.append(operation)
            return exchange(request, operation)

        session._exchange = recording  # type: ignore[method-assign]
        read_ahead.plan_reads(_observation(runtime), with_next_call=True)
        runtime.dispatch()
        runtime.settle()
        runtime.list_jobs(None)
        runtime.health()
        assert sent == ["JobRuntime.dispatch", "JobRuntime.settle", "JobRuntime.list_jobs",
                        "JobRuntime.health"]
