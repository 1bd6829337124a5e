"""Ownership fencing (issue 17): two interleavings of owners and rescuers on one store.

(a) A stale owner: worker A claims a job and falls silent, a lease pass re-queues it and
    worker B claims it. A's late completion and A's heartbeat must be refused: the job stays
    B's, running, with B's heartbeat.
(b) A rescue racing a re-claim: a rescuer reads a job as silent, and before it writes, a
    second rescuer re-queues it and worker B re-claims it. The first rescuer must leave B's
    live job alone, and the re-delivery count must stay exact (one per lease expiry).

Each runs with the step runtime and with the threaded runtime as the stale owner or the
racing rescuer, on the in-memory store and on the SQL store over a SQLite file, PostgreSQL
and MariaDB. The race is made deterministic: the first rescuer's store runs the second
rescuer and B's claim right after the rescuer's read, in the same thread.

Also here: a threaded worker's own lease passes (recovery by default) and the store's
token itself.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any

import pytest
from sql_databases import DATABASES, JOB_STORE_KINDS, database, migrated_database

from jobconform.backends import ownership
from jobconform.backends.loading import load_backend
from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.backends.sql import SqlBackend, SqlJobStore
from jobconform.backends.step_runtime import StepRuntime
from jobconform.backends.store import (
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    TERMINAL,
    InMemoryJobStore,
    JobStore,
    StoredJob,
)
from jobconform.backends.threaded import ThreadedRuntime, WorkerConfig
from jobconform.backends.threaded.config import WorkerConfigError
from jobconform.conformance.clock import VirtualClock
from jobconform.conformance.gallery.sql import SQL_GALLERY, WithoutFencingStore
from jobconform.reference.commands import Succeed

LEASE_SECONDS = 60.0
SETTINGS = RuntimeSettings(max_concurrent=1, max_tasks=None)
RUNTIMES = ("step", "threaded")
GUARD_SECONDS = 120.0  # real seconds; only a guard against a hung process
SPAWN = multiprocessing.get_context("spawn")
WITHOUT_FENCING = load_backend(next(entry.target for entry in SQL_GALLERY
                                    if entry.name == "sql_without_fencing"))


@dataclass
class Database:
    """Opens store handles on one database, as separate workers would."""

    kind: str
    url: str | None
    shared: InMemoryJobStore | None = None

    def connect(self) -> JobStore:
        if self.shared is not None:
            return self.shared
        assert self.url is not None
        return SqlJobStore.connect(self.url, migrate_schema=False)


@pytest.fixture(scope="module", params=JOB_STORE_KINDS)
def job_store_url(request: pytest.FixtureRequest,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """None for the store kept in memory; else a database migrated once for the module."""
    if request.param == "memory":
        yield None
        return
    with migrated_database(request.param, tmp_path_factory.mktemp(request.param)) as url:
        yield url


@pytest.fixture
def db(job_store_url: str | None) -> Iterator[Database]:
    if job_store_url is None:
        yield Database("memory", None, InMemoryJobStore())
        return
    cleaner = SqlJobStore.connect(job_store_url, migrate_schema=False)
    cleaner.clear()
    cleaner.close()
    yield Database("sql", job_store_url)


class Owners:
    """The runtimes of one test; stopped, and their stores closed, at its end."""

    def __init__(self, db: Database, clock: VirtualClock) -> None:
        self.db = db
        self.clock = clock
        self._threaded: list[ThreadedRuntime] = []
        self._stores: list[JobStore] = []

    def store(self) -> JobStore:
        store = self.db.connect()
        if self.db.shared is None:
            self._stores.append(store)
        return store

    def open(self, kind: str, worker_id: str, store: JobStore | None = None) -> Any:
        store = self.store() if store is None else store
        if kind == "step":
            return StepRuntime(SETTINGS, self.clock, store, worker_id=worker_id)
        config = WorkerConfig(enabled=True, max_workers=1, poll_interval=None,
                              poll_beats_jobs=False)
        worker = ThreadedRuntime(store, self.clock, config)
        self._threaded.append(worker)
        return worker

    def close(self) -> None:
        for worker in self._threaded:
            worker.stop()  # not close: the stores are closed here, once
        for store in self._stores:
            store.close()


@pytest.fixture
def owners(db: Database) -> Iterator[Owners]:
    opened = Owners(db, VirtualClock())
    yield opened
    opened.close()


def record(store: JobStore, job_id: str) -> StoredJob:
    job = store.get(job_id)
    assert job is not None
    return job


# -- (a) a stale owner's late writes ----------------------------------------------------------


def lapse_and_reclaim(owners: Owners, kind: str) -> tuple[Any, TaskScript, str, JobStore]:
    """Owner A (a `kind` runtime) claims a job and falls silent; another worker's lease pass
    re-queues it; worker B claims it. Returns A, A's body, the job id and B's store."""
    owner_a = owners.open(kind, "worker-A")
    body = TaskScript()
    job_id = owner_a.submit(body)
    owner_a.dispatch()
    owners.clock.advance(LEASE_SECONDS + 1)
    rescuer = owners.open("step", "rescuer")
    assert rescuer.expire_leases(LEASE_SECONDS) == {"requeued": 1, "parked": 0}
    store_b = owners.store()
    (claimed,) = store_b.claim("worker-B", 1, owners.clock.now())
    assert claimed.job_id == job_id
    return owner_a, body, job_id, store_b


@pytest.mark.parametrize("kind", RUNTIMES)
def test_a_stale_owners_late_completion_is_refused(owners: Owners, kind: str) -> None:
    owner_a, body, job_id, store_b = lapse_and_reclaim(owners, kind)
    before = record(store_b, job_id)
    owners.clock.advance(1)
    body.decide(Succeed("from A"))
    owner_a.settle()
    after = record(store_b, job_id)
    assert (after.status, after.worker_id, after.result, after.finished_at) == (
        RUNNING, "worker-B", None, None), "A's late completion overwrote B's job"
    assert after == before
    assert owner_a.health().processed == 0


@pytest.mark.parametrize("kind", RUNTIMES)
def test_a_stale_owners_heartbeat_is_refused(owners: Owners, kind: str) -> None:
    owner_a, _, job_id, store_b = lapse_and_reclaim(owners, kind)
    claimed_at = owners.clock.now()
    owners.clock.advance(5)
    owner_a.heartbeat(job_id)
    after = record(store_b, job_id)
    assert after.last_heartbeat == claimed_at, "A's heartbeat renewed B's lease"
    assert (after.status, after.worker_id) == (RUNNING, "worker-B")


# -- (b) a rescue racing a re-claim ------------------------------------------------------------


class ActsAfterRead:
    """A store handle that runs `meanwhile` once, right after its first read of the running
    jobs: whatever a rescuer decides from that read is already stale when it writes."""

    def __init__(self, store: JobStore, meanwhile: Callable[[], None]) -> None:
        self._store = store
        self._meanwhile: Callable[[], None] | None = meanwhile

    def list(self, status: str | None = None) -> list[StoredJob]:
        jobs = self._store.list(status)
        if status == RUNNING and self._meanwhile is not None:
            meanwhile, self._meanwhile = self._meanwhile, None
            meanwhile()
        return jobs

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def race_rescue_against_reclaim(owners: Owners, kind: str,
                                rescue: Callable[[Any], object]) -> tuple[str, object]:
    """A job's lease lapses; rescuer 1 (a `kind` runtime) reads it as silent; meanwhile
    rescuer 2 re-queues it and worker B re-claims it; then rescuer 1 writes. Returns the
    job id and rescuer 1's answer."""
    submitter = owners.open("step", "worker-A")
    job_id = submitter.submit(TaskScript())
    submitter.dispatch()
    owners.clock.advance(LEASE_SECONDS + 1)
    store_b = owners.store()

    def second_rescuer_and_reclaim() -> None:
        second = owners.open("step", "rescuer-2")
        assert second.expire_leases(LEASE_SECONDS) == {"requeued": 1, "parked": 0}
        (claimed,) = store_b.claim("worker-B", 1, owners.clock.now())
        assert claimed.job_id == job_id

    first = owners.open(kind, "rescuer-1",
                        store=ActsAfterRead(owners.store(), second_rescuer_and_reclaim))
    return job_id, rescue(first)


