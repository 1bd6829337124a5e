"""The Hypothesis machines, one per group of areas, and which areas each needs.

The runner runs every machine whose areas the backend claims and the profile has (at
least one of them), one case per machine. An area beyond the job lifecycle adds its own
machine here; a machine returns a `MachineRun`, whose `divergence` holds the shrunk
counterexample on failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jobconform.backends.protocol import ADMISSION, LIFECYCLE, Backend
from jobconform.conformance.admission_machine import run_admission_machine
from jobconform.conformance.machine import MachineRun, run_machine
from jobconform.spec import Profile, Registry

MachineFunction = Callable[[Backend, Profile, Registry, int, int], MachineRun]


@dataclass(frozen=True)
class MachineEntry:
    name: str
    areas: frozenset[str]  # the machine runs when the backend claims any of these
    run: MachineFunction

    def applies_to(self, backend: Backend, profile: Profile) -> bool:
        """Whether the backend claims one of the machine's areas that the profile has."""
        return bool(self.areas & frozenset(backend.capabilities) & profile.areas)


def _lifecycle(backend: Backend, profile: Profile, registry: Registry, seed: int,
               examples: int) -> MachineRun:
    return run_machine(backend, profile, registry, seed=seed, examples=examples)


def _admission(backend: Backend, profile: Profile, registry: Registry, seed: int,
               examples: int) -> MachineRun:
    return run_admission_machine(backend, profile, registry, seed=seed, examples=examples)


MACHINES: tuple[MachineEntry, ...] = (
    MachineEntry("lifecycle machine", frozenset({LIFECYCLE}), _lifecycle),
    MachineEntry("admission machine", frozenset({ADMISSION}), _admission),
)
