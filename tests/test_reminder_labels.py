"""Reminder dispatches' labels (RM-021, capability `reminder-labels`): every dispatch of a
reminder says a reminder triggered it; without the claim the target is called as before
and RM-021 is not claimed."""

from __future__ import annotations

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.process.backend import carried_capabilities
from jobconform.backends.protocol import REMINDER_LABELS
from jobconform.backends.reminders.protocol import REMINDER_TRIGGER, Delivery
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.clock import VirtualClock
from jobconform.conformance.reminders.harness import HarnessTarget
from jobconform.reference.reminders.oracle import DeliveryOutcome, ReminderConfig
from jobconform.spec import load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")


class WithoutReminderLabels(MemoryBackend):
    """The memory backend not claiming reminder-labels, as a runtime written before it."""

    name = "without-reminder-labels"
    capabilities = MemoryBackend.capabilities - {REMINDER_LABELS}


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
    backend = WithoutReminderLabels()
    reason = skip_reason(REGISTRY, backend, CANONICAL, ["RM-021"])
    assert reason is not None and REMINDER_LABELS in reason
    assert skip_reason(REGISTRY, backend, CANONICAL, ["RM-007"]) is None


def test_the_process_protocol_carries_the_claim() -> None:
    assert REMINDER_LABELS in carried_capabilities(2)
    assert REMINDER_LABELS not in carried_capabilities(1)  # no reminders in version 1
