"""The dispatch circuit breaker (spec/breaker.yaml, CB-001 to CB-017), as pure functions.

One breaker per target. Its stored fields are a frozen `TargetBreaker`; the state a
reader sees (closed, open, half-open) is derived from them and the time, so a breaker
whose cooldown has passed reads half-open without any timer having run (transitions are
lazy, as in every public breaker). Time enters only as an argument.

`BreakerModel` is the composite oracle: many targets, the engagement switches, each
target's work queue and the store's availability, answering the same commands as a
backend's breaker runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum

from jobconform.reference.breaker.classify import RawEnd, classify_end


class BreakerState(StrEnum):
    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


class Admission(StrEnum):
    """The answer to one call at the breaker."""

    ADMITTED = "admitted"  # closed, not engaged, or failing open
    PROBE = "probe"  # the single half-open probe
    REFUSED = "refused"  # open, or half-open with the probe slot taken


class Enqueued(StrEnum):
    """The answer to new work for a target."""

    QUEUED = "queued"
    REFUSED = "refused"  # fast-failed: the breaker is open or half-open (CB-005)


class CallOutcome(StrEnum):
    SUCCESS = "success"
    FAILURE = "failure"
    CANCELLED = "cancelled"


FAILURE_CLASSES = ("auth", "timeout", "agent_error")


@dataclass(frozen=True)
class BreakerSettings:
    """The profile's breaker parameters (spec/profiles.yaml, area_parameters.breaker)."""

    failure_threshold: int = 3
    counted_classes: frozenset[str] = frozenset({"auth"})
    cooldown_seconds: float = 30.0
    cooldown_multiplier: float = 2.0
    cooldown_max_seconds: float = 300.0
    probe_lease_seconds: float = 60.0

    def __post_init__(self) -> None:
        problems = []
        if self.failure_threshold < 1:
            problems.append(f"failure_threshold must be at least 1, not {self.failure_threshold}")
        if not 0 < self.cooldown_seconds <= self.cooldown_max_seconds:
            problems.append("0 < cooldown_seconds <= cooldown_max_seconds must hold, not"
                            f" {self.cooldown_seconds} and {self.cooldown_max_seconds}")
        if self.cooldown_multiplier < 1:
            problems.append(f"cooldown_multiplier must be at least 1, not"
                            f" {self.cooldown_multiplier}")
        if self.probe_lease_seconds <= 0:
            problems.append(f"probe_lease_seconds must be positive, not"
                            f" {self.probe_lease_seconds}")
        unknown = self.counted_classes - set(FAILURE_CLASSES)
        if unknown:
            problems.append(f"counted_classes holds unknown classes {sorted(unknown)};"
                            f" known: {', '.join(FAILURE_CLASSES)}")
        if problems:
            raise ValueError("invalid breaker settings: " + "; ".join(problems))

    @classmethod
    def from_parameters(cls, parameters: Mapping[str, object]) -> BreakerSettings:
        """Settings from a profile's `area_parameters.breaker` mapping.

        Raises:
            ValueError: a parameter is missing or out of range; the message names it.
        """
        names = ("failure_threshold", "counted_classes", "cooldown_seconds",
                 "cooldown_multiplier", "cooldown_max_seconds", "probe_lease_seconds")
        missing = [name for name in names if name not in parameters]
        if missing:
            raise ValueError(f"breaker parameters {missing} are missing; set them under"
                             " area_parameters.breaker in the profile")
        classes = str(parameters["counted_classes"])
        return cls(
            failure_threshold=int(str(parameters["failure_threshold"])),
            counted_classes=frozenset(c.strip() for c in classes.split(",") if c.strip()),
            cooldown_seconds=float(str(parameters["cooldown_seconds"])),
            cooldown_multiplier=float(str(parameters["cooldown_multiplier"])),
            cooldown_max_seconds=float(str(parameters["cooldown_max_seconds"])),
            probe_lease_seconds=float(str(parameters["probe_lease_seconds"])),
        )


