"""The one runner every Hypothesis machine shares: settings, seed, exploration, shrinking.

An area's machine module builds a `RuleBasedStateMachine` class bound to one backend and
profile (a `MachineFactory`) and calls `run_machine` with it. Every machine thus runs under
the same settings: no example database and the seed alone decide the sequences (so the
same seed gives the same report), one shrunk counterexample per run, and no explain phase.
A check that draws nothing runs on a runtime of its own through `run_on_a_runtime_of_its_own`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import hypothesis
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, get_state_machine_test

from jobconform.backends.protocol import Backend
from jobconform.conformance import tolerance
from jobconform.conformance.harness import Divergence
from jobconform.conformance.shrinking import machine_phases
from jobconform.spec import Profile, Registry

STEPS_PER_EXAMPLE = 40


@dataclass
class MachineRun:
    """What one machine run saw, across all its examples."""

    steps: int = 0
    exercised: set[str] = field(default_factory=set)
    divergence: Divergence | None = None
    # What the example that diverged drew for its harness (parameters, a start time), so
    # that its trace replays under the same setup (conformance/area_trace.py).
    setup: dict[str, Any] = field(default_factory=dict)
    # Listed deviations the harnesses recorded and went past (--expected-failures).
    deviations: list[tolerance.Deviation] = field(default_factory=list)


MachineFactory = Callable[[Backend, Profile, Registry | None, MachineRun],
                          type[RuleBasedStateMachine]]

CommandT_contra = TypeVar("CommandT_contra", contravariant=True)


class SideHarness(Protocol[CommandT_contra]):
    """What a check on a runtime of its own needs of an area's harness."""

    exercised: set[str]

    def run(self, command: CommandT_contra) -> object: ...

    def close(self) -> None: ...


def run_on_a_runtime_of_its_own(open_harness: Callable[[], SideHarness[CommandT_contra]],
                                commands: Iterable[CommandT_contra], run: MachineRun) -> None:
    """Run a fixed list of commands on a harness of their own, recording them in `run`.

    Some checks cannot be drawn: a drawn rule moves every other rule's draws (and with
    them the example in which a gallery entry is caught, and its primary), or the check
    needs threads or more clock than the drawn sequences reach. A machine runs such a
    check as each sequence opens, on a fresh runtime, drawing nothing from Hypothesis.

    The machine calls this first, before the sequence's own runtime opens: on a server
    database (PostgreSQL, MariaDB) every runtime of a backend shares the tables and
    opening one clears them. Opened after the check, the sequence's runtime clears what
    the check left behind; opened before, it would find the check's jobs or reminders as
    ids it never made (SQLite gives each runtime its own copy, which hides this).

    Each command counts as a step of `run`, and what the harness exercised is added to
    `run` whatever happens; the harness is closed in any case.

    Args:
        open_harness: opens the harness, on a fresh runtime of the backend.
        commands: the fixed commands, run in order.
        run: the machine run's record.

    Raises:
        Divergence: a command diverged; it is also recorded as `run.divergence`.
    """
    harness = open_harness()
    try:
        for command in commands:
            run.steps += 1
            harness.run(command)
    except Divergence as divergence:
        run.divergence = divergence
        raise
    finally:
        run.exercised |= harness.exercised
        harness.close()


def run_machine(factory: MachineFactory, backend: Backend, profile: Profile,
                registry: Registry | None, seed: int = 0, examples: int = 200,
                steps: int = STEPS_PER_EXAMPLE) -> MachineRun:
    """Run the machine `factory` builds; the same seed gives the same sequences and result.

    Args:
        factory: builds the machine class, bound to the backend, profile and run record.
        seed: the Hypothesis seed.
        examples: how many command sequences to try.
        steps: the most commands in one sequence.

    Returns:
        The run record; `divergence` holds the shrunk counterexample on failure.

    Raises:
        Divergence: the machine raised one without recording it (a machine bug).
    """
    run = MachineRun()
    machine = factory(backend, profile, registry, run)
    test_settings = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,  # no example database: a run depends on its seed alone
        print_blob=False,
        report_multiple_bugs=False,  # one shrunk counterexample per run is the verdict
        phases=machine_phases(),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    test: Callable[[], None] = get_state_machine_test(machine, settings=test_settings)
    hypothesis.seed(seed)(test)
    tolerance.take()
    try:
        test()
    except Divergence:
        if run.divergence is None:
            raise
    else:
        run.divergence = None
    finally:
        run.deviations = tolerance.take()
    return run
