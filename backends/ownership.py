"""Who may write a running job, and how a rescuer takes one back: the ownership rules that
the step runtime and the threaded worker both follow, over any job store.

- **Owners.** A claim hands its owner the job's new fencing token (`StoredJob.fencing_token`,
  the number of claims so far). Every owner write (an outcome, a heartbeat, the owner's own
  re-queue for a retry) is conditioned on the job still running under that token. Once a
  rescue has re-queued the job and another worker has claimed it, the old owner's writes are
  refused (RD-006), whatever it still believes.
- **Rescuers.** Stuck detection and lease passes read the running jobs, pick the silent ones
  (heartbeat strictly before the cutoff: ST-003, RD-005) and move each with ONE
  compare-and-set on status, token and heartbeat as read. A re-claim or a heartbeat that
  lands between the read and the write wins; a second rescuer racing the first finds the job
  moved and writes nothing. The re-delivery count written is the count read plus one, exact
  because the write only lands while the read is still current (RD-002, RD-004).
- **Cancellers** ask for a running job's cancellation with the token they read: a request
  reaches the delivery the canceller saw, or none, and the canceller reads the job again
  (a re-queued job is cancelled as queued, a re-claimed one asked again). Every write to a
  running job names a token; the stores refuse one that does not.
- **The reaper** deletes terminal jobs only (RP-004). Terminal states are absorbing, so its
  list-then-delete needs no token.

A store that drops these conditions is the gallery's `sql_without_fencing`.
"""

from __future__ import annotations

import builtins
import copy
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from jobconform.backends.store import CANCELLED, FAILED, QUEUED, RUNNING, SUCCEEDED, StoredJob
from jobconform.reference.lifecycle import POISON_ERROR, STUCK_ERROR, JsonValue


class OwnedStore(Protocol):
    """The store calls ownership needs (a subset of `JobStore`)."""

    def list(self, status: str | None = None) -> builtins.list[StoredJob]: ...

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None: ...


class Alerts(Protocol):
    def raise_once(self, job_id: str) -> bool: ...


# -- silence -----------------------------------------------------------------------------------


def silence_cutoff(now: datetime, seconds: float) -> datetime:
    """A job whose last heartbeat is strictly before this instant is silent past `seconds`."""
    return now - timedelta(seconds=seconds)


def is_silent(job: StoredJob, cutoff: datetime) -> bool:
    """Silent since strictly before the cutoff: exactly the timeout old is not yet silent
    (ST-003, RD-005)."""
    return job.last_heartbeat is not None and job.last_heartbeat < cutoff


def silent_jobs(store: OwnedStore, cutoff: datetime) -> builtins.list[StoredJob]:
    """Running jobs silent since before the cutoff, as read now: a rescuer's candidates.
    The read may be stale by the time the rescuer writes; `rescue` copes with that."""
    return [job for job in store.list(RUNNING) if is_silent(job, cutoff)]


# -- an owner's writes -------------------------------------------------------------------------


def owner_write(store: OwnedStore, job_id: str, token: int,
                **changes: Any) -> StoredJob | None:
    """Change a job its caller owns: only if it is still running under the caller's token.

    Returns:
        The new record, or None when the job ended, was rescued or was claimed again since
        the caller's claim: the caller no longer owns it and must let go.
    """
    return store.update(job_id, RUNNING, expected={"fencing_token": token}, **changes)


def finish(store: OwnedStore, job_id: str, token: int, status: str, now: datetime,
           result: JsonValue = None, error: str | None = None) -> StoredJob | None:
    """The owner records its body's outcome (LC-003: a late one is absorbed)."""
    return owner_write(store, job_id, token, status=status, finished_at=now,
                       result=copy.deepcopy(result), error=error)


def heartbeat(store: OwnedStore, job_id: str, token: int,
              now: datetime) -> StoredJob | None:
    """The owner's body reports progress; renews the lease of the owner's delivery only."""
    return owner_write(store, job_id, token, last_heartbeat=now)


def write_as_owner(store: OwnedStore, job_id: str, token: int, write: str,
                   now: datetime) -> bool:
    """One owner write of the kind the kit's `StaleOwnerWrite` names: "outcome" (the body
    returned), "failure" (it raised) or "heartbeat". True if the store accepted it."""
    if write == "heartbeat":
        return heartbeat(store, job_id, token, now) is not None
    if write == "failure":
        return finish(store, job_id, token, FAILED, now,
                      error="RuntimeError: reported by a superseded delivery") is not None
    return finish(store, job_id, token, SUCCEEDED, now,
                  result="reported by a superseded delivery") is not None


