"""The breaker area: the oracle's rules, the profiles, loading, and the shared SQL breaker
under real threads (every database) and real processes (PostgreSQL)."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta
from functools import partial
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from lifecycle_only import LifecycleOnlyBackend
from sql_databases import database
from sqlalchemy import Engine, update

from jobconform.backends.breaker.runtime import BreakerRow, StoreBreakerRuntime
from jobconform.backends.breaker.sql import STATES, SqlBreakerStore
from jobconform.backends.loading import BackendLoadError, check_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import BREAKER_SEAMS
from jobconform.backends.sql.database import create_store_engine
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.breaker.harness import BreakerHarness, breaker_settings
from jobconform.conformance.breaker.race import (
    GUARD_SECONDS,
    SPAWN,
    TARGET,
    FixedClock,
    engaged_runtime,
    run_probe_race,
    trip,
)
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.partial_claims import (
    BREAKER_WITHOUT_SEAMS,
    BreakerWithoutSeamsBackend,
)
from jobconform.reference.breaker import commands as bc
from jobconform.reference.breaker.oracle import (
    Admission,
    BreakerModel,
    BreakerSettings,
    BreakerState,
    CallOutcome,
)
from jobconform.spec import SpecError, load_registry

SEED = BreakerSettings()  # the seed's values are the defaults


def at(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def engaged_model(settings: BreakerSettings = SEED) -> BreakerModel:
    return BreakerModel(settings, global_switch=True, opted_in={"a", "b"})


def fail(model: BreakerModel, times: int, seconds: float = 0.0,
         failure_class: str = "auth", target: str = "a") -> None:
    for number in range(times):
        call = f"f{seconds}-{number}"
        model.admit(target, call, at(seconds))
        model.record(target, call, CallOutcome.FAILURE, failure_class, at(seconds))


def state(model: BreakerModel, seconds: float, target: str = "a") -> BreakerState:
    view = model.read(target, at(seconds))
    assert view is not None
    return view.state


# -- the oracle ------------------------------------------------------------------------------


def test_three_consecutive_auth_failures_trip_and_a_success_resets() -> None:
    model = engaged_model()
    fail(model, 2)
    model.record("a", "ok", CallOutcome.SUCCESS, None, at(0))
    fail(model, 2)
    assert state(model, 0) is BreakerState.CLOSED
    fail(model, 1)
    assert state(model, 0) is BreakerState.OPEN
    assert state(model, 29.999) is BreakerState.OPEN
    assert state(model, 30) is BreakerState.HALF_OPEN


def test_timeouts_agent_errors_and_cancellations_are_neutral() -> None:
    model = engaged_model()
    fail(model, 2)
    fail(model, 5, failure_class="timeout")
    fail(model, 5, failure_class="agent_error")
    model.record("a", "x", CallOutcome.CANCELLED, None, at(0))
    view = model.read("a", at(0))
    assert view is not None and view.failures == 2


def test_the_cooldown_doubles_to_the_cap_and_a_success_resets_it() -> None:
    model = engaged_model()
    fail(model, 3)
    now, cooldowns = 0.0, []
    for number in range(6):
        now += model.breaker("a").cooldown_seconds
        assert model.admit("a", f"p{number}", at(now)) is Admission.PROBE
        model.record("a", f"p{number}", CallOutcome.FAILURE, "auth", at(now))
        cooldowns.append(model.breaker("a").cooldown_seconds)
    assert cooldowns == [60, 120, 240, 300, 300, 300]
    now += 300
    model.admit("a", "ok", at(now))
    model.record("a", "ok", CallOutcome.SUCCESS, None, at(now))
    assert model.breaker("a").cooldown_seconds == 30
    assert state(model, now) is BreakerState.CLOSED


def test_a_silent_probe_loses_its_slot_at_the_lease_boundary() -> None:
    model = engaged_model()
    fail(model, 3)
    assert model.admit("a", "silent", at(30)) is Admission.PROBE
    assert model.admit("a", "early", at(89.999)) is Admission.REFUSED
    assert model.admit("a", "next", at(90)) is Admission.PROBE
    model.record("a", "silent", CallOutcome.SUCCESS, None, at(91))
    assert state(model, 91) is BreakerState.HALF_OPEN  # the lapsed probe decides nothing


def test_a_trip_fails_only_the_tripped_targets_queued_work() -> None:
    model = engaged_model()
    model.enqueue("a", "w1", at(0))
    model.enqueue("b", "x1", at(0))
    fail(model, 3)
    assert model.failed_work == {"a": ["w1"]}
    assert model.queues == {"b": ["x1"]}
    assert model.enqueue("a", "w2", at(1)).value == "refused"


def test_the_backstop_fails_a_lost_drains_work_open_or_half_open() -> None:
    """CB-014: the trip's drain is lost; the sweep fails the work, also once half-open,
    and leaves closed and unengaged targets alone."""
    model = engaged_model()
    model.enqueue("a", "w1", at(0))
    model.enqueue("b", "x1", at(0))
    model.enqueue("c", "y1", at(0))  # c is not opted in
    model.drain_lost = True
    fail(model, 3)
    model.drain_lost = False
    assert model.queues["a"] == ["w1"] and model.failed_work == {}
    assert model.backstop(at(60)) == 1
    assert state(model, 60) is BreakerState.HALF_OPEN
    assert model.failed_work == {"a": ["w1"]}
    assert model.queues == {"b": ["x1"], "c": ["y1"]}
    assert model.backstop(at(61)) == 0


def test_a_backstop_that_cannot_read_the_breaker_keeps_the_work_and_logs_once() -> None:
    model = engaged_model()
    model.enqueue("a", "w1", at(0))
    model.enqueue("b", "x1", at(0))
    model.drain_lost = True
    fail(model, 3)
    model.store_down = True
    assert model.backstop(at(1)) == 0
    assert model.warnings == 2  # a and b each read once
    model.store_down = False
    assert model.backstop(at(1)) == 1 and model.failed_work == {"a": ["w1"]}


def test_a_missed_heartbeat_counts_while_closed_and_never_while_open() -> None:
    """CB-015: counted whatever counted_classes says; no probe's outcome while open."""
    model = engaged_model()
    model.enqueue("a", "w1", at(0))
    model.missed_heartbeat("a", at(0))
    fail(model, 1)
    assert model.breaker("a").failures == 2
    model.missed_heartbeat("a", at(5))
    assert state(model, 5) is BreakerState.OPEN and model.failed_work == {"a": ["w1"]}
    opened = model.breaker("a")
    model.missed_heartbeat("a", at(20))
    assert model.breaker("a") == opened
    assert model.admit("a", "p", at(35)) is Admission.PROBE
    model.missed_heartbeat("a", at(36))
    view = model.read("a", at(36))
    assert view is not None and view.probe == "p" and view.cooldown_seconds == 30
    unengaged = BreakerModel(SEED, global_switch=True)
    for _ in range(5):
        unengaged.missed_heartbeat("a", at(0))
    assert unengaged.breaker("a").failures == 0


