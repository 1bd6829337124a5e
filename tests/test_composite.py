"""The composite area (spec/composite.yaml, CX-001..CX-006): the oracle's meeting points,
the kit's wiring of every shipped backend's own runtimes through the harness, the machine,
and the gallery's broken wirings each caught by the machine with the requirement they
break."""

from __future__ import annotations

from contextlib import closing
from datetime import timedelta

import pytest

from jobconform.backends.loading import load_backend
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.composite.gallery import GALLERY
from jobconform.conformance.composite.harness import CompositeHarness, composite_config
from jobconform.conformance.composite.machine import (
    LEASE_HOLD,
    MACHINE_PARAMETERS,
    run_composite_machine,
)
from jobconform.conformance.gallery import GalleryEntry
from jobconform.conformance.harness import Divergence
from jobconform.reference import admission as ad
from jobconform.reference.composite import commands as cc
from jobconform.reference.composite.oracle import REFUSED, CompositeModel
from jobconform.spec import load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")
SMALL = {"parallel_cap": 2, "failure_threshold": 2, "cooldown_seconds": 30,
         "pause_threshold": 2, "pause_ttl_seconds": 300, "backlog_max_age_seconds": 200}


def model() -> CompositeModel:
    oracle = CompositeModel(composite_config(CANONICAL, **SMALL), EPOCH)
    for owner in ("a", "b"):
        oracle.apply(cc.AddOwner(owner))
    return oracle


def states(oracle: CompositeModel) -> dict[str, str]:
    return {work: state for work, _, state in oracle.view().executions}


def test_a_loops_next_run_queues_behind_the_work_that_waited_for_the_slot() -> None:
    oracle = model()
    assert oracle.apply(cc.StartLoop("a", "L", 2)).answer == ad.RUNNING
    oracle.apply(cc.SubmitJob("a", "j1"))
    assert oracle.apply(cc.SubmitJob("a", "j2")).answer == ad.QUEUED
    assert oracle.apply(cc.FinishWork("L#1")).answer == [True, ad.QUEUED]
    assert states(oracle)["j2"] == ad.RUNNING


def test_a_reminder_fire_is_admitted_and_fired_even_when_it_waits() -> None:
    oracle = model()
    oracle.apply(cc.CreateReminder("a", "r1", 60))
    oracle.apply(cc.SubmitJob("a", "j1"))
    oracle.apply(cc.SubmitJob("a", "j2"))
    oracle.apply(cc.PassTime(60))
    assert states(oracle)["r1"] == ad.QUEUED
    assert dict(oracle.view().reminders)["r1"] == "fired"


def test_the_probe_is_refused_without_a_free_slot_and_stays_free() -> None:
    oracle = model()
    for job in ("j1", "j2"):
        oracle.apply(cc.SubmitJob("a", job))
        oracle.apply(cc.FinishWork(job, failed=True))
    oracle.apply(cc.StartLoop("a", "L", 1))
    oracle.apply(cc.StartLoop("a", "M", 1))
    oracle.apply(cc.PassTime(30))
    expected = oracle.apply(cc.SubmitJob("a", "p1"))
    assert (expected.answer, expected.requirements[0]) == (REFUSED, "CX-003")
    assert "p1" not in states(oracle)
    assert oracle.view().breakers[0] == ("a", "half_open", None)
    oracle.apply(cc.FinishWork("L#1"))
    assert oracle.apply(cc.SubmitJob("a", "p2")).answer == ad.RUNNING
    assert oracle.view().breakers[0] == ("a", "half_open", "p2")


