"""What a backend implements to claim `restart` (spec area restart, RS-001..RS-003).

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

from collections.abc import Mapping
from typing import Protocol

from jobconform.backends.protocol import Clock, Runtime, RuntimeSettings, TaskScript

RESTART = "restart"


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