def test_the_runtime_sweeps_and_counts_heartbeats_like_the_oracle() -> None:
    runtime = MemoryBackend().open_breaker(FixedClock(EPOCH), SEED)
    runtime.set_global_switch(True)
    runtime.set_opt_in("a", True)
    runtime.enqueue("a", "w1")
    runtime.set_drain_lost(True)
    for _ in range(3):
        runtime.record_missed_heartbeat("a")
    readout = runtime.read("a")
    assert readout is not None and readout.state == "open"
    assert list(runtime.queued("a")) == ["w1"]
    assert runtime.backstop() == 1 and list(runtime.failed_work("a")) == ["w1"]
    runtime.record_missed_heartbeat("a")
    assert runtime.read("a") == readout


def test_the_seams_apply_under_the_canonical_profile_only() -> None:
    from jobconform.conformance.breaker.machine import checks_dispatch_seams

    registry = load_registry()
    assert checks_dispatch_seams(registry.profile("canonical"), registry)
    assert not checks_dispatch_seams(registry.profile("pybreaker"), registry)
    assert not checks_dispatch_seams(registry.profile("canonical"), None)
    assert checks_dispatch_seams(registry.profile("canonical"), registry, MemoryBackend())
    assert not checks_dispatch_seams(registry.profile("pybreaker"), registry, MemoryBackend())


