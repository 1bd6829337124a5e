"""What the task store's suites say (TS-001..TS-013), declared once
(conformance/vocabulary.py): the commands, checks and preconditions from which its Behave
steps and Robot keywords are derived, in the feature file's and the Robot suite's own
words.

Commands go through `StoreHarness.run` (the store and the oracle, compared); each answer
is kept, and the checks read the store's last answer and the records it handed out
earlier. Records are written as JSON objects of their fields, instants in seconds after
the epoch: a keyword takes the JSON text, a step gets it parsed already (the `Json` type
of conformance/step_library.py). A step names several task ids as `"t1", "t2"` or
`t1, t2`, a keyword as one argument each (or, beside writes, separated by commas). The
harness opens on the first command, check or precondition: there is no start keyword.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

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
from jobconform.conformance.vocabulary import (
    Check,
    Declaration,
    Phrase,
    Precondition,
    Reading,
    Vocabulary,
    check_worded,
    command_worded,
    json_value,
    kept,
)
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.store import commands as ts


def step_ids(text: str) -> list[str]:
    """A step's `"t1", "t2"` or `t1, t2` as ids, sorted."""
    return sorted(part.strip().strip('"') for part in text.split(",") if part.strip())


def _comma_separated(text: str) -> list[str]:
    return [task_id.strip() for task_id in text.split(",") if task_id.strip()]


def _beside_writes(threads: int, saved: list[str], fields: JsonValue,
                   deleted: list[str]) -> ts.AtOnce:
    operations: list[ts.Operation] = [ts.ListTasks()] * int(threads)
    operations += [ts.SaveTask(record_from_fields(task_id, fields)) for task_id in saved]
    operations += [ts.DeleteTask(task_id) for task_id in deleted]
    return ts.AtOnce(tuple(operations))


# -- builders: each is a Robot keyword's signature and documentation ---------------------


def save_task(task_id: str, fields: str = "{}") -> ts.SaveTask:
    """Save the record of ``task_id`` with these fields (a JSON object)."""
    return ts.SaveTask(record_from_fields(task_id, json_value(fields)))


def put_task(task_id: str, fields: str = "{}") -> ts.PutTask:
    """Save the record of ``task_id`` through the deprecated ``put`` alias (TS-013); the
    answer is the record read back, which must be the one saved."""
    return ts.PutTask(record_from_fields(task_id, json_value(fields)))


def save_tasks_at_once(*task_ids: str, fields: str = "{}") -> ts.SaveConcurrently:
    """Save a record of each of ``task_ids`` (with these fields) on a thread of its
    own, the threads released together (TS-010); the answer is the store's list
    afterwards."""
    given = json_value(fields)
    return ts.SaveConcurrently(tuple(record_from_fields(task_id, given) for task_id in task_ids))


def list_tasks_expired_before(seconds: float) -> ts.ListExpired:
    """Ask for the terminal records completed strictly before ``seconds`` after the
    epoch."""
    return ts.ListExpired(at_seconds(float(seconds)))


def read_tasks_at_once(*task_ids: str) -> ts.AtOnce:
    """Read each of ``task_ids`` on a thread of its own, the threads released together
    (TS-012); each read is made alone first. The answer is the store's list."""
    return ts.AtOnce(tuple(ts.GetTask(task_id) for task_id in task_ids))


def list_tasks_at_once(threads: int, status: str | None = None) -> ts.AtOnce:
    """List the store (or one canonical status) from ``threads`` threads at once."""
    return ts.AtOnce((ts.ListTasks(status),) * int(threads))


def list_tasks_expired_at_once(threads: int, seconds: float) -> ts.AtOnce:
    """Ask ``threads`` threads at once for the records expired before ``seconds``."""
    return ts.AtOnce((list_tasks_expired_before(seconds),) * int(threads))


def delete_tasks_at_once(*task_ids: str) -> ts.AtOnce:
    """Delete each of ``task_ids`` (held records) on a thread of its own, the threads
    released together (TS-012); the answer is the store's list afterwards."""
    return ts.AtOnce(tuple(ts.DeleteTask(task_id) for task_id in task_ids))


