"""Robot Framework keywords for the scheduling area (seed 002 §10.1, §10.2, §10.6.1).

Every keyword that changes something drives the `SchedulingHarness`, so the backend and the
oracle see the same command and any difference fails the test with the harness's
`Divergence` (naming the requirement IDs). The assertion keywords read the BACKEND's own
schedules, histories, dispatches and pre-check calls and compare them with the value the
test states.

Usage::

    *** Settings ***
    Resource    lifecycle.resource    # its library skips tests of unclaimed areas
    Library     jobconform.conformance.scheduling.keywords.SchedulingLibrary

The backend and profile come from ``${BACKEND}`` and ``${PROFILE}`` as for the lifecycle
library. Schedules are named by aliases the test picks; instants are ISO 8601 with an
offset, and time passes only through ``Advance Scheduling Clock`` and the downtime of
``Restart Schedulers``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from robot.api.deco import keyword, library

from jobconform.backends.scheduling.protocol import ExecutionView, ScheduleView
from jobconform.conformance.area_keywords import CreatingLibrary
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.scheduling.declarations import DECLARATIONS, parse_instant
from jobconform.conformance.scheduling.harness import ScheduleRecord, SchedulingHarness, freeze
from jobconform.conformance.vocabulary import derive_keywords
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling import commands as sc
from jobconform.reference.scheduling import oracle
from jobconform.reference.scheduling.oracle import ValidationRun


@library(scope="TEST", auto_keywords=False)
class SchedulingLibrary(CreatingLibrary[SchedulingHarness, tuple[ScheduleView, ScheduleRecord]]):
    """Drive one backend's scheduler(s) and the oracle per test."""

    START = "Start Scheduling"
    OPENS = "scheduler"
    CREATED = oracle.CREATED
    NOUN = "schedule"
    rejected = staticmethod(oracle.rejected)

    def _history(self, alias: str) -> Sequence[ExecutionView]:
        return self.harness.runtime.history(self._id(alias))

    def _execution(self, alias: str, number: int) -> ExecutionView:
        history = self._history(alias)
        if not 1 <= number <= len(history):
            raise self._fail(f"schedule {alias!r} should have an execution {number}, the"
                             f" backend shows {len(history)}")
        return history[number - 1]

    def _same(self, what: str, expected: object, actual: object) -> None:
        if expected != actual:
            raise self._fail(f"{what} should be {expected!r}, the backend shows {actual!r}")

    # -- setting up ------------------------------------------------------------------------

    @keyword("Start Scheduling")
    def start_scheduling(self, start: str | None = None, **parameters: str) -> None:
        """Open a fresh scheduler, its clock at ``start`` (default the kit's epoch);
        ``name=value`` pairs override the profile's parameters (``missed_fires=all``)."""
        self._start(lambda backend, profile, registry: SchedulingHarness(
            backend, profile, registry, overrides=dict(parameters),
            start=parse_instant(start) or EPOCH))

    # -- commands: derived from declarations.py (derive_keywords, at the end); what
    # -- stays here is not a command alone (it reads the clock, or keeps the record) ----

    @keyword("Advance Scheduling Clock To")
    def advance_scheduling_clock_to(self, instant: str) -> None:
        seconds = (datetime.fromisoformat(instant) - self.harness.clock.now()).total_seconds()
        if seconds < 0:
            raise ValueError(f"the scheduling clock is already past {instant}")
        self.run(AdvanceTime(seconds))

    @keyword("Read Schedule")
    def read_schedule(self, alias: str) -> None:
        self.run(sc.GetSchedule(alias))
        view = self.harness.runtime.get(self.harness.ids.get(alias, f"unknown-{alias}"))
        self._read = None if view is None else (view, freeze(view))

    # -- assertions ---------------------------------------------------------------------------

    # "Creation Should Be Accepted" and "Creation Should Be Rejected": CreatingLibrary.

    @keyword("Next Fire Should Be")
    def next_fire_should_be(self, alias: str, instant: str) -> None:
        self._same(f"schedule {alias!r} next_fire_at", parse_instant(instant),
                   self._view(alias).next_fire_at)

    @keyword("Schedule Should Not Be Held")
    def schedule_should_not_be_held(self, alias: str) -> None:
        self._same(f"schedule {alias!r} after its deletion", None,
                   self.harness.runtime.get(self._id(alias)))

    @keyword("Message Should Be")
    def message_should_be(self, alias: str, message: str) -> None:
        self._same(f"schedule {alias!r} message", message, self._view(alias).message)

    @keyword("Should Have No Next Fire")
    def should_have_no_next_fire(self, alias: str) -> None:
        self._same(f"schedule {alias!r} next_fire_at", None, self._view(alias).next_fire_at)

    @keyword("Created At Should Be")
    def created_at_should_be(self, alias: str, instant: str) -> None:
        self._same(f"schedule {alias!r} created_at", parse_instant(instant),
                   self._view(alias).created_at)

    @keyword("Executions Should Be")
    def executions_should_be(self, alias: str, count: int) -> None:
        self._same(f"the executions of {alias!r}", count, len(self._history(alias)))

    @keyword("Execution Should Be")
    def execution_should_be(self, alias: str, number: int, trigger: str,
                            scheduled_for: str) -> None:
        execution = self._execution(alias, number)
        self._same(f"execution {number} of {alias!r} (trigger, scheduled_for)",
                   (trigger, parse_instant(scheduled_for)),
                   (execution.trigger, execution.scheduled_for))

    @keyword("Execution Should Have Started At")
    def execution_should_have_started_at(self, alias: str, number: int, instant: str) -> None:
        self._same(f"execution {number} of {alias!r} started_at", parse_instant(instant),
                   self._execution(alias, number).started_at)

    @keyword("Execution Should Be Skipped At Zero Cost")
    def execution_should_be_skipped(self, alias: str, number: int) -> None:
        execution = self._execution(alias, number)
        self._same(f"execution {number} of {alias!r} (status, cost, message)",
                   ("skipped", 0, None), (execution.status, execution.cost, execution.message))

    @keyword("Execution Should Have Dispatched")
    def execution_should_have_dispatched(self, alias: str, number: int, message: str) -> None:
        execution = self._execution(alias, number)
        self._same(f"execution {number} of {alias!r} (status, message)",
                   ("dispatched", message), (execution.status, execution.message))

    @keyword("Execution Pre-Check Should Be")
    def execution_pre_check_should_be(self, alias: str, number: int,
                                      outcome: str | None = None) -> None:
        """The pre-check's outcome recorded on the execution; none when none ran."""
        self._same(f"execution {number} of {alias!r} pre_check", outcome,
                   self._execution(alias, number).pre_check)

    @keyword("Execution Should Have Ended")
    def execution_should_have_ended(self, alias: str, number: int, outcome: str,
                                    cost: float | None = None) -> None:
        """The end recorded on the execution (SC-019): its outcome and cost (none when
        unknown)."""
        execution = self._execution(alias, number)
        self._same(f"execution {number} of {alias!r} (outcome, cost)", (outcome, cost),
                   (getattr(execution, "outcome", "<missing>"), execution.cost))

    @keyword("Execution Should Not Have Ended")
    def execution_should_not_have_ended(self, alias: str, number: int) -> None:
        execution = self._execution(alias, number)
        self._same(f"execution {number} of {alias!r} (outcome, cost)", (None, None),
                   (getattr(execution, "outcome", "<missing>"), execution.cost))

    @keyword("Business Status Should Be")
    def business_status_should_be(self, alias: str, number: int,
                                  status: str | None = None) -> None:
        """The execution's business status (SC-021, SC-022); none before its end."""
        self._same(f"execution {number} of {alias!r} business_status", status,
                   getattr(self._execution(alias, number), "business_status", "<missing>"))

    @keyword("Validation Run Should Be")
    def validation_run_should_be(self, alias: str, number: int, started_at: str | None = None,
                                 timeout: float | None = None) -> None:
        """The execution's validation run, which names it back (SC-021); none without
        `started_at`."""
        wanted = (None if started_at is None
                  else ValidationRun(datetime.fromisoformat(started_at), float(timeout or 0)))
        self._same(f"execution {number} of {alias!r} validation run", wanted,
                   self.harness.validation_shown(self._execution(alias, number)))

    @keyword("Schedule Validation Should Be")
    def schedule_validation_should_be(self, alias: str, enabled: bool,
                                      timeout: float | None = None) -> None:
        """The schedule's validation switch and timeout (SC-020)."""
        view = self._view(alias)
        self._same(f"schedule {alias!r} (validation, validation_timeout)", (enabled, timeout),
                   (getattr(view, "validation", "<missing>"),
                    getattr(view, "validation_timeout", "<missing>")))

    @keyword("Scheduling Alerts Should Be")
    def scheduling_alerts_should_be(self, *places: str) -> None:
        """The operator alerts of failed validations, as alias:number, in order (SC-024)."""
        self._same("operator_alerts(), in the order raised", list(places),
                   self.harness.alerts_by_place())

    @keyword("Dispatches Should Be")
    def dispatches_should_be(self, alias: str, count: int) -> None:
        schedule_id = self._id(alias)
        dispatches, _ = self.harness.target.made()
        self._same(f"the dispatches of {alias!r}", count,
                   sum(1 for made_for, _, _ in dispatches if made_for == schedule_id))

    @keyword("Pre-Check Calls Should Be")
    def pre_check_calls_should_be(self, alias: str, count: int) -> None:
        schedule_id = self._id(alias)
        _, calls = self.harness.target.made()
        self._same(f"the pre-check calls of {alias!r}", count, calls.count(schedule_id))

    @keyword("Answer Should Be")
    def answer_should_be(self, answer: object, expected: str) -> None:
        self._same("the answer", expected, answer)

    @keyword("Listed Schedules Should Be")
    def listed_schedules_should_be(self, listed: object, *aliases: str) -> None:
        self._same("the listing", list(aliases), listed)

    @keyword("Schedule Read Earlier Should Be Unchanged")
    def schedule_read_earlier_should_be_unchanged(self) -> None:
        if self._read is None:
            raise self._fail("no schedule was read")
        view, record = self._read
        self._same("the schedule read earlier", record, freeze(view))


derive_keywords(SchedulingLibrary, DECLARATIONS, lambda library: library)
