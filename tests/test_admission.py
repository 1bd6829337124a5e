"""The admission area: the oracle's rules, the config and loader errors, the SQL store on
SQLite, PostgreSQL and MariaDB, and the threaded runtime's probe under real threads."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from lifecycle_only import LifecycleOnlyBackend
from sql_databases import DATABASES, assert_a_check_refuses, database, upgraded_over_rows
from sqlalchemy import select, text

from jobconform.backends.admission.memory import InMemoryAdmissionStore
from jobconform.backends.admission.protocol import BacklogFull
from jobconform.backends.admission.runtime import AdmissionService
from jobconform.backends.admission.sql import SETTINGS, SqlAdmissionStore
from jobconform.backends.admission.threaded import ThreadedAdmissionRuntime
from jobconform.backends.loading import BackendLoadError, check_backend, load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.sql import SqlBackend, create_store_engine
from jobconform.conformance.admission.harness import AdmissionHarness, admission_config
from jobconform.conformance.admission.machine import run_admission_machine
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference import admission as ad
from jobconform.reference.admission import AdmissionConfig, AdmissionModel
from jobconform.spec import SpecError, load_registry

CANONICAL = load_registry().profile("canonical")

# -- the oracle ------------------------------------------------------------------------------


def model(**overrides: object) -> AdmissionModel:
    return AdmissionModel(AdmissionConfig(**overrides), EPOCH)  # type: ignore[arg-type]


def apply(oracle: AdmissionModel, *commands: ad.AdmissionCommand) -> list[object]:
    return [oracle.apply(command).answer for command in commands]


@pytest.mark.parametrize(("stored", "in_force"),
                         [(-5, 1), (0, 1), (1, 1), (10, 10), (32, 32), (33, 32), (999, 32)])
def test_a_stored_ceiling_is_clamped_into_1_to_32(stored: int, in_force: int) -> None:
    assert ad.clamp_ceiling(stored) == in_force


def test_the_effective_cap_is_the_smaller_of_cap_and_ceiling_in_force() -> None:
    oracle = model()
    apply(oracle, ad.AddOwner("o"), ad.SetParallelCap("o", 8), ad.StoreRawCeiling(5))
    assert oracle.effective_cap("o") == 5
    apply(oracle, ad.StoreRawCeiling(0))
    assert oracle.effective_cap("o") == 1
    assert oracle.ceiling_view() == {"stored": 0, "in_force": 1}


def test_the_backlog_is_fifo_and_refuses_only_when_full() -> None:
    oracle = model(parallel_cap=1, backlog_depth=2)
    answers = apply(oracle, ad.AddOwner("o"), *(ad.Admit(e, "o") for e in "abcd"))
    assert answers[1:] == ["running", "queued", "queued", ad.backlog_full("o", 2)]
    assert "d" not in oracle.executions
    apply(oracle, ad.FinishExecution("a"))
    assert oracle.executions["b"].state == ad.RUNNING
    assert oracle.backlogs["o"] == ["c"]


def test_backlog_expiry_is_strictly_older_than_the_maximum_age() -> None:
    oracle = model(parallel_cap=1, backlog_max_age_seconds=60.0)
    apply(oracle, ad.AddOwner("o"), ad.Admit("a", "o"), ad.Admit("b", "o"), ad.PassTime(60))
    assert apply(oracle, ad.Maintain()) == [0]
    assert apply(oracle, ad.PassTime(0.001), ad.Maintain())[-1] == 1
    assert oracle.executions["b"].state == ad.EXPIRED


def test_a_call_times_out_exactly_at_the_acquire_timeout_and_releases_its_caller() -> None:
    oracle = model(call_acquire_timeout_seconds=10.0)
    apply(oracle, ad.AddOwner("o"), ad.SetParallelCap("o", 1), ad.AddOwner("c"),
          ad.Admit("t", "o"), ad.StartCall("x", "t", "o"), ad.Admit("a", "c"),
          ad.Admit("b", "c"), ad.Admit("z", "c"), ad.StartCall("y", "a", "o"), ad.PassTime(9.999))
    assert oracle.calls["y"].state == ad.CALL_WAITING
    expected = oracle.apply(ad.PassTime(0.001))
    assert "AD-011" in expected.requirements
    assert oracle.calls["y"].state == ad.CALL_REFUSED
    assert oracle.executions["a"].state == ad.BUDGET_EXHAUSTED
    assert oracle.executions["z"].state == ad.RUNNING  # the freed slot drained the backlog


def test_lowering_the_timeout_lists_blocking_schedules_longest_first() -> None:
    oracle = model()
    answers = apply(oracle, ad.AddOwner("o"), ad.AddSchedule("o", "b", 600),
                    ad.AddSchedule("o", "a", 600), ad.AddSchedule("o", "c", 700),
                    ad.AddSchedule("o", "d", 100), ad.SetExecutionTimeout("o", 500))
    assert answers[-1] == {
        "error": "agent_timeout_below_active_schedules", "requested_seconds": 500,
        "max_schedule_timeout_seconds": 700,
        "schedules": [{"schedule": "c", "timeout_seconds": 700},
                      {"schedule": "a", "timeout_seconds": 600},
                      {"schedule": "b", "timeout_seconds": 600}]}
    assert oracle.owners["o"].execution_timeout_seconds == 900


def test_the_admission_machine_gives_the_same_counterexample_for_the_same_seed() -> None:
    registry = load_registry()
    backend = load_backend("jobconform.conformance.admission.gallery:admission_newest_first_drain")
    # Seed 0, the default run's: it finds the bug in 4424 steps and shrinks it to ten
    # commands in about 2 CPU-s a run; seed 5 took 21487 steps and 11 CPU-s a run.
    runs = [run_admission_machine(backend, CANONICAL, registry, seed=0, examples=300)
            for _ in range(2)]
    first, second = (run.divergence for run in runs)
    assert first is not None and second is not None
    assert [ad.describe(c) for c in first.commands] == [ad.describe(c) for c in second.commands]
    assert "AD-006" in first.requirements
    assert runs[0].steps == runs[1].steps


# -- configuration and loading errors ---------------------------------------------------------


def test_the_profile_gives_every_admission_default() -> None:
    assert admission_config(CANONICAL) == AdmissionConfig()


def test_an_unknown_admission_parameter_is_named() -> None:
    with pytest.raises(SpecError, match=r"unknown admission parameter\(s\) \['backlog'\]"):
        admission_config(CANONICAL, backlog=3)


@pytest.mark.parametrize(("name", "value"), [("parallel_cap", 0), ("backlog_depth", True),
                                             ("execution_timeout_seconds", 59),
                                             ("call_acquire_timeout_seconds", -1.0)])
def test_an_out_of_range_config_says_which_value(name: str, value: object) -> None:
    with pytest.raises(ValueError, match=name):
        AdmissionConfig(**{name: value})  # type: ignore[arg-type]


def test_a_backend_claiming_admission_without_open_admission_is_refused() -> None:
    with pytest.raises(BackendLoadError,
                       match="claims the admission area but has no method open_admission"):
        check_backend(LifecycleOnlyBackend("admission"), "half")


def test_a_reused_alias_is_a_malformed_command() -> None:
    harness = AdmissionHarness(MemoryBackend(), CANONICAL)
    harness.run(ad.AddOwner("o"))
    harness.run(ad.Admit("a", "o"))
    with pytest.raises(ValueError, match="execution alias 'a' is already used"):
        harness.run(ad.Admit("a", "o"))
    harness.close()


# -- the SQL store ------------------------------------------------------------------------------


SCENARIO = (
    ad.AddOwner("o"), ad.AddOwner("t"), ad.SetParallelCap("o", 2), ad.SetBacklogDepth("o", 2),
    *(ad.Admit(e, "o") for e in "abcde"), ad.StoreRawCeiling(999), ad.ReadCeiling(),
    ad.CancelExecution("c"), ad.FinishExecution("a"), ad.StartCall("x", "b", "t"),
    ad.SetCeiling(1), ad.StartCall("y", "d", "t"), ad.PassTime(3600), ad.Maintain(),
    ad.AddSchedule("o", "s", 900), ad.SetExecutionTimeout("o", 600), ad.DeleteOwner("o"),
)


def test_the_sql_backend_agrees_with_the_oracle(database_url: str) -> None:
    backend = SqlBackend(database_url)
    for _ in range(2):  # the second runtime starts empty on the same database
        harness = AdmissionHarness(backend, CANONICAL, load_registry())
        for command in SCENARIO:
            harness.run(command)
        harness.close()


# Spec 0.7.0: own timeouts and identities, timeouts and leases, a restart, failing reads.
SCENARIO_0_7 = (
    ad.AddOwner("o"), ad.SetParallelCap("o", 1), ad.SetExecutionTimeout("o", 120),
    ad.Admit("a", "o", identity="alice"), ad.Admit("b", "o", timeout_seconds=60,
                                                    identity="bob"),
    ad.Admit("c", "o", timeout_seconds=121), ad.Admit("c", "o"), ad.Restart(),
    ad.PassTime(419), ad.PassTime(1), ad.PassTime(60), ad.FailSettingsReads(True),
    ad.ReadCeiling(), ad.SetCeiling(1), ad.FailSettingsReads(False), ad.ReadCeiling(),
    ad.PassTime(120),
)


def test_the_sql_backend_agrees_with_the_oracle_on_timeouts_and_restarts(
        database_url: str) -> None:
    harness = AdmissionHarness(SqlBackend(database_url), CANONICAL, load_registry())
    for command in SCENARIO_0_7:
        harness.run(command)
    states = {alias: e.state for alias, e in harness.model.executions.items()}
    assert states == {"a": ad.LEASE_EXPIRED, "b": ad.TIMED_OUT, "c": ad.TIMED_OUT}
    harness.close()


def test_a_new_process_on_the_same_database_finds_the_backlog_as_it_arrived(
        tmp_path: Path) -> None:
    """Not the runtime's restart(): a second runtime object with a store of its own."""
    url = f"sqlite:///{tmp_path / 'admission.db'}"
    SqlBackend(url)  # migrates the file
    clock, config = VirtualClock(), AdmissionConfig()
    first = AdmissionService(SqlAdmissionStore(create_store_engine(url), owns_engine=True),
                             clock, config)
    first.add_owner("o")
    first.set_parallel_cap("o", 1)
    first.admit("o", "a", identity="alice")
    first.admit("o", "b", timeout_seconds=60, identity="bob")
    first.close()
    second = AdmissionService(SqlAdmissionStore(create_store_engine(url), owns_engine=True),
                              clock, config)
    assert list(second.backlog("o")) == ["b"]
    queued = second.execution("b")
    assert queued is not None
    assert (queued.state, queued.timeout_seconds, queued.identity) == ("queued", 60, "bob")
    second.maintain()
    second.finish("a")
    started = second.execution("b")
    assert started is not None
    assert (started.state, started.identity) == ("running", "bob")
    second.close()


