"""Store faults (jobconform.backends.faults): the injection points of the shipped stores,
the claim that makes RM-014, IK-015, RD-007 and RP-008 checkable, and the harnesses'
reading of a fault."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest
from sql_databases import DATABASES, database

from jobconform.backends.faults import (
    ProcessCrashed,
    StoreFaultsNotClaimed,
    StoreWriteFailed,
    WriteFaults,
)
from jobconform.backends.loading import BackendLoadError, check_backend, load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import IDEMPOTENCY, REAPER, REDELIVERY, REMINDERS, store_faults
from jobconform.backends.reminders.sql import SqlReminderStore
from jobconform.backends.reminders.store import FIRING, PENDING, StoredReminder
from jobconform.backends.sql import create_store_engine
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.harness import Harness
from jobconform.conformance.idempotency.harness import IdempotencyHarness
from jobconform.conformance.reminders.harness import ReminderHarness
from jobconform.reference import commands as cmd
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.idempotency.commands import ClaimKey, IdempotencyStoreFault
from jobconform.reference.idempotency.oracle import UNAVAILABLE
from jobconform.reference.reminders import commands as rc
from jobconform.spec import load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")
FAIL_FIRST = StoreFault(FaultKind.FAIL, 1)


def test_a_fault_strikes_only_the_planned_write() -> None:
    faults = WriteFaults()
    faults.before_write()  # nothing armed: nothing counted
    faults.arm(StoreFault(FaultKind.FAIL, 2))
    faults.before_write()
    assert not faults.struck()
    with pytest.raises(StoreWriteFailed):
        faults.before_write()
    faults.before_write()  # a failure strikes once
    assert faults.struck()


def test_a_crash_strikes_its_write_and_every_later_one() -> None:
    faults = WriteFaults()
    faults.arm(StoreFault(FaultKind.CRASH, 1))
    for _ in range(2):
        with pytest.raises(ProcessCrashed):
            faults.before_write()
    faults.arm(None)
    faults.before_write()
    assert faults.struck()  # disarming keeps the answer for the plan armed last


def test_a_fault_plan_strikes_a_real_write() -> None:
    with pytest.raises(ValueError, match="write 1 or later"):
        StoreFault(FaultKind.FAIL, 0)
    with pytest.raises(ValueError, match="failed writes only"):
        IdempotencyStoreFault(StoreFault(FaultKind.CRASH, 1), ClaimKey("c", "s", "k"))


@pytest.fixture(params=DATABASES)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as database_url:
        yield database_url


def _reminder() -> StoredReminder:
    return StoredReminder("r1", "hi", PENDING, EPOCH, EPOCH, EPOCH)


def test_sql_write_failure_rolls_back_and_a_crash_keeps_what_was_committed(url: str) -> None:
    store = SqlReminderStore(create_store_engine(url), owns_engine=True)
    store.clear()
    store.add(_reminder())
    store.inject_fault(FAIL_FIRST)
    with pytest.raises(StoreWriteFailed):
        store.transition("r1", PENDING, status=FIRING, due_at=None, attempts=1)
    assert store.get("r1") == _reminder()
    assert store.fault_struck()
    store.inject_fault(StoreFault(FaultKind.CRASH, 1))
    with pytest.raises(ProcessCrashed):
        store.transition("r1", PENDING, status=FIRING, due_at=None, attempts=1)
    store.inject_fault(None)
    # The crash ended the statement, not the database (an in-memory SQLite one included).
    reopened = store.reopen()
    assert reopened.get("r1") == _reminder()
    assert reopened.transition("r1", PENDING, status=FIRING, due_at=None, attempts=1)
    reopened.close()


def test_store_faults_are_claimed_beside_their_area() -> None:
    class FaultsWithoutArea(MemoryBackend):
        capabilities = frozenset({store_faults(REMINDERS)})

    class UnknownFaults(MemoryBackend):
        capabilities = frozenset({REMINDERS, "store-faults:nowhere"})

    with pytest.raises(BackendLoadError, match="but not the reminders area"):
        check_backend(FaultsWithoutArea(), "faults-without-area")
    with pytest.raises(BackendLoadError, match="unknown capabilities"):
        check_backend(UnknownFaults(), "unknown-faults")


class NoFaultsBackend(MemoryBackend):
    name = "no-faults"
    capabilities = MemoryBackend.capabilities - {store_faults(REMINDERS),
                                                 store_faults(IDEMPOTENCY)}


def test_without_the_claim_fault_checks_are_skipped_never_run() -> None:
    backend = NoFaultsBackend()
    for requirement_id, claim in (("RM-014", "store-faults:reminders"),
                                  ("IK-015", "store-faults:idempotency")):
        reason = skip_reason(REGISTRY, backend, CANONICAL, [requirement_id])
        assert reason is not None and claim in reason
        assert skip_reason(REGISTRY, MemoryBackend(), CANONICAL, [requirement_id]) is None
    reminders = ReminderHarness(backend, CANONICAL, REGISTRY)
    assert not reminders.takes_store_faults
    with pytest.raises(StoreFaultsNotClaimed):
        reminders.run(rc.ReminderStoreFault(FAIL_FIRST, AdvanceTime(60)))
    reminders.close()


@pytest.mark.parametrize("backend", ["memory", "sql", "threaded", "threaded+sql"])
def test_a_crash_between_fires_loses_and_doubles_nothing(backend: str) -> None:
    with closing(ReminderHarness(load_backend(backend), CANONICAL, REGISTRY)) as harness:
        for alias in ("a", "b", "c"):
            harness.run(rc.CreateReminder(alias, f"remember {alias}", delay_seconds=60))
        harness.run(rc.ReminderStoreFault(StoreFault(FaultKind.CRASH, 2), AdvanceTime(60)))
        statuses = [view.status for view in harness.runtime.list_reminders(None)]
        assert statuses == ["fired", "firing", "firing"]
        assert harness.oracle.dispatches == {"a": 1, "b": 1, "c": 1}
        assert harness.oracle.reminders["a"].fired_at == EPOCH + timedelta(seconds=60)


@pytest.mark.parametrize("backend", ["memory", "sql", "threaded"])
def test_a_claim_whose_insert_fails_holds_no_key(backend: str) -> None:
    with closing(IdempotencyHarness(load_backend(backend), CANONICAL, REGISTRY)) as harness:
        answer = harness.run(IdempotencyStoreFault(FAIL_FIRST, ClaimKey("c1", "s", "k", 1)))
        assert answer == UNAVAILABLE
        assert harness.run(ClaimKey("c2", "s", "k", 1)).kind == "started"  # type: ignore[attr-defined]


# -- the job store: lease passes (RD-007) and sweeps (RP-008) ------------------------------


def _lapsed_pair(harness: Harness) -> None:
    """Job a at the cap of 1 and job b below it, both running and past a 60 s lease."""
    harness.run(cmd.Submit("a"))
    harness.run(cmd.Dispatch())
    harness.run(cmd.AdvanceTime(61))
    harness.run(cmd.ExpireLeases(60))
    harness.run(cmd.Submit("b"))
    harness.run(cmd.Dispatch())
    harness.run(cmd.AdvanceTime(61))


@pytest.mark.parametrize("backend", ["memory", "sql"])
@pytest.mark.parametrize("kind", list(FaultKind))
@pytest.mark.parametrize("write", [1, 2, 3, 4])
def test_a_fault_in_a_lease_pass_loses_and_doubles_nothing(backend: str, kind: FaultKind,
                                                           write: int) -> None:
    # Writes: a's mark (1), a's poison (2), b's re-queue (3); 4 is never made.
    with closing(Harness(load_backend(backend), CANONICAL, REGISTRY, max_redelivery=1)) as harness:
        _lapsed_pair(harness)
        answer = harness.run(cmd.JobStoreFault(StoreFault(kind, write), cmd.ExpireLeases(60)))
        crashed_before = kind is FaultKind.CRASH and write <= 3
        if not crashed_before:
            assert answer == {"requeued": 1, "parked": 1}
        assert harness.run(cmd.OperatorAlerts()) == ["a"]
        assert harness.run(cmd.Get("b")).redelivery_count == 1  # type: ignore[union-attr]
        assert harness.run(cmd.Get("a")).poisoned is True  # type: ignore[union-attr]


def test_the_model_counts_a_park_as_two_writes_and_a_marked_park_as_one() -> None:
    with closing(Harness(load_backend("memory"), CANONICAL, REGISTRY, max_redelivery=1)) as harness:
        _lapsed_pair(harness)
        assert harness.model.lease_pass_writes(60) == 3
        harness.run(cmd.JobStoreFault(StoreFault(FaultKind.CRASH, 2), cmd.ExpireLeases(60)))
        left = harness.model.crash_left
        assert left is not None and left["a"].alerted and left["a"].status.value == "running"
        assert harness.model.crash_alert_states == [("a", "running")]


@pytest.mark.parametrize("backend", ["memory", "sql"])
def test_a_delete_failing_mid_sweep_keeps_what_went_before_counted(backend: str) -> None:
    with closing(Harness(load_backend(backend), CANONICAL, REGISTRY, max_concurrent=3)) as harness:
        harness.run(cmd.StartReaper(0.0, 1000.0))
        for alias in ("a", "b", "c"):
            harness.run(cmd.Submit(alias))
            harness.run(cmd.Finish(alias, cmd.Succeed(None)))
        harness.run(cmd.Dispatch())
        harness.run(cmd.JobStoreFault(StoreFault(FaultKind.FAIL, 3), cmd.AdvanceTime(1)))
        assert harness.run(cmd.ListJobs()) == ["c"]
        assert harness.run(cmd.ReaperStatus()) == {"running": True, "sweeps": 0,
                                                   "failed_sweeps": 1, "deleted": 2}


def test_job_store_faults_need_their_claim_and_a_crash_is_for_lease_passes() -> None:
    class NoJobStoreFaults(MemoryBackend):
        name = "no-job-store-faults"
        capabilities = MemoryBackend.capabilities - {store_faults(REDELIVERY),
                                                     store_faults(REAPER)}

    for requirement_id in ("RD-007", "RP-008"):
        reason = skip_reason(REGISTRY, NoJobStoreFaults(), CANONICAL, [requirement_id])
        assert reason is not None and "store-faults" in reason
    with (closing(Harness(NoJobStoreFaults(), CANONICAL, REGISTRY)) as harness,
          pytest.raises(StoreFaultsNotClaimed)):
        harness.run(cmd.JobStoreFault(FAIL_FIRST, cmd.ExpireLeases(60)))
    with (closing(Harness(load_backend("memory"), CANONICAL, REGISTRY)) as harness,
          pytest.raises(ValueError, match="write failures only")):
        harness.run(cmd.JobStoreFault(StoreFault(FaultKind.CRASH, 1), cmd.AdvanceTime(1)))


def test_a_job_store_fault_round_trips_through_json() -> None:
    command = cmd.JobStoreFault(StoreFault(FaultKind.CRASH, 2), cmd.ExpireLeases(60.0))
    assert cmd.command_from_json(cmd.command_to_json(command)) == command
    assert "crashes at store write 2" in cmd.describe(command)
