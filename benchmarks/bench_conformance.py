"""Benchmark: CPU time of the main job, per suite and per machine, and of tox environments.

Usage:
    python benchmarks/bench_conformance.py [--runs 3] [--backend memory]
        [--python PYTHON ...] [--tox ENV ...] [--json OUT]

The main job is `jobconform run --backend BACKEND` (all three suites, default options). Each
run goes in a fresh process of each interpreter given by --python (default: this one), the
interpreters taking turns run by run, so that two installs (a checkout before and after a
change) are measured side by side under the same load. Give a second --python to compare.

The machine is shared, so the figures are CPU seconds (user + system, the Behave child
process included), which another developer's load changes far less than wall time; wall
time is printed beside them. Per run it records:

- the whole job, from interpreter start to the written report;
- each suite, from the runner's "running" line to its result line;
- each Hypothesis machine: its steps (commands executed), its CPU seconds, steps per
  CPU second and microseconds per step (the memory backend is single-threaded, so process
  CPU time is its cost), and the share of its CPU spent inside the harnesses' steps (the
  backend, the oracle and the checks after each command; the rest is Hypothesis drawing
  the rules and their arguments).

With two or more --python, every later one is also printed against the first as ratios
of medians: the main job's CPU, each suite's, each machine's CPU and CPU per step (the
machines' example counts may differ between checkouts, so both are given).

Each machine's cost against its floor (Hypothesis driving the same rules with the oracle
alone, no backend, no checks) is benchmarks/bench_floor.py's.

--tox ENV runs `tox -e ENV` from the checkout of the first --python's jobconform, once per
run, timed the same way (tox and its children). Prints medians; quote them, never assert them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# The child: runs the main job in process, as the `jobconform run` command does, with the
# runner's progress lines and every machine timed. It uses only what every version of the
# kit has (the CLI's group and `_progress`, the runner's machine list), so it measures a
# checkout before a change as well as after it.
CHILD = r"""
import json, resource, sys, time

def cpu():
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

wall_start = time.perf_counter()
out_path, backend, report_dir = sys.argv[1:4]
marks = []
machines = []

from jobconform.conformance import cli, runner

# CPU inside the harnesses' steps (backend, oracle and checks), the rest of a machine's
# being Hypothesis and the rules: the machines step through MachineRun.step.
inside = [0.0]
try:
    from jobconform.conformance.machine_runner import MachineRun
except ImportError:
    MachineRun = None
if MachineRun is not None and hasattr(MachineRun, "step"):
    plain_step = MachineRun.step

    def timed_step(self, *args, **kwargs):
        started = time.process_time()
        try:
            return plain_step(self, *args, **kwargs)
        finally:
            inside[0] += time.process_time() - started

    MachineRun.step = timed_step

def progress(line):
    marks.append((line, cpu(), time.perf_counter()))

class Timed:
    # A machine entry whose runs are timed; it answers like the entry it wraps.

    def __init__(self, entry):
        self.entry, self.name, self.areas = entry, entry.name, entry.areas

    def applies_to(self, *args):
        return self.entry.applies_to(*args)

    def run(self, *args):
        started, inside_before = time.process_time(), inside[0]
        result = self.entry.run(*args)
        machines.append({"machine": self.name, "steps": result.steps,
                         "cpu": time.process_time() - started,
                         "in_steps": inside[0] - inside_before})
        return result

cli._progress = progress
if hasattr(runner, "machines"):  # the registry of areas lists the machines
    listed = runner.machines
    runner.machines = lambda: tuple(Timed(entry) for entry in listed())
else:
    runner.MACHINES = tuple(Timed(entry) for entry in runner.MACHINES)
try:
    cli.main(["run", "--backend", backend, "--report-dir", report_dir],
             standalone_mode=False)
except SystemExit as stop:
    if stop.code:
        raise
suites, started = {}, {}
for line, cpu_at, wall_at in marks:
    number, _, rest = line.partition("] ")
    suite = rest.split(":", 1)[0]
    if ": running against" in rest:
        started[number] = (cpu_at, wall_at)
    elif " cases, " in rest and number in started:
        suites[suite] = {"cpu": cpu_at - started[number][0], "wall": wall_at - started[number][1]}
