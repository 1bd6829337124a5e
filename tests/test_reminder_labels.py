"""Reminder dispatches' labels (RM-021, capability `reminder-labels`): every dispatch of a
reminder says a reminder triggered it; without the claim the target is called as before
and RM-021 is not claimed."""

from __future__ import annotations

from optional_claims import assert_carried_from_version_2, assert_not_claimed, memory_without

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import REMINDER_LABELS
from jobconform.backends.reminders.protocol import REMINDER_TRIGGER, Delivery
from jobconform.conformance.clock import VirtualClock
from jobconform.conformance.reminders.harness import HarnessTarget
from jobconform.reference.reminders.oracle import DeliveryOutcome, ReminderConfig


def test_a_retried_dispatch_is_labelled_again() -> None:
    clock, target = VirtualClock(), HarnessTarget()
    config = ReminderConfig()
    runtime = MemoryBackend().open_reminders(clock, config, target)
    runtime.create("x", delay_seconds=60)
    clock.advance(60)
    runtime.settle()
    target.made()[0].decide(DeliveryOutcome.FAILS)
    runtime.settle()  # the failure is recorded: due again retry_delay_seconds from now
    clock.advance(config.retry_delay_seconds)
    runtime.settle()
    assert [d.triggered_by for d in target.made()] == [REMINDER_TRIGGER, REMINDER_TRIGGER]
    runtime.close()


def test_a_delivery_made_without_a_label_has_none() -> None:
    assert Delivery("r", "x").triggered_by is None


def test_without_the_claim_rm021_is_not_claimed() -> None:
    assert_not_claimed(memory_without(REMINDER_LABELS), REMINDER_LABELS, ["RM-021"], "RM-007")


def test_the_process_protocol_carries_the_claim() -> None:
    assert_carried_from_version_2(REMINDER_LABELS)
