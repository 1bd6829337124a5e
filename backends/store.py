"""The job store: where runtimes keep job records, in memory or in a database.

A runtime (the deterministic step runtime, the threaded worker runtime) decides *when*
things happen; a store keeps the records and makes each change atomic. Every write that
moves a job is conditioned on the state the writer expects, so a stale worker cannot
overwrite a job that was cancelled or rescued meanwhile (LC-003), and a claim hands each
queued job to exactly one worker.

Each claim also issues the job a new fencing token (`fencing_token`, the number of claims
so far). A running job's owner writes only with the token its claim returned, and a rescuer
writes only if the token and heartbeat it read are still there, so neither can overwrite a
delivery that began after its own view (RD-006; the rules are in
`jobconform.backends.ownership`). A store refuses a write to a running job that names no
token at all (`check_fenced`).

Records are frozen values: a store never hands out something a caller could mutate.
"""

from __future__ import annotations

import builtins
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from jobconform.backends.faults import WriteFaults
from jobconform.backends.protocol import CapacityExceeded
from jobconform.reference.faults import StoreFault
from jobconform.reference.lifecycle import JsonValue

QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED = (
    "queued", "running", "succeeded", "failed", "cancelled"
)
STATUSES = (QUEUED, RUNNING, SUCCEEDED, FAILED, CANCELLED)
TERMINAL = frozenset({SUCCEEDED, FAILED, CANCELLED})


@dataclass(frozen=True)
class StoredJob:
    """One job record as a store keeps it."""

    job_id: str
    status: str
    submitted_at: datetime
    started_at: datetime | None = None
    finished_at: datetime | None = None
    result: JsonValue = None
    error: str | None = None
    worker_id: str | None = None
    last_heartbeat: datetime | None = None
    cancel_requested: bool = False
    # Retry (spec area "retry"): attempts taken, the budget and per-task policy, and when a
    # job waiting in backoff becomes eligible again (it stays queued meanwhile).
    retry_count: int = 0
    max_retries: int = 0
    retry_policy: JsonValue = None
    next_attempt_at: datetime | None = None
    # Re-delivery (spec area "redelivery"): lease expiries so far, and poison parking.
    redelivery_count: int = 0
    alerted: bool = False
    poisoned: bool = False
    # Ownership fencing (RD-006): claims so far. Every claim issues the next number, and
    # nothing else changes it, so a writer holding an older one holds a stale delivery.
    fencing_token: int = 0
    # What the submission named: who the job runs for and what started it (LC-033), and
    # the execution options its body is handed (LC-035).
    owner: str | None = None
    trigger: str | None = None
    options: JsonValue = None
    # The job's arguments, a JSON value (LC-036): kept as submitted, handed to its body.
    arguments: JsonValue = None

    @property
    def attempt_number(self) -> int:
        """Seed 004's earlier Python name of retry_count, kept read-only as a deprecated
        alias (capability deprecated-aliases, RT-011)."""
        return self.retry_count


# What `update` may change: everything but the identity and the fencing token.
CHANGEABLE_FIELDS = frozenset(field.name for field in fields(StoredJob)) - {
    "job_id", "fencing_token"}


def check_changes(changes: Mapping[str, Any]) -> None:
    """Raises:
        TypeError: `changes` names something `update` may not change."""
    unknown = set(changes) - CHANGEABLE_FIELDS
    if unknown:
        raise TypeError(f"update cannot change {sorted(unknown)}; it changes these"
                        f" StoredJob fields: {sorted(CHANGEABLE_FIELDS)}")


