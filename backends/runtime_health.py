"""A job runtime's health report (seed 000 §Health Report), kept alike by the step runtime
and the threaded worker: the queue depth from the store, the outcomes the runtime wrote
as their jobs' owner, its worker's id and status, and the latest heartbeat of its jobs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from jobconform.backends.store import CANCELLED, FAILED, QUEUED, RUNNING
from jobconform.reference.model import Health


@dataclass(frozen=True)
class HealthSnapshot(Health):
    """The health report: the six counts of HealthView, then the worker's own fields.
    Queue depth and counters are read together, the depth from one store snapshot
    (LC-024)."""

    # The health report's worker fields (LC-029, ST-005).
    worker_id: str
    # "running", "stopping" (no more polls, or a drain waiting for its deadline) or
    # "stopped" (threads gone, or the drain has cancelled what was left) (LC-029)
    status: str
    last_heartbeat: datetime | None  # the latest heartbeat of the runtime's jobs


class OutcomeTally:
    """The counts a runtime keeps for its health report: each outcome it wrote as the
    job's owner, and the latest heartbeat of its jobs. A runtime whose threads share it
    calls these holding its lock."""

    processed = 0
    failed = 0
    cancelled = 0
    _last_heartbeat: datetime | None = None

    def _count_outcome(self, status: str) -> None:
        if status == CANCELLED:
            self.cancelled += 1
            return
        self.processed += 1
        if status == FAILED:
            self.failed += 1

    def _record_heartbeat(self, at: datetime | None) -> None:
        """The health report's last heartbeat only moves forward (ST-005)."""
        if at is not None and (self._last_heartbeat is None or at > self._last_heartbeat):
            self._last_heartbeat = at

    def _health(self, counts: Mapping[str, int], worker_id: str,
                status: str) -> HealthSnapshot:
        """The report from the store's `counts` by status and the worker's own fields."""
        return HealthSnapshot(queued=counts[QUEUED], running=counts[RUNNING],
                              total=sum(counts.values()), processed=self.processed,
                              failed=self.failed, cancelled=self.cancelled,
                              worker_id=worker_id, status=status,
                              last_heartbeat=self._last_heartbeat)
