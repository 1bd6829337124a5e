"""The shipped admission runtime: seed 002's capacity manager over any admission store.

The rules live here once; where the state lives is the store's business (a dict in
memory, tables in SQL). Every operation runs in one store transaction under one lock,
so the running count an admission checks cannot change before it records its decision:
that is what keeps the cap from being overbooked when threads admit at once.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Protocol

from jobconform.backends.admission import terms
from jobconform.backends.admission.protocol import (
    AdmissionRefused,
    AdmissionSnapshot,
    BacklogFull,
    CeilingChange,
    CeilingView,
    ExecutionView,
    InvalidSetting,
    OwnerSnapshot,
    OwnerView,
    ScheduleTimeoutExceedsCap,
    TimeoutBelowSchedules,
    UnknownOwner,
)
from jobconform.backends.log_records import library_logger
from jobconform.backends.protocol import Clock
from jobconform.reference.admission import AdmissionConfig

LOG = library_logger("jobconform.admission")


@dataclass(frozen=True)
class OwnerRow:
    name: str
    parallel_cap: int
    backlog_depth: int
    execution_timeout_seconds: int
    seq: int


@dataclass(frozen=True)
class ExecutionRow:
    execution_id: str
    owner: str
    state: str
    arrived_at: datetime
    started_at: datetime | None
    ended_at: datetime | None
    seq: int
    timeout_seconds: int  # fixed on arrival (AD-015, AD-016)
    identity: str | None  # captured on arrival, used at start (AD-019)


@dataclass(frozen=True)
class CallRow:
    call_id: str
    execution_id: str
    target: str
    state: str
    arrived_at: datetime
    seq: int


@dataclass(frozen=True)
class CeilingChangeRow:
    value: int
    set_by: str | None
    set_at: datetime
    seq: int


@dataclass(frozen=True)
class ScheduleRow:
    owner: str
    name: str
    timeout_seconds: int
    seq: int


class AdmissionStore(Protocol):
    """Rows of the admission area; every list is in `seq` (arrival or creation) order."""

    def transaction(self) -> AbstractContextManager[None]: ...
    def version(self) -> int | None:
        """A number that every write through this store moves, or None where writes may
        come from elsewhere (another process's session): while it stands, what was read
        still holds."""
        ...
    def next_seq(self) -> int: ...
    def read_ceiling(self) -> int | None: ...
    def write_ceiling(self, value: int) -> None: ...
    def record_ceiling_change(self, row: CeilingChangeRow) -> None: ...
    def ceiling_changes(self) -> list[CeilingChangeRow]: ...
    def owner(self, name: str) -> OwnerRow | None: ...
    def owners(self) -> list[OwnerRow]: ...
    def save_owner(self, row: OwnerRow) -> None: ...
    def remove_owner(self, name: str) -> None: ...
    def execution(self, execution_id: str) -> ExecutionRow | None: ...
    def executions(self, owner: str | None = None,
                   state: str | None = None) -> list[ExecutionRow]: ...
    def save_execution(self, row: ExecutionRow) -> None: ...
    def call(self, call_id: str) -> CallRow | None: ...
    def calls(self, state: str | None = None) -> list[CallRow]: ...
    def save_call(self, row: CallRow) -> None: ...
    def schedules(self, owner: str) -> list[ScheduleRow]: ...
    def save_schedule(self, row: ScheduleRow) -> None: ...
    def remove_schedule(self, owner: str, name: str) -> None: ...
    def reopen(self) -> AdmissionStore:
        """The same durable rows through a new store object, as a restarted process
        opens them; this object is not used again."""
        ...
    def peer(self) -> AdmissionStore:
        """The same durable rows through a second store object, as another worker of the
        fleet opens them while this one stays in use (AD-027)."""
        ...
    def close(self) -> None: ...


class SettingsReadFailed(OSError):
    """The settings store could not be read (injected by `fail_settings_reads`)."""


def clamp_into(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def _check_range(setting: str, value: int, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidSetting(terms.refusal("invalid_setting", setting=setting, value=value,
                                           min=low, max=high))


class AdmissionService:
    """The admission runtime over a store; see backends/admission/protocol.py.

    What lives only in this object, not in the store, is what a restart loses: which
    running executions this process started and watches for their timeout (`_watched`).
    """

    _drain_held = False  # see hold_drain
    _locked: _Locked | None = None  # see _operation
    _lease_reclaim_held = False  # see hold_lease_reclaim

    def __init__(self, store: AdmissionStore, clock: Clock, config: AdmissionConfig) -> None:
        self._store = store
        self._clock = clock
        self._config = config
        self._lock = threading.RLock()
        self._watched: set[str] = set()
        self._settings_failing = False
        # execution id -> the latest row read and its view (see `_view`)
        self._views: dict[str, tuple[ExecutionRow, ExecutionView]] = {}
        # (store, its version, every execution's view then): see `executions`
        self._listed: tuple[AdmissionStore, int, tuple[ExecutionView, ...]] | None = None
        # What a settle that found nothing to do depended on: see `settle`
        self._nothing_due: tuple[AdmissionStore, int, datetime, bool, int] | None = None
        with self._operation():
            if self._store.read_ceiling() is None:
                self._store.write_ceiling(config.fleet_ceiling)

    def _operation(self) -> AbstractContextManager[None]:
        # One guard per lock and store, reused: every read is an operation. It may be
        # shared by threads, as it touches its state only while it holds the lock.
        locked = self._locked
        if locked is None or locked.lock is not self._lock or locked.store is not self._store:
            locked = self._locked = _Locked(self._lock, self._store)
        return locked

    # -- the ceiling and owners ---------------------------------------------------------

    def _stored_ceiling(self) -> int | None:
        """The settings store's ceiling.

        Raises:
            SettingsReadFailed: the store cannot be read.
        """
        if self._settings_failing:
            raise SettingsReadFailed("the settings store cannot be read")
        return self._store.read_ceiling()

    def _ceiling_on_failed_read(self) -> int:
        """The ceiling in force while the settings cannot be read: the default (AD-020)."""
        return self._config.fleet_ceiling

    def _ceiling_in_force(self) -> int:
        try:
            stored = self._stored_ceiling()
        except SettingsReadFailed:
            # Fail open, as seed 002's getter does: dispatch goes on at the default.
            return clamp_into(self._ceiling_on_failed_read(), *terms.CEILING_RANGE)
        # A missing setting reads as the default as well.
        return clamp_into(self._config.fleet_ceiling if stored is None else stored,
                          *terms.CEILING_RANGE)

    def _ceiling_view(self) -> CeilingView:
        try:
            stored = self._stored_ceiling()
        except SettingsReadFailed:
            return CeilingView(None, self._ceiling_in_force())
        return CeilingView(self._config.fleet_ceiling if stored is None else stored,
                           self._ceiling_in_force())

    def fail_settings_reads(self, failing: bool) -> None:
        with self._operation():
            self._settings_failing = failing

    def _owner_row(self, owner: str) -> OwnerRow:
        row = self._store.owner(owner)
        if row is None:
            raise UnknownOwner(terms.refusal("unknown_owner", owner=owner))
        return row

    def _effective_cap(self, row: OwnerRow) -> int:
        return min(row.parallel_cap, self._ceiling_in_force())

    def set_ceiling(self, value: int, *, by: str | None = None) -> None:
        _check_range("fleet_ceiling", value, *terms.CEILING_RANGE)
        with self._operation():
            self._store.write_ceiling(value)
            self._record_ceiling_change(value, by)

    def _record_ceiling_change(self, value: int, by: str | None) -> None:
        """Who changed the ceiling and when, with the write itself (AD-022)."""
        self._store.record_ceiling_change(CeilingChangeRow(
            value, by, self._clock.now(), self._store.next_seq()))

    def ceiling_changes(self) -> Sequence[CeilingChange]:
        with self._operation():
            return [CeilingChange(row.value, row.set_by, row.set_at)
                    for row in self._store.ceiling_changes()]

    def store_raw_ceiling(self, value: int) -> None:
        with self._operation():
            self._store.write_ceiling(value)

    def ceiling(self) -> CeilingView:
        with self._operation():
            return self._ceiling_view()

    def add_owner(self, owner: str) -> None:
        with self._operation():
            if self._store.owner(owner) is not None:
                raise AdmissionRefused(terms.refused("owner_exists", owner))
            self._store.save_owner(OwnerRow(owner, self._config.parallel_cap,
                                            self._config.backlog_depth,
                                            self._config.execution_timeout_seconds,
                                            self._store.next_seq()))

    def set_parallel_cap(self, owner: str, value: int) -> None:
        with self._operation():
            row = self._owner_row(owner)
            _check_range("parallel_cap", value, 1, self._ceiling_in_force())
            self._store.save_owner(replace(row, parallel_cap=value))

    def set_backlog_depth(self, owner: str, value: int) -> None:
        with self._operation():
            row = self._owner_row(owner)
            _check_range("backlog_depth", value, *terms.BACKLOG_DEPTH_RANGE)
            self._store.save_owner(replace(row, backlog_depth=value))

    def set_execution_timeout(self, owner: str, seconds: int) -> None:
        with self._operation():
            row = self._owner_row(owner)
            _check_range("execution_timeout_seconds", seconds, *terms.TIMEOUT_RANGE)
            blocking = self._schedules_above(owner, seconds)
            if blocking:
                raise TimeoutBelowSchedules(terms.refusal(
                    "agent_timeout_below_active_schedules", requested_seconds=seconds,
                    max_schedule_timeout_seconds=blocking[0][1],
                    schedules=[{"schedule": name, "timeout_seconds": timeout}
                               for name, timeout in blocking]))
            self._store.save_owner(replace(row, execution_timeout_seconds=seconds))

    def _owner_view(self, row: OwnerRow) -> OwnerView:
        effective = self._effective_cap(row)
        running = len(self._store.executions(row.name, terms.RUNNING))
        return OwnerView(row.parallel_cap, self._ceiling_in_force(), effective, running,
                         max(0, effective - running),
                         len(self._store.executions(row.name, terms.QUEUED)),
                         row.backlog_depth, row.execution_timeout_seconds)

    def owner(self, owner: str) -> OwnerView | None:
        with self._operation():
            row = self._store.owner(owner)
            return None if row is None else self._owner_view(row)

    def snapshot(self) -> AdmissionSnapshot:
        with self._operation():
            # Each table is read once: a snapshot is taken after every command of a check.
            ceiling = self._ceiling_view()
            in_force = ceiling.in_force
            executions = self._store.executions()
            owners = []
            for row in self._store.owners():
                mine = [e for e in executions if e.owner == row.name]
                running = sum(1 for e in mine if e.state == terms.RUNNING)
                backlog = tuple(e.execution_id for e in mine if e.state == terms.QUEUED)
                effective = min(row.parallel_cap, in_force)
                view = OwnerView(row.parallel_cap, in_force, effective, running,
                                 max(0, effective - running), len(backlog), row.backlog_depth,
                                 row.execution_timeout_seconds)
                schedules = tuple((s.name, s.timeout_seconds)
                                  for s in self._store.schedules(row.name))
                owners.append(OwnerSnapshot(row.name, view, backlog, schedules))
            return AdmissionSnapshot(
                ceiling,
                tuple(owners), tuple(_view(row) for row in executions),
                tuple((c.call_id, c.state) for c in self._store.calls()))

    def owners(self) -> Sequence[str]:
        with self._operation():
            return [row.name for row in self._store.owners()]

    def delete_owner(self, owner: str) -> int:
        with self._operation():
            self._owner_row(owner)
            cancelled = self._cancel_backlog(owner)
            for call in self._store.calls(terms.CALL_WAITING):
                if call.target == owner:
                    self._store.save_call(replace(call, state=terms.CALL_WITHDRAWN))
            for schedule in self._store.schedules(owner):
                self._store.remove_schedule(owner, schedule.name)
            self._store.remove_owner(owner)
            return cancelled

    def _cancel_backlog(self, owner: str) -> int:
        """Cancel a deleted owner's queued work (AD-009); returns how much there was."""
        now = self._clock.now()
        queued = self._store.executions(owner, terms.QUEUED)
        for row in queued:
            self._store.save_execution(replace(row, state=terms.CANCELLED, ended_at=now))
        return len(queued)

    # -- work ---------------------------------------------------------------------------------

    def _start(self, row: ExecutionRow) -> None:
        """Give `row` a slot: it runs from now, as the identity it arrived with, and this
        process watches its timeout, whichever path started it (AD-015, AD-019)."""
        self._store.save_execution(replace(row, state=terms.RUNNING,
                                           started_at=self._clock.now()))
        self._watched.add(row.execution_id)
        self._started(row)

    def _started(self, row: ExecutionRow) -> None:
        """Hook for runtimes that run a body per execution (the threaded one): the
        execution now holds a slot."""

    def _ended(self, row: ExecutionRow) -> None:
        """Hook: the execution gave up its slot."""

    # -- the rules, one overridable predicate each (the self-test gallery breaks them) ----

    def _has_free_slot(self, row: OwnerRow, running: int) -> bool:
        return running < self._effective_cap(row)

    def _backlog_is_full(self, queued: int, depth: int) -> bool:
        return queued >= depth

    def _drain_order(self, queued: list[ExecutionRow]) -> list[ExecutionRow]:
        return queued  # oldest first

    def _call_cap(self, target: OwnerRow) -> int:
        """How many calls to `target` may be in flight: its effective cap, read live."""
        return self._effective_cap(target)

    def _schedule_fits(self, row: OwnerRow, timeout_seconds: int) -> bool:
        return timeout_seconds <= row.execution_timeout_seconds

    def _schedules_above(self, owner: str, seconds: int) -> list[tuple[str, int]]:
        """The owner's schedules longer than `seconds`, longest first, then by name."""
        return sorted(((s.name, s.timeout_seconds) for s in self._store.schedules(owner)
                       if s.timeout_seconds > seconds), key=lambda s: (-s[1], s[0]))

    def hold_drain(self, held: bool) -> None:
        """While held, no queued work starts, whether a slot frees, new work arrives or
        maintenance runs; expiry goes on. The composite area holds it during a governor's
        pause (CX-004); it is not part of the admission area's protocol."""
        self._drain_held = held

    def hold_lease_reclaim(self, held: bool) -> None:
        """While held, no lapsed lease is reclaimed: an orphan stays running and keeps its
        slot; the timeouts of the work this process runs go on. The composite area holds
        it during a governor's pause (CX-005); it is not part of the admission area's
        protocol."""
        self._lease_reclaim_held = held

    def _timeout_for(self, row: OwnerRow, requested: int | None) -> int:
        """The timeout new work runs under: its own when it names one (AD-016)."""
        return row.execution_timeout_seconds if requested is None else requested

    def _lease_seconds(self, row: ExecutionRow) -> int:
        """How long a slot is held for its execution: timeout + 5 min (AD-017)."""
        return row.timeout_seconds + terms.LEASE_BUFFER_SECONDS

    def _drain(self, owner: str) -> None:
        row = self._store.owner(owner)
        if row is None or self._drain_held:
            return
        for queued in self._drain_order(self._store.executions(owner, terms.QUEUED)):
            if not self._has_free_slot(row, len(self._store.executions(owner, terms.RUNNING))):
                break
            self._start(queued)

    def _scheduled_timeout(self, row: OwnerRow, schedule: str) -> int:
        """The timeout of work a schedule dispatches: the schedule's, clamped to its
        owner's now (AD-021). A row stored above the owner's timeout before the rule
        stays as stored; only the work is clamped."""
        stored = {s.name: s.timeout_seconds for s in self._store.schedules(row.name)}
        if schedule not in stored:
            raise AdmissionRefused(terms.refused("unknown_schedule", schedule))
        return min(stored[schedule], row.execution_timeout_seconds)

    def admit(self, owner: str, execution_id: str, *, timeout_seconds: int | None = None,
              identity: str | None = None, schedule: str | None = None) -> str:
        with self._operation():
            row = self._owner_row(owner)
            if self._store.execution(execution_id) is not None:
                raise AdmissionRefused(terms.refused("execution_exists", execution_id))
            if timeout_seconds is not None:
                _check_range("timeout_seconds", timeout_seconds, terms.TIMEOUT_RANGE[0],
                             row.execution_timeout_seconds)
            if schedule is not None:
                timeout = self._scheduled_timeout(row, schedule)
            else:
                timeout = self._timeout_for(row, timeout_seconds)
            self._drain(owner)
            now = self._clock.now()
            new = ExecutionRow(execution_id, owner, terms.QUEUED, now, None, None,
                               self._store.next_seq(), timeout, identity)
            queued = self._store.executions(owner, terms.QUEUED)
            running = len(self._store.executions(owner, terms.RUNNING))
            if not queued and self._has_free_slot(row, running):
                self._start(new)
                return terms.RUNNING
            if self._backlog_is_full(len(queued), row.backlog_depth):
                raise BacklogFull(terms.refusal(
                    "backlog_full", owner=owner, backlog_depth=row.backlog_depth, retryable=True))
            self._store.save_execution(new)
            return terms.QUEUED

    def _end(self, execution_id: str, state: str) -> bool:
        row = self._store.execution(execution_id)
        if row is None or row.state != terms.RUNNING:
            return False
        self._store.save_execution(replace(row, state=state, ended_at=self._clock.now()))
        self._watched.discard(execution_id)
        self._ended(row)
        for call in self._store.calls():
            if call.execution_id == execution_id and call.state in (terms.CALL_IN_FLIGHT,
                                                                     terms.CALL_WAITING):
                ended = (terms.CALL_ENDED if call.state == terms.CALL_IN_FLIGHT
                         else terms.CALL_WITHDRAWN)
                self._store.save_call(replace(call, state=ended))
        self._drain(row.owner)
        self._promote_calls()
        return True

    def finish(self, execution_id: str) -> bool:
        with self._operation():
            return self._end(execution_id, terms.FINISHED)

    def cancel(self, execution_id: str) -> bool:
        with self._operation():
            row = self._store.execution(execution_id)
            if row is not None and row.state == terms.QUEUED:
                self._store.save_execution(replace(row, state=terms.CANCELLED,
                                                   ended_at=self._clock.now()))
                return True
            return self._end(execution_id, terms.CANCELLED)

    def execution(self, execution_id: str) -> ExecutionView | None:
        with self._operation():
            row = self._store.execution(execution_id)
            return None if row is None else self._view_of(row)

    def executions(self) -> Sequence[ExecutionView]:
        """Every execution's view, in arrival order. While the store's version stands
        the list read last is handed out again: the composite area reads it after every
        command, and most commands change no execution. That check takes no lock (the
        views are frozen; see `version`)."""
        store = self._store
        listed = self._listed
        if listed is not None and listed[0] is store and listed[1] == store.version():
            return listed[2]
        with self._operation():
            store = self._store
            version = store.version()
            views = tuple([self._view_of(row) for row in store.executions()])
            if version is not None:
                self._listed = (store, version, views)
            return views

    def version(self) -> int | None:
        """A number that moves whenever what this runtime shows may have changed, or
        None when it cannot tell (another process may write the store): a reader may
        keep what it read while the number stands. Not part of the area's protocol.
        Read without the lock: a reader racing a write sees the number before it, as if
        it had read just before the write."""
        return self._store.version()

    def _view_of(self, row: ExecutionRow) -> ExecutionView:
        """The row's view. Rows are frozen and a store hands out the same row until the
        execution is saved again (the memory store does), so a row's view is kept for as
        long as the row is handed out: the composite area reads every execution after
        every command, and most have not changed."""
        kept = self._views.get(row.execution_id)
        if kept is not None and kept[0] is row:
            return kept[1]
        view = _view(row)
        self._views[row.execution_id] = (row, view)
        return view

    def backlog(self, owner: str) -> Sequence[str]:
        with self._operation():
            return [row.execution_id for row in self._store.executions(owner, terms.QUEUED)]

    def maintain(self) -> int:
        with self._operation():
            now = self._clock.now()
            stale = [row for row in self._store.executions(state=terms.QUEUED)
                     if self._outlived_backlog(now - row.arrived_at)]
            for row in stale:
                self._store.save_execution(replace(row, state=terms.EXPIRED, ended_at=now))
            for owner in self._store.owners():
                self._drain(owner.name)
            self._promote_calls()
            return len(stale)

    def _outlived_backlog(self, waited: timedelta) -> bool:
        """Whether queued work that has waited this long expires: only strictly past the
        maximum age (AD-008)."""
        return waited > timedelta(seconds=self._config.backlog_max_age_seconds)

    # -- calls ----------------------------------------------------------------------------------

    def _call_fits(self, target: str) -> bool:
        row = self._store.owner(target)
        if row is None:
            return False
        in_flight = self._store.calls(terms.CALL_IN_FLIGHT)
        return (len(in_flight) < self._config.call_limit
                and sum(1 for c in in_flight if c.target == target) < self._call_cap(row))

    def _promote_calls(self) -> None:
        for call in self._store.calls(terms.CALL_WAITING):
            if self._call_fits(call.target):
                self._store.save_call(replace(call, state=terms.CALL_IN_FLIGHT))
                self._log_slot_acquired(call.target)

    def _log_slot_acquired(self, target: str) -> None:
        """A call just started (AD-025): on the hot path, so at DEBUG."""
        in_flight = self._store.calls(terms.CALL_IN_FLIGHT)
        agent_inflight = sum(1 for c in in_flight if c.target == target)
        LOG.debug("acquired an agent-call slot for %s (agent_inflight=%d,"
                  " global_inflight=%d)", target, agent_inflight, len(in_flight),
                  extra={"agent": target, "agent_inflight": agent_inflight,
                         "global_inflight": len(in_flight)})

    def start_call(self, call_id: str, execution_id: str, target: str) -> str:
        with self._operation():
            if self._store.call(call_id) is not None:
                raise AdmissionRefused(terms.refused("call_exists", call_id))
            caller = self._store.execution(execution_id)
            if caller is None or caller.state != terms.RUNNING:
                raise AdmissionRefused(terms.refused("caller_not_running", execution_id))
            open_states = (terms.CALL_IN_FLIGHT, terms.CALL_WAITING)
            if any(c.execution_id == execution_id and c.state in open_states
                   for c in self._store.calls()):
                raise AdmissionRefused(terms.refused("caller_busy", execution_id))
            self._owner_row(target)
            waiting = self._store.calls(terms.CALL_WAITING)
            state = (terms.CALL_IN_FLIGHT if not waiting and self._call_fits(target)
                     else terms.CALL_WAITING)
            self._store.save_call(CallRow(call_id, execution_id, target, state,
                                          self._clock.now(), self._store.next_seq()))
            if state == terms.CALL_IN_FLIGHT:
                self._log_slot_acquired(target)
            return state

    def end_call(self, call_id: str) -> bool:
        with self._operation():
            call = self._store.call(call_id)
            if call is None or call.state != terms.CALL_IN_FLIGHT:
                return False
            self._store.save_call(replace(call, state=terms.CALL_ENDED))
            self._promote_calls()
            return True

    def call_state(self, call_id: str) -> str | None:
        with self._operation():
            call = self._store.call(call_id)
            return None if call is None else call.state

    def settle(self) -> None:
        """Time out the calls and the executions due at the clock's time. A settle that
        wrote nothing found nothing due; while what it looked at stands (the rows, the
        time, the lease reaper's hold, the work this process watches) the next finds
        nothing either, and is skipped: the composite area settles after every command.
        That check takes no lock (see `version`)."""
        if self._nothing_due is not None and self._looked_at() == self._nothing_due:
            return
        with self._operation():
            looked_at = self._looked_at()
            if looked_at is not None and looked_at == self._nothing_due:
                return
            self._time_out_calls()
            self._time_out_executions()
            # It wrote nothing (what it looked at stands): nothing was due.
            self._nothing_due = looked_at if self._looked_at() == looked_at else None

    def _looked_at(self) -> tuple[AdmissionStore, int, datetime, bool, int] | None:
        """What a settle that finds nothing due depends on, where the store has a
        version."""
        store = self._store
        version = store.version()
        return None if version is None else (store, version, self._clock.now(),
                                             self._lease_reclaim_held, len(self._watched))

    def _log_budget_exhausted(self, target: str, wait_ms: int) -> None:
        """A call refused after waiting (AD-026): at WARNING, as an operator acts on it."""
        LOG.warning("call budget exhausted for %s after %dms", target, wait_ms,
                    extra={"agent": target, "wait_ms": wait_ms})

    def _time_out_calls(self) -> None:
        timeout = self._config.call_acquire_timeout_seconds
        if timeout == 0:
            return  # calls wait for ever
        now = self._clock.now()
        for call in self._store.calls(terms.CALL_WAITING):
            current = self._store.call(call.call_id)
            if current is None or current.state != terms.CALL_WAITING:
                continue
            if now - call.arrived_at >= timedelta(seconds=timeout):
                self._store.save_call(replace(current, state=terms.CALL_REFUSED))
                self._log_budget_exhausted(call.target,
                                           (now - call.arrived_at) // timedelta(milliseconds=1))
                # The caller's execution slot is released so the work can be retried.
                self._end(call.execution_id, terms.BUDGET_EXHAUSTED)

    def _time_out_executions(self) -> None:
        """Stop the work this process runs once it reaches its timeout (AD-015); reclaim
        the slot of work it does not run (an orphan of a restart) once the lease lapses
        (AD-017), unless the lease reaper is held (`hold_lease_reclaim`). Arrival order;
        each ending drains its owner's backlog."""
        now = self._clock.now()
        for row in self._store.executions(state=terms.RUNNING):
            current = self._store.execution(row.execution_id)
            if current is None or current.state != terms.RUNNING or current.started_at is None:
                continue
            ran = now - current.started_at
            if (current.execution_id in self._watched
                    and ran >= timedelta(seconds=current.timeout_seconds)):
                self._end(current.execution_id, terms.TIMED_OUT)
            elif (not self._lease_reclaim_held
                  and ran >= timedelta(seconds=self._lease_seconds(current))):
                self._end(current.execution_id, terms.LEASE_EXPIRED)

    def restart(self) -> None:
        """A process restart over the same store (AD-018): the new process reads every
        row back and watches nothing; the bodies of running work are not its own."""
        with self._lock:
            self._store = self._store.reopen()
            self._watched.clear()
            self._restarted()

    def _restarted(self) -> None:
        """Hook: the process's bodies are gone (the threaded runtime lets them go)."""

    def open_peer(self) -> AdmissionService:
        """A second runtime over the same store, as another worker of the fleet opens it
        (AD-027): every count it admits by is read from the shared rows, so the two never
        run more of an owner's work at once than its effective cap.

        The peer is opened in this process, so it shares this runtime's lock (across
        processes the store's own transaction serialises: the SQL store locks its
        sequence row first) and the set of running work a live worker watches: work
        either worker started is stopped at its timeout by the fleet, and only work no
        live worker runs (an orphan of a restart) waits for its lease (AD-017)."""
        with self._lock:
            peer = type(self)(self._store.peer(), self._clock, self._config)
            peer._lock = self._lock
            peer._watched = self._watched
            self._joined(peer)
            return peer

    def _joined(self, peer: AdmissionService) -> None:
        """Hook: `peer` now shares this runtime's store (the threaded runtime lets either
        end a body the other runs)."""

    # -- schedules --------------------------------------------------------------------------------

    def _write_schedule(self, owner: str, schedule: str, timeout_seconds: int,
                        new: bool) -> None:
        with self._operation():
            row = self._owner_row(owner)
            existing = {s.name: s for s in self._store.schedules(owner)}
            if new and schedule in existing:
                raise AdmissionRefused(terms.refused("schedule_exists", schedule))
            if not new and schedule not in existing:
                raise AdmissionRefused(terms.refused("unknown_schedule", schedule))
            _check_range("schedule_timeout_seconds", timeout_seconds, *terms.TIMEOUT_RANGE)
            if not self._schedule_fits(row, timeout_seconds):
                raise ScheduleTimeoutExceedsCap(terms.refusal(
                    "schedule_timeout_exceeds_agent_cap",
                    agent_cap_seconds=row.execution_timeout_seconds,
                    requested_seconds=timeout_seconds))
            seq = self._store.next_seq() if new else existing[schedule].seq
            self._store.save_schedule(ScheduleRow(owner, schedule, timeout_seconds, seq))

    def add_schedule(self, owner: str, schedule: str, timeout_seconds: int) -> None:
        self._write_schedule(owner, schedule, timeout_seconds, new=True)

    def change_schedule(self, owner: str, schedule: str, timeout_seconds: int) -> None:
        self._write_schedule(owner, schedule, timeout_seconds, new=False)

    def store_raw_schedule(self, owner: str, schedule: str, timeout_seconds: int) -> None:
        """Write a schedule row around the checks, as a release before AD-013 did."""
        with self._operation():
            existing = {s.name: s for s in self._store.schedules(owner)}
            seq = existing[schedule].seq if schedule in existing else self._store.next_seq()
            self._store.save_schedule(ScheduleRow(owner, schedule, timeout_seconds, seq))

    def remove_schedule(self, owner: str, schedule: str) -> None:
        with self._operation():
            self._owner_row(owner)
            if schedule not in {s.name for s in self._store.schedules(owner)}:
                raise AdmissionRefused(terms.refused("unknown_schedule", schedule))
            self._store.remove_schedule(owner, schedule)

    def schedules(self, owner: str) -> Sequence[tuple[str, int]]:
        with self._operation():
            return [(s.name, s.timeout_seconds) for s in self._store.schedules(owner)]

    def close(self) -> None:
        self._store.close()


def _view(row: ExecutionRow) -> ExecutionView:
    return ExecutionView(row.execution_id, row.owner, row.state, row.arrived_at,
                         row.started_at, row.ended_at, row.timeout_seconds, row.identity)


class _Locked(AbstractContextManager[None]):
    """The runtime's lock, then one store transaction inside it."""

    def __init__(self, lock: threading.RLock, store: AdmissionStore) -> None:
        self.lock = lock
        self.store = store
        # The transactions entered, innermost last; only the lock's holder touches them.
        self._transactions: list[AbstractContextManager[None]] = []

    def __enter__(self) -> None:
        self.lock.acquire()
        try:
            transaction = self.store.transaction()
            transaction.__enter__()
            self._transactions.append(transaction)
        except BaseException:
            self.lock.release()
            raise

    def __exit__(self, *exc: object) -> None:
        try:
            self._transactions.pop().__exit__(*exc)  # type: ignore[arg-type]
        finally:
            self.lock.release()
