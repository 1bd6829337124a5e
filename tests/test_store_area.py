"""The store area (spec/store.yaml, TS-001..TS-010): the oracle's rules, the kit's stores
through the harness on every database, the async form under the task-manager profile, and
the gallery's broken stores each caught by the machine with the requirement it breaks."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sql_databases import database

from jobconform.backends.loading import load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import Clock
from jobconform.backends.sql import SqlBackend
from jobconform.backends.sql.database import create_store_engine
from jobconform.backends.task_store.memory import InMemoryTaskStore
from jobconform.backends.task_store.sql import SqlTaskStore
from jobconform.backends.threaded import ThreadedBackend
from jobconform.backends.threaded.sql_backend import ThreadedSqlBackend
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.gallery import GalleryEntry
from jobconform.conformance.harness import AdapterError, Divergence
from jobconform.conformance.store.gallery import GALLERY
from jobconform.conformance.store.harness import Raised, StoreHarness, record_from_fields
from jobconform.conformance.store.machine import run_store_machine
from jobconform.reference.store.commands import (
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
    harness = StoreHarness(MemoryBackend(), CANONICAL, REGISTRY)
    try:
        with pytest.raises(ValueError, match=r"list by a canonical status.*not 'pending'"):
            harness.run(ListTasks("pending"))
        with pytest.raises(ValueError, match="has no timezone"):
            harness.run(ListExpired(EPOCH.replace(tzinfo=None)))
        assert harness.commands == []
    finally:
        harness.close()


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
    harness = StoreHarness(backend, CANONICAL, REGISTRY)
    try:
        harness.run_all(SEQUENCE)
        assert harness.run(GetTask("c")) is None
        assert harness.run(DeleteTask("ghost")) is None
    finally:
        harness.close()
    assert {"TS-001", "TS-002", "TS-003", "TS-004", "TS-005", "TS-006",
            "TS-007", "TS-008"} <= harness.exercised


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_the_sql_store_agrees_with_the_oracle_on_the_servers(kind: str, tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        backend = SqlBackend(url)
        harness = StoreHarness(backend, TASK_MANAGER, REGISTRY)
        try:
            harness.run_all(SEQUENCE)
        finally:
            harness.close()
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
    harness = StoreHarness(backend, profile, REGISTRY)
    try:
        harness.run(SaveTask(record("s0", status="queued")))  # replaced by the batch
        for round_number in range(5):
            harness.run(concurrent_batch(f"r{round_number}-", 8))
        harness.run(SaveConcurrently((record("s0", status="running", started_at=1),
                                      record("s1"))))
        listed = harness.run(ListTasks("running"))
        assert isinstance(listed, tuple)
        assert [form.task_id for form in listed] == ["s0"]
    finally:
        harness.close()
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
    harness = StoreHarness(backend, TASK_MANAGER, REGISTRY)
    try:
        harness.run(SaveTask(record("held")))  # the harness's own thread still works
        assert harness.run(GetTask("held")) is not None
        with pytest.raises(Divergence) as caught:
            harness.run(concurrent_batch("c", 3))
        assert caught.value.requirements[0] == "TS-010"
    finally:
        harness.close()


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
    harness = StoreHarness(_SaveRaisesBackend(), CANONICAL, REGISTRY)
    try:
        with pytest.raises(Divergence, match=r"TS-010(.*\n)*.*actual: +Raised"):
            harness.run(concurrent_batch("c", 2))
    finally:
        harness.close()


class _HangingSaveStore(InMemoryTaskStore):
    def save(self, record: TaskRecord) -> None:
        if threading.current_thread() is not threading.main_thread():
            threading.Event().wait(3)  # longer than the harness waits for a saver


class _HangingSaveBackend(ThreadedBackend):
    def open_store(self, clock: Clock) -> _HangingSaveStore:  # type: ignore[override]
        return _HangingSaveStore()


def test_a_saver_that_never_returns_is_the_adapters_error() -> None:
    harness = StoreHarness(_HangingSaveBackend(), CANONICAL, REGISTRY, safety_timeout=1.0)
    try:
        with pytest.raises(AdapterError, match="did not finish"):
            harness.run(concurrent_batch("c", 2))
    finally:
        harness.close()


# -- sync and async stores (TS-009) -------------------------------------------------------------


def test_a_blocking_store_conforms_under_canonical_but_not_under_the_task_manager() -> None:
    harness = StoreHarness(ThreadedBackend(), CANONICAL, REGISTRY)
    try:
        harness.run(SaveTask(record("t1")))
    finally:
        harness.close()
    harness = StoreHarness(ThreadedBackend(), TASK_MANAGER, REGISTRY)
    try:
        with pytest.raises(Divergence, match=r"TS-009.*\n.*what save\(\) returned"):
            harness.run(SaveTask(record("t1")))
    finally:
        harness.close()


@pytest.mark.parametrize("backend", [MemoryBackend(), SqlBackend("sqlite://")],
                         ids=lambda backend: backend.name)
def test_the_async_stores_pass_under_the_task_manager(backend: MemoryBackend) -> None:
    harness = StoreHarness(backend, TASK_MANAGER, REGISTRY)
    try:
        harness.run_all(SEQUENCE)
    finally:
        harness.close()
    assert "TS-009" in harness.exercised


class _HangingStore(InMemoryTaskStore):
    async def get(self, task_id: str) -> None:  # type: ignore[override]
        await asyncio.Event().wait()  # waits for virtual time nobody advances


class _HangingBackend(MemoryBackend):
    def open_store(self, clock: Clock) -> _HangingStore:  # type: ignore[override]
        return _HangingStore()


def test_a_coroutine_that_never_finishes_is_the_adapters_error() -> None:
    harness = StoreHarness(_HangingBackend(), CANONICAL, REGISTRY, safety_timeout=1.0)
    try:
        with pytest.raises(AdapterError, match=r"get\(\) never finished"):
            harness.run(GetTask("t1"))
    finally:
        harness.close()


def test_an_error_raised_by_an_operation_is_its_answer() -> None:
    backend = load_backend("jobconform.conformance.store.gallery:store_unknown_delete_raises")
    harness = StoreHarness(backend, CANONICAL, REGISTRY)
    try:
        with pytest.raises(Divergence, match=r"TS-005.*\n(.*\n)*.*actual: +Raised") as caught:
            harness.run(DeleteTask("ghost"))
        assert isinstance(caught.value.actual, Raised)
        assert caught.value.actual.error_type == "KeyError"
    finally:
        harness.close()


# -- the gallery ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def machine_verdicts() -> Iterator[dict[str, tuple[str, ...]]]:
    verdicts = {}
    for entry in GALLERY:
        run = run_store_machine(load_backend(entry.target), CANONICAL, REGISTRY, examples=100)
        verdicts[entry.name] = () if run.divergence is None else run.divergence.requirements
    yield verdicts


@pytest.mark.parametrize("entry", GALLERY, ids=lambda entry: entry.name)
def test_the_machine_names_each_broken_stores_requirement_first(
        entry: GalleryEntry, machine_verdicts: dict[str, tuple[str, ...]]) -> None:
    named = machine_verdicts[entry.name]
    assert named, f"{entry.name} was not caught"
    assert named[0] == entry.catches, named


def test_the_gallery_covers_at_least_three_requirements() -> None:
    assert len({entry.catches for entry in GALLERY}) >= 3
    assert all(REGISTRY.requirement(entry.catches).area == "store" for entry in GALLERY)
