"""The job runtime's Behave steps (lifecycle, retry and stuck areas) in plain sentences.

The commands' and the checks' steps are derived from their declarations
(declarations.py): each command's sends it through `Harness.run`, which applies it to
the backend and to the oracle and compares everything; a `Divergence` raised there is
left to propagate, so it becomes the scenario's failure with its whole message. Every
Then-step makes its own named check on what the BACKEND shows (a job record, the health
snapshot, the last answer), so a scenario states its expectation even where the oracle
agrees. What stays here: the Given-steps opening the runtime with its limits, the
submissions from threads released together, and the read whose record a later step
checks for a snapshot. Statuses are written in the canonical vocabulary; seconds count
from the virtual clock's start, `EPOCH`.

The scenario's state, the hooks and the step decorators every area uses are the kit's
core (conformance/scenario.py, behave_hooks.py, step_library.py).
"""

from __future__ import annotations

from typing import Any, cast

from jobconform.backends.protocol import JobView
from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.lifecycle.declarations import CHECKS, DECLARATIONS
from jobconform.conformance.scenario import _check, reopen_runtime, state_of
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.conformance.vocabulary import derive_checks, derive_steps
from jobconform.reference import commands as cmd

__all__: list[str] = []

# -- Given: the runtime ------------------------------------------------------------------


@setup_step("a runtime")
def step_runtime(context: Any) -> None:
    """The runtime with the profile's own limits (the harness is already open)."""
    reopen_runtime(context)


@setup_step("a runtime with {slots:d} worker slot", "a runtime with {slots:d} worker slots")
def step_runtime_slots(context: Any, slots: int) -> None:
    reopen_runtime(context, max_concurrent=slots)


@setup_step("a runtime with a task cap of {cap:d}")
def step_runtime_cap(context: Any, cap: int) -> None:
    reopen_runtime(context, max_tasks=cap)


@setup_step("a runtime with {slots:d} worker slot and a task cap of {cap:d}",
            "a runtime with {slots:d} worker slots and a task cap of {cap:d}")
def step_runtime_slots_cap(context: Any, slots: int, cap: int) -> None:
    reopen_runtime(context, max_concurrent=slots, max_tasks=cap)


@setup_step("a runtime with no task cap")
def step_runtime_uncapped(context: Any) -> None:
    reopen_runtime(context, unlimited_tasks=True)


@setup_step("a runtime whose executions query pages {size:d} jobs at most")
def step_runtime_page_size(context: Any, size: int) -> None:
    reopen_runtime(context, page_size=size)


@setup_step("a runtime with {slots:d} worker slot and a task cap of {cap:d} whose executions"
            " query pages {size:d} jobs at most",
            "a runtime with {slots:d} worker slots and a task cap of {cap:d} whose executions"
            " query pages {size:d} jobs at most")
def step_runtime_slots_cap_page_size(context: Any, slots: int, cap: int, size: int) -> None:
    """A machine trace's runtime (conformance/trace.py)."""
    reopen_runtime(context, max_concurrent=slots, max_tasks=cap, page_size=size)


@setup_step("a runtime with queued execution off")
def step_runtime_synchronous(context: Any) -> None:
    """Seed 000's async.enabled false: submit runs each body itself (LC-037)."""
    reopen_runtime(context, queued_execution=False)


@setup_step("a runtime with queued execution off and a task cap of {cap:d}")
def step_runtime_synchronous_cap(context: Any, cap: int) -> None:
    reopen_runtime(context, max_tasks=cap, queued_execution=False)


# -- Given/When: commands, derived from their declarations (declarations.py) ---------------

derive_steps(DECLARATIONS, state_of)


@action_step('threads submit jobs "{aliases}" at once')
def step_submit_concurrently(context: Any, aliases: str) -> None:
    """One thread per job, released together (LC-030); each thread's answer is kept as
    that job's submission answer."""
    state = state_of(context)
    jobs = tuple(alias_list(aliases))
    answers = state.run(cmd.SubmitConcurrently(jobs))
    assert isinstance(answers, list)
    state.submissions.update(zip(jobs, answers, strict=True))


@action_step('job "{alias}" is read')
def step_read(context: Any, alias: str) -> None:
    state = state_of(context)
    # Get answers the backend's own view, or None for an id it does not hold.
    state.reads[alias] = cast("JobView | None", state.run(cmd.Get(alias)))
    state.last_read = alias


# -- Then: the record a step read earlier (a snapshot, LC-016); every other check is
# -- derived from its declaration (declarations.py)


@check_step("the record read earlier still shows {status:Status}")
def check_earlier_read(context: Any, status: str) -> None:
    state = state_of(context)
    if state.last_read is None:
        raise AssertionError("no job was read earlier in this scenario")
    check_earlier_read_of(context, state.last_read, status)


@check_step('the record of job "{alias}" read earlier still shows {status:Status}')
def check_earlier_read_of(context: Any, alias: str, status: str) -> None:
    state = state_of(context)
    if alias not in state.reads:
        raise AssertionError(f"job {alias!r} was not read earlier in this scenario")
    view = state.reads[alias]
    _check(context, view is not None, f"the earlier read of job {alias!r}", "a record", None)
    assert view is not None
    _check(context, view.status == status,
           f"the record of job {alias!r} read earlier must not change (a snapshot)", status,
           view.status)


derive_checks(CHECKS, state_of)
