"""The executions query and statistics of the shipped runtimes (LC-032..LC-034), over
the records a job store lists in one read (oldest first), so that a page and the counts
are each one snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from jobconform.backends.store import FAILED, QUEUED, RUNNING, SUCCEEDED, StoredJob


def _since(now: datetime, hours: float | None) -> datetime | None:
    """The earliest submission a window keeps, itself included; None: no window."""
    return None if hours is None else now - timedelta(hours=hours)


def _owned(job: StoredJob, owners: Sequence[str] | None) -> bool:
    return owners is None or job.owner in owners


def page(records: Sequence[StoredJob], now: datetime, page_size: int, *,
         status: str | None = None, trigger: str | None = None,
         owners: Sequence[str] | None = None, hours: float | None = None,
         search: str | None = None, offset: int = 0,
         limit: int | None = None) -> list[StoredJob]:
    """The page of `records` (in submission order) a query asks for: newest first."""
    since = _since(now, hours)
    needle = None if search is None else search.casefold()
    matching = [
        job for job in reversed(records)
        if (status is None or job.status == status)
        and (trigger is None or job.trigger == trigger)
        and _owned(job, owners)
        and (since is None or job.submitted_at >= since)
        and (needle is None or (job.error is not None and needle in job.error.casefold()))]
    size = page_size if limit is None else min(limit, page_size)
    return matching[offset:offset + size]


def stats(records: Sequence[StoredJob], now: datetime, hours: float | None = None,
          owners: Sequence[str] | None = None) -> dict[str, int]:
    """Total, succeeded and failed within the window; running and queued at any age."""
    since = _since(now, hours)
    mine = [job for job in records if _owned(job, owners)]
    recent = [job for job in mine if since is None or job.submitted_at >= since]
    return {"total": len(recent),
            "succeeded": sum(job.status == SUCCEEDED for job in recent),
            "failed": sum(job.status == FAILED for job in recent),
            "running": sum(job.status == RUNNING for job in mine),
            "queued": sum(job.status == QUEUED for job in mine)}