@pytest.mark.parametrize("kind", DATABASES)
def test_migration_0031_keeps_existing_executions(kind: str, tmp_path: Path) -> None:
    """Rows written before spec 0.7.0 take the default timeout and no identity, and the
    widened state CHECK takes the new end states."""
    with upgraded_over_rows(
            kind, tmp_path, "0004",
            "INSERT INTO admission_executions (execution_id, owner, state, arrived_at, seq)"
            " VALUES ('old', 'o', 'queued', '2026-01-01 00:00:00', 1)") as engine:
        with engine.begin() as connection:
            row = connection.execute(text(
                "SELECT timeout_seconds, identity FROM admission_executions")).one()
            assert tuple(row) == (900, None)
            connection.execute(text(
                "UPDATE admission_executions SET state = 'lease_expired'"))
        assert_a_check_refuses(engine, "UPDATE admission_executions SET state = 'lost'")


def test_a_stray_ceiling_stays_in_the_settings_table(database_url: str) -> None:
    backend = SqlBackend(database_url)
    runtime = backend.open_admission(VirtualClock(), AdmissionConfig())
    runtime.store_raw_ceiling(0)
    runtime.add_owner("o")
    assert runtime.admit("o", "a") == "running"
    assert runtime.admit("o", "b") == "queued"
    runtime.maintain()
    engine = create_store_engine(database_url)
    with engine.connect() as connection:
        stored = connection.execute(select(SETTINGS.c.int_value)).scalars().all()
    engine.dispose()
    assert list(stored) == [0]
    runtime.close()


