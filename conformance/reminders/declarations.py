"""What the reminders area's suites say (RM-001..RM-021), declared once
(conformance/vocabulary.py): the commands, checks, the parameter setting and the store
faults precondition from which its Behave steps and Robot keywords are derived, in the
feature files' and the Robot suites' own words.

Checks read what the BACKEND shows: its reminder records, the answers kept (a creation's
under its alias, the last cancel, sweep, listing and read under their own names) and
the dispatches its delivery target saw. Seconds count from the virtual clock's start;
the reminders have a clock of their own, advanced only by `Advance Reminder Clock`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

from jobconform.backends.reminders.protocol import REMINDER_TRIGGER, ReminderView
from jobconform.conformance.area_steps import alias_list, at
from jobconform.conformance.reminders.harness import (
    CONFIG_PARAMETERS,
    ReminderHarness,
    freeze,
)
from jobconform.conformance.vocabulary import (
    Check,
    Declaration,
    Phrase,
    Precondition,
    Reading,
    Vocabulary,
    check_worded,
    command_worded,
    kept,
    parameter_setting,
    unchanged_since_read,
)
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.reminders import commands as rc
from jobconform.reference.reminders.oracle import (
    CREATED,
    REPLAYED,
    DeliveryOutcome,
    ReminderStatus,
    rejected,
)

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


def read_reminder(alias: str) -> rc.GetReminder:
    """Read the reminder; the record it read is kept for the checks on the read."""
    return rc.GetReminder(alias)


def list_reminders_by_default() -> rc.ListRemindersByDefault:
    """List the reminders as the runtime does when the caller names no status (RM-019)."""
    return rc.ListRemindersByDefault()


# The names the answers the checks read are kept under (a creation's: its alias).
CANCELLED, SWEPT, LISTED, READ = "cancel:", "sweep:", "listing:", "read:"
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
    command_worded("Create Reminders", create_reminders,
                   'reminders "{aliases}" are created with a delay of {delay:g} seconds',
                   kept_as=_created),
    command_worded("Cancel Reminder", cancel_reminder,
                   'reminder "{alias}" is cancelled',
                   kept_as=lambda command: CANCELLED),
    command_worded("Dispatch Of Reminder", dispatch_of_reminder,
                   'the dispatch of reminder "{alias}" {outcome}'),
    command_worded("Advance Reminder Clock", advance_reminder_clock,
                   "the reminder clock advances {seconds:g} seconds",
                   "the reminder clock advances {seconds:g} second"),
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
    command_worded("Restart Reminders", restart_reminders,
                   "the reminders runtime restarts",
                   "the reminders runtime is down for {down:g} seconds and restarts"),
    command_worded("Set Reminder Autonomy", set_reminder_autonomy,
                   "the agent's autonomy is turned {state:w}"),
    command_worded("Sweep Reminders", sweep_reminders,
                   "the reminder retention sweep runs",
                   kept_as=lambda command: SWEPT),
    command_worded("List Reminders", list_reminders,
                   "the {status:w} reminders are listed",
                   "all reminders are listed",
                   kept_as=lambda command: LISTED),
    command_worded("List Reminders By Default", list_reminders_by_default,
                   "the reminders are listed without a filter",
                   kept_as=lambda command: LISTED),
    command_worded("Read Reminder", read_reminder,
                   'reminder "{alias}" is read',
                   kept_as=lambda command: READ),
)

# -- checks: what the backend shows ---------------------------------------------------------


def _held(alias: str, shown: Callable[[ReminderView | None], object]) -> Any:
    """Reads what the backend holds of reminder `alias` (None: nothing), as `shown`
    shows it."""
    def read(through: Any) -> object:
        harness: ReminderHarness = through.harness
        reminder_id = harness.ids.get(alias)
        if reminder_id is None:
            return f"no reminder {alias!r} (never created)"
        return shown(harness.runtime.get(reminder_id))
    return read


def _field(alias: str, name: str) -> Any:
    """Reads field `name` of what the backend holds of reminder `alias`."""
    return _held(alias, lambda view: "no record held" if view is None else getattr(view, name))


def _shows(alias: str, name: str, wanted: object) -> Reading:
    return Reading(f"reminder {alias!r} {name}", _field(alias, name), wanted)


def creation_should_be_accepted(alias: str) -> Reading:
    return Reading(f"the creation of {alias!r}", kept(alias), CREATED)


def creation_should_be_rejected(alias: str, code: str) -> Reading:
    return Reading(f"the creation of {alias!r}", kept(alias), rejected(code))


def creation_should_answer_reminder(alias: str, original: str) -> Reading:
    """The creation created nothing and answered the reminder its key names (RM-017)."""
    return Reading(f"the creation of {alias!r}", kept(alias), f"{REPLAYED}:{original}")


def cancel_should_answer(alias: str, expected: str) -> Reading:
    """Cancel the reminder; the backend must answer ``expected``."""
    return Reading(f"the cancel of {alias!r}",
                   lambda through: through.run(cancel_reminder(alias)), expected)


def reminder_status_should_be(alias: str, status: str) -> Reading:
    return _shows(alias, "status", status)


def reminder_attempts_should_be(alias: str, attempts: int) -> Reading:
    return _shows(alias, "attempts", attempts)


def reminder_should_be_due_at_second(alias: str, second: float) -> Reading:
    return _shows(alias, "due_at", at(second))


def reminder_should_not_be_due(alias: str) -> Reading:
    return _shows(alias, "due_at", None)


def reminder_should_fire_at_second(alias: str, second: float) -> Reading:
    return _shows(alias, "fire_at", at(second))


def reminder_created_at_second(alias: str, second: float) -> Reading:
    return _shows(alias, "created_at", at(second))


def reminder_fired_at_second(alias: str, second: float) -> Reading:
    return _shows(alias, "fired_at", at(second))


def reminder_should_not_have_fired(alias: str) -> Reading:
    return _shows(alias, "fired_at", None)


def _dispatches(alias: str, harness: ReminderHarness) -> list[Any]:
    reminder_id = harness.ids.get(alias)
    return [made for made in harness.target.made() if made.reminder_id == reminder_id]


def reminder_dispatches_should_be(alias: str, count: int) -> Reading:
    return Reading(f"dispatches of reminder {alias!r}",
                   lambda through: len(_dispatches(alias, through.harness)), count)


def reminder_dispatches_should_be_labelled(alias: str) -> Reading:
    """Every dispatch made for the reminder carries triggered_by "reminder" (RM-021)."""
    def labelled(labels: object, wanted: object) -> bool:
        return isinstance(labels, list) and bool(labels) and all(
            label == REMINDER_TRIGGER for label in labels)

    return Reading(f"what triggered each dispatch of reminder {alias!r}",
                   lambda through: [made.triggered_by
                                    for made in _dispatches(alias, through.harness)],
                   f"at least one dispatch, each {REMINDER_TRIGGER!r}", labelled)


def swept_count_should_be(swept: object, count: int) -> Reading:
    """``swept`` is what `Sweep Reminders` returned."""
    return Reading("reminders the sweep deleted", lambda through: swept, int(count))


def reminder_should_not_be_held(alias: str) -> Reading:
    """The backend holds no record of the reminder any more (a sweep deleted it)."""
    return Reading(f"reminder {alias!r} after the sweep",
                   _held(alias, lambda view: None if view is None else view.status), None)


def listed_reminders_should_be(listed: object, aliases: str) -> Reading:
    """``listed`` is what `List Reminders` returned."""
    return Reading("the listing", lambda through: listed, alias_list(aliases))


def reminder_read_earlier_should_be_unchanged() -> Reading:
    """The record the last `Read Reminder` returned still reads as it did then: read as
    (what it read then, what it reads now)."""
    return unchanged_since_read(
        "reminder", lambda command: command.reminder if isinstance(command, rc.GetReminder)
        else None, READ, lambda harness, view: freeze(view))


def no_reminder_should_have_been_read() -> Reading:
    return Reading("the read of an unknown reminder", kept(READ), None)


def _read_status(status: str) -> Reading:
    def read(through: Any) -> object:
        record = through.answers.get(READ)
        return "no reminder was read" if record is None else record.status
    return Reading("the status of the reminder read", read, status)


CREATION_OF = 'the creation of reminder "{alias}" '
REMINDER = 'reminder "{alias}" '
CHECKS = (
    check_worded("Creation Should Be Accepted", creation_should_be_accepted,
                 CREATION_OF + "is accepted"),
    check_worded("Creation Should Be Rejected", creation_should_be_rejected,
                 CREATION_OF + 'is rejected with "{code}"'),
    check_worded("Creation Should Answer Reminder", creation_should_answer_reminder,
                 CREATION_OF + 'answers reminder "{original}"'),
    Check("Cancel Should Answer", cancel_should_answer, (
        Phrase('the cancel answers "{answer}"', lambda answer: Reading(
            "the cancel's answer", kept(CANCELLED), answer)),
    )),
    check_worded("Reminder Status Should Be", reminder_status_should_be,
                 REMINDER + "is {status:w}"),
    check_worded("Reminder Attempts Should Be", reminder_attempts_should_be,
                 REMINDER + "has {attempts:d} attempts",
                 REMINDER + "has {attempts:d} attempt"),
    check_worded("Reminder Should Be Due At Second", reminder_should_be_due_at_second,
                 REMINDER + "is due at second {second:g}"),
    check_worded("Reminder Should Not Be Due", reminder_should_not_be_due, REMINDER + "is not due"),
    check_worded("Reminder Should Fire At Second", reminder_should_fire_at_second,
                 REMINDER + "fires at second {second:g}"),
    check_worded("Reminder Should Have Been Created At Second", reminder_created_at_second,
                 REMINDER + "was created at second {second:g}"),
    check_worded("Reminder Should Have Fired At Second", reminder_fired_at_second,
                 REMINDER + "fired at second {second:g}"),
    check_worded("Reminder Should Not Have Fired", reminder_should_not_have_fired,
                 REMINDER + "has not fired"),
    check_worded("Reminder Dispatches Should Be", reminder_dispatches_should_be,
                 REMINDER + "was dispatched {count:d} times",
                 REMINDER + "was dispatched {count:d} time"),
    check_worded("Reminder Dispatches Should Be Labelled", reminder_dispatches_should_be_labelled,
                 'every dispatch of reminder "{alias}" was labelled as triggered by it'),
    Check("Swept Count Should Be", swept_count_should_be, (
        Phrase("the sweep deleted {count:d} reminders",
               lambda count: Reading("reminders the sweep deleted", kept(SWEPT), count)),
        Phrase("the sweep deleted {count:d} reminder",
               lambda count: Reading("reminders the sweep deleted", kept(SWEPT), count)),
    )),
    check_worded("Reminder Should Not Be Held", reminder_should_not_be_held,
                 REMINDER + "is no longer held"),
    Check("Listed Reminders Should Be", listed_reminders_should_be, (
        Phrase('the reminders listed are "{aliases}"', lambda aliases: Reading(
            "the listing", kept(LISTED), alias_list(aliases))),
        Phrase("no reminders are listed", lambda: Reading("the listing", kept(LISTED), [])),
    )),
    check_worded("Reminder Read Earlier Should Be Unchanged",
                 reminder_read_earlier_should_be_unchanged,
                 "the reminder read earlier still reads as it did"),
    check_worded("No Reminder Should Have Been Read", no_reminder_should_have_been_read,
                 "no reminder was read"),
    check_worded(None, lambda alias, message: _shows(alias, "message", message),
                 REMINDER + 'has the message "{message}"'),
    check_worded(None, _read_status, "the reminder read is {status:w}"),
)

# -- the parameter setting and the store faults precondition ------------------------------


SETTINGS = (parameter_setting("reminders with {name:w} set to {value:g}", "reminder",
                              CONFIG_PARAMETERS),)


PRECONDITIONS = (
    # RM-014 needs a runtime that takes store faults: elsewhere skipped, never passed.
    Precondition.claimed(
        "Require Store Faults", "the reminders runtime takes store faults",
        lambda harness: harness.takes_store_faults,
        "take store faults for its reminders (store-faults:reminders)"),
)


def open_reminders(backend: Any, profile: Any, registry: Any,
                   overrides: dict[str, Any]) -> ReminderHarness:
    """The reminders harness; Robot's ``name=value`` text is read as numbers."""
    return ReminderHarness(backend, profile, registry,
                           overrides={name: float(value) for name, value in overrides.items()})


VOCABULARY = Vocabulary(area="reminders", noun="reminders", start="Start Reminders",
                        commands=DECLARATIONS, checks=CHECKS, settings=SETTINGS,
                        preconditions=PRECONDITIONS, open=open_reminders)
