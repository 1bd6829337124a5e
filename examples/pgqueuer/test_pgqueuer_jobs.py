"""The pgqueuer example: pgqueuer's QueueManager on the real PostgreSQL, on the virtual clock.

Run with `tox -e example-pgqueuer` (installs the `pgqueuer-example` extra). PostgreSQL
must listen on 127.0.0.1:5432 (trust); under CI=true a missing server fails the tests.
"""

from __future__ import annotations

import asyncio
import re
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.adapter_testing import adapter_importable, need_server
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import Raise, Succeed

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
URL = "postgresql://postgres@127.0.0.1:5432/test"


async def fetch(query: str) -> list[asyncpg.Record]:
    """A query on a connection of the test's own (not the runtime's), in real time."""
    connection = await asyncpg.connect(URL, timeout=5)
    try:
        return list(await connection.fetch(query))
    finally:
        await connection.close()


@pytest.fixture(autouse=True)
def postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    need_server("PostgreSQL", "127.0.0.1:5432", lambda: asyncio.run(fetch("SELECT 1")),
                (TimeoutError, OSError, asyncpg.PostgresError))
    adapter_importable(monkeypatch, HERE)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(EPOCH)


@pytest.fixture
def runtime(clock: VirtualClock) -> Iterator[object]:
    from pgqueuer_jobs import PgqueuerRuntime

    with closing(PgqueuerRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                 clock)) as runtime:
        yield runtime


def pgqueuer_rows(runtime: object, table: str) -> list[tuple[object, ...]]:
    """pgqueuer's own rows, read from outside (its job table or its log)."""
    columns = "id, status" if table == "pgqueuer" else "job_id, status"
    rows = asyncio.run(fetch(f"SELECT {columns} FROM {runtime.schema}.{table}"  # type: ignore[attr-defined]
                             " ORDER BY 1, 2"))
    return [tuple(row) for row in rows]


def test_jobs_wait_at_the_gate_picked_by_pgqueuer_and_run_at_dispatch(
        runtime: object, clock: VirtualClock) -> None:
    first, second = TaskScript(), TaskScript()
    first_id, second_id = runtime.submit(first), runtime.submit(second)  # type: ignore[attr-defined]
    # pgqueuer's worker heard the NOTIFY and picked both jobs: they wait at the gate.
    assert pgqueuer_rows(runtime, "pgqueuer") == [(1, "picked"), (2, "picked")]
    clock.advance(600)  # 6000 of its 0.1 s log-flush timers and 60 health checks
    runtime.settle()  # type: ignore[attr-defined]
    statuses = [runtime.get(job).status for job in (first_id, second_id)]  # type: ignore[attr-defined]
    assert statuses == ["queued", "queued"]
    runtime.dispatch()  # type: ignore[attr-defined]
    clock.advance(1.5)
    first.decide(Succeed("done"))
    runtime.settle()  # type: ignore[attr-defined]
    view = runtime.get(first_id)  # type: ignore[attr-defined]
    assert (view.status, view.result) == ("succeeded", "done")
    assert (view.started_at - EPOCH).total_seconds() == 600
    assert (view.finished_at - EPOCH).total_seconds() == 601.5
    assert runtime.get(second_id).status == "queued"  # type: ignore[attr-defined]  # one slot
    runtime.dispatch()  # type: ignore[attr-defined]
    second.decide(Raise("ValueError", "boom"))
    runtime.settle()  # type: ignore[attr-defined]
    assert runtime.get(second_id).error == "ValueError: boom"  # type: ignore[attr-defined]
    # pgqueuer moved both to its log, the failure as its own "exception" status.
    assert pgqueuer_rows(runtime, "pgqueuer") == []
    assert (1, "successful") in pgqueuer_rows(runtime, "pgqueuer_log")
    assert (2, "exception") in pgqueuer_rows(runtime, "pgqueuer_log")


