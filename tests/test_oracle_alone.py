"""The machines' oracle-only runs (machine_runner.oracle_alone), the cost floor that
benchmarks/bench_floor.py measures each machine against: the same draws as the full run,
and nothing compared."""

from __future__ import annotations

from typing import Any

import pytest

from jobconform.backends.loading import load_backend
from jobconform.conformance.machine_runner import MachineRun, oracle_alone
from jobconform.conformance.machines import MachineEntry, machines
from jobconform.spec import load_registry

EXAMPLES = 5
PLAIN_STEP = MachineRun.step


def _machine(name: str) -> MachineEntry:
    return next(entry for entry in machines() if entry.name == name)


def _drawn(entry: MachineEntry, backend_name: str, monkeypatch: pytest.MonkeyPatch
           ) -> tuple[list[object], MachineRun]:
    """The commands a run of `entry` stepped through, in order, and its record."""
    stepped: list[object] = []

    def step(self: MachineRun, harness: Any, command: object, *args: Any) -> object:
        stepped.append(command)
        return PLAIN_STEP(self, harness, command, *args)

    monkeypatch.setattr(MachineRun, "step", step)
    backend = load_backend(backend_name)
    registry = load_registry()
    run = entry.run(backend, registry.profile(backend.profile), registry, 0, EXAMPLES)
    return stepped, run


# The machines whose oracle-only runs keep state the rules read apart from the backend's
# (the scheduling machine's count of schedulers, the reminders' time inside a store
# fault) or whose harness splits a command into backend and oracle halves.
@pytest.mark.parametrize("name", ["scheduling machine", "reminders machine", "breaker machine",
                                  "governor machine", "loops machine"])
def test_the_floor_draws_what_the_full_run_draws(name: str,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    full, _ = _drawn(_machine(name), "memory", monkeypatch)
    with oracle_alone():
        floor, run = _drawn(_machine(name), "memory", monkeypatch)
    assert run.oracle_only
    assert floor == full


def test_the_floor_compares_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broken backend the full run catches passes under oracle_alone: no answer or state
    of the backend is read."""
    broken = "jobconform.conformance.scheduling.gallery:scheduling_fires_early"
    _, caught = _drawn(_machine("scheduling machine"), broken, monkeypatch)
    assert caught.divergence is not None
    with oracle_alone():
        _, floor = _drawn(_machine("scheduling machine"), broken, monkeypatch)
    assert floor.divergence is None and floor.steps > 0
