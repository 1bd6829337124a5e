"""The reaper's rules as pure functions: what is expired, and when sweeps happen.

Requirements: RP-002 (sweep boundaries), RP-003 (list_expired is strict and terminal
only), RP-004 (never a queued or running job). Time is always passed in.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from jobconform.reference.lifecycle import JobState


def is_expired(job: JobState, before: datetime) -> bool:
    """list_expired's rule: terminal, and finished strictly before `before` (RP-003)."""
    return (job.status.is_terminal and job.finished_at is not None
            and job.finished_at < before)


@dataclass(frozen=True)
class ReaperSchedule:
    """A running reaper: its settings and the time of its next sweep."""

    ttl: timedelta
    interval: timedelta
    next_sweep: datetime

    @classmethod
    def started(cls, at: datetime, ttl_seconds: float,
                sweep_interval_ms: float) -> ReaperSchedule:
        interval = timedelta(milliseconds=sweep_interval_ms)
        return cls(timedelta(seconds=ttl_seconds), interval, at + interval)


def due_sweeps(schedule: ReaperSchedule, now: datetime) -> Iterator[datetime]:
    """Every sweep boundary at or before `now`, oldest first (RP-002).

    Boundaries are added one interval at a time, so the oracle and a runtime doing the same
    datetime arithmetic agree to the microsecond.
    """
    boundary = schedule.next_sweep
    while boundary <= now:
        yield boundary
        boundary += schedule.interval


def next_after(schedule: ReaperSchedule, now: datetime) -> datetime:
    """The first boundary after `now`."""
    boundary = schedule.next_sweep
    while boundary <= now:
        boundary += schedule.interval
    return boundary


def check_reaper_settings(ttl_seconds: float, sweep_interval_ms: float) -> None:
    """Raise ValueError naming the bad value: a TTL >= 0 and an interval > 0, both finite."""
    if not 0 <= ttl_seconds < float("inf"):
        raise ValueError(f"the reaper's ttl_seconds must be finite and >= 0, not {ttl_seconds!r}")
    if not 0 < sweep_interval_ms < float("inf"):
        raise ValueError("the reaper's sweep_interval_ms must be finite and > 0, not"
                         f" {sweep_interval_ms!r}")
