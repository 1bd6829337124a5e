"""The memory backend's reminders: the step reminders runtime over an in-memory store.

A restart reopens the same in-memory data with a new store object and a new runtime, as
a process would reopen its database.
"""

from __future__ import annotations

from jobconform.backends.protocol import Clock
from jobconform.backends.reminder_runtime import StepReminderRuntime
from jobconform.backends.reminder_store import InMemoryReminderStore
from jobconform.backends.reminders_protocol import DeliveryTarget, ReminderConfig


def open_memory_reminders(clock: Clock, config: ReminderConfig,
                          target: DeliveryTarget) -> StepReminderRuntime:
    return StepReminderRuntime(InMemoryReminderStore(), clock, config, target)