@dataclass(frozen=True)
class TargetBreaker:
    """What the store keeps for one target's breaker.

    `open_until` is None while closed. `probe` is the call holding the half-open probe
    slot and `probe_until` the end of its lease (CB-010).
    """

    failures: int
    cooldown_seconds: float
    open_until: datetime | None = None
    probe: str | None = None
    probe_until: datetime | None = None


@dataclass(frozen=True)
class BreakerView:
    """What a reader sees of one target's breaker (CB-013)."""

    state: BreakerState
    failures: int
    cooldown_seconds: float
    open_until: datetime | None
    probe: str | None  # the call holding an unexpired probe lease


def closed(settings: BreakerSettings) -> TargetBreaker:
    return TargetBreaker(failures=0, cooldown_seconds=settings.cooldown_seconds)


def state_at(breaker: TargetBreaker, now: datetime) -> BreakerState:
    if breaker.open_until is None:
        return BreakerState.CLOSED
    return BreakerState.OPEN if now < breaker.open_until else BreakerState.HALF_OPEN


def live_probe(breaker: TargetBreaker, now: datetime) -> str | None:
    """The probe still holding its lease at `now`; a lease ends at its boundary."""
    if breaker.probe is None or breaker.probe_until is None or now >= breaker.probe_until:
        return None
    return breaker.probe


def view(breaker: TargetBreaker, now: datetime) -> BreakerView:
    return BreakerView(state_at(breaker, now), breaker.failures, breaker.cooldown_seconds,
                       breaker.open_until, live_probe(breaker, now))


def admit(breaker: TargetBreaker, call: str, now: datetime,
          settings: BreakerSettings) -> tuple[Admission, TargetBreaker]:
    """A call arrives at an engaged breaker (CB-005, CB-007, CB-010)."""
    state = state_at(breaker, now)
    if state is BreakerState.CLOSED:
        return Admission.ADMITTED, breaker
    if state is BreakerState.OPEN or live_probe(breaker, now) is not None:
        return Admission.REFUSED, breaker
    lease_end = now + timedelta(seconds=settings.probe_lease_seconds)
    return Admission.PROBE, replace(breaker, probe=call, probe_until=lease_end)


def _reopened(now: datetime, cooldown: float) -> TargetBreaker:
    return TargetBreaker(failures=0, cooldown_seconds=cooldown,
                         open_until=now + timedelta(seconds=cooldown))


def record(breaker: TargetBreaker, call: str, outcome: CallOutcome, failure_class: str | None,
           now: datetime, settings: BreakerSettings) -> tuple[TargetBreaker, bool]:
    """A call's outcome reaches an engaged breaker.

    Returns:
        The new breaker and whether this outcome tripped it from closed to open (the
        moment the target's queued work is failed, CB-006).
    """
    counted = outcome is CallOutcome.FAILURE and failure_class in settings.counted_classes
    if state_at(breaker, now) is BreakerState.CLOSED:
        if outcome is CallOutcome.SUCCESS:
            return replace(breaker, failures=0), False
        if not counted:
            return breaker, False  # CB-003, CB-004: neutral
        failures = breaker.failures + 1
        if failures >= settings.failure_threshold:
            return _reopened(now, breaker.cooldown_seconds), True
        return replace(breaker, failures=failures), False
    # Open or half-open: only the probe holding its lease decides (CB-010).
    if live_probe(breaker, now) != call:
        return breaker, False
    if outcome is CallOutcome.SUCCESS:
        return closed(settings), False  # CB-008
    if counted:
        longer = min(breaker.cooldown_seconds * settings.cooldown_multiplier,
                     settings.cooldown_max_seconds)
        return _reopened(now, longer), False  # CB-009
    return replace(breaker, probe=None, probe_until=None), False  # CB-003, CB-004


def missed_heartbeat(breaker: TargetBreaker, now: datetime,
                     settings: BreakerSettings) -> tuple[TargetBreaker, bool]:
    """The target missed a heartbeat (CB-015): a counted failure while closed, whatever
    `counted_classes` says; while open or half-open it is no probe's outcome and changes
    nothing.

    Returns:
        The new breaker and whether the miss tripped it from closed to open.
    """
    if state_at(breaker, now) is not BreakerState.CLOSED:
        return breaker, False
    failures = breaker.failures + 1
    if failures >= settings.failure_threshold:
        return _reopened(now, breaker.cooldown_seconds), True
    return replace(breaker, failures=failures), False


