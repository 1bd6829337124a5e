"""The SQL gallery: the SQL backend with its store broken the way SQL job queues get it
wrong (seed 000, anchors "Atomic claim in SQL").

`SQL_GALLERY` joins the self-test: every suite must catch each entry. A non-atomic
claim only shows when several workers claim at once, which the single-process suites
never do; it is in `SQL_RACE_GALLERY`, caught by the multi-process claim race
(`jobconform.conformance.claim_race`, tests/test_sql_concurrency.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from jobconform.backends.sql import SqlBackend, SqlJobStore
from jobconform.backends.sql.store import JOBS, rows_matched, to_stored
from jobconform.backends.store import QUEUED, RUNNING, StoredJob
from jobconform.conformance.gallery import GalleryEntry, subclass_entry


class UnconditionedWriteStore(SqlJobStore):
    """Writes are `UPDATE ... WHERE job_id = ?` without the expected status, so a worker's
    late report overwrites a job that shutdown already cancelled: its finish time moves
    and its outcome is counted twice.

    The writer's other expectations (its fencing token) still hold: a store that drops
    them too is a second bug (sql_without_fencing). But a lease pass re-queues a job
    keeping its token (a token counts claims), so until the job is claimed again only the
    status guards it: the owner whose delivery the pass took away still writes it, which
    RD-006 forbids in so many words. One bug, two rules broken: the entry declares RD-006
    in `also_breaks` (issue 33).
    """

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        statement = update(JOBS).where(JOBS.c.job_id == job_id)
        for name, value in (expected or {}).items():
            column = JOBS.c[name]
            statement = statement.where(column.is_(None) if value is None else column == value)
        with self._transaction() as connection:
            moved = connection.execute(statement.values(**changes))
            if rows_matched(moved) == 0:
                return None
            return to_stored(connection.execute(
                select(JOBS).where(JOBS.c.job_id == job_id)).one())


class WithoutFencingStore(SqlJobStore):
    """Writes check the job's status but not its fencing token or heartbeat: the owner that
    lost a job to a lease pass, once another worker has claimed it, still completes it or
    renews its lease, and a rescue whose read went stale re-queues a live delivery."""

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        # Whatever the writer read or claimed, the token compared is the one stored now:
        # the status alone decides (the store itself refuses a write naming no token).
        current = self.get(job_id)
        if current is None:
            return None
        return super().update(job_id, expected_status,
                              expected={"fencing_token": current.fencing_token}, **changes)


class NonAtomicClaimStore(SqlJobStore):
    """The claim selects the oldest queued jobs, then updates each by id in a later
    transaction without re-checking its status, so two workers can take one job."""

    def claim(self, worker_id: str, limit: int, now: datetime) -> list[StoredJob]:
        candidates = [job for job in self.list(QUEUED)
                      if job.next_attempt_at is None or job.next_attempt_at <= now][:limit]
        for job in candidates:
            with self._transaction() as connection:
                connection.execute(update(JOBS).where(JOBS.c.job_id == job.job_id)
                                   .values(status=RUNNING, started_at=now,
                                           worker_id=worker_id, last_heartbeat=now))
        return [replace(job, status=RUNNING, started_at=now, worker_id=worker_id,
                        last_heartbeat=now) for job in candidates]


def _sql_entry(name: str, broken: type[SqlJobStore], catches: str, source: str,
               also_breaks: tuple[str, ...] = ()) -> GalleryEntry:
    """The SQL backend with a broken store, loadable as `<this module>:<name>`."""
    entry = subclass_entry(__name__, name, SqlBackend, {"store_type": broken}, broken,
                           catches, source)
    return replace(entry, also_breaks=also_breaks)


SQL_GALLERY = (
    _sql_entry("sql_unconditioned_write", UnconditionedWriteStore, "LC-003",
               "anchors: River writes terminal states only if running",
               also_breaks=("RD-006",)),
    _sql_entry("sql_without_fencing", WithoutFencingStore, "RD-006",
               "anchors: a stale worker's late completion after a rescue is a no-op"),
)

# No requirement of the lifecycle area says "one worker per job" in so many words; a job
# claimed twice starts its body twice, a transition the spec does not allow (LC-002).
SQL_RACE_GALLERY = (
    _sql_entry("sql_non_atomic_claim", NonAtomicClaimStore, "LC-002",
               "anchors: atomic claim in SQL"),
)
