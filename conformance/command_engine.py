"""One engine for an area whose commands say how they apply: its harness and its machine.

Where each `Declaration` of an area's `Vocabulary` names the command class it applies
(`applies_to`), its call on the backend's service and on the oracle's model, the views it
may change and its requirements (conformance/vocabulary.py), the area writes no harness
and no Hypothesis machine: `derived_harness` applies any command to both sides, compares
their answers and then each view the command may change, and raises `Divergence` naming
the command's requirements at the first difference (after a listed deviation the model
adopts the views the service shows); `declared_machine` draws commands
from the declarations and runs them through that harness.

An area whose machine is still written by hand (its rules aim at edges its declarations do
not say) builds it on `AreaMachine`, which holds what every such machine repeated: the
harness its rules send commands through as steps of the run, fresh names for what they
create, closing the harness as an example ends, and the rules that let drawn time pass
(`time_rule`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, field, fields
from functools import partial
from typing import Any, ClassVar, Generic, TypeVar

from hypothesis import strategies
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from jobconform.backends.protocol import Backend
from jobconform.conformance.area_harness import AreaHarness, same_answer
from jobconform.conformance.machine_runner import (
    MachineRun,
    MachineRunner,
    SideHarness,
    machine_runner,
)
from jobconform.conformance.vocabulary import Declaration, View, Vocabulary
from jobconform.conformance.watchdog import guarded
from jobconform.reference.commands import Command, describe
from jobconform.spec import Profile, Registry


@dataclass(frozen=True)
class Engine:
    """What the derived harness needs beyond the commands.

    Args:
        model: the oracle's model, from the run's profile and the parameter overrides.
        opener_arguments: what the backend's `open_<area>` takes, from the harness (its
            clock, its settings); nothing by default.
        closes: whether the service has a `close()` the harness calls at the end.
        draws: for the machine, a Hypothesis strategy of each command class whose fields
            are not all defaulted (a class with none is drawn as `cls()`).
    """

    model: Callable[[Profile, dict[str, Any]], Any]
    opener_arguments: Callable[[DeclaredHarness], tuple[Any, ...]] = lambda harness: ()
    closes: bool = True
    draws: dict[type, strategies.SearchStrategy[Any]] = field(default_factory=dict)


@dataclass
class DeclaredHarness(AreaHarness[Any]):
    """Differential execution of a declared area's commands (see the module's docstring).
    `derived_harness` binds it to one area."""

    VOCABULARY: ClassVar[Vocabulary]
    ENGINE: ClassVar[Engine]

    overrides: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._require_area()
        opener = self._opener("")
        arguments = self.ENGINE.opener_arguments(self)
        self.service = self._open(lambda: opener(*arguments))
        self.model = self.ENGINE.model(self.profile, self.overrides)
        self.declared = {declaration.applies_to: declaration
                         for declaration in self.VOCABULARY.commands
                         if declaration.applies_to is not None}

    def _to_close(self) -> list[Any]:
        return [self.service] if self.ENGINE.closes else []

    def run(self, command: Any) -> object:
        """Apply `command` to the backend's service and to the oracle's model, compare
        their answers, then each view the command may change; the backend's answer.

        Raises:
            Divergence: the backend's answer or a view differs from the oracle's.
            AdapterError: the adapter raised outside its protocol or hung.
            ValueError: no declaration applies the command.
        """
        declaration = self.declared.get(type(command))
        if declaration is None or declaration.backend is None or declaration.oracle is None:
            raise ValueError(f"no declaration of the {self.AREA} area applies"
                             f" {type(command).__name__}")
        backend, oracle = declaration.backend, declaration.oracle
        self.commands.append(command)
        self.exercised.update(declaration.requirements)
        with guarded(self.safety_timeout, partial(describe, command), self.hang_scope):
            answer = self._call(declaration.keyword, lambda: backend(self.service, command))
            expected = oracle(self.model, command)
            self.listed.check(len(self.commands),
                              partial(self._compare, declaration,
                                      f"the answer to {describe(command)}", expected, answer),
                              partial(self._observe, declaration, command),
                              partial(self._adopt, declaration))
        return answer

    def run_oracle(self, command: Any) -> object:
        """Apply `command` to the oracle's model alone and return its answer (the cost
        floor, see machine_runner.oracle_alone)."""
        declaration = self.declared.get(type(command))
        if declaration is None or declaration.oracle is None:
            raise ValueError(f"no declaration of the {self.AREA} area applies"
                             f" {type(command).__name__}")
        return declaration.oracle(self.model, command)

    def _adopt(self, declaration: Declaration) -> None:
        """After a listed deviation the model takes what the service shows."""
        for view in declaration.changes:
            view.adopt(self.model, self._call(view.name, partial(view.backend, self.service)))

    def _observe(self, declaration: Declaration, command: Command) -> None:
        for view in declaration.changes:
            actual = self._call(view.name, partial(view.backend, self.service))
            self._compare(declaration, f"{view.name} after {describe(command)}",
                          view.oracle(self.model), actual)

    def _compare(self, declaration: Declaration, what: str, expected: object,
                 actual: object) -> None:
        if not same_answer(expected, actual):
            raise self._fail(declaration.requirements, what, expected, actual)


@functools.cache
def derived_harness(vocabulary: Vocabulary) -> type[DeclaredHarness]:
    """The harness class of `vocabulary`'s area (one per area, made once)."""
    if not isinstance(vocabulary.engine, Engine):
        raise TypeError(f"the {vocabulary.area} vocabulary declares no engine")
    return type(f"{vocabulary.noun.title()}Harness", (DeclaredHarness,),
                {"AREA": vocabulary.area, "VOCABULARY": vocabulary,
                 "ENGINE": vocabulary.engine})


