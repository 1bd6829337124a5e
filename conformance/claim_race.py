"""The claim race: several OS processes claim jobs from one SQL table at once.

Each worker process claims batches until it finds nothing left, completing every job it
claims. A correct store hands every job to exactly one worker and loses none; a store
whose claim is not atomic hands some jobs to two (the gallery's
`sql_non_atomic_claim`). The single-process suites cannot see this, so the race is a
check of its own, and the SQL benchmark times it.

Processes are spawned, not forked: each opens its own connections, as separate worker
hosts would.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import time
import traceback
import uuid
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier

from jobconform.backends import ownership
from jobconform.backends.sql import SqlJobStore
from jobconform.backends.store import QUEUED, SUCCEEDED, StoredJob
from jobconform.conformance.clock import EPOCH

# A real-time guard on the whole race, only against a hung worker or database.
RACE_TIMEOUT_SECONDS = 300.0


@dataclass(frozen=True)
class RaceResult:
    job_ids: tuple[str, ...]
    claims: Mapping[str, tuple[str, ...]]  # job id -> the workers that claimed it
    succeeded: int  # jobs the table holds as succeeded at the end
    seconds: float  # from the start signal to the last worker's report

    @property
    def duplicates(self) -> dict[str, tuple[str, ...]]:
        """Jobs claimed by more than one worker."""
        return {job_id: workers for job_id, workers in self.claims.items() if len(workers) > 1}

    @property
    def lost(self) -> list[str]:
        """Jobs no worker claimed."""
        return [job_id for job_id in self.job_ids if job_id not in self.claims]

    @property
    def jobs_per_second(self) -> float:
        """Claims plus completions per second, all workers together."""
        return len(self.job_ids) / self.seconds


def submit_jobs(store: SqlJobStore, count: int, now: datetime = EPOCH) -> tuple[str, ...]:
    """Add `count` queued jobs, all submitted at the same instant."""
    job_ids = tuple(str(uuid.uuid4()) for _ in range(count))
    for job_id in job_ids:
        store.add(StoredJob(job_id, QUEUED, now), None)
    return job_ids


def run_claim_race(url: str, store_type: type[SqlJobStore] = SqlJobStore, workers: int = 4,
                   jobs: int = 200, batch: int = 1, now: datetime = EPOCH) -> RaceResult:
    """Empty the store at `url`, submit `jobs` jobs and let `workers` processes race.

    Raises:
        RuntimeError: a worker failed (its traceback is in the message) or the race
            outlived RACE_TIMEOUT_SECONDS.
    """
    store = store_type.connect(url)
    try:
        store.clear()
        job_ids = submit_jobs(store, jobs, now)
        context = multiprocessing.get_context("spawn")
        start = context.Barrier(workers + 1)
        reports: Queue[tuple[str, list[str], str | None]] = context.Queue()
        processes = [
            context.Process(target=claim_until_empty,
                            args=(url, store_type, f"worker-{n}", batch, now, start, reports))
            for n in range(workers)
        ]
        for process in processes:
            process.start()
        try:
            # Every worker is connected: go. A broken barrier means a worker failed
            # before the start; its report says why.
            with contextlib.suppress(threading.BrokenBarrierError):
                start.wait(RACE_TIMEOUT_SECONDS)
            started = time.perf_counter()
            claims: dict[str, list[str]] = defaultdict(list)
            for _ in processes:
                worker_id, claimed, failure = reports.get(timeout=RACE_TIMEOUT_SECONDS)
                if failure is not None:
                    raise RuntimeError(f"{worker_id} failed:\n{failure}")
                for job_id in claimed:
                    claims[job_id].append(worker_id)
            seconds = time.perf_counter() - started
        finally:
            for process in processes:
                process.join(RACE_TIMEOUT_SECONDS)
                if process.is_alive():
                    process.kill()
        return RaceResult(job_ids, {job_id: tuple(ids) for job_id, ids in claims.items()},
                          store.counts()[SUCCEEDED], seconds)
    finally:
        store.close()


def claim_until_empty(url: str, store_type: type[SqlJobStore], worker_id: str, batch: int,
                      now: datetime, start: Barrier,
                      reports: Queue[tuple[str, list[str], str | None]]) -> None:
    """A worker process: claim and complete jobs until a claim comes back empty."""
    claimed: list[str] = []
    try:
        store = store_type.connect(url, migrate_schema=False)
        try:
            start.wait(RACE_TIMEOUT_SECONDS)
            while jobs := store.claim(worker_id, batch, now):
                for job in jobs:
                    claimed.append(job.job_id)
                    ownership.finish(store, job.job_id, job.fencing_token, SUCCEEDED, now,
                                     result=worker_id)
        finally:
            store.close()
    except Exception:
        start.abort()  # release the others if this worker never reached the start
        reports.put((worker_id, claimed, traceback.format_exc()))
    else:
        reports.put((worker_id, claimed, None))
