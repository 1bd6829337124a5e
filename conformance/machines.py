"""The Hypothesis machines, one per group of areas, and which areas each needs.

The runner runs every machine whose areas the backend claims (at least one of them), one
case per machine. An area beyond the job lifecycle adds its own machine here; a machine
returns a `MachineRun`, whose `divergence` holds the shrunk counterexample on failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jobconform.backends.loops_protocol import LOOPS
from jobconform.backends.protocol import LIFECYCLE, Backend
from jobconform.conformance.loops_machine import run_loops_machine
from jobconform.conformance.machine import MachineRun, run_machine
from jobconform.spec import Profile, Registry

MachineFunction = Callable[[Backend, Profile, Registry, int, int], MachineRun]


@dataclass(frozen=True)
class MachineEntry:
    name: str
    areas: frozenset[str]  # the machine runs when the backend claims any of these
    run: MachineFunction

    def applies_to(self, backend: Backend) -> bool:
        return bool(self.areas & frozenset(backend.capabilities))


def _lifecycle(backend: Backend, profile: Profile, registry: Registry, seed: int,
               examples: int) -> MachineRun:
    return run_machine(backend, profile, registry, seed=seed, examples=examples)


def _loops(backend: Backend, profile: Profile, registry: Registry, seed: int,
           examples: int) -> MachineRun:
    if LOOPS not in profile.areas:
        return MachineRun()  # the profile has no loops: its requirements are n/a
    return run_loops_machine(backend, profile, registry, seed=seed, examples=examples)


MACHINES: tuple[MachineEntry, ...] = (
    MachineEntry("lifecycle machine", frozenset({LIFECYCLE}), _lifecycle),
    MachineEntry("loops machine", frozenset({LOOPS}), _loops),
)
