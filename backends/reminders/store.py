"""Where reminders are kept: the stored record, the store contract and the in-memory store.

A store is the durable half of a reminders runtime: a runtime reopened over the same
store after a crash finds every reminder as it was (RM-012). Every change is a
compare-and-set on the status the writer expects, so a stale writer cannot overwrite a
reminder that moved meanwhile. Time comes from the caller: a store never reads a clock.
"""

from __future__ import annotations

import builtins
import threading
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from jobconform.backends.faults import WriteFaults
from jobconform.reference.faults import StoreFault

PENDING, FIRING, FIRED, CANCELLED, FAILED = "pending", "firing", "fired", "cancelled", "failed"
REMINDER_STATUSES = (PENDING, FIRING, FIRED, CANCELLED, FAILED)
FINAL = (FIRED, CANCELLED, FAILED)


@dataclass(frozen=True)
class StoredReminder:
    """One reminder; frozen, so handing it out is handing out a snapshot (RM-013)."""

    reminder_id: str
    message: str
    status: str
    created_at: datetime
    fire_at: datetime
    due_at: datetime | None
    attempts: int = 0
    fired_at: datetime | None = None
    idempotency_key: str | None = None  # the key it was created with (RM-017)
    # Created without a key: the key derived from its message and schedule (RM-018).
    derived_key: str | None = None


class ReminderStore(Protocol):
    def add(self, reminder: StoredReminder) -> None:
        """Keep a new reminder, after every one added before it (creation order)."""
        ...

    def get(self, reminder_id: str) -> StoredReminder | None: ...

    def list(self, status: str | None = None) -> builtins.list[StoredReminder]:
        """Reminders in creation order, optionally of one status only."""
        ...

    def count(self, status: str) -> int: ...

    def live_with_key(self, idempotency_key: str, created_after: datetime,
                      derived: bool = False) -> StoredReminder | None:
        """The latest pending or firing reminder created with this key strictly after
        `created_after`, or None (RM-017). With `derived`, the key is one derived for a
        creation without a key, looked up among the reminders created without one (RM-018):
        a key given and a key derived never answer each other."""
        ...

    def count_created_after(self, instant: datetime) -> int:
        """How many reminders have created_at strictly after `instant`."""
        ...

    def due(self, now: datetime) -> builtins.list[StoredReminder]:
        """Pending reminders with due_at at or before `now`, earliest due first; none while
        the agent's autonomy is off (RM-015)."""
        ...

    def next_due(self) -> datetime | None:
        """The earliest due_at of a pending reminder, or None (also while autonomy is off)."""
        ...

    def set_autonomy(self, enabled: bool) -> None:
        """Turn the agent's autonomy switch off (hold) or on (RM-015). The switch is the
        agent's, kept beside the reminders, and `reopen` carries it over."""
        ...

    def delete_final_before(self, instant: datetime) -> int:
        """Delete fired, cancelled and failed reminders created before `instant` (RM-016).

        Returns:
            How many were deleted.
        """
        ...

    def transition(self, reminder_id: str, expected_status: str,
                   **changes: Any) -> StoredReminder | None:
        """Apply `changes` only if the reminder is in `expected_status`.

        Returns:
            The reminder after the change, or None when it was not in that status.
        """
        ...

    def inject_fault(self, fault: StoreFault | None) -> None:
        """Arm (None: disarm) a store fault for the writes from now on; every store object
        over the same data sees it (`jobconform.backends.faults`)."""
        ...

    def fault_struck(self) -> bool:
        """Whether the fault armed last has struck a write."""
        ...

    def reopen(self) -> ReminderStore:
        """A new store object over the same durable data, as after a process restart."""
        ...

    def close(self) -> None: ...


class _Shelf:
    """The durable data behind in-memory stores: it outlives any one store object."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.reminders: dict[str, StoredReminder] = {}  # insertion order is creation order
        self.autonomy = True
        # The injection point of store faults: `add` and `transition` are the writes.
        self.faults = WriteFaults()


class InMemoryReminderStore:
    def __init__(self, shelf: _Shelf | None = None) -> None:
        self._shelf = shelf if shelf is not None else _Shelf()

    def add(self, reminder: StoredReminder) -> None:
        self._shelf.faults.before_write()
        with self._shelf.lock:
            if reminder.reminder_id in self._shelf.reminders:
                raise ValueError(f"reminder id {reminder.reminder_id} is already held")
            self._shelf.reminders[reminder.reminder_id] = reminder

    def get(self, reminder_id: str) -> StoredReminder | None:
        with self._shelf.lock:
            return self._shelf.reminders.get(reminder_id)

    def list(self, status: str | None = None) -> builtins.list[StoredReminder]:
        with self._shelf.lock:
            return [r for r in self._shelf.reminders.values()
                    if status is None or r.status == status]

    def count(self, status: str) -> int:
        return len(self.list(status))

    def live_with_key(self, idempotency_key: str, created_after: datetime,
                      derived: bool = False) -> StoredReminder | None:
        return next((r for r in reversed(self.list())
                     if (r.derived_key if derived else r.idempotency_key) == idempotency_key
                     and r.status in (PENDING, FIRING) and r.created_at > created_after),
                    None)

    def count_created_after(self, instant: datetime) -> int:
        return sum(1 for r in self.list() if r.created_at > instant)

    def due(self, now: datetime) -> builtins.list[StoredReminder]:
        if not self._shelf.autonomy:
            return []
        due = [r for r in self.list(PENDING) if r.due_at is not None and r.due_at <= now]
        return sorted(due, key=lambda r: r.due_at or now)  # stable: creation order on ties

    def next_due(self) -> datetime | None:
        if not self._shelf.autonomy:
            return None
        return min((r.due_at for r in self.list(PENDING) if r.due_at is not None),
                   default=None)

    def transition(self, reminder_id: str, expected_status: str,
                   **changes: Any) -> StoredReminder | None:
        self._shelf.faults.before_write()
        with self._shelf.lock:
            current = self._shelf.reminders.get(reminder_id)
            if current is None or current.status != expected_status:
                return None
            moved = replace(current, **changes)
            self._shelf.reminders[reminder_id] = moved
            return moved

    def set_autonomy(self, enabled: bool) -> None:
        with self._shelf.lock:
            self._shelf.autonomy = enabled

    def delete_final_before(self, instant: datetime) -> int:
        with self._shelf.lock:
            old = [key for key, r in self._shelf.reminders.items()
                   if r.status in FINAL and r.created_at < instant]
            for key in old:
                del self._shelf.reminders[key]
            return len(old)
    def inject_fault(self, fault: StoreFault | None) -> None:
        self._shelf.faults.arm(fault)

    def fault_struck(self) -> bool:
        return self._shelf.faults.struck()

    def reopen(self) -> InMemoryReminderStore:
        return InMemoryReminderStore(self._shelf)

    def close(self) -> None:
        pass
