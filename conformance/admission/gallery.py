"""The admission part of the self-test gallery: seed 002's capacity manager with one bug each.

Each broken backend is the memory backend whose admission runtime has one rule changed the
way a real capacity manager got it wrong, or easily could. The lifecycle parts stay
correct, so only the admission checks can catch these.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Any, cast

from jobconform.backends.admission.memory import InMemoryAdmissionStore
from jobconform.backends.admission.protocol import CeilingView
from jobconform.backends.admission.runtime import (
    LOG,
    AdmissionService,
    AdmissionStore,
    CallRow,
    ExecutionRow,
    OwnerRow,
    SettingsReadFailed,
)
from jobconform.backends.admission.threaded import ThreadedAdmissionRuntime
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import Clock
from jobconform.backends.threaded import ThreadedBackend
from jobconform.conformance.gallery import GalleryEntry, over_new_store
from jobconform.reference import admission as spec
from jobconform.reference.admission import AdmissionConfig

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []
threaded_entry = over_new_store(GALLERY, ThreadedBackend, "open_admission", "new_admission_store")
admission_entry = over_new_store(GALLERY, MemoryBackend, "open_admission", InMemoryAdmissionStore)


@admission_entry("admission_overbooking", "AD-004", "seed 002 §10.8.1 canary S-02")
class OverbookingService(AdmissionService):
    """A slot counts as free while the running count is at most the cap (<= for <), so
    every owner runs one execution more than its effective cap."""

    def _has_free_slot(self, row: OwnerRow, running: int) -> bool:
        return running <= self._effective_cap(row)


@admission_entry("admission_ceiling_per_runtime", "AD-027",
                 "seed 002 §10.8.1 no per-process cache, the backend runs --workers 2")
class CeilingPerRuntimeService(AdmissionService):
    """Counts the slots in use among the work this runtime started, as a capacity manager
    keeping its counters in process memory does. Alone it admits right; with a second
    runtime over the same store, each admits up to the cap (AD-027)."""

    def __init__(self, store: InMemoryAdmissionStore, clock: Clock,
                 config: AdmissionConfig) -> None:
        self._mine: set[str] = set()
        super().__init__(store, clock, config)

    def _started(self, row: ExecutionRow) -> None:
        self._mine.add(row.execution_id)

    def _has_free_slot(self, row: OwnerRow, running: int) -> bool:
        mine = sum(1 for execution in self._store.executions(row.name, spec.RUNNING)
                   if execution.execution_id in self._mine)
        return mine < self._effective_cap(row)


@admission_entry("admission_expires_at_max_age", "AD-008",
                 "issue 18: exact boundaries (strictly longer than the maximum age)")
class ExpiresAtMaxAgeService(AdmissionService):
    """A maintenance pass expires queued work that has waited backlog_max_age_seconds or
    longer (>= for >): work exactly at the maximum age, which must stay, expires one
    tick early."""

    def _outlived_backlog(self, waited: timedelta) -> bool:
        return waited >= timedelta(seconds=self._config.backlog_max_age_seconds)


@admission_entry("admission_budget_exhaustion_not_logged", "AD-026",
                 "seed 002 §10.4.2 observability: a warning on timeout")
class SilentBudgetExhaustedService(AdmissionService):
    """A call refused as budget exhausted leaves no log record: the caller gets its 503,
    and the operator's log never says which agent's budget ran out."""

    def _log_budget_exhausted(self, target: str, wait_ms: int) -> None:
        pass


@admission_entry("admission_slot_logged_one_short", "AD-025",
                 "seed 002 §10.4.2 observability: the acquire's in-flight counts")
class SlotCountedBeforeCallService(AdmissionService):
    """The record of a call that got its slot counts the calls in flight as they were
    before it started: agent_inflight and global_inflight one short."""

    def _log_slot_acquired(self, target: str) -> None:
        in_flight = self._store.calls(spec.CALL_IN_FLIGHT)[:-1]
        agent_inflight = sum(1 for c in in_flight if c.target == target)
        LOG.debug("acquired an agent-call slot for %s (agent_inflight=%d,"
                  " global_inflight=%d)", target, agent_inflight, len(in_flight),
                  extra={"agent": target, "agent_inflight": agent_inflight,
                         "global_inflight": len(in_flight)})


@admission_entry("admission_newest_first_drain", "AD-006", "seed 002 §10.8 FIFO backlog")
class NewestFirstDrainService(AdmissionService):
    """A freed slot goes to the newest queued work (a stack popped from the top), not
    the oldest."""

    def _drain_order(self, queued: list[ExecutionRow]) -> list[ExecutionRow]:
        return list(reversed(queued))


@admission_entry("admission_ceiling_rewritten", "AD-003", "seed 002 §10.8.1 clamp-on-use")
class CeilingRewrittenService(AdmissionService):
    """Reading the ceiling 'repairs' an out-of-range stored value by writing the clamped
    one back, so the settings store no longer holds what the admin wrote."""

    def ceiling(self) -> CeilingView:
        view = super().ceiling()
        if view.stored is not None and view.stored != view.in_force:
            self.store_raw_ceiling(view.in_force)
        return view


@admission_entry("admission_ceiling_unclamped", "AD-003", "seed 002 §10.8.1 read-side clamp")
class CeilingUnclampedService(AdmissionService):
    """The stored ceiling is used as it is: a stray 0 stops the fleet, a stray 999
    defeats the host's cap."""

    def _ceiling_in_force(self) -> int:
        try:
            stored = self._stored_ceiling()
        except SettingsReadFailed:
            return super()._ceiling_in_force()  # its one bug is the clamp, not this
        return self._config.fleet_ceiling if stored is None else stored


