"""Health counters derived from job records, for runtimes that keep none of their own.

The spec's health snapshot (LC-024, LC-025) has the counts of queued and running jobs, the
records held, and three outcome counters. Many real runtimes keep no such counters. An
adapter for one does not fake them: it calls `DerivedHealth.read(views)` with its job
records, and declares `report_notes = (DERIVED_HEALTH_NOTE,)` on its backend, so that
the report says the counters were derived by the kit.

The counters count each job's final outcome once, the first time a read sees it
terminal. The harness reads health after every command, so a job counts before a
cleanup can remove its record; a record removed before any read saw it terminal is
missed, which the report's note covers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from jobconform.backends.protocol import JobView
from jobconform.reference.model import Health

DERIVED_HEALTH_NOTE = ("health counters derived by the kit from the job records"
                       " (jobconform.bridges.DerivedHealth): the runtime keeps none")
CANCELLED, FAILED, QUEUED, RUNNING, SUCCEEDED = (
    "cancelled", "failed", "queued", "running", "succeeded")


class DerivedHealth:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._outcomes: dict[str, str] = {}  # job id -> its final status, first seen

    def read(self, views: Iterable[JobView]) -> Health:
        """The snapshot for these records (canonical statuses), counting new outcomes."""
        views = list(views)
        with self._lock:
            for view in views:
                if view.status in (SUCCEEDED, FAILED, CANCELLED):
                    self._outcomes.setdefault(view.job_id, view.status)
            outcomes = list(self._outcomes.values())
        return Health(
            queued=sum(view.status == QUEUED for view in views),
            running=sum(view.status == RUNNING for view in views),
            total=len(views),
            processed=outcomes.count(SUCCEEDED) + outcomes.count(FAILED),  # LC-025
            failed=outcomes.count(FAILED),
            cancelled=outcomes.count(CANCELLED),
        )
