"""What the Behave steps of every service area share.

A scenario's harness of an area is opened on first use (`ScenarioState.area_state`), with
the parameters the scenario fixed before it (`ConfiguredScenario`), and closed after the
scenario. The step loader registers every area's steps, imported or derived from its
vocabulary (`load_step_libraries`).
"""

from __future__ import annotations

import importlib
from datetime import datetime, timedelta
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from jobconform.conformance.clock import EPOCH
from jobconform.spec.areas import areas, load_attribute

CommandT_contra = TypeVar("CommandT_contra", contravariant=True)


class ScenarioHarness(Protocol[CommandT_contra]):
    def run(self, command: CommandT_contra) -> object: ...

    def close(self) -> None: ...


HarnessT = TypeVar("HarnessT", bound=ScenarioHarness[Any])


class ConfiguredScenario(Generic[HarnessT]):
    """One scenario's harness of an area whose parameters the scenario may fix before its
    first command ("a breaker tripping after 3 failures ..."): opened on first use with
    them, the rest from the profile; closed after the scenario where it was opened."""

    NOUN: ClassVar[str]  # what the area's steps call it ("breaker")

    def __init__(self, config: Any) -> None:
        self.config = config  # the run's RunConfig (conformance/scenario.py)
        self.overrides: dict[str, object] = {}
        self.answers: dict[str, object] = {}  # name -> the answer kept under it
        self._harness: HarnessT | None = None

    def open(self) -> HarnessT:
        """The area's harness on the run's backend, with `overrides` applied."""
        raise NotImplementedError

    @property
    def harness(self) -> HarnessT:
        if self._harness is None:
            self._harness = self.open()
        return self._harness

    def configure(self, **overrides: object) -> None:
        if self._harness is not None:
            raise RuntimeError(f"{self.NOUN} parameters are fixed before the first"
                               f" {self.NOUN} step")
        self.overrides.update(overrides)

    def run(self, command: Any) -> object:
        return self.harness.run(command)

    def close(self) -> None:
        if self._harness is not None:
            self._harness.close()


def at(seconds: float) -> datetime:
    """The instant `seconds` after the virtual clock's start."""
    return EPOCH + timedelta(seconds=seconds)


def alias_list(text: str) -> list[str]:
    """`a, b, c` as a list of aliases, blanks dropped."""
    return [alias.strip() for alias in text.split(",") if alias.strip()]


def load_step_libraries() -> None:
    """Import every area's Behave step library (importing one defines its steps), or
    register the steps derived from its vocabulary, in the order of the areas' names:
    when two steps' patterns both match a line, Behave takes the one registered first.
    features/steps/areas.py runs this when Behave starts, and the runner before Behave
    runs in process (see runner._behave_here)."""
    # Imported here: the vocabulary builds on this module's scenarios.
    from jobconform.conformance.vocabulary import register_steps

    for area in sorted(areas(), key=lambda area: area.name):
        if area.steps is not None:
            importlib.import_module(area.steps)
        if area.vocabulary is not None:
            register_steps(load_attribute(area.vocabulary))
