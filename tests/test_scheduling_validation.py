"""Business validation of what succeeded (SC-020..SC-024, capability
`scheduling-validation`): the oracle's rules (who is validated, how a verdict is read, one
alert per failure), a scheduler that does not claim it (not claimed, never asked, the
machine the one with ends), the SQL store's validation on every database (kept across a
new engine; migration 0038 keeps the rows before it), and the process child that carries
the claim."""

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
from sql_databases import (
    DATABASES,
    OLD_SCHEDULE,
    assert_a_check_refuses,
    database,
    schedule_store_on_a_new_engine,
    upgraded_over_rows,
)
from sqlalchemy import text

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import SCHEDULING_VALIDATION
from jobconform.backends.scheduling.runtime import verdict_passes
from jobconform.backends.sql import SqlBackend
from jobconform.conformance.clock import VirtualClock
from jobconform.conformance.machine_runner import MachineRun
from jobconform.conformance.scheduling.harness import HarnessTarget, SchedulingHarness
from jobconform.conformance.scheduling.machine import make_scheduling_machine
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling import commands as sc
from jobconform.reference.scheduling.oracle import (
    DECIDED,
    NOT_FOUND,
    REFUSED,
    VALIDATION_SET,
    VERDICT_TEXT,
    ExecutionOutcome,
    SchedulingConfig,
    SchedulingOracle,
    ValidationRun,
    Verdict,
    read_verdict,
    rejected,
)

START = datetime(2026, 1, 1, tzinfo=UTC)
ONE = datetime(2026, 1, 1, 1, tzinfo=UTC)
TWO = datetime(2026, 1, 1, 2, tzinfo=UTC)
SUCCEEDED, FAILED = ExecutionOutcome.SUCCEEDED, ExecutionOutcome.FAILED


# -- the oracle -------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "read"), [
    ('{"passed": true}', True), ('  {"passed": false, "reason": "x"}\n', False),
    ("PASSED: looks complete", None), ('{"passed": "yes"}', None), ('{"passed": 1}', None),
    ("[true]", None), ("", None), ('{"verdict": "pass"}', None)])
def test_only_a_json_object_with_a_boolean_passed_is_a_verdict(text: str,
                                                              read: bool | None) -> None:
    assert read_verdict(text) is read
    assert verdict_passes(text) is (read is True)  # the shipped runtime reads it the same


def test_a_success_with_validation_on_waits_and_its_first_verdict_decides() -> None:
    oracle = SchedulingOracle(SchedulingConfig())
    oracle.create_cron("a", "hourly", "0 * * * *", "UTC", None, START)
    assert oracle.set_validation("a", True, 0.0) == rejected("validation")
    assert oracle.set_validation("a", True, 600) == VALIDATION_SET
    assert oracle.set_validation("gone", True, 600) == NOT_FOUND
    oracle.settle(TWO)
    oracle.end_execution("a", ONE, SUCCEEDED, None, TWO)
    oracle.end_execution("a", TWO, FAILED, None, TWO)
    first, second = oracle.executions("a")
    assert (first.business_status, first.validation) == (
        "pending_validation", ValidationRun(TWO, 600.0))
    assert (second.business_status, second.validation) == ("skipped", None)
    assert oracle.end_validation("a", TWO, VERDICT_TEXT[Verdict.PASS], TWO) == REFUSED
    late = TWO + timedelta(seconds=601)
    assert oracle.end_validation("a", ONE, VERDICT_TEXT[Verdict.PASS], late) == DECIDED
    assert oracle.executions("a")[0].business_status == "failed_validation"
    assert oracle.end_validation("a", ONE, VERDICT_TEXT[Verdict.PASS], TWO) == REFUSED
    assert oracle.alerts == [("a", ONE, "schedule")]
    oracle.delete("a")
    assert oracle.alerts == [("a", ONE, "schedule")]  # an alert outlives its schedule


# -- a scheduler that does not claim it ---------------------------------------------------------


def test_without_the_claim_validation_is_not_claimed_and_never_asked() -> None:
    backend = memory_without(SCHEDULING_VALIDATION)  # as the worked examples' are
    assert_not_claimed(backend, SCHEDULING_VALIDATION,
                       ["SC-020", "SC-021", "SC-022", "SC-023", "SC-024"], "SC-019")
    harness = SchedulingHarness(backend, CANONICAL, REGISTRY)
    harness.run(sc.CreateCron("a", "hourly", "0 * * * *"))
    with pytest.raises(ValueError, match=f"does not claim {SCHEDULING_VALIDATION}"):
        harness.run(sc.SetValidation("a", True, 600))
    harness.run(AdvanceTime(3600))
    harness.run(sc.EndExecution("a", ONE, SUCCEEDED))  # no business status is read
    harness.close()


def test_without_the_claim_the_machine_is_the_one_with_ends() -> None:
    plain = make_scheduling_machine(memory_without(SCHEDULING_VALIDATION), CANONICAL, REGISTRY,
                                    MachineRun())
    validating = make_scheduling_machine(MemoryBackend(), CANONICAL, REGISTRY, MachineRun())
    assert plain.__name__ == "SchedulingMachineWithEnds"
    assert not hasattr(plain, "end_validation")
    assert validating.__name__ == "SchedulingMachineWithValidation"


def test_the_process_protocol_carries_the_claim() -> None:
    assert_carried_from_version_2(SCHEDULING_VALIDATION)


# -- the SQL store ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", DATABASES)
def test_sql_validation_survives_a_new_engine(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        clock = VirtualClock()
        runtime = SqlBackend(url).open_scheduling(clock, SchedulingConfig(), HarnessTarget())
        schedule_id = runtime.create_cron("hourly", "0 * * * *", "UTC")
        runtime.set_validation(schedule_id, True, 600)
        runtime.trigger(schedule_id)
        runtime.trigger(schedule_id)
        started = runtime.history(schedule_id)[0].scheduled_for
        assert runtime.end_execution(schedule_id, started, "succeeded", None) is True
        assert runtime.end_execution(schedule_id, started, "succeeded", None) is True
        assert runtime.end_validation(schedule_id, started, VERDICT_TEXT[Verdict.FAIL])
        runtime.close()
        with schedule_store_on_a_new_engine(url) as store:
            assert store.get(schedule_id).validation_timeout == 600.0  # type: ignore[union-attr]
            first, second = store.history(schedule_id)
            assert (first.business_status, second.business_status) == (
                "failed_validation", "pending_validation")
            run = store.validation_run(str(second.validation_run))
            assert run is not None and run.validates == second.execution_id
            assert store.alerts() == [first.execution_id]


@pytest.mark.parametrize("kind", DATABASES)
def test_migration_0038_keeps_existing_schedules(kind: str, tmp_path: Path) -> None:
    """Schedules written before spec 0.20.0 do not validate, their executions have no
    business status, and the business status CHECK holds."""
    with upgraded_over_rows(
            kind, tmp_path, "0035", OLD_SCHEDULE,
            "INSERT INTO schedule_executions (schedule_id, scheduled_for, started_at,"
            " fired_by, status, outcome) VALUES ('s', '2026-01-01 00:00:00',"
            " '2026-01-01 00:00:00', 'manual', 'dispatched', 'succeeded')") as engine:
        with engine.connect() as connection:
            assert connection.execute(text(
                "SELECT validation, validation_timeout FROM schedules")).one() in (
                    (False, None), (0, None))
            assert connection.execute(text(
                "SELECT business_status, validation_run FROM schedule_executions")
            ).one() == (None, None)
        assert_a_check_refuses(
            engine, "UPDATE schedule_executions SET business_status = 'unsure'")
