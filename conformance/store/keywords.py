"""Robot Framework keywords for task stores (robot/store.robot, TS-001..TS-012).

Every keyword that saves, reads, lists or deletes drives the `StoreHarness`, so the store
and the oracle see the same command and a difference fails the test with the harness's
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

import json
from typing import Any

from robot.api import SkipExecution
from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.loading import load_backend
from jobconform.conformance import tolerance
from jobconform.conformance.area_keywords import DEFAULT_BACKEND, close_at_end_of_test
from jobconform.conformance.requirement_tags import requirement_tags
from jobconform.conformance.store.harness import (
    Raised,
    RecordForm,
    StoreHarness,
    at_seconds,
    differing_fields,
    listed_ids,
    record_from_fields,
    refused_as_unavailable,
)
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.store.commands import (
    AtOnce,
    BackendOutage,
    DeleteTask,
    GetTask,
    ListExpired,
    ListTasks,
    Operation,
    SaveConcurrently,
    SaveTask,
    StoreCommand,
)
from jobconform.spec import load_registry


def _json(text: str) -> JsonValue:
    try:
        value: JsonValue = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{text!r} is not a JSON value ({error.msg}); write a record's fields"
                         ' as an object, e.g. {"status": "succeeded", "completed_at": 30}'
                         ) from None
    return value


@library(scope="TEST", auto_keywords=False)
class StoreLibrary:
    """Drive one backend's task store and the oracle per test."""

    def __init__(self) -> None:
        self._harness: StoreHarness | None = None
        self._answer: object = None
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

    def _run(self, command: StoreCommand) -> None:
        self._answer = self.harness.run(command)
        self._ran = True

    def _fail(self, message: str) -> AssertionError:
        ids = requirement_tags(BuiltIn().get_variable_value("@{TEST_TAGS}") or [])
        suffix = f" [test checks {', '.join(ids)}]" if ids else ""
        return tolerance.robot_failure(message + suffix, ids)

    def _last(self) -> object:
        if not self._ran:
            raise RuntimeError("no store command has run yet in this test")
        return self._answer

    # -- commands ----------------------------------------------------------------------------

    @keyword("Save Task")
    def save_task(self, task_id: str, fields: str = "{}") -> None:
        """Save the record of ``task_id`` with these fields (a JSON object)."""
        self._run(SaveTask(record_from_fields(task_id, _json(fields))))

    @keyword("Save Tasks At Once")
    def save_tasks_at_once(self, *task_ids: str, fields: str = "{}") -> None:
        """Save a record of each of ``task_ids`` (with these fields) on a thread of its
        own, the threads released together (TS-010); the answer is the store's list
        afterwards."""
        record_fields = _json(fields)
        self._run(SaveConcurrently(tuple(record_from_fields(task_id, record_fields)
                                         for task_id in task_ids)))

    @keyword("Read Task")
    def read_task(self, task_id: str) -> None:
        """Ask the store for the record of ``task_id``."""
        self._run(GetTask(task_id))

    @keyword("List Tasks")
    def list_tasks(self, status: str | None = None) -> None:
        """Ask for every record, or those of one canonical status."""
        self._run(ListTasks(status))

    @keyword("Delete Task")
    def delete_task(self, task_id: str) -> None:
        self._run(DeleteTask(task_id))

    @keyword("List Tasks Expired Before")
    def list_expired(self, seconds: float) -> None:
        """Ask for the terminal records completed strictly before ``seconds`` after the
        epoch."""
        self._run(ListExpired(at_seconds(float(seconds))))

    @keyword("Read Tasks At Once")
    def read_tasks_at_once(self, *task_ids: str) -> None:
        """Read each of ``task_ids`` on a thread of its own, the threads released together
        (TS-012); each read is made alone first. The answer is the store's list."""
        self._run(AtOnce(tuple(GetTask(task_id) for task_id in task_ids)))

    @keyword("List Tasks At Once")
    def list_tasks_at_once(self, threads: int, status: str | None = None) -> None:
        """List the store (or one canonical status) from ``threads`` threads at once."""
        self._run(AtOnce((ListTasks(status),) * int(threads)))

    @keyword("List Tasks Expired At Once")
    def list_expired_at_once(self, threads: int, seconds: float) -> None:
        """Ask ``threads`` threads at once for the records expired before ``seconds``."""
        self._run(AtOnce((ListExpired(at_seconds(float(seconds))),) * int(threads)))

    @keyword("Delete Tasks At Once")
    def delete_tasks_at_once(self, *task_ids: str) -> None:
        """Delete each of ``task_ids`` (held records) on a thread of its own, the threads
        released together (TS-012); the answer is the store's list afterwards."""
        self._run(AtOnce(tuple(DeleteTask(task_id) for task_id in task_ids)))

    @keyword("List Tasks At Once Beside Writes")
    def list_beside_writes(self, threads: int, saved: str, deleted: str,
                           fields: str = "{}") -> None:
        """List the store from ``threads`` threads while other threads save the task ids
        in ``saved`` (comma-separated, with these fields) and delete those in ``deleted``
        (held records), all at once (TS-012); the answer is the store's list afterwards."""
        record_fields = _json(fields)
        operations: list[Operation] = [ListTasks()] * int(threads)
        operations += [SaveTask(record_from_fields(task_id.strip(), record_fields))
                       for task_id in saved.split(",") if task_id.strip()]
        operations += [DeleteTask(task_id.strip()) for task_id in deleted.split(",")
                       if task_id.strip()]
        self._run(AtOnce(tuple(operations)))

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

    @keyword("Cut The Store Off Its Backend")
    def cut_off(self) -> None:
        """The store's backend becomes unreachable (TS-011)."""
        self._run(BackendOutage(True))

    @keyword("Reconnect The Store")
    def reconnect(self) -> None:
        self._run(BackendOutage(False))

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
        differences = differing_fields(self._last(), record_from_fields(task_id, _json(fields)))
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
                                       record_from_fields(task_id, _json(fields)))
        if differences:
            raise self._fail(f"the record of {task_id!r} read earlier changed: {differences}")
