"""The scheduling adapter protocol (seed 002 §10.1, §10.2, §10.6.1): what a runtime
implements to have its schedules checked.

A backend claiming the `scheduling` capability has a method

    open_scheduling(clock, config, target) -> SchedulingRuntime

returning a fresh scheduler with no schedules and autonomy on, using `clock` for every
instant, `config.missed_fires` after downtime, and `target` for the outside world. Firing
is driven by the clock: as soon as it reaches a schedule's next fire time (and autonomy is
on) the scheduler claims that fire and executes it once. An execution of a schedule with
a pre-check first calls `target.pre_check(schedule_id)` (never for a manual trigger):
it returns the hook's output ("" means skip) or raises `PreCheckFailed` or
`PreCheckTimedOut`, and a failure fails open. Dispatching is fire-and-forget:
`target.dispatch(schedule_id, scheduled_for, message)` returns at once.

A restart is `crash()` (threads stop, nothing is written) then `reopen()`, which returns a
new scheduler over the same durable store after its boot catch-up. `open_peer()` starts a
second scheduler over the same store, as a second process would; both then run until
`crash` or `close`. Nothing here needs inheriting; any object with these attributes fits.

A backend that also claims `scheduling-ends` (SC-019) has `end_execution`, through which
the runtime records how a dispatched execution ended, and its executions show `outcome`;
the kit calls the one and reads the other only on such a backend. Run self-running as
well (SR-009), such a scheduler learns the ends by itself: told `start_end_polls(interval)`,
it asks `target.execution_end(schedule_id, scheduled_for)` about each dispatched execution
with no end yet at every interval boundary counted from that call, and records an end the
target answers as `end_execution` would. One that claims
`scheduling-validation` too (SC-020..SC-024) validates what succeeded: `set_validation`
switches it per schedule, an end then starts a validation run, `end_validation` brings the
run's verdict, and `operator_alerts` reads the alerts of failed validations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from jobconform.reference.scheduling.oracle import SchedulingConfig

SCHEDULING = "scheduling"

__all__ = [
    "SCHEDULING",
    "ExecutionEnd",
    "ExecutionView",
    "PreCheckFailed",
    "PreCheckTimedOut",
    "ScheduleNotFound",
    "ScheduleRejected",
    "ScheduleView",
    "SchedulingConfig",
    "SchedulingRuntime",
    "SchedulingTarget",
    "ValidationRunView",
]


class ScheduleRejected(ValueError):
    """A creation broke a rule; `code` says which (schedule, expression, timezone)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class ScheduleNotFound(KeyError):
    """The runtime holds no schedule with this id."""


class PreCheckFailed(RuntimeError):
    """The pre-check exited non-zero or answered something malformed."""


class PreCheckTimedOut(TimeoutError):
    """The pre-check did not answer in time."""


@dataclass(frozen=True)
class ExecutionEnd:
    """How a dispatched execution ended, as the target answers a scheduler that polls for
    it (SR-009): succeeded, failed or cancelled, and what it cost (None when unknown)."""

    outcome: str
    cost: float | None


class SchedulingTarget(Protocol):
    def pre_check(self, schedule_id: str) -> str:
        """Run the schedule's pre-check hook once.

        Returns:
            Its output: empty to skip this fire, else the message to dispatch instead.

        Raises:
            PreCheckFailed: the hook failed.
            PreCheckTimedOut: the hook did not answer in time.
        """
        ...

    def dispatch(self, schedule_id: str, scheduled_for: datetime, message: str) -> None:
        """Start one execution (fire-and-forget); never raises."""
        ...

    def execution_end(self, schedule_id: str, scheduled_for: datetime) -> ExecutionEnd | None:
        """How the execution dispatched for that fire ended, or None while it runs (seed
        002 §10.6's poll of the store the backend writes the end to); asked only by a
        scheduler told to `start_end_polls` (SR-009). Never raises."""
        ...


class ScheduleView(Protocol):
    """One schedule as the runtime returns it; a snapshot (SC-016)."""

    @property
    def schedule_id(self) -> str: ...
    @property
    def kind(self) -> str: ...  # "once" or "cron"
    @property
    def message(self) -> str: ...
    @property
    def expression(self) -> str | None: ...
    @property
    def timezone(self) -> str | None: ...
    @property
    def pre_check(self) -> bool: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def next_fire_at(self) -> datetime | None: ...
    @property
    def validation(self) -> bool:
        """Whether its executions' successes are validated (SC-020); read only from a
        backend claiming `scheduling-validation`, as are `validation_timeout` and the
        executions' `execution_id`, `business_status` and `validation_run`."""
        ...
    @property
    def validation_timeout(self) -> float | None: ...  # seconds; None until set


class ValidationRunView(Protocol):
    """A validation run (SC-021); a snapshot."""

    @property
    def run_id(self) -> str: ...
    @property
    def validates(self) -> str: ...  # the execution_id of the execution it validates
    @property
    def started_at(self) -> datetime: ...
    @property
    def timeout_seconds(self) -> float: ...


class ExecutionView(Protocol):
    """One execution of a schedule (SC-015); a snapshot."""

    @property
    def schedule_id(self) -> str: ...
    @property
    def scheduled_for(self) -> datetime: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def trigger(self) -> str: ...  # schedule, catch_up or manual
    @property
    def status(self) -> str: ...  # dispatched or skipped
    @property
    def message(self) -> str | None: ...
    @property
    def cost(self) -> float | None: ...
    @property
    def pre_check(self) -> str | None: ...  # skip, prompt, error, timeout, or None
    @property
    def outcome(self) -> str | None:
        """succeeded, failed or cancelled once ended, else None (SC-019); read only from a
        backend claiming `scheduling-ends`."""
        ...
    @property
    def execution_id(self) -> str: ...  # unique in its schedule's history (SC-021)
    @property
    def business_status(self) -> str | None:
        """pending_validation, validated, failed_validation or skipped once ended, else None
        (SC-021, SC-022)."""
        ...
    @property
    def validation_run(self) -> str | None: ...  # the run_id of its validation run


