"""The governor gallery: the memory backend with its re-delivery governor broken.

Each entry changes one rule of the shipped governor (or its store) to a mistake the seed's
section 10.11.1 guards against. `jobconform selftest` proves each is caught by every suite,
naming the requirement in `catches`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

from jobconform.backends.governor.runtime import (
    GovernorSession,
    GovernorStore,
    GovernorStoreUnavailable,
    InMemoryGovernorStore,
    StoreGovernorRuntime,
    Verdict,
)
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import Clock
from jobconform.conformance.breaker.gallery import KILL_WORDS
from jobconform.conformance.gallery import GalleryEntry, declares, opener_entry
from jobconform.reference.governor.oracle import GovernorSettings

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []


def _governor_entry(name: str, runtime: type[StoreGovernorRuntime],
                    store: type[InMemoryGovernorStore], catches: str, source: str,
                    bug_of: type) -> GalleryEntry:
    """The memory backend with a broken governor, loadable as `<this module>:<name>`."""
    return opener_entry(__name__, name, MemoryBackend, "open_governor",
                        lambda _, *opened: runtime(store(), *opened), bug_of, catches, source)


@declares(GALLERY)
def runtime_entry(name: str, runtime: type[StoreGovernorRuntime], catches: str,
                  source: str) -> GalleryEntry:
    """A broken governor runtime over the in-memory store."""
    return _governor_entry(name, runtime, InMemoryGovernorStore, catches, source, runtime)


@declares(GALLERY)
def store_entry(name: str, store: type[InMemoryGovernorStore], catches: str,
                source: str) -> GalleryEntry:
    """The shipped governor runtime over a broken store."""
    return _governor_entry(name, StoreGovernorRuntime, store, catches, source, store)


@store_entry("governor_one_target_arms", "RG-006",
             "seed 002 10.11.1: one crash-looper can't arm it")
class OneTargetArmsStore(InMemoryGovernorStore):
    """The pause counts failures, not distinct targets, so one crash-looping target arms a
    fleet-wide pause by itself."""

    def __init__(self) -> None:
        super().__init__()
        self._every_failure: list[tuple[str, datetime]] = []

    def count_failure(self, failure_class: str, target: str, at: datetime) -> None:
        self._every_failure.append((failure_class, at))

    def failing_targets_since(self, failure_class: str, since: datetime) -> int:
        return sum(1 for cls, at in self._every_failure if cls == failure_class and at > since)


@store_entry("governor_replay_counted", "RG-007", "seed 002 10.11.1: no replay double-count")
class ReplayCountedStore(InMemoryGovernorStore):
    """A replayed result is counted again (the failure is recorded before the
    compare-and-set that would reject the replay)."""

    def first_sight(self, result_id: str) -> bool:
        super().first_sight(result_id)
        return True


@runtime_entry("governor_restart_burst", "RG-009",
               "seed 002 10.11.1: one-shot initial jitter of the re-send sweep")
class RestartBurstRuntime(StoreGovernorRuntime):
    """A restart re-sends its pending results at once: the first re-send sweep is due at
    the restart itself, with no initial jitter, so every worker that restarts with the
    backend re-sends in lockstep and the per-envelope jitter only spreads a burst that has
    already started."""

    def restart(self, draw: float) -> None:
        self._sweep_at = self._clock.now()

    def peer(self) -> StoreGovernorRuntime:
        return RestartBurstRuntime(self._store.peer(), self._clock, self._settings)


@runtime_entry("governor_extending_pause", "RG-008", "seed 002 10.11.1: TTL'd pause, auto-expiry")
class ExtendingPauseRuntime(StoreGovernorRuntime):
    """Failures recorded during a pause arm it again, so a long outage keeps re-delivery
    paused well past its TTL instead of letting it resume by itself."""

    def _already_paused(self, session: GovernorSession, now: datetime) -> bool:
        return False


@runtime_entry("governor_drops_refusal", "RG-004",
               "seed 002 10.11.1: 503 + Retry-After, never dropped")
class DroppingRuntime(StoreGovernorRuntime):
    """Over a cap the re-delivery is refused without a retry-after (a 429 the sender
    treats as final), so the throttled callback is dropped."""

    def offer(self, target: str) -> Verdict:
        verdict = super().offer(target)
        return verdict if verdict.accepted else Verdict(False, None)


@runtime_entry("governor_no_retry_after_floor", "RG-001",
               "seed 002 10.11.1: honors a server Retry-After as a floor")
class NoFloorRuntime(StoreGovernorRuntime):
    """The server's retry-after is ignored: the jittered wait may come back sooner than
    the server asked."""

    def redelivery_wait_ms(self, previous_ms: float | None, draw: float,
                           retry_after_ms: float | None) -> float:
        return super().redelivery_wait_ms(previous_ms, draw, None)


@runtime_entry("governor_rate_limit_uncounted", "RG-010",
               "seed 002 10.11.1: agent 429 mapped to billing")
class RateLimitUncountedRuntime(StoreGovernorRuntime):
    """An agent's 429 is recorded under its terminal reason, rate_limit, a class the
    pause does not count: a fleet-wide rate-limit storm never pauses re-delivery."""

    def record_rate_limited(self, target: str, result_id: str) -> None:
        self.record_failure(target, "rate_limit", result_id)

    def peer(self) -> StoreGovernorRuntime:
        return RateLimitUncountedRuntime(self._store.peer(), self._clock, self._settings)


@runtime_entry("governor_kill_arms_pause", "RG-014",
               "seed 002 10.4.1: the scheduler's _is_auth_failure skips"
               " signal/OOM/timeout markers")
class KillArmsPauseRuntime(StoreGovernorRuntime):
    """The governor's auth matcher reads only the error text, without the negative
    markers seed 002 gave the scheduler's _is_auth_failure: a killed end whose text
    carries an auth indicator ("OOM kill: unauthorized", or a SIGTERM'd CLI that printed
    "authentication failed") counts as auth, so a wave of OOM kills pauses re-delivery."""

    def _classify(self, signal: str | None, exit_code: int | None, output: bool,
                  error_text: str) -> str:
        if super()._classify(None, None, output, re.sub(KILL_WORDS, "", error_text)) == "auth":
            return "auth"
        return super()._classify(signal, exit_code, output, error_text)

    def peer(self) -> StoreGovernorRuntime:
        return KillArmsPauseRuntime(self._store.peer(), self._clock, self._settings)


@runtime_entry("governor_envelope_burst", "RG-012",
               "seed 002 10.11.1: per-envelope jitter of the re-send sweep")
class EnvelopeBurstRuntime(StoreGovernorRuntime):
    """The sweep re-sends every pending envelope at its start, with no per-envelope
    jitter: a worker with many results still bursts them all at one instant."""

    def resend_times(self, draws: Sequence[float]) -> list[datetime] | None:
        return None if self._sweep_at is None else [self._sweep_at for _ in draws]

    def peer(self) -> StoreGovernorRuntime:
        return EnvelopeBurstRuntime(self._store.peer(), self._clock, self._settings)


@runtime_entry("governor_fails_closed", "RG-011", "seed 002 10.11.1: everything is fail-open")
class FailsClosedRuntime(StoreGovernorRuntime):
    """While its store is unreachable the governor holds every re-delivery back, as if a
    pause held, so a storage outage becomes a delivery outage (the seed: everything is
    fail-open)."""

    def _offer(self, target: str) -> Verdict:
        try:
            return super()._offer(target)
        except GovernorStoreUnavailable:
            return Verdict(False, self._settings.pause_retry_after_seconds)

    def peer(self) -> StoreGovernorRuntime:
        return FailsClosedRuntime(self._store.peer(), self._clock, self._settings)


# A zone two hours east of UTC, as a runtime that formats times for its operators' desk.
EAST_OF_UTC = timezone(timedelta(hours=2))


@runtime_entry("governor_pause_at_offset", "RG-008",
               "issue 18: UTC everywhere (times outside job records)")
class PauseAtOffsetRuntime(StoreGovernorRuntime):
    """The pause's end is the right instant, answered at +02:00 (the operators' local
    time) rather than UTC; equal as an instant, so only an offset check sees it."""

    def paused_until(self) -> datetime | None:
        paused = super().paused_until()
        return paused.astimezone(EAST_OF_UTC) if paused is not None else None

    def peer(self) -> StoreGovernorRuntime:
        return PauseAtOffsetRuntime(self._store.peer(), self._clock, self._settings)


@runtime_entry("governor_switch_ignored", "RG-013",
               "seed 002 10.11.1: backend controls default-OFF behind one"
               " master flag")
class SwitchIgnoredRuntime(StoreGovernorRuntime):
    """The master switch is read nowhere: a governor switched off still caps its offers
    and refuses them while a pause runs, as if the flag were on."""

    def set_enabled(self, enabled: bool) -> None:
        """Ignored."""

    def peer(self) -> StoreGovernorRuntime:
        return SwitchIgnoredRuntime(self._store.peer(), self._clock, self._settings)


@runtime_entry("governor_switched_off_forgets_failures", "RG-013",
               "seed 002 10.11.1: three flag-gated read points (recording is not one)")
class SwitchedOffForgetsFailuresRuntime(StoreGovernorRuntime):
    """The master switch gates the recording too: a governor switched off drops the
    failures it records, so a fleet-wide storm that ends while the flag is off never
    pauses the governors that have it on."""

    def __init__(self, store: GovernorStore, clock: Clock,
                 settings: GovernorSettings) -> None:
        super().__init__(store, clock, settings)
        self._switched_off = False

    def set_enabled(self, enabled: bool) -> None:
        super().set_enabled(enabled)
        self._switched_off = not enabled

    def record_failure(self, target: str, failure_class: str, result_id: str) -> None:
        if not self._switched_off:
            super().record_failure(target, failure_class, result_id)

    def peer(self) -> StoreGovernorRuntime:
        return SwitchedOffForgetsFailuresRuntime(self._store.peer(), self._clock,
                                                 self._settings)


@store_entry("governor_pause_end_in_whole_seconds", "RG-008",
             "issue 33: time finer than a second (the pause's end kept in whole seconds)")
class PauseEndInWholeSecondsStore(InMemoryGovernorStore):
    """The store keeps the pause's end in whole seconds, as an epoch-second column does:
    a pause armed half a second into a second ends half a second early, and both
    governors read that end (issue 33: time finer than a second)."""

    def pause(self, until: datetime) -> None:
        super().pause(until.replace(microsecond=0))
