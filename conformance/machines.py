"""The Hypothesis machines, read from the registry of areas.

The runner runs every machine whose areas the backend claims and the profile has (at
least one of them), one case per machine. An area declares its machine in its `Area`
(`jobconform.spec.areas`); a machine returns a `MachineRun`, whose `divergence` holds the
shrunk counterexample on failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from jobconform.backends.protocol import Backend
from jobconform.conformance.machine_runner import MachineRun
from jobconform.spec import Profile, Registry
from jobconform.spec.areas import AreaMachine, areas, load_attribute

MachineFunction = Callable[[Backend, Profile, Registry, int, int], MachineRun]


@dataclass(frozen=True)
class MachineEntry:
    name: str
    areas: frozenset[str]  # the machine runs when the backend claims any of these
    function: str  # `module:function`, loaded when the machine runs

    def applies_to(self, backend: Backend, profile: Profile) -> bool:
        """The backend claims one of the machine's areas and the profile has it."""
        return bool(self.areas & frozenset(backend.capabilities) & profile.areas)

    def run(self, backend: Backend, profile: Profile, registry: Registry, seed: int,
            examples: int) -> MachineRun:
        function = cast(MachineFunction, load_attribute(self.function))
        return function(backend, profile, registry, seed, examples)


def _entry(machine: AreaMachine) -> MachineEntry:
    return MachineEntry(machine.title, machine.covers, machine.run)


def machines() -> tuple[MachineEntry, ...]:
    """Every area's machine, in the order the areas are registered."""
    return tuple(_entry(area.machine) for area in areas() if area.machine is not None)