@pytest.mark.parametrize("kind", RUNTIMES)
def test_a_lease_pass_racing_a_reclaim_leaves_the_live_owner_alone(owners: Owners,
                                                                   kind: str) -> None:
    job_id, answer = race_rescue_against_reclaim(
        owners, kind, lambda rescuer: rescuer.expire_leases(LEASE_SECONDS))
    assert answer == {"requeued": 0, "parked": 0}
    check = owners.store()
    job = record(check, job_id)
    assert (job.status, job.worker_id) == (RUNNING, "worker-B"), (
        "a stale lease pass re-queued a job a live worker had just re-claimed")
    # Two deliveries, one lease expiry: exactly one re-delivery counted (RD-002's cap
    # counts on it). A third delivery after B's lease lapses counts the second.
    assert job.redelivery_count == 1
    owners.clock.advance(LEASE_SECONDS + 1)
    assert owners.open("step", "rescuer-3").expire_leases(LEASE_SECONDS) == {
        "requeued": 1, "parked": 0}
    assert record(check, job_id).redelivery_count == 2


@pytest.mark.parametrize("kind", RUNTIMES)
def test_stuck_detection_racing_a_reclaim_leaves_the_live_owner_alone(owners: Owners,
                                                                      kind: str) -> None:
    job_id, failed = race_rescue_against_reclaim(
        owners, kind, lambda rescuer: rescuer.detect_stuck(LEASE_SECONDS))
    assert failed == 0
    job = record(owners.store(), job_id)
    assert job.status != FAILED, "stuck detection failed a job a live worker had re-claimed"
    assert (job.status, job.worker_id, job.redelivery_count) == (RUNNING, "worker-B", 1)


