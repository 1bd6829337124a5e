"""The re-delivery governor (spec/governor.yaml, RG-001 to RG-013), as an oracle.

Three controls keep a fleet's re-deliveries from stampeding after an outage: each
re-delivery waits a decorrelated jitter (with a server retry-after as its floor), offers
are admitted under a per-target and a fleet-wide cap over sliding windows (over a cap:
a retryable refusal with a retry-after, never a drop), and a failure of one class seen
at enough distinct targets pauses re-delivery for a while. A restarted worker holds its
first re-send sweep back by an initial jitter. Time enters as an argument.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from jobconform.reference import backoff
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.breaker.classify import RawEnd, classify_end


@dataclass(frozen=True)
class GovernorSettings:
    """The profile's governor parameters (spec/profiles.yaml, area_parameters.governor)."""

    base_ms: float = 1000.0
    cap_ms: float = 60_000.0
    target_limit: int = 20
    target_window_seconds: float = 60.0
    fleet_limit: int = 600
    fleet_window_seconds: float = 60.0
    pause_threshold: int = 20
    pause_window_seconds: float = 120.0
    pause_ttl_seconds: float = 300.0
    pause_retry_after_seconds: float = 30.0
    pause_classes: frozenset[str] = frozenset({"auth", "billing"})
    initial_jitter_max_seconds: float = 60.0
    envelope_jitter_max_seconds: float = 1.0

    def __post_init__(self) -> None:
        problems = [f"{name} must be at least 1, not {getattr(self, name)}"
                    for name in ("target_limit", "fleet_limit", "pause_threshold")
                    if getattr(self, name) < 1]
        problems += [f"{name} must be positive, not {getattr(self, name)}"
                     for name in ("target_window_seconds", "fleet_window_seconds",
                                  "pause_window_seconds", "pause_ttl_seconds",
                                  "pause_retry_after_seconds", "initial_jitter_max_seconds",
                                  "envelope_jitter_max_seconds")
                     if not getattr(self, name) > 0]
        if not 0 <= self.base_ms <= self.cap_ms:
            problems.append(f"0 <= base_ms <= cap_ms must hold, not {self.base_ms} and"
                            f" {self.cap_ms}")
        if problems:
            raise ValueError("invalid governor settings: " + "; ".join(problems))

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> GovernorSettings:
        """Settings from a profile's `area_parameters.governor` mapping.

        Raises:
            ValueError: a parameter is missing, unknown or out of range.
        """
        known = {name for name in cls.__dataclass_fields__}
        missing = sorted(known - set(parameters))
        unknown = sorted(set(parameters) - known)
        if missing or unknown:
            raise ValueError(f"governor parameters: missing {missing}, unknown {unknown};"
                             " fix area_parameters.governor in the profile")
        values: dict[str, object] = {}
        for name, value in parameters.items():
            if name == "pause_classes":
                values[name] = frozenset(c.strip() for c in str(value).split(",") if c.strip())
            elif name in ("target_limit", "fleet_limit", "pause_threshold"):
                values[name] = int(str(value))
            else:
                values[name] = float(str(value))
        return cls(**values)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Decision:
    """The answer to a re-delivery offer; a refusal is retryable after `retry_after_seconds`."""

    accepted: bool
    retry_after_seconds: float | None = None


ACCEPTED = Decision(True)
# The failure class an agent's rate-limit answer (HTTP 429) is recorded under (RG-010).
RATE_LIMIT_CLASS = "billing"


def redelivery_wait_ms(settings: GovernorSettings, previous_ms: float | None, draw: float,
                       retry_after_ms: float | None = None) -> float:
    """The wait before the next re-delivery (RG-001): decorrelated jitter between base_ms
    and three times the previous wait, capped, with a retry-after as its floor."""
    policy = RetryPolicy(retry_delay_ms=settings.base_ms, max_retry_delay_ms=settings.cap_ms)
    return backoff.delay_ms(policy, 0, Jitter.DECORRELATED, draw, previous_ms, retry_after_ms)


def envelope_times(settings: GovernorSettings, sweep_at: datetime,
                   draws: Sequence[float]) -> tuple[datetime, ...]:
    """The instants a sweep due at `sweep_at` sends its envelopes (RG-012)."""
    times: list[datetime] = []
    at = sweep_at
    for draw in draws:
        at += timedelta(seconds=draw * settings.envelope_jitter_max_seconds)
        times.append(at)
    return tuple(times)


