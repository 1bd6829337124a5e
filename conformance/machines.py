"""The Hypothesis machines, one per group of areas, and which areas each needs.

The runner runs every machine whose areas the backend claims and the profile has (at
least one of them), one case per machine. An area beyond the job lifecycle adds its own
machine here; a machine returns a `MachineRun`, whose `divergence` holds the shrunk
counterexample on failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from jobconform.backends.breaker_protocol import BREAKER
from jobconform.backends.governor_protocol import GOVERNOR
from jobconform.backends.loops_protocol import LOOPS
from jobconform.backends.protocol import (
    ADMISSION,
    IDEMPOTENCY,
    LIFECYCLE,
    REAPER,
    REDELIVERY,
    REMINDERS,
    RETRY,
    SCHEDULING,
    STUCK,
    Backend,
)
from jobconform.conformance.admission_machine import run_admission_machine
from jobconform.conformance.breaker_machine import run_breaker_machine
from jobconform.conformance.governor_machine import run_governor_machine
from jobconform.conformance.idempotency_machine import run_idempotency_machine
from jobconform.conformance.loops_machine import run_loops_machine
from jobconform.conformance.machine import MachineRun, run_machine
from jobconform.conformance.reaper_machine import make_reaper_machine
from jobconform.conformance.reminders_machine import run_reminder_machine
from jobconform.conformance.scheduling.machine import run_scheduling_machine
from jobconform.spec import Profile, Registry

MachineFunction = Callable[[Backend, Profile, Registry, int, int], MachineRun]


@dataclass(frozen=True)
class MachineEntry:
    name: str
    areas: frozenset[str]  # the machine runs when the backend claims any of these
    run: MachineFunction

    def applies_to(self, backend: Backend, profile: Profile) -> bool:
        """The backend claims one of the machine's areas and the profile has it."""
        return bool(self.areas & frozenset(backend.capabilities) & profile.areas)


def _lifecycle(backend: Backend, profile: Profile, registry: Registry, seed: int,
               examples: int) -> MachineRun:
    return run_machine(backend, profile, registry, seed=seed, examples=examples)


def _reaper(backend: Backend, profile: Profile, registry: Registry, seed: int,
            examples: int) -> MachineRun:
    return run_machine(backend, profile, registry, seed=seed, examples=examples,
                       factory=make_reaper_machine)


def _idempotency(backend: Backend, profile: Profile, registry: Registry, seed: int,
                 examples: int) -> MachineRun:
    return run_idempotency_machine(backend, profile, registry, seed=seed, examples=examples)

def _breaker(backend: Backend, profile: Profile, registry: Registry, seed: int,
             examples: int) -> MachineRun:
    return run_breaker_machine(backend, profile, registry, seed=seed, examples=examples)


def _governor(backend: Backend, profile: Profile, registry: Registry, seed: int,
              examples: int) -> MachineRun:
    return run_governor_machine(backend, profile, registry, seed=seed, examples=examples)


def _reminders(backend: Backend, profile: Profile, registry: Registry, seed: int,
               examples: int) -> MachineRun:
    return run_reminder_machine(backend, profile, registry, seed=seed, examples=examples)


def _admission(backend: Backend, profile: Profile, registry: Registry, seed: int,
               examples: int) -> MachineRun:
    return run_admission_machine(backend, profile, registry, seed=seed, examples=examples)


def _loops(backend: Backend, profile: Profile, registry: Registry, seed: int,
           examples: int) -> MachineRun:
    if LOOPS not in profile.areas:
        return MachineRun()  # the profile has no loops: its requirements are n/a
    return run_loops_machine(backend, profile, registry, seed=seed, examples=examples)


def _scheduling(backend: Backend, profile: Profile, registry: Registry, seed: int,
                examples: int) -> MachineRun:
    return run_scheduling_machine(backend, profile, registry, seed=seed, examples=examples)


MACHINES: tuple[MachineEntry, ...] = (
    # The lifecycle machine also drives retries and heartbeats when the backend claims them.
    MachineEntry("lifecycle machine", frozenset({LIFECYCLE, RETRY, STUCK}), _lifecycle),
    MachineEntry("reaper and re-delivery machine", frozenset({REAPER, REDELIVERY}), _reaper),
    MachineEntry("idempotency machine", frozenset({IDEMPOTENCY}), _idempotency),
    MachineEntry("breaker machine", frozenset({BREAKER}), _breaker),
    MachineEntry("governor machine", frozenset({GOVERNOR}), _governor),
    MachineEntry("reminders machine", frozenset({REMINDERS}), _reminders),
    MachineEntry("admission machine", frozenset({ADMISSION}), _admission),
    MachineEntry("loops machine", frozenset({LOOPS}), _loops),
    MachineEntry("scheduling machine", frozenset({SCHEDULING}), _scheduling),
)
