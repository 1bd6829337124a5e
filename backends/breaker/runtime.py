"""The shipped breaker runtime: breaker logic over a store of rows changed by compare-and-swap.

The memory and SQL backends differ only in the store. Each decision reads a target's row,
works out the new row from it and the clock, and writes it back only if nobody changed
the row in between (its version is still the one read); on a lost race it reads again.
That one rule is what lets several threads or worker processes share one breaker and
still admit exactly one half-open probe (CB-007).

Configuration (the global switch and the per-target opt-ins) is deployment data, not
breaker state: it lives in a `BreakerDeployment` the peers of one check share, as
processes share their environment and the opt-in column of their database. When the store
cannot be reached the runtime fails open and logs each operation it could not complete
(CB-011).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Protocol, TypeVar

from jobconform.backends.breaker.classify import end_report, failure_class_of
from jobconform.backends.log_records import library_logger
from jobconform.backends.protocol import Clock
from jobconform.reference.breaker.oracle import BreakerSettings

LOG = library_logger("jobconform.breaker")
T = TypeVar("T")


class StoreUnavailable(ConnectionError):
    """The breaker's state store cannot be reached."""


@dataclass(frozen=True)
class BreakerRow:
    """One target's stored breaker; `version` grows by one with every write."""

    target: str
    failures: int
    cooldown_seconds: float
    open_until: datetime | None = None
    probe: str | None = None
    probe_until: datetime | None = None
    version: int = 0


@dataclass(frozen=True)
class Readout:
    state: str
    failures: int
    cooldown_seconds: float
    open_until: datetime | None
    probe: str | None


class BreakerStore(Protocol):
    """Where breaker rows and the targets' work queues live.

    The rows are the breaker's state store, which may be unreachable: `load` and `swap`
    then raise `StoreUnavailable`. The queues belong to the job store (seed 002 keeps the
    breaker in Redis and the backlog in its database), which stays reachable here.
    """

    def load(self, target: str) -> BreakerRow | None:
        ...

    def swap(self, expected: BreakerRow | None, new: BreakerRow) -> bool:
        """Write `new` if the stored row is still `expected` (same version; None: no row
        yet). Returns False, writing nothing, when another writer came first."""
        ...

    def enqueue(self, target: str, work: str) -> None:
        ...

    def queued(self, target: str) -> list[str]:
        ...

    def queued_targets(self) -> list[str]:
        """The targets with work queued, each once."""
        ...

    def fail_queued(self, target: str) -> int:
        """Move every piece of work queued for `target` to its failed list, in order;
        answers how many moved."""
        ...

    def failed(self, target: str) -> list[str]:
        ...

    def set_available(self, available: bool) -> None:
        """Fault injection: make `load` and `swap` fail as an unreachable store does."""
        ...

    def close(self) -> None:
        ...


@dataclass
class BreakerDeployment:
    """The configuration every worker of one deployment shares (CB-001)."""

    global_switch: bool = False
    opted_in: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def engaged(self, target: str) -> bool:
        with self.lock:
            return self.global_switch and target in self.opted_in