def test_the_pause_holds_every_drain_but_not_the_expiry() -> None:
    oracle = model()
    for job in ("j1", "j2", "j3"):
        oracle.apply(cc.SubmitJob("a", job))
    oracle.apply(cc.RecordFailure("a", "auth", "x1"))
    oracle.apply(cc.RecordFailure("b", "auth", "x2"))
    assert oracle.apply(cc.FinishWork("j1")).requirements[0] == "CX-004"
    assert oracle.apply(cc.SubmitJob("a", "j4")).answer == ad.QUEUED
    oracle.apply(cc.PassTime(250))
    assert oracle.apply(cc.Maintain()).answer == 2
    assert states(oracle)["j3"] == ad.EXPIRED


def test_the_pause_holds_a_lapsed_lease_until_it_ends() -> None:
    oracle = model()
    for owner, job in (("a", "o1"), ("a", "o2"), ("b", "o3")):
        oracle.apply(cc.SubmitJob(owner, job))
    assert oracle.apply(cc.Restart()).requirements == ("CX-005",)
    oracle.apply(cc.PassTime(1140))
    oracle.apply(cc.RecordFailure("a", "auth", "x1"))
    oracle.apply(cc.RecordFailure("b", "auth", "x2"))
    assert oracle.apply(cc.PassTime(60)).requirements[0] == "CX-005"  # the leases lapse
    assert states(oracle) == {"o1": ad.RUNNING, "o2": ad.RUNNING, "o3": ad.RUNNING}
    assert oracle.held_leases == {"o1", "o2", "o3"}
    assert oracle.apply(cc.SubmitJob("a", "o4")).answer == ad.QUEUED  # no slot freed
    assert oracle.apply(cc.FinishWork("o3")).answer is True  # a late result still lands
    oracle.apply(cc.PassTime(240))  # the pause ends
    assert states(oracle) == {"o1": ad.LEASE_EXPIRED, "o2": ad.LEASE_EXPIRED,
                              "o3": ad.FINISHED, "o4": ad.RUNNING}


def test_a_lease_lapsing_after_the_pause_is_reclaimed_and_not_held() -> None:
    oracle = model()
    oracle.apply(cc.SubmitJob("a", "o1"))
    oracle.apply(cc.Restart())
    oracle.apply(cc.RecordFailure("a", "auth", "x1"))
    oracle.apply(cc.RecordFailure("b", "auth", "x2"))
    oracle.apply(cc.PassTime(1200))  # the pause ended long before the lease lapsed
    assert states(oracle) == {"o1": ad.LEASE_EXPIRED}
    assert not oracle.held_leases


def test_a_loop_run_the_admission_times_out_fails_its_loop() -> None:
    oracle = model()
    oracle.apply(cc.StartLoop("a", "L", 3))
    oracle.apply(cc.SubmitJob("a", "j1"))
    oracle.apply(cc.SubmitJob("a", "j2"))
    oracle.apply(cc.PassTime(600))
    oracle.apply(cc.FinishWork("j1"))
    expected = oracle.apply(cc.PassTime(300))
    assert "CX-006" in expected.requirements
    # The owner's 900 s stop L#1 and free its slot (AD-015); the loop's run fails with
    # TIMEOUT at that instant and, under abort, the loop fails: no next run is admitted.
    assert states(oracle) == {"L#1": ad.TIMED_OUT, "j1": ad.FINISHED, "j2": ad.RUNNING}
    assert oracle.view().loops == (("L", "failed", 1),)
    assert oracle.loops["L"].runs[0].error == "TIMEOUT"
    assert oracle.loops["L"].runs[0].finished_at == EPOCH + timedelta(seconds=900)


def test_a_loop_run_that_expires_in_the_backlog_fails_its_loop() -> None:
    oracle = model()
    oracle.apply(cc.SubmitJob("a", "j1"))
    oracle.apply(cc.SubmitJob("a", "j2"))
    assert oracle.apply(cc.StartLoop("a", "L", 3)).answer == ad.QUEUED
    oracle.apply(cc.PassTime(201))
    expected = oracle.apply(cc.Maintain())
    assert "CX-006" in expected.requirements
    # L#1 waited past backlog_max_age_seconds (200) and maintenance expires it (AD-008);
    # the loop's run fails with TIMEOUT at that instant and, under abort, the loop fails.
    assert states(oracle) == {"j1": ad.RUNNING, "j2": ad.RUNNING, "L#1": ad.EXPIRED}
    assert oracle.view().loops == (("L", "failed", 1),)
    assert oracle.loops["L"].runs[0].error == "TIMEOUT"
    assert oracle.loops["L"].runs[0].finished_at == EPOCH + timedelta(seconds=201)


