"""The Behave steps that replay an area machine's trace (conformance/area_trace.py).

A generated regression scenario opens the harness its machine used, then sends each
recorded command through it; the harness compares backend and oracle after every one, so
the scenario fails where the trace diverged. A backend that does not claim the machine's
areas skips the scenario.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from jobconform.conformance.area_trace import ReplayHarness, decode, open_replay_harness
from jobconform.conformance.machines import machines
from jobconform.conformance.scenario import RunConfig, state_of
from jobconform.conformance.step_library import action_step, setup_step

__all__ = ["step_machine_command", "step_machine_harness"]

# The scenario's slot for the replaying harness among the areas' states.
REPLAY_STATE = "area trace replay"


@dataclass
class Replaying:
    harness: ReplayHarness

    def close(self) -> None:
        self.harness.close()


def _json(document: str, what: str) -> Any:
    try:
        return json.loads(document)
    except json.JSONDecodeError as error:
        raise ValueError(f"the recorded {what} is not JSON: {document!r} ({error})") from None


@setup_step('the harness of the "{machine}" with the setup {setup}')
def step_machine_harness(context: Any, machine: str, setup: str) -> None:
    state = state_of(context)
    config = state.config
    entry = next((m for m in machines() if m.name == machine), None)
    if entry is None:
        raise ValueError(f"no machine is called {machine!r}; known:"
                         f" {', '.join(m.name for m in machines())}")
    if not entry.applies_to(config.backend, config.profile):
        context.scenario.skip(f"backend {config.backend.name} under profile"
                              f" {config.profile.name} does not run the {machine}")
        return
    recorded = decode(_json(setup, "setup"))
    if not isinstance(recorded, dict):
        raise ValueError(f"a recorded setup is an object, not {setup!r}")

    def open_replay(run_config: RunConfig) -> Replaying:
        return Replaying(open_replay_harness(machine, run_config.backend, run_config.profile,
                                             run_config.registry, recorded))

    state.area_state(REPLAY_STATE, open_replay)


@action_step("the machine's recorded command {document} is replayed")
def step_machine_command(context: Any, document: str) -> None:
    replaying = state_of(context).areas.get(REPLAY_STATE)
    if not isinstance(replaying, Replaying):
        raise RuntimeError("a recorded machine command needs a 'Given the harness of the"
                           ' "<machine>" with the setup {...}\' step first')
    replaying.harness.run(decode(_json(document, "command")))
