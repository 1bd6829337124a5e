"""The reminders adapter protocol (seed 002 §10.14): what a runtime implements to have its
self-reminders checked.

A backend claiming the `reminders` capability has a method

    open_reminders(clock, config, target) -> ReminderRuntime

returning a fresh runtime with no reminders, using `clock` for every instant, the limits
in `config`, and `target` for every dispatch. Firing is driven by the clock: as soon as
the clock reaches a pending reminder's due time the runtime moves it to firing and calls
`target.dispatch(reminder_id, message, "reminder")` once (the label only from a backend
claiming `reminder-labels`, RM-021). The `Delivery` it gets back stands for the
dispatch call in flight; the harness decides how it ends. Once `delivery.decided()` is
true, `delivery.result()` returns (the execution started) or raises `DeliveryFailed` (a
clean failure before it started) or `DeliveryOutcomeUnknown` (a timeout: it may have
started), exactly as an HTTP dispatch would, and the runtime records that outcome.

A restart is `crash()` (threads stop, dispatches in flight are lost, nothing is written)
then `reopen()`, which returns a new runtime over the same durable store after its boot
recovery. Statuses cross the boundary as the canonical names: pending, firing, fired, cancelled,
failed. Nothing here needs inheriting; any object with these attributes fits.

Store faults (RM-014) are an optional capability: a backend that also claims
`store-faults:reminders` gives its runtime `inject_store_fault(fault)` and
`store_fault_struck()` (`jobconform.backends.faults`). The harness arms a plan for one
command: the runtime's k-th store write fails (`StoreWriteFailed`), and the runtime makes
it again at once, dispatching a reminder only after its move to firing has landed; or the
process crashes at that write, after which the harness calls `crash()` and `reopen()`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

from jobconform.reference.reminders.oracle import DeliveryOutcome, ReminderConfig

__all__ = [
    "REMINDER_TRIGGER",
    "Delivery",
    "DeliveryFailed",
    "DeliveryOutcomeUnknown",
    "DeliveryTarget",
    "ReadableDuringDispatch",
    "ReminderConfig",
    "ReminderConflict",
    "ReminderNotFound",
    "ReminderRejected",
    "ReminderRuntime",
    "ReminderView",
]


# What a reminder's execution says triggered it (RM-021); the execution names the reminder
# by the id it is dispatched with.
REMINDER_TRIGGER = "reminder"


class ReminderRejected(ValueError):
    """A creation broke a rule; `code` says which (schedule, message_empty,
    message_too_long, delay_too_short, delay_too_long, too_many_pending, daily_limit)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


class ReminderNotFound(KeyError):
    """The runtime holds no reminder with this id."""


class ReminderConflict(RuntimeError):
    """The reminder's state does not allow the operation (a cancel of a fired reminder)."""

    def __init__(self, reminder_id: str, status: str) -> None:
        super().__init__(f"reminder {reminder_id} is {status}; only a pending reminder can"
                         " be cancelled")
        self.status = status


class DeliveryFailed(ConnectionError):
    """The dispatch failed before the execution started; it is safe to try again."""


class DeliveryOutcomeUnknown(TimeoutError):
    """The dispatch timed out: the execution may have started."""


class Delivery:
    """One dispatch of a reminder's message, whose end the harness decides.

    A runtime that dispatches from threads blocks the dispatching thread in
    `wait_for_decision`, as a real call is busy until it returns; `decide` wakes it, and a
    runtime stopping wakes it with `wake` after making `released()` true.
    """

    def __init__(self, reminder_id: str, message: str,
                 triggered_by: str | None = None) -> None:
        self.reminder_id = reminder_id
        self.message = message
        # What the execution says triggered it (RM-021): "reminder" from a runtime claiming
        # reminder-labels; None from one that passes no label.
        self.triggered_by = triggered_by
        self._outcome: DeliveryOutcome | None = None
        self._decision = threading.Condition()

    def decide(self, outcome: DeliveryOutcome) -> None:
        """Fix how the dispatch ends; only the first decision counts."""
        with self._decision:
            if self._outcome is None:
                self._outcome = outcome
            self._decision.notify_all()

    def decided(self) -> bool:
        return self._outcome is not None

    def wait_for_decision(self, released: Callable[[], bool]) -> bool:
        """Block until decided (True) or `released()` is true (False)."""
        with self._decision:
            self._decision.wait_for(lambda: self._outcome is not None or released())
            return self._outcome is not None

    def wake(self) -> None:
        with self._decision:
            self._decision.notify_all()

    def result(self) -> None:
        """End the dispatch call.

        Raises:
            DeliveryFailed: a clean failure before the execution started.
            DeliveryOutcomeUnknown: the call timed out.
            RuntimeError: the harness has not decided yet (a runtime bug).
        """
        outcome = self._outcome
        if outcome is None:
            raise RuntimeError("the runtime ended a dispatch the harness has not decided yet")
        if outcome is DeliveryOutcome.FAILS:
            raise DeliveryFailed(f"dispatch of reminder {self.reminder_id} refused (503)")
        if outcome is DeliveryOutcome.UNKNOWN:
            raise DeliveryOutcomeUnknown(f"dispatch of reminder {self.reminder_id} timed out")