def requeue_for_retry(store: OwnedStore, job: StoredJob, token: int,
                      next_attempt_at: datetime) -> StoredJob | None:
    """The owner sends its failed attempt back to the queue (RT-003), one retry spent."""
    return owner_write(store, job.job_id, token, status=QUEUED,
                       retry_count=job.retry_count + 1, next_attempt_at=next_attempt_at,
                       worker_id=None)


def request_cancellation(store: OwnedStore, seen: StoredJob) -> StoredJob | None:
    """A caller asks the running delivery it read to stop (LC-013); its owner moves the job.

    Returns:
        The new record, or None when that delivery ended or was taken back since the read:
        the caller reads the job again and cancels what it finds.
    """
    return store.update(seen.job_id, RUNNING, expected={"fencing_token": seen.fencing_token},
                        cancel_requested=True)


# -- a rescuer's writes ------------------------------------------------------------------------


def rescue(store: OwnedStore, seen: StoredJob, **changes: Any) -> StoredJob | None:
    """Move a running job a rescuer found silent, in one compare-and-set on what it saw:
    still running, same token (no re-claim since), same heartbeat (no sign of life since).

    Returns:
        The new record, or None when the job moved meanwhile and the rescue is void.
    """
    return store.update(seen.job_id, RUNNING,
                        expected={"fencing_token": seen.fencing_token,
                                  "last_heartbeat": seen.last_heartbeat},
                        **changes)


def fail_stuck(store: OwnedStore, seen: StoredJob, now: datetime) -> StoredJob | None:
    """Stuck detection fails a silent job (ST-002)."""
    return rescue(store, seen, status=FAILED, finished_at=now, error=STUCK_ERROR)


def below_cap(seen: StoredJob, max_redelivery: float) -> bool:
    """A lapsed lease re-queues the job while its count is below the cap (RD-001, RD-002)."""
    return seen.redelivery_count < max_redelivery


def redeliver(store: OwnedStore, seen: StoredJob) -> StoredJob | None:
    """A lapsed lease sends the job back to the queue under its id, one more re-delivery
    counted (RD-001)."""
    return rescue(store, seen, status=QUEUED, worker_id=None,
                  redelivery_count=seen.redelivery_count + 1)


def park(store: OwnedStore, seen: StoredJob, now: datetime,
         alerts: Alerts) -> StoredJob | None:
    """At the cap: the operator alert first (once per id), then fail the job as poison
    (RD-003).

    Two writes, so that a crash between them loses no alert and doubles none (RD-007): the
    job is first marked alerted while it still runs, then the alert is raised, then the job
    is failed. A job found marked already (a pass that died before failing it) is only
    failed: its alert was raised, and a restarted rescuer knows that from the store alone.
    """
    if not seen.alerted:
        marked = rescue(store, seen, alerted=True)
        if marked is None:
            return None
        alerts.raise_once(seen.job_id)
        seen = marked
    return rescue(store, seen, status=FAILED, poisoned=True, error=POISON_ERROR,
                  finished_at=now)


def stop_as_seen(store: OwnedStore, seen: StoredJob, now: datetime) -> StoredJob | None:
    """The runtime's shutdown cancels a queued or running job as it read it (LC-022):
    a job claimed again since the read is left to its new delivery."""
    return store.update(seen.job_id, seen.status,
                        expected={"fencing_token": seen.fencing_token},
                        status=CANCELLED, finished_at=now)


# -- recovery without an operator --------------------------------------------------------------


@dataclass
class RecoverySchedule:
    """When a worker runs its own lease passes: every `interval` of the worker's clock, so a
    dead worker's jobs come back within lease + interval without anyone scheduling a pass.

    Args:
        lease_seconds: silence after which a running job's lease has lapsed.
        interval: clock time between two passes.
        next_pass: when the next pass is due.
    """

    lease_seconds: float
    interval: timedelta
    next_pass: datetime

    @classmethod
    def starting(cls, now: datetime, lease_seconds: float,
                 interval_seconds: float) -> RecoverySchedule:
        """The first pass is one interval after `now`."""
        interval = timedelta(seconds=interval_seconds)
        return cls(lease_seconds, interval, now + interval)

    def due(self, now: datetime) -> bool:
        return now >= self.next_pass

    def passed(self, now: datetime) -> None:
        """A pass ran at `now`: the next one is the first boundary after it (passes the
        clock skipped are not run one by one: one pass sees every lapsed lease)."""
        while self.next_pass <= now:
            self.next_pass += self.interval