def test_the_database_refuses_an_out_of_range_owner_row(database_url: str) -> None:
    """The CHECK constraints back the runtime's validation."""
    engine = create_store_engine(database_url)
    SqlBackend(database_url).empty_admission_store()
    assert_a_check_refuses(engine, "INSERT INTO admission_owners (name, parallel_cap,"
                           " backlog_depth, execution_timeout_seconds, seq)"
                           " VALUES ('x', 1, 201, 900, 1)")
    engine.dispose()


# -- real threads: the probe never sees more bodies than the effective cap -----------------------

CLIENTS = 6
PER_CLIENT = 25
SAFETY_SECONDS = 60.0


@contextmanager
def threaded_runtime(kind: str, folder: Path) -> Iterator[ThreadedAdmissionRuntime]:
    """A threaded admission runtime over a memory store or a scratch database of `kind`."""
    clock, config = VirtualClock(), AdmissionConfig(backlog_depth=200)
    with ExitStack() as stack:
        if kind == "memory":
            runtime = ThreadedAdmissionRuntime(InMemoryAdmissionStore(), clock, config)
        else:
            url = stack.enter_context(database(kind, folder))
            SqlBackend(url)  # migrates the scratch database
            store = SqlAdmissionStore(create_store_engine(url), owns_engine=True)
            runtime = ThreadedAdmissionRuntime(store, clock, config)
        stack.callback(runtime.close)
        yield runtime


