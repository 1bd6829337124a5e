"""Benchmark: SQL job store claims + completions per second with 1, 2 and 4 worker
processes, on PostgreSQL and on a SQLite file.

Usage: python benchmarks/bench_sql.py [--runs 5] [--jobs 400] [--batch 1]
           [--postgres-url URL] [--skip-postgres]

Each run is the multi-process claim race (`jobconform.conformance.claim_race`): the jobs
are queued, the workers start together and each claims and completes jobs until none is
left; a run also checks that no job was claimed twice or lost. Prints the median of the
runs. Every commit waits for the disk (PostgreSQL's synchronous_commit, SQLite's WAL
sync), so figures depend on the machine: quote them, never assert them in tests.

The PostgreSQL database's jobs table is emptied: point --postgres-url at a scratch one.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from jobconform.backends.sql import SqlJobStore
from jobconform.conformance.claim_race import run_claim_race

WORKER_COUNTS = (1, 2, 4)


def rates_of_runs(url: str, workers: int, jobs: int, batch: int, runs: int) -> list[float]:
    rates = []
    for _ in range(runs):
        race = run_claim_race(url, SqlJobStore, workers=workers, jobs=jobs, batch=batch)
        if race.duplicates or race.lost:
            raise SystemExit(f"{url}: {len(race.duplicates)} jobs claimed twice,"
                             f" {len(race.lost)} lost")
        rates.append(race.jobs_per_second)
    return rates


def report(label: str, url: str, args: argparse.Namespace) -> None:
    for workers in WORKER_COUNTS:
        rates = rates_of_runs(url, workers, args.jobs, args.batch, args.runs)
        print(f"{label:<12} {workers} worker(s): median {statistics.median(rates):7.0f}"
              f" claims+completions/s ({', '.join(f'{rate:.0f}' for rate in rates)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=400)
    parser.add_argument("--batch", type=int, default=1, help="jobs per claim")
    parser.add_argument("--postgres-url",
                        default="postgresql+psycopg://postgres@127.0.0.1:5432/test")
    parser.add_argument("--skip-postgres", action="store_true")
    args = parser.parse_args()
    print(f"{args.jobs} jobs per run, {args.batch} per claim, median of {args.runs} runs")
    if not args.skip_postgres:
        report("postgresql", args.postgres_url, args)
    with tempfile.TemporaryDirectory() as folder:
        report("sqlite file", f"sqlite:///{Path(folder) / 'jobs.db'}", args)


if __name__ == "__main__":
    main()
