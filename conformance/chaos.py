"""The chaos run: worker processes killed with SIGKILL while they drain one SQL job table.

N worker processes share a table of M jobs. Each is a threaded worker (`ThreadedRuntime`)
with its default crash recovery on, on the wall clock: it claims jobs into its pool, beats
for them at every poll, and runs a lease pass of its own every `recovery_interval` seconds.
K times, a live worker is killed with SIGKILL at a random moment and a fresh one takes its
place. The run then reports:

- duplicate owners: a delivery (job, fencing token) that ran in two workers, or a job whose
  recorded result was written by another delivery than the one the row names (a stale
  owner's write accepted);
- stranded: jobs still running under a killed worker once one recovery interval (lease +
  pass interval + a margin) has passed after the last kill, i.e. not given back by the
  survivors' own lease passes;
- lost: jobs not succeeded once the table has drained (or the time limit was reached);
- throughput: jobs per second from the start to the drained table.

Unlike the conformance suites, this runs on real time: it is about real processes dying.
Every wait has a real-time bound, the run stops its workers itself, and it only talks to
databases on the loopback interface.
"""

from __future__ import annotations

import contextlib
import faulthandler
import multiprocessing
import os
import random
import signal
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.context import SpawnProcess
from multiprocessing.queues import Queue
from pathlib import Path
from typing import TextIO

from sqlalchemy import create_engine, make_url, text

