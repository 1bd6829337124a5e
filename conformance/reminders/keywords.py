"""Robot Framework keywords for the reminders area (seed 002 §10.14).

Every keyword that changes something drives the `ReminderHarness`, so the backend and the
oracle see the same command and any difference fails the test with the harness's
`Divergence` (naming the requirement IDs). The assertion keywords read the BACKEND's own
records, answers and dispatches and compare them with the value the test states.

Usage::

    *** Settings ***
    Resource    lifecycle.resource    # its library skips tests of unclaimed areas
    Library     jobconform.conformance.reminders.keywords.ReminderLibrary

The backend and profile come from ``${BACKEND}`` and ``${PROFILE}`` as for the lifecycle
library. Reminders are named by aliases the test picks; seconds count from the virtual
clock's start, and time passes only through ``Advance Reminder Clock`` and the downtime
of ``Restart Reminders``.
"""

from __future__ import annotations

from robot.api import SkipExecution
from robot.api.deco import keyword, library

from jobconform.backends.reminders.protocol import REMINDER_TRIGGER, ReminderView
from jobconform.conformance.area_keywords import CreatingLibrary
from jobconform.conformance.area_steps import alias_list, at
from jobconform.conformance.reminders.declarations import DECLARATIONS, cancel_reminder
from jobconform.conformance.reminders.harness import ReminderHarness, ReminderRecord, freeze
from jobconform.conformance.vocabulary import derive_keywords
from jobconform.reference.reminders import commands as rc
from jobconform.reference.reminders import oracle
from jobconform.reference.reminders.oracle import REPLAYED


