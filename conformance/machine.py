"""The Hypothesis front-end: random command sequences, backend against oracle at every step.

The harness does the comparing; this machine only generates commands. Small limits
(two slots, a cap of six records) and a few time steps and ages make the interesting
edges (a full cap, the exact cleanup boundary, a cancel racing a finish) likely.
When a sequence diverges, Hypothesis shrinks it and the last `Divergence` holds the
minimal command list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import hypothesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    get_state_machine_test,
    precondition,
    rule,
)

from jobconform.backends.protocol import Backend
from jobconform.conformance.harness import Divergence, Harness
from jobconform.reference import commands as cmd
from jobconform.reference.lifecycle import Status
from jobconform.spec import Profile, Registry

MACHINE_SLOTS = 2
MACHINE_TASK_CAP = 4
TIME_STEPS = (0.0, 1.0, 5.0, 30.0, 60.0)
CLEANUP_AGES = (0.0, 5.0, 30.0, 60.0)
SHUTDOWN_AFTER_STEPS = 15
ERROR_TYPES = ("ValueError", "TimeoutError", "PlanError")

outcomes = st.one_of(
    st.builds(cmd.Succeed, st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["ok", ""]))),
    st.builds(cmd.Raise, st.sampled_from(ERROR_TYPES), st.sampled_from(["boom", "", "a: b"])),
)


@dataclass
class MachineRun:
    """What one machine run saw, across all its examples."""

    steps: int = 0
    exercised: set[str] = field(default_factory=set)
    divergence: Divergence | None = None


def make_machine(backend: Backend, profile: Profile, registry: Registry | None,
                 run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend and profile."""

    class LifecycleMachine(RuleBasedStateMachine):
        jobs = Bundle("jobs")

        def __init__(self) -> None:
            super().__init__()
            self.harness = Harness(backend, profile, registry, max_concurrent=MACHINE_SLOTS,
                                   max_tasks=MACHINE_TASK_CAP)
            self.counter = 0

        def _run(self, command: cmd.Command) -> object:
            run.steps += 1
            try:
                return self.harness.run(command)
            except Divergence as divergence:
                run.divergence = divergence  # the last one is the shrunk one
                raise
            finally:
                run.exercised |= self.harness.exercised

        @rule(target=jobs, ignores_cancel=st.booleans())
        def submit(self, ignores_cancel: bool) -> str:
            self.counter += 1
            alias = f"j{self.counter}"
            self._run(cmd.Submit(alias, ignores_cancel))
            return alias

        @rule()
        def dispatch(self) -> None:
            self._run(cmd.Dispatch())

        @rule(job=jobs, outcome=outcomes)
        def finish(self, job: str, outcome: cmd.Outcome) -> None:
            self._run(cmd.Finish(job, outcome))

        @rule(job=jobs)
        def cancel(self, job: str) -> None:
            self._run(cmd.Cancel(job))

        @rule(seconds=st.sampled_from(TIME_STEPS))
        def advance_time(self, seconds: float) -> None:
            self._run(cmd.AdvanceTime(seconds))

        @rule(max_age=st.sampled_from(CLEANUP_AGES))
        def cleanup(self, max_age: float) -> None:
            self._run(cmd.Cleanup(max_age))

        # Shutdown ends every job, so everything after it is dull; Hypothesis also favours
        # argument-free rules. Allow it only once a history has built up.
        @precondition(lambda self: len(self.harness.commands) >= SHUTDOWN_AFTER_STEPS)
        @rule()
        def shutdown(self) -> None:
            self._run(cmd.Shutdown())

        @rule(job=jobs)
        def get(self, job: str) -> None:
            self._run(cmd.Get(job))

        @rule(job=jobs)
        def get_result(self, job: str) -> None:
            self._run(cmd.GetResult(job))

        @rule(status=st.one_of(st.none(), st.sampled_from([s.value for s in Status])))
        def list_jobs(self, status: str | None) -> None:
            self._run(cmd.ListJobs(status))

        def teardown(self) -> None:
            self.harness.close()

    return LifecycleMachine


def run_machine(backend: Backend, profile: Profile, registry: Registry | None,
                seed: int = 0, examples: int = 200, steps: int = 40) -> MachineRun:
    """Run the machine; the same seed gives the same sequences and the same result.

    Returns:
        The run record; `divergence` is set (to the shrunk counterexample) on failure.
    """
    run = MachineRun()
    machine = make_machine(backend, profile, registry, run)
    test_settings = settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=None,  # no example database: a run depends on its seed alone
        derandomize=False,
        print_blob=False,
        report_multiple_bugs=False,  # one shrunk counterexample per run is the verdict
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    test: Callable[[], None] = get_state_machine_test(machine, settings=test_settings)
    hypothesis.seed(seed)(test)
    try:
        test()
    except Divergence:
        if run.divergence is None:
            raise
    else:
        run.divergence = None
    return run