def test_a_cancel_is_pgqueuers_and_reaches_a_running_body_by_notify(runtime: object) -> None:
    honours, ignores = TaskScript(), TaskScript(honours_cancellation=False)
    honours_id = runtime.submit(honours)  # type: ignore[attr-defined]
    runtime.dispatch()  # type: ignore[attr-defined]
    assert runtime.cancel(honours_id)  # type: ignore[attr-defined]
    assert runtime.get(honours_id).status == "cancelled"  # type: ignore[attr-defined]
    assert (1, "canceled") in pgqueuer_rows(runtime, "pgqueuer_log")
    ignores_id = runtime.submit(ignores)  # type: ignore[attr-defined]
    runtime.dispatch()  # type: ignore[attr-defined]
    assert runtime.cancel(ignores_id)  # type: ignore[attr-defined]
    assert runtime.get(ignores_id).status == "running"  # type: ignore[attr-defined]
    assert not runtime.cancel(ignores_id)  # type: ignore[attr-defined]  # already asked
    ignores.decide(Succeed("late"))
    runtime.settle()  # type: ignore[attr-defined]
    assert runtime.get(ignores_id).status == "cancelled"  # type: ignore[attr-defined]


def test_close_ends_running_bodies_and_drops_the_scratch_schema(clock: VirtualClock) -> None:
    from pgqueuer_jobs import PgqueuerRuntime

    runtime = PgqueuerRuntime(RuntimeSettings(max_concurrent=2, max_tasks=None), clock)
    runtime.submit(TaskScript(honours_cancellation=False))
    runtime.submit(TaskScript())
    runtime.submit(TaskScript())  # at the gate: two slots
    runtime.dispatch()
    started = time.monotonic()
    runtime.close()
    assert time.monotonic() - started < 5
    schemas = asyncio.run(fetch("SELECT nspname FROM pg_namespace"
                                f" WHERE nspname = '{runtime.schema}'"))
    assert schemas == []


def test_a_deferred_job_comes_due_on_the_virtual_clock(
        runtime: object, clock: VirtualClock) -> None:
    """pgqueuer compares `execute_after` with the database's NOW(), which the connection
    answers with the virtual instant: a job deferred by a minute waits 59 s of virtual time
    and runs once 60 have passed, however little real time that took."""
    loop, queries = runtime.loop, runtime.queries  # type: ignore[attr-defined]
    (deferred,) = loop.run(queries.enqueue("body", b"x", execute_after=timedelta(minutes=1)))
    eta = loop.run(queries.next_deferred_eta(["body"]))  # the microseconds of a few queries
    assert timedelta(seconds=59.99) < eta <= timedelta(minutes=1)
    clock.advance(59)
    runtime.settle()  # type: ignore[attr-defined]
    assert pgqueuer_rows(runtime, "pgqueuer") == [(deferred, "queued")]
    clock.advance(1.5)
    runtime.settle()  # type: ignore[attr-defined]
    assert pgqueuer_rows(runtime, "pgqueuer") == []  # picked: its body ran (and failed,
    assert (deferred, "exception") in pgqueuer_rows(runtime, "pgqueuer_log")  # unscripted)
    created = asyncio.run(fetch(f"SELECT created FROM {runtime.schema}.pgqueuer_log"))  # type: ignore[attr-defined]
    # The log's default is the virtual NOW() too, within the microseconds it moves a query.
    assert all(timedelta(0) <= row["created"] - EPOCH < timedelta(seconds=61) for row in created)


def test_pgqueuer_reads_no_other_database_clock() -> None:
    """The virtual NOW() covers pgqueuer's SQL only while it reads time by no other name."""
    import pgqueuer

    package = Path(pgqueuer.__file__).parent
    other_clocks = re.compile(r"current_timestamp|clock_timestamp|statement_timestamp|"
                              r"transaction_timestamp|localtimestamp|timeofday|'now'", re.I)
    found = [f"{path.relative_to(package)}: {match.group()}"
             for path in sorted(package.rglob("*.py")) if "inmemory" not in path.parts
             for match in other_clocks.finditer(path.read_text())]
    assert found == []


@pytest.fixture
def retrying(clock: VirtualClock) -> Iterator[object]:
    from pgqueuer_retry import PgqueuerRetryRuntime

    with closing(PgqueuerRetryRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                      clock)) as runtime:
        yield runtime


def test_pgqueuers_delay_formula_is_the_specs_without_jitter(retrying: object) -> None:
    policy = RetryPolicy(max_retries=3, retry_delay_ms=1000, backoff_multiplier=2,
                         max_retry_delay_ms=6000)
    delays = [retrying.compute_delay_ms(policy, attempt) for attempt in range(5)]  # type: ignore[attr-defined]
    assert delays == [1000, 2000, 4000, 6000, 6000]
    with pytest.raises(OverflowError):  # it multiplies before it caps (RT-002's entry)
        retrying.compute_delay_ms(policy, 47)  # type: ignore[attr-defined]


