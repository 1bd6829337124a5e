"""The shipped governor runtime: the governor's rules over a store of shared counters.

Each decision runs inside one atomic store session, so that several processes sharing the
store never accept more than a cap between them and count each result once. The memory
and SQL backends differ only in the store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, TypeVar

from jobconform.backends.breaker.classify import failure_class_of
from jobconform.backends.log_records import library_logger
from jobconform.backends.protocol import Clock
from jobconform.backends.retry_delay import retry_delay_ms
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.governor.oracle import GovernorSettings

# The failure class an agent's HTTP 429 counts as (RG-010), spelled here and not taken
# from the oracle: a backend that used the oracle's constant would agree with it blindly.
RATE_LIMITED_AS = "billing"

LOG = library_logger("jobconform.governor")
T = TypeVar("T")


class GovernorStoreUnavailable(ConnectionError):
    """The governor's store cannot be reached; the runtime fails open (RG-011)."""


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    retry_after_seconds: float | None = None


class GovernorSession(Protocol):
    """One atomic unit of work on the governor's store."""

    def accepted_since(self, since: datetime, target: str | None) -> list[datetime]:
        """When the re-deliveries accepted after `since` were accepted (of `target`, or
        of every target for None), oldest first."""
        ...

    def accept(self, target: str, at: datetime) -> None:
        ...

    def first_sight(self, result_id: str) -> bool:
        """Remember `result_id`; True when it had not been seen before."""
        ...

    def count_failure(self, failure_class: str, target: str, at: datetime) -> None:
        ...

    def failing_targets_since(self, failure_class: str, since: datetime) -> int:
        ...

    def paused_until(self) -> datetime | None:
        ...

    def pause(self, until: datetime) -> None:
        ...


class GovernorStore(Protocol):
    def session(self) -> AbstractContextManager[GovernorSession]:
        """One atomic unit of work; raises GovernorStoreUnavailable when the store
        cannot be reached."""
        ...

    def set_available(self, available: bool) -> None:
        """Fault injection: make the store unreachable, or reachable again."""
        ...

    def peer(self) -> GovernorStore:
        ...

    def close(self) -> None:
        ...


class StoreGovernorRuntime:
    def __init__(self, store: GovernorStore, clock: Clock, settings: GovernorSettings) -> None:
        self._store = store
        self._clock = clock
        self._settings = settings
        # The restart's schedule is the process's own, not the shared store's (RG-009).
        self._sweep_at: datetime | None = None
        self._store_lost = False  # the store failed the latest operation (logged once)
        self._enabled = True  # the master switch; only its read points depend on it (RG-013)

    def redelivery_wait_ms(self, previous_ms: float | None, draw: float,
                           retry_after_ms: float | None) -> float:
        policy = RetryPolicy(retry_delay_ms=self._settings.base_ms,
                             max_retry_delay_ms=self._settings.cap_ms)
        return retry_delay_ms(policy, 0, Jitter.DECORRELATED, draw, previous_ms,
                                retry_after_ms)

    def offer(self, target: str) -> Verdict:
        if not self._enabled:
            return Verdict(True)  # RG-013: switched off, nothing held back or counted
        # RG-011: with the store down, an offer goes out uncounted rather than waiting.
        return self._failing_open("offer", lambda: self._offer(target), Verdict(True))

    def _offer(self, target: str) -> Verdict:
        now = self._clock.now()
        settings = self._settings
        with self._store.session() as session:
            paused = session.paused_until()
            if paused is not None and now < paused:
                return Verdict(False, settings.pause_retry_after_seconds)
            waits = []
            for window_seconds, limit, whose in (
                    (settings.target_window_seconds, settings.target_limit, target),
                    (settings.fleet_window_seconds, settings.fleet_limit, None)):
                window = timedelta(seconds=window_seconds)
                counted = session.accepted_since(now - window, whose)
                if len(counted) >= limit:
                    waits.append((counted[0] + window - now).total_seconds())
            if waits:
                return Verdict(False, max(waits))
            session.accept(target, now)
            return Verdict(True)

    def record_failure(self, target: str, failure_class: str, result_id: str) -> None:
        self._failing_open("record_failure", lambda: self._record_failure(
            target, failure_class, result_id), None)

    def _record_failure(self, target: str, failure_class: str, result_id: str) -> None:
        now = self._clock.now()
        settings = self._settings
        with self._store.session() as session:
            if not session.first_sight(result_id):
                return
            if failure_class not in settings.pause_classes:
                return
            session.count_failure(failure_class, target, now)
            if self._already_paused(session, now):
                return
            since = now - timedelta(seconds=settings.pause_window_seconds)
            if session.failing_targets_since(failure_class, since) >= settings.pause_threshold:
                session.pause(now + timedelta(seconds=settings.pause_ttl_seconds))

    def _already_paused(self, session: GovernorSession, now: datetime) -> bool:
        """A failure during a pause does not arm it again: the pause ends at its TTL."""
        paused = session.paused_until()
        return paused is not None and now < paused

    def record_rate_limited(self, target: str, result_id: str) -> None:
        # The terminal reason stays rate_limit; the class the pause counts is billing.
        self.record_failure(target, RATE_LIMITED_AS, result_id)

    def record_raw_end(self, target: str, result_id: str, signal: str | None,
                       exit_code: int | None, output: bool, error_text: str) -> None:
        # Classed as the breaker classes it: a kill never counts as auth (RG-014).
        self.record_failure(target, self._classify(signal, exit_code, output, error_text),
                            result_id)

    def _classify(self, signal: str | None, exit_code: int | None, output: bool,
                  error_text: str) -> str:
        return failure_class_of(signal, exit_code, output, error_text)

    def paused_until(self) -> datetime | None:
        if not self._enabled:
            return None  # RG-013: the pause is one of the switch's read points
        return self._failing_open("paused_until", self._paused_until, None)

    def _paused_until(self) -> datetime | None:
        now = self._clock.now()
        with self._store.session() as session:
            paused = session.paused_until()
        return paused if paused is not None and now < paused else None

    def set_store_available(self, available: bool) -> None:
        self._store.set_available(available)

    def set_enabled(self, enabled: bool) -> None:
        self._enabled = enabled

    def _failing_open(self, action: str, operation: Callable[[], T], fallback: T) -> T:
        """`operation`, or `fallback` when the store cannot be reached (RG-011); the
        outage is logged once, when this governor first meets it."""
        try:
            answer = operation()
        except GovernorStoreUnavailable as error:
            if not self._store_lost:
                self._store_lost = True
                LOG.warning("governor store unavailable during %s, failing open until it"
                            " answers again: %s", action, error)
            return fallback
        self._store_lost = False
        return answer

    def restart(self, draw: float) -> None:
        delay = timedelta(seconds=draw * self._settings.initial_jitter_max_seconds)
        self._sweep_at = self._clock.now() + delay

    def resend_sweep_at(self) -> datetime | None:
        return self._sweep_at

    def resend_times(self, draws: Sequence[float]) -> list[datetime] | None:
        if self._sweep_at is None:
            return None
        times, at = [], self._sweep_at
        for draw in draws:  # one envelope after another, each after its own wait
            at += timedelta(seconds=draw * self._settings.envelope_jitter_max_seconds)
            times.append(at)
        return times

    def peer(self) -> StoreGovernorRuntime:
        return StoreGovernorRuntime(self._store.peer(), self._clock, self._settings)

    def close(self) -> None:
        self._store.close()


