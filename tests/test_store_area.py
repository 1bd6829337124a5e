"""The store area (spec/store.yaml, TS-001..TS-012): the oracle's rules, the kit's stores
through the harness on every database, the async form under the task-manager profile, an
unreachable backend, operations from several threads at once, and the gallery's broken
stores each caught by the machine with the requirement it breaks."""

from __future__ import annotations

import asyncio
import threading
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sql_databases import database

from jobconform.backends.loading import load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import Clock
from jobconform.backends.sql import SqlBackend
from jobconform.backends.sql.database import create_store_engine
from jobconform.backends.task_store.memory import AsyncInMemoryTaskStore, InMemoryTaskStore
from jobconform.backends.task_store.protocol import TASK_STORE_UNAVAILABLE, TaskStoreError
from jobconform.backends.task_store.sql import SqlTaskStore
from jobconform.backends.threaded import ThreadedBackend
from jobconform.backends.threaded.sql_backend import ThreadedSqlBackend
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.gallery import GalleryEntry
from jobconform.conformance.harness import AdapterError, Divergence
from jobconform.conformance.store.gallery import GALLERY
from jobconform.conformance.store.harness import (
    Raised,
    StoreHarness,
    at_seconds,
    record_from_fields,
    refused_as_unavailable,
)
from jobconform.conformance.store.machine import run_store_machine
from jobconform.reference.store.commands import (
    AtOnce,
    BackendOutage,
    DeleteTask,
    GetTask,
    ListExpired,
    ListTasks,
    SaveConcurrently,
    SaveTask,
    StoreCommand,
)
from jobconform.reference.store.oracle import StoreOracle, TaskRecord, is_expired
from jobconform.spec import Profile, load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")
TASK_MANAGER = REGISTRY.profile("task-manager")


