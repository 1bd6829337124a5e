"""The executions query and its statistics (LC-032..LC-034): which held jobs a page
holds, and the counts over a window of hours. Pure functions of the held records, in
listing order, and the clock's reading.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime, timedelta

from jobconform.reference.lifecycle import JobState, Status


def window_start(now: datetime, hours: float) -> datetime:
    """The earliest submission a window of `hours` keeps: a job submitted exactly then is
    inside (LC-033)."""
    return now - timedelta(hours=hours)


def matches(job: JobState, now: datetime, *, status: str | None = None,
            trigger: str | None = None, owners: Collection[str] | None = None,
            hours: float | None = None, search: str | None = None) -> bool:
    """Whether `job` passes every filter given (LC-033); None leaves a filter out."""
    return ((status is None or job.status.value == status)
            and (trigger is None or job.trigger == trigger)
            and (owners is None or job.owner in owners)
            and (hours is None or job.submitted_at >= window_start(now, hours))
            and (search is None or (job.error is not None
                                    and search.casefold() in job.error.casefold())))


def page(jobs: Mapping[str, JobState], now: datetime, page_size: int, *,
         offset: int = 0, limit: int | None = None, status: str | None = None,
         trigger: str | None = None, owners: Collection[str] | None = None,
         hours: float | None = None, search: str | None = None) -> list[str]:
    """The keys of the page's jobs (LC-032): the matching jobs newest first (`jobs` is in
    listing order, oldest first), from `offset`, at most `limit` and never more than
    `page_size`."""
    size = page_size if limit is None else min(limit, page_size)
    newest_first = [key for key, job in reversed(list(jobs.items()))
                    if matches(job, now, status=status, trigger=trigger, owners=owners,
                               hours=hours, search=search)]
    return newest_first[offset:offset + size]


def stats(jobs: Collection[JobState], now: datetime, hours: float | None = None,
          owners: Collection[str] | None = None) -> dict[str, int]:
    """The execution statistics (LC-034): total, succeeded and failed within the window,
    running and queued whatever the age; all of them for `owners` only, if given."""
    mine = [job for job in jobs if owners is None or job.owner in owners]
    recent = [job for job in mine if hours is None
              or job.submitted_at >= window_start(now, hours)]
    return {"total": len(recent),
            "succeeded": sum(job.status is Status.SUCCEEDED for job in recent),
            "failed": sum(job.status is Status.FAILED for job in recent),
            "running": sum(job.status is Status.RUNNING for job in mine),
            "queued": sum(job.status is Status.QUEUED for job in mine)}
