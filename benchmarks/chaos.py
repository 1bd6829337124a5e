"""Chaos benchmark: N worker processes x M jobs with K random `kill -9`, on PostgreSQL,
MariaDB and a SQLite file.

Usage: python benchmarks/chaos.py [--processes 4] [--jobs 10000] [--kills 3]
           [--database postgresql --database mariadb --database sqlite] [--seed 0]
           [--lease 1] [--recovery-interval 0.5] [--time-limit 900]

Each run (`jobconform.conformance.chaos`) fills a scratch database with M jobs, starts N
threaded workers on it with their default crash recovery (their own lease passes), kills a
random live worker with SIGKILL K times over the run, replacing each, and prints per
database: duplicate owners, lost jobs, jobs stranded one recovery interval after the last
kill, jobs the kills orphaned, deliveries and throughput. It exits non-zero when any
duplicate, lost or stranded job is found. The servers (loopback only) are
JOBCONFORM_CHAOS_POSTGRES_URL and JOBCONFORM_CHAOS_MARIADB_URL, by default the local ones;
the scratch databases are dropped afterwards. Throughput depends on the machine: quote it,
never assert it.
"""

from __future__ import annotations

import argparse

from jobconform.conformance.chaos import DATABASES, ChaosSettings, run_chaos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--kills", type=int, default=3)
    parser.add_argument("--database", action="append", choices=DATABASES,
                        help="repeatable; default: all three")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lease", type=int, default=3, help="lease_seconds of the workers")
    parser.add_argument("--recovery-interval", type=float, default=1.0,
                        help="seconds between each worker's own lease passes")
    parser.add_argument("--time-limit", type=float, default=900.0,
                        help="real seconds a run may take before it stops itself")
    args = parser.parse_args()
    settings = ChaosSettings(processes=args.processes, jobs=args.jobs, kills=args.kills,
                             seed=args.seed, lease_seconds=args.lease,
                             recovery_interval=args.recovery_interval,
                             time_limit=args.time_limit)
    faults = 0
    for kind in args.database or DATABASES:
        result = run_chaos(kind, settings)
        print(result.summary(), flush=True)
        faults += (len(result.duplicate_owners) + len(result.lost) + len(result.stranded)
                   + (not result.drained))
    raise SystemExit(1 if faults else 0)


if __name__ == "__main__":
    main()
