"""The adapters' glue (jobconform.bridges.translate): time, status, exceptions, records and
gate, and the wait for the harness's decision."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest

from jobconform.backends.protocol import CapacityExceeded, RuntimeSettings, TaskScript
from jobconform.bridges import DispatchGate, JobRecords
from jobconform.bridges.translate import (
    Decisions,
    cancel_in,
    canonical_status,
    entered,
    error_text,
    error_types,
    exit_with,
    may_run,
    multiplied_delay_ms,
    outcome_error,
    records_on_wall,
    seconds,
    shut_down_in,
    utc,
)
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import Raise, Succeed

EPOCH = datetime(2030, 1, 1, tzinfo=UTC)


def test_times_become_aware_utc() -> None:
    assert utc(None) is None
    assert utc(datetime(2030, 1, 1)) == EPOCH
    assert utc(datetime(2030, 1, 1, 2, tzinfo=timezone(timedelta(hours=2)))) == EPOCH
    assert utc(EPOCH.timestamp()) == EPOCH
    assert utc(EPOCH.timestamp()).tzinfo is UTC  # type: ignore[union-attr]
    assert seconds(1500.0) == 1.5


def test_status_names_become_the_specs() -> None:
    assert canonical_status("HALF-OPEN") == "half_open"
    assert canonical_status(" half open ") == "half_open"
    assert canonical_status("complete", {"complete": "succeeded"}) == "succeeded"
    assert canonical_status("queued", {"complete": "succeeded"}) == "queued"


def test_errors_are_recorded_with_their_type_and_made_from_names() -> None:
    assert error_text(ValueError("boom")) == "ValueError: boom"
    assert error_text(KeyError("k")) == "KeyError: 'k'"
    types = error_types("auth", "timeout")
    assert types["auth"].__name__ == "auth" and issubclass(types["timeout"], Exception)
    assert types["auth"] is not types["timeout"]
    assert outcome_error("success", None, types) is None
    assert isinstance(outcome_error("cancelled", None, types), asyncio.CancelledError)
    assert isinstance(outcome_error("failure", "timeout", types), types["timeout"])


class Refused(Exception):
    pass


def test_a_wrapped_call_is_entered_and_ended_where_the_protocol_splits_it() -> None:
    seen: list[object] = []

    @contextmanager
    def calling(refuse: bool = False) -> Iterator[None]:
        if refuse:
            raise Refused
        try:
            yield
        except Exception as error:
            seen.append(error)
            raise  # the library passes the call's error on
        seen.append("returned")

    assert entered(calling(refuse=True), Refused) is None
    block = entered(calling())
    assert block is not None
    failure = ValueError("down")
    exit_with(block, failure)  # the re-raise is dropped
    exit_with(entered(calling()), None)
    exit_with(None, failure)  # a call the library never took: nothing to end
    assert seen == [failure, "returned"]


def settings(max_tasks: int | None = None) -> RuntimeSettings:
    return RuntimeSettings(max_concurrent=1, max_tasks=max_tasks)


def test_cancel_and_shutdown_on_records_and_gate() -> None:
    records, gate = JobRecords(lambda: EPOCH, None), DispatchGate()
    for job_id in ("queued", "running", "done"):
        records.add(job_id)
    records.update("running", "running")
    records.update("done", "running")
    records.update("done", "succeeded", result=1)
    assert cancel_in(records, gate, "queued") == "queued"
    assert records.get("queued").status == "cancelled"  # type: ignore[union-attr]
    assert cancel_in(records, gate, "running") == "running"
    assert records.get("running").status == "running"  # type: ignore[union-attr]
    assert gate.released("running")
    # Asked again, finished, or unknown: cancel returns False.
    assert cancel_in(records, gate, "running") is None
    assert cancel_in(records, gate, "done") is None
    assert cancel_in(records, gate, "nobody") is None
    records.add("late")
    assert shut_down_in(records, gate) == ["running", "late"]
    assert {r.job_id: r.status for r in records.list_jobs()} == {
        "queued": "cancelled", "running": "cancelled", "done": "succeeded",
        "late": "cancelled"}
    assert gate.released("late")


def test_records_on_the_wall_clock_keep_the_task_cap() -> None:
    records = records_on_wall(settings(max_tasks=1))
    before = datetime.now(UTC)
    assert records.add("a").submitted_at >= before
    with pytest.raises(CapacityExceeded):
        records.add("b")


def script(outcome: Any = None, honours: bool = False) -> TaskScript:
    body = TaskScript(honours_cancellation=honours)
    if outcome is not None:
        body.decide(outcome)
    return body


def test_a_thread_body_runs_unless_a_requested_cancellation_wins() -> None:
    gate = DispatchGate()
    assert may_run(gate, "a", script(Succeed("ok")))
    gate.release("b")
    assert not may_run(gate, "b", script(Raise("ValueError", "x")))
    gate.release("c")
    assert not may_run(gate, "c", script(honours=True))  # let go undecided
    assert may_run(DispatchGate(), "d", script(Succeed("ok"), honours=False))


@pytest.mark.parametrize("with_gate", [True, False])
def test_bodies_on_an_event_loop_wait_for_the_decision(with_gate: bool) -> None:
    async def main() -> None:
        gate = DispatchGate()
        decisions = Decisions(gate if with_gate else None)
        scripts = {"decided": script(), "honours": script(honours=True),
                   "ignores": script(honours=False)}
        waits = {name: asyncio.ensure_future(decisions.wait(name, body))
                 for name, body in scripts.items()}

        async def settle() -> None:
            decisions.release_decided()
            for _ in range(3):
                await asyncio.sleep(0)

        await settle()
        assert not any(wait.done() for wait in waits.values())
        scripts["decided"].decide(Succeed(1))
        gate.release("honours")
        gate.release("ignores")
        await settle()
        # Released, a body that honours cancellation is let go only where the gate is
        # the adapter's way of cancelling.
        assert {name for name, wait in waits.items() if wait.done()} == (
            {"decided", "honours"} if with_gate else {"decided"})
        # A library aborting the waiting task loses nothing: waiting again goes on.
        waits["ignores"].cancel()
        await settle()
        again = asyncio.ensure_future(decisions.wait("ignores", scripts["ignores"]))
        await settle()
        assert not again.done()
        scripts["ignores"].decide(Succeed(2))
        await settle()
        assert again.done()
        for wait in waits.values():
            wait.cancel()

    asyncio.run(main())


def test_a_multiplied_delay_grows_by_the_backoff_at_each_retry_without_a_cap() -> None:
    policy = RetryPolicy(max_retries=5, retry_delay_ms=1000.0, backoff_multiplier=3.0,
                         max_retry_delay_ms=5000.0)
    assert [multiplied_delay_ms(policy, n) for n in range(4)] == [1000.0, 3000.0, 9000.0,
                                                                   27_000.0]
