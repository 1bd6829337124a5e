"""The breaker gallery: the memory backend with its breaker broken the way breakers break.

Each entry changes one decision of the shipped breaker runtime (or its store) to a mistake
public breakers and their users have reported (anchors, circuit breaker). `jobconform
selftest` proves each is caught by every suite, naming the requirement in `catches`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from jobconform.backends.breaker.memory import InMemoryBreakerStore
from jobconform.backends.breaker.runtime import (
    BreakerDeployment,
    BreakerRow,
    Readout,
    StoreBreakerRuntime,
)
from jobconform.backends.memory import MemoryBackend
from jobconform.conformance.gallery import GalleryEntry, declares, opener_entry

# The kill markers a classifier without seed 002's negative markers does not look for.
KILL_WORDS = re.compile(r"\b(SIGKILL|SIGTERM|SIGINT|OOM|out of memory|timed out|timeout)\b",
                        re.IGNORECASE)


# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []


def _breaker_entry(name: str, runtime: type[StoreBreakerRuntime],
                   store: type[InMemoryBreakerStore], catches: str, source: str,
                   bug_of: type) -> GalleryEntry:
    """The memory backend with a broken breaker, loadable as `<this module>:<name>`."""
    return opener_entry(__name__, name, MemoryBackend, "open_breaker",
                        lambda _, clock, settings: runtime(store(), clock, settings,
                                                           BreakerDeployment()),
                        bug_of, catches, source)


@declares(GALLERY)
def runtime_entry(name: str, runtime: type[StoreBreakerRuntime], catches: str,
                  source: str) -> GalleryEntry:
    return _breaker_entry(name, runtime, InMemoryBreakerStore, catches, source, runtime)


@runtime_entry("breaker_two_probes", "CB-007", "anchors: several probes admitted in half-open")
class TwoProbesRuntime(StoreBreakerRuntime):
    """Half-open admits every call as a probe: the probe slot is never checked, so
    concurrent callers all hit the recovering target."""

    def _admission(self, row: BreakerRow, call: str,
                   now: datetime) -> tuple[str, BreakerRow | None]:
        if row.open_until is not None and now >= row.open_until:
            lease = timedelta(seconds=self._settings.probe_lease_seconds)
            return "probe", replace(row, probe=call, probe_until=now + lease)
        return super()._admission(row, call, now)


@runtime_entry("breaker_cooldown_kept", "CB-008",
               "anchors: Resilience4j resets the interval on CLOSED")
class CooldownKeptRuntime(StoreBreakerRuntime):
    """A successful probe closes the breaker but keeps the grown cooldown, so the next
    trip opens for the doubled time (no reset on closed)."""

    def _closed(self, row: BreakerRow) -> BreakerRow:
        return BreakerRow(row.target, 0, row.cooldown_seconds, version=row.version)


@runtime_entry("breaker_timeout_counted", "CB-003", "seed 002 10.11: TIMEOUT never counts")
class TimeoutCountedRuntime(StoreBreakerRuntime):
    """A timeout counts as a failure, so long-running calls trip the breaker (seed 002
    counts auth failures only)."""

    def _outcome(self, row: BreakerRow, call: str, outcome: str, failure_class: str | None,
                 now: datetime) -> tuple[bool, BreakerRow | None]:
        counted = "auth" if failure_class == "timeout" else failure_class
        return super()._outcome(row, call, outcome, counted, now)


@runtime_entry("breaker_everlasting_probe", "CB-010",
               "anchors: half-open stuck when the probe never reports")
class EverlastingProbeRuntime(StoreBreakerRuntime):
    """A probe's slot has no lease: a probe that never reports leaves the breaker
    half-open, refusing every call, forever."""

    @staticmethod
    def _probe_holds(row: BreakerRow, now: datetime) -> bool:
        return row.probe is not None


@runtime_entry("breaker_no_drain", "CB-006", "seed 002 10.11: drain-on-trip")
class NoDrainRuntime(StoreBreakerRuntime):
    """A trip leaves the target's queued work queued, to wait for a target that cannot
    answer until it expires (or, at best, for the next backstop sweep)."""

    def _drain(self, target: str) -> None:
        pass


@runtime_entry("breaker_backstop_open_only", "CB-014",
               "seed 002 10.11: the backstop re-fails a still-open breaker's backlog")
class BackstopOpenOnlyRuntime(StoreBreakerRuntime):
    """The backstop sweep re-fails the backlog only of breakers that read open, not
    half-open: a sweep every 60 s behind a 30 s cooldown mostly finds the breaker
    half-open, so a lost drain's work waits for the probe, or a day to expire."""

    def _backstop_sweeps(self, row: BreakerRow) -> bool:
        return row.open_until is not None and self._clock.now() < row.open_until