def after(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def record(task_id: str, **fields: object) -> TaskRecord:
    return record_from_fields(task_id, fields)


# A sequence touching every rule: replacement, JSON types, deletes, the expiry boundary,
# a re-queued task that still carries a completion instant.
SEQUENCE: list[StoreCommand] = [
    SaveTask(record("a", status="succeeded", completed_at=10, result=1.0)),
    SaveTask(record("b", status="queued", started_at=1, completed_at=5, error="boom",
                    retry_count=1, max_retries=2)),
    SaveTask(record("c", status="failed", completed_at=20, result={"rows": [1, 2]})),
    GetTask("a"),
    ListExpired(EPOCH + after(10)),
    ListExpired(EPOCH + after(20)),
    SaveTask(record("a", status="cancelled", module_id="mail.send")),
    GetTask("a"),
    ListTasks(),
    ListTasks("queued"),
    DeleteTask("ghost"),
    DeleteTask("c"),
    GetTask("c"),
    ListExpired(EPOCH + after(3600)),
    ListTasks(),
]


# -- the oracle ----------------------------------------------------------------------------------


def test_list_expired_is_strict_and_terminal_only() -> None:
    done = record("d", status="succeeded", completed_at=10)
    assert not is_expired(done, EPOCH + after(10))
    assert is_expired(done, EPOCH + after(10.001))
    assert not is_expired(record("q", status="queued", completed_at=1), EPOCH + after(99))
    assert not is_expired(record("x", status="cancelled"), EPOCH + after(99))


def test_the_oracle_replaces_whole_records_and_names_the_rule_of_an_ids_history() -> None:
    oracle = StoreOracle()
    assert oracle.explaining("t1") == ("TS-003",)
    oracle.save(record("t1", status="running", error="x"))
    assert oracle.explaining("t1") == ("TS-001",)
    oracle.save(record("t1", status="succeeded", completed_at=2))
    assert oracle.get("t1") == record("t1", status="succeeded", completed_at=2)
    assert oracle.explaining("t1") == ("TS-002", "TS-001")
    oracle.delete("t1")
    oracle.delete("t1")
    assert oracle.get("t1") is None and oracle.list() == []
    assert oracle.explaining("t1") == ("TS-005", "TS-003")


def test_a_malformed_command_is_a_clear_error() -> None:
    with closing(StoreHarness(MemoryBackend(), CANONICAL, REGISTRY)) as harness:
        with pytest.raises(ValueError, match=r"list by a canonical status.*not 'pending'"):
            harness.run(ListTasks("pending"))
        with pytest.raises(ValueError, match="has no timezone"):
            harness.run(ListExpired(EPOCH.replace(tzinfo=None)))
        assert harness.commands == []


def test_records_refuse_what_no_store_could_keep() -> None:
    with pytest.raises(ValueError, match="status 'pending' is not canonical"):
        record("t1", status="pending")
    with pytest.raises(ValueError, match=r"unknown record field.*'finished_at'"):
        record_from_fields("t1", {"finished_at": 3})
    with pytest.raises(ValueError, match="no timezone"):
        TaskRecord("t1", "m", "queued", EPOCH.replace(tzinfo=None))


# -- the kit's stores ------------------------------------------------------------------------


@pytest.mark.parametrize("backend", [MemoryBackend(), SqlBackend("sqlite://"),
                                     ThreadedBackend(), ThreadedSqlBackend("sqlite://")],
                         ids=lambda backend: backend.name)
def test_every_kit_store_agrees_with_the_oracle(backend: MemoryBackend) -> None:
    with closing(StoreHarness(backend, CANONICAL, REGISTRY)) as harness:
        harness.run_all(SEQUENCE)
        assert harness.run(GetTask("c")) is None
        assert harness.run(DeleteTask("ghost")) is None
    assert {"TS-001", "TS-002", "TS-003", "TS-004", "TS-005", "TS-006",
            "TS-007", "TS-008"} <= harness.exercised


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_the_sql_store_agrees_with_the_oracle_on_the_servers(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        backend = SqlBackend(url)
        with closing(StoreHarness(backend, TASK_MANAGER, REGISTRY)) as harness:
            harness.run_all(SEQUENCE)
        run = run_store_machine(backend, CANONICAL, REGISTRY, examples=15)
        assert run.divergence is None, str(run.divergence)


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb"])
def test_concurrent_saves_of_one_new_id_leave_one_record(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        store = SqlTaskStore(create_store_engine(url), owns_engine=True)
        versions = [record("race", status="running", retry_count=n) for n in range(8)]
        start = threading.Barrier(len(versions))
        errors: list[BaseException] = []

        def save(version: TaskRecord) -> None:
            start.wait()
            try:
                store.save(version)
            except BaseException as error:  # reported below with the test's assertion
                errors.append(error)

        threads = [threading.Thread(target=save, args=(v,)) for v in versions]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        try:
            assert errors == []
            held = store.list()
            assert len(held) == 1 and held[0] in versions
        finally:
            store.close()


# -- saves from several threads at once (TS-010) --------------------------------------------------


def concurrent_batch(prefix: str, count: int) -> SaveConcurrently:
    return SaveConcurrently(tuple(record(f"{prefix}{n}", status="succeeded", completed_at=2,
                                         result=1.0) for n in range(count)))


def run_concurrent_saves(backend: MemoryBackend, profile: Profile) -> set[str]:
    with closing(StoreHarness(backend, profile, REGISTRY)) as harness:
        harness.run(SaveTask(record("s0", status="queued")))  # replaced by the batch
        for round_number in range(5):
            harness.run(concurrent_batch(f"r{round_number}-", 8))
        harness.run(SaveConcurrently((record("s0", status="running", started_at=1),
                                      record("s1"))))
        listed = harness.run(ListTasks("running"))
        assert isinstance(listed, tuple)
        assert [form.task_id for form in listed] == ["s0"]
    return harness.exercised


@pytest.mark.parametrize("backend", [MemoryBackend(), SqlBackend("sqlite://"),
                                     ThreadedBackend(), ThreadedSqlBackend("sqlite://")],
                         ids=lambda backend: backend.name)
def test_every_kit_store_keeps_every_concurrent_save(backend: MemoryBackend) -> None:
    assert "TS-010" in run_concurrent_saves(backend, CANONICAL)


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_the_sql_store_keeps_every_concurrent_save_on_the_servers(kind: str,
                                                                 tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        assert "TS-009" in run_concurrent_saves(SqlBackend(url), TASK_MANAGER)


def test_a_concurrent_save_names_each_task_id_once() -> None:
    with pytest.raises(ValueError, match="each task id once"):
        SaveConcurrently((record("a"), record("a")))
    with pytest.raises(ValueError, match="2 to 8 records"):
        SaveConcurrently((record("a"),))


def test_saves_lost_on_other_threads_are_ts_010s() -> None:
    backend = load_backend("jobconform.conformance.store.gallery:store_connection_per_thread")
    with closing(StoreHarness(backend, TASK_MANAGER, REGISTRY)) as harness:
        harness.run(SaveTask(record("held")))  # the harness's own thread still works
        assert harness.run(GetTask("held")) is not None
        with pytest.raises(Divergence) as caught:
            harness.run(concurrent_batch("c", 3))
        assert caught.value.requirements[0] == "TS-010"


class _SaveRaisesBesideAnotherStore(InMemoryTaskStore):
    """save refuses any thread but the one that opened the store, as sqlite3 does with
    check_same_thread."""

    def save(self, record: TaskRecord) -> None:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("SQLite objects created in a thread can only be used in that"
                               " same thread")
        super().save(record)


class _SaveRaisesBackend(ThreadedBackend):
    def open_store(self, clock: Clock) -> _SaveRaisesBesideAnotherStore:  # type: ignore[override]
        return _SaveRaisesBesideAnotherStore()


def test_a_save_raising_beside_another_is_ts_010s() -> None:
    with (closing(StoreHarness(_SaveRaisesBackend(), CANONICAL, REGISTRY)) as harness,
          pytest.raises(Divergence, match=r"TS-010(.*\n)*.*actual: +Raised")):
        harness.run(concurrent_batch("c", 2))


class _HangingSaveStore(InMemoryTaskStore):
    def save(self, record: TaskRecord) -> None:
        if threading.current_thread() is not threading.main_thread():
            threading.Event().wait(3)  # longer than the harness waits for a saver


class _HangingSaveBackend(ThreadedBackend):
    def open_store(self, clock: Clock) -> _HangingSaveStore:  # type: ignore[override]
        return _HangingSaveStore()


def test_a_saver_that_never_returns_is_the_adapters_error() -> None:
    with (closing(StoreHarness(_HangingSaveBackend(), CANONICAL, REGISTRY,
                               safety_timeout=1.0)) as harness,
          pytest.raises(AdapterError, match="did not finish")):
        harness.run(concurrent_batch("c", 2))


# -- sync and async stores (TS-009) -------------------------------------------------------------


def test_a_blocking_store_conforms_under_canonical_but_not_under_the_task_manager() -> None:
    with closing(StoreHarness(ThreadedBackend(), CANONICAL, REGISTRY)) as harness:
        harness.run(SaveTask(record("t1")))
    with (closing(StoreHarness(ThreadedBackend(), TASK_MANAGER, REGISTRY)) as harness,
          pytest.raises(Divergence, match=r"TS-009.*\n.*what save\(\) returned")):
        harness.run(SaveTask(record("t1")))


@pytest.mark.parametrize("backend", [MemoryBackend(), SqlBackend("sqlite://")],
                         ids=lambda backend: backend.name)
def test_the_async_stores_pass_under_the_task_manager(backend: MemoryBackend) -> None:
    with closing(StoreHarness(backend, TASK_MANAGER, REGISTRY)) as harness:
        harness.run_all(SEQUENCE)
    assert "TS-009" in harness.exercised


class _HangingStore(InMemoryTaskStore):
    async def get(self, task_id: str) -> None:  # type: ignore[override]
        await asyncio.Event().wait()  # waits for virtual time nobody advances


class _HangingBackend(MemoryBackend):
    def open_store(self, clock: Clock) -> _HangingStore:  # type: ignore[override]
        return _HangingStore()


def test_a_coroutine_that_never_finishes_is_the_adapters_error() -> None:
    with (closing(StoreHarness(_HangingBackend(), CANONICAL, REGISTRY,
                               safety_timeout=1.0)) as harness,
          pytest.raises(AdapterError, match=r"get\(\) never finished")):
        harness.run(GetTask("t1"))


def test_an_error_raised_by_an_operation_is_its_answer() -> None:
    backend = load_backend("jobconform.conformance.store.gallery:store_unknown_delete_raises")
    with closing(StoreHarness(backend, CANONICAL, REGISTRY)) as harness:
        with pytest.raises(Divergence, match=r"TS-005.*\n(.*\n)*.*actual: +Raised") as caught:
            harness.run(DeleteTask("ghost"))
        assert isinstance(caught.value.actual, Raised)
        assert caught.value.actual.error_type == "KeyError"


# -- the gallery ---------------------------------------------------------------------------------


# Each entry's machine runs in its own test, not in a module fixture shared by all: the
# fixture ran the whole gallery (over two minutes of shrinking) inside the first entry's
# test, which then ran alone on one xdist worker at the end of the run.
@pytest.mark.parametrize("entry", GALLERY, ids=lambda entry: entry.name)
def test_the_machine_names_each_broken_stores_requirement_first(entry: GalleryEntry) -> None:
    # Shrunk, as `jobconform run` reports it (the self-test checks the unshrunk example).
    run = run_store_machine(load_backend(entry.target), CANONICAL, REGISTRY, examples=100)
    named = () if run.divergence is None else run.divergence.requirements
    assert named, f"{entry.name} was not caught"
    assert named[0] == entry.catches, named


def test_the_gallery_covers_at_least_three_requirements() -> None:
    assert len({entry.catches for entry in GALLERY}) >= 3
    assert all(REGISTRY.requirement(entry.catches).area == "store" for entry in GALLERY)


# -- an unreachable backend (TS-011) ---------------------------------------------------------------


OUTAGE: list[StoreCommand] = [
    SaveTask(record("a", status="succeeded", completed_at=1)),
    SaveTask(record("b")),
    BackendOutage(True),
    SaveTask(record("c")),
    GetTask("a"),
    ListTasks(),
    ListTasks("queued"),
    ListExpired(EPOCH + after(10)),
    DeleteTask("a"),
    BackendOutage(False),
    ListTasks(),
    GetTask("a"),
]


def test_the_oracle_refuses_everything_while_a_backend_is_down_and_only_then() -> None:
    oracle = StoreOracle()
    oracle.backend_outage(True, has_backend=False)
    assert not oracle.unreachable  # a store kept in memory has nothing to lose
    oracle.backend_outage(True, has_backend=True)
    assert oracle.unreachable
    oracle.backend_outage(False, has_backend=True)
    assert not oracle.unreachable


@pytest.mark.parametrize("kind", ["sqlite", "postgresql", "mariadb"])
def test_the_sql_store_refuses_every_operation_while_cut_off(kind: str, tmp_path: Path) -> None:
    with (database(kind, tmp_path) as url,
          closing(SqlTaskStore(create_store_engine(url), owns_engine=True)) as store):
        store.save(record("a"))
        store.set_reachable(False)
        for operation in (lambda: store.save(record("b")), lambda: store.get("a"),
                          store.list, lambda: store.delete("a"),
                          lambda: store.list_expired(EPOCH)):
            with pytest.raises(TaskStoreError) as refused:
                operation()
            assert refused.value.code == TASK_STORE_UNAVAILABLE
            assert "cannot be reached" in str(refused.value)
        store.set_reachable(True)
        assert [held.task_id for held in store.list()] == ["a"]


@pytest.mark.parametrize("backend", [SqlBackend("sqlite://"), ThreadedSqlBackend("sqlite://")],
                         ids=lambda backend: backend.name)
def test_the_sql_stores_offer_the_seam_and_pass_an_outage(backend: MemoryBackend) -> None:
    with closing(StoreHarness(backend, CANONICAL, REGISTRY)) as harness:
        assert harness.has_backend
        answers = [harness.run(command) for command in OUTAGE]
    refused = answers[3:9]
    assert all(refused_as_unavailable(answer) for answer in refused), refused
    assert "TS-011" in harness.exercised


@pytest.mark.parametrize("backend", [MemoryBackend(), ThreadedBackend()],
                         ids=lambda backend: backend.name)
def test_a_store_kept_in_memory_goes_on_answering_through_an_outage(
        backend: MemoryBackend) -> None:
    with closing(StoreHarness(backend, CANONICAL, REGISTRY)) as harness:
        assert not harness.has_backend
        answers = [harness.run(command) for command in OUTAGE]
    assert not any(isinstance(answer, Raised) for answer in answers)
    assert "TS-011" in harness.exercised


def test_a_raw_driver_error_and_an_empty_answer_are_ts_011s() -> None:
    backend = load_backend(
        "jobconform.conformance.store.gallery:store_unreachable_driver_error")
    for operation in (SaveTask(record("b")), GetTask("a"), ListTasks()):
        with closing(StoreHarness(backend, CANONICAL, REGISTRY)) as harness:
            harness.run_all([SaveTask(record("a")), BackendOutage(True)])
            with pytest.raises(Divergence) as caught:
                harness.run(operation)
            assert caught.value.requirements == ("TS-011",)


class _UnavailableWhenBusyStore(InMemoryTaskStore):
    """Raises TASK_STORE_UNAVAILABLE with nothing cut off (a lock timeout reported as an
    outage)."""

    def get(self, task_id: str) -> TaskRecord | None:
        raise TaskStoreError(TASK_STORE_UNAVAILABLE, "lock busy")


class _UnavailableWhenBusyBackend(MemoryBackend):
    def open_store(self, clock: Clock) -> AsyncInMemoryTaskStore:
        return AsyncInMemoryTaskStore(_UnavailableWhenBusyStore())


def test_the_unavailable_error_from_a_reachable_store_is_ts_011s() -> None:
    with closing(StoreHarness(_UnavailableWhenBusyBackend(), CANONICAL, REGISTRY)) as harness:
        with pytest.raises(Divergence) as caught:
            harness.run(GetTask("t1"))
        assert caught.value.requirements[0] == "TS-011"


def test_no_batch_runs_on_threads_during_an_outage() -> None:
    with closing(StoreHarness(SqlBackend("sqlite://"), CANONICAL, REGISTRY)) as harness:
        harness.run_all([SaveTask(record("a")), BackendOutage(True)])
        with pytest.raises(ValueError, match="end the outage"):
            harness.run(AtOnce((GetTask("a"), ListTasks())))


# -- reads, deletes and saves at once (TS-012) -------------------------------------------------


AT_ONCE_SEQUENCE: list[StoreCommand] = [
    SaveTask(record("a", status="succeeded", completed_at=1, result=1.0)),
    SaveTask(record("b", status="failed", completed_at=2)),
    SaveTask(record("c")),
    SaveTask(record("d", status="running", started_at=1)),
    AtOnce((GetTask("a"), GetTask("ghost"), ListTasks(), ListTasks("queued"),
            ListExpired(EPOCH + after(2)))),
    AtOnce((ListTasks(), ListExpired(EPOCH + after(5)), GetTask("b"), DeleteTask("a"),
            DeleteTask("b"), SaveTask(record("e", status="cancelled", completed_at=3)),
            SaveTask(record("c", status="running", started_at=4)))),
    AtOnce((DeleteTask("d"), DeleteTask("e"))),
    ListTasks(),
]


@pytest.mark.parametrize("backend", [MemoryBackend(), SqlBackend("sqlite://"),
                                     ThreadedBackend(), ThreadedSqlBackend("sqlite://")],
                         ids=lambda backend: backend.name)
def test_every_kit_store_answers_operations_made_at_once(backend: MemoryBackend) -> None:
    with closing(StoreHarness(backend, CANONICAL, REGISTRY)) as harness:
        for _ in range(3):
            answers = [harness.run(command) for command in AT_ONCE_SEQUENCE]
            assert [form.task_id for form in answers[-1]] == ["c"]  # type: ignore[attr-defined]
            harness.run(DeleteTask("c"))
    assert "TS-012" in harness.exercised


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_the_sql_store_answers_operations_made_at_once_on_the_servers(
        kind: str, tmp_path: Path) -> None:
    with (database(kind, tmp_path) as url,
          closing(StoreHarness(SqlBackend(url), TASK_MANAGER, REGISTRY)) as harness):
        harness.run_all(AT_ONCE_SEQUENCE + OUTAGE)


def test_a_batch_run_at_once_has_one_right_outcome() -> None:
    with pytest.raises(ValueError, match="each task id once"):
        AtOnce((DeleteTask("a"), SaveTask(record("a"))))
    with pytest.raises(ValueError, match="2 to 8 operations"):
        AtOnce((GetTask("a"),))
    with (closing(StoreHarness(MemoryBackend(), CANONICAL, REGISTRY)) as harness,
          pytest.raises(ValueError, match="asked alone")):
        harness.run(AtOnce((DeleteTask("ghost"), ListTasks())))


class _OneOperationOnOpenerThreadOnlyStore(InMemoryTaskStore):
    """One operation, named by the subclass, finds an empty store on any thread but the
    opener's."""

    broken = ""

    def __init__(self) -> None:
        super().__init__()
        self._opener = threading.get_ident()

    def _elsewhere(self) -> bool:
        return threading.get_ident() != self._opener

    def get(self, task_id: str) -> TaskRecord | None:
        return None if self.broken == "get" and self._elsewhere() else super().get(task_id)

    def list(self, status: str | None = None) -> list[TaskRecord]:
        if self.broken == "list" and self._elsewhere():
            return []
        return super().list(status)

    def list_expired(self, before: datetime) -> list[TaskRecord]:
        if self.broken == "list_expired" and self._elsewhere():
            return super().list_expired(before) * 2  # each record twice
        return super().list_expired(before)

    def delete(self, task_id: str) -> None:
        if not (self.broken == "delete" and self._elsewhere()):
            super().delete(task_id)


def _broken_on_other_threads(operation: str) -> MemoryBackend:
    store_class = type(f"Broken_{operation}", (_OneOperationOnOpenerThreadOnlyStore,),
                       {"broken": operation})

    class Backend(MemoryBackend):
        def open_store(self, clock: Clock) -> AsyncInMemoryTaskStore:
            return AsyncInMemoryTaskStore(store_class())

    return Backend()


@pytest.mark.parametrize(("operation", "batch"), [
    ("get", AtOnce((GetTask("a"), GetTask("b")))),
    ("list", AtOnce((ListTasks(), ListTasks("queued"), SaveTask(record("n"))))),
    ("list_expired", AtOnce((ListExpired(EPOCH + after(9)), GetTask("a")))),
    ("delete", AtOnce((DeleteTask("a"), ListTasks()))),
])
def test_each_operation_going_wrong_only_beside_others_is_ts_012s(
        operation: str, batch: AtOnce) -> None:
    # Saves from the harness's thread still work, so only the batch can go wrong.
    with closing(StoreHarness(_broken_on_other_threads(operation), CANONICAL, REGISTRY)) as harness:
        harness.run_all([SaveTask(record("a", status="succeeded", completed_at=1)),
                         SaveTask(record("b"))])
        with pytest.raises(Divergence) as caught:
            harness.run(batch)
        assert caught.value.requirements[0] == "TS-012"


def test_a_read_beside_a_write_may_see_either_version_but_nothing_else() -> None:
    with closing(StoreHarness(MemoryBackend(), CANONICAL, REGISTRY)) as harness:
        harness.run(SaveTask(record("a")))
        listed = harness.run(AtOnce((ListTasks(), ListTasks(),
                                     SaveTask(record("a", status="running", started_at=1)),
                                     SaveTask(record("n")))))
        assert [form.task_id for form in listed] == ["a", "n"]  # type: ignore[attr-defined]
        assert harness.run(ListExpired(at_seconds(60))) == ()
