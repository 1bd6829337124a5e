"""The reminders area: the oracle, the parameters, the stores on SQLite, PostgreSQL and
MariaDB (durable across a reopen on a new engine), the threaded scheduler's real threads,
and the clear errors for bad input."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import closing
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sql_databases import DATABASES, database

from jobconform.backends.loading import BackendLoadError, check_backend, load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.reminders.protocol import (
    Delivery,
    ReminderConflict,
    ReminderNotFound,
    ReminderRejected,
)
from jobconform.backends.reminders.runtime import StepReminderRuntime
from jobconform.backends.reminders.sql import SqlReminderStore
from jobconform.backends.reminders.store import (
    FIRING,
    PENDING,
    InMemoryReminderStore,
    StoredReminder,
)
from jobconform.backends.reminders.threaded import ThreadedReminderRuntime
from jobconform.backends.sql import SqlBackend, create_store_engine
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import AdapterError, Divergence
from jobconform.conformance.reminders.harness import HarnessTarget, ReminderHarness, config_for
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.reminders import commands as rc
from jobconform.reference.reminders.oracle import (
    CREATED,
    REPLAYED,
    DeliveryOutcome,
    ReminderConfig,
    ReminderOracle,
    ReminderStatus,
    creation_problem,
    derived_key,
    rejected,
    schedule_as_given,
)
from jobconform.spec import SpecError, load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")


def at(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


# -- the oracle ------------------------------------------------------------------------------


def test_profile_defaults_are_the_seeds() -> None:
    config = config_for(CANONICAL)
    assert config == ReminderConfig(60, 30 * 86_400, 4000, 25, 100, 3, 60, 90)


@pytest.mark.parametrize(("values", "named"), [
    ({"max_attempts": 0}, "max_attempts"),
    ({"max_pending": 2.5}, "max_pending"),
    ({"retry_delay_seconds": float("inf")}, "retry_delay_seconds"),
    ({"min_delay_seconds": 0}, "min_delay_seconds"),
    ({"min_delay_seconds": 700, "max_delay_seconds": 600}, "exceeds"),
    ({"retention_days": 0.5}, "retention_days"),  # would delete what the daily cap counts
    ({"retention_days": -1}, "retention_days"),
    ({"retention_days": float("inf")}, "retention_days"),
])
def test_bad_parameters_are_refused_by_name(values: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        config_for(CANONICAL, **values)


def test_an_unknown_parameter_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"max_atempts.*known: min_delay_seconds"):
        config_for(CANONICAL, max_atempts=3)


def test_a_profile_without_the_area_says_where_to_add_it() -> None:
    with pytest.raises(SpecError, match=r"area_parameters\.reminders"):
        config_for(REGISTRY.profile("task-manager"))


@pytest.mark.parametrize(("message", "fire_at", "delay", "code"), [
    ("x", None, None, "schedule"),
    ("x", at(120), 120.0, "schedule"),
    ("x", datetime(2026, 1, 1, 0, 5), None, "schedule"),  # naive: not an instant
    ("x", None, float("nan"), "schedule"),
    (" ", at(1), None, "message_empty"),  # the message is checked before the delay
    ("m" * 4001, None, 1.0, "message_too_long"),
    ("x", None, 59.999, "delay_too_short"),
    ("x", at(-1), None, "delay_too_short"),
    ("x", None, 30 * 86_400 + 0.001, "delay_too_long"),
    ("x", None, 60.0, None),
    ("x", at(30 * 86_400), None, None),
    ("m" * 4000, None, 60.0, None),
])
def test_creation_rules_in_order(message: str, fire_at: datetime | None,
                                 delay: float | None, code: str | None) -> None:
    assert creation_problem(ReminderConfig(), message, fire_at, delay, EPOCH) == code


@pytest.mark.parametrize("backend", ["memory", "sql", "threaded"])
def test_a_fire_time_at_another_offset_is_shown_in_utc(backend: str) -> None:
    harness = ReminderHarness(load_backend(backend), CANONICAL, REGISTRY)
    plus_two = at(3600).astimezone(timezone(timedelta(hours=2)))
    try:
        assert harness.run(rc.CreateReminder("a", "x", fire_at=plus_two)) == CREATED
        view = harness.runtime.get(harness.ids["a"])
        assert view is not None and view.fire_at == at(3600)
        assert view.fire_at.utcoffset() == timedelta(0)
    finally:
        harness.close()


def test_oracle_walks_all_five_states() -> None:
    oracle = ReminderOracle(ReminderConfig(max_attempts=2))
    for alias in ("lands", "fails", "unknown", "cancelled"):
        assert oracle.create(alias, alias, None, 60.0, at(0)) == CREATED
    assert oracle.cancel("cancelled") == "cancelled"
    assert oracle.cancel("cancelled") == "already_cancelled"
    oracle.settle(at(60))
    assert oracle.list(ReminderStatus.FIRING) == ["lands", "fails", "unknown"]
    assert oracle.cancel("lands") == "conflict:firing"
    oracle.decide("lands", DeliveryOutcome.LANDS)
    oracle.decide("fails", DeliveryOutcome.FAILS)
    oracle.decide("unknown", DeliveryOutcome.UNKNOWN)
    oracle.decide("unknown", DeliveryOutcome.FAILS)  # only the first decision counts
    oracle.settle(at(61))
    assert oracle.reminders["lands"].fired_at == at(61)
    assert oracle.reminders["unknown"].status is ReminderStatus.FIRED
    assert oracle.reminders["fails"].due_at == at(121)
    oracle.settle(at(121))
    oracle.decide("fails", DeliveryOutcome.FAILS)
    oracle.settle(at(122))
    assert oracle.reminders["fails"].status is ReminderStatus.FAILED
    assert oracle.dispatches == {"lands": 1, "fails": 2, "unknown": 1, "cancelled": 0}
    assert oracle.cancel("lands") == "conflict:fired"
    assert oracle.cancel("fails") == "conflict:failed"
    assert oracle.cancel("nobody") == "not_found"


def test_oracle_caps_pending_and_daily_creations() -> None:
    oracle = ReminderOracle(ReminderConfig(max_pending=1, max_per_day=2))
    assert oracle.create("a", "x", None, 60.0, at(0)) == CREATED
    assert oracle.create("b", "y", None, 60.0, at(0)) == rejected("too_many_pending")
    oracle.cancel("a")
    assert oracle.create("c", "x", None, 60.0, at(0)) == CREATED
    oracle.cancel("c")
    assert oracle.create("d", "x", None, 60.0, at(0)) == rejected("daily_limit")
    assert oracle.create("e", "x", None, 60.0, at(86_400)) == CREATED


def test_oracle_answers_a_live_keyed_reminder_before_any_limit() -> None:
    oracle = ReminderOracle(ReminderConfig(max_pending=1))
    assert oracle.create("a", "x", None, 60.0, at(0), "k1") == CREATED
    assert oracle.create("b", "other text", None, 600.0, at(0), "k1") == f"{REPLAYED}:a"
    assert oracle.create("c", "x", None, 60.0, at(0), "k2") == rejected("too_many_pending")
    assert oracle.create("d", "x", None, 60.0, at(0)) == rejected("too_many_pending")
    assert oracle.list() == ["a"]
    oracle.settle(at(60))  # firing: still live
    assert oracle.create("e", "x", None, 60.0, at(60), "k1") == f"{REPLAYED}:a"
    oracle.decide("a", DeliveryOutcome.LANDS)
    oracle.settle(at(60))  # fired: final, no longer answers
    assert oracle.create("f", "x", None, 60.0, at(60), "k1") == CREATED


def test_oracle_keys_answer_for_less_than_24_hours() -> None:
    oracle = ReminderOracle(ReminderConfig())
    oracle.create("a", "x", None, 172_800.0, at(0), "k1")
    assert oracle.keyed("k1", at(86_399.999999)) == "a"
    assert oracle.keyed("k1", at(86_400)) is None
    assert oracle.keyed(None, at(0)) is None
    oracle.cancel("a")
    assert oracle.keyed("k1", at(1)) is None


def test_oracle_derives_a_key_over_the_schedule_as_given() -> None:
    oracle = ReminderOracle(ReminderConfig(max_pending=2))
    assert oracle.create("a", "x", None, 3600.0, at(0)) == CREATED
    # A minute later the same delay resolves to another instant, and still answers.
    assert oracle.create("retry", "x", None, 3600, at(60)) == f"{REPLAYED}:a"
    # The same instant as a fire time, or at another offset, is another schedule.
    assert oracle.create("at", "x", at(3600), None, at(60)) == CREATED
    plus_two = at(3600).astimezone(timezone(timedelta(hours=2)))
    assert oracle.create("at+2", "x", plus_two, None, at(60)) == rejected("too_many_pending")
    assert oracle.create("at-retry", "x", at(3600), None, at(60)) == f"{REPLAYED}:at"
    assert oracle.create("other", "y", None, 3600.0, at(60)) == rejected("too_many_pending")
    oracle.cancel("a")
    assert oracle.create("again", "x", None, 3600.0, at(60)) == CREATED
    assert oracle.derived(derived_key("x", None, 3600.0), at(86_459.999)) == "again"
    assert oracle.derived(derived_key("x", None, 3600.0), at(86_460)) is None
    assert oracle.derived(None, at(60)) is None


def test_given_and_derived_keys_never_answer_each_other() -> None:
    oracle = ReminderOracle(ReminderConfig())
    assert oracle.create("keyed", "x", None, 600.0, at(0), "k1") == CREATED
    assert oracle.create("plain", "x", None, 600.0, at(0)) == CREATED
    assert oracle.create("plain-retry", "x", None, 600.0, at(0)) == f"{REPLAYED}:plain"
    # A key given whose text is the derived one still finds only keyed reminders.
    assert oracle.create("same-text", "x", None, 600.0, at(0),
                         derived_key("x", None, 600.0)) == CREATED


def test_a_derived_key_is_the_schedule_as_written() -> None:
    assert schedule_as_given(None, 60) == schedule_as_given(None, 60.0) == "delay_seconds=60.0"
    assert schedule_as_given(at(0), None) == "fire_at=2026-01-01T00:00:00+00:00"
    assert derived_key("x", at(0), None) != derived_key(
        "x", at(0).astimezone(timezone(timedelta(hours=-5))), None)
    assert derived_key("x", None, 60.0) != derived_key("y", None, 60.0)
    assert derived_key("x", at(0), 60.0) is None and derived_key("x", None, None) is None
    assert len(derived_key("m" * 4000, None, 60.0) or "") == 64  # the SQL column's width


def test_oracle_restart_reconciles_firing_as_fired() -> None:
    oracle = ReminderOracle(ReminderConfig())
    oracle.create("a", "x", None, 60.0, at(0))
    oracle.settle(at(60))
    oracle.restart(at(90))
    oracle.decide("a", DeliveryOutcome.FAILS)  # the lost dispatch cannot be decided any more
    oracle.settle(at(90))
    assert oracle.reminders["a"].status is ReminderStatus.FIRED
    assert oracle.reminders["a"].fired_at == at(90)
    assert oracle.dispatches["a"] == 1


def test_oracle_hold_keeps_reminders_pending_until_autonomy_is_back() -> None:
    oracle = ReminderOracle(ReminderConfig())
    oracle.create("a", "x", None, 60.0, at(0))
    oracle.set_autonomy(False)
    oracle.settle(at(600))
    assert oracle.reminders["a"].status is ReminderStatus.PENDING
    assert oracle.dispatches["a"] == 0
    oracle.set_autonomy(True)
    oracle.settle(at(600))
    assert oracle.reminders["a"].status is ReminderStatus.FIRING


def test_oracle_sweep_deletes_only_old_final_reminders() -> None:
    oracle = ReminderOracle(ReminderConfig(retention_days=1))
    for alias in ("fired", "pending", "cancelled"):
        oracle.create(alias, alias, None, 60.0 if alias == "fired" else 600.0, at(0))
    oracle.cancel("cancelled")
    oracle.settle(at(60))
    oracle.decide("fired", DeliveryOutcome.LANDS)
    oracle.set_autonomy(False)
    oracle.settle(at(60))
    assert oracle.sweep(at(86_400)) == 0  # created exactly a day ago: kept
    assert oracle.sweep(at(86_401)) == 2
    assert oracle.list() == ["pending"]
    assert oracle.dispatches["fired"] == 1  # the count of a deleted reminder is kept


# -- runtimes: clear errors ---------------------------------------------------------------------


def step_runtime(config: ReminderConfig | None = None) -> tuple[StepReminderRuntime,
                                                                 VirtualClock, HarnessTarget]:
    clock, target = VirtualClock(), HarnessTarget()
    runtime = MemoryBackend().open_reminders(clock, config or ReminderConfig(), target)
    return runtime, clock, target


def test_a_rejection_says_what_was_wrong() -> None:
    runtime, _, _ = step_runtime()
    with pytest.raises(ReminderRejected, match=r"delay_too_short: .*less than 60 seconds") as e:
        runtime.create("x", delay_seconds=5)
    assert e.value.code == "delay_too_short"
    with pytest.raises(ReminderRejected, match="exactly one of fire_at"):
        runtime.create("x")
    with pytest.raises(ReminderNotFound):
        runtime.cancel("nobody")
    with pytest.raises(ValueError, match="unknown reminder status 'done'"):
        runtime.list_reminders("done")


def test_cancel_of_a_firing_reminder_is_a_conflict_naming_its_state() -> None:
    runtime, clock, _ = step_runtime()
    reminder_id = runtime.create("x", delay_seconds=60)
    clock.advance(60)
    runtime.settle()
    with pytest.raises(ReminderConflict, match="is firing; only a pending") as e:
        runtime.cancel(reminder_id)
    assert e.value.status == FIRING


def test_a_backend_claiming_reminders_without_an_opener_is_refused() -> None:
    class Claims:
        name, profile = "claims", "canonical"
        capabilities = frozenset({"lifecycle", "reminders"})

        def open(self, settings: object, clock: object) -> object:
            return object()

    with pytest.raises(BackendLoadError, match=r"claims the reminders area but has no"
                                               r" method open_reminders"):
        check_backend(Claims(), "claims")


def test_a_raising_runtime_is_an_adapter_error() -> None:
    class Raising(MemoryBackend):
        def open_reminders(self, clock: Any, config: Any, target: Any) -> StepReminderRuntime:
            runtime = super().open_reminders(clock, config, target)
            runtime.settle = lambda: 1 / 0  # type: ignore[method-assign]
            return runtime

    harness = ReminderHarness(Raising(), CANONICAL)
    with pytest.raises(AdapterError, match=r"ZeroDivisionError.*during settle"):
        harness.run(AdvanceTime(1))


def test_divergence_names_the_requirement() -> None:
    class Early(StepReminderRuntime):
        def _fire_due(self, now: datetime) -> bool:
            return super()._fire_due(now + timedelta(seconds=1))

    class Backend(MemoryBackend):
        def open_reminders(self, clock: Any, config: Any, target: Any) -> StepReminderRuntime:
            return Early(InMemoryReminderStore(), clock, config, target)

    harness = ReminderHarness(Backend(), CANONICAL, REGISTRY)
    harness.run(rc.CreateReminder("a", "x", delay_seconds=61))
    with pytest.raises(Divergence) as caught:
        harness.run(AdvanceTime(60))
    assert "RM-007" in caught.value.requirements
    assert "reminder 'a' status" in str(caught.value)


def test_a_key_answering_a_cancelled_reminder_is_caught_as_rm_017() -> None:
    from jobconform.conformance.reminders.gallery import FinalReminderKeyReplayedRuntime

    class Backend(MemoryBackend):
        def open_reminders(self, clock: Any, config: Any, target: Any) -> StepReminderRuntime:
            return FinalReminderKeyReplayedRuntime(InMemoryReminderStore(), clock, config,
                                                   target)

    harness = ReminderHarness(Backend(), CANONICAL, REGISTRY)
    harness.run(rc.CreateReminder("a", "x", delay_seconds=60, idempotency_key="k1"))
    harness.run(rc.CancelReminder("a"))
    with pytest.raises(Divergence) as caught:
        harness.run(rc.CreateReminder("b", "x", delay_seconds=60, idempotency_key="k1"))
    assert caught.value.requirements[0] == "RM-017"
    harness.close()


def test_a_key_derived_over_the_instant_is_caught_as_rm_018() -> None:
    from jobconform.conformance.reminders.gallery import DerivedKeyOverInstantRuntime

    class Backend(MemoryBackend):
        def open_reminders(self, clock: Any, config: Any, target: Any) -> StepReminderRuntime:
            return DerivedKeyOverInstantRuntime(InMemoryReminderStore(), clock, config, target)

    harness = ReminderHarness(Backend(), CANONICAL, REGISTRY)
    harness.run(rc.CreateReminder("a", "x", delay_seconds=600))
    harness.run(AdvanceTime(60))
    with pytest.raises(Divergence) as caught:
        harness.run(rc.CreateReminder("retry", "x", delay_seconds=600))
    assert caught.value.requirements[0] == "RM-018"
    assert caught.value.primary == "RM-018"
    harness.close()


def test_a_runtime_without_keys_still_takes_keyless_creations() -> None:
    """The key is passed only when a check gives one: a runtime written before RM-017
    (create without idempotency_key) is checked on everything else as before."""

    class Keyless(StepReminderRuntime):
        def create(self, message: str, fire_at: datetime | None = None,  # type: ignore[override]
                   delay_seconds: float | None = None) -> str:
            return super().create(message, fire_at, delay_seconds)

    class Backend(MemoryBackend):
        def open_reminders(self, clock: Any, config: Any, target: Any) -> StepReminderRuntime:
            return Keyless(InMemoryReminderStore(), clock, config, target)

    harness = ReminderHarness(Backend(), CANONICAL, REGISTRY)
    assert harness.run(rc.CreateReminder("a", "x", delay_seconds=60)) == CREATED
    with pytest.raises(AdapterError, match="idempotency_key"):
        harness.run(rc.CreateReminder("b", "x", delay_seconds=60, idempotency_key="k"))
    harness.close()


def test_a_reused_alias_is_a_malformed_command() -> None:
    harness = ReminderHarness(MemoryBackend(), CANONICAL)
    harness.run(rc.CreateReminder("a", "x", delay_seconds=60))
    with pytest.raises(ValueError, match="alias 'a' is already used"):
        harness.run(rc.CreateReminder("a", "x", delay_seconds=60))
    with pytest.raises(ValueError, match="finite amount"):
        harness.run(rc.RestartReminders(-1))
    with pytest.raises(ValueError, match="1 to 255 characters"):
        harness.run(rc.CreateReminder("b", "x", delay_seconds=60, idempotency_key=""))


# -- SQL: SQLite, PostgreSQL, MariaDB -----------------------------------------------------------


@pytest.fixture(params=DATABASES)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database(request.param, tmp_path) as database_url:
        yield database_url


def test_sql_reminders_survive_a_new_engine(url: str) -> None:
    """A restarted process opens the database afresh: everything is there, as it was."""
    first = SqlReminderStore(create_store_engine(url), owns_engine=True)
    reminder = StoredReminder("r-1", "ü " * 10, PENDING, at(0), at(60.000001), at(60.000001))
    first.add(reminder)
    first.add(StoredReminder("r-2", "x", PENDING, at(0), at(90), at(90)))
    assert first.transition("r-2", FIRING, status="fired") is None  # not in that state
    assert first.transition("r-2", PENDING, status=FIRING, due_at=None, attempts=1) is not None
    first.close()
    with closing(SqlReminderStore(create_store_engine(url), owns_engine=True)) as second:
        assert second.get("r-1") == reminder
        assert [r.reminder_id for r in second.list()] == ["r-1", "r-2"]
        assert second.list(FIRING)[0].attempts == 1
        assert second.next_due() == at(60.000001)
        assert [r.reminder_id for r in second.due(at(60.000001))] == ["r-1"]
        assert second.count_created_after(at(-1)) == 2
        assert second.count_created_after(at(0)) == 0
        with pytest.raises(ValueError, match="a transition changes only"):
            second.transition("r-1", PENDING, colour="red")
        # RM-017: the creation's key is kept, and found while the reminder is live.
        second.add(StoredReminder("r-3", "x", PENDING, at(10), at(90), at(90),
                                  idempotency_key="k1"))
        found = second.live_with_key("k1", at(0))
        assert found is not None and found.reminder_id == "r-3"
        assert second.live_with_key("k1", at(10)) is None  # created at, not after
        assert second.live_with_key("k2", at(0)) is None
        second.transition("r-3", PENDING, status="cancelled", due_at=None)
        assert second.live_with_key("k1", at(0)) is None
        # RM-018: a derived key has a column of its own; the two kinds never meet.
        digest = "d" * 64
        second.add(StoredReminder("r-4", "x", PENDING, at(10), at(90), at(90),
                                  derived_key=digest))
        second.add(StoredReminder("r-5", "x", PENDING, at(10), at(90), at(90),
                                  idempotency_key=digest))
        found = second.live_with_key(digest, at(0), derived=True)
        assert found is not None and found.reminder_id == "r-4" and found.derived_key == digest
        found = second.live_with_key(digest, at(0))
        assert found is not None and found.reminder_id == "r-5"


def test_sql_store_holds_and_sweeps(url: str) -> None:
    store = SqlReminderStore(create_store_engine(url), owns_engine=True)
    try:
        store.add(StoredReminder("old-fired", "x", "fired", at(0), at(60), None, 1, at(60)))
        store.add(StoredReminder("old-pending", "x", PENDING, at(0), at(90), at(90)))
        store.add(StoredReminder("new-cancelled", "x", "cancelled", at(10), at(90), None))
        store.set_autonomy(False)
        assert store.due(at(1000)) == [] and store.next_due() is None
        reopened = store.reopen()  # the switch is carried over, as the agent's record is
        store = reopened
        assert store.due(at(1000)) == []
        store.set_autonomy(True)
        assert [r.reminder_id for r in store.due(at(1000))] == ["old-pending"]
        assert store.delete_final_before(at(10)) == 1
        assert [r.reminder_id for r in store.list()] == ["old-pending", "new-cancelled"]
    finally:
        store.close()  # the reopened one


@pytest.mark.parametrize("runtime_kind", ["step", "threaded"])
def test_sql_backends_agree_with_the_oracle_across_restarts(url: str, runtime_kind: str) -> None:
    backend = SqlBackend(url)
    if runtime_kind == "threaded":
        backend = load_backend("threaded+sql")
        backend._sql = SqlBackend(url)  # type: ignore[attr-defined]
    with closing(ReminderHarness(backend, CANONICAL, REGISTRY,
                                 overrides={"max_pending": 2})) as harness:
        harness.run_all([
            rc.CreateReminder("a", "x", delay_seconds=60),
            rc.CreateReminder("b", "y", fire_at=at(90)),
            rc.CreateReminder("c", "z", delay_seconds=60),
            AdvanceTime(60),
            rc.DeliverReminder("a", DeliveryOutcome.FAILS),
            rc.RestartReminders(30),
            rc.DeliverReminder("b", DeliveryOutcome.UNKNOWN),
            rc.RestartReminders(),
            AdvanceTime(30),
            rc.DeliverReminder("a", DeliveryOutcome.LANDS),
            rc.CancelReminder("a"),
            rc.ListReminders(None),
        ])
        assert harness.last_answer == ["a", "b"]
        # RM-017 across a restart: the key is in the store.
        harness.run_all([
            rc.CreateReminder("k", "x", delay_seconds=600, idempotency_key="key-1"),
            rc.RestartReminders(),
            rc.CreateReminder("k-retry", "x", delay_seconds=600, idempotency_key="key-1"),
        ])
        assert harness.last_answer == f"{REPLAYED}:k"
        # RM-018 across a restart: the derived key is in the store too, and a delay's
        # retry later still answers.
        harness.run_all([
            rc.CreateReminder("p", "plain", delay_seconds=600),
            rc.RestartReminders(),
            AdvanceTime(30),
            rc.CreateReminder("p-retry", "plain", delay_seconds=600),
        ])
        assert harness.last_answer == f"{REPLAYED}:p"
        a, b = harness.oracle.reminders["a"], harness.oracle.reminders["b"]
        assert (a.status, a.attempts, a.fired_at) == (ReminderStatus.FIRED, 2, at(120))
        assert (b.status, b.attempts, b.fired_at) == (ReminderStatus.FIRED, 1, at(90))


# -- threaded: a real scheduler thread on the virtual clock --------------------------------------


class RecordingTarget(HarnessTarget):
    def __init__(self) -> None:
        super().__init__()
        self.threads: list[str] = []

    def dispatch(self, reminder_id: str, message: str,
                 triggered_by: str | None = None) -> Delivery:
        self.threads.append(threading.current_thread().name)
        return super().dispatch(reminder_id, message, triggered_by)


def test_the_scheduler_thread_fires_when_the_clock_reaches_the_due_time() -> None:
    clock, target = VirtualClock(), RecordingTarget()
    with closing(ThreadedReminderRuntime(InMemoryReminderStore(), clock, ReminderConfig(),
                                         target)) as runtime:
        reminder_id = runtime.create("x", delay_seconds=60)
        clock.advance(59.999)
        runtime.settle()
        assert target.made() == []
        clock.advance(0.001)
        runtime.settle()
        assert target.threads == ["reminder-scheduler"]
        get = runtime.get(reminder_id)
        assert get is not None and get.status == FIRING
        # The dispatch call blocks a thread of its own until the target answers.
        busy = [t.name for t in threading.enumerate() if t.name.startswith("reminder-dispatch")]
        assert busy == [f"reminder-dispatch-{reminder_id[:8]}"]
        target.made()[0].decide(DeliveryOutcome.LANDS)
        runtime.settle()
        fired = runtime.get(reminder_id)
        assert fired is not None and fired.status == "fired" and fired.fired_at == at(60)
    assert not [t for t in threading.enumerate() if t.name.startswith("reminder-")]


def test_a_crash_abandons_the_dispatch_threads_and_reopen_reconciles() -> None:
    clock, target = VirtualClock(), HarnessTarget()
    store = InMemoryReminderStore()
    runtime = ThreadedReminderRuntime(store, clock, ReminderConfig(), target)
    reminder_id = runtime.create("x", delay_seconds=60)
    clock.advance(60)
    runtime.settle()
    runtime.crash()
    assert not [t for t in threading.enumerate() if t.name.startswith("reminder-")]
    with closing(runtime.reopen()) as reopened:
        reopened.settle()
        view = reopened.get(reminder_id)
        assert view is not None and view.status == "fired"
        assert len(target.made()) == 1
