"""The admission area's adapter protocol: what a runtime implements to be checked by AD-xxx.

A backend that claims the `admission` capability has a method
`open_admission(clock, config) -> AdmissionRuntime` returning a fresh, empty runtime per
check: one fleet ceiling (the config's default), no owners, no work. Execution, call and
schedule ids are chosen by the caller (the harness), as an API client names its work; the
runtime keeps them as they are.

A backend that also claims `admission-peers` gives its runtime a method
`open_peer() -> AdmissionRuntime`: a second runtime over the same store, as another worker
of the fleet opens it (AD-027). The harness sends some admissions, finishes and cancels
through it, settles both, restarts both at a `Restart`, closes it first and counts the
bodies of both. It is not a method of the protocol below: no message of the process
protocol carries a second runtime, so a child cannot claim it.

Refusals are exceptions carrying a `detail` dict, the structured body a client branches
on (seed 002 §35.1). The harness compares `detail` with the oracle's answer, so the keys
and values matter; `jobconform.reference.admission` builds each one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from jobconform.backends.protocol import Clock
from jobconform.reference.admission import AdmissionConfig
from jobconform.reference.lifecycle import JsonValue


class AdmissionRefused(ValueError):
    """A request the runtime refuses; `detail` is the structured answer."""

    def __init__(self, detail: dict[str, JsonValue]) -> None:
        super().__init__(", ".join(f"{key}={value!r}" for key, value in detail.items()))
        self.detail = detail


class InvalidSetting(AdmissionRefused):
    """A setting written outside its valid range (the detail names value and range)."""


class UnknownOwner(AdmissionRefused, LookupError):
    """The owner named does not exist (or was deleted)."""


class BacklogFull(AdmissionRefused):
    """HTTP 429: the owner's slots are in use and its backlog holds its depth; retryable."""


class ScheduleTimeoutExceedsCap(AdmissionRefused):
    """A schedule's timeout above its owner's execution timeout (seed 002 §35.1)."""


class TimeoutBelowSchedules(AdmissionRefused):
    """An owner's timeout lowered below some schedules' timeouts; the detail lists them."""


@dataclass(frozen=True)
class CeilingChange:
    """One accepted write of the fleet ceiling (AD-022)."""

    value: int
    by: str | None  # the admin who wrote it, as the write named them
    at: datetime  # when, on the runtime's clock, in UTC


@dataclass(frozen=True)
class CeilingView:
    stored: int | None  # exactly what the settings store holds; None while unreadable
    in_force: int  # the stored value clamped into the valid range


@dataclass(frozen=True)
class OwnerView:
    parallel_cap: int  # stored
    ceiling: int  # the ceiling in force
    effective_cap: int
    running: int
    available_slots: int
    queued: int
    backlog_depth: int
    execution_timeout_seconds: int


@dataclass(frozen=True)
class ExecutionView:
    execution_id: str
    owner: str
    # queued, running, finished, cancelled, expired, budget_exhausted, timed_out,
    # lease_expired
    state: str
    arrived_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    # Added in spec 0.7.0, with defaults so that an adapter built on 0.6 still constructs
    # its views: the timeout fixed on arrival (AD-015, AD-016) and the identity captured
    # then (AD-019).
    timeout_seconds: int | None = None
    identity: str | None = None


@dataclass(frozen=True)
class OwnerSnapshot:
    name: str
    view: OwnerView
    backlog: tuple[str, ...]  # queued execution ids, oldest first
    schedules: tuple[tuple[str, int], ...]  # (name, timeout_seconds), in creation order


@dataclass(frozen=True)
class AdmissionSnapshot:
    """Everything the runtime shows, read at one instant (one transaction)."""

    ceiling: CeilingView
    owners: tuple[OwnerSnapshot, ...]  # in creation order
    executions: tuple[ExecutionView, ...]  # in arrival order
    calls: tuple[tuple[str, str], ...]  # (call id, state), in arrival order


