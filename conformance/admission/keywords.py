"""Robot Framework keywords for the admission area (AD-001..AD-020).

Every keyword that changes something drives the `AdmissionHarness`, so the backend and the
oracle see the same command and any difference fails the test with the harness's
`Divergence` (naming the requirement IDs). The assertion keywords read the BACKEND's own
admission runtime and compare with the value the test states.

Usage, beside `Resource lifecycle.resource` (whose library skips tests of areas the
backend does not claim)::

    *** Settings ***
    Library    jobconform.conformance.admission.keywords.AdmissionLibrary

Values given as text are read as JSON where a keyword says so (``11``, ``"o"``, ``true``).
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.admission.protocol import ExecutionView
from jobconform.conformance import tolerance
from jobconform.conformance.admission.declarations import DECLARATIONS
from jobconform.conformance.admission.harness import AdmissionHarness
from jobconform.conformance.area_keywords import AreaLibrary
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.vocabulary import derive_keywords

REQUIREMENT_TAG = re.compile(r"[A-Z]{2,4}-\d{3}")


def _json(text: object) -> Any:
    """A value from a test: JSON when it parses, else the text itself."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


@library(scope="TEST", auto_keywords=False)
class AdmissionLibrary(AreaLibrary[AdmissionHarness]):
    """One admission runtime per test, opened by ``Start Admission Runtime``."""

    START = "Start Admission Runtime"
    OPENS = "admission runtime"

    def __init__(self, backend: str | None = None, profile: str | None = None) -> None:
        super().__init__()
        self._backend_name = backend
        self._profile_name = profile

    # -- helpers --------

    def _mismatch(self, what: str, expected: object, actual: object) -> AssertionError:
        tags = BuiltIn().get_variable_value("@{TEST_TAGS}") or []
        ids = sorted({str(t) for t in tags if REQUIREMENT_TAG.fullmatch(str(t))})
        suffix = f" [test checks {', '.join(ids)}]" if ids else ""
        return tolerance.robot_failure(f"{what}: expected {expected!r}, the backend shows"
                                       f" {actual!r}{suffix}", ids)

    def _execution(self, execution: str) -> ExecutionView:
        view = self.harness.runtime.execution(execution)
        if view is None:
            raise self._mismatch(f"execution {execution!r}", "a record", None)
        return view

    # -- setting up --------

    @keyword("Start Admission Runtime")
    def start_admission_runtime(self, **settings: str) -> None:
        """Open a fresh admission runtime with the profile's defaults, overridden by
        ``name=value`` settings of AdmissionConfig (``backlog_depth=2``)."""
        overrides = {name: _json(value) for name, value in settings.items()}
        self._start(lambda backend, profile, registry: AdmissionHarness(
            backend, profile, registry, overrides), self._backend_name, self._profile_name)

    # -- commands (each returns the backend's answer): derived from declarations.py
    # -- (derive_keywords, at the end) --------

    # -- assertions on the backend --------

    @keyword("Admission Answer Should Be")
    def admission_answer_should_be(self, answer: object, expected: str) -> None:
        """``expected`` is JSON (``"running"``, ``true``, ``2``) or plain text."""
        wanted = _json(expected)
        if answer != wanted or type(answer) is not type(wanted):
            raise self._mismatch("the answer", wanted, answer)

    @keyword("Refusal Should Be")
    def refusal_should_be(self, answer: object, error: str, **details: str) -> None:
        """The answer is the refusal ``error``, carrying ``details`` (values as JSON)."""
        wanted = {"error": error, **{key: _json(value) for key, value in details.items()}}
        shown = {key: answer.get(key) for key in wanted} if isinstance(answer, dict) else answer
        if shown != wanted:
            raise self._mismatch("the refusal", wanted, answer)

    @keyword("Execution State Should Be")
    def execution_state_should_be(self, execution: str, state: str) -> None:
        actual = self._execution(execution).state
        if actual != state:
            raise self._mismatch(f"execution {execution!r} state", state, actual)

    @keyword("Executions Should Be")
    def executions_should_be(self, state: str, *executions: str) -> None:
        for execution in executions:
            self.execution_state_should_be(execution, state)

    @keyword("Execution Should Have Started At Second")
    def execution_should_have_started_at_second(self, execution: str, seconds: float) -> None:
        wanted = EPOCH + timedelta(seconds=float(seconds))
        actual = self._execution(execution).started_at
        if actual != wanted:
            raise self._mismatch(f"execution {execution!r} started_at", wanted, actual)

    @keyword("Execution Should Have Ended At Second")
    def execution_should_have_ended_at_second(self, execution: str, seconds: float) -> None:
        wanted = EPOCH + timedelta(seconds=float(seconds))
        actual = self._execution(execution).ended_at
        if actual != wanted:
            raise self._mismatch(f"execution {execution!r} ended_at", wanted, actual)

    @keyword("Execution Timeout Should Be")
    def execution_timeout_should_be(self, execution: str, seconds: int) -> None:
        actual = self._execution(execution).timeout_seconds
        if actual != int(seconds):
            raise self._mismatch(f"execution {execution!r} timeout_seconds", int(seconds), actual)

    @keyword("Execution Should Act On Behalf Of")
    def execution_should_act_on_behalf_of(self, execution: str, identity: str) -> None:
        actual = self._execution(execution).identity
        if actual != identity:
            raise self._mismatch(f"execution {execution!r} identity", identity, actual)

    @keyword("Execution Should Never Have Started")
    def execution_should_never_have_started(self, execution: str) -> None:
        actual = self._execution(execution).started_at
        if actual is not None:
            raise self._mismatch(f"execution {execution!r} started_at", None, actual)

    @keyword("Backlog Should Be")
    def backlog_should_be(self, owner: str, *executions: str) -> None:
        """The owner's queued executions, oldest first (none given: empty)."""
        actual = list(self.harness.runtime.backlog(owner))
        if actual != list(executions):
            raise self._mismatch(f"owner {owner!r} backlog", list(executions), actual)

    @keyword("Owner Should Show")
    def owner_should_show(self, owner: str, **fields: str) -> None:
        """Fields of the owner's view (``effective_cap=2``), values as JSON."""
        view = self.harness.runtime.owner(owner)
        wanted = {key: _json(value) for key, value in fields.items()}
        shown = None if view is None else {key: getattr(view, key, "<missing>")
                                           for key in wanted}
        if shown != wanted:
            raise self._mismatch(f"owner {owner!r}", wanted, shown)

    @keyword("Owner Should Not Exist")
    def owner_should_not_exist(self, owner: str) -> None:
        view = self.harness.runtime.owner(owner)
        if view is not None:
            raise self._mismatch(f"owner {owner!r}", None, view)

    @keyword("Fleet Ceiling Should Be")
    def fleet_ceiling_should_be(self, stored: int, in_force: int) -> None:
        view = self.harness.runtime.ceiling()
        if (view.stored, view.in_force) != (stored, in_force):
            raise self._mismatch("the fleet ceiling (stored, in force)", (stored, in_force),
                             (view.stored, view.in_force))

    @keyword("Fleet Ceiling Should Be Unreadable And In Force")
    def fleet_ceiling_should_be_unreadable_and_in_force(self, in_force: int) -> None:
        """The stored ceiling is unknown (its read fails) and `in_force` applies."""
        view = self.harness.runtime.ceiling()
        if (view.stored, view.in_force) != (None, in_force):
            raise self._mismatch("the fleet ceiling (stored, in force)", (None, in_force),
                             (view.stored, view.in_force))

    @keyword("Fleet Ceiling Changes Should Be")
    def fleet_ceiling_changes_should_be(self, expected: str) -> None:
        """``expected`` is JSON: ``[{"value": 5, "by": "ann", "second": 0}]``, oldest
        first, "second" counted from the check's start (AD-022)."""
        actual = [{"value": c.value, "by": c.by, "second": (c.at - EPOCH).total_seconds()}
                  for c in self.harness.runtime.ceiling_changes()]
        if actual != _json(expected):
            raise self._mismatch("the fleet ceiling's changes", _json(expected), actual)

    @keyword("Call State Should Be")
    def call_state_should_be(self, call: str, state: str) -> None:
        actual = self.harness.runtime.call_state(call)
        if actual != state:
            raise self._mismatch(f"call {call!r} state", state, actual)

    @keyword("Schedules Should Be")
    def schedules_should_be(self, owner: str, expected: str) -> None:
        """``expected`` is JSON: ``[["nightly", 600]]`` in creation order."""
        actual = [list(s) for s in self.harness.runtime.schedules(owner)]
        if actual != _json(expected):
            raise self._mismatch(f"owner {owner!r} schedules", _json(expected), actual)


derive_keywords(AdmissionLibrary, DECLARATIONS, lambda library: library)
