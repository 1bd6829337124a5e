"""How a dispatched execution ended (SC-019, capability `scheduling-ends`): the oracle's
rule (the first end stays, one end per dispatch), a scheduler that does not claim it (not
claimed, never asked, the machine unchanged), the SQL store's `outcome` column on every
database (kept across a new engine; migration 0035 keeps the rows before it), and the
process child that carries the claim."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from alembic import command as alembic
from sql_databases import DATABASES, database, migrations_on
from sqlalchemy import text

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.process.backend import carried_capabilities
from jobconform.backends.protocol import SCHEDULING_ENDS, SCHEDULING_VALIDATION
from jobconform.backends.scheduling.sql import SqlScheduleStore
from jobconform.backends.sql import SqlBackend, create_store_engine
from jobconform.conformance.applicability import skip_reason
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
from jobconform.spec import load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")
ONE = datetime(2026, 1, 1, 1, tzinfo=UTC)
TWO = datetime(2026, 1, 1, 2, tzinfo=UTC)
SUCCEEDED, FAILED = ExecutionOutcome.SUCCEEDED, ExecutionOutcome.FAILED


class WithoutEnds(MemoryBackend):
    """The memory backend not claiming scheduling-ends, as the worked examples' are."""

    name = "without-ends"
    capabilities = MemoryBackend.capabilities - {SCHEDULING_ENDS}


class EndsWithoutValidation(MemoryBackend):
    """The memory backend claiming scheduling-ends but not scheduling-validation."""

    name = "ends-without-validation"
    capabilities = MemoryBackend.capabilities - {SCHEDULING_VALIDATION}


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
    backend = WithoutEnds()
    reason = skip_reason(REGISTRY, backend, CANONICAL, ["SC-019"])
    assert reason is not None and SCHEDULING_ENDS in reason
    assert skip_reason(REGISTRY, backend, CANONICAL, ["SC-015"]) is None
    harness = SchedulingHarness(backend, CANONICAL, REGISTRY)
    harness.run(sc.CreateCron("a", "hourly", "0 * * * *"))
    harness.run(AdvanceTime(3600))
    with pytest.raises(ValueError, match=f"does not claim {SCHEDULING_ENDS}"):
        harness.run(sc.EndExecution("a", ONE, SUCCEEDED))
    harness.run(sc.ReadHistory("a"))  # the outcome is not read: nothing to compare
    harness.close()


def test_without_the_claim_the_machine_is_the_one_before_ends() -> None:
    plain = make_scheduling_machine(WithoutEnds(), CANONICAL, REGISTRY, MachineRun())
    with_ends = make_scheduling_machine(EndsWithoutValidation(), CANONICAL, REGISTRY,
                                        MachineRun())
    assert plain.__name__ == "SchedulingMachine" and not hasattr(plain, "end_execution")
    assert with_ends.__name__ == "SchedulingMachineWithEnds"


def test_the_process_protocol_carries_the_claim() -> None:
    assert SCHEDULING_ENDS in carried_capabilities(2)
    assert SCHEDULING_ENDS not in carried_capabilities(1)  # no scheduling in version 1


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
        engine = create_store_engine(url)
        try:
            (execution,) = SqlScheduleStore(engine).history(schedule_id)
            assert (execution.outcome, execution.cost) == ("succeeded", 0.25)
        finally:
            engine.dispose()


@pytest.mark.parametrize("kind", DATABASES)
def test_migration_0035_keeps_existing_executions(kind: str, tmp_path: Path) -> None:
    """Rows written before spec 0.19.0 have not ended, and the outcome CHECK holds."""
    with database(kind, tmp_path) as url:
        engine = create_store_engine(url)
        with engine.begin() as connection:
            config = migrations_on(connection)
            alembic.upgrade(config, "0021")
            connection.execute(text(
                "INSERT INTO schedules (schedule_id, kind, message, pre_check, created_at)"
                " VALUES ('s', 'once', 'm', false, '2026-01-01 00:00:00')"))
            connection.execute(text(
                "INSERT INTO schedule_executions (schedule_id, scheduled_for, started_at,"
                " fired_by, status) VALUES ('s', '2026-01-01 00:00:00',"
                " '2026-01-01 00:00:00', 'manual', 'dispatched')"))
            alembic.upgrade(config, "heads")
            assert connection.execute(text(
                "SELECT outcome, cost FROM schedule_executions")).one() == (None, None)
            connection.execute(text("UPDATE schedule_executions SET outcome = 'failed'"))
        with pytest.raises(Exception, match=r"(?i)check|constraint"), \
                engine.begin() as connection:
            connection.execute(text("UPDATE schedule_executions SET outcome = 'lost'"))
        engine.dispose()