def test_a_loop_run_whose_lease_is_reclaimed_fails_its_loop() -> None:
    oracle = model()
    oracle.apply(cc.StartLoop("a", "L", 3))
    oracle.apply(cc.Restart())
    expected = oracle.apply(cc.PassTime(1260))
    assert "CX-006" in expected.requirements
    # The orphan's lease lapses 900 + 300 s after it started and its slot is reclaimed
    # (AD-017); the loop's run fails with TIMEOUT at the lease's end.
    assert states(oracle) == {"L#1": ad.LEASE_EXPIRED}
    assert oracle.view().loops == (("L", "failed", 1),)
    assert oracle.loops["L"].runs[0].error == "TIMEOUT"
    assert oracle.loops["L"].runs[0].finished_at == EPOCH + timedelta(seconds=1200)


def test_a_name_used_twice_is_a_malformed_check() -> None:
    oracle = model()
    oracle.apply(cc.StartLoop("a", "L", 1))
    with pytest.raises(ValueError, match="already used"):
        oracle.apply(cc.SubmitJob("a", "L"))


def test_an_unknown_override_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no parameter"):
        composite_config(CANONICAL, slots=2)


@pytest.mark.parametrize("name", ["memory", "sql", "threaded", "threaded+sql"])
def test_every_shipped_backend_agrees_with_the_oracle(name: str) -> None:
    with closing(CompositeHarness(load_backend(name), CANONICAL, REGISTRY,
                                  composite_config(CANONICAL, **SMALL))) as harness:
        for owner in ("a", "b"):
            harness.run(cc.AddOwner(owner))
        for command in (cc.StartLoop("a", "L", 2), cc.CreateReminder("a", "r1", 60),
                        cc.SubmitJob("a", "j1"), cc.PassTime(60), cc.FinishWork("L#1"),
                        cc.RecordFailure("a", "auth", "x1"),
                        cc.RecordFailure("b", "billing", "x2"), cc.FinishWork("j1"),
                        cc.Maintain(), cc.PassTime(300), cc.Maintain()):
            harness.run(command)
        assert harness.clock.now() == EPOCH + timedelta(seconds=360)
        assert {work: state for work, _, state in harness.runtime.snapshot().executions} == {
            "L#1": ad.FINISHED, "r1": ad.RUNNING, "j1": ad.FINISHED, "L#2": ad.RUNNING}


@pytest.mark.parametrize("name", ["memory", "sql", "threaded", "threaded+sql"])
def test_every_shipped_backend_holds_a_lapsed_lease_through_the_pause(name: str) -> None:
    with closing(CompositeHarness(load_backend(name), CANONICAL, REGISTRY,
                                  composite_config(CANONICAL, **MACHINE_PARAMETERS))) as harness:
        for command in LEASE_HOLD:
            harness.run(command)
        assert {work: state for work, _, state in harness.runtime.snapshot().executions} == {
            "o1": ad.LEASE_EXPIRED, "o2": ad.LEASE_EXPIRED, "o3": ad.FINISHED,
            "o4": ad.RUNNING}


def test_a_runtime_without_restart_fails_cx_005() -> None:
    harness = CompositeHarness(load_backend("memory"), CANONICAL, REGISTRY,
                               composite_config(CANONICAL, **SMALL))
    runtime = harness.runtime

    class NoRestart:
        def __getattr__(self, name: str) -> object:
            if name == "restart":
                raise AttributeError(name)
            return getattr(runtime, name)

    harness.runtime = NoRestart()  # type: ignore[assignment]
    try:
        with pytest.raises(Divergence) as caught:
            harness.run(cc.Restart())
        assert caught.value.primary == "CX-005"
    finally:
        runtime.close()


