"""Differential execution of tally commands: the backend and the oracle, then compared."""

from __future__ import annotations

from jobconform.conformance.harness import Divergence
from jobconform.spec import Registry, load_registry
from tally_area import oracle
from tally_area.protocol import TallyBackend

REQUIREMENT = {"increment": "TL-001", "reset": "TL-002"}


class TallyHarness:
    def __init__(self, backend: object, registry: Registry | None = None) -> None:
        if not isinstance(backend, TallyBackend):
            raise ValueError(f"backend {backend!r} has no open_tally()")
        self.tally = backend.open_tally()
        self.model = 0
        self.done: list[str] = []
        self.exercised: set[str] = set()
        registry = registry or load_registry()
        self.titles = {req.id: req.title for req in registry.requirements}

    def close(self) -> None:
        """Nothing to release: the tally lives in memory. Behave closes every area's state."""

    def run(self, command: str) -> None:
        """Apply `increment` or `reset` to both sides and compare the values.

        Raises:
            Divergence: the backend's value differs from the oracle's.
        """
        self.done.append(command)
        getattr(self.tally, command)()
        self.model = getattr(oracle, f"after_{command}")(self.model)
        requirement = REQUIREMENT[command]
        self.exercised.add(requirement)
        actual = self.tally.value()
        if actual != self.model:
            raise Divergence((requirement,), f"the tally after {' '.join(self.done)}",
                             self.model, actual, [], self.titles)
