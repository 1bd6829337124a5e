"""The re-delivery Given-step that opens the runtime with a cap (spec area "redelivery").

Every other re-delivery step is derived from the area's vocabulary
(conformance/redelivery/declarations.py). Heartbeats use the stuck area's step
(`job "a" sends a heartbeat`).
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance.scenario import reopen_runtime, state_of
from jobconform.conformance.step_library import setup_step

__all__: list[str] = []


@setup_step("a runtime with a re-delivery cap of {cap:d}")
def step_runtime_redelivery_cap(context: Any, cap: int) -> None:
    """Keeps the limits set by earlier Given-steps; only the cap changes."""
    harness = state_of(context).harness
    reopen_runtime(context, max_concurrent=harness.max_concurrent, max_tasks=harness.max_tasks,
                   unlimited_tasks=harness.unlimited_tasks, max_redelivery=cap)
