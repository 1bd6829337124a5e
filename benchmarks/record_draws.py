"""Record the commands each Hypothesis machine draws, to show a refactoring draws the same.

Usage:
    python benchmarks/record_draws.py OUT_DIR [--backend memory] [--seeds 0,1]
        [--examples N] [--machine TEXT ...] [--against EARLIER_DIR]

For each machine the backend runs (or those whose name contains a --machine TEXT), at each
seed, it writes OUT_DIR/<machine>_s<seed>.draws: one line per command sent through
`MachineRun.step`, its repr, in order, then a line with the run's steps and verdict. It
prints one line per run with the count of commands and a short hash of the file.

With --against, it compares each file with the one of the same name in EARLIER_DIR (written
by this script from another checkout) and prints the first line that differs; the exit
status is 1 when any file differs or is missing. Hypothesis orders rules by name, so a
renamed rule or a moved precondition shows here before it shows in any verdict (issue 30:
"same behaviour, shown").
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path
from typing import Any

from jobconform.backends.loading import load_backend
from jobconform.conformance.defaults import RUN_EXAMPLES, RUN_SEED
from jobconform.conformance.machine_runner import MachineRun
from jobconform.conformance.machines import machines
from jobconform.spec import load_registry

# The commands of the run under way, in the order they went through MachineRun.step.
recorded: list[str] = []
plain_step = MachineRun.step


def recording_step(self: MachineRun, harness: Any, command: Any, *args: Any,
                   **kwargs: Any) -> object:
    recorded.append(repr(command))
    return plain_step(self, harness, command, *args, **kwargs)


def first_difference(now: list[str], earlier: list[str]) -> str | None:
    for number, (line, old) in enumerate(zip(now, earlier, strict=False), start=1):
        if line != old:
            return f"line {number}: now {line[:160]!r}, earlier {old[:160]!r}"
    if len(now) != len(earlier):
        return f"{len(now)} lines now, {len(earlier)} earlier"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--backend", default="memory")
    parser.add_argument("--seeds", default=str(RUN_SEED), help="comma-separated, e.g. 0,1")
    parser.add_argument("--examples", type=int, default=RUN_EXAMPLES)
    parser.add_argument("--machine", action="append", default=[], metavar="TEXT")
    parser.add_argument("--against", type=Path, default=None, metavar="EARLIER_DIR")
    args = parser.parse_args()
    seeds = [int(seed) for seed in args.seeds.split(",")]
    registry = load_registry()
    backend = load_backend(args.backend)
    profile = registry.profile(backend.profile)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    MachineRun.step = recording_step  # type: ignore[method-assign]
    differ = False
    for entry in machines():
        if not entry.applies_to(backend, profile) or (
                args.machine and not any(text in entry.name for text in args.machine)):
            continue
        for seed in seeds:
            recorded.clear()
            run = entry.run(backend, profile, registry, seed, args.examples)
            verdict = "passed" if run.divergence is None else f"diverged {run.divergence.primary}"
            lines = [*recorded, f"# {run.steps} steps, {verdict}"]
            path = args.out_dir / f"{entry.name.replace(' ', '_')}_s{seed}.draws"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
            print(f"{entry.name} seed {seed}: {len(recorded)} commands {digest}", flush=True)
            if args.against is None:
                continue
            earlier = args.against / path.name
            if not earlier.exists():
                print(f"  no {earlier} to compare with")
                differ = True
                continue
            difference = first_difference(
                lines, earlier.read_text(encoding="utf-8").splitlines())
            if difference is not None:
                print(f"  differs from {earlier}: {difference}")
                differ = True
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
