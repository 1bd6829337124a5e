"""Idempotency keys: the oracle's rules, the harness's errors, and the shipped runtimes under
real concurrency (threads on every database, processes on PostgreSQL)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from process_race import GUARD_SECONDS, race_in_processes
from sql_databases import database

from jobconform.backends.idempotency.memory import MemoryKeyStore
from jobconform.backends.idempotency.protocol import Claim, ClaimKind, IdempotencyAudit
from jobconform.backends.idempotency.service import IdempotencyService, KeyEntry, KeyStore
from jobconform.backends.idempotency.sql import SqlKeyStore
from jobconform.backends.idempotency.threaded import RequestThreadIdempotency
from jobconform.backends.loading import BackendLoadError, check_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import AUDIT_EVENTS
from jobconform.backends.sql import SqlBackend, SqlJobStore
from jobconform.backends.store import QUEUED, StoredJob
from jobconform.backends.threaded import ThreadedBackend
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import Divergence
from jobconform.conformance.idempotency.gallery import (
    CallKeyPerRequestService,
    CheckThenInsertKeyStore,
    ClaimAuditedService,
)
from jobconform.conformance.idempotency.harness import IdempotencyHarness, config_for
from jobconform.conformance.sinks import ReplayAudit
from jobconform.reference.commands import AdvanceTime, Raise, Succeed
from jobconform.reference.idempotency import oracle
from jobconform.reference.idempotency.commands import (
    ClaimCall,
    ClaimEffect,
    ClaimKey,
    CompleteClaim,
    ReleaseClaim,
)
from jobconform.reference.idempotency.oracle import (
    ClaimAnswer,
    IdempotencyConfig,
    IdempotencyOracle,
    KeyRecord,
    decide_claim,
)
from jobconform.spec import SpecError, load_registry

CONFIG = IdempotencyConfig(ttl_seconds=86_400, mismatch_status=422,
                           stale_lock_timeout_seconds=90)
RACERS = 8
RACE_KEYS = 20


def at(seconds: float) -> object:
    return EPOCH + timedelta(seconds=seconds)


# -- the oracle ------------------------------------------------------------------------------


def record(**changes: object) -> KeyRecord:
    values: dict[str, object] = {"fingerprint": oracle.payload_fingerprint(1),
                                 "holder": "first", "created_at": EPOCH, "claimed_at": EPOCH}
    values.update(changes)
    return KeyRecord(**values)  # type: ignore[arg-type]


def kind_at(held: KeyRecord | None, seconds: float, payload: object = 1) -> ClaimAnswer:
    return decide_claim(held, oracle.payload_fingerprint(payload), "next",  # type: ignore[arg-type]
                        EPOCH + timedelta(seconds=seconds), CONFIG).answer


def test_a_fresh_key_starts_and_an_in_flight_one_conflicts() -> None:
    assert kind_at(None, 0).kind is ClaimKind.STARTED
    assert kind_at(record(), 1) == ClaimAnswer(ClaimKind.CONFLICT, 409)


def test_a_completed_key_replays_its_outcome_naming_the_original_claim() -> None:
    done = record(outcome=Raise("PaymentDeclined", "card"))
    assert kind_at(done, 10) == ClaimAnswer(ClaimKind.REPLAY, None, "first",
                                            Raise("PaymentDeclined", "card"))


def test_a_mismatch_wins_over_in_flight_completed_and_stale() -> None:
    for held in (record(), record(outcome=Succeed(1))):
        for seconds in (1, 91):
            assert kind_at(held, seconds, payload=2) == ClaimAnswer(ClaimKind.MISMATCH, 422)


def test_payloads_equal_as_json_share_a_fingerprint() -> None:
    assert (oracle.payload_fingerprint({"a": 1, "b": 2})
            == oracle.payload_fingerprint({"b": 2, "a": 1}))
    assert oracle.payload_fingerprint(1) != oracle.payload_fingerprint(True)
    assert oracle.payload_fingerprint([1, 2]) != oracle.payload_fingerprint([2, 1])


def test_the_ttl_boundary_is_inclusive_and_the_stale_boundary_exclusive() -> None:
    done = record(outcome=Succeed("x"))
    assert kind_at(done, 86_399.999).kind is ClaimKind.REPLAY
    assert kind_at(done, 86_400).kind is ClaimKind.STARTED
    assert kind_at(done, 86_400, payload=2).kind is ClaimKind.STARTED  # expired: a new key
    assert kind_at(record(), 90).kind is ClaimKind.CONFLICT
    assert kind_at(record(), 90.001).kind is ClaimKind.STARTED


def test_a_takeover_keeps_the_creation_time() -> None:
    decision = decide_claim(record(), oracle.payload_fingerprint(1), "rescuer", at(100),  # type: ignore[arg-type]
                            CONFIG)
    assert decision.record == record(holder="rescuer", claimed_at=at(100))


def test_only_the_live_holder_completes_or_releases() -> None:
    keys = IdempotencyOracle(CONFIG)
    keys.claim("s", "k", 1, "first", EPOCH)
    assert keys.release("other", EPOCH) is False
    keys.claim("s", "k", 1, "rescuer", at(91))
    assert keys.complete("first", Succeed(1), at(91)) is False
    assert keys.complete("rescuer", Succeed(2), at(92)) is True
    assert keys.complete("rescuer", Succeed(3), at(92)) is False
    assert keys.release("rescuer", at(92)) is False
    assert keys.records[("s", "k")].outcome == Succeed(2)


def test_a_failure_is_stored_or_frees_the_key_as_the_policy_says() -> None:
    stored = IdempotencyOracle(CONFIG)
    stored.claim("s", "k", 1, "first", EPOCH)
    assert stored.complete("first", Raise("TimeoutError", "x"), EPOCH) is True
    assert stored.claim("s", "k", 1, "retry", EPOCH).answer.kind is ClaimKind.REPLAY
    released = IdempotencyOracle(IdempotencyConfig(86_400, 422, 90, failure_policy="release"))
    released.claim("s", "k", 1, "first", EPOCH)
    assert released.complete("first", Raise("TimeoutError", "x"), EPOCH) is True
    retry = released.claim("s", "k", 1, "retry", EPOCH)
    assert (retry.answer.kind, retry.requirements) == (ClaimKind.STARTED, ("IK-013", "IK-001"))
    assert released.complete("retry", Succeed("ok"), EPOCH) is True
    assert released.claim("s", "k", 1, "again", EPOCH).answer.kind is ClaimKind.REPLAY


def test_a_purge_removes_records_at_least_the_ttl_old() -> None:
    keys = IdempotencyOracle(CONFIG)
    keys.claim("s", "old", 1, "a", EPOCH)
    keys.claim("s", "young", 1, "b", at(1))
    assert keys.purge(at(86_400)) == 1
    assert list(keys.records) == [("s", "young")]
    assert keys.claim("s", "old", 1, "c", at(86_400)).requirements == ("IK-007", "IK-001")


def test_derived_keys() -> None:
    assert oracle.scheduler_key("exec-1") == "sched:exec-1"
    assert oracle.webhook_key("t", "body") == oracle.webhook_key("t", "body")
    assert oracle.webhook_key("t", "body") != oracle.webhook_key("t", "other")
    assert oracle.webhook_key("t", "body") != oracle.webhook_key("u", "body")
    key = oracle.effect_key("e1", "message", {"to": "bob", "channel": "sms"}, None)
    assert key == oracle.effect_key("e1", "message", {"channel": "sms", "to": "bob"}, None)
    assert key.startswith("message:")
    others = [oracle.effect_key("e2", "message", {"to": "bob", "channel": "sms"}, None),
              oracle.effect_key("e1", "call", {"to": "bob", "channel": "sms"}, None),
              oracle.effect_key("e1", "message", {"to": "carol", "channel": "sms"}, None),
              oracle.effect_key("e1", "message", {"to": "bob", "channel": "sms"}, "again")]
    assert key not in others and len(set(others)) == 4
    # Parts that would read the same joined by a separator are still different keys.
    assert (oracle.effect_key("a:b", "c", {}, None) != oracle.effect_key("a", "b:c", {}, None))


def test_a_tool_call_key_is_its_tool_and_arguments_as_json() -> None:
    key = oracle.call_key("chat_with_agent", {"agent": "ops", "message": "hi"})
    assert key == oracle.call_key("chat_with_agent", {"message": "hi", "agent": "ops"})
    others = {oracle.call_key("chat_with_agent", {"agent": "ops", "message": "bye"}),
              oracle.call_key("fan_out", {"agent": "ops", "message": "hi"}),
              oracle.call_key("chat_with_agent", {"agent": "ops", "message": "hi", "n": 1})}
    assert key not in others and len(others) == 3
    assert oracle.call_scope("fan_out") == "mcp:fan_out"


@pytest.mark.parametrize(("field", "value", "message"), [
    ("ttl_seconds", 0.0, "ttl_seconds"),
    ("stale_lock_timeout_seconds", -1.0, "stale_lock_timeout_seconds"),
    ("mismatch_status", 200, "client error status"),
    ("failure_policy", "forget", "failure_policy is one of store, release"),
    ("redelivery", "on", "redelivery is one of disabled, enabled"),
])
def test_invalid_parameters_are_refused_with_the_reason(field: str, value: object,
                                                        message: str) -> None:
    values: dict[str, object] = {"ttl_seconds": 60.0, "mismatch_status": 422,
                                 "stale_lock_timeout_seconds": 9.0}
    values[field] = value
    with pytest.raises(ValueError, match=message):
        IdempotencyConfig(**values)  # type: ignore[arg-type]


# -- profiles and the harness -----------------------------------------------------------------


def test_the_canonical_profile_sets_the_anchored_defaults() -> None:
    profile = load_registry().profile("canonical")
    assert config_for(profile) == CONFIG
    assert config_for(profile, mismatch_status=409).mismatch_status == 409
    with pytest.raises(ValueError, match="unknown idempotency parameter"):
        config_for(profile, ttl=1)
    with pytest.raises(SpecError, match="sets no parameter 'ttl_seconds'"):
        config_for(load_registry().profile("async-jobs"))


def harness(backend: object = None, **overrides: float) -> IdempotencyHarness:
    registry = load_registry()
    return IdempotencyHarness(backend or MemoryBackend(),  # type: ignore[arg-type]
                              registry.profile("canonical"), registry, overrides=overrides)


def test_the_harness_refuses_malformed_commands() -> None:
    checks = harness()
    checks.run(ClaimKey("a", "s", "k", 1))
    with pytest.raises(ValueError, match="handle 'a' is already used"):
        checks.run(ClaimKey("a", "s", "k2", 1))
    with pytest.raises(ValueError, match="1 to 255 characters"):
        checks.run(ClaimKey("b", "s", "k" * 256, 1))
    with pytest.raises(ValueError, match="finite amount"):
        checks.run(AdvanceTime(-1))
    checks.close()


def test_a_backend_without_the_area_or_its_opener_is_refused_clearly() -> None:
    class NoKeys(MemoryBackend):
        capabilities = frozenset({"lifecycle"})

    with pytest.raises(ValueError, match="does not claim the idempotency area"):
        harness(NoKeys())

    class ClaimsWithoutOpener:
        name, profile = "half", "canonical"
        capabilities = frozenset({"lifecycle", "idempotency"})

        def open(self, settings: object, clock: object) -> None: ...

    with pytest.raises(BackendLoadError, match="no method open_idempotency"):
        check_backend(ClaimsWithoutOpener(), "half")


def test_a_divergence_names_the_requirement_and_the_commands() -> None:
    class ForgetfulStore(MemoryKeyStore):
        def release(self, holder: str, created_after: object) -> bool:  # type: ignore[override]
            return True

    class Forgetful(MemoryBackend):
        def open_idempotency(self, clock: VirtualClock,  # type: ignore[override]
                             config: IdempotencyConfig,
                             audit: IdempotencyAudit | None = None) -> IdempotencyService:
            return IdempotencyService(ForgetfulStore(), clock, config, audit)

    checks = harness(Forgetful())
    checks.run(ClaimKey("a", "s", "k", 1))
    checks.run(ReleaseClaim("a"))
    with pytest.raises(Divergence) as caught:
        checks.run(ClaimKey("b", "s", "k", 1))
    assert caught.value.requirements[0] == "IK-004"
    assert "ReleaseClaim(handle='a')" in str(caught.value)


TOOL_CALL_RETRY = [ClaimCall("call", "chat_with_agent", {"agent": "ops", "message": "hi"}),
                   ClaimCall("retry", "chat_with_agent", {"message": "hi", "agent": "ops"}),
                   CompleteClaim("call", Succeed({"execution": "e-1"})),
                   ClaimCall("late", "chat_with_agent", {"agent": "ops", "message": "hi"}),
                   ClaimCall("other", "chat_with_agent", {"agent": "ops", "message": "bye"}),
                   ClaimCall("fan", "fan_out", {"agent": "ops", "message": "hi"})]


@pytest.mark.parametrize("backend", [MemoryBackend, ThreadedBackend])
def test_a_tool_call_retry_meets_the_first_call(backend: type[MemoryBackend]) -> None:
    checks = harness(backend())
    answers = [checks.run(command) for command in TOOL_CALL_RETRY]
    kinds = [getattr(answer, "kind", answer) for answer in answers]
    assert kinds == ["started", "conflict", True, "replay", "started", "started"]
    assert "IK-016" in checks.exercised
    checks.close()


def test_a_tool_call_key_per_request_is_caught_as_ik_016() -> None:
    class PerRequest(MemoryBackend):
        def open_idempotency(self, clock: VirtualClock,  # type: ignore[override]
                             config: IdempotencyConfig,
                             audit: IdempotencyAudit | None = None) -> IdempotencyService:
            runtime = CallKeyPerRequestService(MemoryKeyStore(), clock, config)
            runtime.audit = audit
            return runtime

    checks = harness(PerRequest())
    checks.run(TOOL_CALL_RETRY[0])
    with pytest.raises(Divergence) as caught:
        checks.run(TOOL_CALL_RETRY[1])
    assert caught.value.requirements[0] == "IK-016"
    checks.close()


# -- IK-017: an audit event on every replay ------------------------------------------------

AUDITED = [ClaimKey("first", "alice", "order-1", {"qty": 1}),
           ClaimKey("early", "alice", "order-1", {"qty": 1}),
           CompleteClaim("first", Succeed({"execution": "e-1"})),
           ClaimKey("other", "alice", "order-1", {"qty": 2}),
           ClaimKey("again", "alice", "order-1", {"qty": 1}),
           ClaimKey("storm", "alice", "order-1", {"qty": 1}),
           ClaimKey("loose", "alice", None, {"qty": 1})]


def test_the_oracle_expects_one_event_per_replay_and_none_otherwise() -> None:
    model = IdempotencyOracle(CONFIG)
    now = EPOCH
    model.claim("s", "k", 1, "a", now)
    model.claim("s", "k", 1, "b", now)  # conflict
    model.complete("a", Succeed(1), now)
    model.claim("s", "k", 2, "c", now)  # mismatch
    assert model.replays == []
    model.claim("s", "k", 1, "d", now)
    model.claim("s", "k", 1, "e", now)
    assert model.replays == [("s", "k", "a"), ("s", "k", "a")]


@pytest.mark.parametrize("backend", [MemoryBackend, ThreadedBackend])
def test_every_replay_is_audited_once_and_nothing_else(backend: type[MemoryBackend]) -> None:
    checks = harness(backend())
    assert checks.audits
    kinds = [getattr(checks.run(command), "kind", None) for command in AUDITED]
    assert kinds == ["started", "conflict", None, "mismatch", "replay", "replay", "started"]
    assert checks.audit_events() == [("alice", "order-1", "first")] * 2
    assert "IK-017" in checks.exercised
    checks.close()


def test_the_sql_runtime_audits_its_replays(migrated_database_url: str) -> None:
    sink = ReplayAudit()
    runtime = SqlBackend(migrated_database_url).open_idempotency(VirtualClock(EPOCH), CONFIG, sink)
    started = runtime.claim("s", "k", 1)
    assert runtime.claim("s", "k", 1).kind is ClaimKind.CONFLICT
    assert started.token is not None and runtime.complete(started.token, Succeed(1))
    assert runtime.claim("s", "k", 2).kind is ClaimKind.MISMATCH
    assert sink.events() == []
    assert runtime.claim("s", "k", 1).kind is ClaimKind.REPLAY
    assert sink.events() == [("s", "k", started.token)]
    runtime.close()


def test_a_derived_key_is_audited_in_the_runtimes_own_spelling_one_to_one() -> None:
    checks = harness()
    effect = (("to", "bob"),)
    checks.run(ClaimEffect("e", "x1", "message", effect, "Hi"))
    checks.run(CompleteClaim("e", Succeed(None)))
    checks.run(ClaimEffect("again", "x1", "message", effect, "Hello"))
    assert [event[2] for event in checks.audit_events()] == ["e"]
    checks.close()


def test_an_event_on_the_claim_too_is_caught_as_ik_017() -> None:
    class Audited(MemoryBackend):
        def open_idempotency(self, clock: VirtualClock,  # type: ignore[override]
                             config: IdempotencyConfig,
                             audit: IdempotencyAudit | None = None) -> IdempotencyService:
            return ClaimAuditedService(MemoryKeyStore(), clock, config, audit)

    checks = harness(Audited())
    with pytest.raises(Divergence) as caught:
        checks.run(AUDITED[0])
    assert caught.value.requirements == ("IK-017",)
    checks.close()


def test_an_adapter_without_audit_events_is_opened_as_before_and_not_claimed() -> None:
    class TwoArguments(MemoryBackend):
        capabilities = MemoryBackend.capabilities - {AUDIT_EVENTS}

        def open_idempotency(self, clock: VirtualClock,  # type: ignore[override]
                             config: IdempotencyConfig) -> IdempotencyService:
            return IdempotencyService(MemoryKeyStore(), clock, config)

    checks = harness(TwoArguments())
    assert not checks.audits
    for command in AUDITED:
        checks.run(command)
    assert checks.audit_events() == [] and "IK-017" not in checks.exercised
    checks.close()
    registry = load_registry()
    reason = skip_reason(registry, TwoArguments(), registry.profile("canonical"), ["IK-017"])
    assert reason is not None and AUDIT_EVENTS in reason


def test_audit_events_without_the_idempotency_area_is_refused() -> None:
    class AuditOnly(MemoryBackend):
        capabilities = frozenset({"lifecycle", AUDIT_EVENTS})

    with pytest.raises(BackendLoadError, match=AUDIT_EVENTS):
        check_backend(AuditOnly(), "audit-only")


def test_a_tool_call_needs_a_tool_and_an_object_of_arguments() -> None:
    checks = harness()
    with pytest.raises(ValueError, match="JSON object of arguments"):
        checks.run(ClaimCall("a", "chat_with_agent", ["hi"]))
    with pytest.raises(ValueError, match="JSON object of arguments"):
        checks.run(ClaimCall("b", "", {}))
    checks.close()


# -- real concurrency -------------------------------------------------------------------------


def sql_stores(url: str) -> tuple[SqlKeyStore, SqlJobStore]:
    keys = SqlKeyStore.connect(url)  # migrates a fresh database, else changes nothing
    jobs = SqlJobStore.connect(url, migrate_schema=False)
    keys.clear()
    jobs.clear()
    return keys, jobs


def claim_and_execute(service: IdempotencyService, jobs: SqlJobStore | None, key: str,
                      executions: list[str], lock: threading.Lock) -> Claim:
    """One request: claim the key; the winner creates its execution and completes."""
    claim = service.claim("race", key, {"n": 1})
    if claim.kind is ClaimKind.STARTED:
        assert claim.token is not None
        execution_id = claim.token  # a uuid: a valid job id
        if jobs is not None:
            jobs.add(StoredJob(execution_id, QUEUED, EPOCH), None)
        with lock:
            executions.append(execution_id)
        service.complete(claim.token, Succeed(execution_id))
    return claim


def race_threads(store: KeyStore, jobs: SqlJobStore | None,
                 wrap: Callable[[IdempotencyService], object] = lambda s: s) -> tuple[
                     Counter[tuple[str, ClaimKind]], list[str]]:
    """RACERS threads each claim RACE_KEYS keys, released together by a barrier."""
    service = IdempotencyService(store, VirtualClock(EPOCH), CONFIG)
    runtime = wrap(service)
    start = threading.Barrier(RACERS)
    executions: list[str] = []
    lock = threading.Lock()

    def racer() -> list[tuple[str, ClaimKind]]:
        start.wait(GUARD_SECONDS)
        return [(key, claim_and_execute(runtime, jobs, key, executions, lock).kind)  # type: ignore[arg-type]
                for key in (f"key-{n}" for n in range(RACE_KEYS))]

    with ThreadPoolExecutor(RACERS) as pool:
        futures = [pool.submit(racer) for _ in range(RACERS)]
        answers = Counter(answer for future in futures
                          for answer in future.result(GUARD_SECONDS))
    return answers, executions


def assert_one_winner_per_key(answers: Counter[tuple[str, ClaimKind]],
                              executions: list[str]) -> None:
    for n in range(RACE_KEYS):
        key = f"key-{n}"
        assert answers[(key, ClaimKind.STARTED)] == 1, answers
        # The losers saw the winner in flight or already completed, never a second start.
        losers = answers[(key, ClaimKind.CONFLICT)] + answers[(key, ClaimKind.REPLAY)]
        assert losers == RACERS - 1
    assert len(executions) == RACE_KEYS


def test_threads_racing_on_memory_keys_get_one_winner_per_key() -> None:
    assert_one_winner_per_key(*race_threads(MemoryKeyStore(), None))


def test_threads_racing_through_request_threads_get_one_winner_per_key() -> None:
    answers, executions = race_threads(MemoryKeyStore(), None,
                                       wrap=lambda service: RequestThreadIdempotency(service))
    assert_one_winner_per_key(answers, executions)


def test_threads_racing_on_sql_keys_get_one_winner_and_one_execution(
        migrated_database_url: str) -> None:
    keys, jobs = sql_stores(migrated_database_url)
    try:
        answers, executions = race_threads(keys, jobs)
        assert_one_winner_per_key(answers, executions)
        assert sorted(job.job_id for job in jobs.list()) == sorted(executions)
    finally:
        keys.close()
        jobs.close()


def test_the_race_catches_a_claim_that_reads_then_writes(migrated_database_url: str) -> None:
    # Two callers both read the key before either writes: the window a non-atomic claim
    # leaves open, forced here so that the check does not depend on thread timing.
    both_read = threading.Barrier(2)

    class Interleaved(CheckThenInsertKeyStore):
        def read(self, scope: str, key: str) -> KeyEntry | None:
            held = super().read(scope, key)
            both_read.wait(GUARD_SECONDS)
            return held

    keys = Interleaved.connect(migrated_database_url)
    keys.clear()
    service = IdempotencyService(keys, VirtualClock(EPOCH), CONFIG)
    with ThreadPoolExecutor(2) as pool:
        kinds = [future.result(GUARD_SECONDS) for future in
                 [pool.submit(lambda: service.claim("race", "k", 1).kind) for _ in range(2)]]
    keys.close()
    assert kinds == [ClaimKind.STARTED, ClaimKind.STARTED]  # two winners: the bug shows


def test_threads_racing_to_take_over_a_stale_sql_claim_get_one_winner(
        migrated_database_url: str) -> None:
    keys, jobs = sql_stores(migrated_database_url)
    clock = VirtualClock(EPOCH)
    service = IdempotencyService(keys, clock, CONFIG)
    dead = service.claim("race", "k", 1)
    clock.advance(CONFIG.stale_lock_timeout_seconds + 1)
    start = threading.Barrier(RACERS)

    def rescuer() -> Claim:
        start.wait(GUARD_SECONDS)
        return service.claim("race", "k", 1)

    with ThreadPoolExecutor(RACERS) as pool:
        claims = [future.result(GUARD_SECONDS)
                  for future in [pool.submit(rescuer) for _ in range(RACERS)]]
    kinds = Counter(claim.kind for claim in claims)
    assert kinds == Counter({ClaimKind.STARTED: 1, ClaimKind.CONFLICT: RACERS - 1})
    assert dead.token is not None and service.complete(dead.token, Succeed("zombie")) is False
    keys.close()
    jobs.close()


def claim_in_a_process(url: str, start: Barrier, results: Queue[list[tuple[str, str]]]) -> None:
    """A separate host: claim every race key once; the winner creates the execution."""
    keys = SqlKeyStore.connect(url, migrate_schema=False)
    jobs = SqlJobStore.connect(url, migrate_schema=False)
    service = IdempotencyService(keys, VirtualClock(EPOCH), CONFIG)
    start.wait(GUARD_SECONDS)
    answers = []
    executions: list[str] = []
    for n in range(RACE_KEYS):
        claim = claim_and_execute(service, jobs, f"key-{n}", executions, threading.Lock())
        answers.append((f"key-{n}", claim.kind.value))
    keys.close()
    jobs.close()
    results.put(answers)


@pytest.mark.parametrize("kind", ["postgresql"])
def test_processes_racing_on_postgresql_get_one_winner_and_one_execution(
        kind: str, tmp_path: Path) -> None:
    processes = 4
    with database(kind, tmp_path) as url:
        keys, jobs = sql_stores(url)  # migrates the fresh database first
        reports = race_in_processes(processes, claim_in_a_process, url)
        answers = Counter((key, ClaimKind(kind_)) for report in reports
                          for key, kind_ in report)
        executions = [job.job_id for job in jobs.list()]
        keys.close()
        jobs.close()
    for n in range(RACE_KEYS):
        assert answers[(f"key-{n}", ClaimKind.STARTED)] == 1, answers
    assert len(executions) == RACE_KEYS


def test_the_threaded_backends_serve_claims_on_request_threads() -> None:
    assert isinstance(ThreadedBackend().open_idempotency(VirtualClock(EPOCH), CONFIG),
                      RequestThreadIdempotency)
    seen: list[str] = []

    class Recording(IdempotencyService):
        def claim(self, *args: object, **kwargs: object) -> Claim:  # type: ignore[override]
            seen.append(threading.current_thread().name)
            return super().claim(*args, **kwargs)  # type: ignore[arg-type]

    runtime = RequestThreadIdempotency(Recording(MemoryKeyStore(), VirtualClock(EPOCH), CONFIG))
    assert runtime.claim("s", "k", 1).kind is ClaimKind.STARTED
    runtime.close()
    assert seen and seen[0].startswith("jobconform-request")


def test_the_sql_backend_replays_a_stored_error_from_the_database(
        migrated_database_url: str) -> None:
    checks = harness(SqlBackend(migrated_database_url), ttl_seconds=60)
    checks.run_all([ClaimKey("a", "s", "k", {"n": 1}),
                    CompleteClaim("a", Raise("PaymentDeclined", "card expired")),
                    ClaimKey("b", "s", "k", {"n": 1}),
                    AdvanceTime(60),
                    ClaimKey("c", "s", "k", {"n": 1}),
                    *TOOL_CALL_RETRY])
    assert checks.exercised >= {"IK-001", "IK-003", "IK-007", "IK-016"}
    checks.close()


def test_an_effect_without_an_execution_id_fails_open_unless_executions_may_be_redelivered(
        ) -> None:
    # IK-014 and IK-018 decide the same claim by the one parameter, and neither records.
    open_ = oracle.decide_effect_without_execution(IdempotencyConfig(60.0, 422, 9.0))
    closed = oracle.decide_effect_without_execution(
        IdempotencyConfig(60.0, 422, 9.0, redelivery="enabled"))
    assert (open_.answer.kind, open_.answer.status, open_.record) == (
        oracle.ClaimKind.STARTED, None, None)
    assert (closed.answer.kind, closed.answer.status, closed.record) == (
        oracle.ClaimKind.REFUSED, 400, None)
    assert (open_.requirements[0], closed.requirements[0]) == ("IK-014", "IK-018")