from jobconform.backends.protocol import TaskScript
from jobconform.backends.sql import SqlJobStore
from jobconform.backends.store import QUEUED, RUNNING, SUCCEEDED, StoredJob
from jobconform.backends.threaded import ThreadedRuntime, WorkerConfig
from jobconform.backends.threaded.clock import SystemClock
from jobconform.reference.commands import Succeed
from jobconform.reference.lifecycle import JsonValue

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
SERVER_URLS = {
    "postgresql": os.environ.get("JOBCONFORM_CHAOS_POSTGRES_URL",
                                 "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
    "mariadb": os.environ.get("JOBCONFORM_CHAOS_MARIADB_URL",
                              "mysql+pymysql://root@127.0.0.1:3306/test"),
}
DATABASES = ("postgresql", "mariadb", "sqlite")
# How often the conductor looks at the table's counts: observation only, the workers do
# not wait for it.
WATCH_SECONDS = 0.05
START_LIMIT_SECONDS = 120.0  # for the worker processes to connect and report ready
STOP_LIMIT_SECONDS = 30.0  # for a worker to stop after SIGTERM before it is killed
SUBMIT_BATCH = 1000  # jobs per insert transaction when the table is filled


class ChaosError(RuntimeError):
    """The run could not be set up or a worker failed for a reason other than a kill."""


@dataclass(frozen=True)
class ChaosSettings:
    """One chaos run.

    Attributes:
        processes: worker processes running at once (a killed one is replaced).
        jobs: jobs in the table.
        kills: SIGKILLs, spread over the run (the k-th when k/(kills+1) of the jobs are done).
        threads: pool threads per worker.
        work_seconds: how long each body works (so that kills find running jobs).
        poll_interval, lease_seconds, recovery_interval: the workers' `WorkerConfig`.
        margin_seconds: slack on top of lease + interval before stranded jobs are counted
            (a pass takes time to run and commit on a loaded machine).
        seed: chooses the workers to kill.
        time_limit: real seconds the whole run may take before it stops itself.
    """

    processes: int = 4
    jobs: int = 1000
    kills: int = 1
    threads: int = 8
    work_seconds: float = 0.05
    poll_interval: float = 0.1
    lease_seconds: int = 3
    recovery_interval: float = 1.0
    margin_seconds: float = 1.0
    seed: int = 0
    time_limit: float = 600.0

    @property
    def recovery_bound(self) -> float:
        """Seconds after a kill by which its jobs must be back in the queue."""
        return self.lease_seconds + self.recovery_interval + self.margin_seconds


@dataclass
class ChaosResult:
    database: str
    settings: ChaosSettings
    orphaned: int = 0  # jobs running under a worker at the moment it was killed
    duplicate_owners: list[str] = field(default_factory=list)
    stranded: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    seconds: float = 0.0
    drained: bool = False
    deliveries: int = 0  # bodies started, re-deliveries included
    lost_statuses: dict[str, int] = field(default_factory=dict)
    redelivered: int = 0  # jobs re-queued at least once by a lease pass

    @property
    def jobs_per_second(self) -> float:
        return self.settings.jobs / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        s = self.settings
        return (f"{self.database}: {s.processes} processes x {s.jobs} jobs x {s.kills} kills:"
                f" duplicate owners {len(self.duplicate_owners)}, lost {len(self.lost)},"
                f" stranded after one recovery interval ({s.recovery_bound:g} s)"
                f" {len(self.stranded)}, orphaned by kills {self.orphaned},"
                f" re-delivered {self.redelivered}, deliveries {self.deliveries},"
                f" {self.seconds:.1f} s,"
                f" {self.jobs_per_second:.0f} jobs/s"
                + ("" if self.drained else " (NOT DRAINED within the time limit)")
                + (f"; lost jobs by status: {self.lost_statuses}" if self.lost else ""))


# -- the worker process ------------------------------------------------------------------------


class LoggedBody(TaskScript):
    """A job's body in a chaos worker: it logs its delivery, works a little, and returns
    the delivery's name (owner and fencing token), so that a result written by another
    delivery than the row's shows."""

    def __init__(self, job: StoredJob, log: TextIO, work_seconds: float) -> None:
        super().__init__()
        self._delivery = f"{job.job_id} {job.fencing_token} {job.worker_id}"
        self._log = log
        self._work_seconds = work_seconds
        self.decide(Succeed(delivery_name(job.worker_id, job.fencing_token)))

    def run(self, arguments: JsonValue = None, options: JsonValue = None) -> JsonValue:
        self._log.write(self._delivery + "\n")
        time.sleep(self._work_seconds)  # the job's work, not a wait for time to pass
        return super().run(arguments, options)


def delivery_name(worker_id: str | None, token: int) -> str:
    return f"{worker_id}#{token}"


def run_worker(url: str, log_path: str, settings: ChaosSettings,
               ready: Queue[tuple[int, str]]) -> None:
    """A worker process: serve the table until SIGTERM (a graceful stop) or SIGKILL.
    SIGUSR1 prints every thread's stack to stderr, for a run that stalls."""
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    store = SqlJobStore.connect(url, migrate_schema=False)
    config = WorkerConfig(enabled=True, max_workers=settings.threads,
                          poll_interval=settings.poll_interval,
                          lease_seconds=settings.lease_seconds,
                          recovery_interval=settings.recovery_interval)
    with open(log_path, "a", buffering=1, encoding="utf-8") as log:
        worker = ThreadedRuntime(store, SystemClock(), config, install_signal_handlers=True,
                                 bodies=lambda job: LoggedBody(job, log,
                                                               settings.work_seconds))
        ready.put((os.getpid(), worker.worker_id))
        while not worker.wait_stopped(timeout=1.0):
            pass
        worker.close()


# -- the conductor -----------------------------------------------------------------------------


@dataclass
class _Worker:
    process: SpawnProcess
    worker_id: str = ""


def check_loopback(url: str) -> None:
    """Raises:
        ChaosError: the URL names a server off the loopback interface."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" and parsed.host not in LOOPBACK_HOSTS:
        raise ChaosError(f"the chaos run only talks to loopback databases, not {parsed.host!r}")


@contextlib.contextmanager
def scratch_database(kind: str, folder: Path) -> Iterator[str]:
    """A new empty database of `kind` for one run (a SQLite file in `folder`); dropped after."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'chaos.db'}"
        return
    server = make_url(SERVER_URLS[kind])
    check_loopback(server.render_as_string(hide_password=False))
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    name = f"jobconform_chaos_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f"CREATE DATABASE {name}"))
        try:
            yield server.set(database=name).render_as_string(hide_password=False)
        finally:
            force = " WITH (FORCE)" if kind == "postgresql" else ""
            with admin.connect() as connection:
                connection.execute(text(f"DROP DATABASE {name}{force}"))
    finally:
        admin.dispose()


def run_chaos(kind: str, settings: ChaosSettings) -> ChaosResult:
    """One chaos run on a scratch database of `kind` (postgresql, mariadb or sqlite)."""
    with tempfile.TemporaryDirectory(prefix="jobconform-chaos-") as folder, \
            scratch_database(kind, Path(folder)) as url:
        return run_chaos_at(kind, url, Path(folder), settings)


def run_chaos_at(kind: str, url: str, folder: Path, settings: ChaosSettings) -> ChaosResult:
    """One chaos run on the empty database at `url`, keeping the delivery logs in `folder`.

    Raises:
        ChaosError: a server off the loopback interface, workers that do not start, or
            the time limit passed before the kills were done.
    """
    return _Conductor(kind, url, folder, settings).run()


class _Conductor:
    def __init__(self, kind: str, url: str, folder: Path, settings: ChaosSettings) -> None:
        check_loopback(url)
        self.settings = settings
        self.url = url
        self.folder = folder
        self.result = ChaosResult(kind, settings)
        self.context = multiprocessing.get_context("spawn")
        self.ready: Queue[tuple[int, str]] = self.context.Queue()
        self.workers: list[_Worker] = []
        self.killed: set[str] = set()
        self.random = random.Random(settings.seed)
        self.deadline = 0.0

    def run(self) -> ChaosResult:
        store = SqlJobStore.connect(self.url)  # migrates the fresh database
        try:
            job_ids = self._submit(store)
            for _ in range(self.settings.processes):
                self._start_worker()
            self._await_ready()
            started = time.monotonic()
            self.deadline = started + self.settings.time_limit
            last_kill = self._kill_on_schedule(store)
            if last_kill is not None:
                self._count_stranded(store, last_kill)
            self.result.drained = self._await_drained(store)
            self._await_ready()
            self.result.seconds = time.monotonic() - started
        finally:
            self._stop_all()
        try:
            self._judge(store, job_ids)
        finally:
            store.close()
        return self.result

    def _submit(self, store: SqlJobStore) -> list[str]:
        job_ids = [str(uuid.uuid4()) for _ in range(self.settings.jobs)]
        now = SystemClock().now()
        for start in range(0, len(job_ids), SUBMIT_BATCH):
            store.add_many([StoredJob(job_id, QUEUED, now)
                            for job_id in job_ids[start:start + SUBMIT_BATCH]])
        return job_ids

    def _start_worker(self) -> None:
        log = self.folder / f"deliveries-{len(self.workers)}.log"
        process = self.context.Process(target=run_worker,
                                       args=(self.url, str(log), self.settings, self.ready))
        process.start()
        self.workers.append(_Worker(process))

    def _await_ready(self) -> None:
        waiting = {worker.process.pid: worker for worker in self.workers if not worker.worker_id}
        limit = time.monotonic() + START_LIMIT_SECONDS
        while waiting:
            try:
                pid, worker_id = self.ready.get(timeout=max(0.0, limit - time.monotonic()))
            except Exception as error:
                raise ChaosError(f"{len(waiting)} worker process(es) did not start within"
                                 f" {START_LIMIT_SECONDS:g} s") from error
            worker = waiting.pop(pid, None)
            if worker is not None:
                worker.worker_id = worker_id

    def _live(self) -> list[_Worker]:
        return [worker for worker in self.workers if worker.worker_id not in self.killed]

    def _kill_on_schedule(self, store: SqlJobStore) -> float | None:
        """Kill the k-th worker when k/(kills+1) of the jobs are done; return when the
        last kill happened (None without kills)."""
        last_kill = None
        for k in range(1, self.settings.kills + 1):
            target = self.settings.jobs * k // (self.settings.kills + 1)
            while self._done(store) < target:
                self._check_time()
                time.sleep(WATCH_SECONDS)
            self._await_ready()  # the last replacement, so that it can be chosen too
            victim = self.random.choice(self._live())
            victim.process.kill()
            victim.process.join(STOP_LIMIT_SECONDS)
            last_kill = time.monotonic()
            self.killed.add(victim.worker_id)
            self.result.orphaned += sum(job.worker_id == victim.worker_id
                                        for job in store.list(RUNNING))
            # The replacement starts now; the stranded count does not wait for it.
            self._start_worker()
        return last_kill

    def _count_stranded(self, store: SqlJobStore, last_kill: float) -> None:
        """One recovery interval after the last kill, nothing may run under a dead worker."""
        wake = last_kill + self.settings.recovery_bound
        while time.monotonic() < wake:
            time.sleep(min(WATCH_SECONDS, max(0.0, wake - time.monotonic())))
        self.result.stranded = [job.job_id for job in store.list(RUNNING)
                                if job.worker_id in self.killed]

    def _await_drained(self, store: SqlJobStore) -> bool:
        while True:
            counts = store.counts()
            if counts[QUEUED] == 0 and counts[RUNNING] == 0:
                return True
            if time.monotonic() > self.deadline:
                return False
            time.sleep(WATCH_SECONDS)

    def _done(self, store: SqlJobStore) -> int:
        counts = store.counts()
        return self.settings.jobs - counts[QUEUED] - counts[RUNNING]

    def _check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise ChaosError(f"the run passed its time limit of {self.settings.time_limit:g} s"
                             " before its kills were done")

    def _stop_all(self) -> None:
        for worker in self._live():
            if worker.process.is_alive():
                worker.process.terminate()  # SIGTERM: the worker's graceful stop
        for worker in self.workers:
            worker.process.join(STOP_LIMIT_SECONDS)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(STOP_LIMIT_SECONDS)

    def _judge(self, store: SqlJobStore, job_ids: list[str]) -> None:
        runners: dict[tuple[str, str], set[str]] = defaultdict(set)
        for log in self.folder.glob("deliveries-*.log"):
            for line in log.read_text(encoding="utf-8").splitlines():
                parts = line.split()
                if len(parts) == 3:  # a killed worker may leave half a line
                    job_id, token, worker_id = parts
                    runners[(job_id, token)].add(worker_id)
        self.result.deliveries = len(runners)
        duplicates = {job_id for (job_id, _), workers in runners.items() if len(workers) > 1}
        rows = {job.job_id: job for job in store.list()}
        for job_id in job_ids:
            row = rows.get(job_id)
            if row is not None and row.redelivery_count:
                self.result.redelivered += 1
            if row is None or row.status != SUCCEEDED:
                self.result.lost.append(job_id)
                status = "deleted" if row is None else row.status
                self.result.lost_statuses[status] = self.result.lost_statuses.get(status, 0) + 1
            elif row.result != delivery_name(row.worker_id, row.fencing_token):
                duplicates.add(job_id)  # another delivery's write landed on this one
        self.result.duplicate_owners = sorted(duplicates)