@admission_entry("admission_early_rejection", "AD-005", "seed 002 §10.8 429 only when full")
class EarlyRejectionService(AdmissionService):
    """Work is refused with 429 one entry early: the last place of the backlog is never
    used (> depth - 1 written as >= depth - 1)."""

    def _backlog_is_full(self, queued: int, depth: int) -> bool:
        return queued >= depth - 1


@admission_entry("admission_cancelled_queued_runs", "AD-007",
                 "seed 002 §10.8 terminate-while-queued")
class CancelledQueuedStaysService(AdmissionService):
    """Cancel only terminates running work: it answers True for queued work but leaves
    it in the backlog, where it later runs."""

    def cancel(self, execution_id: str) -> bool:
        view = self.execution(execution_id)
        if view is not None and view.state == spec.QUEUED:
            return True
        return super().cancel(execution_id)


@admission_entry("admission_delete_keeps_backlog", "AD-009", "seed 002 §10.8 delete cascade")
class DeleteKeepsBacklogService(AdmissionService):
    """Deleting an owner drops the owner but not its backlog rows: its queued work stays
    queued for ever instead of being cancelled."""

    def _cancel_backlog(self, owner: str) -> int:
        return 0  # its one bug: waiting calls and schedules still go as they should


@admission_entry("admission_slot_kept_on_budget_exhausted", "AD-011",
                 "seed 002 §10.4.2 fail-closed-but-fair")
class SlotKeptOnBudgetExhaustedService(AdmissionService):
    """A call refused after the acquire timeout answers 'budget exhausted', but the
    caller's execution keeps its slot, so the same work cannot be retried and the backlog
    behind it never moves."""

    def _time_out_calls(self) -> None:
        timeout = self._config.call_acquire_timeout_seconds
        if timeout == 0:
            return
        now = self._clock.now()
        for call in self._store.calls(spec.CALL_WAITING):
            if now - call.arrived_at >= timedelta(seconds=timeout):
                self._store.save_call(replace(call, state=spec.CALL_REFUSED))


@admission_entry("admission_cached_call_cap", "AD-010", "seed 002 §10.8.1 known limitation")
class CachedCallCapService(AdmissionService):
    """The per-target call limit is sized once, on the first call to a target, and never
    re-read, so a lowered ceiling or cap does not shrink it (seed 002 §10.8.1's known
    limitation of agent_call_limiter)."""

    def __init__(self, store: InMemoryAdmissionStore, clock: Clock,
                 config: AdmissionConfig) -> None:
        super().__init__(store, clock, config)
        self._sized: dict[str, int] = {}

    def _call_cap(self, target: OwnerRow) -> int:
        return self._sized.setdefault(target.name, self._effective_cap(target))