# -- breaker-seams: a breaker without the backstop sweep and the heartbeat seam ---------------


SEAM_REQUIREMENTS = ("CB-014", "CB-015", "CB-016", "CB-017", "CB-018", "CB-019")


def test_cb014_to_cb017_need_the_breaker_seams_capability() -> None:
    registry = load_registry()
    # SR-007 (the backstop on its own schedule) needs the seams too, in the self-running
    # area, which a breaker-only backend does not claim either.
    assert {r.id for r in registry.requirements if BREAKER_SEAMS in r.needs} == {
        *SEAM_REQUIREMENTS, "SR-007"}
    backend = BreakerWithoutSeamsBackend()
    for rid in SEAM_REQUIREMENTS:
        reason = skip_reason(registry, backend, registry.profile("canonical"), [rid])
        assert reason is not None and BREAKER_SEAMS in reason
    assert skip_reason(registry, backend, registry.profile("canonical"), ["CB-006"]) is None
    assert skip_reason(registry, MemoryBackend(), registry.profile("canonical"),
                       ["CB-014", "CB-015"]) is None
    # Outside their profile they are n/a first, as the report says, whatever is claimed.
    assert skip_reason(registry, backend, registry.profile("pybreaker"), ["CB-014"]) == (
        "requirement CB-014 does not apply to profile pybreaker")


def test_a_breaker_without_seams_gets_the_machine_without_their_rules() -> None:
    from jobconform.conformance.breaker.machine import make_breaker_machine
    from jobconform.conformance.machine_runner import MachineRun

    registry = load_registry()
    canonical = registry.profile("canonical")
    seamless = make_breaker_machine(BreakerWithoutSeamsBackend(), canonical, registry,
                                    MachineRun())
    with_seams = make_breaker_machine(MemoryBackend(), canonical, registry, MachineRun())
    assert with_seams.__name__ == "BreakerMachineWithSeams"
    assert seamless.__name__ == "BreakerMachine"
    assert not any(hasattr(seamless, rule) for rule in ("missed_heartbeat", "backstop",
                                                        "lost_drain", "raw_end"))


def test_the_harness_sends_no_seam_command_to_a_breaker_without_them() -> None:
    registry = load_registry()
    harness = BreakerHarness(BreakerWithoutSeamsBackend(), registry.profile("canonical"),
                             registry)
    assert not hasattr(harness.workers[0], "backstop")
    harness.run(bc.SwitchBreaker(True))
    for command in (bc.MissedHeartbeat("a"), bc.DrainLost(True), bc.BackstopSweep(),
                    bc.CallEndsRaw("a", "c", "SIGKILL")):
        with pytest.raises(ValueError, match=f"does not claim {BREAKER_SEAMS}"):
            harness.run(command)
    harness.run(bc.OptIn("a"))
    harness.close()


def test_an_adapter_without_breaker_seams_runs_the_area_with_cb014_and_cb015_not_claimed(
        tmp_path: Path) -> None:
    from click.testing import CliRunner

    from jobconform.conformance.cli import main

    result = CliRunner().invoke(main, ["run", "--backend", BREAKER_WITHOUT_SEAMS, "--area",
                                       "breaker", "--examples", "100", "--report-dir",
                                       str(tmp_path)])
    report = json.loads((tmp_path / "report.json").read_text())
    assert result.exit_code == 0, result.output
    assert BREAKER_SEAMS not in report["capabilities"]
    for rid, body in report["requirements"].items():
        if body["area"] != "breaker":
            continue
        wanted = ({"not claimed"} if rid in SEAM_REQUIREMENTS
                  else {"n/a"} if "canonical" not in load_registry().requirement(rid).profiles
                  else {"pass"})
        assert set(body["suites"].values()) == wanted, (rid, body["suites"])


