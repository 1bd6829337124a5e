"""Behave steps for the reaper (spec area "reaper", RP-001..RP-007).

Like every step library here, each action sends one command through the harness (which
compares backend and oracle), and each check reads what the BACKEND answered or holds.
The commands' steps are derived from their declarations (declarations.py); the two that
let the runtime's configured reaper defaults pass read the harness's settings.
Register it with `from jobconform.conformance.reaper.steps import *  # noqa: F403` in a
module under `features/steps/`.
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.reaper.declarations import DECLARATIONS
from jobconform.conformance.scenario import (
    _check,
    last_answer,
    same_value,
    state_of,
)
from jobconform.conformance.step_library import action_step, check_step
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference import commands as cmd

__all__: list[str] = []

# -- actions: the commands' steps are derived from their declarations (declarations.py) ----

derive_steps(DECLARATIONS, state_of)


@action_step("the default reaper TTL passes")
def step_default_ttl_passes(context: Any) -> None:
    """The clock moves by the TTL the runtime was configured with (the profile's)."""
    state = state_of(context)
    state.run(cmd.AdvanceTime(state.harness.settings.reaper_ttl_seconds))


@action_step("the default sweep interval passes but {seconds:g} second",
             "the default sweep interval passes but {seconds:g} seconds")
def step_default_interval_passes_but(context: Any, seconds: float) -> None:
    state = state_of(context)
    interval = state.harness.settings.reaper_sweep_interval_ms / 1000
    if seconds > interval:
        raise ValueError(f"the default interval is {interval:g} s; {seconds:g} s cannot be"
                         " left out of it")
    state.run(cmd.AdvanceTime(interval - seconds))


# -- checks ----------------------------------------------------------------------------------


@check_step("the reaper start is accepted")
def check_start_accepted(context: Any) -> None:
    answer = last_answer(context, cmd.StartReaper, "the reaper start is accepted")
    _check(context, answer == cmd.REAPER_STARTED, "the answer to start_reaper",
           cmd.REAPER_STARTED, answer)


@check_step("the reaper start is refused as already running")
def check_start_refused(context: Any) -> None:
    answer = last_answer(context, cmd.StartReaper, "the reaper start is refused …")
    _check(context, answer == cmd.REFUSED_REAPER_RUNNING,
           "the answer to start_reaper on a running reaper (ReaperAlreadyRunning)",
           cmd.REFUSED_REAPER_RUNNING, answer)


@check_step("the stop found the reaper running")
def check_stop_true(context: Any) -> None:
    answer = last_answer(context, cmd.StopReaper, "the stop found the reaper running")
    _check(context, same_value(True, answer), "stop_reaper's answer", True, answer)


@check_step("the stop found no reaper running")
def check_stop_false(context: Any) -> None:
    answer = last_answer(context, cmd.StopReaper, "the stop found no reaper running")
    _check(context, same_value(False, answer), "stop_reaper's answer", False, answer)


@check_step('the expired jobs are "{aliases}"')
def check_expired(context: Any, aliases: str) -> None:
    answer = last_answer(context, cmd.ListExpired, "the expired jobs are …")
    _check(context, answer == alias_list(aliases), "list_expired's jobs, in submission order",
           alias_list(aliases), answer)


@check_step("no job is expired")
def check_none_expired(context: Any) -> None:
    answer = last_answer(context, cmd.ListExpired, "no job is expired")
    _check(context, answer == [], "list_expired's jobs", [], answer)


def _reaper_status(context: Any) -> dict[str, object]:
    """The backend's reaper status, read through the harness (compared with the oracle)."""
    answer = state_of(context).run(cmd.ReaperStatus())
    _check(context, isinstance(answer, dict), "reaper_status()", "a dict", answer)
    assert isinstance(answer, dict)
    return answer


@check_step("the reaper is running")
def check_reaper_running(context: Any) -> None:
    status = _reaper_status(context)
    _check(context, status.get("running") is True, "reaper_status() running", True,
           status.get("running"))


@check_step("the reaper is not running")
def check_reaper_not_running(context: Any) -> None:
    status = _reaper_status(context)
    _check(context, status.get("running") is False, "reaper_status() running", False,
           status.get("running"))


@check_step("the reaper has swept {sweeps:d} times, failed {failed:d} times and deleted"
            " {deleted:d} jobs")
def check_reaper_counts(context: Any, sweeps: int, failed: int, deleted: int) -> None:
    status = _reaper_status(context)
    actual = (status.get("sweeps"), status.get("failed_sweeps"), status.get("deleted"))
    _check(context, actual == (sweeps, failed, deleted),
           "reaper_status() (sweeps, failed_sweeps, deleted)", (sweeps, failed, deleted), actual)