@admission_entry("admission_schedule_cap_unchecked", "AD-013", "seed 002 §35.1")
class ScheduleCapUncheckedService(AdmissionService):
    """A schedule's timeout is checked against the valid range only, not against its
    owner's timeout, so the schedule silently outlasts the owner's cap (seed 002 §35.1,
    before #929)."""

    def _schedule_fits(self, row: OwnerRow, timeout_seconds: int) -> bool:
        return True


@admission_entry("admission_timeout_lowered_past_schedules", "AD-014", "seed 002 §35.1")
class TimeoutLoweredPastSchedulesService(AdmissionService):
    """Lowering an owner's timeout checks only the range, leaving schedules whose
    timeouts now exceed the owner's cap."""

    def _schedules_above(self, owner: str, seconds: int) -> list[tuple[str, int]]:
        return []


@admission_entry("admission_ceiling_change_anonymous", "AD-022",
                 "seed 002 §10.8.1 admin-only, audit-logged ceiling route")
class CeilingChangeAnonymousService(AdmissionService):
    """The ceiling's change is logged without who made it: the record says when the
    ceiling changed and to what, but not which admin set it."""

    def _record_ceiling_change(self, value: int, by: str | None) -> None:
        super()._record_ceiling_change(value, None)


@admission_entry("admission_schedule_timeout_unclamped", "AD-021",
                 "seed 002 §35.1 pre-existing rows left alone")
class ScheduleTimeoutUnclampedService(AdmissionService):
    """Work a schedule dispatches runs under the schedule row's stored timeout, never
    compared with its owner's: a row written before the cap existed outlasts the cap
    until its next edit (seed 002 §35.1's "no retro-validation")."""

    def _scheduled_timeout(self, row: OwnerRow, schedule: str) -> int:
        stored = {s.name: s.timeout_seconds for s in self._store.schedules(row.name)}
        if schedule not in stored:
            return super()._scheduled_timeout(row, schedule)
        return stored[schedule]


@admission_entry("admission_timeout_not_on_drain", "AD-015",
                 "seed 002 §10.7 all execution paths use the agent's timeout")
class TimeoutNotOnDrainService(AdmissionService):
    """The timeout watch is armed only where work is admitted straight into a slot: work
    drained from the backlog (after a finish, a cancel, a timeout, a maintenance pass)
    runs with no deadline, so one path of several escapes the owner's timeout."""

    def _drain(self, owner: str) -> None:
        watched = set(self._watched)
        super()._drain(owner)
        self._watched &= watched


@admission_entry("admission_timeout_override_ignored", "AD-016",
                 "seed 002 §10.7 per-execution override")
class TimeoutOverrideIgnoredService(AdmissionService):
    """A timeout named by the work is validated and then dropped: every execution runs
    under its owner's timeout."""

    def _timeout_for(self, row: OwnerRow, requested: int | None) -> int:
        return row.execution_timeout_seconds


@admission_entry("admission_lease_without_buffer", "AD-017",
                 "seed 002 §10.7 slot TTL of timeout + 5 min")
class LeaseWithoutBufferService(AdmissionService):
    """The slot lease is the timeout itself, without the 5-minute buffer: an orphan's
    slot is reclaimed at its timeout while its body may still be ending, so the owner is
    overbooked."""

    def _lease_seconds(self, row: ExecutionRow) -> int:
        return row.timeout_seconds


@admission_entry("admission_backlog_lost_on_restart", "AD-018",
                 "seed 002 §10.8 durable backlog, orphans drained")
class BacklogLostOnRestartService(AdmissionService):
    """The backlog lives in process memory: a restart drops every queued execution (the
    store shows it cancelled), so work that was answered 'queued' never runs."""

    def restart(self) -> None:
        super().restart()
        with self._operation():
            now = self._clock.now()
            for row in self._store.executions(state=spec.QUEUED):
                self._store.save_execution(replace(row, state=spec.CANCELLED, ended_at=now))