class StoreBreakerRuntime:
    """A breaker runtime over any `BreakerStore` (see the module docstring)."""

    def __init__(self, store: BreakerStore, clock: Clock, settings: BreakerSettings,
                 deployment: BreakerDeployment | None = None,
                 peer_factory: Callable[[], BreakerStore] | None = None) -> None:
        self._store = store
        self._clock = clock
        self._settings = settings
        self._deployment = deployment if deployment is not None else BreakerDeployment()
        self._peer_factory = peer_factory
        self._outages = 0
        self._outage_lock = threading.Lock()
        self._drain_lost = False
        # The backstop's own schedule, once started (SR-007); never in a commanded check.
        self._next_backstop: datetime | None = None
        self._backstop_interval = timedelta(0)

    # -- configuration -------------------------------------------------------------------

    def set_global_switch(self, on: bool) -> None:
        with self._deployment.lock:
            self._deployment.global_switch = on

    def set_opt_in(self, target: str, on: bool) -> None:
        with self._deployment.lock:
            if on:
                self._deployment.opted_in.add(target)
            else:
                self._deployment.opted_in.discard(target)

    # -- the breaker ---------------------------------------------------------------------

    def admit(self, target: str, call: str) -> str:
        if not self._deployment.engaged(target):
            return "admitted"
        answer = self._change(target, "admit", lambda row, now: self._admission(row, call, now))
        return "admitted" if answer is None else answer

    def record(self, target: str, call: str, outcome: str, failure_class: str | None) -> None:
        if not self._deployment.engaged(target):
            return
        tripped = self._change(target, "record", lambda row, now: self._outcome(
            row, call, outcome, failure_class, now))
        if tripped:
            self._drain(target)

    def record_end(self, target: str, call: str, signal: str | None, exit_code: int | None,
                   output: bool, error_text: str) -> str:
        """Class a failed call's raw end (CB-016, CB-017) and record it as that failure."""
        failure_class = self._classify(signal, exit_code, output, error_text)
        self.record(target, call, "failure", failure_class)
        return failure_class

    def _classify(self, signal: str | None, exit_code: int | None, output: bool,
                  error_text: str) -> str:
        return failure_class_of(signal, exit_code, output, error_text)

    def report_end(self, signal: str | None, exit_code: int | None, output: bool,
                   error_text: str) -> dict[str, object]:
        """The error reported for a failed end (CB-018, CB-019); nothing is recorded."""
        return self._report(self._classify(signal, exit_code, output, error_text), signal,
                            exit_code, output, error_text)

    def _report(self, failure_class: str, signal: str | None, exit_code: int | None,
                output: bool, error_text: str) -> dict[str, object]:
        return end_report(failure_class, signal, exit_code, output, error_text)

    def record_missed_heartbeat(self, target: str) -> None:
        if not self._deployment.engaged(target):
            return
        tripped = self._change(target, "heartbeat", self._missed_heartbeat)
        if tripped:
            self._drain(target)

    def _drain(self, target: str) -> None:
        # The trip has been written: from now on new work is refused, so what is queued
        # is all there is to fail (CB-006). A lost drain leaves it to the backstop (CB-014).
        if not self._drain_lost:
            self._store.fail_queued(target)

    def backstop(self) -> int:
        """The periodic backstop sweep, once (CB-014): the queued work of every engaged
        target whose breaker is open or half-open is failed. A target whose breaker cannot
        be read keeps its work, and the outage is logged."""
        swept = 0
        for target in self._store.queued_targets():
            if not self._deployment.engaged(target):
                continue
            row = self._reach_store("backstop", partial(self._store.load, target))
            if isinstance(row, BreakerRow) and self._backstop_sweeps(row):
                swept += self._store.fail_queued(target)
        return swept

    def _backstop_sweeps(self, row: BreakerRow) -> bool:
        """Whether the backstop fails this breaker's backlog: open or half-open alike."""
        return row.open_until is not None

    def set_drain_lost(self, lost: bool) -> None:
        self._drain_lost = lost

    @property
    def clock(self) -> Clock:
        """The clock the runtime reads (a sweeper thread sleeps on it)."""
        return self._clock

    # -- the backstop on its own schedule (SR-007) -------------------------------------

    def start_backstop(self, interval_seconds: float) -> None:
        """Sweep by itself from now on, at every `interval_seconds` boundary counted from
        now. A step runtime has no thread: `settle` runs the sweep due by the clock, as the
        reference child's job runtime polls on settle (backends/self_running.py)."""
        self._backstop_interval = timedelta(seconds=interval_seconds)
        self._next_backstop = self._clock.now() + self._backstop_interval

    def settle(self) -> None:
        """Run the backstop sweep if a boundary has come; one sweep covers any boundaries
        the clock jumped over (nothing else happened between them)."""
        due = self._next_backstop
        now = self._clock.now()
        if due is None or now < due:
            return
        self.backstop()
        while due <= now:
            due += self._backstop_interval
        self._next_backstop = due

    def enqueue(self, target: str, work: str) -> str:
        if self._deployment.engaged(target):
            row = self._reach_store("enqueue", lambda: self._store.load(target))
            if isinstance(row, BreakerRow) and row.open_until is not None:
                return "refused"  # open or half-open: never enqueued (CB-005)
        self._store.enqueue(target, work)
        return "queued"

    def queued(self, target: str) -> Sequence[str]:
        return tuple(self._store.queued(target))

    def failed_work(self, target: str) -> Sequence[str]:
        return tuple(self._store.failed(target))

    def reset(self, target: str) -> None:
        def closed(row: BreakerRow, now: datetime) -> tuple[None, BreakerRow]:
            return None, self._closed(row)

        self._change(target, "reset", closed)

    def read(self, target: str) -> Readout | None:
        try:
            row = self._store.load(target) or self._fresh(target)
        except StoreUnavailable:
            return None
        now = self._clock.now()
        if row.open_until is None:
            state = "closed"
        else:
            state = "open" if now < row.open_until else "half_open"
        probe = row.probe if self._probe_holds(row, now) else None
        return Readout(state, row.failures, row.cooldown_seconds, row.open_until, probe)

    def logged_outages(self) -> int:
        with self._outage_lock:
            return self._outages

    def set_store_available(self, available: bool) -> None:
        self._store.set_available(available)

    def peer(self) -> StoreBreakerRuntime:
        store = self._peer_factory() if self._peer_factory is not None else self._store
        return StoreBreakerRuntime(store, self._clock, self._settings, self._deployment,
                                   self._peer_factory)

    def close(self) -> None:
        self._store.close()

    # -- decisions, each from one row and the time -------------------------------------

    def _fresh(self, target: str) -> BreakerRow:
        return BreakerRow(target, failures=0, cooldown_seconds=self._settings.cooldown_seconds)

    def _closed(self, row: BreakerRow) -> BreakerRow:
        return BreakerRow(row.target, 0, self._settings.cooldown_seconds, version=row.version)

    @staticmethod
    def _probe_holds(row: BreakerRow, now: datetime) -> bool:
        return row.probe is not None and row.probe_until is not None and now < row.probe_until

    def _admission(self, row: BreakerRow, call: str,
                   now: datetime) -> tuple[str, BreakerRow | None]:
        if row.open_until is None:
            return "admitted", None
        if now < row.open_until or self._probe_holds(row, now):
            return "refused", None
        lease = timedelta(seconds=self._settings.probe_lease_seconds)
        return "probe", replace(row, probe=call, probe_until=now + lease)

    def _outcome(self, row: BreakerRow, call: str, outcome: str, failure_class: str | None,
                 now: datetime) -> tuple[bool, BreakerRow | None]:
        counts = outcome == "failure" and failure_class in self._settings.counted_classes
        if row.open_until is None:
            if outcome == "success":
                return False, (replace(row, failures=0) if row.failures else None)
            if not counts:
                return False, None
            if row.failures + 1 < self._settings.failure_threshold:
                return False, replace(row, failures=row.failures + 1)
            return True, self._opened(row, row.cooldown_seconds, now)
        if row.probe != call or not self._probe_holds(row, now):
            return False, None  # not the probe, or its lease has lapsed (CB-010)
        if outcome == "success":
            return False, self._closed(row)
        if counts:
            cooldown = min(row.cooldown_seconds * self._settings.cooldown_multiplier,
                           self._settings.cooldown_max_seconds)
            return False, self._opened(row, cooldown, now)
        return False, replace(row, probe=None, probe_until=None)

    def _missed_heartbeat(self, row: BreakerRow,
                          now: datetime) -> tuple[bool, BreakerRow | None]:
        """A counted failure while closed, whatever the counted classes; while open or
        half-open no probe's outcome, so nothing changes (CB-015)."""
        if row.open_until is not None:
            return False, None
        if row.failures + 1 < self._settings.failure_threshold:
            return False, replace(row, failures=row.failures + 1)
        return True, self._opened(row, row.cooldown_seconds, now)

    @staticmethod
    def _opened(row: BreakerRow, cooldown: float, now: datetime) -> BreakerRow:
        return BreakerRow(row.target, 0, cooldown, now + timedelta(seconds=cooldown),
                          version=row.version)

    # -- store access ----------------------------------------------------------------------

    def _change(self, target: str, action: str,
                decide: Callable[[BreakerRow, datetime], tuple[T, BreakerRow | None]]) -> T | None:
        """Read, decide, compare-and-swap; again on a lost race. None if the store is down."""

        def attempt() -> T:
            while True:
                stored = self._store.load(target)
                row = stored or self._fresh(target)
                answer, new = decide(row, self._clock.now())
                if new is None:
                    return answer
                if self._store.swap(stored, replace(new, version=row.version + 1)):
                    return answer

        return self._reach_store(action, attempt)

    def _reach_store(self, action: str, operation: Callable[[], T]) -> T | None:
        try:
            return operation()
        except StoreUnavailable as error:
            with self._outage_lock:
                self._outages += 1
            LOG.warning("breaker store unavailable during %s, failing open: %s", action, error)
            return None