# -- recovery by default --------------------------------------------------------------------


def test_a_worker_gives_back_a_dead_workers_job_on_its_own() -> None:
    clock = VirtualClock()
    store = InMemoryJobStore()
    store.add(StoredJob("orphan", QUEUED, clock.now()), None)
    store.claim("dead-worker", 1, clock.now())  # then the worker dies: no more heartbeats
    config = WorkerConfig(enabled=True, max_workers=1, poll_interval=1.0, lease_seconds=5,
                          recovery_interval=2.0)

    def body(job: StoredJob) -> TaskScript:
        script = TaskScript()
        script.decide(Succeed(f"rescued by {job.worker_id}"))
        return script

    with closing(ThreadedRuntime(store, clock, config, bodies=body)) as worker:
        clock.advance(5)  # the pass at second 5 sees a heartbeat exactly the lease old
        worker.settle()
        assert record(store, "orphan").status == RUNNING
        clock.advance(2)  # the pass at second 7 finds it lapsed, after that second's poll
        worker.settle()
        requeued = record(store, "orphan")
        assert (requeued.status, requeued.redelivery_count) == (QUEUED, 1)
        clock.advance(1)  # the next poll claims it
        worker.settle()
        done = record(store, "orphan")
        assert (done.status, done.result, done.fencing_token) == (
            SUCCEEDED, f"rescued by {worker.worker_id}", 2)


def test_a_worker_polling_at_dispatch_points_runs_no_pass_of_its_own() -> None:
    assert WorkerConfig(enabled=True, poll_interval=None).recovers is False
    assert WorkerConfig(enabled=True, recovery_interval=None).recovers is False
    assert WorkerConfig(enabled=True).recovers is True


