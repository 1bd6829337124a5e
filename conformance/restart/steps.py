"""Behave steps for a restart over the same store (features/restart.feature, RS-001..RS-004).

A restart is one more command of the lifecycle harness (`Restart`): the backend stops its
runtime and opens a new one over the same store, the oracle keeps every record, and the
harness compares the whole state after it as after any command. Every other step of a
restart scenario is a lifecycle or redelivery step. Register it from features/steps/ (every
area's library is imported there):

    from jobconform.conformance.restart.steps import *  # noqa: F403
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance.scenario import state_of
from jobconform.conformance.step_library import action_step
from jobconform.reference import commands as cmd

__all__: list[str] = []


@action_step("the runtime restarts over the same store")
def step_restart(context: Any) -> None:
    """The process stops without a shutdown and a new one opens over its store."""
    state_of(context).run(cmd.Restart())


@action_step("the runtime is sent SIGTERM with a grace period of {seconds:g} seconds")
def step_stop_by_signal(context: Any, seconds: float) -> None:
    """SIGTERM, SIGKILL if the process is still there when the grace period ends, and a
    new runtime over the same store (RS-004); the harness compares how it stopped."""
    state_of(context).run(cmd.StopBySignal(seconds))
