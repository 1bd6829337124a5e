"""The adapter protocol of the `breaker` area: a dispatch circuit breaker per target.

A backend that claims the area has a method `open_breaker(clock, settings)` returning a
fresh, empty `BreakerRuntime` for each check (`settings` is a
`jobconform.reference.breaker.oracle.BreakerSettings` built from the profile). Targets, calls and
pieces of work are named by strings the harness picks. Answers cross the boundary as the
plain strings of `jobconform.reference.breaker.oracle` (`Admission`, `Enqueued`, `BreakerState`
values); a `BreakerReadout` is any object with the fields of `BreakerView`.

The breaker reads the time only from the clock it was given. Nothing here needs
inheriting; any object with these methods fits.

Seed 002's dispatch seams (CB-014 to CB-019) are an optional capability: a backend that
also claims `breaker-seams` has a runtime with `backstop()`, `record_missed_heartbeat(target)`,
`set_drain_lost(lost)`, `record_end(...)`, its own failure classifier, and `report_end(...)`,
the error it reports for a failed end (`SEAM_METHODS`).
The harness calls them on no other backend, so a breaker without them claims `breaker`
alone and sees those requirements "not claimed". They stay in `BreakerRuntime` below so
that the process protocol carries them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from jobconform.backends.protocol import Clock
from jobconform.reference.breaker.oracle import BreakerSettings

BREAKER = "breaker"
# The runtime's methods that only a backend claiming `breaker-seams` has (CB-014 to CB-019).
SEAM_METHODS = ("backstop", "record_missed_heartbeat", "set_drain_lost", "record_end",
                "report_end")


class BreakerReadout(Protocol):
    """One target's breaker as read (CB-013)."""

    @property
    def state(self) -> str: ...  # closed, open or half_open
    @property
    def failures(self) -> int: ...  # consecutive counted failures while closed
    @property
    def cooldown_seconds(self) -> float: ...  # the current cooldown
    @property
    def open_until(self) -> datetime | None: ...  # UTC; None while closed
    @property
    def probe(self) -> str | None: ...  # the call holding an unexpired probe lease


class BreakerRuntime(Protocol):
    def set_global_switch(self, on: bool) -> None:
        """Turn the global breaker switch on or off (off when opened; CB-001)."""
        ...

    def set_opt_in(self, target: str, on: bool) -> None:
        """Turn one target's own opt-in on or off (off for every target at first)."""
        ...

    def admit(self, target: str, call: str) -> str:
        """A call to `target` asks to run.

        Returns:
            "admitted", "probe" (the single half-open probe) or "refused". Never raises:
            when the store is unreachable the breaker fails open (CB-011).
        """
        ...

    def record(self, target: str, call: str, outcome: str, failure_class: str | None) -> None:
        """The call `call` ended: outcome "success", "failure" (with its class: "auth",
        "timeout" or "agent_error") or "cancelled". Never raises."""
        ...

    def record_end(self, target: str, call: str, signal: str | None, exit_code: int | None,
                   output: bool, error_text: str) -> str:
        """The call `call` failed; the runtime classes its raw end itself and records the
        failure under that class, as `record` would (CB-016, CB-017).

        Args:
            signal: the name of the signal that ended the call's process ("SIGKILL",
                "SIGTERM", ...), or None when it exited.
            exit_code: its exit code, None when unknown.
            output: whether it produced any output before it ended.
            error_text: what it, or its host, said about the failure.

        Returns:
            The class it decided: "auth", "timeout" or "agent_error". A kill is never
            "auth". Never raises, also when the breaker is not engaged or its store is
            down (the class is answered all the same).

        Called only on a backend claiming `breaker-seams`.
        """
        ...

    def report_end(self, signal: str | None, exit_code: int | None, output: bool,
                   error_text: str) -> dict[str, object]:
        """The error the runtime reports for a failed call's raw end (the arguments as
        `record_end` takes them), as data; it records nothing.

        Returns:
            {"failure_class": the class `record_end` decides, "signal": the name of the
            signal that killed the end, the one given or the one its exit code reports
            (-9 or 137: "SIGKILL"; -15 or 143: "SIGTERM"; -2 or 130: "SIGINT"), else None
            (CB-018), "possible_causes": for a failure of class agent_error with no
            output and no error text, ["oom_kill", "timeout", "expired_token"], else []
            (CB-019)}. Never raises.

        Called only on a backend claiming `breaker-seams`.
        """
        ...

    def record_missed_heartbeat(self, target: str) -> None:
        """The target missed a heartbeat (seed 002's record_failure("missed_heartbeat")
        seam; CB-015): while closed it counts as a failure whatever the counted classes,
        and may trip; while open or half-open it changes nothing. Never raises.
        Called only on a backend claiming `breaker-seams`."""
        ...

    def enqueue(self, target: str, work: str) -> str:
        """New work for `target`: "queued" (added to the target's queue) or "refused"
        (fast-failed, not added). Never raises."""
        ...

    def queued(self, target: str) -> Sequence[str]:
        """The work waiting in `target`'s queue, oldest first."""
        ...

    def failed_work(self, target: str) -> Sequence[str]:
        """The work a trip of `target`'s breaker failed, in the order it was failed."""
        ...

    def reset(self, target: str) -> None:
        """The operator's reset (CB-012). Never raises."""
        ...

    def backstop(self) -> int:
        """Run the periodic backstop sweep once (CB-014): fail the queued work of every
        engaged target whose breaker is open or half-open, in queue order (a target whose
        breaker cannot be read keeps its work, and the outage is logged once).

        Returns:
            How many pieces of work the sweep failed. Never raises.

        Called only on a backend claiming `breaker-seams`.
        """
        ...

    def set_drain_lost(self, lost: bool) -> None:
        """Fault injection by the harness: while `lost`, a trip's inline drain is lost (the
        breaker opens, the queued work stays queued), as when the worker dies between
        writing the trip and failing the backlog; the backstop must then fail it.
        Called only on a backend claiming `breaker-seams`."""
        ...

    def start_backstop(self, interval_seconds: float) -> None:
        """Run the backstop sweep by itself from now on (SR-007): at every boundary
        `interval_seconds` apart counted from now, and at no other time. Called only on a
        backend claiming `self-running` and `breaker-seams`, by the self-running checks;
        a breaker whose backstop was not started never sweeps by itself."""
        ...

    def settle(self) -> None:
        """Return once whatever the runtime's own clockwork can do at the clock's current
        instant is done (its sweep due at a boundary the clock has reached has run). A
        breaker without clockwork of its own returns at once. Called only where
        `start_backstop` is."""
        ...

    def read(self, target: str) -> BreakerReadout | None:
        """The target's breaker now, or None when the store cannot be reached."""
        ...

    def logged_outages(self) -> int:
        """How many operations this runtime logged as unable to reach its store."""
        ...

    def set_store_available(self, available: bool) -> None:
        """Fault injection by the harness: make the state store unreachable, or back.

        A real adapter points its store client at an unreachable endpoint (the shipped
        SQL breaker swaps in an engine for a closed port or a missing file).
        """
        ...

    def peer(self) -> BreakerRuntime:
        """Another worker on the same store and configuration, as a second process
        would be: both see and change the same breakers (CB-013, CB-007)."""
        ...

    def close(self) -> None:
        """Release what the runtime holds; peers are closed separately."""
        ...


@runtime_checkable
class BreakerBackend(Protocol):
    """A backend claiming the breaker area."""

    def open_breaker(self, clock: Clock, settings: BreakerSettings) -> BreakerRuntime:
        """A fresh breaker runtime with no state, no queued work and both switches off."""
        ...