def test_recovery_is_configured_from_the_environment() -> None:
    config = WorkerConfig.from_environment({"JOBCONFORM_ASYNC_LEASE_SECONDS": "120",
                                            "JOBCONFORM_ASYNC_RECOVERY_INTERVAL": "15"})
    assert (config.lease_seconds, config.recovery_interval) == (120, 15.0)
    off = WorkerConfig.from_environment({"JOBCONFORM_ASYNC_RECOVERY_INTERVAL": "off"})
    assert off.recovery_interval is None
    with pytest.raises(WorkerConfigError, match="lease_seconds"):
        WorkerConfig(poll_interval=2.0, lease_seconds=2)
    with pytest.raises(WorkerConfigError, match="JOBCONFORM_ASYNC_LEASE_SECONDS"):
        WorkerConfig.from_environment({"JOBCONFORM_ASYNC_LEASE_SECONDS": "soon"})


# -- the store's fencing token ---------------------------------------------------------------


def test_each_claim_issues_the_next_token_and_writes_are_fenced(db: Database) -> None:
    store = db.connect()
    now = VirtualClock().now()
    store.add(StoredJob("a", QUEUED, now), None)
    (first,) = store.claim("A", 1, now)
    assert first.fencing_token == 1
    assert ownership.redeliver(store, first) is not None
    (second,) = store.claim("B", 1, now)
    assert second.fencing_token == 2
    assert ownership.heartbeat(store, "a", first.fencing_token, now) is None
    assert ownership.finish(store, "a", first.fencing_token, SUCCEEDED, now) is None
    assert ownership.redeliver(store, first) is None  # a stale rescue
    assert ownership.finish(store, "a", second.fencing_token, SUCCEEDED, now, "B") is not None
    assert record(store, "a").result == "B"
    with pytest.raises(TypeError, match="fencing_token"):
        store.update("a", SUCCEEDED, fencing_token=7)
    if db.shared is None:
        store.close()


# -- fencing everywhere (issue 34) -------------------------------------------------------------


def test_a_write_to_a_running_job_without_a_token_is_refused(db: Database) -> None:
    # The job was re-delivered and B has claimed it: a write naming no delivery would land
    # on B's, whoever meant it. The store refuses it outright (whatever the job's state).
    store = db.connect()
    now = VirtualClock().now()
    store.add(StoredJob("a", QUEUED, now), None)
    (first,) = store.claim("A", 1, now)
    assert ownership.redeliver(store, first) is not None
    (second,) = store.claim("B", 1, now)
    for changes in ({"status": SUCCEEDED, "finished_at": now, "result": "A"},
                    {"last_heartbeat": now}, {"cancel_requested": True},
                    {"status": QUEUED, "worker_id": None}):
        with pytest.raises(TypeError, match="fencing_token"):
            store.update("a", RUNNING, **changes)
        with pytest.raises(TypeError, match="fencing_token"):
            store.update("a", RUNNING, expected={"worker_id": "B"}, **changes)
    assert record(store, "a") == second, "a write without a token changed B's job"
    # A queued job is nobody's: writes to it need no token.
    store.add(StoredJob("b", QUEUED, now), None)
    assert store.update("b", QUEUED, status=CANCELLED, finished_at=now) is not None
    if db.shared is None:
        store.close()


