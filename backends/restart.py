"""What a backend implements to claim `restart` (spec area restart, RS-001..RS-003) and
`stop-signal` (RS-004).

A backend whose job store outlives its runtime (a database, not the process's memory)
claims the `restart` capability and has

    def restart(self, runtime: Runtime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> Runtime: ...

It stops `runtime` as its process would stop without a shutdown: its threads end and its
connections close, and it writes nothing more (a body it was running is let go, and that
job stays running in the store). Then it opens a new runtime over the same store, as a new
process given the same database would, with the same `settings` and `clock`, and returns
it; the harness uses only the new one from then on. `bodies` maps each job id the harness
submitted to its body: a real process finds a job's code by its task name, and the kit's
bodies are the harness's scripts, so the new runtime runs a job it claims with the body
given for its id (a job submitted to the new runtime runs the body submitted with it).

The new runtime holds every job the old one held, unchanged (RS-001), starts the queued
ones first in their order (RS-002), and leaves a job that was running to its lease pass
(RS-003). What was the process's own starts afresh: its health counters, its worker id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from jobconform.backends.protocol import Clock, Runtime, RuntimeSettings, TaskScript

RESTART = "restart"
# A stop by signal (RS-004): SIGTERM, the profile's shutdown, SIGKILL after the grace period.
STOP_SIGNAL = "stop-signal"


class RestartBackend(Protocol):
    """What a backend claiming `restart` adds to `jobconform.backends.protocol.Backend`."""

    def restart(self, runtime: Runtime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> Runtime:
        """Stop `runtime` without a shutdown and open a new one over the same store.

        Args:
            runtime: a runtime this backend opened (with `open`, or by an earlier restart).
            settings, clock: the new runtime's, the same the old one had.
            bodies: the body of each job by its id.

        Returns:
            The new runtime; `runtime` is not used again.
        """
        ...


@dataclass(frozen=True)
class SignalStop:
    """How a stop by signal went: the runtime opened after it, and whether the stop had
    to be escalated to a kill because the old one had not exited when the grace period
    ended."""

    runtime: Runtime
    escalated: bool


class StopSignalBackend(RestartBackend, Protocol):
    """What a backend claiming `stop-signal` (RS-004) adds beside `restart`."""

    def stop_by_signal(self, runtime: Runtime, settings: RuntimeSettings, clock: Clock,
                       bodies: Mapping[str, TaskScript], grace_seconds: float) -> SignalStop:
        """Send `runtime`'s process SIGTERM; if it has not exited when `grace_seconds`
        have passed, kill it; then open a new runtime over the same store as `restart`
        does.

        The grace period is virtual time: in the commanded mode nothing happens between
        the signal and the grace period's end but what the runtime does on the signal, so
        an in-process runtime's exit is decided at once. A real process is waited for on
        a short real-time safety limit, never for the grace period in real time.
        """
        ...


def stop_in_process(on_signal: Callable[[], None], runtime: Runtime,
                    reopen: Callable[[], Runtime]) -> SignalStop:
    """A stop by signal for a runtime that lives in the kit's own process.

    `on_signal` is what the runtime's SIGTERM handler runs (the profile's shutdown, for a
    correct one). The runtime has exited when no job is left queued or running: with
    shutdown_mode cancel that is at once. Otherwise it is killed at the grace period's
    end, which a kill of an in-process runtime is the same as a restart without a
    shutdown: `reopen` opens the new runtime over the same store either way.
    """
    on_signal()
    health = runtime.health()  # counts, so no status vocabulary is assumed
    return SignalStop(reopen(), escalated=health.queued + health.running > 0)
