"""Re-delivery with a cap and poison parking (spec area "redelivery", RD-001..RD-005): the
oracle's transition, the step runtime on every store, and a worker process killed mid-job
whose job another worker re-delivers under the same id.

The SQL cases run on SQLite, PostgreSQL and MariaDB (tests/sql_databases.py). Waits on
other processes have real-time bounds only as guards against a hang.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterator
from datetime import datetime, timedelta
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from pathlib import Path

import pytest
from sql_databases import DATABASES, JOB_STORE_KINDS, database, job_store

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.backends.reaper import OperatorAlerts
from jobconform.backends.sql import SqlJobStore
from jobconform.backends.step_runtime import StepRuntime
from jobconform.backends.store import (
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    JobStore,
    StoredJob,
)
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference import lifecycle
from jobconform.reference.commands import Succeed
from jobconform.reference.lifecycle import (
    POISON_ERROR,
    EventKind,
    IllegalTransition,
    Status,
)
from jobconform.reference.lifecycle import (
    Event as JobEvent,
)

GUARD_SECONDS = 120.0
LEASE_SECONDS = 60.0
SPAWN = multiprocessing.get_context("spawn")


def at(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


# -- the oracle --------------------------------------------------------------------------------


def test_a_redelivery_counts_itself_and_spends_no_retry() -> None:
    running = lifecycle.step(lifecycle.new_job(at(0), max_retries=2),
                             JobEvent(EventKind.START, at(1)))
    queued = lifecycle.step(running, JobEvent(EventKind.REDELIVER, at(70)))
    assert (queued.status, queued.redelivery_count, queued.retry_count) == (Status.QUEUED, 1, 0)
    assert queued.started_at == at(1) and queued.finished_at is None
    with pytest.raises(IllegalTransition, match="'redeliver' is not allowed in state 'queued'"):
        lifecycle.step(queued, JobEvent(EventKind.REDELIVER, at(71)))


def test_an_operator_alert_is_raised_once_per_job_id() -> None:
    alerts = OperatorAlerts()
    assert alerts.raise_once("b") and alerts.raise_once("a")
    assert not alerts.raise_once("b")
    assert alerts.job_ids() == ["b", "a"]


# -- the step runtime on every store -------------------------------------------------------------


@pytest.fixture(params=JOB_STORE_KINDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JobStore]:
    with job_store(request.param, tmp_path) as opened:
        yield opened


def test_lease_expiries_requeue_up_to_the_cap_then_park_and_persist(store: JobStore) -> None:
    clock = VirtualClock(EPOCH)
    runtime = StepRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None, max_redelivery=2),
                          clock, store)
    job_id = runtime.submit(TaskScript())
    for expected_count in (1, 2):
        runtime.dispatch()
        clock.advance(LEASE_SECONDS + 1)
        assert runtime.expire_leases(LEASE_SECONDS) == {"requeued": 1, "parked": 0}
        requeued = store.get(job_id)
        assert requeued is not None
        assert (requeued.status, requeued.redelivery_count, requeued.worker_id) == (
            QUEUED, expected_count, None)
    runtime.dispatch()
    clock.advance(LEASE_SECONDS + 1)
    assert runtime.expire_leases(LEASE_SECONDS) == {"requeued": 0, "parked": 1}
    parked = store.get(job_id)
    assert parked is not None
    assert (parked.status, parked.error, parked.redelivery_count, parked.alerted,
            parked.poisoned) == (FAILED, POISON_ERROR, 2, True, True)
    assert runtime.operator_alerts() == [job_id]
    health = runtime.health()
    assert (health.processed, health.failed) == (1, 1)
    # A parked job is terminal: later passes leave it and raise no second alert.
    clock.advance(LEASE_SECONDS + 1)
    assert runtime.expire_leases(LEASE_SECONDS) == {"requeued": 0, "parked": 0}
    assert runtime.operator_alerts() == [job_id]


def test_heartbeats_keep_the_lease_and_never_lower_the_count(store: JobStore) -> None:
    clock = VirtualClock(EPOCH)
    runtime = StepRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None), clock, store)
    script = TaskScript()
    job_id = runtime.submit(script)
    runtime.dispatch()
    clock.advance(LEASE_SECONDS + 1)
    runtime.expire_leases(LEASE_SECONDS)
    runtime.dispatch()
    for _ in range(3):
        clock.advance(LEASE_SECONDS)  # exactly the lease: still held
        assert runtime.expire_leases(LEASE_SECONDS) == {"requeued": 0, "parked": 0}
        runtime.heartbeat(job_id)
    script.decide(Succeed("done"))
    runtime.settle()
    done = store.get(job_id)
    assert done is not None and (done.status, done.redelivery_count) == (SUCCEEDED, 1)


# -- a worker process killed mid-job ---------------------------------------------------------------


def claim_one_and_hang(url: str, claimed: Queue[StoredJob], never: Event) -> None:
    """A worker process that claims a job, reports it, and is busy with it until killed."""
    store = SqlJobStore.connect(url, migrate_schema=False)
    (job,) = store.claim("doomed-worker", 1, at(0))
    claimed.put(job)
    never.wait()


@pytest.mark.parametrize("kind", DATABASES)
def test_a_killed_workers_job_is_redelivered_under_the_same_id(kind: str,
                                                               tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        store = SqlJobStore.connect(url)
        clock = VirtualClock(EPOCH)
        survivor = StepRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None), clock, store,
                               worker_id="survivor")
        script = TaskScript()
        job_id = survivor.submit(script)
        claimed: Queue[StoredJob] = SPAWN.Queue()
        never = SPAWN.Event()
        worker = SPAWN.Process(target=claim_one_and_hang, args=(url, claimed, never))
        worker.start()
        try:
            assert claimed.get(timeout=GUARD_SECONDS).job_id == job_id
        finally:
            worker.kill()
            worker.join(GUARD_SECONDS)
        clock.advance(LEASE_SECONDS + 1)
        assert survivor.expire_leases(LEASE_SECONDS) == {"requeued": 1, "parked": 0}
        survivor.dispatch()
        taken = store.get(job_id)
        assert taken is not None
        assert (taken.status, taken.worker_id, taken.redelivery_count) == (
            RUNNING, "survivor", 1)
        script.decide(Succeed(42))
        survivor.settle()
        assert survivor.get_result(job_id) == 42
        assert [job.job_id for job in store.list()] == [job_id]
        store.close()