class RescuedBeforeTheCancelRequest:
    """A store handle that runs `meanwhile` once, right before the first cancel request
    reaches the store: the canceller's read of the job is stale when it writes."""

    def __init__(self, store: JobStore, meanwhile: Callable[[], None]) -> None:
        self._store = store
        self._meanwhile: Callable[[], None] | None = meanwhile

    def update(self, job_id: str, expected_status: str, **arguments: Any) -> StoredJob | None:
        if arguments.get("cancel_requested") and self._meanwhile is not None:
            meanwhile, self._meanwhile = self._meanwhile, None
            meanwhile()
        return self._store.update(job_id, expected_status, **arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


@pytest.mark.parametrize("kind", RUNTIMES)
@pytest.mark.parametrize("reclaimed", (False, True), ids=("requeued", "reclaimed"))
def test_a_cancel_racing_a_redelivery_cancels_the_delivery_that_holds_the_job(
        owners: Owners, kind: str, reclaimed: bool) -> None:
    # The owner reads its job running and asks it to cancel; before the request lands, a
    # lease pass re-queues the job (and worker B claims it). The request for the delivery
    # read is refused, and cancel reads again: a queued job is cancelled at once, B's
    # delivery is asked to cancel. Unfenced, the request failed on the queued job and the
    # cancel was lost (it answered False, the job ran on).
    store_b = owners.store()

    def lease_pass_and_maybe_a_claim() -> None:
        rescuer = owners.open("step", "rescuer")
        assert rescuer.expire_leases(LEASE_SECONDS) == {"requeued": 1, "parked": 0}
        if reclaimed:
            (claimed,) = store_b.claim("worker-B", 1, owners.clock.now())
            assert claimed.fencing_token == 2

    owner = owners.open(kind, "worker-A", store=RescuedBeforeTheCancelRequest(
        owners.store(), lease_pass_and_maybe_a_claim))
    job_id = owner.submit(TaskScript())
    owner.dispatch()
    owners.clock.advance(LEASE_SECONDS + 1)
    assert owner.cancel(job_id) is True
    job = record(store_b, job_id)
    if reclaimed:
        assert (job.status, job.worker_id, job.cancel_requested, job.fencing_token) == (
            RUNNING, "worker-B", True, 2)
    else:
        assert job.status == CANCELLED, "the cancel was lost when the job was re-queued"


class PollsInsideTheTerminalWrite(InMemoryJobStore):
    """A store whose first terminal write, once it has landed, has the worker poll before
    it returns (its pool thread holds the worker's lock; dispatch's wait lets the poll
    thread in): the poll comes while the job is finished in the store. It counts the
    heartbeats written for finished jobs."""

    def __init__(self) -> None:
        super().__init__()
        self.worker: ThreadedRuntime | None = None
        self.beats_for_finished: list[str] = []

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        stored = self.get(job_id)
        if "last_heartbeat" in changes and stored is not None and stored.status in TERMINAL:
            self.beats_for_finished.append(job_id)
        updated = super().update(job_id, expected_status, expected=expected, **changes)
        if "finished_at" in changes and self.worker is not None:
            worker, self.worker = self.worker, None
            worker.dispatch()
        return updated


def test_the_poll_does_not_beat_for_a_job_it_has_finished() -> None:
    store = PollsInsideTheTerminalWrite()
    config = WorkerConfig(enabled=True, max_workers=1, poll_interval=None,
                          poll_beats_jobs=True)
    # Before the fix the nested dispatch never settled: a short safety limit fails fast.
    with closing(ThreadedRuntime(store, VirtualClock(), config, settle_limit=2.0)) as worker:
        body = TaskScript()
        body.decide(Succeed("done"))
        job_id = worker.submit(body)
        store.worker = worker
        try:
            worker.dispatch()  # claims it; its pool thread finishes it, the poll comes then
        finally:  # checked first: a worker still owning the job never settles here
            assert store.beats_for_finished == [], (
                "the poll sent a heartbeat for a job whose outcome was already written")
        assert store.worker is None, "the terminal write was never made"
        worker.stop()  # joins the pool thread, which counts the outcome after its write
        assert (record(store, job_id).status, worker.health().processed) == (SUCCEEDED, 1)


class CountsRefusedBeats(InMemoryJobStore):
    """A store that counts the heartbeats it refused (a token that no longer owns the job)."""

    def __init__(self) -> None:
        super().__init__()
        self.refused_beats = 0

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        updated = super().update(job_id, expected_status, expected=expected, **changes)
        if "last_heartbeat" in changes and updated is None:
            self.refused_beats += 1
        return updated


def test_the_poll_stops_beating_a_delivery_whose_heartbeat_was_refused() -> None:
    # Worker A's job was re-delivered to B while A's body still runs: A's next poll learns
    # it from the refused heartbeat, and beats for it no more (the store's answer to a
    # superseded token never changes; each beat would be a round trip per poll).
    store, clock = CountsRefusedBeats(), VirtualClock()
    config = WorkerConfig(enabled=True, max_workers=1, poll_interval=None,
                          poll_beats_jobs=True)
    worker = ThreadedRuntime(store, clock, config)
    try:
        job_id = worker.submit(TaskScript())
        worker.dispatch()  # claims it; its body waits
        clock.advance(LEASE_SECONDS + 1)
        rescuer = StepRuntime(SETTINGS, clock, store, worker_id="rescuer")
        assert rescuer.expire_leases(LEASE_SECONDS) == {"requeued": 1, "parked": 0}
        (claimed,) = store.claim("worker-B", 1, clock.now())
        assert claimed.job_id == job_id
        for _ in range(3):
            clock.advance(1)
            worker.dispatch()  # a poll: beats for the jobs A still runs
        assert store.refused_beats == 1, "the poll kept beating a delivery it had lost"
        assert record(store, job_id).worker_id == "worker-B"
    finally:
        worker.stop()


# -- the stale owner as a process of its own -----------------------------------------------------


def claim_then_report_late(url: str, store_type: type[SqlJobStore], claimed: Queue[int],
                           go: Event, accepted: Queue[bool]) -> None:
    """Worker A in its own process: claims the job, falls silent until `go`, then reports
    its outcome with its claim's token, unaware that the job was re-delivered meanwhile."""
    store = store_type.connect(url, migrate_schema=False)
    clock = VirtualClock()
    (job,) = store.claim("worker-A", 1, clock.now())
    claimed.put(job.fencing_token)
    go.wait(GUARD_SECONDS)
    late = ownership.finish(store, job.job_id, job.fencing_token, SUCCEEDED, clock.now(),
                            "from A")
    accepted.put(late is not None)
    store.close()


def late_completion_across_processes(url: str, store_type: type[SqlJobStore]) -> bool:
    """Whether worker A's late completion, from another process, lands on the job that a
    lease pass re-queued and worker B re-claimed."""
    store = SqlJobStore.connect(url, migrate_schema=False)
    store.clear()
    clock = VirtualClock()
    store.add(StoredJob("job", QUEUED, clock.now()), None)
    claimed: Queue[int] = SPAWN.Queue()
    accepted: Queue[bool] = SPAWN.Queue()
    go = SPAWN.Event()
    worker_a = SPAWN.Process(target=claim_then_report_late,
                             args=(url, store_type, claimed, go, accepted))
    worker_a.start()
    try:
        assert claimed.get(timeout=GUARD_SECONDS) == 1
        clock.advance(LEASE_SECONDS + 1)
        rescuer = StepRuntime(SETTINGS, clock, store, worker_id="rescuer")
        assert rescuer.expire_leases(LEASE_SECONDS) == {"requeued": 1, "parked": 0}
        (taken,) = store.claim("worker-B", 1, clock.now())
        go.set()
        landed = accepted.get(timeout=GUARD_SECONDS)
    finally:
        worker_a.join(GUARD_SECONDS)
        if worker_a.is_alive():
            worker_a.kill()
    after = record(store, "job")
    store.close()
    if not landed:
        assert (after.status, after.worker_id, after.fencing_token) == (
            RUNNING, "worker-B", taken.fencing_token)
    return landed


@pytest.mark.parametrize("kind", DATABASES)
def test_a_stale_owner_in_another_process_is_refused_and_the_gallery_store_is_caught(
        kind: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    assert isinstance(WITHOUT_FENCING, SqlBackend)
    assert WITHOUT_FENCING.store_type is WithoutFencingStore
    with database(kind, tmp_path_factory.mktemp(kind)) as url:
        SqlJobStore.connect(url).close()
        assert late_completion_across_processes(url, SqlJobStore) is False
        assert late_completion_across_processes(url, WithoutFencingStore) is True, (
            "the multi-process check did not catch the store without fencing")
