"""The memory backend's reminders: the step reminders runtime over an in-memory store.

A restart reopens the same in-memory data with a new store object and a new runtime, as
a process would reopen its database.
"""

from __future__ import annotations

from jobconform.backends.protocol import Clock
from jobconform.backends.reminders.protocol import DeliveryTarget, ReminderConfig
from jobconform.backends.reminders.runtime import StepReminderRuntime
from jobconform.backends.reminders.store import InMemoryReminderStore


def open_memory_reminders(clock: Clock, config: ReminderConfig,
                          target: DeliveryTarget) -> StepReminderRuntime:
    return StepReminderRuntime(InMemoryReminderStore(), clock, config, target)