@library(scope="TEST", auto_keywords=False)
class ReminderLibrary(CreatingLibrary[ReminderHarness, tuple[ReminderView, ReminderRecord]]):
    """Drive one backend's reminders runtime and the oracle per test."""

    START = "Start Reminders"
    OPENS = "reminders runtime"
    CREATED = oracle.CREATED
    NOUN = "reminder"
    rejected = staticmethod(oracle.rejected)

    def _expect(self, alias: str, name: str, expected: object) -> None:
        actual = getattr(self._view(alias), name)
        if actual != expected:
            raise self._fail(f"reminder {alias!r} {name} should be {expected!r}, the backend"
                             f" shows {actual!r}")

    # -- setting up ------------------------------------------------------------------------

    @keyword("Start Reminders")
    def start_reminders(self, **parameters: str) -> None:
        """Open a fresh reminders runtime; ``name=value`` pairs override the profile's
        parameters (``max_pending=2``)."""
        overrides = {name: float(value) for name, value in parameters.items()}
        self._start(lambda backend, profile, registry: ReminderHarness(
            backend, profile, registry, overrides=overrides))

    # -- commands: derived from declarations.py (derive_keywords, at the end); what
    # -- stays here is not a command alone (a skip, a read that keeps the record) ---------

    @keyword("Require Store Faults")
    def require_store_faults(self) -> None:
        """Skip the test where the reminders runtime does not take store faults
        (`jobconform.backends.faults`): RM-014 cannot be checked there, so it is not run."""
        if not self.harness.takes_store_faults:
            raise SkipExecution(f"backend {self.harness.backend.name} does not take store"
                                " faults for its reminders (store-faults:reminders)")

    @keyword("Read Reminder")
    def read_reminder(self, alias: str) -> None:
        self.harness.run(rc.GetReminder(alias))
        view = self.harness.runtime.get(self.harness.ids.get(alias, f"unknown-{alias}"))
        self._read = None if view is None else (view, freeze(view))

    # -- assertions ---------------------------------------------------------------------------

    # "Creation Should Be Accepted" and "Creation Should Be Rejected": CreatingLibrary.

    @keyword("Creation Should Answer Reminder")
    def creation_should_answer_reminder(self, alias: str, original: str) -> None:
        """The creation created nothing and answered the reminder its key names (RM-017)."""
        self._creation_should_be(alias, f"{REPLAYED}:{original}")

    @keyword("Cancel Should Answer")
    def cancel_should_answer(self, alias: str, expected: str) -> None:
        answer = self.run(cancel_reminder(alias))
        if answer != expected:
            raise self._fail(f"cancel of {alias!r} should answer {expected!r}, the backend"
                             f" answered {answer!r}")

    @keyword("Reminder Status Should Be")
    def reminder_status_should_be(self, alias: str, status: str) -> None:
        self._expect(alias, "status", status)

    @keyword("Reminder Attempts Should Be")
    def reminder_attempts_should_be(self, alias: str, attempts: int) -> None:
        self._expect(alias, "attempts", attempts)

    @keyword("Reminder Should Be Due At Second")
    def reminder_should_be_due_at(self, alias: str, second: float) -> None:
        self._expect(alias, "due_at", at(second))

    @keyword("Reminder Should Not Be Due")
    def reminder_should_not_be_due(self, alias: str) -> None:
        self._expect(alias, "due_at", None)

    @keyword("Reminder Should Fire At Second")
    def reminder_should_fire_at(self, alias: str, second: float) -> None:
        self._expect(alias, "fire_at", at(second))

    @keyword("Reminder Should Have Been Created At Second")
    def reminder_created_at(self, alias: str, second: float) -> None:
        self._expect(alias, "created_at", at(second))

    @keyword("Reminder Should Have Fired At Second")
    def reminder_fired_at(self, alias: str, second: float) -> None:
        self._expect(alias, "fired_at", at(second))

    @keyword("Reminder Should Not Have Fired")
    def reminder_not_fired(self, alias: str) -> None:
        self._expect(alias, "fired_at", None)

    @keyword("Reminder Dispatches Should Be")
    def reminder_dispatches_should_be(self, alias: str, count: int) -> None:
        reminder_id = self.harness.ids.get(alias)
        made = sum(1 for d in self.harness.target.made() if d.reminder_id == reminder_id)
        if made != count:
            raise self._fail(f"reminder {alias!r} should have been dispatched {count} time(s),"
                             f" the delivery target saw {made}")

    @keyword("Reminder Dispatches Should Be Labelled")
    def reminder_dispatches_labelled(self, alias: str) -> None:
        """Every dispatch made for the reminder carries triggered_by "reminder" (RM-021)."""
        reminder_id = self.harness.ids.get(alias)
        labels = [d.triggered_by for d in self.harness.target.made()
                  if d.reminder_id == reminder_id]
        if not labels or labels != [REMINDER_TRIGGER] * len(labels):
            raise self._fail(f"every dispatch of reminder {alias!r} should be triggered by"
                             f" {REMINDER_TRIGGER!r}, the delivery target saw {labels}")

    @keyword("Swept Count Should Be")
    def swept_count_should_be(self, swept: object, count: int) -> None:
        if swept != int(count):
            raise self._fail(f"the sweep should delete {int(count)} reminder(s), the backend"
                             f" deleted {swept!r}")

    @keyword("Reminder Should Not Be Held")
    def reminder_should_not_be_held(self, alias: str) -> None:
        """The backend holds no record of the reminder any more (a sweep deleted it)."""
        reminder_id = self.harness.ids.get(alias)
        if reminder_id is None:
            raise self._fail(f"reminder {alias!r} was never created")
        view = self.harness.runtime.get(reminder_id)
        if view is not None:
            raise self._fail(f"reminder {alias!r} should be deleted, the backend still holds"
                             f" it {view.status}")

    @keyword("Listed Reminders Should Be")
    def listed_reminders_should_be(self, listed: object, aliases: str) -> None:
        if listed != alias_list(aliases):
            raise self._fail(f"the listing should be {alias_list(aliases)}, the backend"
                             f" answered {listed!r}")

    @keyword("Reminder Read Earlier Should Be Unchanged")
    def read_unchanged(self) -> None:
        if self._read is None:
            raise self._fail("no reminder was read: call `Read Reminder` on a held one first")
        view, record = self._read
        if freeze(view) != record:
            raise self._fail(f"a reminder read earlier changed after it was returned: it read"
                             f" {record!r}, now {freeze(view)!r}")

    @keyword("No Reminder Should Have Been Read")
    def no_reminder_read(self) -> None:
        if self._read is not None:
            raise self._fail(f"reading an unknown reminder should find nothing, the backend"
                             f" returned {self._read[1]!r}")


derive_keywords(ReminderLibrary, DECLARATIONS, lambda library: library)
