"""Robot Framework keywords for task stores (robot/store.robot, TS-001..TS-012).

Every keyword that saves, reads, lists or deletes is derived from the command's
declaration (declarations.py) and drives the `StoreHarness`, so the store and the oracle
see the same command and a difference fails the test with the harness's
`Divergence`. The assertion keywords then compare the store's own last answer with the
value the test states. Records are written as JSON objects of their fields, instants in
seconds after the epoch.

Usage::

    *** Settings ***
    Resource    lifecycle.resource
    Library     jobconform.conformance.store.keywords.StoreLibrary

The backend and profile come from ``${BACKEND}`` and ``${PROFILE}`` as for the lifecycle
library, whose listener also skips tests tagged with requirements the backend does not
claim or the profile does not have.
"""

from __future__ import annotations

from typing import Any

from robot.api import SkipExecution
from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.loading import load_backend
from jobconform.conformance import tolerance
from jobconform.conformance.area_keywords import DEFAULT_BACKEND, close_at_end_of_test
from jobconform.conformance.requirement_tags import requirement_tags
from jobconform.conformance.store.declarations import DECLARATIONS
from jobconform.conformance.store.harness import (
    Raised,
    RecordForm,
    StoreHarness,
    differing_fields,
    listed_ids,
    record_from_fields,
    refused_as_unavailable,
)
from jobconform.conformance.vocabulary import derive_keywords, json_value
from jobconform.reference.store.commands import StoreCommand
from jobconform.spec import load_registry


@library(scope="TEST", auto_keywords=False)
class StoreLibrary:
    """Drive one backend's task store and the oracle per test."""

    def __init__(self) -> None:
        self._harness: StoreHarness | None = None
        self._answer: object = None
        self._kept: dict[str, Any] = {}
        self._ran = False
        self.ROBOT_LIBRARY_LISTENER = self

    def end_test(self, data: Any, result: Any) -> None:
        """Close the test's store, whatever the outcome."""
        harness, self._harness = self._harness, None
        close_at_end_of_test(harness, result)

    def _variable(self, name: str) -> str | None:
        value = BuiltIn().get_variable_value(name)
        return None if value is None or value == "" else str(value)

    @property
    def harness(self) -> StoreHarness:
        if self._harness is None:
            backend = load_backend(self._variable("${BACKEND}") or DEFAULT_BACKEND)
            registry = load_registry()
            profile = registry.profile(self._variable("${PROFILE}") or backend.profile)
            self._harness = StoreHarness(backend, profile, registry)
        return self._harness

    def _fail(self, message: str) -> AssertionError:
        ids = requirement_tags(BuiltIn().get_variable_value("@{TEST_TAGS}") or [])
        suffix = f" [test checks {', '.join(ids)}]" if ids else ""
        return tolerance.robot_failure(message + suffix, ids)

    def _last(self) -> object:
        if not self._ran:
            raise RuntimeError("no store command has run yet in this test")
        return self._answer

    # -- commands: derived from declarations.py (derive_keywords, at the end) --------------

    @property
    def answers(self) -> dict[str, Any]:
        """No store command's answer is kept by alias; the vocabulary's engine asks for a
        place."""
        return self._kept

    def run(self, command: StoreCommand) -> None:
        """Send one command through the test's store harness, keeping its answer."""
        self._answer = self.harness.run(command)
        self._ran = True

    @keyword("Store Should Have A Backend To Lose")
    def should_have_a_backend(self) -> None:
        """Skip the test where the store keeps its records in memory (no set_reachable
        seam): TS-011's refusals need a backend to lose."""
        if not self.harness.has_backend:
            raise SkipExecution(f"the task store of {self.harness.backend.name} keeps its"
                                " records in memory: it has no backend to lose")

    @keyword("Store Should Keep Its Records In Memory")
    def should_keep_records_in_memory(self) -> None:
        """Skip the test where the store has a backend to lose (it offers set_reachable)."""
        if self.harness.has_backend:
            raise SkipExecution(f"the task store of {self.harness.backend.name} has a"
                                " backend to lose")

    # -- assertions ------------------------------------------------------------------------

    @keyword("Store Should Refuse As Unavailable")
    def should_refuse_as_unavailable(self) -> None:
        """The last operation raised an error with code TASK_STORE_UNAVAILABLE."""
        answer = self._last()
        if not refused_as_unavailable(answer):
            raise self._fail(f"the store should raise an error with code"
                             f" TASK_STORE_UNAVAILABLE, it answered {answer!r}")

    @keyword("Task Should Read")
    def task_should_read(self, task_id: str, fields: str = "{}") -> None:
        """The last read answered the record of ``task_id`` with these fields."""
        expected = record_from_fields(task_id, json_value(fields))
        differences = differing_fields(self._last(), expected)
        if differences:
            raise self._fail(f"the store's record of {task_id!r} differs: {differences}")

    @keyword("Store Should Answer No Task")
    def should_answer_none(self) -> None:
        answer = self._last()
        if answer is not None:
            raise self._fail(f"the store should answer None, it answered {answer!r}")

    @keyword("Store Should Not Raise")
    def should_not_raise(self) -> None:
        answer = self._last()
        if isinstance(answer, Raised):
            raise self._fail(f"the store raised {answer.error_type}: {answer.message}")

    @keyword("Listed Tasks Should Be")
    def listed_tasks_should_be(self, *task_ids: str) -> None:
        """The last list answered exactly these ids (none: an empty list)."""
        got = listed_ids(self._last())
        if got != sorted(task_ids):
            raise self._fail(f"the store listed {got}, expected {sorted(task_ids)}")

    @keyword("Task Read Before Should Still Show")
    def read_before_should_show(self, task_id: str, fields: str = "{}") -> None:
        """The first record of ``task_id`` the store handed out still has these fields."""
        held = [view for _, view, then in self.harness.held if then.task_id == task_id]
        if not held:
            raise RuntimeError(f"no record of {task_id!r} was read in this test")
        differences = differing_fields(RecordForm.of(held[0]),
                                       record_from_fields(task_id, json_value(fields)))
        if differences:
            raise self._fail(f"the record of {task_id!r} read earlier changed: {differences}")


derive_keywords(StoreLibrary, DECLARATIONS, lambda library: library)
