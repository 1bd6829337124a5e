"""Behave's hooks: load the run's backend once, give every scenario a fresh state (or
skip it where it cannot apply), close what the scenario opened, and leave for the runner
what Behave's own results cannot carry.

Use them from a features folder:

    # features/environment.py
    from jobconform.conformance.behave_hooks import after_scenario, before_all, before_scenario

A scenario is tagged with the requirement IDs it checks (`@LC-011`, `@RT-003`). Before it
runs, each tag is looked up in the spec: a requirement whose area the backend does not
claim, or whose profiles do not include the active one, makes the scenario SKIPPED with
the reason, so it is never run and never counted as a pass.
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance import tolerance
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.requirement_tags import requirement_tags
from jobconform.conformance.scenario import ScenarioState, open_state, run_config

__all__ = ["after_scenario", "before_all", "before_scenario"]


def before_all(context: Any) -> None:
    """Load the backend and profile once, so a bad name stops the run with a clear message."""
    run_config(context)


def before_scenario(context: Any, scenario: Any) -> None:
    """Skip a scenario that cannot apply; else a fresh harness with the profile's limits."""
    config = run_config(context)
    context.jobconform = None
    tolerance.start_case()  # a fresh journal of listed deviations for this scenario
    tags = getattr(scenario, "effective_tags", ())
    reason = skip_reason(config.registry, config.backend, config.profile,
                         requirement_tags(tags), case_tags=tags)
    if reason is not None:
        scenario.skip(reason)
        return
    context.jobconform = open_state(config)


def _step_error(scenario: Any, state: object) -> str | None:
    """The exception a step raised (Behave's JSON results leave out its message), with
    the requirement of the command it raised in when the harness does not say it."""
    for step in getattr(scenario, "steps", ()):
        error = getattr(step, "exception", None)
        if str(getattr(step, "status", "")).endswith("error") and error is not None:
            message = f"{type(error).__name__}: {error}"
            if ("requirement(s):" not in message and isinstance(state, ScenarioState)
                    and state.opened is not None):
                message += f"\n  requirement(s): {state.opened.last_command_named()}"
            return message
    return None


def after_scenario(context: Any, scenario: Any) -> None:
    state = getattr(context, "jobconform", None)
    error = _step_error(scenario, state)
    if error is not None:
        tolerance.write_case_error(
            f"{getattr(scenario.feature, 'name', '?')}: {scenario.name}", error)
    if isinstance(state, ScenarioState):
        try:
            try:
                for area_state in state.areas.values():
                    area_state.close()
            finally:
                if state.opened is not None:
                    state.opened.close()
                context.jobconform = None
        except Exception as close_error:
            # Behave marks the scenario `hook_error` and its JSON keeps no message: the
            # runner reads this one (after what the steps said, if they failed). A step's
            # own error, written above, stays the case's message: it is the first cause.
            if error is not None:
                raise
            tolerance.write_case_error(
                f"{getattr(scenario.feature, 'name', '?')}: {scenario.name}",
                f"closing the runtime: {type(close_error).__name__}: {close_error}")
            raise
    deviations = tolerance.take()
    if deviations:
        # Behave's own results cannot carry them: the runner reads this file beside them.
        tolerance.write_case_deviations(
            f"{getattr(scenario.feature, 'name', '?')}: {scenario.name}", deviations)