def test_breaker_seams_without_the_breaker_area_is_refused() -> None:
    class SeamsOnly(MemoryBackend):
        capabilities = frozenset({"lifecycle", BREAKER_SEAMS})

    with pytest.raises(BackendLoadError, match=BREAKER_SEAMS):
        check_backend(SeamsOnly(), "seams-only")
    check_backend(BreakerWithoutSeamsBackend(), "breaker-without-seams")


def test_the_harness_names_cb014_and_cb015_for_their_gallery_entries() -> None:
    from jobconform.backends.loading import load_backend
    from jobconform.conformance.breaker.gallery import GALLERY
    from jobconform.conformance.harness import Divergence

    registry = load_registry()
    entries = {e.name: e for e in GALLERY}
    harness = BreakerHarness(load_backend(entries["breaker_backstop_open_only"].target),
                             registry.profile("canonical"), registry)
    for command in [bc.SwitchBreaker(True), bc.OptIn("a"), bc.AddWork("a", "w"),
                    bc.DrainLost(True), bc.MissedHeartbeat("a"), bc.MissedHeartbeat("a"),
                    bc.MissedHeartbeat("a"), bc.PassTime(30)]:
        harness.run(command)
    with pytest.raises(Divergence) as caught:
        harness.run(bc.BackstopSweep())
    assert caught.value.primary == "CB-014"
    harness.close()
    harness = BreakerHarness(load_backend(entries["breaker_heartbeat_reopens"].target),
                             registry.profile("canonical"), registry)
    for command in [bc.SwitchBreaker(True), bc.OptIn("a"), bc.MissedHeartbeat("a"),
                    bc.MissedHeartbeat("a"), bc.MissedHeartbeat("a")]:
        harness.run(command)
    with pytest.raises(Divergence) as caught:
        harness.run(bc.MissedHeartbeat("a"))
    assert caught.value.primary == "CB-015"
    harness.close()


def test_an_unengaged_or_unreachable_breaker_admits_everything() -> None:
    model = BreakerModel(SEED, global_switch=False, opted_in={"a"})
    fail(model, 5)
    assert state(model, 0) is BreakerState.CLOSED and model.warnings == 0
    model.global_switch = True
    fail(model, 3)
    model.store_down = True
    assert model.admit("a", "c", at(1)) is Admission.ADMITTED
    assert model.read("a", at(1)) is None
    assert model.warnings == 1


# -- parameters and profiles -------------------------------------------------------------------


def test_the_profiles_carry_the_seed_and_the_pybreaker_values() -> None:
    registry = load_registry()
    assert breaker_settings(registry.profile("canonical")) == SEED
    pybreaker = breaker_settings(registry.profile("pybreaker"))
    assert (pybreaker.failure_threshold, pybreaker.cooldown_seconds,
            pybreaker.cooldown_max_seconds) == (5, 60, 60)
    assert pybreaker.counted_classes == {"auth", "timeout", "agent_error"}


def test_bad_breaker_parameters_are_named() -> None:
    registry = load_registry()
    with pytest.raises(ValueError, match=r"unknown breaker parameter.*threshold"):
        breaker_settings(registry.profile("canonical"), threshold=3)
    with pytest.raises(ValueError, match="failure_threshold must be at least 1"):
        breaker_settings(registry.profile("canonical"), failure_threshold=0)
    with pytest.raises(ValueError, match=r"unknown classes.*'teapot'"):
        BreakerSettings(counted_classes=frozenset({"teapot"}))
    with pytest.raises(SpecError, match=r"no breaker parameters.*area_parameters\.breaker"):
        breaker_settings(registry.profile("task-manager"))