class DeliveryTarget(Protocol):
    def dispatch(self, reminder_id: str, message: str,
                 triggered_by: str | None = None) -> Delivery:
        """Start one dispatch of the reminder's message; never raises. A runtime claiming
        `reminder-labels` passes `triggered_by` "reminder", so the execution it starts
        says a reminder triggered it, and which (RM-021)."""
        ...


class ReminderView(Protocol):
    """One reminder as the runtime returns it; a snapshot (RM-013)."""

    @property
    def reminder_id(self) -> str: ...
    @property
    def message(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def fire_at(self) -> datetime: ...
    @property
    def due_at(self) -> datetime | None: ...
    @property
    def attempts(self) -> int: ...
    @property
    def fired_at(self) -> datetime | None: ...


class ReadableDuringDispatch(Protocol):
    """An optional capability of a reminder runtime: `get` may be called from inside
    `target.dispatch`, from the dispatching thread. The harness's target then reads the
    reminder as each dispatch is made (RM-007: firing, its attempt counted, before the
    target is called). A runtime without the attribute, or with it false (one that
    dispatches holding a lock `get` needs, or a child process busy answering), is only
    checked on its state after the command."""

    readable_during_dispatch: bool


class ReminderRuntime(Protocol):
    def create(self, message: str, fire_at: datetime | None = None,
               delay_seconds: float | None = None,
               idempotency_key: str | None = None) -> str:
        """Schedule a reminder by exactly one of `fire_at` and `delay_seconds`.

        With an `idempotency_key` that a pending or firing reminder was created with less
        than 24 hours ago, nothing is created and that reminder's id is returned, before
        any rule is checked (RM-017). Without one (None), the runtime derives a key from
        the message and the schedule as given (`delay_seconds=N` or `fire_at` in the
        offset it came in, never the instant it resolves to) and answers the same way a
        pending or firing reminder created without a key, with the same derived key, less
        than 24 hours ago (RM-018). A key given and a key derived never answer each other.

        Returns:
            The new reminder's id, or the id of the reminder the key names.

        Raises:
            ReminderRejected: a rule is broken (RM-001..RM-005); nothing was created.
        """
        ...

    def cancel(self, reminder_id: str) -> str:
        """Cancel a pending reminder.

        Returns:
            "cancelled", or "already_cancelled" when it was cancelled before.

        Raises:
            ReminderNotFound: unknown id.
            ReminderConflict: the reminder is firing, fired or failed.
        """
        ...

    def set_autonomy(self, enabled: bool) -> None:
        """Turn the agent's autonomy off or on (RM-015). While it is off no pending
        reminder is dispatched; turned on again, a reminder that fell due meanwhile is
        dispatched at once. The switch survives `crash` and `reopen`."""
        ...

    def sweep(self) -> int:
        """Run the retention sweep once (RM-016): delete the fired, cancelled and failed
        reminders created more than `config.retention_days` days ago (none when it is 0).

        Returns:
            How many reminders were deleted.
        """
        ...

    def get(self, reminder_id: str) -> ReminderView | None:
        """A snapshot of the reminder, or None for an unknown id."""
        ...

    def list_reminders(self, status: str | None = "pending") -> Sequence[ReminderView]:
        """Snapshots in creation order (RM-013).

        Args:
            status: list the reminders of this status only; None lists every status.
                A caller that names none gets the pending reminders (RM-019).
        """
        ...

    def settle(self) -> None:
        """Return once every decided dispatch is recorded and every reminder due by the
        clock's current time has been dispatched."""
        ...

    def crash(self) -> None:
        """Stop as a crash would: dispatches in flight are abandoned, nothing is written,
        and nothing fires until `reopen`."""
        ...

    def reopen(self) -> ReminderRuntime:
        """After `crash`: a new runtime over the same durable store, as a restarted
        process opens it, with its boot recovery done."""
        ...

    def close(self) -> None:
        """Release threads and connections."""
        ...