class InMemoryGovernorStore:
    """Lists and dicts under one lock; peers share them, as threads of one process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._accepted: list[tuple[datetime, str]] = []
        self._results: set[str] = set()
        self._failing: dict[tuple[str, str], datetime] = {}
        self._paused_until: datetime | None = None
        self._available = True
        self._session = _InMemorySession(self)

    def session(self) -> AbstractContextManager[InMemoryGovernorStore]:
        return self._session

    def set_available(self, available: bool) -> None:
        with self._lock:
            self._available = available

    def accepted_since(self, since: datetime, target: str | None) -> list[datetime]:
        return [at for at, whose in self._accepted
                if at > since and (target is None or whose == target)]

    def accept(self, target: str, at: datetime) -> None:
        self._accepted.append((at, target))

    def first_sight(self, result_id: str) -> bool:
        if result_id in self._results:
            return False
        self._results.add(result_id)
        return True

    def count_failure(self, failure_class: str, target: str, at: datetime) -> None:
        self._failing[(failure_class, target)] = at

    def failing_targets_since(self, failure_class: str, since: datetime) -> int:
        return sum(1 for (cls, _), at in self._failing.items()
                   if cls == failure_class and at > since)

    def paused_until(self) -> datetime | None:
        return self._paused_until

    def pause(self, until: datetime) -> None:
        self._paused_until = until

    def peer(self) -> InMemoryGovernorStore:
        return self

    def close(self) -> None:
        """Nothing to release."""


class _InMemorySession(AbstractContextManager[InMemoryGovernorStore]):
    """The memory store's session: its lock held, the store itself to work on. One per
    store, entered by each operation in turn (it keeps nothing of its own): the composite
    area reads the pause several times a command."""

    def __init__(self, store: InMemoryGovernorStore) -> None:
        self._store = store

    def __enter__(self) -> InMemoryGovernorStore:
        store = self._store
        store._lock.acquire()
        if not store._available:
            store._lock.release()
            raise GovernorStoreUnavailable("the in-memory governor store is switched off")
        return store

    def __exit__(self, *exc: object) -> None:
        self._store._lock.release()


def open_memory_governor(clock: Clock, settings: GovernorSettings) -> StoreGovernorRuntime:
    return StoreGovernorRuntime(InMemoryGovernorStore(), clock, settings)
