"""The reminders area's commands, declared once (conformance/vocabulary.py).

Each declaration names the Robot keyword that sends a command, builds the command from
the keyword's arguments, and lists the Gherkin wordings that send it. The Behave steps
(conformance/reminders/steps.py) and the Robot keywords (conformance/reminders/keywords.py)
are derived from this list; the wordings are the feature files' and Robot suites' own.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from jobconform.conformance.area_steps import alias_list, at
from jobconform.conformance.vocabulary import Declaration, Phrase
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.reminders import commands as rc
from jobconform.reference.reminders.oracle import DeliveryOutcome, ReminderStatus

OUTCOME_WORDS = {"lands": DeliveryOutcome.LANDS, "fails": DeliveryOutcome.FAILS,
                 "times out": DeliveryOutcome.UNKNOWN, "unknown": DeliveryOutcome.UNKNOWN}


def delivery_outcome(word: str) -> DeliveryOutcome:
    """How a dispatch ends, as the suites write it.

    Raises:
        ValueError: not one of OUTCOME_WORDS.
    """
    if word not in OUTCOME_WORDS:
        raise ValueError(f"a dispatch {', '.join(OUTCOME_WORDS)}; not {word!r}")
    return OUTCOME_WORDS[word]


def _created(command: rc.CreateReminder) -> str:
    return command.reminder


def create_reminder(alias: str, message: str = "remember", delay: float | None = None,
                    fire_at_second: float | None = None, key: str | None = None,
                    utc_offset_hours: int = 0) -> rc.CreateReminder:
    """Create a reminder by ``delay`` seconds or ``fire_at_second`` (written
    ``utc_offset_hours`` ahead of UTC, the same instant), with idempotency key ``key``
    if given (RM-017; without one the runtime derives a key, RM-018); returns the
    answer."""
    fire_at = None if fire_at_second is None else _written_ahead(fire_at_second,
                                                                 utc_offset_hours)
    return rc.CreateReminder(alias, message, fire_at, delay, key)


def _written_ahead(second: float, hours: int) -> datetime:
    """The instant `second`, written `hours` ahead of UTC (the same instant)."""
    return at(second).astimezone(timezone(timedelta(hours=hours)))


def create_reminders(aliases: str, delay: float) -> list[rc.CreateReminder]:
    """Create each of the comma-separated reminders, ``delay`` seconds ahead."""
    return [rc.CreateReminder(alias, f"remember {alias}", None, delay)
            for alias in alias_list(aliases)]


def cancel_reminder(alias: str) -> rc.CancelReminder:
    return rc.CancelReminder(alias)


def dispatch_of_reminder(alias: str, outcome: str) -> rc.DeliverReminder:
    """Decide how the reminder's dispatch in flight ends: lands, fails or times out."""
    return rc.DeliverReminder(alias, delivery_outcome(outcome))


def advance_reminder_clock(seconds: float) -> AdvanceTime:
    return AdvanceTime(seconds)


def advance_under_fault(seconds: float, fault: str, write: int) -> rc.ReminderStoreFault:
    """Advance the clock while store write ``write`` ``fail``s or the process
    ``crash``es at it (then the runtime restarts over its store)."""
    return rc.ReminderStoreFault(StoreFault(FaultKind(fault), int(write)),
                                 AdvanceTime(seconds))


def dispatch_under_fault(alias: str, outcome: str, fault: str,
                         write: int) -> rc.ReminderStoreFault:
    """Decide a dispatch's end while store write ``write`` ``fail``s or the process
    ``crash``es at it."""
    return rc.ReminderStoreFault(StoreFault(FaultKind(fault), int(write)),
                                 dispatch_of_reminder(alias, outcome))


def restart_reminders(down: float = 0.0) -> rc.RestartReminders:
    """Crash the runtime, let ``down`` seconds pass, reopen it over the same store."""
    return rc.RestartReminders(down)


def set_reminder_autonomy(state: str) -> rc.SetAutonomy:
    """Turn the agent's autonomy ``off`` (its pending reminders are held) or ``on``."""
    if state not in ("on", "off"):
        raise ValueError(f"autonomy is on or off, not {state!r}")
    return rc.SetAutonomy(state == "on")


def sweep_reminders() -> rc.SweepReminders:
    """Run the retention sweep once; returns how many reminders the backend deleted."""
    return rc.SweepReminders()


def list_reminders(status: str | None = None) -> rc.ListReminders:
    """List the reminders of one status, or of every status when none is named."""
    return rc.ListReminders(None if status is None else ReminderStatus(status))


def list_reminders_by_default() -> rc.ListRemindersByDefault:
    """List the reminders as the runtime does when the caller names no status (RM-019)."""
    return rc.ListRemindersByDefault()


