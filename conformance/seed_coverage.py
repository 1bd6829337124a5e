"""Which requirements each Hypothesis machine reaches, seed by seed.

One seed's run of a machine can leave a requirement unexercised by chance (its boundary
never drawn), and the run's verdict for it is then "untested". A machine is only as good
as its worst seed, so this measures a range of seeds at the default example count on the
oracle's backend (or another: the self-running and restart machines apply only to a backend
that claims their areas) and lists every requirement that some seed leaves unreached.
`jobconform spec check --seeds 0-19` and benchmarks/coverage_over_seeds.py read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from jobconform.backends.loading import load_backend
from jobconform.conformance.defaults import RUN_EXAMPLES
from jobconform.conformance.exploration import seed_alone
from jobconform.conformance.machines import machines
from jobconform.spec import Registry

ORACLE_BACKEND = "memory"


@dataclass
class MachineSeeds:
    """One machine under one profile, over a range of seeds."""

    machine: str
    profile: str
    requirements: tuple[str, ...]  # the requirements of its areas the profile has
    backend: str = ORACLE_BACKEND  # the backend it ran on
    reached: dict[int, frozenset[str]] = field(default_factory=dict)
    diverged: dict[int, str] = field(default_factory=dict)  # seed -> what the backend broke
    seconds: dict[int, float] = field(default_factory=dict)

    def unreached(self) -> dict[str, tuple[int, ...]]:
        """requirement -> the seeds that did not reach it (only those with any)."""
        missing = {rid: tuple(seed for seed, seen in self.reached.items() if rid not in seen)
                   for rid in self.requirements}
        return {rid: seeds for rid, seeds in missing.items() if seeds}


def measure(registry: Registry, seeds: tuple[int, ...], examples: int = RUN_EXAMPLES,
            backend_name: str = ORACLE_BACKEND, profiles: tuple[str, ...] | None = None,
            machine_names: tuple[str, ...] | None = None,
            progress: Callable[[str], None] | None = None) -> list[MachineSeeds]:
    """Run every machine that applies to the backend, under each profile, on each seed.

    Raises:
        SpecError: a profile name is unknown.
    """
    import time

    backend = load_backend(backend_name)
    results = []
    for profile_name in profiles or registry.profiles:
        profile = registry.profile(profile_name)
        for entry in machines():
            if not entry.applies_to(backend, profile) or (
                    machine_names is not None and entry.name not in machine_names):
                continue
            wanted = tuple(r.id for r in registry.requirements
                           if r.area in entry.areas and r.area in profile.areas
                           and profile_name in r.profiles)
            record = MachineSeeds(entry.name, profile_name, wanted, backend_name)
            for seed in seeds:
                started = time.perf_counter()
                with seed_alone():
                    run = entry.run(backend, profile, registry, seed, examples)
                record.seconds[seed] = time.perf_counter() - started
                record.reached[seed] = frozenset(run.exercised)
                if run.divergence is not None:
                    record.diverged[seed] = str(run.divergence).splitlines()[0]
                if progress is not None:
                    progress(f"{entry.name} ({profile_name}) seed {seed}:"
                             f" {len(set(wanted) & run.exercised)}/{len(wanted)} reached,"
                             f" {record.seconds[seed]:.1f} s")
            results.append(record)
    return results


def problems(results: list[MachineSeeds]) -> list[str]:
    """One line per requirement a seed leaves unreached, and per seed the oracle failed."""
    lines = []
    for record in results:
        for rid, seeds in record.unreached().items():
            lines.append(f"{rid}: the {record.machine} ({record.profile}) does not reach it on"
                         f" seed(s) {', '.join(map(str, seeds))}; aim a rule at it")
        for seed, what in record.diverged.items():
            # On the oracle's backend a divergence is the oracle's; on another, the backend's.
            who = ("the oracle" if record.backend == ORACLE_BACKEND else "the backend")
            lines.append(f"{who} ({record.backend}) diverged in the {record.machine}"
                         f" ({record.profile}) on seed {seed}: {what}")
    return lines


def summary(results: list[MachineSeeds]) -> str:
    """A requirement x seeds table: one row per requirement, `#` reached, `.` not."""
    lines = []
    for record in results:
        seeds = tuple(record.reached)
        total = sum(record.seconds.values())
        on = "" if record.backend == ORACLE_BACKEND else f" on {record.backend}"
        lines.append(f"{record.machine} ({record.profile}){on}, seeds {seeds[0]}-{seeds[-1]},"
                     f" {total:.0f} s")
        lines.append(f"  {'requirement':<11} " + "".join(str(s % 10) for s in seeds)
                     + "  reached")
        for rid in record.requirements:
            marks = "".join("#" if rid in record.reached[s] else "." for s in seeds)
            count = sum(mark == "#" for mark in marks)
            lines.append(f"  {rid:<11} {marks}  {count}/{len(seeds)}")
    return "\n".join(lines)
