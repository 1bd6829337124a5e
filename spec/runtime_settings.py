"""The settings a job runtime is opened with: one record for the runtime and its oracle.

The harness opens the backend's runtime with these values and models the same values in
the oracle, so both sides are configured by one record and cannot drift apart. The record
sits below both layers because the adapter protocol and the oracle speak it alike; it holds
values only, and what they mean is the requirements' (spec/lifecycle.md and the others).
"""

from __future__ import annotations

from dataclasses import dataclass

# LC-032's default: a page without a limit, or with a larger one, holds at most this many.
PAGE_SIZE = 50


@dataclass(frozen=True)
class RuntimeSettings:
    """Limits for one runtime, from the profile's defaults or a check's own values."""

    max_concurrent: int
    max_tasks: int | None
    # The runtime's configured defaults, used when a call leaves them out: the reaper's
    # (RP-002) and the re-delivery cap (RD-002). The harness takes them from the profile.
    reaper_ttl_seconds: float = 3600.0
    reaper_sweep_interval_ms: float = 300_000.0
    max_redelivery: int = 3
    # The profile's lifecycle parameters: whether cancel interrupts a running body
    # (LC-026) or only requests it (LC-013), and whether shutdown cancels at once
    # (LC-022) or drains for drain_timeout_seconds first (LC-028).
    cancel_interrupts: bool = False
    shutdown_mode: str = "cancel"
    drain_timeout_seconds: float = 30.0
    # The module ids the runtime has (LC-027): a submission naming another is refused.
    modules: frozenset[str] = frozenset()
    # The most jobs a page of the executions query holds (LC-032).
    page_size: int = PAGE_SIZE
    # Queued execution (LC-037): false only for a backend claiming
    # `queued-execution-switch`, whose runtime then runs each body inside submit.
    queued_execution: bool = True