@runtime_entry("breaker_heartbeat_reopens", "CB-015",
               "seed 002 10.11: record_failure(\"missed_heartbeat\") seam")
class HeartbeatReopensRuntime(StoreBreakerRuntime):
    """A missed heartbeat while the breaker is open or half-open counts as a failed probe
    and re-opens it for a longer cooldown: a dead target's heartbeat monitor keeps pushing
    the open period out, so no probe ever gets through."""

    def _missed_heartbeat(self, row: BreakerRow,
                          now: datetime) -> tuple[bool, BreakerRow | None]:
        if row.open_until is None:
            return super()._missed_heartbeat(row, now)
        cooldown = min(row.cooldown_seconds * self._settings.cooldown_multiplier,
                       self._settings.cooldown_max_seconds)
        return False, self._opened(row, cooldown, now)


@runtime_entry("breaker_kill_classed_auth", "CB-016",
               "seed 002 10.4.1: an OOM kill taken for a subscription auth failure")
class KillClassedAuthRuntime(StoreBreakerRuntime):
    """An OOM kill is taken for an expired token: an end by SIGKILL (or its exit code, 137
    or -9) is classed auth, as seed 002's chat path did before it called the signal-exit
    classifier, so a memory-hungry task trips its target's breaker."""

    def _classify(self, signal: str | None, exit_code: int | None, output: bool,
                  error_text: str) -> str:
        if signal == "SIGKILL" or exit_code in (137, -9):
            return "auth"
        return super()._classify(signal, exit_code, output, error_text)


@runtime_entry("breaker_auth_indicator_first", "CB-016",
               "seed 002 10.4.1: is_auth_failure skips signal/OOM/timeout markers")
class AuthIndicatorFirstRuntime(StoreBreakerRuntime):
    """An auth indicator in the error text wins over a kill marker in the same text
    ("OOM kill: authentication failed" is auth): the auth check lacks the negative
    markers seed 002 gave it, so a residual wording trips the breaker on a kill."""

    def _classify(self, signal: str | None, exit_code: int | None, output: bool,
                  error_text: str) -> str:
        if super()._classify(None, None, output, re.sub(KILL_WORDS, "", error_text)) == "auth":
            return "auth"
        return super()._classify(signal, exit_code, output, error_text)


@runtime_entry("breaker_silence_classed_auth", "CB-017",
               "seed 002 10.4.1: the zero-output fallback said authentication issue")
class SilenceClassedAuthRuntime(StoreBreakerRuntime):
    """The zero-output fallback: a non-zero exit with no output and no recognised text is
    worded "possible authentication issue" and classed auth, so any silent crash counts
    toward a trip."""

    def _classify(self, signal: str | None, exit_code: int | None, output: bool,
                  error_text: str) -> str:
        failure_class = super()._classify(signal, exit_code, output, error_text)
        if failure_class == "agent_error" and not output and exit_code not in (None, 0):
            return "auth"
        return failure_class


@runtime_entry("breaker_kill_signal_unnamed", "CB-018",
               "seed 002 10.4.1: the 504 of a kill names its signal")
class KillSignalUnnamedRuntime(StoreBreakerRuntime):
    """The error of a kill names a signal only when one is given: an end known by its
    exit code alone (an OOM kill's 137, a parent's -9) is reported with no signal, as a
    path that skipped the signal-exit classifier words it "exit code 137"."""

    def _report(self, failure_class: str, signal: str | None, exit_code: int | None,
                output: bool, error_text: str) -> dict[str, object]:
        return super()._report(failure_class, signal, None, output, error_text)


@runtime_entry("breaker_silence_blamed_on_token", "CB-019",
               "seed 002 10.4.1: the diagnosis of a silent exit named the"
               " token alone")