class SchedulingRuntime(Protocol):
    def create_once(self, message: str, run_at: datetime | None = None,
                    delay_seconds: float | None = None, pre_check: bool = False) -> str:
        """Schedule a one-shot job by exactly one of `run_at` and `delay_seconds`.

        Returns:
            The new schedule's id.

        Raises:
            ScheduleRejected: code schedule (SC-001); nothing was created.
        """
        ...

    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        """Schedule `message` at the fire times of a five-field cron expression read on the
        wall clock of the IANA zone `timezone`.

        Raises:
            ScheduleRejected: code expression or timezone (SC-003); nothing was created.
        """
        ...

    def trigger(self, schedule_id: str) -> None:
        """Execute the schedule once now, bypassing its pre-check (SC-009).

        Raises:
            ScheduleNotFound: unknown id.
        """
        ...

    def end_execution(self, schedule_id: str, scheduled_for: datetime, outcome: str,
                      cost: float | None) -> bool:
        """Record how the execution dispatched for `scheduled_for` ended (SC-019), on the
        first execution of that fire, in history order, with no end yet; called only on
        a backend claiming `scheduling-ends`.

        Args:
            outcome: succeeded, failed or cancelled.
            cost: what it cost; None when not known.

        Returns:
            True when recorded; False when refused (that fire has ended already, or has
            no dispatched execution), nothing changed.

        Raises:
            ScheduleNotFound: unknown id.
        """
        ...

    def start_end_polls(self, interval_seconds: float) -> None:
        """From now on learn by itself how dispatched executions end (SR-009): at every
        `interval_seconds` boundary counted from this call (the first at the call), ask
        `target.execution_end` about each dispatched execution with no end yet, and record
        an end it answers as `end_execution` does (the first end stays). Called only on a
        backend claiming `self-running` and `scheduling-ends`, by its self-running checks;
        the commanded checks never call it, so the scheduler never asks their target.

        Raises:
            ValueError: an interval that is not a finite number of seconds above 0.
        """
        ...

    def set_validation(self, schedule_id: str, enabled: bool, timeout_seconds: float) -> None:
        """Switch the schedule's business validation on or off, with the validation runs'
        timeout (SC-020); called only on a backend claiming `scheduling-validation`, as
        are the three methods below.

        Raises:
            ScheduleRejected: code validation, a timeout that is not a finite number above
                0; nothing changed.
            ScheduleNotFound: unknown id.
        """
        ...

    def end_validation(self, schedule_id: str, scheduled_for: datetime, verdict: str) -> bool:
        """The answer of the validation run of the execution dispatched for
        `scheduled_for` (SC-022, SC-023), for the first execution of that fire, in history
        order, pending validation: a JSON object with `passed` true validates it; anything
        else, or a verdict later than the run's timeout, fails it and raises an operator
        alert (SC-024).

        Returns:
            True when taken; False when refused (no execution of that fire is pending
            validation), nothing changed.

        Raises:
            ScheduleNotFound: unknown id.
        """
        ...

    def validation_run(self, run_id: str) -> ValidationRunView | None:
        """The validation run with that id, or None (SC-021)."""
        ...

    def operator_alerts(self) -> Sequence[str]:
        """The execution ids of the failed validations, in the order alerted (SC-024)."""
        ...

    def edit(self, schedule_id: str, message: str | None = None,
             expression: str | None = None, timezone: str | None = None) -> None:
        """Change the fields given; None leaves a field as it is (SC-017). A cron
        schedule given a new expression or zone next fires at the new timetable's first
        fire time strictly after the clock's current time; otherwise next_fire_at, like
        created_at and the history, stays.

        Raises:
            ScheduleRejected: code expression or timezone as at creation, or code schedule
                for an expression or zone given to a one-shot job; nothing changed.
            ScheduleNotFound: unknown id.
        """
        ...

    def delete(self, schedule_id: str) -> None:
        """Remove the schedule with its history: it never fires again (SC-018).

        Raises:
            ScheduleNotFound: unknown id (a deleted one included).
        """
        ...

    def set_autonomy(self, enabled: bool) -> None:
        """Turn the master switch on or off (SC-010, SC-011)."""
        ...

    def get(self, schedule_id: str) -> ScheduleView | None: ...

    def list_schedules(self) -> Sequence[ScheduleView]:
        """Snapshots of every schedule, in creation order."""
        ...

    def history(self, schedule_id: str) -> Sequence[ExecutionView]:
        """The schedule's executions, in the order made.

        Raises:
            ScheduleNotFound: unknown id.
        """
        ...

    def settle(self) -> None:
        """Return once every fire the clock has reached has been executed."""
        ...

    def open_peer(self) -> SchedulingRuntime:
        """A second scheduler over the same store, running alongside this one."""
        ...

    def crash(self) -> None:
        """Stop as a crash would: nothing more is written or fired until `reopen`."""
        ...

    def reopen(self) -> SchedulingRuntime:
        """After `crash`: a new scheduler over the same durable store, with its boot
        catch-up done."""
        ...

    def close(self) -> None:
        """Release threads and connections."""
        ...