def check_fenced(expected_status: str, expected: Mapping[str, Any] | None) -> None:
    """A running job is owned: a write to it names the delivery it is for (RD-006).

    Without the token, a write meant for one delivery lands on whichever delivery holds
    the job when it arrives: the outcome, heartbeat or cancel request meant for a delivery
    that a rescue took away would change the job another worker has claimed since. The
    store refuses such a write whatever the job's state, so a writer that forgets the
    token fails at once, not only when a re-claim happens to race it.

    Raises:
        TypeError: a write conditioned on `running` without an expected fencing_token.
    """
    if expected_status == RUNNING and "fencing_token" not in (expected or {}):
        raise TypeError("a write to a running job needs the token of the delivery it is"
                        " for: pass expected={'fencing_token': <the token claimed or read>}"
                        " (jobconform.backends.ownership has the owner's and the"
                        " rescuer's writes)")


class JobStore(Protocol):
    """The store contract every runtime is written against."""

    def add(self, job: StoredJob, max_records: int | None) -> None:
        """Insert a new queued job, atomically with the task-cap check.

        Raises:
            CapacityExceeded: the store already holds `max_records` records.
        """
        ...

    def get(self, job_id: str) -> StoredJob | None:
        """The record, or None for an unknown id."""
        ...

    def list(self, status: str | None = None) -> builtins.list[StoredJob]:
        """Records in submission order, optionally of one status only."""
        ...

    def claim(self, worker_id: str, limit: int, now: datetime) -> builtins.list[StoredJob]:
        """Atomically move up to `limit` of the oldest eligible queued jobs to running.

        Eligible: queued, and next_attempt_at unset or at or before `now`. The claim sets
        started_at and last_heartbeat to `now` and worker_id, and raises fencing_token by
        one: the returned records carry the token their new owner writes with. Two workers
        claiming at once never receive the same job.
        """
        ...

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        """Change a record only if its status is still `expected_status` and every field in
        `expected` still holds the value given there, in one atomic compare-and-set.

        An owner passes `expected={"fencing_token": <its claim's token>}`; a rescuer the
        token and last_heartbeat it read; a canceller the token it read. A write to a
        running job without a token is refused (`check_fenced`). fencing_token itself is
        not changeable: only a claim issues one.

        Returns:
            The updated record, or None when the job is gone, in another state, or any
            expected field has moved.

        Raises:
            TypeError: a field that is not changeable, or a write to a running job
                without an expected fencing_token.
        """
        ...

    def delete_terminal(self, finished_at_or_before: datetime) -> int:
        """Delete terminal jobs whose finished_at (else submitted_at) is at or before the
        cutoff; return how many were deleted."""
        ...

    def counts(self) -> Mapping[str, int]:
        """The number of records per status, read in one atomic snapshot."""
        ...

    def list_expired(self, before: datetime) -> builtins.list[StoredJob]:
        """Terminal records finished strictly before `before`, in submission order
        (seed 004 `TaskStore.list_expired`; RP-003)."""
        ...

    def delete(self, job_id: str) -> None:
        """Remove the record; an unknown id is a no-op (seed 004 `TaskStore.delete`)."""
        ...

    def park_request(self, agent: str, request_id: str) -> str:
        """Park `agent`'s operator request `request_id` (RD-008), atomically: a new
        request under a newly minted id if `agent` holds none under `request_id`, else
        nothing changes.

        Returns:
            The id of the request held under (agent, request_id).
        """
        ...

    def operator_requests(self) -> builtins.list[tuple[str, str, str]]:
        """Every parked request as (id, agent, request id), in the order first parked."""
        ...

    def close(self) -> None:
        ...


@runtime_checkable
class FaultableJobStore(Protocol):
    """A job store with an injection point for store faults (`jobconform.backends.faults`):
    the shipped ones, for RD-007 and RP-008."""

    def inject_fault(self, fault: StoreFault | None) -> None:
        """Arm (None: disarm) a fault for the writes from now on."""
        ...

    def fault_struck(self) -> bool:
        """Whether the fault armed last met its write."""
        ...


