"""The Hypothesis machine for task stores: random saves, replacements, reads, lists,
deletes and expiry questions over a few task ids.

The harness compares every answer with the oracle and re-checks every record handed out
(TS-008). Four ids make replacements and deletes of held records common; instants come
from a few whole seconds, and list_expired's cut-offs from the same ones, so records
completed exactly at a cut-off come up often (TS-006), as do queued and running records
that carry a completion instant (TS-007). Results include 1, 1.0, true and "1", which a
store must keep apart (TS-001). Saves from several threads at once (TS-010) draw nothing:
they run once per machine run, before the first sequence, on a store of their own
(`concurrent_saves_once`). Reads run at once (TS-012), beside deletes of held records and
saves of fresh ids (n1 to n4). The
store's backend goes down and comes back (TS-011): a store with the fault seam must then
refuse every operation with TASK_STORE_UNAVAILABLE, one kept in memory go on answering;
nothing runs on threads during an outage. Where the backend keeps the deprecated aliases,
every third save goes through `put` instead (TS-013). One rule without arguments saves a
fixed record, then a later version over it (TS-002); Hypothesis shrinks towards it.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from jobconform.backends.protocol import DEPRECATED_ALIASES, Backend
from jobconform.backends.task_store.protocol import STORE
from jobconform.conformance.command_engine import AreaMachine
from jobconform.conformance.machine_runner import (
    MachineRun,
    machine_runner,
    run_on_a_runtime_of_its_own,
)
from jobconform.conformance.store.harness import StoreHarness, at_seconds, record_from_fields
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.store import commands as ts
from jobconform.reference.store.oracle import STATUSES, TaskRecord
from jobconform.spec import Profile, Registry

TASK_IDS = ("t1", "t2", "t3", "t4")
MODULES = ("reports.build", "mail.send")
RESULTS: tuple[JsonValue, ...] = (None, 1, 1.0, True, "1", {"rows": 2, "ok": True}, [1, "a"])
ERRORS = (None, "boom", "")
SECONDS = (0, 10, 20, 30)
CUT_OFFS = (10, 20, 30, 40)
STEPS_PER_EXAMPLE = 30
AT_ONCE = 4  # reads in a batch run at once: contention, yet few real threads
AT_ONCE_WRITES = 2  # deletes, and saves, beside them
# Ids saved only beside other operations, each once: a record such a save loses is told
# apart from a replacement the store got wrong (TS-002).
FRESH_IDS = ("n1", "n2", "n3", "n4")


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
reads = st.one_of(
    st.sampled_from(TASK_IDS).map(ts.GetTask),
    st.one_of(st.none(), st.sampled_from(STATUSES)).map(ts.ListTasks),
    st.sampled_from(CUT_OFFS).map(lambda before: ts.ListExpired(at_seconds(before))),
)


def make_store_machine(backend: Backend, profile: Profile, registry: Registry | None,
                       run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend and profile."""
    keeps_aliases = DEPRECATED_ALIASES in backend.capabilities

    class StoreMachine(AreaMachine[StoreHarness | None]):
        def __init__(self) -> None:
            super().__init__(run)
            self.harness = None
            self.unused_fresh_ids = list(FRESH_IDS)
            self.down = False  # the store's backend is unreachable (TS-011)
            self.saves = 0

        @initialize()
        def open_store(self) -> None:
            self.harness = StoreHarness(backend, profile, registry)

        @rule(record=records)
        def save(self, record: TaskRecord) -> None:
            # Every third save goes through the deprecated put where the backend keeps it
            # (TS-013). Taken from the count, not drawn, so the machine's draws stay as
            # they were.
            self.saves += 1
            if keeps_aliases and self.saves % 3 == 0:
                self._run(ts.PutTask(record))
            else:
                self._run(ts.SaveTask(record))

        @rule()
        def save_over_a_held_record(self) -> None:
            """A task saved queued, then saved running over it, and read back (TS-002).

            Aimed (conformance/aim.py): every sequence that draws it checks a replacement,
            whatever ids the saves draw. It takes no arguments, so Hypothesis orders it
            before the other rules, and the shrinker, which tries each step as the first
            rule, tries three plain calls. Before, the first rule was at_once, whose threads
            made each of the shrinker's tries cost: a store keeping only a task's first
            save took 1400 tries and 13 s of CPU to shrink, now 9 steps."""
            queued = TaskRecord(TASK_IDS[0], MODULES[0], "queued", at_seconds(SECONDS[0]))
            self._run(ts.SaveTask(queued))
            self._run(ts.SaveTask(replace(queued, status="running",
                                       started_at=at_seconds(SECONDS[1]))))
            self._run(ts.GetTask(queued.task_id))

        @precondition(lambda self: not self.down)
        @rule(data=st.data())
        def at_once(self, data: Any) -> None:
            """Reads, deletes of held records and saves of fresh ids, all at once."""
            assert self.harness is not None, "open_store runs before every rule"
            held = sorted(self.harness.oracle.records)
            batch: list[ts.Operation] = []
            if held:
                batch += [ts.DeleteTask(task_id) for task_id in data.draw(
                    st.lists(st.sampled_from(held), max_size=AT_ONCE_WRITES, unique=True))]
            fresh = data.draw(st.lists(records, max_size=min(AT_ONCE_WRITES,
                                                             len(self.unused_fresh_ids))))
            batch += [ts.SaveTask(replace(record, task_id=self.unused_fresh_ids.pop(0)))
                      for record in fresh]
            batch += data.draw(st.lists(reads, min_size=max(0, 2 - len(batch)),
                                        max_size=AT_ONCE))
            self._run(ts.AtOnce(tuple(batch)))

        @rule(down=st.booleans())
        def backend_outage(self, down: bool) -> None:
            self.down = down
            self._run(ts.BackendOutage(down))

        @rule(task_id=st.sampled_from(TASK_IDS))
        def get(self, task_id: str) -> None:
            self._run(ts.GetTask(task_id))

        @rule(status=st.one_of(st.none(), st.sampled_from(STATUSES)))
        def list_tasks(self, status: str | None) -> None:
            self._run(ts.ListTasks(status))

        @rule(task_id=st.sampled_from(TASK_IDS))
        def delete(self, task_id: str) -> None:
            self._run(ts.DeleteTask(task_id))

        @rule(before=st.sampled_from(CUT_OFFS))
        def list_expired(self, before: int) -> None:
            self._run(ts.ListExpired(at_seconds(before)))

    return StoreMachine


