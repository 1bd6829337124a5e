"""Benchmark: wall time of the conformance run and Hypothesis steps per second.

Usage: python benchmarks/bench_conformance.py [--runs 3] [--backend memory]

Prints the median of several runs; quote these figures, never assert them in tests.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time

from jobconform.backends.loading import load_backend
from jobconform.conformance.lifecycle.machine import run_machine
from jobconform.spec import load_registry


def conformance_wall_time(backend: str) -> float:
    with tempfile.TemporaryDirectory() as report_dir:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "jobconform.conformance.cli", "run", "--backend",
                        backend, "--report-dir", report_dir], check=True,
                       capture_output=True)
        return time.perf_counter() - started


def machine_steps_per_second(backend: str, seed: int) -> float:
    registry = load_registry()
    started = time.perf_counter()
    run = run_machine(load_backend(backend), registry.profile("canonical"), registry,
                      seed=seed, examples=200)
    return run.steps / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backend", default="memory")
    args = parser.parse_args()
    walls = [conformance_wall_time(args.backend) for _ in range(args.runs)]
    rates = [machine_steps_per_second(args.backend, seed) for seed in range(args.runs)]
    print(f"requirements: {len(load_registry().requirements)}")
    print(f"conformance run on {args.backend}: median {statistics.median(walls):.2f} s"
          f" over {args.runs} runs ({', '.join(f'{w:.2f}' for w in walls)})")
    print(f"hypothesis: median {statistics.median(rates):.0f} steps/s"
          f" ({', '.join(f'{r:.0f}' for r in rates)})")


if __name__ == "__main__":
    main()
