"""The lifecycle's third Hypothesis machine: a runtime holding many jobs (LC-038), two of
them ending with an error and a result of LONG_TEXT characters (LC-039).

Seed 000 indexes its job table by status (queue polling), by worker and by creation time
(age order). An index only makes a read faster; what a user relies on is that the answers
stay whole and exact however many jobs are held, where a default limit on a store's
query, a page read as if it were the whole answer, or a lookup that takes a neighbour's
row go wrong. The lifecycle machine holds a few jobs (its task cap is
`job_draws.MACHINE_TASK_CAP`), so none of that shows there.

Each sequence opens a runtime of its own and submits VOLUME jobs, one command each, the
harness comparing after each what it changed: the job submitted, read by id, and the
health snapshot's counts. Once all are held it compares everything: the whole listing,
every record and the health snapshot, a listing by each status, and a read of every id.
Comparing every record and the whole listing after each submission made the fill
quadratic in the jobs held, a read of every row per submission on a SQL store; a
submission changes its own job and the counts, and whatever else one broke still shows
in the full comparison once all are held, after the fill's last command. Then the drawn
rules move jobs through every state (dispatch, ends, cancels, time, cleanup) and ask
listings by status and reads by id, all at volume, each rule's last command observed in
full (a rule of many commands compares the others where they changed the oracle). A
machine of its own, run after the lifecycle and arguments machines
(`machine.run_lifecycle_machine`), so that their draws stay as they were; the submissions
are fixed, not drawn, so that a counterexample shrinks by its drawn steps alone; so are
the long error and result decided for the first two jobs, which end with them once a
drawn dispatch starts them, and are then compared whole after every step.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from jobconform.backends.protocol import Backend
from jobconform.conformance.command_engine import AreaMachine, time_rule
from jobconform.conformance.harness import Harness
from jobconform.conformance.job_draws import MACHINE_SLOTS, outcomes
from jobconform.conformance.machine_runner import MachineRun
from jobconform.reference import commands as cmd
from jobconform.reference.lifecycle import LONG_TEXT, VOLUME, Status, long_text
from jobconform.spec import Profile, Registry

# The task cap: room for every submission, as LC-009's default.
VOLUME_TASK_CAP = 1000
TIME_STEPS = (0.0, 30.0)
CLEANUP_AGES = (0.0, 30.0)
STATUSES = tuple(status.value for status in Status)
# The most jobs one drawn rule cancels, one command each.
CANCELS = 40
# The most drawn steps after the submissions: each rule observes VOLUME records in full.
VOLUME_STEPS = 12


def make_volume_machine(backend: Backend, profile: Profile, registry: Registry | None,
                        run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend and profile."""

    class VolumeMachine(AreaMachine[Harness | None]):
        def __init__(self) -> None:
            super().__init__(run)
            self.harness = None

        @initialize()
        def open_and_fill(self) -> None:
            self.harness = Harness(backend, profile, registry, max_concurrent=MACHINE_SLOTS,
                                   max_tasks=VOLUME_TASK_CAP)
            # The first two end with an error and a result of LONG_TEXT characters
            # (LC-039): fixed, as the submissions are, so every sequence reads them back.
            # The last command is observed in full: the listing, every record, the counts.
            self._run_in_bulk([
                *(cmd.Submit(self._alias(number)) for number in range(1, VOLUME + 1)),
                cmd.Finish("v1", cmd.Raise("ValueError", long_text(LONG_TEXT))),
                cmd.Finish("v2", cmd.Succeed(long_text(LONG_TEXT)))])
            # Then every other answer once at volume; a read changes nothing, so its
            # answer is all that is compared.
            with self.harness.comparing_changes_only():
                for status in STATUSES:
                    self._run(cmd.ListJobs(status))
                for number in range(1, VOLUME + 1):
                    self._run(cmd.Get(self._alias(number)))

        def _run_in_bulk(self, commands: list[cmd.Command]) -> None:
            """Run `commands` in order, each compared where it changed the oracle's state,
            the last observed in full (`Harness.comparing_changes_only`)."""
            assert self.harness is not None, "open_and_fill runs first"
            if not commands:
                return
            with self.harness.comparing_changes_only():
                for command in commands[:-1]:
                    self._run(command)
            self._run(commands[-1])

        @staticmethod
        def _alias(number: int) -> str:
            return f"v{number}"

        @rule()
        def dispatch(self) -> None:
            self._run(cmd.Dispatch())

        @rule(number=st.integers(1, VOLUME), outcome=outcomes)
        def finish(self, number: int, outcome: cmd.Outcome) -> None:
            self._run(cmd.Finish(self._alias(number), outcome))

        # The running jobs are the first ones dispatched: end them, so that later
        # dispatches reach far down the queue.
        @rule(outcome=outcomes)
        def finish_running(self, outcome: cmd.Outcome) -> None:
            assert self.harness is not None
            self._run_in_bulk([cmd.Finish(alias, outcome)
                               for alias, job in self.harness.model.jobs.items()
                               if job.status is Status.RUNNING])

        @rule(first=st.integers(1, VOLUME), count=st.integers(1, CANCELS))
        def cancel_many(self, first: int, count: int) -> None:
            self._run_in_bulk([cmd.Cancel(self._alias(number))
                               for number in range(first, min(VOLUME, first + count - 1) + 1)])

        @rule(number=st.integers(1, VOLUME))
        def get(self, number: int) -> None:
            self._run(cmd.Get(self._alias(number)))

        @rule(status=st.one_of(st.none(), st.sampled_from(STATUSES)))
        def list_jobs(self, status: str | None) -> None:
            self._run(cmd.ListJobs(status))

        advance_time = time_rule("advance_time", TIME_STEPS, cmd.AdvanceTime)

        cleanup = time_rule("cleanup", CLEANUP_AGES, cmd.Cleanup)

    return VolumeMachine
