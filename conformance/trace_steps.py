"""The two Behave steps that generated regression scenarios add to the suite's own.

A trace command no plain sentence expresses exactly (a submission with a retry policy, a
delay question, a text with quotes) is written as its JSON and replayed through the
harness, like every other When-step. A trace whose commands need an area beyond the
lifecycle starts by requiring it, so the scenario is skipped where it cannot be checked.
"""

from __future__ import annotations

import json
from typing import Any

from jobconform.conformance.scenario import state_of
from jobconform.conformance.step_library import action_step, setup_step
from jobconform.reference.commands import command_from_json

__all__ = ["step_areas_claimed", "step_recorded_command"]


@setup_step('the backend claims the areas "{areas}"')
def step_areas_claimed(context: Any, areas: str) -> None:
    """Skip the scenario unless the backend claims, and the profile has, every area."""
    config = state_of(context).config
    missing = [area.strip() for area in areas.split(",") if area.strip() and not (
        area.strip() in config.backend.capabilities and area.strip() in config.profile.areas)]
    if missing:
        context.scenario.skip(f"backend {config.backend.name} under profile"
                              f" {config.profile.name} does not check {', '.join(missing)}")


@action_step("the recorded command {document} is replayed")
def step_recorded_command(context: Any, document: str) -> None:
    try:
        body = json.loads(document)
    except json.JSONDecodeError as error:
        raise ValueError(f"the recorded command is not JSON: {document!r} ({error})") from None
    if not isinstance(body, dict):
        raise ValueError(f"a recorded command is a JSON object, not {document!r}")
    state_of(context).run(command_from_json(body))
