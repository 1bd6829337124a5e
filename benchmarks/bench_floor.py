"""Benchmark: each Hypothesis machine's CPU per step against its oracle-only floor.

Usage:
    python benchmarks/bench_floor.py [--runs 3] [--backend memory] [--seed 0]
        [--examples N] [--machine TEXT ...] [--json OUT]

For each machine the backend runs, two runs at the same seed and examples, in this process,
one after the other, run by run, so that both see the same load:

- full: the machine as `jobconform run` runs it (backend, oracle, every check);
- floor: the same machine under `machine_runner.oracle_alone()`: Hypothesis draws the same
  rules and arguments and each command goes to the harness's oracle alone (no backend
  call, no comparison; the checks once per run skipped). What no check can save.

It prints, per machine, the steps of each (they match where the draws replay the same), the
microseconds of CPU per step of each, and their ratio: what the backend and the checks
cost on top of the floor (issue 33 asks at most 1.3). The harness is still built, so the
floor opens (and closes) each example's runtime; a machine whose steps do not go through
`MachineRun.step` cannot run on the oracle alone and shows n/a. The self-running machine's
oracle is windows read off its runtime (`SelfRunningHarness.run_oracle`): its floor runs
the runtime too, so its ratio near 1 says nothing.

Both runs collect garbage as the runner does while a machine runs. CPU seconds are the
process's (user + system): the memory backend is single-threaded, so they are the machine's
cost. Prints medians; quote them, never assert them.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jobconform.backends.loading import load_backend
from jobconform.conformance.defaults import RUN_EXAMPLES, RUN_SEED
from jobconform.conformance.machine_runner import MachineRun, oracle_alone
from jobconform.conformance.machines import MachineEntry, machines
from jobconform.conformance.runner import _fewer_collections
from jobconform.spec import Profile, Registry, load_registry

# How many commands went through MachineRun.step: under oracle_alone only those reach the
# oracle alone; a machine whose steps bypass it ran its backend after all.
stepped = [0]
plain_step = MachineRun.step


def counted_step(self: MachineRun, *args: Any, **kwargs: Any) -> object:
    stepped[0] += 1
    return plain_step(self, *args, **kwargs)


def timed(entry: MachineEntry, backend: Any, profile: Profile, registry: Registry,
          seed: int, examples: int) -> dict[str, float]:
    """One run of the machine: its steps, the steps through MachineRun.step, CPU seconds."""
    stepped[0] = 0
    started = time.process_time()
    with _fewer_collections():
        result = entry.run(backend, profile, registry, seed, examples)
    cpu = time.process_time() - started
    if result.divergence is not None:
        print(f"{entry.name}: diverged ({result.divergence.primary})", file=sys.stderr)
    return {"steps": result.steps, "stepped": stepped[0], "cpu": cpu}


def measure(entry: MachineEntry, run: Callable[[], dict[str, float]]) -> dict[str, Any]:
    """The full run, then the floor, of one machine."""
    full = run()
    with oracle_alone():
        floor = run()
    return {"machine": entry.name, "full": full, "floor": floor}


def per_step(figures: dict[str, float]) -> float:
    return 1e6 * figures["cpu"] / max(1, figures["steps"])


def table(runs: list[list[dict[str, Any]]]) -> list[str]:
    lines = [f"median of {len(runs)} run(s); us of CPU a step",
             f"  {'machine':<32} {'steps':>6} {'full':>7} {'floor':>7} {'ratio':>6}"
             "  (ratios of each run)"]
    for index, first in enumerate(runs[0]):
        figures = [run[index] for run in runs]
        floor = figures[0]["floor"]
        if floor["stepped"] == 0 and floor["steps"] > 0:
            full = statistics.median(per_step(f["full"]) for f in figures)
            lines.append(f"  {first['machine']:<32} {figures[0]['full']['steps']:6.0f}"
                         f" {full:7.0f}     n/a    n/a  (steps bypass MachineRun.step)")
            continue
        ratios = [per_step(f["full"]) / per_step(f["floor"]) for f in figures]
        # The steps through MachineRun.step, the drawn ones (the full run also counts the
        # checks once per run, which the floor skips).
        note = "" if all(f["full"]["stepped"] == f["floor"]["stepped"] for f in figures) else (
            f"  drawn steps {figures[0]['full']['stepped']:.0f} against"
            f" {floor['stepped']:.0f}: the draws differ")
        lines.append(
            f"  {first['machine']:<32} {figures[0]['full']['steps']:6.0f}"
            f" {statistics.median(per_step(f['full']) for f in figures):7.0f}"
            f" {statistics.median(per_step(f['floor']) for f in figures):7.0f}"
            f" {statistics.median(ratios):6.2f}  ({', '.join(f'{r:.2f}' for r in ratios)})"
            + note)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--backend", default="memory")
    parser.add_argument("--profile", default=None, help="default: the backend's own")
    parser.add_argument("--seed", type=int, default=RUN_SEED)
    parser.add_argument("--examples", type=int, default=RUN_EXAMPLES)
    parser.add_argument("--machine", action="append", default=[], metavar="TEXT",
                        help="only the machines whose name contains TEXT (repeatable)")
    parser.add_argument("--json", type=Path, help="write every figure here as JSON")
    args = parser.parse_args()
    backend = load_backend(args.backend)
    registry = load_registry()
    profile = registry.profile(args.profile or backend.profile)
    chosen = [entry for entry in machines() if entry.applies_to(backend, profile)
              and (not args.machine or any(text in entry.name for text in args.machine))]
    MachineRun.step = counted_step  # type: ignore[method-assign]
    runs: list[list[dict[str, Any]]] = []
    for number in range(1, args.runs + 1):
        print(f"run {number} ...", file=sys.stderr, flush=True)
        runs.append([measure(entry, lambda entry=entry: timed(  # type: ignore[misc]
            entry, backend, profile, registry, args.seed, args.examples))
            for entry in chosen])
    print(f"{args.backend}, seed {args.seed}, {args.examples} examples:"
          f" full run (backend, oracle, checks) against its floor (the oracle alone)")
    print("\n".join(table(runs)))
    if args.json is not None:
        args.json.write_text(json.dumps(runs, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
