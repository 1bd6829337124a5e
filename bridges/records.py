"""Job records for runtimes that keep none with the spec's fields.

A retry library (tenacity) keeps no records at all; a queue library (huey) keeps a
result but no timestamps or states. The adapter then writes what the library tells it
(a worker began a body, tenacity backs off, an exception ended it) into `JobRecords`, with
the times the library's own wall clock reads (`datetime.now()` under `WallClock`). The
table answers the protocol's reads (`get`, `get_result`, `list_jobs`, `cleanup`,
`health`), refuses submissions over the task cap or after shutdown, and ignores writes
to a job that has already ended (a late outcome after a cancel changes nothing, LC-003).
Its health counters are derived (`DerivedHealth`): declare `DERIVED_HEALTH_NOTE`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from jobconform.backends.protocol import (
    CapacityExceeded,
    JobNotCompleted,
    JobNotFound,
    RuntimeShutDown,
)
from jobconform.bridges.health import DerivedHealth
from jobconform.reference.model import Health

ACTIVE = ("queued", "running")


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    status: str
    submitted_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: object = None
    error: str | None = None
    retry_count: int = 0
    max_retries: int = 0


@dataclass(frozen=True)
class RedeliveryRecord(JobRecord):
    """A record with the redelivery area's fields, for a runtime that counts re-deliveries
    itself (or reads the count off its broker) and whose library parks and alerts, or not."""

    redelivery_count: int = 0
    alerted: bool = False
    poisoned: bool = False


class JobRecords:
    """Args: now: the runtime's own clock reading (under `WallClock`, the virtual one);
    max_tasks: the task cap, counting every record held (LC-009)."""

    def __init__(self, now: Callable[[], datetime], max_tasks: int | None) -> None:
        self._now = now
        self._max_tasks = max_tasks
        self._lock = threading.Lock()
        self._records: dict[str, JobRecord] = {}
        self._shut_down = False
        self._health = DerivedHealth()

    def add(self, job_id: str, max_retries: int = 0) -> JobRecord:
        """A queued record, stamped now.

        Raises:
            CapacityExceeded: the task cap is reached.
            RuntimeShutDown: `shut_down()` was called.
        """
        with self._lock:
            if self._shut_down:
                raise RuntimeShutDown("the runtime is shut down")
            if self._max_tasks is not None and len(self._records) >= self._max_tasks:
                raise CapacityExceeded(f"{len(self._records)} jobs held")
            record = JobRecord(job_id, "queued", self._now(), max_retries=max_retries)
            self._records[job_id] = record
            return record

    def update(self, job_id: str, status: str, **fields: object) -> bool:
        """Move an active job; `started_at`/`finished_at` are stamped now for running and
        terminal moves. Returns False (and changes nothing) once the job has ended."""
        with self._lock:
            record = self._records.get(job_id)
            if record is None or record.status not in ACTIVE:
                return False
            stamp = {"running": "started_at", "queued": None}.get(status, "finished_at")
            if stamp is not None:
                fields[stamp] = self._now()
            self._records[job_id] = replace(record, status=status, **fields)  # type: ignore[arg-type]
            return True

    def get(self, job_id: str) -> JobRecord | None:
        with self._lock:
            return self._records.get(job_id)

    def get_result(self, job_id: str) -> object:
        record = self.get(job_id)
        if record is None:
            raise JobNotFound(job_id)
        if record.status != "succeeded":
            raise JobNotCompleted(job_id, record.status)
        return record.result

    def list_jobs(self, status: str | None = None) -> list[JobRecord]:
        with self._lock:
            return [r for r in self._records.values() if status in (None, r.status)]

    def cleanup(self, max_age_seconds: float) -> int:
        cutoff = self._now() - timedelta(seconds=max_age_seconds)
        with self._lock:
            old = [r.job_id for r in self._records.values()
                   if r.status not in ACTIVE and (r.finished_at or r.submitted_at) <= cutoff]
            for job_id in old:
                del self._records[job_id]
        return len(old)

    def shut_down(self) -> list[str]:
        """Refuse submissions from now on; returns the ids of the jobs still active."""
        with self._lock:
            self._shut_down = True
            return [r.job_id for r in self._records.values() if r.status in ACTIVE]

    def health(self) -> Health:
        return self._health.read(self.list_jobs())
