"""The governor area: the oracle's rules, its parameters, and the SQL governor's caps under
concurrent real threads on every database."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import datetime, timedelta

import pytest

from jobconform.backends.governor.runtime import InMemoryGovernorStore, StoreGovernorRuntime
from jobconform.backends.governor.sql import SqlGovernorStore
from jobconform.backends.sql.database import create_store_engine
from jobconform.conformance.breaker.race import FixedClock
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.governor.harness import GovernorHarness, governor_settings
from jobconform.conformance.harness import Divergence
from jobconform.reference.governor import commands as gc
from jobconform.reference.governor.oracle import (
    GovernorModel,
    GovernorSettings,
    redelivery_wait_ms,
)
from jobconform.spec import SpecError, load_registry

SMALL = GovernorSettings(target_limit=2, fleet_limit=3, pause_threshold=3)


def at(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def test_the_wait_is_decorrelated_jitter_with_a_floor_and_a_cap() -> None:
    seed = GovernorSettings()
    assert redelivery_wait_ms(seed, None, 0.0) == 1000
    assert redelivery_wait_ms(seed, None, 0.5) == 2000  # U(1000, 3000)
    assert redelivery_wait_ms(seed, 10_000, 0.5) == 15_500  # U(1000, 30000)
    assert redelivery_wait_ms(seed, 50_000, 0.9) == 60_000  # capped
    assert redelivery_wait_ms(seed, 1000, 0.0, retry_after_ms=5000) == 5000
    assert redelivery_wait_ms(seed, 1000, 0.0, retry_after_ms=500_000) == 60_000


def test_the_caps_slide_and_refusals_carry_the_wait_and_are_not_counted() -> None:
    model = GovernorModel(SMALL)
    assert model.offer("a", at(0)).accepted
    assert model.offer("a", at(10)).accepted
    refused = model.offer("a", at(20))
    assert (refused.accepted, refused.retry_after_seconds) == (False, 40)
    assert model.offer("b", at(20)).accepted
    assert model.offer("c", at(20)).retry_after_seconds == 40  # the fleet is full too
    assert model.offer("a", at(60)).accepted  # the first left the window at 60
    assert len(model.accepted) == 4


def test_the_pause_needs_distinct_targets_ignores_replays_and_expires() -> None:
    model = GovernorModel(SMALL)
    for number in range(5):
        model.record_failure("a", "auth", f"a{number}", at(0))
    model.record_failure("b", "auth", "a1", at(0))  # a replay under another target
    model.record_failure("b", "timeout", "b1", at(0))  # not a pausing class
    assert model.pause_at(at(0)) is None
    model.record_failure("b", "billing", "b2", at(0))
    model.record_failure("c", "auth", "c1", at(119))
    assert model.pause_at(at(0)) is None  # billing and auth are counted apart
    model.record_failure("b", "auth", "b3", at(119))
    assert model.pause_at(at(119)) == at(419)
    assert model.offer("z", at(200)).retry_after_seconds == 30
    assert model.pause_at(at(419)) is None


def test_governor_parameters_come_from_the_profile_and_bad_ones_are_named() -> None:
    registry = load_registry()
    assert governor_settings(registry.profile("canonical")) == GovernorSettings()
    with pytest.raises(SpecError, match=r"no governor parameters"):
        governor_settings(registry.profile("pybreaker"))
    with pytest.raises(ValueError, match=r"unknown governor parameter"):
        governor_settings(registry.profile("canonical"), limit=3)
    with pytest.raises(ValueError, match=r"target_limit must be at least 1"):
        GovernorSettings(target_limit=0)


def test_the_harness_names_a_pause_armed_by_one_target() -> None:
    from jobconform.backends.loading import load_backend

    registry = load_registry()
    profile = registry.profile("canonical")
    harness = GovernorHarness(
        load_backend("jobconform.conformance.governor.gallery:governor_one_target_arms"),
        profile, registry, governor_settings(profile, pause_threshold=2))
    harness.run(gc.RecordFailure("a", "auth", "r1"))
    with pytest.raises(Divergence, match="RG-006"):
        harness.run(gc.RecordFailure("a", "auth", "r2"))
    harness.close()


def test_a_restart_holds_its_first_re_send_sweep_back_by_its_own_draw() -> None:
    """RG-009: u * initial_jitter_max_seconds after the restart, per worker, redrawn."""
    model = GovernorModel(GovernorSettings())
    assert model.sweep_at == {}
    model.restart(0, 0.5, at(10))
    model.restart(1, 0.999, at(10))
    assert model.sweep_at == {0: at(40), 1: at(10 + 59.94)}
    model.restart(0, 0.0, at(100))
    assert model.sweep_at[0] == at(100) and model.sweep_at[1] == at(69.94)
    with pytest.raises(ValueError, match="initial_jitter_max_seconds must be positive"):
        GovernorSettings(initial_jitter_max_seconds=0)


def test_the_runtime_keeps_each_workers_sweep_apart() -> None:
    runtime = StoreGovernorRuntime(InMemoryGovernorStore(), FixedClock(at(5)), GovernorSettings())
    peer = runtime.peer()
    assert runtime.resend_sweep_at() is None
    runtime.restart(0.25)
    assert runtime.resend_sweep_at() == at(20) and peer.resend_sweep_at() is None


def test_the_harness_names_a_restart_without_jitter() -> None:
    from jobconform.backends.loading import load_backend

    registry = load_registry()
    harness = GovernorHarness(
        load_backend("jobconform.conformance.governor.gallery:governor_restart_burst"),
        registry.profile("canonical"), registry)
    harness.run(gc.Restart(0.0))  # a draw of 0: at the restart, as the broken one does
    with pytest.raises(Divergence) as caught:
        harness.run(gc.Restart(0.5, 1))
    assert caught.value.primary == "RG-009"
    harness.close()
    with pytest.raises(ValueError, match="a draw is in"):
        GovernorHarness(load_backend("memory"), registry.profile("canonical"),
                        registry).run(gc.Restart(1.0))


THREADS = 12


def test_concurrent_offers_never_overshoot_the_caps(migrated_database_url: str) -> None:
    engine = create_store_engine(migrated_database_url)
    store = SqlGovernorStore(engine)
    store.clear()
    settings = GovernorSettings(target_limit=3, fleet_limit=5)
    # Each caller is a worker of its own (its own store object and connection).
    governors = [StoreGovernorRuntime(SqlGovernorStore(engine), FixedClock(EPOCH), settings)
                 for _ in range(THREADS)]
    start = threading.Barrier(THREADS)
    answers: list[tuple[str, bool]] = []
    lock = threading.Lock()

    def caller(number: int) -> None:
        target = "a" if number % 2 else "b"
        start.wait(60)
        decision = governors[number].offer(target)
        with lock:
            answers.append((target, decision.accepted))

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    engine.dispose()
    accepted = Counter(target for target, ok in answers if ok)
    assert sum(accepted.values()) == 5
    assert max(accepted.values()) <= 3


def test_the_harness_runs_on_sql_with_two_governors(migrated_database_url: str) -> None:
    from jobconform.backends.sql import SqlBackend

    registry = load_registry()
    profile = registry.profile("canonical")
    harness = GovernorHarness(SqlBackend(migrated_database_url), profile, registry,
                              governor_settings(profile, target_limit=1, pause_threshold=2))
    for command in [gc.Offer("a"), gc.Offer("a", 1), gc.RecordFailure("a", "auth", "r1"),
                    gc.RecordFailure("b", "auth", "r2", 1), gc.Offer("c"), gc.Elapse(300),
                    gc.Offer("c", 1), gc.ReadPause(), gc.Restart(0.5), gc.Elapse(1),
                    gc.Restart(0.25, 1)]:
        harness.run(command)
    assert harness.workers[0].resend_sweep_at() == at(330)
    assert harness.workers[1].resend_sweep_at() == at(316)
    harness.close()


def test_a_sweeps_envelopes_each_wait_their_own_draw_after_the_one_before() -> None:
    """RG-012: one after another, oldest first, from the sweep's start; none before a
    restart."""
    model = GovernorModel(GovernorSettings(envelope_jitter_max_seconds=2))
    assert model.resend_times(0, [0.5]) is None
    model.restart(0, 0.5, at(10))
    assert model.resend_times(0, [0.5, 0.0, 0.25]) == (at(41), at(41), at(41.5))
    assert model.resend_times(0, []) == ()
    runtime = StoreGovernorRuntime(InMemoryGovernorStore(), FixedClock(at(10)),
                                   GovernorSettings(envelope_jitter_max_seconds=2))
    assert runtime.resend_times([0.5]) is None
    runtime.restart(0.5)
    assert runtime.resend_times([0.5, 0.0, 0.25]) == [at(41), at(41), at(41.5)]
    with pytest.raises(ValueError, match="envelope_jitter_max_seconds must be positive"):
        GovernorSettings(envelope_jitter_max_seconds=0)


def test_a_governor_whose_store_is_down_fails_open_and_changes_nothing() -> None:
    """RG-011 on the shipped runtime: accepted uncounted, nothing remembered, no pause."""
    settings = GovernorSettings(target_limit=1, pause_threshold=2)
    runtime = StoreGovernorRuntime(InMemoryGovernorStore(), FixedClock(at(0)), settings)
    runtime.record_failure("a", "auth", "r1")
    runtime.set_store_available(False)
    assert runtime.offer("a").accepted and runtime.offer("a").accepted
    runtime.record_failure("b", "auth", "r2")
    runtime.record_rate_limited("c", "r3")
    assert runtime.paused_until() is None
    runtime.set_store_available(True)
    assert runtime.offer("a").accepted and not runtime.offer("a").accepted
    assert runtime.paused_until() is None
    runtime.record_failure("b", "auth", "r2")
    assert runtime.paused_until() == at(300)
