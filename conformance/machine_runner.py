"""The one runner every Hypothesis machine shares: settings, seed, exploration, shrinking.

An area's machine module builds a `RuleBasedStateMachine` class bound to one backend and
profile (a `MachineFactory`) and calls `run_machine` with it. Every machine thus runs under
the same settings: no example database and the seed alone decide the sequences (so the
same seed gives the same report), one shrunk counterexample per run, and no explain phase.
A check that draws nothing runs on a runtime of its own through `run_on_a_runtime_of_its_own`.

Real time never changes what a machine explores: no deadline, no `too_slow` health check,
one bug reported (Hypothesis's ten-second search for more is never entered) and no
time limit on shrinking (conformance/exploration.py). A machine's budget is counted in
examples and steps, never in seconds, so a slow backend explores what a fast one does.

A backend that answers the same commands differently (a race in its adapter) makes
Hypothesis's replay of a failing example behave otherwise; Hypothesis calls that `Flaky`.
It is the backend's verdict, not a requirement's: the run records both behaviours, the
failing run and the replay, as `MachineRun.nondeterminism`. After a listed deviation the
oracle adopts the backend's state, so the rules' preconditions follow the backend: a race
there makes the same choices draw other rules in a later example, which Hypothesis calls
`FlakyStrategyDefinition` ("inconsistent data generation") with no failure to replay. The
two runs shown are then that later example and the earlier one that made the same choices
furthest (`_ExamplesSeen`).

A hang is the adapter's verdict in the same way, and it comes first: once a call hung
(conformance/watchdog.py), every later call of its scope is not tried, so each replay stops
at once, where the first run got further; Hypothesis may call that `Flaky` too, or carry
the error of a replay. The run records the example in which the adapter first hung
(`HungExample`: opening its runtime, in a command, or closing it, with the commands it ran
first as the reproducer) and raises `MachineHung`, whatever Hypothesis made of it.

Under `oracle_alone()` a machine runs with its backend side replaced by nothing: each drawn
command goes to the harness's oracle alone (`run_oracle`: no backend call, no comparison),
and the checks once per run are skipped. The cost of such a run is the floor a machine's
checks are measured against (benchmarks/bench_floor.py); it proves nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol, TypeVar

import hypothesis
from hypothesis import HealthCheck, settings
from hypothesis.control import current_build_context
from hypothesis.errors import Flaky, FlakyStrategyDefinition
from hypothesis.stateful import RuleBasedStateMachine, get_state_machine_test

from jobconform.backends.protocol import Backend
from jobconform.conformance import tolerance
from jobconform.conformance.defaults import RUN_EXAMPLES
from jobconform.conformance.exploration import seed_alone
from jobconform.conformance.harness import Divergence
from jobconform.conformance.shrinking import machine_phases
from jobconform.conformance.watchdog import AdapterHung, hangs
from jobconform.spec import Profile, Registry

STEPS_PER_EXAMPLE = 40
# Set by `oracle_alone()`: machines run then apply their commands to the oracle alone.
_ORACLE_ALONE: ContextVar[bool] = ContextVar("oracle_alone", default=False)


@contextmanager
def oracle_alone() -> Iterator[None]:
    """Run the machines started inside with their backend side replaced by nothing: the
    same draws (same seed, same examples) applied to each harness's oracle alone, the
    cost floor of Hypothesis, the rules and the oracle. Such a run checks nothing."""
    token = _ORACLE_ALONE.set(True)
    try:
        yield
    finally:
        _ORACLE_ALONE.reset(token)


@dataclass(frozen=True)
class Behaviour:
    """What one example of a machine did: the commands it ran on its latest runtime, and
    its divergence (None: every command's observations passed)."""

    commands: tuple[Any, ...]
    divergence: Divergence | None
    # What the example raised that is not a divergence (an adapter error, a crash in the
    # runtime's own threads), as "Type: first line"; its commands may be none, when it
    # raised before its first command (opening the runtime).
    raised: str | None = None


@dataclass(frozen=True)
class Nondeterminism:
    """The same drawn example, two behaviours of the backend: the verdict is the
    backend's ("nondeterministic backend"), not a requirement's."""

    first: Behaviour  # the run that failed first
    replay: Behaviour  # Hypothesis's replay of it, which behaved differently
    hypothesis_says: str  # the `Flaky` error's type and first line


@dataclass(frozen=True)
class HungExample:
    """The example in which the adapter first hung (opening its runtime, in a command, or
    closing it): the commands it ran on that runtime first, the hang's reproducer, and the
    requirements they checked; `message` is the hang's, stacks and all."""

    commands: tuple[Any, ...]
    requirements: tuple[str, ...]
    message: str


class MachineHung(AdapterHung):
    """The adapter hung in an example of a machine run: `run.hung` says which (a verdict of
    its own, "adapter hung", that neither a divergence nor a replay that behaved otherwise
    may stand for: every replay after a hang stops at once, on a call not tried)."""

    def __init__(self, run: MachineRun, hung: HungExample) -> None:
        super().__init__(hung.message)
        self.run, self.hung = run, hung


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
    # Set when a replay of an example behaved differently from its first run.
    nondeterminism: Nondeterminism | None = None
    # The example running last: the divergence recorded before it started, and the
    # commands it ran (read as it ends), to tell its behaviour apart from the one before.
    divergence_before_latest: Divergence | None = None
    latest_commands: tuple[Any, ...] = ()
    # Commands go to the harness's oracle alone (see oracle_alone): a cost floor, no check.
    oracle_only: bool = field(default_factory=_ORACLE_ALONE.get)
    # The hangs recorded in this process before the run began (watchdog.hangs), and the
    # example in which the run's first hang happened.
    hangs_before: int = 0
    hung: HungExample | None = None

    def note_hang(self, harness: object) -> None:
        """Keep the example that used `harness` (None: it hung opening it) as `hung`, if
        the run's first hang happened in it."""
        first = hangs()[self.hangs_before:]
        if self.hung is None and first:
            self.hung = HungExample(tuple(getattr(harness, "commands", ())),
                                    tuple(sorted(getattr(harness, "exercised", ()))), first[0])

    def step(self, harness: SideHarness[CommandT_contra], command: CommandT_contra,
             setup: Callable[[], dict[str, Any]] | None = None) -> object:
        """Run one drawn command through a machine's `harness` and return its answer.

        The step is counted, a divergence is kept (the last one is the shrunk one) with
        what `setup` says the example drew for its harness, and what the harness
        exercised is added whatever happens.

        Raises:
            Divergence: the command diverged.
        """
        self.steps += 1
        if self.oracle_only:
            return harness.run_oracle(command)
        try:
            return harness.run(command)
        except Divergence as divergence:
            self.divergence = divergence
            if setup is not None:
                self.setup = setup()
            raise
        finally:
            self.exercised |= harness.exercised

    def latest_behaviour(self) -> Behaviour:
        """What the latest example did: its divergence if it raised one, else its commands."""
        if self.divergence is not None and self.divergence is not self.divergence_before_latest:
            return Behaviour(tuple(self.divergence.commands), self.divergence)
        return Behaviour(self.latest_commands, None)


MachineFactory = Callable[[Backend, Profile, Registry | None, MachineRun],
                          type[RuleBasedStateMachine]]


class MachineRunner(Protocol):
    """An area's `run_<area>_machine`, as spec/areas.py names it: run the machine; the same
    seed gives the same sequences and the same result."""

    def __call__(self, backend: Backend, profile: Profile, registry: Registry | None,
                 seed: int = 0, examples: int = RUN_EXAMPLES) -> MachineRun: ...


OnceChecks = Callable[[Backend, Profile, Registry | None, MachineRun], None]


def machine_runner(factory: MachineFactory, steps: int | None = None,
                   area: str | None = None, once: OnceChecks | None = None) -> MachineRunner:
    """The runner of the machine `factory` builds, with at most `steps` commands an example
    (run_machine's default if None) and the checks `once` runs before the first sequence
    (run_machine's `once`, given the backend, profile and registry); a profile without
    `area`, where one is named, runs nothing (the report says n/a)."""

    def run(backend: Backend, profile: Profile, registry: Registry | None, seed: int = 0,
            examples: int = RUN_EXAMPLES) -> MachineRun:
        if area is not None and area not in profile.areas:
            return MachineRun()
        return run_machine(factory, backend, profile, registry, seed=seed, examples=examples,
                           steps=STEPS_PER_EXAMPLE if steps is None else steps,
                           once=None if once is None else partial(once, backend, profile,
                                                                  registry))

    return run

CommandT_contra = TypeVar("CommandT_contra", contravariant=True)


class SideHarness(Protocol[CommandT_contra]):
    """What a check on a runtime of its own needs of an area's harness."""

    exercised: set[str]

    def run(self, command: CommandT_contra) -> object: ...

    def run_oracle(self, command: CommandT_contra) -> object:
        """Apply `command` to the oracle alone, as `run` would, and return the oracle's
        answer: no backend call, no comparison (the cost floor, see oracle_alone)."""
        ...

    def close(self) -> None: ...


def run_on_a_runtime_of_its_own(open_harness: Callable[[], SideHarness[CommandT_contra]],
                                commands: Iterable[CommandT_contra], run: MachineRun) -> None:
    """Run a fixed list of commands on a harness of their own, recording them in `run`.

    Some checks cannot be drawn: a drawn rule moves every other rule's draws (and with
    them the example in which a gallery entry is caught, and its primary), or the check
    needs threads or more clock than the drawn sequences reach. A machine runs such a
    check on a fresh runtime, drawing nothing from Hypothesis: once per machine run
    (run_machine's `once`), or as each sequence opens where the check must meet what a
    sequence's runtime does.

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
            run.step(harness, command)
    finally:
        harness.close()


def run_machine(factory: MachineFactory, backend: Backend, profile: Profile,
                registry: Registry | None, seed: int = 0, examples: int = RUN_EXAMPLES,
                steps: int = STEPS_PER_EXAMPLE,
                once: Callable[[MachineRun], None] | None = None) -> MachineRun:
    """Run the machine `factory` builds; the same seed gives the same sequences and result.

    Args:
        factory: builds the machine class, bound to the backend, profile and run record.
        seed: the Hypothesis seed.
        examples: how many command sequences to try.
        steps: the most commands in one sequence.
        once: checks that draw nothing, run once before the first sequence, each on a
            runtime of its own (see run_on_a_runtime_of_its_own); a divergence there is
            the run's, and no sequence runs after it.

    Returns:
        The run record; `divergence` holds the shrunk counterexample on failure.

    Raises:
        Divergence: the machine raised one without recording it (a machine bug).
    """
    run = MachineRun(hangs_before=len(hangs()))
    if once is not None and not run.oracle_only:  # the checks once are the backend's
        try:
            once(run)
        except Divergence:
            if run.divergence is None:
                raise
            return run
    seen = _ExamplesSeen()
    machine = _recording(factory(backend, profile, registry, run), run, seen)
    test_settings = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,  # no example fails for taking long
        database=None,  # no example database: a run depends on its seed alone
        print_blob=False,
        # One shrunk counterexample per run is the verdict; reporting several would keep
        # searching for up to ten seconds of wall time after the first.
        report_multiple_bugs=False,
        phases=machine_phases(),
        # too_slow is the one health check that reads the wall clock.
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    test: Callable[[], None] = get_state_machine_test(machine, settings=test_settings)
    hypothesis.seed(seed)(test)
    tolerance.take()
    try:
        with seed_alone():
            test()
    except Divergence:
        if run.hung is not None:  # a replay while shrinking hung: a verdict of its own
            raise MachineHung(run, run.hung) from None
        if run.divergence is None:
            raise
    except (Flaky, AdapterHung) as error:
        # Once the adapter hung, every replay stops at once on a call not tried (see
        # watchdog), which Hypothesis may read as an example that behaves differently:
        # the verdict is the hang, not the backend's nondeterminism.
        if run.hung is not None:
            raise MachineHung(run, run.hung) from None
        if new_hangs := hangs()[run.hangs_before:]:
            raise AdapterHung(new_hangs[0]) from None
        if not isinstance(error, Flaky):
            raise
        flaky = error
        earlier = (seen.nearest_to_latest() if isinstance(flaky, FlakyStrategyDefinition)
                   else None)
        run.nondeterminism = Nondeterminism(
            earlier if earlier is not None else _first_behaviour(flaky, run),
            run.latest_behaviour(), _first_line(flaky))
        run.divergence = None  # no counterexample: the backend's answers do not repeat
    else:
        run.divergence = None
    finally:
        run.deviations = tolerance.take()
    return run


class _ExamplesSeen:
    """Every example of a machine run that ended, by the choices Hypothesis made for it.

    When the latest example drew differently after the same choices as an earlier one
    (`FlakyStrategyDefinition`), the earlier one that shares the longest run of choices
    with it is the first run of the two; every example that passed the point where they
    part drew the same there, so any of them would do, and the longest is the closest.
    All examples are kept, not the last few: the one that first went past that point may
    be any of them, and a run's examples number hundreds, each a few hundred choices.
    """

    def __init__(self) -> None:
        self.started = 0  # the number of the latest example
        self.ended: list[tuple[int, tuple[object, ...], Behaviour]] = []

    def start(self) -> None:
        self.started += 1

    def end(self, behaviour: Behaviour) -> None:
        # Hypothesis's own record of the example (ConjectureData): its choices so far,
        # which in the example it stopped are those up to the draw that went otherwise.
        choices = tuple(current_build_context().data.choices)
        self.ended.append((self.started, choices, behaviour))

    def nearest_to_latest(self) -> Behaviour | None:
        """The earlier example that made the same choices as the latest furthest; None
        when the latest did not end (it has no choices to match) or is the only one."""
        if not self.ended or self.ended[-1][0] != self.started:
            return None
        *earlier, (_, latest, _) = self.ended
        best: Behaviour | None = None
        best_shared = -1
        for _, choices, behaviour in earlier:
            shared = shared_prefix(choices, latest)
            if shared > best_shared:
                best, best_shared = behaviour, shared
        return best


def shared_prefix(one: Sequence[object], other: Sequence[object]) -> int:
    """How many leading items `one` and `other` have in common."""
    for shared, (a, b) in enumerate(zip(one, other, strict=False)):
        if a != b:
            return shared
    return min(len(one), len(other))


def _recording(machine: type[RuleBasedStateMachine], run: MachineRun,
               seen: _ExamplesSeen) -> type[RuleBasedStateMachine]:
    """The machine, recording in `run` what each example did, so that a replay that
    behaves differently can be shown beside the run before it, and in `seen` what every
    example did, for an example that drew differently after the same choices."""

    class Recorded(machine):  # type: ignore[valid-type,misc]
        def __init__(self) -> None:
            run.divergence_before_latest = run.divergence
            run.latest_commands = ()
            seen.start()
            try:
                super().__init__()
            except AdapterHung:  # opening its runtime
                run.note_hang(None)
                raise

        def teardown(self) -> None:
            harness = getattr(self, "harness", None)
            run.latest_commands = tuple(getattr(harness, "commands", ()))
            seen.end(run.latest_behaviour())
            try:
                super().teardown()
            finally:  # Hypothesis tears down after a rule raised too: a hang in any call
                run.note_hang(harness)

    Recorded.__name__ = Recorded.__qualname__ = machine.__name__
    return Recorded


def _first_behaviour(flaky: Flaky, run: MachineRun) -> Behaviour:
    """The failing run a `Flaky` error is about: Hypothesis keeps its exception (an
    inconsistent replay keeps none: the divergence recorded before the replay began)."""
    pending: list[BaseException] = [flaky]
    raised: BaseException | None = None
    while pending:
        error = pending.pop()
        if isinstance(error, Divergence):
            return Behaviour(tuple(error.commands), error)
        nested = getattr(error, "exceptions", ())
        if not nested and error is not flaky and raised is None:
            raised = error
        pending += nested
    before = run.divergence_before_latest
    if before is None and raised is not None:
        return Behaviour((), None, _first_line(raised))
    return Behaviour(tuple(before.commands) if before else (), before)


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0] if text else ''}"
