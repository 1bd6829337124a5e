"""The frame of the Hypothesis machines over the job runtime (the lifecycle's, the
arguments', the reaper's): the bundle of the jobs they submit, the rules each of them
drew alike, and the jobs the oracle holds in a given state.

Hypothesis collects a machine's rules from its class and its bases alike and orders them
by target, argument count and name, so a rule declared once here draws in each machine
what that machine's own copy drew.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hypothesis.stateful import Bundle, invariant, rule

from jobconform.conformance.command_engine import AreaMachine
from jobconform.conformance.harness import Harness
from jobconform.reference import commands as cmd
from jobconform.reference.lifecycle import JobState, Status

JobHarnessT = TypeVar("JobHarnessT", bound="Harness | None")
# The aliases of the jobs a machine submitted (Hypothesis keeps a bundle by its name).
jobs: Bundle[str] = Bundle("jobs")


class JobMachine(AreaMachine[JobHarnessT]):
    """A machine whose rules submit jobs into `jobs` and act on them."""

    def _jobs_where(self, wanted: Callable[[JobState], bool]) -> list[str]:
        """The jobs the oracle holds for which `wanted` holds, oldest first."""
        harness = self.harness
        assert harness is not None, "the harness opens before any rule reads it"
        return [alias for alias, job in harness.model.jobs.items() if wanted(job)]

    @rule()
    def dispatch(self) -> None:
        self._run(cmd.Dispatch())

    @rule(job=jobs)
    def cancel(self, job: str) -> None:
        self._run(cmd.Cancel(job))

    @rule(job=jobs)
    def get(self, job: str) -> None:
        self._run(cmd.Get(job))


class RenewedJobMachine(JobMachine[JobHarnessT]):
    """A job machine whose runtime may shut down, reopened by `open_harness`.

    After every rule, a runtime that is shut down with no active job left can show
    nothing new but refusals, so the sequence goes on with a fresh one. Jobs of the old
    runtime stay in the bundle as ids the new one does not know (LC-015, LC-016, LC-017
    on unknown ids); names keep counting, so none is reused.
    """

    open_harness: Callable[[], JobHarnessT]

    @invariant()
    def fresh_runtime_after_shutdown(self) -> None:
        harness = self.harness
        if harness is None:
            return
        model = harness.model
        if model.shut_down and not any(job.status in (Status.QUEUED, Status.RUNNING)
                                       for job in model.jobs.values()):
            harness.close()
            self.harness = self.open_harness()

    @rule(job=jobs)
    def get_result(self, job: str) -> None:
        self._run(cmd.GetResult(job))


__all__ = ["JobMachine", "RenewedJobMachine", "jobs"]
