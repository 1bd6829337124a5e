"""The tally's Hypothesis machine: random increments and resets through the harness."""

from __future__ import annotations

from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from jobconform.backends.protocol import Backend
from jobconform.conformance.defaults import RUN_EXAMPLES
from jobconform.conformance.harness import Divergence
from jobconform.conformance.machine_runner import MachineRun, run_machine
from jobconform.spec import Profile, Registry
from tally_area.harness import TallyHarness


def make_tally_machine(backend: Backend, profile: Profile, registry: Registry | None,
                       run: MachineRun) -> type[RuleBasedStateMachine]:
    del profile

    class TallyMachine(RuleBasedStateMachine):
        @initialize()
        def open(self) -> None:
            self.harness = TallyHarness(backend, registry)

        def apply(self, command: str) -> None:
            run.steps += 1
            try:
                self.harness.run(command)
            except Divergence as divergence:
                run.divergence = divergence
                raise
            finally:
                run.exercised |= self.harness.exercised

        @rule()
        def increment(self) -> None:
            self.apply("increment")

        @rule()
        def reset(self) -> None:
            self.apply("reset")

    return TallyMachine


def run_tally_machine(backend: Backend, profile: Profile, registry: Registry | None,
                      seed: int = 0, examples: int = RUN_EXAMPLES) -> MachineRun:
    return run_machine(make_tally_machine, backend, profile, registry, seed=seed,
                       examples=min(examples, 20), steps=10)