@admission_entry("admission_drain_runs_as_drainer", "AD-019",
                 "seed 002 §10.8 identity captured at enqueue, replayed at drain")
class DrainRunsAsDrainerService(AdmissionService):
    """Drained work runs as whoever freed its slot: the admission that drained it, the
    work whose release callback drained it, or no one for a maintenance pass; the
    identity captured when it arrived is not replayed."""

    def __init__(self, store: InMemoryAdmissionStore, clock: Clock,
                 config: AdmissionConfig) -> None:
        super().__init__(store, clock, config)
        self._actor: str | None = None

    def admit(self, owner: str, execution_id: str, *, timeout_seconds: int | None = None,
              identity: str | None = None, schedule: str | None = None) -> str:
        self._actor = identity
        return super().admit(owner, execution_id, timeout_seconds=timeout_seconds,
                             identity=identity, schedule=schedule)

    def maintain(self) -> int:
        self._actor = None
        return super().maintain()

    def _end(self, execution_id: str, state: str) -> bool:
        row = self._store.execution(execution_id)
        if row is not None:
            self._actor = row.identity
        return super()._end(execution_id, state)

    def _start(self, row: ExecutionRow) -> None:
        super()._start(replace(row, identity=self._actor))


class _ArrivalsInWholeSeconds:
    """A store whose calls are read with their arrivals cut to the whole second, as from
    an epoch-second column; everything else is the store's own."""

    def __init__(self, store: AdmissionStore) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def calls(self, state: str | None = None) -> list[CallRow]:
        return [replace(row, arrived_at=row.arrived_at.replace(microsecond=0))
                for row in self._store.calls(state)]


@admission_entry("admission_call_arrival_in_whole_seconds", "AD-011",
                 "issue 33: time finer than a second (arrivals read in whole seconds)")
class CallArrivalInWholeSecondsService(AdmissionService):
    """The acquire-timeout pass reads waiting calls' arrivals in whole seconds (the
    query's column keeps epoch seconds) and compares them with the precise clock: a call
    that arrived half a second into a second is refused half a second before its timeout
    (issue 33: time finer than a second). The rows it writes are read afresh, whole."""

    def _time_out_calls(self) -> None:
        store = self._store
        self._store = cast(AdmissionStore, _ArrivalsInWholeSeconds(store))
        try:
            super()._time_out_calls()
        finally:
            self._store = store


@admission_entry("admission_ceiling_cached_on_failed_read", "AD-020",
                 "seed 002 §10.8.1 fail-open getter, no per-process cache")
class CeilingCachedOnFailedReadService(AdmissionService):
    """A failed settings read falls back to the last ceiling read (a per-process cache)
    instead of the default, so a ceiling lowered before the failure goes on throttling
    and each worker applies whatever it last saw."""

    def __init__(self, store: InMemoryAdmissionStore, clock: Clock,
                 config: AdmissionConfig) -> None:
        self._last_read = config.fleet_ceiling
        super().__init__(store, clock, config)

    def _stored_ceiling(self) -> int | None:
        stored = super()._stored_ceiling()
        if stored is not None:
            self._last_read = stored
        return stored

    def _ceiling_on_failed_read(self) -> int:
        return self._last_read


@threaded_entry("threaded_admission_prefetch", "AD-004", "seed 004 concurrency tests")
class PrefetchingThreadedRuntime(ThreadedAdmissionRuntime):
    """Real threads: the body of work that joins the backlog starts at once, ahead of its
    slot (a prefetch), while its record still says queued, so more bodies run at once than
    the effective cap allows."""

    def admit(self, owner: str, execution_id: str, *, timeout_seconds: int | None = None,
              identity: str | None = None, schedule: str | None = None) -> str:
        answer = super().admit(owner, execution_id, timeout_seconds=timeout_seconds,
                               identity=identity, schedule=schedule)
        if answer == spec.QUEUED:
            with self._operation():
                row = self._store.execution(execution_id)
            if row is not None:
                self._started(row)
        return answer

    def _started(self, row: ExecutionRow) -> None:
        with self._probe:
            prefetched = row.execution_id in self._releases
        if not prefetched:
            super()._started(row)