def test_a_backend_claiming_the_breaker_without_open_breaker_is_refused() -> None:
    with pytest.raises(BackendLoadError, match="open_breaker"):
        check_backend(LifecycleOnlyBackend("breaker"), "half")


def test_the_harness_names_the_requirement_of_a_divergence() -> None:
    from jobconform.backends.loading import load_backend
    from jobconform.conformance.breaker.gallery import GALLERY
    from jobconform.conformance.harness import Divergence

    entry = next(e for e in GALLERY if e.name == "breaker_timeout_counted")
    registry = load_registry()
    harness = BreakerHarness(load_backend(entry.target), registry.profile("canonical"),
                             registry)
    harness.run(bc.SwitchBreaker(True))
    harness.run(bc.OptIn("a"))
    harness.run(bc.Call("a", "c"))
    with pytest.raises(Divergence, match="CB-003"):
        harness.run(bc.Report("a", "c", "failure", "timeout"))
    harness.close()


def test_memory_peers_share_one_breaker() -> None:
    runtime = MemoryBackend().open_breaker(FixedClock(EPOCH), SEED)
    peer = runtime.peer()
    runtime.set_global_switch(True)
    runtime.set_opt_in("a", True)
    for number in range(3):
        peer.record("a", f"c{number}", "failure", "auth")
    readout = runtime.read("a")
    assert readout is not None and readout.state == "open"


# -- the SQL breaker: shared, one probe under real threads and processes -------------------


@pytest.fixture
def engine(migrated_database_url: str) -> Iterator[Engine]:
    engine = create_store_engine(migrated_database_url)
    yield engine
    engine.dispose()


THREADS = 16


def test_concurrent_threads_admit_exactly_one_probe(migrated_database_url: str,
                                                    engine: Engine) -> None:
    cooled = trip(migrated_database_url, SqlBreakerStore, SEED)
    # Each caller is a worker of its own: its own store object and connection.
    runtimes = [engaged_runtime(SqlBreakerStore(engine), cooled, SEED) for _ in range(THREADS)]
    start = threading.Barrier(THREADS)
    answers: list[str] = []
    lock = threading.Lock()

    def caller(number: int) -> None:
        start.wait(60)
        answer = runtimes[number].admit(TARGET, f"c{number}")
        with lock:
            answers.append(answer)

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert Counter(answers) == {"probe": 1, "refused": THREADS - 1}


def test_the_state_survives_in_the_database_for_a_new_worker(migrated_database_url: str,
                                                             engine: Engine) -> None:
    cooled = trip(migrated_database_url, SqlBreakerStore, SEED)
    later = engaged_runtime(SqlBreakerStore(engine), cooled - timedelta(seconds=1), SEED)
    readout = later.read(TARGET)
    assert readout is not None and (readout.state, readout.open_until) == ("open", cooled)


def test_an_unreachable_sql_store_fails_open_and_logs(migrated_database_url: str, engine: Engine,
                                                      caplog: pytest.LogCaptureFixture) -> None:
    cooled = trip(migrated_database_url, SqlBreakerStore, SEED)
    runtime = engaged_runtime(SqlBreakerStore(engine), cooled - timedelta(seconds=1), SEED)
    runtime.set_store_available(False)
    with caplog.at_level("WARNING", logger="jobconform.breaker"):
        assert runtime.admit(TARGET, "c") == "admitted"
    assert runtime.read(TARGET) is None
    assert runtime.logged_outages() == 1
    assert "breaker store unavailable during admit" in caplog.text
    runtime.set_store_available(True)
    readout = runtime.read(TARGET)
    assert readout is not None and readout.state == "open"
    runtime.close()


class ReadTogetherStore(SqlBreakerStore):
    """A store whose callers all read the cooled breaker before any of them writes.

    The barrier spans every caller of every process, so the window a write that ignores the
    version loses is open in every race, not only when the processes happen to interleave.
    Only the read of a cooled, probe-less breaker waits: the trip's reads go straight on,
    and a caller that lost the swap and reads again finds the probe taken.
    """

    def __init__(self, engine: Engine, read_together: Barrier) -> None:
        super().__init__(engine)
        self._read_together = read_together

    def load(self, target: str) -> BreakerRow | None:
        row = super().load(target)
        if row is not None and row.open_until is not None and row.probe is None:
            self._read_together.wait(GUARD_SECONDS)
        return row


