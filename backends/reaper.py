"""The reaper runtimes share: a sweep schedule driven by the runtime's clock (RP-001..RP-007).

The reaper does not own a thread. Whoever drives the runtime (the step runtime's
`settle`, a worker's poll loop) calls `run_due(now)`, which runs one sweep for each
interval boundary the clock has reached, each with its own boundary as the sweep's time.
A sweep holds the reaper's lock from start to end, so `stop` from another thread waits
for the sweep in flight (RP-007).
"""

from __future__ import annotations

import builtins
import math
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from jobconform.backends.deprecation import warn_deprecated
from jobconform.backends.log_records import library_logger
from jobconform.backends.protocol import OperatorSink, ReaperAlreadyRunning, StoreUnavailable
from jobconform.backends.store import StoredJob

LOG = library_logger("jobconform.reaper")


def current_reaper_settings(ttl_seconds: float | None, sweep_interval_ms: float | None,
                            interval_seconds: float | None, max_age_seconds: float | None
                            ) -> tuple[float | None, float | None]:
    """start_reaper's TTL and sweep interval, from seed 004's current keywords or its
    deprecated Python ones, each of which warns (RP-010): `interval_seconds` is the sweep
    interval in seconds (hence times 1000), `max_age_seconds` the TTL under its old name."""
    if interval_seconds is not None:
        warn_deprecated("start_reaper(interval_seconds=...)",
                        "sweep_interval_ms (note the unit: milliseconds)")
        sweep_interval_ms = interval_seconds * 1000
    if max_age_seconds is not None:
        warn_deprecated("start_reaper(max_age_seconds=...)", "ttl_seconds")
        ttl_seconds = max_age_seconds
    return ttl_seconds, sweep_interval_ms


class ExpiringStore(Protocol):
    """The two store calls a sweep makes: seed 004's `TaskStore.list_expired` and `delete`."""

    def list_expired(self, before: datetime) -> builtins.list[StoredJob]: ...

    def delete(self, job_id: str) -> None: ...


@dataclass
class ReaperCounters:
    sweeps: int = 0
    failed_sweeps: int = 0
    deleted: int = 0


class Reaper:
    """One runtime's reaper: start, stop, run the sweeps that are due.

    Args:
        store: where expired jobs are listed and deleted.
        default_ttl_seconds, default_sweep_interval_ms: the configured defaults (RP-002).
    """

    def __init__(self, store: ExpiringStore, default_ttl_seconds: float,
                 default_sweep_interval_ms: float) -> None:
        self._store = store
        self._default_ttl_seconds = default_ttl_seconds
        self._default_sweep_interval_ms = default_sweep_interval_ms
        self._lock = threading.Lock()  # held for each whole sweep (RP-007)
        self._ttl: timedelta | None = None  # None: not running
        self._interval = timedelta(0)
        self._next_sweep: datetime | None = None
        self._outage_sweeps = 0
        self.counters = ReaperCounters()

    @property
    def running(self) -> bool:
        return self._ttl is not None

    def next_sweep_at(self) -> datetime | None:
        """When the next sweep is due, or None when the reaper is not running."""
        with self._lock:
            return self._next_sweep

    def start(self, now: datetime, ttl_seconds: float | None = None,
              sweep_interval_ms: float | None = None) -> None:
        """Start the schedule: the first sweep is one interval after `now`.

        Raises:
            ReaperAlreadyRunning: it is running; its settings and schedule stay (RP-006).
            ValueError: a negative TTL or an interval that is not positive.
        """
        ttl = self._default_ttl_seconds if ttl_seconds is None else ttl_seconds
        interval = (self._default_sweep_interval_ms if sweep_interval_ms is None
                    else sweep_interval_ms)
        if not (ttl >= 0 and math.isfinite(ttl)):
            raise ValueError(f"the reaper's ttl_seconds must be finite and >= 0, not {ttl!r}")
        if not (interval > 0 and math.isfinite(interval)):
            raise ValueError("the reaper's sweep_interval_ms must be finite and > 0, not"
                             f" {interval!r}")
        with self._lock:
            if self._ttl is not None:
                raise ReaperAlreadyRunning("the reaper is already running; stop it before"
                                           " starting it again")
            self._ttl = timedelta(seconds=ttl)
            self._interval = timedelta(milliseconds=interval)
            self._next_sweep = now + self._interval

    def stop(self) -> bool:
        """Stop after the sweep in flight; True if it was running."""
        with self._lock:
            was_running = self._ttl is not None
            self._ttl = self._next_sweep = None
            return was_running

    def inject_store_outage(self, sweeps: int) -> None:
        """The next `sweeps` sweeps find the store unavailable (fault injection, RP-005)."""
        with self._lock:
            self._outage_sweeps += sweeps

    def run_due(self, now: datetime) -> None:
        """Run every sweep whose boundary is at or before `now`, oldest first."""
        while True:
            with self._lock:
                if self._ttl is None or self._next_sweep is None or self._next_sweep > now:
                    return
                boundary = self._next_sweep
                self._next_sweep = boundary + self._interval
                self._sweep(boundary - self._ttl)

    def _sweep(self, before: datetime) -> None:
        """One sweep; a store failure is logged and left to the next boundary (RP-005).

        The jobs are deleted one by one (seed 004's `TaskStore.delete`): when a delete
        fails, the sweep stops there, and the jobs it deleted before stay deleted and are
        counted (RP-008).
        """
        deleted = 0
        try:
            self._fail_during_outage()
            for job in self._expired_jobs(before):
                self._store.delete(job.job_id)
                deleted += 1
        except StoreUnavailable as error:
            self.counters.failed_sweeps += 1
            self.counters.deleted += deleted
            LOG.warning("reaper sweep failed, retrying at the next sweep: %s", error)
            return
        self.counters.sweeps += 1
        self.counters.deleted += deleted
        if deleted:
            self._log_deleted(deleted)

    def _log_deleted(self, count: int) -> None:
        """A sweep that deleted jobs: at DEBUG, as it runs every few minutes (RP-009)."""
        LOG.debug("reaper deleted %d expired job(s)", count, extra={"count": count})

    def _fail_during_outage(self) -> None:
        """Raise as an unreachable store would while an injected outage lasts."""
        if self._outage_sweeps:
            self._outage_sweeps -= 1
            raise StoreUnavailable("the job store is unavailable (injected outage)")

    def _expired_jobs(self, before: datetime) -> builtins.list[StoredJob]:
        return self._store.list_expired(before)

    def status(self) -> dict[str, object]:
        with self._lock:
            return {"running": self._ttl is not None, "sweeps": self.counters.sweeps,
                    "failed_sweeps": self.counters.failed_sweeps,
                    "deleted": self.counters.deleted}


class OperatorAlerts:
    """The operator queue parking writes to: one alert per job id, in order (RD-003)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._job_ids: list[str] = []
        self.sink: OperatorSink | None = None  # the harness's, when it attached one

    def raise_once(self, job_id: str) -> bool:
        """Raise the alert for `job_id` unless it was raised already; True if new."""
        with self._lock:
            if job_id in self._job_ids:
                return False
            self._job_ids.append(job_id)
            sink = self.sink
        if sink is not None:
            sink.alert(job_id)  # outside the lock: the sink may read the runtime
        return True

    def job_ids(self) -> list[str]:
        with self._lock:
            return list(self._job_ids)