@dataclass
class GovernorModel:
    """The oracle for a governor runtime: accepted re-deliveries, counted failures, pause."""

    settings: GovernorSettings
    accepted: list[tuple[datetime, str]] = field(default_factory=list)  # (when, target)
    # failure class -> target -> when its latest (not replayed) failure was counted
    failing: dict[str, dict[str, datetime]] = field(default_factory=dict)
    results: set[str] = field(default_factory=set)
    paused_until: datetime | None = None
    # worker -> when its first re-send sweep after its latest restart is due (RG-009)
    sweep_at: dict[int, datetime] = field(default_factory=dict)
    # RG-011: while the store is down the governor fails open and changes nothing in it.
    store_down: bool = False
    # Targets whose latest counted billing failure was a rate limit (RG-010).
    rate_limited: set[str] = field(default_factory=set)
    # RG-013: the workers whose master switch is off; they hold nothing back.
    switched_off: set[int] = field(default_factory=set)

    def restart(self, worker: int, draw: float, now: datetime) -> None:
        """`worker` restarts: its first re-send sweep waits draw * initial_jitter_max_seconds
        (RG-009), so restarted workers do not all re-send at the restart instant."""
        delay = timedelta(seconds=draw * self.settings.initial_jitter_max_seconds)
        self.sweep_at[worker] = now + delay

    def resend_times(self, worker: int, draws: Sequence[float]) -> tuple[datetime, ...] | None:
        """RG-012: when `worker`'s sweep sends each of len(draws) envelopes, one after
        another, each draws[k] * envelope_jitter_max_seconds after the one before (the
        first after the sweep's start); None before the worker's first restart."""
        start = self.sweep_at.get(worker)
        if start is None:
            return None
        return envelope_times(self.settings, start, draws)

    def pause_at(self, now: datetime, worker: int = 0) -> datetime | None:
        """The end of the pause running at `now` (RG-008) as `worker` reads it, or None;
        none can be read while the store is down (RG-011) or by a worker switched off
        (RG-013)."""
        if worker in self.switched_off:
            return None
        return self.running_pause(now)

    def running_pause(self, now: datetime) -> datetime | None:
        """The end of the pause the store holds at `now`, whatever the switches say; None
        while the store is down."""
        if self.store_down:
            return None
        if self.paused_until is not None and now < self.paused_until:
            return self.paused_until
        return None

    def _wait_for_cap(self, now: datetime, window_seconds: float, limit: int,
                      target: str | None) -> float | None:
        window = timedelta(seconds=window_seconds)
        counted = [when for when, whose in self.accepted
                   if when + window > now and (target is None or whose == target)]
        if len(counted) < limit:
            return None
        # The window frees a place when its oldest counted re-delivery leaves it.
        return (min(counted) + window - now).total_seconds()

    def offer(self, target: str, now: datetime, worker: int = 0) -> Decision:
        if self.store_down or worker in self.switched_off:
            return ACCEPTED  # RG-011, RG-013: accepted, and counted nowhere
        if self.pause_at(now, worker) is not None:
            return Decision(False, self.settings.pause_retry_after_seconds)  # RG-005
        s = self.settings
        waits = [wait for wait in (
            self._wait_for_cap(now, s.target_window_seconds, s.target_limit, target),
            self._wait_for_cap(now, s.fleet_window_seconds, s.fleet_limit, None),
        ) if wait is not None]
        if waits:
            return Decision(False, max(waits))  # RG-002, RG-003, RG-004
        self.accepted.append((now, target))
        return ACCEPTED

    def switch(self, worker: int, enabled: bool) -> None:
        """RG-013: `worker`'s master switch; recording failures does not depend on it."""
        (self.switched_off.discard if enabled else self.switched_off.add)(worker)

    def record_rate_limited(self, target: str, result_id: str, now: datetime) -> None:
        """RG-010: an agent's 429 is a billing failure, so a fleet-wide rate-limit storm
        arms the pause like any other shared cause."""
        self.record_failure(target, RATE_LIMIT_CLASS, result_id, now, via_rate_limit=True)

    def record_raw_end(self, target: str, result_id: str, end: RawEnd,
                       now: datetime) -> None:
        """RG-014: a raw end counts under the class the breaker's rules give it (CB-016,
        CB-017): a kill is a timeout, never auth, so kills never arm the pause."""
        self.record_failure(target, classify_end(end), result_id, now)

    def record_failure(self, target: str, failure_class: str, result_id: str,
                       now: datetime, via_rate_limit: bool = False) -> None:
        if self.store_down:
            return  # RG-011: neither counted nor remembered
        if result_id in self.results:
            return  # RG-007: a replay is not counted again
        self.results.add(result_id)
        if failure_class not in self.settings.pause_classes:
            return
        self.failing.setdefault(failure_class, {})[target] = now
        if failure_class == RATE_LIMIT_CLASS:
            (self.rate_limited.add if via_rate_limit else self.rate_limited.discard)(target)
        if self.paused_until is not None and now < self.paused_until:
            return  # RG-008: a running pause is not extended (whoever records, RG-013)
        window = timedelta(seconds=self.settings.pause_window_seconds)
        distinct = sum(1 for when in self.failing[failure_class].values() if when + window > now)
        if distinct >= self.settings.pause_threshold:  # RG-005, RG-006
            self.paused_until = now + timedelta(seconds=self.settings.pause_ttl_seconds)
