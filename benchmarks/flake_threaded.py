"""Flake hunt: the conformance suites on the threaded backend, many runs in a row.

Usage: python benchmarks/flake_threaded.py [--runs 30] [--first-seed 0] [--backend threaded]
       [-- OPTIONS OF jobconform run, e.g. --suite hypothesis --examples 50]

Each run is `jobconform run --backend BACKEND --seed N` in a process of its own, with seeds
N = first-seed, first-seed + 1, ... The threaded backend runs jobs in real threads, so a race
in it (or in the kit's settle) would show up as a failure on some runs and not others. The
script prints one line per run and a summary that keeps apart:

- runs with a failed requirement (a divergence or a broken case): real failures;
- runs whose only problem is an untested requirement (the seed's command sequences did
  not exercise it): a coverage gap of the Hypothesis machine, not a flake;
- runs in which a real-time safety limit expired (the worker's settle limit or the
  harness's watchdog): the worker hung.

Exit code 1 when any run failed or hit a safety limit.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from jobconform.conformance.watchdog import EXIT_CODE_HUNG

# What each real-time safety limit says when it expires: the threaded worker's settle and
# dispatch, the harness's watchdog, the Behave child process's limit.
SAFETY_LIMIT_MESSAGES = ("did not settle within", "did not run within",
                         "did not return within", "did not finish within")


@dataclass(frozen=True)
class Run:
    seed: int
    seconds: float
    exit_code: int
    failed: tuple[str, ...]  # requirements with a "fail" verdict in some suite
    untested: tuple[str, ...]
    safety_limit_expired: bool

    @property
    def verdict(self) -> str:
        if self.safety_limit_expired:
            return "SAFETY LIMIT EXPIRED"
        if self.failed or (self.exit_code != 0 and not self.untested):
            return "FAILED"
        return "untested only" if self.untested else "pass"


def run_once(backend: str, seed: int, run_options: list[str]) -> Run:
    with tempfile.TemporaryDirectory() as report_dir:
        started = time.perf_counter()
        finished = subprocess.run(
            [sys.executable, "-m", "jobconform.conformance.cli", "run", "--backend", backend,
             "--seed", str(seed), "--report-dir", report_dir, *run_options],
            capture_output=True, text=True, check=False)
        seconds = time.perf_counter() - started
        texts = [finished.stdout, finished.stderr] + [
            path.read_text(encoding="utf-8", errors="replace")
            for path in Path(report_dir).rglob("*")
            if path.is_file() and path.suffix in (".json", ".log", ".xml")
        ]
        report_path = Path(report_dir) / "report.json"
        rows = (json.loads(report_path.read_text(encoding="utf-8"))["requirements"]
                if report_path.exists() else {})
    failed = tuple(rid for rid, row in rows.items() if "fail" in row["suites"].values())
    untested = tuple(rid for rid, row in rows.items() if "untested" in row["suites"].values())
    expired = finished.returncode == EXIT_CODE_HUNG or any(
        message in text for text in texts for message in SAFETY_LIMIT_MESSAGES)
    return Run(seed, seconds, finished.returncode, failed, untested, expired)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--backend", default="threaded")
    parser.add_argument("run_options", nargs=argparse.REMAINDER,
                        help="after --: options for every `jobconform run`")
    args = parser.parse_args()
    run_options = [option for option in args.run_options if option != "--"]
    runs = []
    for seed in range(args.first_seed, args.first_seed + args.runs):
        run = run_once(args.backend, seed, run_options)
        runs.append(run)
        details = "".join(f"; {label}: {', '.join(ids)}" for label, ids in (
            ("failed", run.failed), ("untested", run.untested)) if ids)
        print(f"seed {seed:>4}: {run.verdict} in {run.seconds:.1f} s (exit {run.exit_code})"
              f"{details}", flush=True)
    failed = [run for run in runs if run.verdict == "FAILED"]
    expired = [run for run in runs if run.safety_limit_expired]
    untested_only = [run for run in runs if run.verdict == "untested only"]
    options = f" with {' '.join(run_options)}" if run_options else ""
    print(f"\n{len(runs)} runs of {args.backend!r}{options}: {len(failed)} failed,"
          f" {len(expired)} safety-limit expiries, {len(untested_only)} with untested"
          f" requirements only; wall time median {statistics.median(r.seconds for r in runs):.1f}"
          f" s, max {max(r.seconds for r in runs):.1f} s")
    if failed or expired:
        sys.exit(1)


if __name__ == "__main__":
    main()