def list_tasks_at_once_beside_writes(threads: int, saved: str, deleted: str,
                                     fields: str = "{}") -> ts.AtOnce:
    """List the store from ``threads`` threads while other threads save the task ids
    in ``saved`` (comma-separated, with these fields) and delete those in ``deleted``
    (held records), all at once (TS-012); the answer is the store's list afterwards."""
    return _beside_writes(threads, _comma_separated(saved), json_value(fields),
                          _comma_separated(deleted))


def cut_the_store_off_its_backend() -> ts.BackendOutage:
    """The store's backend becomes unreachable (TS-011)."""
    return ts.BackendOutage(True)


def reconnect_the_store() -> ts.BackendOutage:
    """The store's backend is reachable again."""
    return ts.BackendOutage(False)


# Every command's answer is kept under one name: the checks read the store's last answer.
LAST = "last:"
DECLARATIONS = tuple(replace(declaration, kept_as=lambda command: LAST) for declaration in (
    Declaration("Save Task", save_task, (
        Phrase('the store saves task "{task_id}" as {fields:Json}',
               lambda task_id, fields: ts.SaveTask(record_from_fields(task_id, fields))),
    )),
    Declaration("Put Task", put_task, (
        Phrase('the store puts task "{task_id}" through its deprecated alias as {fields:Json}',
               lambda task_id, fields: ts.PutTask(record_from_fields(task_id, fields))),
    )),
    Declaration("Save Tasks At Once", save_tasks_at_once, (
        Phrase("threads save the tasks {ids} at once, each as {fields:Json}",
               lambda ids, fields: ts.SaveConcurrently(tuple(
                   record_from_fields(task_id, fields) for task_id in step_ids(ids)))),
    )),
    command_worded("Read Task", ts.GetTask, 'task "{task_id}" is read from the store'),
    command_worded("List Tasks", ts.ListTasks,
                   "the store lists its tasks",
                   "the store lists its {status:Status} tasks"),
    command_worded("Delete Task", ts.DeleteTask, 'the store deletes task "{task_id}"'),
    command_worded("List Tasks Expired Before", list_tasks_expired_before,
                   "the store lists the tasks expired before {seconds:g} seconds"),
    Declaration("Read Tasks At Once", read_tasks_at_once, (
        Phrase("threads read the tasks {ids} at once",
               lambda ids: read_tasks_at_once(*step_ids(ids))),
    )),
    command_worded("List Tasks At Once", list_tasks_at_once,
                   "{threads:d} threads list the store's tasks at once"),
    command_worded("List Tasks Expired At Once", list_tasks_expired_at_once,
                   "{threads:d} threads list the tasks expired before {seconds:g} seconds at once"),
    Declaration("Delete Tasks At Once", delete_tasks_at_once, (
        Phrase("threads delete the tasks {ids} at once",
               lambda ids: delete_tasks_at_once(*step_ids(ids))),
    )),
    Declaration("List Tasks At Once Beside Writes", list_tasks_at_once_beside_writes, (
        Phrase("{count:d} threads list the store's tasks at once, beside threads saving the"
               " tasks {saved} as {fields:Json} and threads deleting the tasks {deleted}",
               lambda count, saved, fields, deleted: _beside_writes(
                   count, step_ids(saved), fields, step_ids(deleted))),
    )),
    command_worded("Cut The Store Off Its Backend", cut_the_store_off_its_backend,
                   "the store's backend becomes unreachable"),
    command_worded("Reconnect The Store", reconnect_the_store,
                   "the store's backend is reachable again"),
))

# -- checks: the store's last answer, and the records it handed out ------------------------

NOTHING_RUN = "no store command has run yet"


def _reads_as(what: str, read: Any, task_id: str, fields: JsonValue) -> Reading:
    """`read` (through -> a record as the store answered it) shows these fields: read as
    the fields that differ, name -> (expected, actual)."""
    expected = record_from_fields(task_id, fields)

    def differences(through: Any) -> object:
        answer = read(through)
        return differing_fields(answer, expected) if isinstance(answer, RecordForm) else answer

    return Reading(f"{what}, the fields that differ (expected, actual)", differences, {})