def commands_drawn(vocabulary: Vocabulary) -> strategies.SearchStrategy[Any]:
    """Any command the area's declarations apply, as the engine's `draws` give it."""
    engine: Engine = vocabulary.engine
    drawn = []
    for declaration in vocabulary.commands:
        kind = declaration.applies_to
        if kind is None:
            continue
        if kind in engine.draws:
            drawn.append(engine.draws[kind])
        elif all(f.default is not MISSING or f.default_factory is not MISSING
                 for f in fields(kind)):
            drawn.append(strategies.just(kind()))
        else:
            raise ValueError(f"the {vocabulary.area} engine says no draws for {kind.__name__}")
    return strategies.one_of(drawn)


def declared_machine(vocabulary: Vocabulary, steps: int | None = None) -> MachineRunner:
    """The area's Hypothesis machine runner: commands drawn from its declarations (at most
    `steps` an example), each run through the derived harness; the same seed gives the
    same run, and a profile without the area runs nothing."""
    drawn = commands_drawn(vocabulary)

    def machine(backend: Backend, profile: Profile, registry: Registry | None,
                run: MachineRun) -> type[RuleBasedStateMachine]:
        class DeclaredMachine(RuleBasedStateMachine):
            @initialize()
            def open(self) -> None:
                self.harness = derived_harness(vocabulary)(backend, profile, registry)

            @rule(command=drawn)
            def apply(self, command: Any) -> None:
                run.step(self.harness, command)

            def teardown(self) -> None:
                harness = getattr(self, "harness", None)
                if harness is not None:
                    harness.close()

        return DeclaredMachine

    return machine_runner(machine, steps, vocabulary.area)


HarnessT = TypeVar("HarnessT", bound="SideHarness[Any] | None")


class AreaMachine(RuleBasedStateMachine, Generic[HarnessT]):
    """The frame of an area's hand-written Hypothesis machine.

    A subclass sets `harness` (in `__init__`, or None there and opened by an
    `@initialize` rule that draws its parameters) and writes its rules, which send
    commands with `_run`. Nothing here is a rule: the rules a subclass declares are all
    Hypothesis draws from, so a machine built on this base draws what it drew without it.
    """

    harness: HarnessT

    def __init__(self, run: MachineRun) -> None:
        super().__init__()
        self.machine_run = run
        self.counter = 0

    def _run(self, command: Any) -> object:
        """Send `command` through the harness as one step of the machine's run."""
        harness = self.harness
        assert harness is not None, "the harness opens before any rule sends a command"
        return self.machine_run.step(harness, command, self._drawn_setup)

    def _drawn_setup(self) -> dict[str, object]:
        """What the example drew for its harness (parameters an `@initialize` rule drew),
        for its trace's replay: nothing, unless the area's machine draws some."""
        return {}

    def _name(self, prefix: str) -> str:
        """A name no earlier creation of the example has: `prefix` and a running count."""
        self.counter += 1
        return f"{prefix}{self.counter}"

    def teardown(self) -> None:
        if self.harness is not None:
            self.harness.close()


def time_rule(name: str, steps: Sequence[float], command: Callable[[float], Any],
              when: Callable[[Any], bool] | None = None) -> Callable[..., None]:
    """The rule `name` of an `AreaMachine`: one of `steps` seconds, drawn, sent as
    `command(seconds)` (time passing, or a duration a command takes: a cleanup's age, a
    lease), in a state where `when(machine)` holds (any, if None). Hypothesis orders and
    labels rules by their function's name and the count of their arguments, so the rule
    is named as the method it replaces and draws what that did."""

    def passes(self: AreaMachine[Any], seconds: float) -> None:
        self._run(command(seconds))

    passes.__name__ = passes.__qualname__ = name
    drawn: Callable[..., None] = rule(seconds=strategies.sampled_from(steps))(passes)
    return drawn if when is None else precondition(when)(drawn)


__all__ = ["AreaMachine", "DeclaredHarness", "Engine", "View", "declared_machine",
           "derived_harness", "time_rule"]
