"""The lifecycle's second Hypothesis machine: jobs with drawn arguments (LC-036), on
runtimes with queued execution on and, every other sequence, off (LC-037).

It runs after the lifecycle machine (`machine.run_lifecycle_machine`), on the same
backend, profile and seed, where the backend claims `job-arguments` or
`queued-execution-switch`. A machine of its own, not more rules in the lifecycle
machine: the lifecycle machine's draws stay as they were, and so does what it finds at
each seed (its module says how tuned those are). Every command goes through the same
harness, which compares each record's arguments, and what each body received, with the
submitted ones after every step, besides everything else it compares.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from jobconform.backends.protocol import JOB_ARGUMENTS, QUEUED_EXECUTION_SWITCH, Backend
from jobconform.conformance.command_engine import time_rule
from jobconform.conformance.harness import Divergence, Harness
from jobconform.conformance.job_draws import (
    MACHINE_SLOTS,
    MACHINE_TASK_CAP,
    job_arguments,
    outcomes,
)
from jobconform.conformance.job_machine import RenewedJobMachine, jobs
from jobconform.conformance.machine_runner import MachineRun, run_on_a_runtime_of_its_own
from jobconform.reference import commands as cmd
from jobconform.reference.lifecycle import JsonValue
from jobconform.spec import Profile, Registry

TIME_STEPS = (0.0, 1.0, 30.0)
CLEANUP_AGES = (0.0, 30.0)
# One draw in this many of the shutdown rule shuts down (as the lifecycle machine's).
SHUTDOWN_ODDS = 9
# Arguments a store or a wire gets wrong most often: the 64-bit bounds, an integer past a
# float's 53 bits, a float apart from an integer, a character beyond the BMP and a
# combining mark.
EDGE_ARGUMENTS: JsonValue = {"ints": [2**63 - 1, -(2**63), 2**53 + 1], "float": 2.0,
                             "text": "\U0001d11e e\u0301"}


def claims_any(backend: Backend) -> bool:
    """Whether this machine has anything to check on `backend`."""
    return bool({JOB_ARGUMENTS, QUEUED_EXECUTION_SWITCH} & set(backend.capabilities))


def make_arguments_machine(backend: Backend, profile: Profile, registry: Registry | None,
                           run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend and profile."""
    claims_arguments = JOB_ARGUMENTS in backend.capabilities
    switches = QUEUED_EXECUTION_SWITCH in backend.capabilities
    arguments_drawn = job_arguments if claims_arguments else st.none()
    modes = st.booleans() if switches else st.just(True)

    class ArgumentsMachine(RenewedJobMachine[Harness | None]):
        def __init__(self) -> None:
            super().__init__(run)
            # First, before the sequence's own runtime opens (run_on_a_runtime_of_its_own
            # says why).
            self._queued_execution_off_on_a_runtime_of_its_own()
            self.queued_execution = True
            self.harness = None

        # A few drawn examples may all keep queued execution on (a short run, a server
        # database's 30 examples): so each sequence opens with a fixed check of the
        # switch off, on a runtime of its own, drawing nothing. A body that succeeds and
        # one that fails, each ended by its submit; a cancel of an ended job; cleanup.
        def _queued_execution_off_on_a_runtime_of_its_own(self) -> None:
            if not switches:
                return
            arguments = EDGE_ARGUMENTS if claims_arguments else None
            commands: tuple[cmd.Command, ...] = (
                cmd.Submit("s1", arguments=arguments, outcome=cmd.Succeed(arguments)),
                cmd.Submit("s2", outcome=cmd.Raise("ValueError", "boom")),
                cmd.Cancel("s1"), cmd.Cleanup(0.0))
            try:
                run_on_a_runtime_of_its_own(lambda: Harness(
                    backend, profile, registry, max_concurrent=MACHINE_SLOTS,
                    max_tasks=MACHINE_TASK_CAP, queued_execution=False), commands, run)
            except Divergence:
                run.setup = {"queued_execution": False}  # its trace replays so
                raise

        # Drawn, where the backend has the switch: a sequence keeps its runtime's mode, as
        # a deployment keeps its configuration.
        @initialize(queued_execution=modes)
        def open_runtime(self, queued_execution: bool) -> None:
            self.queued_execution = queued_execution
            self.harness = self.open_harness()

        def open_harness(self) -> Harness:
            return Harness(backend, profile, registry, max_concurrent=MACHINE_SLOTS,
                           max_tasks=MACHINE_TASK_CAP, queued_execution=self.queued_execution)

        def _drawn_setup(self) -> dict[str, Any]:
            """What a trace of this sequence must replay under (conformance/trace.py)."""
            return {} if self.queued_execution else {"queued_execution": False}

        # With queued execution off the body runs inside submit, so it is decided in the
        # submission; with it on, a drawn decision makes a body that ends as it starts.
        @rule(target=jobs, arguments=arguments_drawn, outcome=outcomes,
              decided=st.booleans())
        def submit(self, arguments: JsonValue, outcome: cmd.Outcome, decided: bool) -> str:
            alias = self._name("j")
            self._run(cmd.Submit(alias, arguments=arguments,
                                 outcome=outcome if decided or not self.queued_execution
                                 else None))
            return alias

        @rule(job=jobs, outcome=outcomes)
        def finish(self, job: str, outcome: cmd.Outcome) -> None:
            self._run(cmd.Finish(job, outcome))

        advance_time = time_rule("advance_time", TIME_STEPS, cmd.AdvanceTime)

        cleanup = time_rule("cleanup", CLEANUP_AGES, cmd.Cleanup)

        @rule(data=st.data())
        def shutdown(self, data: st.DataObject) -> None:
            if data.draw(st.integers(0, SHUTDOWN_ODDS - 1)):
                return
            self._run(cmd.Shutdown())

    return ArgumentsMachine
