"""How a dispatched execution ended (SC-019, capability `scheduling-ends`): the oracle's
rule (the first end stays, one end per dispatch), a scheduler that does not claim it (not
claimed, never asked, the machine unchanged), the SQL store's `outcome` column on every
database (kept across a new engine; migration 0035 keeps the rows before it), and the
process child that carries the claim."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from optional_claims import (
    CANONICAL,
    REGISTRY,
    assert_carried_from_version_2,
    assert_not_claimed,
    memory_without,
)
from sql_databases import (
    DATABASES,
    OLD_SCHEDULE,
    assert_a_check_refuses,
    database,
    schedule_store_on_a_new_engine,
    upgraded_over_rows,
)
from sqlalchemy import text

from jobconform.backends.protocol import SCHEDULING_ENDS, SCHEDULING_VALIDATION
from jobconform.backends.sql import SqlBackend
from jobconform.conformance.clock import VirtualClock
from jobconform.conformance.machine_runner import MachineRun
from jobconform.conformance.scheduling.harness import HarnessTarget, SchedulingHarness
from jobconform.conformance.scheduling.machine import make_scheduling_machine
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling import commands as sc
from jobconform.reference.scheduling.oracle import (
    ENDED,
    NOT_FOUND,
    REFUSED,
    ExecutionOutcome,
    PreCheckAnswer,
    SchedulingConfig,
    SchedulingOracle,
)

ONE = datetime(2026, 1, 1, 1, tzinfo=UTC)
TWO = datetime(2026, 1, 1, 2, tzinfo=UTC)
SUCCEEDED, FAILED = ExecutionOutcome.SUCCEEDED, ExecutionOutcome.FAILED


# -- the oracle -------------------------------------------------------------------------------


def test_the_first_end_stays_and_each_dispatch_takes_one() -> None:
    oracle = SchedulingOracle(SchedulingConfig())
    start = datetime(2026, 1, 1, tzinfo=UTC)
    oracle.create_cron("a", "hourly", "0 * * * *", "UTC", None, start)
    oracle.create_cron("b", "checked", "0 * * * *", "UTC", PreCheckAnswer.SKIP, start)
    oracle.settle(TWO)
    oracle.trigger("a", TWO)  # a manual run carrying the fire's scheduled_for
    assert oracle.end_execution("a", ONE, SUCCEEDED, 0.25) == ENDED
    assert oracle.end_execution("a", ONE, FAILED, None) == REFUSED  # the late failure
    assert oracle.end_execution("a", TWO, FAILED, 0.5) == ENDED  # the scheduled fire
    assert oracle.end_execution("a", TWO, SUCCEEDED, None) == ENDED  # then the manual run
    assert oracle.end_execution("a", TWO, SUCCEEDED, None) == REFUSED
    assert [(e.trigger, e.outcome, e.cost) for e in oracle.executions("a")] == [
        ("schedule", "succeeded", 0.25), ("schedule", "failed", 0.5),
        ("manual", "succeeded", None)]
    assert oracle.end_execution("b", ONE, SUCCEEDED, None) == REFUSED  # skipped
    assert [e.outcome for e in oracle.executions("b")] == [None, None]
    assert oracle.end_execution("gone", ONE, SUCCEEDED, None) == NOT_FOUND


# -- a scheduler that does not claim it ---------------------------------------------------------


def test_without_the_claim_sc019_is_not_claimed_and_never_asked() -> None:
    backend = memory_without(SCHEDULING_ENDS)  # as the worked examples' are
    assert_not_claimed(backend, SCHEDULING_ENDS, ["SC-019"], "SC-015")
    harness = SchedulingHarness(backend, CANONICAL, REGISTRY)
    harness.run(sc.CreateCron("a", "hourly", "0 * * * *"))
    harness.run(AdvanceTime(3600))
    with pytest.raises(ValueError, match=f"does not claim {SCHEDULING_ENDS}"):
        harness.run(sc.EndExecution("a", ONE, SUCCEEDED))
    harness.run(sc.ReadHistory("a"))  # the outcome is not read: nothing to compare
    harness.close()


def test_without_the_claim_the_machine_is_the_one_before_ends() -> None:
    plain = make_scheduling_machine(memory_without(SCHEDULING_ENDS), CANONICAL, REGISTRY,
                                    MachineRun())
    with_ends = make_scheduling_machine(memory_without(SCHEDULING_VALIDATION), CANONICAL,
                                        REGISTRY, MachineRun())
    assert plain.__name__ == "SchedulingMachine" and not hasattr(plain, "end_execution")
    assert with_ends.__name__ == "SchedulingMachineWithEnds"


def test_the_process_protocol_carries_the_claim() -> None:
    assert_carried_from_version_2(SCHEDULING_ENDS)


# -- the SQL store ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", DATABASES)
def test_sql_ends_survive_a_new_engine(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        runtime = SqlBackend(url).open_scheduling(VirtualClock(), SchedulingConfig(),
                                                  HarnessTarget())
        schedule_id = runtime.create_cron("hourly", "0 * * * *", "UTC")
        runtime.trigger(schedule_id)  # scheduled_for: the clock's start
        started = runtime.history(schedule_id)[0].scheduled_for
        assert runtime.end_execution(schedule_id, started, "succeeded", 0.25) is True
        assert runtime.end_execution(schedule_id, started, "failed", None) is False
        runtime.close()
        with schedule_store_on_a_new_engine(url) as store:
            (execution,) = store.history(schedule_id)
            assert (execution.outcome, execution.cost) == ("succeeded", 0.25)


@pytest.mark.parametrize("kind", DATABASES)
def test_migration_0035_keeps_existing_executions(kind: str, tmp_path: Path) -> None:
    """Rows written before spec 0.19.0 have not ended, and the outcome CHECK holds."""
    with upgraded_over_rows(
            kind, tmp_path, "0021", OLD_SCHEDULE,
            "INSERT INTO schedule_executions (schedule_id, scheduled_for, started_at,"
            " fired_by, status) VALUES ('s', '2026-01-01 00:00:00',"
            " '2026-01-01 00:00:00', 'manual', 'dispatched')") as engine:
        with engine.begin() as connection:
            assert connection.execute(text(
                "SELECT outcome, cost FROM schedule_executions")).one() == (None, None)
            connection.execute(text("UPDATE schedule_executions SET outcome = 'failed'"))
        assert_a_check_refuses(engine, "UPDATE schedule_executions SET outcome = 'lost'")