class InMemoryJobStore:
    """A dict under one lock: the store of the memory and threaded backends.

    Every write (add, claim, update, delete, delete_terminal) passes the store's injection
    point first, so a planned fault strikes before anything of that write changes.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[str, StoredJob] = {}
        self._faults = WriteFaults()
        # The operator queue (RD-008): each request's id under its key, in parking order.
        self._requests: dict[tuple[str, str], str] = {}

    def inject_fault(self, fault: StoreFault | None) -> None:
        self._faults.arm(fault)

    def fault_struck(self) -> bool:
        return self._faults.struck()

    def add(self, job: StoredJob, max_records: int | None) -> None:
        self._faults.before_write()
        with self._lock:
            if max_records is not None and len(self._jobs) >= max_records:
                raise CapacityExceeded(
                    f"task cap of {max_records} held records reached; run cleanup"
                )
            self._jobs[job.job_id] = job

    def get(self, job_id: str) -> StoredJob | None:
        with self._lock:
            return self._jobs.get(job_id)

    def list(self, status: str | None = None) -> builtins.list[StoredJob]:
        with self._lock:
            return [job for job in self._jobs.values() if status is None or job.status == status]

    def claim(self, worker_id: str, limit: int, now: datetime) -> builtins.list[StoredJob]:
        self._faults.before_write()
        with self._lock:
            claimed: builtins.list[StoredJob] = []
            for job in self._jobs.values():
                if len(claimed) >= limit:
                    break
                eligible = job.next_attempt_at is None or job.next_attempt_at <= now
                if job.status == QUEUED and eligible:
                    claimed.append(replace(job, status=RUNNING, started_at=now,
                                           worker_id=worker_id, last_heartbeat=now,
                                           fencing_token=job.fencing_token + 1))
            for job in claimed:
                self._jobs[job.job_id] = job
            return claimed

    def update(self, job_id: str, expected_status: str, *,
               expected: Mapping[str, Any] | None = None,
               **changes: Any) -> StoredJob | None:
        check_changes(changes)
        check_fenced(expected_status, expected)
        self._faults.before_write()
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.status != expected_status:
                return None
            if any(getattr(job, name) != value for name, value in (expected or {}).items()):
                return None
            updated = replace(job, **changes)
            self._jobs[job_id] = updated
            return updated

    def delete_terminal(self, finished_at_or_before: datetime) -> int:
        self._faults.before_write()
        with self._lock:
            expired = [job_id for job_id, job in self._jobs.items()
                       if self._expired(job, finished_at_or_before)]
            for job_id in expired:
                del self._jobs[job_id]
            return len(expired)

    @staticmethod
    def _expired(job: StoredJob, cutoff: datetime) -> bool:
        """Cleanup's rule (LC-019, LC-020): terminal, and finished at or before the cutoff."""
        return job.status in TERMINAL and (job.finished_at or job.submitted_at) <= cutoff

    def list_expired(self, before: datetime) -> builtins.list[StoredJob]:
        with self._lock:
            return [job for job in self._jobs.values() if self._finished_before(job, before)]

    @staticmethod
    def _finished_before(job: StoredJob, before: datetime) -> bool:
        """list_expired's rule (RP-003): terminal, and finished strictly before."""
        return (job.status in TERMINAL and job.finished_at is not None
                and job.finished_at < before)

    def delete(self, job_id: str) -> None:
        self._faults.before_write()
        with self._lock:
            self._jobs.pop(job_id, None)

    def counts(self) -> Mapping[str, int]:
        with self._lock:
            counts = dict.fromkeys(STATUSES, 0)
            for job in self._jobs.values():
                counts[job.status] += 1
            return counts

    def park_request(self, agent: str, request_id: str) -> str:
        with self._lock:
            return self._requests.setdefault((agent, request_id), str(uuid.uuid4()))

    def operator_requests(self) -> builtins.list[tuple[str, str, str]]:
        with self._lock:
            return [(minted, agent, request_id)
                    for (agent, request_id), minted in self._requests.items()]

    def close(self) -> None:
        with self._lock:
            self._jobs.clear()
            self._requests.clear()