class AdmissionRuntime(Protocol):
    # -- settings ---------------------------------------------------------------------------

    def set_ceiling(self, value: int, *, by: str | None = None) -> None:
        """The admin's validated write of the fleet ceiling, recorded with `by` (the
        admin; the harness passes it only when a check names one) and the time
        (AD-022).

        Raises:
            InvalidSetting: value outside 1..32; nothing changed, nothing recorded.
        """
        ...

    def ceiling_changes(self) -> Sequence[CeilingChange]:
        """Every accepted `set_ceiling`, oldest first, kept in the store: its value, who
        wrote it and when (AD-022). Refused writes and `store_raw_ceiling` are not in it.

        Optional: an adapter without it is reported as not meeting AD-022."""
        ...

    def store_raw_ceiling(self, value: int) -> None:
        """Put `value` into the settings store as is, bypassing validation (a stray value
        from a hand edit or an older release; the runtime must survive it)."""
        ...

    def ceiling(self) -> CeilingView:
        """The stored ceiling and the one in force; reading never rewrites the store.
        While the settings store cannot be read, stored is None and the ceiling in force
        is the config's default (AD-020)."""
        ...

    def fail_settings_reads(self, failing: bool) -> None:
        """Make every read of the settings store fail from now on, or succeed again (a
        fault injection, as `store_raw_ceiling` is). Meanwhile the runtime takes the
        config's default ceiling wherever it needs one and raises nothing (AD-020).

        Optional: an adapter without it is reported as not meeting AD-020."""
        ...

    def add_owner(self, owner: str) -> None:
        """Create an owner with the config's defaults.

        Raises:
            AdmissionRefused: detail {"error": "owner_exists", ...}.
        """
        ...

    def set_parallel_cap(self, owner: str, value: int) -> None:
        """Raises: UnknownOwner; InvalidSetting (outside 1..ceiling in force)."""
        ...

    def set_backlog_depth(self, owner: str, value: int) -> None:
        """Raises: UnknownOwner; InvalidSetting (outside 1..200)."""
        ...

    def set_execution_timeout(self, owner: str, seconds: int) -> None:
        """Raises: UnknownOwner; InvalidSetting (outside 60..7200); TimeoutBelowSchedules."""
        ...

    def owner(self, owner: str) -> OwnerView | None:
        """A snapshot of the owner's settings and slots, or None for an unknown owner."""
        ...

    def owners(self) -> Sequence[str]:
        """Every owner, in creation order."""
        ...

    def delete_owner(self, owner: str) -> int:
        """Delete the owner, cancelling its queued work; return how many were cancelled.

        Raises:
            UnknownOwner.
        """
        ...

    # -- work ---------------------------------------------------------------------------------

    def admit(self, owner: str, execution_id: str, *, timeout_seconds: int | None = None,
              identity: str | None = None, schedule: str | None = None) -> str:
        """Admit new work: returns "running" (it has a slot) or "queued" (in the backlog).

        Args:
            timeout_seconds: the work's own timeout, overriding its owner's (AD-016);
                the harness passes it only when a check names one.
            identity: whom the work acts for, kept with it and used when it starts,
                whoever frees the slot (AD-019); passed only when a check names one.
            schedule: the owner's schedule that dispatched the work, which runs under
                the schedule's timeout clamped to the owner's timeout now, whatever
                the schedule row holds (AD-021); passed only when a check names one,
                never with timeout_seconds.

        A running execution that reaches its timeout is ended as "timed_out" by the
        runtime that started it (AD-015); see `settle` and `restart`.

        Raises:
            UnknownOwner; InvalidSetting (timeout_seconds outside 60..the owner's
            timeout); AdmissionRefused (unknown_schedule: the owner has no such
            schedule); BacklogFull (nothing was recorded in any case).
        """
        ...

    def finish(self, execution_id: str) -> bool:
        """A running execution ends; True if it was running (its slot frees, backlog
        drains), else False."""
        ...

    def cancel(self, execution_id: str) -> bool:
        """Cancel queued or running work; True if it was queued or running, else False."""
        ...

    def execution(self, execution_id: str) -> ExecutionView | None: ...

    def executions(self) -> Sequence[ExecutionView]:
        """Every execution ever admitted (not refused), in arrival order."""
        ...

    def backlog(self, owner: str) -> Sequence[str]:
        """The owner's queued execution ids, oldest first (empty for an unknown owner)."""
        ...

    def maintain(self) -> int:
        """One maintenance pass: expire stale backlog entries (returning how many), then
        drain every backlog into free slots and start waiting calls that now fit."""
        ...

    # -- calls ----------------------------------------------------------------------------------

    def start_call(self, call_id: str, execution_id: str, target: str) -> str:
        """A running execution calls `target`: returns "in_flight" or "waiting".

        Raises:
            AdmissionRefused: detail caller_not_running or caller_busy; UnknownOwner (target).
        """
        ...

    def end_call(self, call_id: str) -> bool:
        """An in-flight call returns; True if it was in flight, else False."""
        ...

    def call_state(self, call_id: str) -> str | None:
        """in_flight, waiting, ended, withdrawn or budget_exhausted; None if unknown."""
        ...

    # -- schedules --------------------------------------------------------------------------------

    def add_schedule(self, owner: str, schedule: str, timeout_seconds: int) -> None:
        """Raises: UnknownOwner; AdmissionRefused (schedule_exists); InvalidSetting;
        ScheduleTimeoutExceedsCap."""
        ...

    def change_schedule(self, owner: str, schedule: str, timeout_seconds: int) -> None:
        """Raises: UnknownOwner; AdmissionRefused (unknown_schedule); InvalidSetting;
        ScheduleTimeoutExceedsCap."""
        ...

    def remove_schedule(self, owner: str, schedule: str) -> None:
        """Raises: UnknownOwner; AdmissionRefused (unknown_schedule)."""
        ...

    def store_raw_schedule(self, owner: str, schedule: str, timeout_seconds: int) -> None:
        """Put a schedule row of an existing owner into the store as is, around the
        check of AD-013 (a row written before the owner's timeout became its ceiling;
        the timeout is within 60..7200). The runtime keeps it as stored and clamps the
        work it dispatches (AD-021).

        Optional: an adapter without it is reported as not meeting AD-021."""
        ...

    def schedules(self, owner: str) -> Sequence[tuple[str, int]]:
        """(name, timeout_seconds) of the owner's schedules, in creation order."""
        ...

    def snapshot(self) -> AdmissionSnapshot:
        """The ceiling, every owner with its backlog and schedules, every execution and
        every call, all read at one instant; the harness compares it after each command."""
        ...

    # -- time and lifetime -------------------------------------------------------------------------

    def settle(self) -> None:
        """Return once everything due at the clock's current time has happened, in this
        order: waiting calls past the acquire timeout are refused and their callers
        released (AD-011); then, in arrival order, running executions this runtime started
        that reached their timeout end as "timed_out" (AD-015), and running executions it
        did not start (orphans of a restart) whose lease, timeout + 300 s, lapsed end as
        "lease_expired" (AD-017); every ending drains its owner's backlog."""
        ...

    def restart(self) -> None:
        """Act as the runtime's process restarting over the same store (AD-018): bodies
        and the timeout watch of running work are lost (that work stays running, as
        orphans whose slots only their leases free), everything stored stays, queued
        work keeps its place, timeout and identity.

        Optional: an adapter without it is reported as not meeting AD-018 (and the
        checks that restart), nothing else."""
        ...

    def close(self) -> None: ...


class AdmissionBackend(Protocol):
    def open_admission(self, clock: Clock, config: AdmissionConfig) -> AdmissionRuntime:
        """A fresh, empty admission runtime using `clock` for every timestamp."""
        ...