def _answers_task(task_id: str, fields: JsonValue) -> Reading:
    return _reads_as(f"the store's record of {task_id!r}", kept(LAST, NOTHING_RUN), task_id,
                     fields)


def task_should_read(task_id: str, fields: str = "{}") -> Reading:
    """The last read answered the record of ``task_id`` with these fields."""
    return _answers_task(task_id, json_value(fields))


def _read_before(task_id: str, fields: JsonValue) -> Reading:
    def first_read(through: Any) -> object:
        harness: StoreHarness = through.harness
        held = [held.view for held in harness.held if held.then.task_id == task_id]
        return RecordForm.of(held[0]) if held else f"no record of {task_id!r} was read"

    return _reads_as(f"the record of {task_id!r} read earlier", first_read, task_id, fields)


def read_before_should_show(task_id: str, fields: str = "{}") -> Reading:
    """The first record of ``task_id`` the store handed out still has these fields."""
    return _read_before(task_id, json_value(fields))


def should_answer_none() -> Reading:
    return Reading("the store's answer", kept(LAST, NOTHING_RUN), None)


def should_not_raise() -> Reading:
    return Reading("the store's answer", kept(LAST, NOTHING_RUN), "no error",
                   lambda answer, _: not isinstance(answer, Raised))


def should_refuse_as_unavailable() -> Reading:
    """The last operation raised an error with code TASK_STORE_UNAVAILABLE."""
    return Reading("the store's answer", kept(LAST, NOTHING_RUN),
                   "an error with code TASK_STORE_UNAVAILABLE",
                   lambda answer, _: refused_as_unavailable(answer))


def _listed(through: Any) -> object:
    answer = through.answers.get(LAST, NOTHING_RUN)
    return listed_ids(answer) if isinstance(answer, tuple) else answer


def listed_tasks_should_be(*task_ids: str) -> Reading:
    """The last list answered exactly these ids (none: an empty list)."""
    return Reading("the store's list", _listed, sorted(task_ids))


CHECKS = (
    Check("Task Should Read", task_should_read, (
        Phrase('the store answers task "{task_id}" as {fields:Json}', _answers_task),
    )),
    check_worded("Store Should Answer No Task", should_answer_none, "the store answers no task"),
    check_worded("Store Should Not Raise", should_not_raise, "the store answers without an error"),
    check_worded("Store Should Refuse As Unavailable", should_refuse_as_unavailable,
                 "the store refuses with TASK_STORE_UNAVAILABLE"),
    Check("Listed Tasks Should Be", listed_tasks_should_be, (
        Phrase("the store's list holds the tasks {ids}",
               lambda ids: listed_tasks_should_be(*step_ids(ids))),
        Phrase("the store's list holds no tasks", listed_tasks_should_be),
    )),
    Check("Task Read Before Should Still Show", read_before_should_show, (
        Phrase('the record of task "{task_id}" read before still shows {fields:Json}',
               _read_before),
    )),
)

# -- preconditions: TS-011 differs for a store with a backend to lose and one without ------


def _unless_backend(harness: StoreHarness) -> str | None:
    return None if harness.has_backend else (
        f"the task store of {harness.backend.name} keeps its records in memory (no"
        " set_reachable seam): it has no backend to lose")


def _unless_in_memory(harness: StoreHarness) -> str | None:
    return None if not harness.has_backend else (
        f"the task store of {harness.backend.name} has a backend to lose (it offers"
        " set_reachable)")


PRECONDITIONS = (
    Precondition("Store Should Have A Backend To Lose",
                 "the store's backend can be made unreachable", _unless_backend),
    Precondition("Store Should Keep Its Records In Memory",
                 "the store keeps its records in memory", _unless_in_memory),
)


def open_store(backend: Any, profile: Any, registry: Any,
               overrides: dict[str, Any]) -> StoreHarness:
    """The store harness (the store has no parameters to override)."""
    return StoreHarness(backend, profile, registry)


VOCABULARY = Vocabulary(area="store", noun="store", start=None, commands=DECLARATIONS,
                        checks=CHECKS, preconditions=PRECONDITIONS, opens_on_first_use=True,
                        open=open_store)
