"""Behave steps for task stores (features/store.feature, TS-001..TS-012).

Each When-step, derived from the command's declaration (declarations.py), sends one
command through `StoreHarness.run`, so the store's answer is compared with the oracle's
and a `Divergence` fails the scenario with the requirement IDs. Each Then-step checks
the store's own last answer against what the scenario states. Records are written as
JSON objects of their fields, instants in seconds after the epoch:
`the store saves task "t1" as {"status": "succeeded", "completed_at": 30}`. Steps speak
of "the store" so that they cannot clash with the lifecycle steps. Register them from
features/steps/ (every area's library is imported there):

    from jobconform.conformance.store.steps import *  # noqa: F403
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobconform.conformance.scenario import RunConfig, state_of
from jobconform.conformance.step_library import check_step, setup_step
from jobconform.conformance.store.declarations import DECLARATIONS, step_ids
from jobconform.conformance.store.harness import (
    Raised,
    RecordForm,
    StoreHarness,
    differing_fields,
    listed_ids,
    record_from_fields,
    refused_as_unavailable,
)
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.store.commands import StoreCommand

__all__: list[str] = []

AREA = "store"


@dataclass
class StoreScenario:
    """One scenario's store harness and the store's last answer."""

    harness: StoreHarness
    last_answer: object = None
    last_command: StoreCommand | None = None
    # No store command's answer is kept by alias; the vocabulary's engine asks for a place.
    answers: dict[str, Any] = field(default_factory=dict)

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


# -- commands: derived from their declarations (declarations.py) --------------------------

derive_steps(DECLARATIONS, store_of)


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
    if got != step_ids(ids):
        raise AssertionError(f"the store's list holds {got}, expected {step_ids(ids)}")


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
