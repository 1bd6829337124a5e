"""The operator queue (RD-008, capability `operator-queue`): a request is unique per agent
and request id, in the oracle, in each shipped store (a race between two parkers too), and
without the claim the requirement is not claimed and never asked."""

from __future__ import annotations

import threading
from contextlib import closing
from pathlib import Path

import pytest
from optional_claims import (
    CANONICAL,
    REGISTRY,
    assert_carried_from_version_2,
    assert_not_claimed,
    memory_without,
)
from sql_databases import DATABASES, database

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import OPERATOR_QUEUE
from jobconform.backends.sql import SqlJobStore
from jobconform.backends.store import InMemoryJobStore, JobStore
from jobconform.conformance.harness import Harness
from jobconform.conformance.machine_runner import MachineRun
from jobconform.conformance.reaper.machine import make_reaper_machine
from jobconform.reference import commands as cmd


def test_the_oracle_keys_requests_by_agent_and_request_id() -> None:
    harness = Harness(MemoryBackend(), CANONICAL, REGISTRY)
    assert harness.run(cmd.ParkRequest("scout", "approval-1")) == "request 1"
    assert harness.run(cmd.ParkRequest("critic", "approval-1")) == "request 2"
    assert harness.run(cmd.ParkRequest("scout", "approval-1")) == "request 1"  # a re-park
    assert harness.run(cmd.OperatorRequests()) == [["request 1", "scout", "approval-1"],
                                                   ["request 2", "critic", "approval-1"]]
    harness.close()


def _park_from_threads(store: JobStore, parkers: int = 4) -> set[str]:
    """The same request parked by `parkers` threads released together; the ids answered."""
    barrier = threading.Barrier(parkers)
    answers: list[str] = []

    def park() -> None:
        barrier.wait()
        answers.append(store.park_request("scout", "approval-1"))

    threads = [threading.Thread(target=park) for _ in range(parkers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return set(answers)


def test_memory_parkers_racing_land_on_one_request() -> None:
    store = InMemoryJobStore()
    (minted,) = _park_from_threads(store)
    assert store.operator_requests() == [(minted, "scout", "approval-1")]


@pytest.mark.parametrize("kind", DATABASES)
def test_sql_parkers_racing_land_on_one_request_that_a_new_engine_finds(
        kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        with closing(SqlJobStore.connect(url)) as store:
            (minted,) = _park_from_threads(store)
            assert store.park_request("critic", "approval-1") != minted
        with closing(SqlJobStore.connect(url, migrate_schema=False)) as reopened:
            assert [entry[1:] for entry in reopened.operator_requests()] == [
                ("scout", "approval-1"), ("critic", "approval-1")]
            assert reopened.operator_requests()[0][0] == minted


def test_without_the_claim_rd008_is_not_claimed_and_never_asked() -> None:
    backend = memory_without(OPERATOR_QUEUE)  # as the worked examples' are
    assert_not_claimed(backend, OPERATOR_QUEUE, ["RD-008"], "RD-003")
    harness = Harness(backend, CANONICAL, REGISTRY)
    with pytest.raises(ValueError, match=f"with {OPERATOR_QUEUE}"):
        harness.run(cmd.ParkRequest("scout", "approval-1"))
    harness.close()


def test_without_the_claim_the_machine_is_the_one_before_the_queue() -> None:
    plain = make_reaper_machine(memory_without(OPERATOR_QUEUE), CANONICAL, REGISTRY, MachineRun())
    queued = make_reaper_machine(MemoryBackend(), CANONICAL, REGISTRY, MachineRun())
    assert plain.__name__ == "ReaperMachine" and not hasattr(plain, "park_request")
    assert queued.__name__ == "ReaperMachineWithOperatorQueue"


def test_the_process_protocol_carries_the_claim() -> None:
    assert_carried_from_version_2(OPERATOR_QUEUE)