CREATED_BY = 'reminder "{alias}" is created with'
FAILS, CRASHES = FaultKind.FAIL.value, FaultKind.CRASH.value
DECLARATIONS = (
    Declaration("Create Reminder", create_reminder, (
        Phrase(CREATED_BY + ' message "{message}", a delay of {seconds:g} seconds and'
               ' idempotency key "{key}"',
               lambda alias, message, seconds, key: create_reminder(alias, message, seconds,
                                                                    key=key)),
        Phrase(CREATED_BY + ' message "{message}" and a delay of {seconds:g} seconds',
               lambda alias, message, seconds: create_reminder(alias, message, seconds)),
        Phrase(CREATED_BY + " an empty message and a delay of {seconds:g} seconds",
               lambda alias, seconds: create_reminder(alias, "", seconds)),
        Phrase(CREATED_BY + " a message of {count:d} characters and a delay of"
               " {seconds:g} seconds",
               lambda alias, count, seconds: create_reminder(alias, "m" * count, seconds)),
        Phrase(CREATED_BY + ' message "{message}" to fire at second {second:g}',
               lambda alias, message, second: create_reminder(
                   alias, message, fire_at_second=second)),
        # The same instant written at another UTC offset: a different fire_at as given
        # (RM-018), shown in UTC (RM-001).
        Phrase(CREATED_BY + ' message "{message}" to fire at second {second:g} written'
               " {hours:d} hours ahead of UTC",
               lambda alias, message, second, hours: create_reminder(
                   alias, message, fire_at_second=second, utc_offset_hours=hours)),
        Phrase(CREATED_BY + ' message "{message}", a delay of {seconds:g} seconds and a fire'
               " time of second {second:g}",
               lambda alias, message, seconds, second: create_reminder(
                   alias, message, seconds, fire_at_second=second)),
        Phrase(CREATED_BY + ' message "{message}" and no schedule',
               lambda alias, message: create_reminder(alias, message)),
    ), kept_as=_created),
    Declaration("Create Reminders", create_reminders, (
        Phrase('reminders "{aliases}" are created with a delay of {seconds:g} seconds',
               lambda aliases, seconds: create_reminders(aliases, seconds)),
    ), kept_as=_created),
    Declaration("Cancel Reminder", cancel_reminder, (
        Phrase('reminder "{alias}" is cancelled', cancel_reminder),
    )),
    Declaration("Dispatch Of Reminder", dispatch_of_reminder, (
        Phrase('the dispatch of reminder "{alias}" {outcome}', dispatch_of_reminder),
    )),
    Declaration("Advance Reminder Clock", advance_reminder_clock, (
        Phrase("the reminder clock advances {seconds:g} seconds", advance_reminder_clock),
        Phrase("the reminder clock advances {seconds:g} second", advance_reminder_clock),
    )),
    Declaration("Advance Reminder Clock Under Store Fault", advance_under_fault, (
        Phrase("store write {write:d} fails while the reminder clock advances {seconds:g}"
               " seconds", lambda write, seconds: advance_under_fault(seconds, FAILS, write)),
        Phrase("the process crashes at store write {write:d} while the reminder clock"
               " advances {seconds:g} seconds",
               lambda write, seconds: advance_under_fault(seconds, CRASHES, write)),
    )),
    Declaration("Dispatch Of Reminder Under Store Fault", dispatch_under_fault, (
        Phrase('store write {write:d} fails while the dispatch of reminder "{alias}"'
               " {outcome}",
               lambda write, alias, outcome: dispatch_under_fault(alias, outcome, FAILS,
                                                                  write)),
        Phrase("the process crashes at store write {write:d} while the dispatch of reminder"
               ' "{alias}" {outcome}',
               lambda write, alias, outcome: dispatch_under_fault(alias, outcome, CRASHES,
                                                                  write)),
    )),
    Declaration("Restart Reminders", restart_reminders, (
        Phrase("the reminders runtime restarts", restart_reminders),
        Phrase("the reminders runtime is down for {seconds:g} seconds and restarts",
               lambda seconds: restart_reminders(seconds)),
    )),
    Declaration("Set Reminder Autonomy", set_reminder_autonomy, (
        Phrase("the agent's autonomy is turned {state:w}", set_reminder_autonomy),
    )),
    Declaration("Sweep Reminders", sweep_reminders, (
        Phrase("the reminder retention sweep runs", sweep_reminders),
    )),
    Declaration("List Reminders", list_reminders, (
        Phrase("the {status:w} reminders are listed", list_reminders),
        Phrase("all reminders are listed", list_reminders),
    )),
    Declaration("List Reminders By Default", list_reminders_by_default, (
        Phrase("the reminders are listed without a filter", list_reminders_by_default),
    )),
)
