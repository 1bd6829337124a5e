"""Behave steps of the composite area (features/composite.feature).

The commands' steps are derived from their declarations (declarations.py): each sends
one command through `CompositeHarness.run` (backend and oracle, then compared);
Then-steps read what the BACKEND shows. Every step says "composite" (or names an owner's
loop, reminder or job in the composite) so that none clashes with another area's. Time
passes only with "the composite clock moves N seconds".
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance.area_steps import ConfiguredScenario, alias_list
from jobconform.conformance.composite.declarations import DECLARATIONS
from jobconform.conformance.composite.harness import CompositeHarness, composite_config
from jobconform.conformance.scenario import _check, state_of
from jobconform.conformance.step_library import check_step, setup_step
from jobconform.conformance.vocabulary import derive_steps

__all__: list[str] = []


class CompositeScenario(ConfiguredScenario[CompositeHarness]):
    """One scenario's composite harness, opened on first use with its parameters; its
    answers keep each submission's under the job's name."""

    NOUN = "composite"

    def open(self) -> CompositeHarness:
        settings = composite_config(self.config.profile, **self.overrides)
        return CompositeHarness(self.config.backend, self.config.profile,
                                self.config.registry, settings)


def _composite(context: Any) -> CompositeScenario:
    return state_of(context).area_state("composite", CompositeScenario)


@setup_step("a composite admission of {cap:d} slots per owner")
def slots(context: Any, cap: int) -> None:
    _composite(context).configure(parallel_cap=cap)


@setup_step("a composite breaker opening after {threshold:d} auth failures for {cooldown:g} s")
def breaker(context: Any, threshold: int, cooldown: float) -> None:
    _composite(context).configure(failure_threshold=threshold, cooldown_seconds=cooldown)


@setup_step("a composite governor pausing {ttl:g} s when {threshold:d} owners fail alike")
def governor(context: Any, ttl: float, threshold: int) -> None:
    _composite(context).configure(pause_ttl_seconds=ttl, pause_threshold=threshold)


@setup_step("a composite backlog expiring work older than {seconds:g} s")
def max_age(context: Any, seconds: float) -> None:
    _composite(context).configure(backlog_max_age_seconds=seconds)


# -- Given/When: commands, derived from their declarations (declarations.py) ---------------

derive_steps(DECLARATIONS, _composite)


# -- Then: checks on what the backend shows ------------------------------------------------


def _states(context: Any) -> dict[str, str]:
    snapshot = _composite(context).harness.runtime.snapshot()
    return {work: state for work, _, state in snapshot.executions}


@check_step('composite work "{works}" is {state:w}')
def work_is(context: Any, works: str, state: str) -> None:
    states = _states(context)
    for work in alias_list(works):
        actual = states.get(work)
        _check(context, actual == state, f"the admission state of {work!r}", state, actual)


@check_step('composite work "{work}" was never admitted')
def never_admitted(context: Any, work: str) -> None:
    actual = _states(context).get(work)
    _check(context, actual is None, f"the admission state of {work!r}", None, actual)


@check_step('composite job "{job}" is refused')
def refused(context: Any, job: str) -> None:
    actual = _composite(context).answers.get(job)
    _check(context, actual == "refused", f"the answer to job {job!r}", "refused", actual)


@check_step('composite loop "{loop}" is {status:w} after {runs:d} runs')
def loop_is(context: Any, loop: str, status: str, runs: int) -> None:
    loops = {name: (shown, done) for name, shown, done
             in _composite(context).harness.runtime.snapshot().loops}
    _check(context, loops.get(loop) == (status, runs), f"loop {loop!r} (status, runs)",
           (status, runs), loops.get(loop))


@check_step('composite reminder "{reminder}" is {status:w}')
def reminder_is(context: Any, reminder: str, status: str) -> None:
    reminders = dict(_composite(context).harness.runtime.snapshot().reminders)
    actual = reminders.get(reminder)
    _check(context, actual == status, f"reminder {reminder!r}", status, actual)


@check_step('the composite breaker of owner "{owner}" is {state:w}')
def breaker_is(context: Any, owner: str, state: str) -> None:
    breakers = {name: shown for name, shown, _ in
                _composite(context).harness.runtime.snapshot().breakers}
    actual = breakers.get(owner)
    _check(context, actual == state, f"the breaker of {owner!r}", state, actual)


@check_step("the composite admission is paused")
def paused(context: Any) -> None:
    actual = _composite(context).harness.runtime.snapshot().paused_until
    _check(context, actual is not None, "the governor's pause", "an end", actual)