class BlindWriteStore(ReadTogetherStore):
    """A store whose writes ignore the version read: the race must catch it."""

    def swap(self, expected: BreakerRow | None, new: BreakerRow) -> bool:
        if expected is None:
            return super().swap(expected, new)
        with self._state() as connection:
            connection.execute(update(STATES).where(STATES.c.target == new.target).values(
                probe=new.probe, probe_until=new.probe_until, open_until=new.open_until,
                failures=new.failures, cooldown_seconds=new.cooldown_seconds,
                version=new.version))
        return True


def test_processes_on_postgresql_admit_exactly_one_probe(tmp_path: Path) -> None:
    with database("postgresql", tmp_path) as url:
        counted = run_probe_race(url, processes=4, callers=4)
    assert counted == {"probe": 1, "refused": 15}


@pytest.mark.parametrize(("store", "answers"), [
    (ReadTogetherStore, {"probe": 1, "refused": 15}),  # the version check: one probe still
    (BlindWriteStore, {"probe": 16}),  # every caller read the same version and wrote
])
def test_the_process_race_catches_a_write_that_ignores_the_version(
        tmp_path: Path, store: type[ReadTogetherStore], answers: dict[str, int]) -> None:
    read_together = SPAWN.Barrier(4 * 4)  # every caller of every process
    with database("postgresql", tmp_path) as url:
        counted = run_probe_race(url, partial(store, read_together=read_together),  # type: ignore[arg-type]
                                 processes=4, callers=4)
    assert counted == answers


def test_processes_on_every_database_admit_exactly_one_probe(migrated_database_url: str) -> None:
    answers = run_probe_race(migrated_database_url, processes=3, callers=2)
    assert answers == {"probe": 1, "refused": 5}


def test_the_harness_runs_on_sql_with_two_workers(migrated_database_url: str) -> None:
    from jobconform.backends.sql import SqlBackend

    registry = load_registry()
    harness = BreakerHarness(SqlBackend(migrated_database_url), registry.profile("canonical"),
                             registry)
    for command in [bc.SwitchBreaker(True), bc.OptIn("a"), bc.AddWork("a", "w"),
                    bc.Call("a", "c1", 1), bc.Report("a", "c1", "failure", "auth", 1),
                    bc.Call("a", "c2"), bc.Report("a", "c2", "failure", "auth"),
                    bc.Call("a", "c3", 1), bc.Report("a", "c3", "failure", "auth"),
                    bc.PassTime(30), bc.CallsAtOnce("a", ("p1", "p2", "p3", "p4"))]:
        harness.run(command)
    assert harness.model.failed_work == {"a": ["w"]}
    for command in [bc.StoreOutage(True), bc.AddWork("a", "v"), bc.StoreOutage(False),
                    bc.MissedHeartbeat("a", 1), bc.BackstopSweep(1)]:
        harness.run(command)
    assert harness.model.failed_work == {"a": ["w", "v"]}
    harness.close()


def test_store_breaker_runtime_retries_a_lost_race() -> None:
    """A swap that loses once is retried on a fresh read, not dropped."""
    from jobconform.backends.breaker.memory import InMemoryBreakerStore

    class LosesOnce(InMemoryBreakerStore):
        lost = False

        def swap(self, expected: BreakerRow | None, new: BreakerRow) -> bool:
            if not self.lost:
                self.lost = True
                return False
            return super().swap(expected, new)

    runtime = StoreBreakerRuntime(LosesOnce(), FixedClock(EPOCH), SEED)
    runtime.set_global_switch(True)
    runtime.set_opt_in("a", True)
    runtime.record("a", "c", "failure", "auth")
    readout = runtime.read("a")
    assert readout is not None and readout.failures == 1
