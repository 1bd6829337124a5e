"""The reminders area's commands: plain data every front-end speaks.

Reminders are named by aliases the check picks ("r1"); the harness maps the runtime's ids
to them. Time passes with the lifecycle's `AdvanceTime`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TypeAlias

from jobconform.reference.commands import AdvanceTime, fields_given, written
from jobconform.reference.faults import StoreFault
from jobconform.reference.reminders.oracle import DeliveryOutcome, ReminderStatus


@dataclass(frozen=True)
class CreateReminder:
    reminder: str
    message: str
    fire_at: datetime | None = None
    delay_seconds: float | None = None
    idempotency_key: str | None = None  # RM-017


@dataclass(frozen=True)
class CancelReminder:
    reminder: str


@dataclass(frozen=True)
class DeliverReminder:
    """Decide how the reminder's dispatch in flight ends (nothing if it has none)."""

    reminder: str
    outcome: DeliveryOutcome


@dataclass(frozen=True)
class RestartReminders:
    """Crash the runtime, let `down_seconds` pass, and reopen it over the same store."""

    down_seconds: float = 0.0


@dataclass(frozen=True)
class SetAutonomy:
    """Disable (hold) or enable the agent's autonomy (RM-015)."""

    enabled: bool


@dataclass(frozen=True)
class SweepReminders:
    """Run the retention sweep once (RM-016)."""


@dataclass(frozen=True)
class GetReminder:
    reminder: str


@dataclass(frozen=True)
class ListReminders:
    """List the reminders of one status, or of every status when `status` is None."""

    status: ReminderStatus | None = None


@dataclass(frozen=True)
class ListRemindersByDefault:
    """List the reminders without naming a status: the runtime's default filter (RM-019)."""


@dataclass(frozen=True)
class ReminderStoreFault:
    """Run `command` with `fault` planned for the writes the runtime makes during it
    (RM-014). After a crash the runtime is reopened over the same store at once, as
    `RestartReminders()` reopens it."""

    fault: StoreFault
    command: AdvanceTime | DeliverReminder


ReminderCommand: TypeAlias = (CreateReminder | CancelReminder | DeliverReminder
                              | RestartReminders | SetAutonomy | SweepReminders | GetReminder
                              | ListReminders | ListRemindersByDefault | AdvanceTime
                              | ReminderStoreFault)


def describe_reminder_command(command: ReminderCommand) -> str:
    """One readable line per command; fields left at their defaults are omitted."""
    if isinstance(command, ReminderStoreFault):
        return (f"{describe_reminder_command(command.command)} while"
                f" {command.fault.describe()}")
    values: list[tuple[str, object]] = []
    for name, value in fields_given(command):
        if isinstance(value, str) and len(value) > 40:
            value = f"<{len(value)} characters>"
        shown = value.value if isinstance(value, DeliveryOutcome | ReminderStatus) else value
        values.append((name, shown))
    return written(command, values)
