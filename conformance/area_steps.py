"""What the Behave steps of every service area share.

A scenario's harness of an area is opened on first use (`ScenarioState.area_state`) and
closed after the scenario; `AreaScenario` keeps it with the answers the steps have seen.
A Then-step that finds the backend short of the scenario's expectation fails with
`expectation_failure`, in one layout: the requirement tags, what was read, the expected
and actual values, and the commands so far.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from jobconform.conformance.clock import EPOCH
from jobconform.conformance.scenario import state_of
from jobconform.reference.commands import describe
from jobconform.spec.areas import areas, load_attribute

CommandT_contra = TypeVar("CommandT_contra", contravariant=True)


class ScenarioHarness(Protocol[CommandT_contra]):
    def run(self, command: CommandT_contra) -> object: ...

    def close(self) -> None: ...


HarnessT = TypeVar("HarnessT", bound=ScenarioHarness[Any])


class AreaScenario(Generic[HarnessT]):
    """One scenario's harness of an area and what its steps have seen."""

    def __init__(self, harness: HarnessT) -> None:
        self.harness = harness
        self.answers: dict[str, object] = {}  # alias -> the answer to its creation
        self.last_answer: object = None

    def run(self, command: Any) -> object:
        self.last_answer = self.harness.run(command)
        return self.last_answer

    def close(self) -> None:
        self.harness.close()


class ComparingHarness(ScenarioHarness[CommandT_contra], Protocol):
    @property
    def commands(self) -> Sequence[Any]:
        """The commands run so far, in order."""
        ...


ComparingT = TypeVar("ComparingT", bound=ComparingHarness[Any])


class CheckingScenario(AreaScenario[ComparingT]):
    """An `AreaScenario` whose Then-steps check what the backend shows and fail, where it
    falls short, in the layout of `expectation_failure`.

    A subclass says what falls short (`SHOWS`, "the backend's reminders do not"), which
    of the scenario's tags name its requirements (`PREFIX`, "RM-") and what its steps call
    what they create (`NOUN`, "reminder"). Its harness keeps the runtime's ids by alias
    (`ids`) and the `runtime` whose `get(id)` reads one.
    """

    SHOWS: ClassVar[str]
    PREFIX: ClassVar[str]
    NOUN: ClassVar[str]

    def __init__(self, harness: ComparingT) -> None:
        super().__init__(harness)
        self.read: tuple[Any, Any] | None = None  # the record read last, as it read

    def created(self, alias: str) -> str:
        """The backend's id of what was created as `alias` (AssertionError if never)."""
        harness: Any = self.harness
        return created_id(harness.ids, self.answers, self.NOUN, alias)

    def view(self, context: Any, alias: str) -> Any:
        """What the backend holds of `alias`; the step fails where it holds nothing."""
        harness: Any = self.harness
        view = harness.runtime.get(self.created(alias))
        self.check(context, view is not None, f"{self.NOUN} {alias!r} should be held",
                   "a record", None)
        return view

    def keep_read(self, alias: str, freeze: Callable[[Any], object]) -> None:
        """Keep what the backend holds of `alias` now, and how it reads (None if nothing)."""
        harness: Any = self.harness
        view = harness.runtime.get(harness.ids.get(alias, f"unknown-{alias}"))
        self.read = None if view is None else (view, freeze(view))

    def check_read_unchanged(self, context: Any, freeze: Callable[[Any], object]) -> None:
        """The record kept by `keep_read` still reads as it did then."""
        read = self.read
        self.check(context, read is not None, f"the {self.NOUN} read", "a record", None)
        assert read is not None
        view, record = read
        self.check(context, freeze(view) == record, f"the {self.NOUN} read earlier", record,
                   freeze(view))

    def check(self, context: Any, ok: bool, what: str, expected: object,
              actual: object) -> None:
        """Raises AssertionError, naming `what` was read, where not `ok`."""
        if not ok:
            raise expectation_failure(context, self.SHOWS, self.PREFIX, self.harness.commands,
                                      what, expected, actual)

    def check_creation(self, context: Any, alias: str, wanted: object) -> None:
        """The answer kept for the creation of `alias` is `wanted`."""
        answer = self.answers.get(alias)
        self.check(context, answer == wanted, f"the creation of {alias!r}", wanted, answer)


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


def created_id(ids: dict[str, str], answers: dict[str, object], noun: str,
               alias: str) -> str:
    """The backend's id of the `noun` created as `alias`.

    Raises:
        AssertionError: it was never created; the message shows the creation's answer.
    """
    found = ids.get(alias)
    if found is None:
        raise AssertionError(f"{noun} {alias!r} was never created (creation answer:"
                             f" {answers.get(alias)!r})")
    return found


def expectation_failure(context: Any, shows: str, prefix: str, commands: Sequence[Any],
                        what: str, expected: object, actual: object,
                        describe_command: Callable[[Any], str] = describe) -> AssertionError:
    """The failure of a Then-step: `what` was read, `expected` against `actual`, after
    `commands`. `shows` says what fell short ("the backend's reminders do not"); `prefix`
    picks the scenario's requirement tags ("RM-")."""
    tags = sorted(str(tag) for tag in getattr(context.scenario, "effective_tags", ())
                  if str(tag).startswith(prefix))
    steps = "\n".join(f"    {i}. {describe_command(c)}" for i, c in enumerate(commands, 1))
    return AssertionError(
        f"{shows} meet the scenario's expectation\n"
        f"  requirement(s): {', '.join(tags)}\n  what: {what}\n"
        f"  expected: {expected!r}\n  actual:   {actual!r}\n"
        f"  commands so far:\n{steps or '    (none)'}")


def set_parameter(context: Any, area: str, noun: str, known: Sequence[str], name: str,
                  value: object) -> None:
    """A parameter of this scenario's `area`, before its first step of the area: kept in
    `context.<area>_overrides` for the area's harness to open with.

    Raises:
        ValueError: the area's harness is open already, or `name` is no parameter of it.
    """
    before_first_step(context, area, f"{noun} parameters", noun)
    if name not in known:
        raise ValueError(f"unknown {noun} parameter {name!r}; known: {', '.join(known)}")
    attribute = f"{noun}_overrides"
    setattr(context, attribute, {**getattr(context, attribute, {}), name: value})


def before_first_step(context: Any, area: str, what: str, noun: str) -> None:
    """Raises ValueError where the scenario has run a step of `area` already."""
    if area in state_of(context).areas:
        raise ValueError(f"set {what} before the scenario's first {noun} step")


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