with open(out_path, "w") as handle:
    json.dump({"cpu": cpu(), "wall": time.perf_counter() - wall_start, "suites": suites,
               "machines": machines}, handle)
"""


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main_job(python: str, backend: str) -> dict[str, Any]:
    """One main job in a fresh process of `python`; the child's own figures, plus the CPU
    the parent saw it use (interpreter start and imports included)."""
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "figures.json"
        cpu_before, started = children_cpu(), time.perf_counter()
        finished = subprocess.run(
            [python, "-c", CHILD, str(out), backend, str(Path(scratch) / "reports")],
            capture_output=True, text=True, check=False, cwd=scratch)
        cpu_used, wall = children_cpu() - cpu_before, time.perf_counter() - started
        if finished.returncode != 0 or not out.exists():
            raise SystemExit(f"{python}: the main job failed:\n{finished.stderr[-3000:]}")
        figures: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    figures["process_cpu"], figures["process_wall"] = cpu_used, wall
    return figures


def checkout_of(python: str) -> Path:
    """The source folder of the jobconform that `python` imports (an editable checkout)."""
    found = subprocess.run(
        [python, "-c", "import jobconform.conformance as c, pathlib;"
                       " print(pathlib.Path(c.__file__).resolve().parent.parent)"],
        capture_output=True, text=True, check=True)
    return Path(found.stdout.strip())


def tox_env(python: str, env: str) -> dict[str, float]:
    tox = Path(python).with_name("tox")
    command = [str(tox) if tox.exists() else "tox", "-e", env]
    cpu_before, started = children_cpu(), time.perf_counter()
    finished = subprocess.run(command, cwd=checkout_of(python), capture_output=True,
                              text=True, check=False, env={**os.environ, "CI": "true"})
    if finished.returncode != 0:
        print(f"tox -e {env} failed:\n{finished.stdout[-2000:]}", file=sys.stderr)
    return {"cpu": children_cpu() - cpu_before, "wall": time.perf_counter() - started,
            "ok": float(finished.returncode == 0)}


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def spread(values: list[float], digits: int = 1) -> str:
    return ", ".join(f"{value:.{digits}f}" for value in values)


def summarise(label: str, runs: list[dict[str, Any]]) -> list[str]:
    lines = [f"== {label}: median of {len(runs)} run(s); CPU s = user + system"]
    job_cpu = [run["process_cpu"] for run in runs]
    job_wall = [run["process_wall"] for run in runs]
    lines.append(f"main job           CPU {median(job_cpu):7.1f} s ({spread(job_cpu)})"
                 f"   wall {median(job_wall):7.1f} s ({spread(job_wall)})")
    for suite in runs[0]["suites"]:
        cpu = [run["suites"][suite]["cpu"] for run in runs]
        wall = [run["suites"][suite]["wall"] for run in runs]
        lines.append(f"  {suite:<16} CPU {median(cpu):7.1f} s ({spread(cpu)})"
                     f"   wall {median(wall):7.1f} s")
    lines.append("  machine                          steps   CPU s  steps/CPU-s  us/step"
                 "  in steps")
    for index, first in enumerate(runs[0]["machines"]):
        steps = [run["machines"][index]["steps"] for run in runs]
        rates = [run["machines"][index]["steps"] / run["machines"][index]["cpu"]
                 for run in runs]
        cpu = [run["machines"][index]["cpu"] for run in runs]
        # The share of the machine's CPU spent inside the harnesses' steps (the backend,
        # the oracle and the checks); the rest is Hypothesis drawing the rules.
        # A machine that runs its harness without MachineRun.step (or a checkout without
        # it) shows none: n/a.
        shares = [run["machines"][index].get("in_steps", 0.0)
                  / run["machines"][index]["cpu"] for run in runs]
        share = f"{median(shares):8.0%}" if median(shares) > 0 else "     n/a"
        lines.append(f"  {first['machine']:<32} {median(steps):5.0f} {median(cpu):7.2f}"
                     f" {median(rates):8.0f} ({spread(rates, 0)})"
                     f" {1e6 / median(rates):7.0f} {share}")
    return lines


def ratios(label: str, runs: list[dict[str, Any]], base_label: str,
           base_runs: list[dict[str, Any]]) -> list[str]:
    """`runs` against `base_runs` (measured run by run beside them): the main job's CPU,
    each suite's, and each machine's CPU and CPU per step, as ratios of medians."""
    lines = [f"== {label} / {base_label} (CPU, ratio of medians; below 1 is cheaper)"]

    def ratio(values: list[float], base: list[float]) -> float:
        return median(values) / median(base) if median(base) else float("nan")

    job = ratio([r["process_cpu"] for r in runs], [r["process_cpu"] for r in base_runs])
    lines.append(f"main job           x{job:.2f}")
    for suite in runs[0]["suites"]:
        if suite in base_runs[0]["suites"]:
            suite_ratio = ratio([r["suites"][suite]["cpu"] for r in runs],
                                [r["suites"][suite]["cpu"] for r in base_runs])
            lines.append(f"  {suite:<16} x{suite_ratio:.2f}")
    lines.append("  machine                          CPU    CPU/step")
    base_machines = {m["machine"]: index for index, m in enumerate(base_runs[0]["machines"])}
    for index, first in enumerate(runs[0]["machines"]):
        other = base_machines.get(first["machine"])
        if other is None:
            continue
        cpu = [r["machines"][index]["cpu"] for r in runs]
        base_cpu = [r["machines"][other]["cpu"] for r in base_runs]
        per_step = [r["machines"][index]["cpu"] / max(1, r["machines"][index]["steps"])
                    for r in runs]
        base_per_step = [r["machines"][other]["cpu"] / max(1, r["machines"][other]["steps"])
                         for r in base_runs]
        lines.append(f"  {first['machine']:<32} x{ratio(cpu, base_cpu):.2f}"
                     f"  x{ratio(per_step, base_per_step):.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backend", default="memory")
    parser.add_argument("--python", action="append", default=[],
                        help="an interpreter with jobconform installed (repeat to compare)")
    parser.add_argument("--tox", action="append", default=[], metavar="ENV",
                        help="also time `tox -e ENV` (repeatable)")
    parser.add_argument("--no-main-job", action="store_true",
                        help="only the tox environments")
    parser.add_argument("--json", type=Path, help="write every figure here as JSON")
    args = parser.parse_args()
    pythons = args.python or [sys.executable]
    figures: dict[str, dict[str, list[Any]]] = {
        python: {"main": [], "tox": []} for python in pythons}
    for number in range(1, args.runs + 1):
        for python in pythons:
            if not args.no_main_job:
                print(f"run {number}: main job with {python} ...", file=sys.stderr, flush=True)
                figures[python]["main"].append(main_job(python, args.backend))
        for env in args.tox:
            print(f"run {number}: tox -e {env} ...", file=sys.stderr, flush=True)
            figures[pythons[0]]["tox"].append({"env": env, **tox_env(pythons[0], env)})
    for python in pythons:
        if figures[python]["main"]:
            print("\n".join(summarise(f"{python} on {args.backend}",
                                      figures[python]["main"])))
    # Every later interpreter against the first: the ratios the performance issue asks for
    # (issue 33: the main job at most half the CPU of the checkout it names).
    for python in pythons[1:]:
        if figures[python]["main"] and figures[pythons[0]]["main"]:
            print("\n".join(ratios(python, figures[python]["main"], pythons[0],
                                   figures[pythons[0]]["main"])))
    for env in args.tox:
        runs = [run for run in figures[pythons[0]]["tox"] if run["env"] == env]
        print(f"tox -e {env}: CPU {median([r['cpu'] for r in runs]):.1f} s"
              f" ({spread([r['cpu'] for r in runs])}), wall"
              f" {median([r['wall'] for r in runs]):.1f} s, passed"
              f" {sum(int(r['ok']) for r in runs)}/{len(runs)}")
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
