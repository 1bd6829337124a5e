"""The task store's commands (TS-001..TS-012), declared once (conformance/vocabulary.py).

The Behave steps (conformance/store/steps.py) and the Robot keywords
(conformance/store/keywords.py) are derived from this list; the wordings are the feature
file's and the Robot suite's own. Records are written as JSON objects of their fields,
instants in seconds after the epoch: a keyword takes the JSON text, a step gets it
parsed already (the `Json` type of conformance/step_library.py). A step names several
task ids as `"t1", "t2"` or `t1, t2`, a keyword as one argument each (or, beside writes,
separated by commas).
"""

from __future__ import annotations

from jobconform.conformance.store.harness import at_seconds, record_from_fields
from jobconform.conformance.vocabulary import Declaration, Phrase, json_value
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.store.commands import (
    AtOnce,
    BackendOutage,
    DeleteTask,
    GetTask,
    ListExpired,
    ListTasks,
    Operation,
    PutTask,
    SaveConcurrently,
    SaveTask,
)


def step_ids(text: str) -> list[str]:
    """A step's `"t1", "t2"` or `t1, t2` as ids, sorted."""
    return sorted(part.strip().strip('"') for part in text.split(",") if part.strip())


def _comma_separated(text: str) -> list[str]:
    return [task_id.strip() for task_id in text.split(",") if task_id.strip()]


def _beside_writes(threads: int, saved: list[str], fields: JsonValue,
                   deleted: list[str]) -> AtOnce:
    operations: list[Operation] = [ListTasks()] * int(threads)
    operations += [SaveTask(record_from_fields(task_id, fields)) for task_id in saved]
    operations += [DeleteTask(task_id) for task_id in deleted]
    return AtOnce(tuple(operations))


# -- builders: each is a Robot keyword's signature and documentation ---------------------


def save_task(task_id: str, fields: str = "{}") -> SaveTask:
    """Save the record of ``task_id`` with these fields (a JSON object)."""
    return SaveTask(record_from_fields(task_id, json_value(fields)))


def put_task(task_id: str, fields: str = "{}") -> PutTask:
    """Save the record of ``task_id`` through the deprecated ``put`` alias (TS-013); the
    answer is the record read back, which must be the one saved."""
    return PutTask(record_from_fields(task_id, json_value(fields)))


def save_tasks_at_once(*task_ids: str, fields: str = "{}") -> SaveConcurrently:
    """Save a record of each of ``task_ids`` (with these fields) on a thread of its
    own, the threads released together (TS-010); the answer is the store's list
    afterwards."""
    given = json_value(fields)
    return SaveConcurrently(tuple(record_from_fields(task_id, given) for task_id in task_ids))


def read_task(task_id: str) -> GetTask:
    """Ask the store for the record of ``task_id``."""
    return GetTask(task_id)


def list_tasks(status: str | None = None) -> ListTasks:
    """Ask for every record, or those of one canonical status."""
    return ListTasks(status)


def delete_task(task_id: str) -> DeleteTask:
    """Delete the record of ``task_id``."""
    return DeleteTask(task_id)


def list_tasks_expired_before(seconds: float) -> ListExpired:
    """Ask for the terminal records completed strictly before ``seconds`` after the
    epoch."""
    return ListExpired(at_seconds(float(seconds)))


def read_tasks_at_once(*task_ids: str) -> AtOnce:
    """Read each of ``task_ids`` on a thread of its own, the threads released together
    (TS-012); each read is made alone first. The answer is the store's list."""
    return AtOnce(tuple(GetTask(task_id) for task_id in task_ids))


def list_tasks_at_once(threads: int, status: str | None = None) -> AtOnce:
    """List the store (or one canonical status) from ``threads`` threads at once."""
    return AtOnce((ListTasks(status),) * int(threads))


def list_tasks_expired_at_once(threads: int, seconds: float) -> AtOnce:
    """Ask ``threads`` threads at once for the records expired before ``seconds``."""
    return AtOnce((list_tasks_expired_before(seconds),) * int(threads))


def delete_tasks_at_once(*task_ids: str) -> AtOnce:
    """Delete each of ``task_ids`` (held records) on a thread of its own, the threads
    released together (TS-012); the answer is the store's list afterwards."""
    return AtOnce(tuple(DeleteTask(task_id) for task_id in task_ids))


def list_tasks_at_once_beside_writes(threads: int, saved: str, deleted: str,
                                     fields: str = "{}") -> AtOnce:
    """List the store from ``threads`` threads while other threads save the task ids
    in ``saved`` (comma-separated, with these fields) and delete those in ``deleted``
    (held records), all at once (TS-012); the answer is the store's list afterwards."""
    return _beside_writes(threads, _comma_separated(saved), json_value(fields),
                          _comma_separated(deleted))


def cut_the_store_off_its_backend() -> BackendOutage:
    """The store's backend becomes unreachable (TS-011)."""
    return BackendOutage(True)


def reconnect_the_store() -> BackendOutage:
    """The store's backend is reachable again."""
    return BackendOutage(False)


DECLARATIONS = (
    Declaration("Save Task", save_task, (
        Phrase('the store saves task "{task_id}" as {fields:Json}',
               lambda task_id, fields: SaveTask(record_from_fields(task_id, fields))),
    )),
    Declaration("Put Task", put_task, (
        Phrase('the store puts task "{task_id}" through its deprecated alias as {fields:Json}',
               lambda task_id, fields: PutTask(record_from_fields(task_id, fields))),
    )),
    Declaration("Save Tasks At Once", save_tasks_at_once, (
        Phrase("threads save the tasks {ids} at once, each as {fields:Json}",
               lambda ids, fields: SaveConcurrently(tuple(
                   record_from_fields(task_id, fields) for task_id in step_ids(ids)))),
    )),
    Declaration("Read Task", read_task, (
        Phrase('task "{task_id}" is read from the store', read_task),
    )),
    Declaration("List Tasks", list_tasks, (
        Phrase("the store lists its tasks", list_tasks),
        Phrase("the store lists its {status:Status} tasks", list_tasks),
    )),
    Declaration("Delete Task", delete_task, (
        Phrase('the store deletes task "{task_id}"', delete_task),
    )),
    Declaration("List Tasks Expired Before", list_tasks_expired_before, (
        Phrase("the store lists the tasks expired before {seconds:g} seconds",
               list_tasks_expired_before),
    )),
    Declaration("Read Tasks At Once", read_tasks_at_once, (
        Phrase("threads read the tasks {ids} at once",
               lambda ids: read_tasks_at_once(*step_ids(ids))),
    )),
    Declaration("List Tasks At Once", list_tasks_at_once, (
        Phrase("{count:d} threads list the store's tasks at once",
               lambda count: list_tasks_at_once(count)),
    )),
    Declaration("List Tasks Expired At Once", list_tasks_expired_at_once, (
        Phrase("{count:d} threads list the tasks expired before {seconds:g} seconds at once",
               lambda count, seconds: list_tasks_expired_at_once(count, seconds)),
    )),
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
    Declaration("Cut The Store Off Its Backend", cut_the_store_off_its_backend, (
        Phrase("the store's backend becomes unreachable", cut_the_store_off_its_backend),
    )),
    Declaration("Reconnect The Store", reconnect_the_store, (
        Phrase("the store's backend is reachable again", reconnect_the_store),
    )),
)