def test_the_machine_passes_on_memory_and_reaches_every_requirement() -> None:
    # CX-006 needs a loop run past the owners' 900 s, which seed 0 draws by 50 examples.
    run = run_composite_machine(load_backend("memory"), CANONICAL, REGISTRY, seed=0,
                                examples=100)
    assert run.divergence is None
    assert run.exercised >= {"CX-001", "CX-002", "CX-003", "CX-004", "CX-005",
                            "CX-006"}


@pytest.mark.parametrize("entry", GALLERY, ids=lambda entry: entry.name)
def test_the_machine_names_each_broken_wiring_by_its_requirement(entry: GalleryEntry) -> None:
    run = run_composite_machine(load_backend(entry.target), CANONICAL, REGISTRY, seed=0,
                                examples=100)
    assert isinstance(run.divergence, Divergence)
    assert run.divergence.primary == entry.catches


LOOP_TIMEOUT_CHECK = (
    cc.AddOwner("a"), cc.StartLoop("a", "L", 3), cc.SubmitJob("a", "j1"),
    cc.SubmitJob("a", "j2"), cc.PassTime(600), cc.FinishWork("j1"), cc.PassTime(300),
)


@pytest.mark.parametrize("name", ["memory", "sql", "threaded", "threaded+sql"])
def test_every_shipped_backend_fails_a_loop_run_the_admission_times_out(name: str) -> None:
    with closing(CompositeHarness(load_backend(name), CANONICAL, REGISTRY,
                                  composite_config(CANONICAL, **SMALL))) as harness:
        for command in LOOP_TIMEOUT_CHECK:
            harness.run(command)
        assert harness.runtime.snapshot().loops == (("L", "failed", 1),)


LOOP_EXPIRY_CHECK = (
    cc.AddOwner("a"), cc.SubmitJob("a", "j1"), cc.SubmitJob("a", "j2"),
    cc.StartLoop("a", "L", 3), cc.PassTime(201), cc.Maintain(),
)
LOOP_LEASE_CHECK = (cc.AddOwner("a"), cc.StartLoop("a", "L", 3), cc.Restart(), cc.PassTime(1260))


@pytest.mark.parametrize("name", ["memory", "sql", "threaded", "threaded+sql"])
@pytest.mark.parametrize("check", [LOOP_EXPIRY_CHECK, LOOP_LEASE_CHECK],
                         ids=["expired", "lease_expired"])
def test_every_shipped_backend_fails_a_loop_run_the_admission_expires_or_reclaims(
        name: str, check: tuple[cc.CompositeCommand, ...]) -> None:
    with closing(CompositeHarness(load_backend(name), CANONICAL, REGISTRY,
                                  composite_config(CANONICAL, **SMALL))) as harness:
        for command in check:
            harness.run(command)
        assert harness.runtime.snapshot().loops == (("L", "failed", 1),)


@pytest.mark.parametrize("check", [LOOP_TIMEOUT_CHECK, LOOP_EXPIRY_CHECK, LOOP_LEASE_CHECK],
                         ids=["timed_out", "expired", "lease_expired"])
def test_a_wiring_that_never_tells_the_loop_diverges_on_cx_006(
        check: tuple[cc.CompositeCommand, ...]) -> None:
    entry = next(entry for entry in GALLERY
                 if entry.name == "composite_loop_not_told_of_timeout")
    with closing(CompositeHarness(load_backend(entry.target), CANONICAL, REGISTRY,
                                  composite_config(CANONICAL, **SMALL))) as harness:
        with pytest.raises(Divergence) as raised:
            for command in check:
                harness.run(command)
        assert raised.value.primary == "CX-006"
