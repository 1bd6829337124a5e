"""The engine of declared areas (conformance/command_engine.py), on the third-party tally
area of tests/areas/: the harness and the machine derived from its declarations.

The tally's modules are imported here with the kit's registry already loaded, so that the
registry this process keeps for other tests stays the kit's own: the checks run on the
canonical profile with the tally added, and name no requirement titles.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jobconform.conformance.command_engine import derived_harness
from jobconform.conformance.harness import Divergence
from jobconform.spec import load_registry
from jobconform.spec.areas import areas

THIRD_PARTY = Path(__file__).parent / "areas"


CANONICAL = load_registry().profile("canonical")
PROFILE = replace(CANONICAL, areas=CANONICAL.areas | {"tally"})


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> Any:
    areas()  # the kit's areas, kept before the tally's entry point is on the path
    monkeypatch.syspath_prepend(str(THIRD_PARTY))
    import tally_area.backends
    import tally_area.commands

    return tally_area


def test_the_derived_harness_applies_each_command_to_both_sides(tally: Any) -> None:
    harness = derived_harness(tally.commands.VOCABULARY)(tally.backends.TallyBackend(),
                                                         PROFILE)
    for command in [*tally.commands.increment_tally(3), tally.commands.Reset()]:
        harness.run(command)
    assert harness.service.value() == harness.model.value == 0
    assert harness.exercised == {"TL-001", "TL-002"}


def test_a_view_the_command_changes_is_compared_and_blames_its_requirement(tally: Any) -> None:
    harness = derived_harness(tally.commands.VOCABULARY)(
        tally.backends.BrokenTallyBackend(), PROFILE)
    harness.run(tally.commands.Increment())
    with pytest.raises(Divergence, match=r"what: the tally's value after Reset\(\)") as caught:
        harness.run(tally.commands.Reset())
    assert caught.value.primary == "TL-002"
    assert (caught.value.expected, caught.value.actual) == (0, 1)


def test_a_command_no_declaration_applies_is_refused(tally: Any) -> None:
    harness = derived_harness(tally.commands.VOCABULARY)(tally.backends.TallyBackend(),
                                                         PROFILE)
    with pytest.raises(ValueError, match="no declaration of the tally area applies str"):
        harness.run("increment")


def test_the_derived_machine_catches_the_broken_tally(tally: Any) -> None:
    run = tally.commands.run_tally_machine(tally.backends.BrokenTallyBackend(), PROFILE,
                                           None, seed=0, examples=20)
    assert run.divergence is not None and run.divergence.primary == "TL-002"
    run = tally.commands.run_tally_machine(tally.backends.TallyBackend(), PROFILE, None,
                                           seed=0, examples=20)
    assert run.divergence is None and run.exercised == {"TL-001", "TL-002"}


def test_the_kits_registry_stays_its_own(tally: Any) -> None:
    assert "tally" not in {area.name for area in areas()}
    assert not any(r.id.startswith("TL-") for r in load_registry().requirements)



def test_a_time_rule_draws_what_the_rule_it_replaces_drew() -> None:
    """Hypothesis orders and labels rules by their function's name: a `time_rule` named
    as the hand-written rule it stands for draws the same sequences, so a machine moved
    onto it explores what it explored before; with a precondition (`when`) too."""
    from hypothesis import settings
    from hypothesis import strategies as st
    from hypothesis.stateful import get_state_machine_test, precondition, rule

    from jobconform.conformance.command_engine import AreaMachine, time_rule
    from jobconform.conformance.machine_runner import MachineRun
    from jobconform.reference.commands import AdvanceTime, Cleanup

    steps = (0.0, 1.0, 60.0, 3600.0)

    class Base(AreaMachine[None]):
        def __init__(self) -> None:
            super().__init__(MachineRun())
            self.harness = None
            self.cleaned = False

        @rule(age=st.sampled_from((0.0, 5.0)))
        def cleanup(self, age: float) -> None:
            self.cleaned = True
            self._run(Cleanup(age))

    class HandWritten(Base):
        @rule(seconds=st.sampled_from(steps))
        def advance_time(self, seconds: float) -> None:
            self._run(AdvanceTime(seconds))

    class Derived(Base):
        advance_time = time_rule("advance_time", steps, AdvanceTime)

    class HandWrittenAfterCleanup(Base):
        @precondition(lambda self: self.cleaned)
        @rule(seconds=st.sampled_from(steps))
        def advance_time(self, seconds: float) -> None:
            self._run(AdvanceTime(seconds))

    class DerivedAfterCleanup(Base):
        advance_time = time_rule("advance_time", steps, AdvanceTime,
                                 when=lambda self: self.cleaned)

    def drawn(machine: type[Base]) -> list[object]:
        sent: list[object] = []

        class Recording(machine):  # type: ignore[valid-type,misc]
            def _run(self, command: object) -> object:
                sent.append(command)
                return None

        get_state_machine_test(Recording, settings=settings(
            max_examples=20, stateful_step_count=10, derandomize=True, database=None,
            deadline=None))()
        return sent

    by_hand = drawn(HandWritten)
    assert any(isinstance(command, AdvanceTime) for command in by_hand)
    assert drawn(Derived) == by_hand
    after_cleanup = drawn(HandWrittenAfterCleanup)
    assert after_cleanup != by_hand
    assert any(isinstance(command, AdvanceTime) for command in after_cleanup)
    assert drawn(DerivedAfterCleanup) == after_cleanup
