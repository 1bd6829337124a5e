"""Behave steps for task stores (features/store.feature, TS-001..TS-012).

Each When-step sends one command through `StoreHarness.run`, so the store's answer is
compared with the oracle's and a `Divergence` fails the scenario with the requirement
IDs. Each Then-step checks the store's own last answer against what the scenario states.
Records are written as JSON objects of their fields, instants in seconds after the epoch:
`the store saves task "t1" as {"status": "succeeded", "completed_at": 30}`. Steps speak
of "the store" so that they cannot clash with the lifecycle steps. Register them from
features/steps/ (every area's library is imported there):

    from jobconform.conformance.store.steps import *  # noqa: F403
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from jobconform.conformance.scenario import RunConfig, state_of
from jobconform.conformance.step_library import action_step, check_step, setup_step
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

__all__: list[str] = []

AREA = "store"


@dataclass
class StoreScenario:
    """One scenario's store harness and the store's last answer."""

    harness: StoreHarness
    last_answer: object = None
    last_command: StoreCommand | None = None

    def run(self, command: StoreCommand) -> None:
        self.last_command = command
        self.last_answer = self.harness.run(command)

    def close(self) -> None:
        self.harness.close()


def _open(config: RunConfig) -> StoreScenario:
    return StoreScenario(StoreHarness(config.backend, config.profile, config.registry))


def store_of(context: Any) -> StoreScenario:
    store: StoreScenario = state_of(context).area_state(AREA, _open)
    return store


def _ids(text: str) -> list[str]:
    """`"t1", "t2"` or `t1, t2` as ids."""
    return sorted(part.strip().strip('"') for part in text.split(",") if part.strip())


# -- commands ----------------------------------------------------------------------------------


@action_step('the store saves task "{task_id}" as {fields:Json}')
def step_save(context: Any, task_id: str, fields: JsonValue) -> None:
    store_of(context).run(SaveTask(record_from_fields(task_id, fields)))


@action_step("threads save the tasks {ids} at once, each as {fields:Json}")
def step_save_concurrently(context: Any, ids: str, fields: JsonValue) -> None:
    """One thread per task id, released together (TS-010); the answer is the store's list
    afterwards."""
    records = tuple(record_from_fields(task_id, fields) for task_id in _ids(ids))
    store_of(context).run(SaveConcurrently(records))


@action_step('task "{task_id}" is read from the store')
def step_get(context: Any, task_id: str) -> None:
    store_of(context).run(GetTask(task_id))


@action_step("the store lists its tasks")
def step_list(context: Any) -> None:
    store_of(context).run(ListTasks())


@action_step("the store lists its {status:Status} tasks")
def step_list_status(context: Any, status: str) -> None:
    store_of(context).run(ListTasks(status))


@action_step('the store deletes task "{task_id}"')
def step_delete(context: Any, task_id: str) -> None:
    store_of(context).run(DeleteTask(task_id))


@action_step("the store lists the tasks expired before {seconds:g} seconds")
def step_list_expired(context: Any, seconds: float) -> None:
    store_of(context).run(ListExpired(at_seconds(seconds)))


@action_step("threads read the tasks {ids} at once")
def step_get_at_once(context: Any, ids: str) -> None:
    """One get per task id, each on a thread of its own, released together (TS-012)."""
    _at_once(context, [GetTask(task_id) for task_id in _ids(ids)])


@action_step("{count:d} threads list the store's tasks at once")
def step_list_at_once(context: Any, count: int) -> None:
    _at_once(context, [ListTasks()] * count)


@action_step("{count:d} threads list the tasks expired before {seconds:g} seconds at once")
def step_list_expired_at_once(context: Any, count: int, seconds: float) -> None:
    _at_once(context, [ListExpired(at_seconds(seconds))] * count)


@action_step("threads delete the tasks {ids} at once")
def step_delete_at_once(context: Any, ids: str) -> None:
    """One delete per task id, each on a thread of its own; the answer is the store's
    list afterwards."""
    _at_once(context, [DeleteTask(task_id) for task_id in _ids(ids)])


@action_step("{count:d} threads list the store's tasks at once, beside threads saving the"
             " tasks {saved} as {fields:Json} and threads deleting the tasks {deleted}")
def step_list_beside_writes(context: Any, count: int, saved: str, fields: JsonValue,
                            deleted: str) -> None:
    """Lists made at once with saves and deletes: each list shows every record a write
    touches as before or after that write, and every other record exactly (TS-012)."""
    _at_once(context, [ListTasks()] * count
             + [SaveTask(record_from_fields(task_id, fields)) for task_id in _ids(saved)]
             + [DeleteTask(task_id) for task_id in _ids(deleted)])


def _at_once(context: Any, operations: Sequence[Operation]) -> None:
    store_of(context).run(AtOnce(tuple(operations)))


@setup_step("the store's backend can be made unreachable")
def step_has_backend(context: Any) -> None:
    """TS-011's refusals need a store with a backend to lose (the fault seam
    `set_reachable`); a store kept in memory is checked by the scenario for it."""
    harness = store_of(context).harness
    if not harness.has_backend:
        context.scenario.skip(f"the task store of {harness.backend.name} keeps its records in"
                              " memory (no set_reachable seam): it has no backend to lose")


@setup_step("the store keeps its records in memory")
def step_in_memory(context: Any) -> None:
    harness = store_of(context).harness
    if harness.has_backend:
        context.scenario.skip(f"the task store of {harness.backend.name} has a backend to"
                              " lose (it offers set_reachable)")


@action_step("the store's backend becomes unreachable")
def step_outage(context: Any) -> None:
    store_of(context).run(BackendOutage(True))


@action_step("the store's backend is reachable again")
def step_outage_over(context: Any) -> None:
    store_of(context).run(BackendOutage(False))


# -- checks on the store's own answers ----------------------------------------------------------


def _answer(context: Any) -> object:
    store = store_of(context)
    if store.last_command is None:
        raise AssertionError("no store command has run yet in this scenario")
    return store.last_answer


@check_step('the store answers task "{task_id}" as {fields:Json}')
def step_answers_task(context: Any, task_id: str, fields: JsonValue) -> None:
    differences = differing_fields(_answer(context), record_from_fields(task_id, fields))
    if differences:
        shown = "; ".join(f"{name}: expected {want!r}, got {got!r}"
                          for name, (want, got) in differences.items())
        raise AssertionError(f"the store's record of {task_id!r} differs: {shown}")


@check_step("the store answers no task")
def step_answers_none(context: Any) -> None:
    answer = _answer(context)
    if answer is not None:
        raise AssertionError(f"the store should answer None, it answered {answer!r}")


@check_step("the store answers without an error")
def step_answers_quietly(context: Any) -> None:
    answer = _answer(context)
    if isinstance(answer, Raised):
        raise AssertionError(f"the store raised {answer.error_type}: {answer.message}")


@check_step("the store refuses with TASK_STORE_UNAVAILABLE")
def step_refuses(context: Any) -> None:
    answer = _answer(context)
    if not refused_as_unavailable(answer):
        raise AssertionError(f"the store should raise an error with code"
                             f" TASK_STORE_UNAVAILABLE, it answered {answer!r}")


@check_step("the store's list holds the tasks {ids}")
def step_list_holds(context: Any, ids: str) -> None:
    got = listed_ids(_answer(context))
    if got != _ids(ids):
        raise AssertionError(f"the store's list holds {got}, expected {_ids(ids)}")


@check_step("the store's list holds no tasks")
def step_list_empty(context: Any) -> None:
    got = listed_ids(_answer(context))
    if got:
        raise AssertionError(f"the store's list should be empty, it holds {got}")


@check_step('the record of task "{task_id}" read before still shows {fields:Json}')
def step_snapshot_kept(context: Any, task_id: str, fields: JsonValue) -> None:
    held = [view for _, view, then in store_of(context).harness.held if then.task_id == task_id]
    if not held:
        raise AssertionError(f"no record of {task_id!r} was read in this scenario")
    differences = differing_fields(RecordForm.of(held[0]), record_from_fields(task_id, fields))
    if differences:
        raise AssertionError(f"the record of {task_id!r} read earlier changed: {differences}")
