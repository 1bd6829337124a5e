"""The executions query, its statistics and execution options (LC-032..LC-035,
capabilities `execution-queries` and `execution-options`): the oracle's rules (newest
first, pages that partition, the window's closed edge, live counts at any age), a backend
that claims neither (not claimed, never asked, submit called as before), the SQL store's
columns on every database (kept across a new engine; migration 0039 keeps the rows before
it) and the process child that carries both claims."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from optional_claims import (
    CANONICAL,
    REGISTRY,
    assert_carried_from_version_2,
    assert_not_claimed,
    memory_without,
)
from sql_databases import DATABASES, database, upgraded_over_rows
from sqlalchemy import text

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.process.codec import decode
from jobconform.backends.process.interfaces import JobRecord
from jobconform.backends.protocol import (
    EXECUTION_OPTIONS,
    EXECUTION_QUERIES,
    RuntimeSettings,
    TaskScript,
)
from jobconform.backends.sql import SqlBackend, create_store_engine
from jobconform.backends.sql.store import SqlJobStore
from jobconform.conformance.clock import VirtualClock
from jobconform.conformance.harness import Harness
from jobconform.reference import commands as cmd
from jobconform.reference import executions
from jobconform.reference.commands import Succeed
from jobconform.reference.lifecycle import Status, new_job

START = datetime(2026, 1, 1, tzinfo=UTC)
NOW = "2026-01-01T00:00:00.000000Z"


# -- the oracle -------------------------------------------------------------------------------


def test_consecutive_pages_hold_every_matching_job_once_newest_first() -> None:
    jobs = {f"j{n}": new_job(START) for n in range(7)}  # one instant: submission decides
    pages = [executions.page(jobs, START, 3, offset=offset, limit=3)
             for offset in (0, 3, 6, 9)]
    assert pages == [["j6", "j5", "j4"], ["j3", "j2", "j1"], ["j0"], []]
    assert executions.page(jobs, START, 3, limit=10) == ["j6", "j5", "j4"]  # page size


def test_the_window_keeps_its_edge_and_not_a_microsecond_before() -> None:
    now = START + timedelta(hours=1)
    jobs = {"edge": new_job(START), "before": new_job(START - timedelta(microseconds=1))}
    assert executions.page(jobs, now, 50, hours=1) == ["edge"]


def test_filters_all_apply_and_an_empty_set_of_owners_keeps_none() -> None:
    jobs = {"a": new_job(START, owner="ann", trigger="manual"),
            "b": new_job(START, owner="bob", trigger="manual"), "c": new_job(START)}
    assert executions.page(jobs, START, 50, owners=("ann", "bob"), trigger="manual") == [
        "b", "a"]
    assert executions.page(jobs, START, 50, owners=()) == []
    assert executions.page(jobs, START, 50, trigger="manual", owners=("ann",)) == ["a"]


def test_statistics_count_active_jobs_whatever_their_age() -> None:
    old_running = new_job(START)
    old_running = type(old_running)(Status.RUNNING, START, started_at=START)
    now = START + timedelta(hours=3)
    counts = executions.stats([old_running, new_job(now)], now, hours=1)
    assert counts == {"total": 1, "succeeded": 0, "failed": 0, "running": 1, "queued": 1}


# -- a backend that claims neither ------------------------------------------------------------


def test_without_the_claims_the_requirements_are_not_claimed_and_never_asked() -> None:
    # Claiming neither, as the worked examples do.
    backend = memory_without(EXECUTION_QUERIES, EXECUTION_OPTIONS)
    assert_not_claimed(backend, EXECUTION_QUERIES, ["LC-032", "LC-033", "LC-034"], "LC-001")
    assert_not_claimed(backend, EXECUTION_OPTIONS, ["LC-035"], "LC-001")
    harness = Harness(backend, CANONICAL, REGISTRY)
    harness.run(cmd.Submit("a"))  # the record's owner, trigger and options are not read
    for command in (cmd.QueryExecutions(), cmd.ExecutionStats(),
                    cmd.Submit("b", owner="ann"), cmd.Submit("c", options="opus")):
        with pytest.raises(ValueError, match="does not claim execution-"):
            harness.run(command)
    harness.close()


def test_a_body_changing_its_options_does_not_change_the_record() -> None:
    runtime = MemoryBackend().open(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                   VirtualClock())

    class Greedy(TaskScript):
        def run(self, arguments: object = None, options: object = None) -> object:
            assert isinstance(options, dict)
            options["model"] = "changed"
            return super().run(arguments, options)  # type: ignore[arg-type]

    script = Greedy()
    script.decide(Succeed("done"))
    job_id = runtime.submit(script, options={"model": "haiku"})
    runtime.dispatch()
    view = runtime.get(job_id)
    assert view is not None and view.options == {"model": "haiku"}
    assert script.options_handed == [{"model": "changed"}]  # what the body made of it


def test_the_process_protocol_carries_both_claims() -> None:
    assert_carried_from_version_2(EXECUTION_QUERIES, EXECUTION_OPTIONS)


def test_a_child_that_predates_the_fields_sends_records_without_them() -> None:
    """A version-2 child written before spec 0.20.0 (the worked Node.js child) leaves the
    record's owner, trigger and options out: the kit reads them as null."""
    record = decode({"job_id": "a", "status": "queued", "submitted_at": NOW,
                     "started_at": None, "finished_at": None, "result": None, "error": None,
                     "retry_count": None, "max_retries": None, "last_heartbeat": None,
                     "redelivery_count": None, "alerted": None, "poisoned": None},
                    JobRecord, None)  # type: ignore[arg-type]
    assert (record.owner, record.trigger, record.options) == (None, None, None)


# -- the SQL store ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", DATABASES)
def test_sql_owner_trigger_and_options_survive_a_new_engine(kind: str,
                                                            tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        runtime = SqlBackend(url).open(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                       VirtualClock())
        job_id = runtime.submit(TaskScript(), owner="ann", trigger="schedule",
                                options={"model": "opus", "n": [1, 2]})
        runtime.close()
        engine = create_store_engine(url)
        try:
            job = SqlJobStore(engine).get(job_id)
            assert job is not None
            assert (job.owner, job.trigger, job.options) == (
                "ann", "schedule", {"model": "opus", "n": [1, 2]})
        finally:
            engine.dispose()


@pytest.mark.parametrize("kind", DATABASES)
def test_migration_0039_keeps_existing_jobs(kind: str, tmp_path: Path) -> None:
    """Rows written before spec 0.20.0 name no owner, trigger or options."""
    with upgraded_over_rows(
            kind, tmp_path, "0037",  # the revision 0039 follows
            "INSERT INTO async_jobs (job_id, submission_order, status, submitted_at)"
            " VALUES ('j', 1, 'queued', '2026-01-01 00:00:00')") as engine, \
            engine.connect() as connection:
        assert connection.execute(text(
            "SELECT owner, options FROM async_jobs")).one() == (None, None)