# A record saved alone before the threads save theirs: the list after each batch must
# still show it as saved (a batch that overwrites the store's records loses it).
SAVED_ALONE = record_from_fields("t1", {"status": "running", "started_at": 10})
# The batches the threads save, ids no other save uses: a record missing afterwards is lost
# to concurrency, not a replacement the store got wrong. Between them they carry every
# status, instants and none, and results a store must keep apart (TS-001).
CONCURRENT_FIELDS: tuple[tuple[tuple[str, dict[str, object]], ...], ...] = (
    (("c1", {}), ("c2", {"status": "succeeded", "completed_at": 20, "result": 1})),
    (("c3", {"status": "succeeded", "completed_at": 20, "result": 1.0}),
     ("c4", {"status": "failed", "completed_at": 30, "error": "boom", "retry_count": 2,
             "max_retries": 2}),
     ("c5", {"status": "cancelled", "completed_at": 10})),
    (("c6", {"status": "running", "started_at": 10}),
     ("c7", {"status": "queued", "completed_at": 30, "retry_count": 1, "max_retries": 3}),
     ("c8", {"status": "succeeded", "completed_at": 40, "result": {"rows": 2}}),
     ("c9", {"module_id": "mail.send", "status": "succeeded", "completed_at": 40,
             "result": "1"})),
)
CONCURRENT_BATCHES = tuple(tuple(record_from_fields(task_id, given) for task_id, given in batch)
                           for batch in CONCURRENT_FIELDS)


def concurrent_saves_once(backend: Backend, profile: Profile, registry: Registry | None,
                          run: MachineRun) -> None:
    """Saves from several threads at once (TS-010), once per machine run before the first
    sequence, on a store of its own: a record saved alone, then each batch of
    CONCURRENT_BATCHES saved by its threads released together, the store listed after each.

    They were a drawn rule, up to two batches a sequence, each record saved on a real
    thread (issue 33: threads started in every sequence). Fixed batches once per run
    check the same thing, saves of new ids racing one another, and draw nothing; saves
    of fresh ids still race reads in every sequence (TS-012's rule, at_once).

    Raises:
        Divergence: a batch diverged; it is also recorded as `run.divergence`.
    """
    commands: tuple[ts.StoreCommand, ...] = (
        ts.SaveTask(SAVED_ALONE), *(ts.SaveConcurrently(batch) for batch in CONCURRENT_BATCHES))
    run_on_a_runtime_of_its_own(partial(StoreHarness, backend, profile, registry), commands,
                                run)


run_store_machine = machine_runner(make_store_machine, steps=STEPS_PER_EXAMPLE, area=STORE,
                                   once=concurrent_saves_once)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> StoreHarness:
    """The harness this machine runs its commands through, for a trace's replay
    (conformance/area_trace.py); the machine draws no setup."""
    return StoreHarness(backend, profile, registry)