def test_a_retry_waits_its_delay_then_the_workers_next_poll(
        retrying: object, clock: VirtualClock) -> None:
    """pgqueuer re-queues a failed attempt (attempts + 1, execute_after = NOW() + delay) by
    an UPDATE its statement-level trigger does not announce: the worker finds it at its next
    poll (30 s, its default dequeue_timeout), not when the 1 s delay has passed (RT-003)."""
    script = TaskScript()
    policy = RetryPolicy(max_retries=1, retry_delay_ms=1000, max_retry_delay_ms=1000)
    job_id = retrying.submit(script, policy)  # type: ignore[attr-defined]
    retrying.dispatch()  # type: ignore[attr-defined]
    script.decide(Raise("ValueError", "flaky"))
    retrying.settle()  # type: ignore[attr-defined]
    view = retrying.get(job_id)  # type: ignore[attr-defined]
    assert (view.status, view.retry_count, view.max_retries) == ("queued", 1, 1)
    rows = asyncio.run(fetch("SELECT status, attempts, execute_after FROM"
                             f" {retrying.schema}.pgqueuer"))  # type: ignore[attr-defined]
    assert [(row["status"], row["attempts"]) for row in rows] == [("queued", 1)]
    assert timedelta(seconds=1) <= rows[0]["execute_after"] - EPOCH < timedelta(seconds=1.01)
    clock.advance(29)
    retrying.dispatch()  # type: ignore[attr-defined]
    assert retrying.get(job_id).status == "queued"  # type: ignore[attr-defined]  # due, unseen
    clock.advance(1)  # the worker's poll, 30 s after it last looked
    retrying.dispatch()  # type: ignore[attr-defined]
    assert retrying.get(job_id).status == "running"  # type: ignore[attr-defined]
    script.decide(Raise("ValueError", "still"))
    retrying.settle()  # type: ignore[attr-defined]
    view = retrying.get(job_id)  # type: ignore[attr-defined]
    assert (view.status, view.retry_count, view.error) == ("failed", 1, "ValueError: still")


class Dispatches:
    """The scheduling target: no pre-check is asked for here; every dispatch is kept."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, datetime, str]] = []

    def pre_check(self, schedule_id: str) -> str:
        raise AssertionError("no schedule here has a pre-check")

    def dispatch(self, schedule_id: str, scheduled_for: datetime, message: str) -> None:
        self.sent.append((schedule_id, scheduled_for, message))


@pytest.fixture
def dispatches() -> Dispatches:
    return Dispatches()


@pytest.fixture
def scheduler(clock: VirtualClock, dispatches: Dispatches) -> Iterator[object]:
    from pgqueuer_schedules import PgqueuerSchedulesBackend

    from jobconform.reference.scheduling.oracle import SchedulingConfig

    with closing(PgqueuerSchedulesBackend().open_scheduling(clock, SchedulingConfig(),
                                                            dispatches)) as runtime:
        yield runtime


def schedule_rows(runtime: object) -> list[tuple[object, ...]]:
    """pgqueuer's schedules table, read from outside."""
    rows = asyncio.run(fetch("SELECT entrypoint, expression, next_run, status FROM"
                             f" {runtime.shared.schema}.pgqueuer_schedules"))  # type: ignore[attr-defined]
    return [(row["entrypoint"], row["expression"], row["next_run"] - EPOCH, row["status"])
            for row in rows]


def test_a_cron_is_a_row_of_pgqueuers_and_fires_a_second_after_its_time(
        scheduler: object, clock: VirtualClock, dispatches: Dispatches) -> None:
    """SC-003's entry: the SchedulerManager sleeps to the fire time plus a one-second
    leeway; until then its row shows the passed fire time."""
    sid = scheduler.create_cron("poll", "*/30 * * * *", "UTC")  # type: ignore[attr-defined]
    assert schedule_rows(scheduler) == [(sid, "*/30 * * * *", timedelta(minutes=30), "queued")]
    clock.advance(1800)
    scheduler.settle()  # type: ignore[attr-defined]
    assert dispatches.sent == []
    assert scheduler.get(sid).next_fire_at - EPOCH == timedelta(minutes=30)  # type: ignore[attr-defined]
    clock.advance(1)
    scheduler.settle()  # type: ignore[attr-defined]
    assert dispatches.sent == [(sid, EPOCH + timedelta(minutes=30), "poll")]
    assert schedule_rows(scheduler) == [(sid, "*/30 * * * *", timedelta(hours=1), "queued")]
    with pytest.raises(ValueError, match="expression"):  # pgqueuer's check: croniter's
        scheduler.create_cron("x", "61 * * * *", "UTC")  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="timezone"):  # its crontabs have no zone
        scheduler.create_cron("x", "0 * * * *", "Europe/Berlin")  # type: ignore[attr-defined]