def admit_all(runtime: ThreadedAdmissionRuntime, client: int,
              errors: list[BaseException]) -> None:
    try:
        for n in range(PER_CLIENT):
            runtime.admit("o", f"c{client}-{n}")
    except BaseException as error:  # reported by the main thread
        errors.append(error)


def finish_all(runtime: ThreadedAdmissionRuntime, errors: list[BaseException]) -> None:
    """Finish running work until none is left, racing the other finishers."""
    deadline = time.monotonic() + SAFETY_SECONDS
    try:
        while any(view.state != ad.FINISHED for view in runtime.executions()):
            if time.monotonic() > deadline:
                raise AssertionError(f"executions did not all finish in {SAFETY_SECONDS} s")
            for view in runtime.executions():
                if view.state == ad.RUNNING:
                    runtime.finish(view.execution_id)
    except BaseException as error:
        errors.append(error)


def run_threads(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(SAFETY_SECONDS * 2)
        assert not thread.is_alive(), f"{thread.name} hangs"


@pytest.mark.parametrize("kind", ["memory", *DATABASES])
def test_concurrent_clients_never_run_more_bodies_than_the_effective_cap(
        kind: str, tmp_path: Path) -> None:
    with threaded_runtime(kind, tmp_path) as runtime:
        runtime.add_owner("o")
        runtime.set_parallel_cap("o", 5)
        runtime.set_ceiling(3)  # effective cap: min(5, 3)
        errors: list[BaseException] = []
        run_threads([threading.Thread(target=admit_all, args=(runtime, c, errors))
                     for c in range(CLIENTS)])
        assert not errors, errors
        runtime.settle()
        assert runtime.bodies_running("o") == 3  # the cap is reached, not just respected
        run_threads([threading.Thread(target=finish_all, args=(runtime, errors))
                     for _ in range(3)])
        runtime.settle()
        assert not errors, errors
        assert runtime.peak_bodies_running("o") == 3
        assert runtime.bodies_running("o") == 0
        views = runtime.executions()
        assert len(views) == CLIENTS * PER_CLIENT
        assert list(runtime.backlog("o")) == []
        # Whatever the interleaving of clients, work started in the order it arrived.
        assert runtime.start_order() == [view.execution_id for view in views]


def test_a_backlog_full_refusal_under_threads_leaves_no_record() -> None:
    runtime = ThreadedAdmissionRuntime(InMemoryAdmissionStore(), VirtualClock(),
                                       AdmissionConfig(parallel_cap=1, backlog_depth=1))
    runtime.add_owner("o")
    assert [runtime.admit("o", e) for e in "ab"] == ["running", "queued"]
    with pytest.raises(BacklogFull) as refused:
        runtime.admit("o", "c")
    assert refused.value.detail == ad.backlog_full("o", 1)
    assert runtime.execution("c") is None
    runtime.close()


# -- two runtimes over one store (AD-027) -------------------------------------------------------


def test_a_peer_over_the_sql_store_counts_the_other_runtimes_work(database_url: str) -> None:
    """The second runtime's own store object on the same database sees every row: the
    cap is the fleet's, a slot freed through it starts the first runtime's backlog."""
    backend = SqlBackend(database_url)
    first = backend.open_admission(VirtualClock(), AdmissionConfig())
    second = first.open_peer()
    first.add_owner("o")
    first.set_parallel_cap("o", 1)
    assert first.admit("o", "a") == "running"
    assert second.admit("o", "b") == "queued"
    assert first.admit("o", "c") == "queued"
    assert second.finish("a") is True
    assert [view.state for view in (first.execution("b"), first.execution("c"))] == [
        "running", "queued"]
    second.close()
    first.close()


def test_a_threaded_peer_ends_a_body_the_other_runtime_runs() -> None:
    first = ThreadedAdmissionRuntime(InMemoryAdmissionStore(), VirtualClock(),
                                     AdmissionConfig())
    second = first.open_peer()
    try:
        first.add_owner("o")
        first.set_parallel_cap("o", 1)
        assert first.admit("o", "a") == "running"
        assert second.admit("o", "b") == "queued"
        first.settle()
        assert (first.bodies_running("o"), second.bodies_running("o")) == (1, 0)
        second.finish("a")  # a's body, in the first runtime, ends before b starts
        first.settle()
        second.settle()
        assert (first.bodies_running("o"), second.bodies_running("o")) == (0, 1)
        assert max(first.peak_bodies_running("o"), second.peak_bodies_running("o")) == 1
    finally:
        second.close()
        first.close()
