"""The one Behave step that generated regression scenarios add to the suite's own.

A trace command no plain sentence expresses exactly (a submission with a retry policy, a
delay question, a text with quotes) is written as its JSON and replayed through the
harness, like every other When-step.
"""

from __future__ import annotations

import json
from typing import Any

from behave import given, when

from jobconform.conformance.behave_steps import state_of
from jobconform.reference.commands import command_from_json

__all__ = ["step_recorded_command"]


@given("the recorded command {document} is replayed")
@when("the recorded command {document} is replayed")
def step_recorded_command(context: Any, document: str) -> None:
    try:
        body = json.loads(document)
    except json.JSONDecodeError as error:
        raise ValueError(f"the recorded command is not JSON: {document!r} ({error})") from None
    if not isinstance(body, dict):
        raise ValueError(f"a recorded command is a JSON object, not {document!r}")
    state_of(context).run(command_from_json(body))
