"""The Hypothesis machine for task stores: random saves, replacements, reads, lists,
deletes and expiry questions over a few task ids.

The harness compares every answer with the oracle and re-checks every record handed out
(TS-008). Four ids make replacements and deletes of held records common; instants come
from a few whole seconds, and list_expired's cut-offs from the same ones, so records
completed exactly at a cut-off come up often (TS-006), as do queued and running records
that carry a completion instant (TS-007). Results include 1, 1.0, true and "1", which a
store must keep apart (TS-001).
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule

from jobconform.backends.protocol import Backend
from jobconform.backends.task_store.protocol import STORE
from jobconform.conformance.harness import Divergence
from jobconform.conformance.machine_runner import MachineRun, run_machine
from jobconform.conformance.store.harness import StoreHarness, at_seconds
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.store.commands import (
    DeleteTask,
    GetTask,
    ListExpired,
    ListTasks,
    SaveTask,
    StoreCommand,
)
from jobconform.reference.store.oracle import STATUSES, TaskRecord
from jobconform.spec import Profile, Registry

TASK_IDS = ("t1", "t2", "t3", "t4")
MODULES = ("reports.build", "mail.send")
RESULTS: tuple[JsonValue, ...] = (None, 1, 1.0, True, "1", {"rows": 2, "ok": True}, [1, "a"])
ERRORS = (None, "boom", "")
SECONDS = (0, 10, 20, 30)
CUT_OFFS = (10, 20, 30, 40)
STEPS_PER_EXAMPLE = 30


instants = st.sampled_from(SECONDS).map(at_seconds)
records = st.builds(
    TaskRecord,
    task_id=st.sampled_from(TASK_IDS),
    module_id=st.sampled_from(MODULES),
    status=st.sampled_from(STATUSES),
    submitted_at=instants,
    started_at=st.one_of(st.none(), instants),
    completed_at=st.one_of(st.none(), instants),
    result=st.sampled_from(RESULTS),
    error=st.sampled_from(ERRORS),
    retry_count=st.integers(0, 2),
    max_retries=st.integers(0, 3),
)


def make_store_machine(backend: Backend, profile: Profile, registry: Registry | None,
                       run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend and profile."""

    class StoreMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.harness: StoreHarness | None = None

        @initialize()
        def open_store(self) -> None:
            self.harness = StoreHarness(backend, profile, registry)

        @property
        def store(self) -> StoreHarness:
            assert self.harness is not None, "open_store runs before every rule"
            return self.harness

        def _run(self, command: StoreCommand) -> None:
            run.steps += 1
            try:
                self.store.run(command)
            except Divergence as divergence:
                run.divergence = divergence  # the last one is the shrunk one
                raise
            finally:
                run.exercised |= self.store.exercised

        @rule(record=records)
        def save(self, record: TaskRecord) -> None:
            self._run(SaveTask(record))

        @rule(task_id=st.sampled_from(TASK_IDS))
        def get(self, task_id: str) -> None:
            self._run(GetTask(task_id))

        @rule(status=st.one_of(st.none(), st.sampled_from(STATUSES)))
        def list_tasks(self, status: str | None) -> None:
            self._run(ListTasks(status))

        @rule(task_id=st.sampled_from(TASK_IDS))
        def delete(self, task_id: str) -> None:
            self._run(DeleteTask(task_id))

        @rule(before=st.sampled_from(CUT_OFFS))
        def list_expired(self, before: int) -> None:
            self._run(ListExpired(at_seconds(before)))

        def teardown(self) -> None:
            if self.harness is not None:
                self.harness.close()

    return StoreMachine


def run_store_machine(backend: Backend, profile: Profile, registry: Registry | None,
                      seed: int = 0, examples: int = 200) -> MachineRun:
    """Run the machine; the same seed gives the same sequences and the same result. A
    profile without the store area runs nothing (the report says n/a)."""
    if STORE not in profile.areas:
        return MachineRun()
    return run_machine(make_store_machine, backend, profile, registry, seed=seed,
                       examples=examples, steps=STEPS_PER_EXAMPLE)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> StoreHarness:
    """The harness this machine runs its commands through, for a trace's replay
    (conformance/area_trace.py); the machine draws no setup."""
    return StoreHarness(backend, profile, registry)