class SilenceBlamedOnTokenRuntime(StoreBreakerRuntime):
    """A failure with no output and no text is diagnosed as an expired token and nothing
    else ("Subscription token may be expired or revoked"), as seed 002's OAuth-only
    diagnosis did, though its class stays agent_error."""

    def _report(self, failure_class: str, signal: str | None, exit_code: int | None,
                output: bool, error_text: str) -> dict[str, object]:
        report = super()._report(failure_class, signal, exit_code, output, error_text)
        if report["possible_causes"]:
            report["possible_causes"] = ["expired_token"]
        return report


@runtime_entry("breaker_fails_closed", "CB-011", "seed 002 10.11: fail-open on Redis down")
class FailsClosedRuntime(StoreBreakerRuntime):
    """With the store down, calls are refused instead of admitted: a store outage stops
    all dispatch (fails closed)."""

    def admit(self, target: str, call: str) -> str:
        answer = super().admit(target, call)
        if self._deployment.engaged(target) and self.read(target) is None:
            return "refused"
        return answer


@runtime_entry("breaker_per_worker", "CB-013", "seed 002 10.11: breaker state in the shared store")
class PerWorkerRuntime(StoreBreakerRuntime):
    """Each worker keeps its own breaker in its own memory, so workers of one deployment
    trip separately and one worker keeps calling a dead target."""

    def peer(self) -> StoreBreakerRuntime:
        return PerWorkerRuntime(InMemoryBreakerStore(), self._clock, self._settings,
                                self._deployment)


# A zone two hours east of UTC, as a runtime that formats times for its operators' desk.
EAST_OF_UTC = timezone(timedelta(hours=2))


@runtime_entry("breaker_open_until_at_offset", "CB-013",
               "issue 18: UTC everywhere (times outside job records)")
class OpenUntilAtOffsetRuntime(StoreBreakerRuntime):
    """A read answers the end of the open period as the right instant at +02:00 (the
    operators' local time) rather than UTC; equal as an instant, so only an offset check
    sees it."""

    def read(self, target: str) -> Readout | None:
        readout = super().read(target)
        if readout is None or readout.open_until is None:
            return readout
        return replace(readout, open_until=readout.open_until.astimezone(EAST_OF_UTC))

    def peer(self) -> StoreBreakerRuntime:
        store = self._peer_factory() if self._peer_factory is not None else self._store
        return OpenUntilAtOffsetRuntime(store, self._clock, self._settings,
                                        self._deployment, self._peer_factory)


@runtime_entry("breaker_open_end_in_whole_seconds", "CB-005",
               "issue 33: time finer than a second (the open period's end"
               " compared in whole seconds)")
class OpenEndInWholeSecondsRuntime(StoreBreakerRuntime):
    """Admission compares the end of the open period with the clock in whole seconds
    (`int(now) < int(open_until)`, as an epoch-second column is compared): a breaker
    opened half a second into a second admits its probe as the last second of its open
    period begins, up to a second early (issue 33: time finer than a second)."""

    def _admission(self, row: BreakerRow, call: str,
                   now: datetime) -> tuple[str, BreakerRow | None]:
        if (row.open_until is not None and now < row.open_until
                and int(now.timestamp()) >= int(row.open_until.timestamp())
                and not self._probe_holds(row, now)):
            lease = timedelta(seconds=self._settings.probe_lease_seconds)
            return "probe", replace(row, probe=call, probe_until=now + lease)
        return super()._admission(row, call, now)

    def peer(self) -> StoreBreakerRuntime:
        store = self._peer_factory() if self._peer_factory is not None else self._store
        return OpenEndInWholeSecondsRuntime(store, self._clock, self._settings,
                                            self._deployment, self._peer_factory)


class WholeSecondTripStore(InMemoryBreakerStore):
    """Keeps the end of an open period in whole epoch seconds, as a store keeping the trip
    time as an integer timestamp does: a breaker tripped half a second into a second ends
    its open period up to a second early, and its reads show that end (found by the kit
    in pybreaker 1.4.1's CircuitRedisStorage, whose opened_at is int(timegm(now)))."""

    def swap(self, expected: BreakerRow | None, new: BreakerRow) -> bool:
        if new.open_until is not None:
            new = replace(new, open_until=new.open_until.replace(microsecond=0))
        return super().swap(expected, new)


GALLERY += [
    _breaker_entry("breaker_trip_time_in_whole_seconds", StoreBreakerRuntime,
                       WholeSecondTripStore, "CB-005", "pybreaker 1.4.1: CircuitRedisStorage"
                       " keeps the trip time in whole epoch seconds", WholeSecondTripStore),
]
