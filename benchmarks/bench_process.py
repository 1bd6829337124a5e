"""Benchmark: the process backend's main job against the memory one's, side by side.

Usage:
    python benchmarks/bench_process.py [--runs 3] [--area AREA ...] [--python PYTHON ...]

Issue #33 asks that `jobconform run --backend process` cost at most 3x `jobconform run
--backend memory` at the default examples. Each run here is `jobconform run` in a fresh
process, the two backends (and, given two --python, the two installs) taking turns run by
run, so that all of them are measured under the same load. The figure is CPU seconds, user +
system, of the run and its children (the process backend's child included: the kit waits
for it before it exits), which another developer's load changes far less than wall time.

With --area, each area is run on its own (one `--area` run per area and backend), so a
slow area can be found without a full run; without it, the full run. Prints medians and
the ratio process / memory per install, and per area when areas are given. With
--keep-reports the reports stay, so that two installs' reports can be compared
requirement by requirement.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BACKENDS = ("memory", "process")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(python: str, backend: str, area: str | None, keep: Path | None) -> float:
    """CPU seconds of one `jobconform run` of `backend` (one area, or all of them); its
    report.json is copied to `keep` if given."""
    command = [str(Path(python).with_name("jobconform")), "run", "--backend", backend]
    if area is not None:
        command += ["--area", area]
    with tempfile.TemporaryDirectory() as scratch:
        before = children_cpu()
        finished = subprocess.run([*command, "--report-dir", scratch], capture_output=True,
                                  text=True, check=False, cwd=scratch)
        used = children_cpu() - before
        if keep is not None and (Path(scratch) / "report.json").exists():
            keep.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(scratch) / "report.json", keep)
    if finished.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{finished.stdout[-3000:]}"
                         f"\n{finished.stderr[-3000:]}")
    return used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--area", action="append", default=[],
                        help="run this area alone (repeatable); default: the full run")
    parser.add_argument("--python", action="append", default=[],
                        help="the interpreter of an install to measure (repeatable)")
    parser.add_argument("--keep-reports", type=Path, metavar="DIR",
                        help="keep each run's report.json here, named by the --python's"
                             " index, backend, area and run")
    options = parser.parse_args()
    pythons = options.python or [sys.executable]
    areas: list[str | None] = list(options.area) or [None]
    cpu: dict[tuple[str, str | None, str], list[float]] = {}
    started = time.perf_counter()
    for run in range(options.runs):
        for area in areas:
            for python in pythons:
                for backend in BACKENDS:
                    keep = None if options.keep_reports is None else (
                        options.keep_reports / f"{pythons.index(python)}-{backend}"
                        f"-{area or 'all'}-{run + 1}.json")
                    used = one_run(python, backend, area, keep)
                    cpu.setdefault((python, area, backend), []).append(used)
                    print(f"run {run + 1} {area or 'all'} {backend} {Path(python).parent.parent}:"
                          f" {used:.1f} s", file=sys.stderr, flush=True)
    print(f"== median of {options.runs} run(s), CPU s = user + system of the run and its"
          f" children ({time.perf_counter() - started:.0f} s wall in all)")
    for python in pythons:
        print(f"-- {python}")
        totals = dict.fromkeys(BACKENDS, 0.0)
        for area in areas:
            medians = {backend: statistics.median(cpu[python, area, backend])
                       for backend in BACKENDS}
            for backend in BACKENDS:
                totals[backend] += medians[backend]
            runs = "; ".join(f"{backend} " + ", ".join(f"{value:.1f}" for value in
                                                       cpu[python, area, backend])
                             for backend in BACKENDS)
            print(f"{area or 'all':<14} memory {medians['memory']:7.1f}  process"
                  f" {medians['process']:7.1f}  ratio {medians['process'] / medians['memory']:.2f}"
                  f"   ({runs})")
        if len(areas) > 1:
            print(f"{'sum':<14} memory {totals['memory']:7.1f}  process {totals['process']:7.1f}"
                  f"  ratio {totals['process'] / totals['memory']:.2f}")


if __name__ == "__main__":
    main()