def test_a_restart_runs_the_overdue_row_once_whatever_was_missed(
        scheduler: object, clock: VirtualClock, dispatches: Dispatches) -> None:
    """SC-007's entry: the row keeps its passed next_run through the downtime (the new
    SchedulerManager's INSERT does nothing on conflict) and is picked once at its start."""
    sid = scheduler.create_cron("hourly", "0 * * * *", "UTC")  # type: ignore[attr-defined]
    scheduler.crash()  # type: ignore[attr-defined]
    clock.advance(9000)  # 02:30: the fires at 01:00 and 02:00 missed
    again = scheduler.reopen()  # type: ignore[attr-defined]
    assert dispatches.sent == [(sid, EPOCH + timedelta(hours=2), "hourly")]
    assert [e.trigger for e in again.history(sid)] == ["catch_up"]
    assert schedule_rows(again) == [(sid, "0 * * * *", timedelta(hours=3), "queued")]


def test_a_one_shot_job_is_a_deferred_job_run_by_a_queue_manager_while_it_waits(
        scheduler: object, clock: VirtualClock, dispatches: Dispatches) -> None:
    sid = scheduler.create_once("renew", delay_seconds=60)  # type: ignore[attr-defined]
    assert scheduler.deferrals.task is not None  # type: ignore[attr-defined]
    assert pgqueuer_rows(scheduler.shared, "pgqueuer") == [(1, "queued")]  # type: ignore[attr-defined]
    clock.advance(59.999)
    scheduler.settle()  # type: ignore[attr-defined]
    assert dispatches.sent == []
    clock.advance(0.001)
    scheduler.settle()  # type: ignore[attr-defined]
    assert dispatches.sent == [(sid, EPOCH + timedelta(minutes=1), "renew")]
    assert scheduler.deferrals.task is None  # type: ignore[attr-defined]  # none waits


@pytest.fixture
def redelivering(clock: VirtualClock) -> Iterator[object]:
    from pgqueuer_redelivery import PgqueuerRedeliveryRuntime

    with closing(PgqueuerRedeliveryRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                           clock)) as runtime:
        yield runtime


def test_a_lease_pass_is_pgqueuers_stale_re_pick_and_the_lost_owner_still_writes(
        redelivering: object, clock: VirtualClock) -> None:
    """The pass is pgqueuer's dequeue with the lease as heartbeat_timeout: its bound is
    exclusive to the microsecond (NOW() exact), the same row is picked again under a new
    queue manager id, and the worker that lost it still deletes it by id (RD-006's entry)."""
    runtime, script = redelivering, TaskScript()
    job_id = runtime.submit(script)  # type: ignore[attr-defined]
    runtime.dispatch()  # type: ignore[attr-defined]  # its worker beats as the body begins
    clock.advance(60)
    assert runtime.expire_leases(60) == {"requeued": 0, "parked": 0}  # type: ignore[attr-defined]
    clock.advance(0.000001)
    assert runtime.expire_leases(60) == {"requeued": 1, "parked": 0}  # type: ignore[attr-defined]
    view = runtime.get(job_id)  # type: ignore[attr-defined]
    assert (view.status, view.redelivery_count, view.retry_count) == ("queued", 1, 0)
    assert pgqueuer_rows(runtime, "pgqueuer") == [(1, "picked")]  # the same row, picked again
    runtime.dispatch()  # type: ignore[attr-defined]
    assert runtime.get(job_id).status == "running"  # type: ignore[attr-defined]
    assert runtime.stale_owner_write(job_id, "heartbeat")  # type: ignore[attr-defined]
    assert runtime.stale_owner_write(job_id, "outcome")  # type: ignore[attr-defined]
    assert pgqueuer_rows(runtime, "pgqueuer") == []  # deleted under the live delivery
    assert runtime.get(job_id).status == "succeeded"  # type: ignore[attr-defined]
    assert runtime.operator_alerts() == []  # type: ignore[attr-defined]
