"""Benchmark: the jobconform SQL store against pgqueuer (and procrastinate) on one
PostgreSQL server: claim+complete of no-op jobs, one job per claim.

Usage: python benchmarks/bench_pgqueuer.py [--rounds 5] [--jobs 2000] [--workers 1 4]
           [--batch 1] [--server-url URL] [--without procrastinate]

Needs the benchmark extra: pip install -e '.[bench]'.

Each contender runs the same loop in W spawned worker processes, which connect, wait
for a common start, then claim one job, complete it, and claim the next until a claim
comes back empty:

- jobconform: `SqlJobStore.claim` and the owner's fenced completion
  (`ownership.finish`, conditioned on the claim's fencing token), as its runtimes do;
- pgqueuer: `Queries.dequeue` and `Queries.log_jobs` over asyncpg (its queries, without
  its QueueManager loop, which batches acknowledgements: one job per claim here);
- procrastinate: `JobManager.fetch_job` and `JobManager.finish_job` over psycopg.

Same server, same scratch database (created, then dropped), default durability (the
server's synchronous_commit; nothing is relaxed). A round runs every contender once, at
each worker count, in an order that rotates from round to round, so that drift in the
machine's load falls on all of them; the table gives medians over the rounds and the
median of the per-round ratios. Every run checks that no job was claimed twice or lost,
and that the database holds every job as completed.

Per job it also reports the client CPU (all workers' process time) and the requests the
clients sent: TCP data segments to the server, read from the kernel with `ss` (Linux),
one per round trip for both drivers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import multiprocessing
import os
import re
import statistics
import subprocess
import sys
import threading
import time
import traceback
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import Any

from sqlalchemy import create_engine, make_url, text

from jobconform.backends import ownership
from jobconform.backends.sql import SqlJobStore
from jobconform.backends.store import QUEUED, SUCCEEDED, StoredJob

GUARD_SECONDS = 300.0  # real seconds; only a guard against a hung worker or server
CONTENDERS = ("jobconform", "pgqueuer", "procrastinate")
ENTRYPOINT = "noop"


# -- what a worker measures --------------------------------------------------------------------


def segments_sent(port: int) -> int | None:
    """TCP data segments this process has sent to the server's port so far, over its open
    connections (`ss` from iproute2); None where `ss` is missing."""
    try:
        listing = subprocess.run(["ss", "-tinpH", "dport", "=", f":{port}"],
                                 capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    total, mine = 0, False
    for line in listing.splitlines():
        if not line.startswith(("\t", " ")):  # a socket's line; its details follow
            mine = f"pid={os.getpid()}," in line
        elif mine and (found := re.search(r"\bdata_segs_out:(\d+)", line)):
            total += int(found.group(1))
    return total


@dataclass(frozen=True)
class WorkerReport:
    worker: str
    claimed: list[str]  # job ids, as text
    cpu_seconds: float
    failure: str | None = None


Reports = Queue  # of WorkerReport, then of (worker, segments sent during the loop)


class Worker:
    """What one worker process runs a loop with: its name, the common start, and where
    its reports go."""

    def __init__(self, name: str, port: int, start: Barrier, reports: Reports[Any]) -> None:
        self.name = name
        self._port = port
        self._start = start
        self._reports = reports
        self._cpu = 0.0
        self._segments: int | None = None

    def wait_for_start(self) -> None:
        """Connected: wait for the others; the CPU clock and segment count start here."""
        self._segments = segments_sent(self._port)
        self._start.wait(GUARD_SECONDS)
        self._cpu = time.process_time()

    def done(self, claimed: list[str]) -> None:
        """Report the claimed ids at once (the parent's clock stops at the last report),
        then the segments sent, read afterwards (so not timed) but while the connections
        are still open."""
        self._reports.put(WorkerReport(self.name, claimed, time.process_time() - self._cpu))
        after = segments_sent(self._port)
        self._reports.put((self.name, None if self._segments is None or after is None
                           else after - self._segments))

    def failed(self) -> None:
        self._start.abort()  # release the others if this worker never reached the start
        self._reports.put(WorkerReport(self.name, [], 0.0, traceback.format_exc()))


def run_worker(contender: str, url: str, name: str, batch: int, start: Barrier,
               reports: Reports[Any]) -> None:
    """A worker process: connect, wait for the start, claim and complete until empty."""
    loops: dict[str, Callable[[str, Worker, int], None]] = {
        "jobconform": jobconform_loop, "pgqueuer": pgqueuer_loop,
        "procrastinate": procrastinate_loop}
    worker = Worker(name, make_url(url).port or 5432, start, reports)
    try:
        loops[contender](url, worker, batch)
    except Exception:
        worker.failed()


def jobconform_loop(url: str, worker: Worker, batch: int) -> None:
    store = SqlJobStore.connect(url, migrate_schema=False)
    claimed: list[str] = []
    try:
        worker.wait_for_start()
        while jobs := store.claim(worker.name, batch, datetime.now(UTC)):
            for job in jobs:
                # The owner's write, fenced by its claim's token, as the runtimes do it.
                if ownership.finish(store, job.job_id, job.fencing_token, SUCCEEDED,
                                    datetime.now(UTC)) is None:
                    raise RuntimeError(f"{worker.name} lost job {job.job_id} it claimed")
                claimed.append(job.job_id)
        worker.done(claimed)
    finally:
        store.close()


def pgqueuer_loop(url: str, worker: Worker, batch: int) -> None:
    import asyncpg  # type: ignore[import-untyped]
    from pgqueuer import Queries
    from pgqueuer.ports.repository import EntrypointExecutionParameter
    from pgqueuer.types import QueueEntrypoint, QueueManagerId

    async def loop() -> None:
        connection = await asyncpg.connect(libpq_url(url))
        try:
            queries = Queries.from_asyncpg_connection(connection)
            entrypoints = {
                QueueEntrypoint(ENTRYPOINT): EntrypointExecutionParameter(concurrency_limit=0)}
            manager = QueueManagerId(uuid.uuid4())
            claimed: list[str] = []
            worker.wait_for_start()
            while jobs := await queries.dequeue(
                    batch_size=batch, entrypoints=entrypoints, queue_manager_id=manager,
                    global_concurrency_limit=None, heartbeat_timeout=timedelta(minutes=5)):
                for job in jobs:
                    await queries.log_jobs([(job, "successful", None)])
                    claimed.append(str(job.id))
            worker.done(claimed)
        finally:
            await connection.close()

    asyncio.run(loop())


def procrastinate_loop(url: str, worker: Worker, batch: int) -> None:
    from procrastinate.jobs import Status

    if batch != 1:
        raise ValueError("procrastinate fetches one job per claim: run it with --batch 1")

    async def loop() -> None:
        async with procrastinate_app(url).open_async() as app:
            manager = app.job_manager
            worker_id = await manager.register_worker()
            claimed: list[str] = []
            worker.wait_for_start()
            while job := await manager.fetch_job(queues=None, worker_id=worker_id):
                await manager.finish_job(job, status=Status.SUCCEEDED, delete_job=False)
                claimed.append(str(job.id))
            worker.done(claimed)
            await manager.unregister_worker(worker_id)

    asyncio.run(loop())


def procrastinate_app(url: str) -> Any:
    """A procrastinate app on one connection (a worker's loop needs no more)."""
    import procrastinate

    # It warns about an app made in a script's main module, which matters only to
    # workers that import tasks by name; these run no task.
    logging.getLogger("procrastinate").setLevel(logging.ERROR)
    return procrastinate.App(connector=procrastinate.PsycopgConnector(
        conninfo=libpq_url(url), min_size=1, max_size=1))


def libpq_url(url: str) -> str:
    """The SQLAlchemy URL as the plain postgresql:// URL asyncpg and psycopg take."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


# -- one run -------------------------------------------------------------------------------


def submit(contender: str, url: str, jobs: int) -> list[str]:
    """Empty the contender's tables and queue `jobs` jobs; their ids, as text."""
    if contender == "jobconform":
        store = SqlJobStore.connect(url, migrate_schema=False)
        try:
            store.clear()
            now = datetime.now(UTC)
            queued = [StoredJob(str(uuid.uuid4()), QUEUED, now) for _ in range(jobs)]
            store.add_many(queued)
            return [job.job_id for job in queued]
        finally:
            store.close()
    return asyncio.run(submit_async(contender, url, jobs))


async def submit_async(contender: str, url: str, jobs: int) -> list[str]:
    if contender == "pgqueuer":
        import asyncpg
        from pgqueuer import Queries

        connection = await asyncpg.connect(libpq_url(url))
        try:
            queries = Queries.from_asyncpg_connection(connection)
            await queries.clear_queue()
            await queries.clear_queue_log()
            ids = await queries.enqueue([ENTRYPOINT] * jobs, [None] * jobs, [0] * jobs)
            return [str(job_id) for job_id in ids]
        finally:
            await connection.close()
    import procrastinate

    async with procrastinate_app(url).open_async() as app:
        await app.connector.execute_query_async("DELETE FROM procrastinate_jobs")
        deferred = await app.job_manager.batch_defer_jobs_async([
            procrastinate.jobs.Job(id=None, queue="default", lock=None, queueing_lock=None,
                                   task_name=ENTRYPOINT, task_kwargs={})
            for _ in range(jobs)])
        return [str(job.id) for job in deferred]


def completed_in_database(contender: str, url: str) -> tuple[int, int]:
    """(jobs completed, jobs not completed) as the database holds them after a run."""
    if contender == "jobconform":
        store = SqlJobStore.connect(url, migrate_schema=False)
        try:
            counts = store.counts()
            return counts[SUCCEEDED], sum(counts.values()) - counts[SUCCEEDED]
        finally:
            store.close()
    queries = {
        "pgqueuer": ("SELECT count(*) FROM pgqueuer_log WHERE status = 'successful'",
                     "SELECT count(*) FROM pgqueuer"),
        "procrastinate": ("SELECT count(*) FROM procrastinate_jobs WHERE status = 'succeeded'",
                          "SELECT count(*) FROM procrastinate_jobs"
                          " WHERE status <> 'succeeded'"),
    }[contender]
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            done, left = (connection.scalar(text(query)) for query in queries)
            return int(done or 0), int(left or 0)
    finally:
        engine.dispose()


@dataclass(frozen=True)
class Run:
    contender: str
    workers: int
    jobs: int
    seconds: float
    cpu_seconds: float
    segments: int | None

    @property
    def jobs_per_second(self) -> float:
        return self.jobs / self.seconds

    @property
    def cpu_ms_per_job(self) -> float:
        return 1000 * self.cpu_seconds / self.jobs

    @property
    def segments_per_job(self) -> float | None:
        return None if self.segments is None else self.segments / self.jobs


def run_once(contender: str, url: str, workers: int, jobs: int, batch: int) -> Run:
    """One timed run, checked: every job claimed once, none lost, all completed.

    Raises:
        SystemExit: a job was claimed twice or lost, or the table disagrees.
        RuntimeError: a worker failed (its traceback is in the message).
    """
    job_ids = submit(contender, url, jobs)
    vacuum(url)  # every run starts on tables without the last run's dead rows
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(workers + 1)
    reports: Reports[Any] = context.Queue()
    processes = [context.Process(target=run_worker,
                                 args=(contender, url, f"worker-{n}", batch, start, reports))
                 for n in range(workers)]
    for process in processes:
        process.start()
    try:
        # A broken barrier means a worker failed before the start; its report says why.
        with contextlib.suppress(threading.BrokenBarrierError):
            start.wait(GUARD_SECONDS)
        begun = time.perf_counter()
        finished: list[WorkerReport] = []
        segments: list[int | None] = []
        while len(finished) < workers:  # a worker's segments may come before another's ids
            message = reports.get(timeout=GUARD_SECONDS)
            if isinstance(message, WorkerReport):
                if message.failure is not None:
                    raise RuntimeError(f"{contender} {message.worker} failed:\n"
                                       f"{message.failure}")
                finished.append(message)
            else:
                segments.append(message[1])
        seconds = time.perf_counter() - begun
        while len(segments) < workers:
            segments.append(reports.get(timeout=GUARD_SECONDS)[1])
    finally:
        for process in processes:
            process.join(GUARD_SECONDS)
            if process.is_alive():
                process.kill()
    claims = Counter(job_id for report in finished for job_id in report.claimed)
    twice = [job_id for job_id, count in claims.items() if count > 1]
    lost = set(job_ids) - set(claims)
    done, left = completed_in_database(contender, url)
    if twice or lost or set(claims) - set(job_ids) or (done, left) != (jobs, 0):
        raise SystemExit(f"{contender} with {workers} worker(s): {len(twice)} jobs claimed"
                         f" twice, {len(lost)} lost; the database holds {done} completed"
                         f" and {left} not completed of {jobs}")
    return Run(contender, workers, jobs, seconds,
               sum(report.cpu_seconds for report in finished),
               sum(counts) if len(counts := [n for n in segments if n is not None]) == workers
               else None)


def vacuum(url: str) -> None:
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.execute(text("VACUUM ANALYZE"))
    finally:
        engine.dispose()


# -- the scratch database ------------------------------------------------------------------


@contextlib.contextmanager
def scratch_database(server_url: str, contenders: tuple[str, ...]) -> Any:
    """A new database on the server with every contender's schema; dropped at the end."""
    server = make_url(server_url)
    name = f"jobconform_bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))
    url = server.set(database=name).render_as_string(hide_password=False)
    try:
        SqlJobStore.connect(url).close()  # migrates
        asyncio.run(install_schemas(url, contenders))
        yield url
    finally:
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE {name} WITH (FORCE)"))
        admin.dispose()


async def install_schemas(url: str, contenders: tuple[str, ...]) -> None:
    if "pgqueuer" in contenders:
        import asyncpg
        from pgqueuer import Queries

        connection = await asyncpg.connect(libpq_url(url))
        try:
            await Queries.from_asyncpg_connection(connection).install()
        finally:
            await connection.close()
    if "procrastinate" in contenders:
        async with procrastinate_app(url).open_async() as app:
            await app.schema_manager.apply_schema_async()


def server_settings(url: str) -> str:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            version = connection.scalar(text("SHOW server_version"))
            commit = connection.scalar(text("SHOW synchronous_commit"))
            fsync = connection.scalar(text("SHOW fsync"))
        return f"PostgreSQL {version}, synchronous_commit={commit}, fsync={fsync}"
    finally:
        engine.dispose()


# -- the table -----------------------------------------------------------------------------


def rotated(contenders: tuple[str, ...], round_number: int) -> tuple[str, ...]:
    shift = round_number % len(contenders)
    return contenders[shift:] + contenders[:shift]


def median_or_none(values: list[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return statistics.median(known) if known else None


def table(runs: list[Run], contenders: tuple[str, ...], worker_counts: list[int],
          rounds: int) -> str:
    lines = [f"{'workers':>7}  {'contender':<13} {'jobs/s (median)':>15} {'ratio':>6}"
             f" {'runs (jobs/s)':<34} {'CPU ms/job':>10} {'requests/job':>12}"]
    for workers in worker_counts:
        of = {name: [run for run in runs if run.contender == name and run.workers == workers]
              for name in contenders}
        for name in contenders:
            mine = of[name]
            rate = statistics.median(run.jobs_per_second for run in mine)
            # The ratio to pgqueuer: the median of the rounds' ratios, each round's runs
            # having seen the same machine.
            ratio = statistics.median(ours.jobs_per_second / theirs.jobs_per_second
                                      for ours, theirs in zip(mine, of["pgqueuer"],
                                                              strict=True))
            segments = median_or_none([run.segments_per_job for run in mine])
            lines.append(
                f"{workers:>7}  {name:<13} {rate:>15.0f} {ratio:>5.2f}x"
                f" {', '.join(f'{run.jobs_per_second:.0f}' for run in mine):<34}"
                f" {statistics.median(run.cpu_ms_per_job for run in mine):>10.2f}"
                f" {'n/a' if segments is None else f'{segments:.2f}':>12}")
    lines.append(f"median of {rounds} rounds; ratio: the median over the rounds of the"
                 " contender's rate over pgqueuer's in the same round")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=2000, help="jobs per run")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--batch", type=int, default=1, help="jobs per claim")
    parser.add_argument("--server-url",
                        default="postgresql+psycopg://postgres@127.0.0.1:5432/postgres",
                        help="a server and a database to connect to while creating the"
                             " scratch database")
    parser.add_argument("--without", nargs="*", default=[], choices=CONTENDERS[1:],
                        help="leave out these contenders")
    args = parser.parse_args()
    if args.rounds < 1 or args.jobs < 1 or args.batch < 1 or min(args.workers) < 1:
        parser.error("--rounds, --jobs, --batch and --workers must be 1 or more")
    contenders = tuple(name for name in CONTENDERS if name not in args.without)
    for name in contenders[1:]:
        try:
            __import__(name)
        except ImportError:
            sys.exit(f"{name} is not installed: pip install -e '.[bench]'"
                     f" (or leave it out with --without {name})")
    if args.batch != 1 and "procrastinate" in contenders:
        parser.error("procrastinate fetches one job per claim: add --without procrastinate")
    print(f"{server_settings(args.server_url)}; {args.jobs} no-op jobs per run,"
          f" {args.batch} per claim, {args.rounds} rounds", flush=True)
    runs: list[Run] = []
    with scratch_database(args.server_url, contenders) as url:
        for round_number in range(args.rounds):
            for workers in args.workers:
                for name in rotated(contenders, round_number):
                    run = run_once(name, url, workers, args.jobs, args.batch)
                    runs.append(run)
                    print(f"round {round_number + 1} {name:<13} {workers} worker(s):"
                          f" {run.jobs_per_second:6.0f} jobs/s,"
                          f" {run.cpu_ms_per_job:.2f} ms CPU/job", flush=True)
    print(table(runs, contenders, args.workers, args.rounds))


if __name__ == "__main__":
    main()
