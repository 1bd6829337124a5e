"""Benchmark: every figure of the performance issue in one run, side by side.

Usage (from the checkout, with the benchmark extra: pip install -e '.[bench]'):
    python benchmarks/bench_all.py [--runs 3] [--rounds 3] [--before PYTHON] [--tox ENV ...]

One after the other, on the same machine and so under the same load:

1. bench_conformance.py: the main job (`jobconform run --backend memory`) and its suites,
   steps per CPU-second of every Hypothesis machine, and each --tox environment of the
   README test command; with --before, a second install (say, a checkout of the previous
   release) measured run by run beside this one;
2. bench_pgqueuer.py: the SQL store's claim+complete against pgqueuer and procrastinate on
   the local PostgreSQL, 1 and 4 workers, checking that no job is lost or run twice.

Each script prints its own medians; this one only runs them in order and stops at the
first that fails, so that a figure is never quoted from a broken run.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="main-job runs per install")
    parser.add_argument("--rounds", type=int, default=3, help="SQL store rounds")
    parser.add_argument("--before", metavar="PYTHON",
                        help="the interpreter of a second install to measure beside this one")
    parser.add_argument("--tox", action="append", default=[], metavar="ENV",
                        help="a tox environment to time (repeatable)")
    options = parser.parse_args()
    conformance = [sys.executable, str(HERE / "bench_conformance.py"), "--runs",
                   str(options.runs), "--python", sys.executable]
    if options.before:
        conformance += ["--python", options.before]
    for env in options.tox:
        conformance += ["--tox", env]
    sql = [sys.executable, str(HERE / "bench_pgqueuer.py"), "--rounds", str(options.rounds)]
    for command in (conformance, sql):
        print(f"== {' '.join(Path(part).name for part in command[1:2])}", flush=True)
        if subprocess.run(command, check=False).returncode != 0:
            sys.exit(f"{Path(command[1]).name} failed: no figures from this run")


if __name__ == "__main__":
    main()