@dataclass
class BreakerModel:
    """The oracle for a breaker runtime: targets, switches, queues and store availability.

    Every method takes the current time; `warnings` counts operations that could not
    reach the store (CB-011).
    """

    settings: BreakerSettings
    global_switch: bool = False
    opted_in: set[str] = field(default_factory=set)
    breakers: dict[str, TargetBreaker] = field(default_factory=dict)
    queues: dict[str, list[str]] = field(default_factory=dict)
    failed_work: dict[str, list[str]] = field(default_factory=dict)
    store_down: bool = False
    drain_lost: bool = False
    warnings: int = 0

    def engaged(self, target: str) -> bool:
        return self.global_switch and target in self.opted_in

    def breaker(self, target: str) -> TargetBreaker:
        return self.breakers.get(target, closed(self.settings))

    def _store_reachable(self) -> bool:
        if self.store_down:
            self.warnings += 1
            return False
        return True

    def admit(self, target: str, call: str, now: datetime) -> Admission:
        if not self.engaged(target) or not self._store_reachable():
            return Admission.ADMITTED
        answer, self.breakers[target] = admit(self.breaker(target), call, now, self.settings)
        return answer

    def record(self, target: str, call: str, outcome: CallOutcome, failure_class: str | None,
               now: datetime) -> None:
        if not self.engaged(target) or not self._store_reachable():
            return
        self.breakers[target], tripped = record(self.breaker(target), call, outcome,
                                                failure_class, now, self.settings)
        if tripped:
            self._drain(target)

    def record_end(self, target: str, call: str, end: RawEnd, now: datetime) -> str:
        """A call failed and the runtime classes its raw end (CB-016, CB-017), then
        records the failure under that class as `record` does.

        Returns:
            The class: the runtime answers it whether or not the breaker is engaged.
        """
        failure_class = classify_end(end)
        self.record(target, call, CallOutcome.FAILURE, failure_class, now)
        return failure_class

    def missed_heartbeat(self, target: str, now: datetime) -> None:
        if not self.engaged(target) or not self._store_reachable():
            return
        self.breakers[target], tripped = missed_heartbeat(self.breaker(target), now,
                                                          self.settings)
        if tripped:
            self._drain(target)

    def _drain(self, target: str) -> None:
        """A trip fails the target's queued work (CB-006), unless the drain is lost."""
        if not self.drain_lost:
            self._fail_queued(target)

    def _fail_queued(self, target: str) -> int:
        work = self.queues.pop(target, [])
        if work:
            self.failed_work.setdefault(target, []).extend(work)
        return len(work)

    def backstop(self, now: datetime) -> int:
        """The backstop sweep (CB-014): every engaged target with queued work whose
        breaker is open or half-open has that work failed, in queue order. Each such
        target whose breaker cannot be read (store down) is logged once and keeps its work.

        Returns:
            How many pieces of work the sweep failed.
        """
        swept = 0
        for target in [name for name, work in self.queues.items() if work]:
            if not self.engaged(target) or not self._store_reachable():
                continue
            if state_at(self.breaker(target), now) is not BreakerState.CLOSED:
                swept += self._fail_queued(target)
        return swept

    def enqueue(self, target: str, work: str, now: datetime) -> Enqueued:
        # Unengaged: no store access at all. Engaged: an unreachable store fails open.
        engaged_and_reachable = self.engaged(target) and self._store_reachable()
        if engaged_and_reachable and state_at(self.breaker(target),
                                              now) is not BreakerState.CLOSED:
            return Enqueued.REFUSED
        self.queues.setdefault(target, []).append(work)
        return Enqueued.QUEUED

    def reset(self, target: str) -> None:
        if self._store_reachable():
            self.breakers[target] = closed(self.settings)

    def read(self, target: str, now: datetime) -> BreakerView | None:
        """The breaker's view, or None (unknown) while the store is down."""
        if self.store_down:
            return None
        return view(self.breaker(target), now)
