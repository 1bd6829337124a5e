"""The frame of the Hypothesis machines over the job runtime: the bundle of the jobs
they submit, the rules each of them drew alike, and the jobs the oracle holds in a
given state.

Hypothesis collects a machine's rules from its class and its bases alike and orders them
by target, argument count and name, so a rule declared once here draws in each machine
what that machine's own copy drew.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hypothesis.stateful import Bundle, rule

from jobconform.conformance.command_engine import AreaMachine
from jobconform.conformance.harness import Harness
from jobconform.reference import commands as cmd
from jobconform.reference.lifecycle import JobState

JobHarnessT = TypeVar("JobHarnessT", bound="Harness | None")


class JobMachine(AreaMachine[JobHarnessT]):
    """A machine whose rules submit jobs into `jobs` and act on them."""

    jobs = Bundle("jobs")

    @property
    def job_harness(self) -> Harness:
        harness = self.harness
        assert harness is not None, "the harness opens before any rule reads it"
        return harness

    def _jobs_where(self, wanted: Callable[[JobState], bool]) -> list[str]:
        """The jobs the oracle holds for which `wanted` holds, oldest first."""
        return [alias for alias, job in self.job_harness.model.jobs.items() if wanted(job)]

    @rule()
    def dispatch(self) -> None:
        self._run(cmd.Dispatch())

    @rule(job=jobs)
    def cancel(self, job: str) -> None:
        self._run(cmd.Cancel(job))

    @rule(job=jobs)
    def get(self, job: str) -> None:
        self._run(cmd.Get(job))


__all__ = ["JobMachine"]
