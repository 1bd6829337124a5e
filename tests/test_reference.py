"""The oracle: the lifecycle transition table, the composite ReferenceModel and commands."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_sequences import lifecycle_commands

from jobconform.reference import lifecycle
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.commands import (
    ACCEPTED,
    COMMAND_TYPES,
    NOT_FOUND,
    REFUSED_CAPACITY,
    REFUSED_INVALID_MODULE,
    REFUSED_SHUT_DOWN,
    REFUSED_UNKNOWN_MODULE,
    AdvanceTime,
    Cancel,
    Cleanup,
    Command,
    ComputeDelay,
    DetectStuck,
    Dispatch,
    ExecutionStats,
    ExpireLeases,
    Finish,
    Get,
    GetResult,
    Heartbeat,
    JobStoreFault,
    ListExpired,
    ListJobs,
    OperatorAlerts,
    OperatorRequests,
    ParkRequest,
    QueryExecutions,
    Raise,
    ReaperStatus,
    Restart,
    Shutdown,
    StaleOwnerWrite,
    StartReaper,
    StopBySignal,
    StopReaper,
    StoreOutage,
    Submit,
    SubmitConcurrently,
    Succeed,
    command_from_json,
    command_to_json,
    describe,
    not_completed,
)
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.lifecycle import (
    ACTIVE,
    TERMINAL,
    TRANSITIONS,
    Event,
    EventKind,
    IllegalTransition,
    JobState,
    Status,
    new_job,
    step,
)
from jobconform.reference.model import ReferenceModel
from jobconform.spec.runtime_settings import RuntimeSettings

T0 = datetime(2026, 1, 1, tzinfo=UTC)
T1 = T0 + timedelta(seconds=5)
T2 = T0 + timedelta(seconds=9)

EXAMPLES = settings(max_examples=200, deadline=None, database=None, derandomize=True)


def model(max_concurrent: int = 10, max_tasks: int | None = None) -> ReferenceModel:
    return ReferenceModel(RuntimeSettings(max_concurrent, max_tasks), T0)


def run(oracle: ReferenceModel, *commands: Command) -> list[Any]:
    return [oracle.apply(command).answer for command in commands]


# -- the transition table ----------------------------------------------------------------------


def test_transition_table_has_exactly_the_seven_legal_transitions() -> None:
    assert dict(TRANSITIONS) == {
        (Status.RUNNING, EventKind.RETRY): Status.QUEUED,
        (Status.RUNNING, EventKind.REDELIVER): Status.QUEUED,
        (Status.QUEUED, EventKind.START): Status.RUNNING,
        (Status.QUEUED, EventKind.CANCEL): Status.CANCELLED,
        (Status.RUNNING, EventKind.SUCCEED): Status.SUCCEEDED,
        (Status.RUNNING, EventKind.FAIL): Status.FAILED,
        (Status.RUNNING, EventKind.CANCEL): Status.CANCELLED,
    }


def test_five_states_three_terminal() -> None:
    assert {s.value for s in Status} == {"queued", "running", "succeeded", "failed", "cancelled"}
    assert {Status.SUCCEEDED, Status.FAILED, Status.CANCELLED} == TERMINAL
    assert {Status.QUEUED, Status.RUNNING} == ACTIVE
    assert all(s.is_terminal for s in TERMINAL)
    assert not any(s.is_terminal for s in ACTIVE)


def test_terminal_states_have_no_outgoing_transitions() -> None:
    assert not [key for key in TRANSITIONS if key[0].is_terminal]


def job_in(status: Status) -> JobState:
    job = new_job(T0)
    if status is Status.QUEUED:
        return job
    job = step(job, Event(EventKind.START, T1))
    if status is Status.RUNNING:
        return job
    kind = {Status.SUCCEEDED: EventKind.SUCCEED, Status.FAILED: EventKind.FAIL,
            Status.CANCELLED: EventKind.CANCEL}[status]
    return step(job, Event(kind, T2, result=1, error="E: m"))


ILLEGAL = [pair for pair in itertools.product(Status, EventKind) if pair not in TRANSITIONS]


def test_illegal_pairs_count() -> None:
    assert len(ILLEGAL) == len(Status) * len(EventKind) - 7


@pytest.mark.parametrize(("status", "kind"), ILLEGAL)
def test_step_rejects_every_other_pair(status: Status, kind: EventKind) -> None:
    job = job_in(status)
    with pytest.raises(IllegalTransition) as caught:
        step(job, Event(kind, T2))
    assert caught.value.status is status
    assert caught.value.kind is kind
    message = str(caught.value)
    assert repr(kind.value) in message and repr(status.value) in message
    if status.is_terminal:
        assert "terminal" in message
    assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(("pair", "target"), list(TRANSITIONS.items()))
def test_step_follows_the_table(pair: tuple[Status, EventKind], target: Status) -> None:
    status, kind = pair
    assert step(job_in(status), Event(kind, T2)).status is target


def test_new_job_is_queued_with_only_submitted_at() -> None:
    assert new_job(T0) == JobState(Status.QUEUED, T0, None, None, None, None)


def test_start_sets_started_at_only() -> None:
    running = step(new_job(T0), Event(EventKind.START, T1, result="x", error="y"))
    assert running == JobState(Status.RUNNING, T0, started_at=T1, last_heartbeat=T1)


def test_succeed_sets_finished_at_and_result() -> None:
    done = step(job_in(Status.RUNNING), Event(EventKind.SUCCEED, T2, result={"a": [1]},
                                                error="ignored"))
    assert done == JobState(Status.SUCCEEDED, T0, T1, T2, result={"a": [1]}, error=None,
                            last_heartbeat=T1)


def test_fail_sets_finished_at_and_error() -> None:
    failed = step(job_in(Status.RUNNING), Event(EventKind.FAIL, T2, result=5,
                                                  error="ValueError: bad"))
    assert failed == JobState(Status.FAILED, T0, T1, T2, result=None, error="ValueError: bad",
                              last_heartbeat=T1)


def test_cancel_of_running_discards_outcome() -> None:
    cancelled = step(job_in(Status.RUNNING), Event(EventKind.CANCEL, T2, result=5, error="x"))
    assert cancelled == JobState(Status.CANCELLED, T0, T1, T2, None, None, last_heartbeat=T1)


def test_cancel_of_queued_never_sets_started_at() -> None:
    cancelled = step(new_job(T0), Event(EventKind.CANCEL, T1))
    assert cancelled == JobState(Status.CANCELLED, T0, None, T1, None, None)


def test_step_does_not_mutate_its_input() -> None:
    job = new_job(T0)
    step(job, Event(EventKind.START, T1))
    assert job == new_job(T0)


def test_error_message_format() -> None:
    assert lifecycle.error_message("KeyError", "no such key") == "KeyError: no such key"
    assert lifecycle.error_message("E", "") == "E: "


@given(st.lists(st.sampled_from(list(EventKind)), max_size=8))
@EXAMPLES
def test_any_event_sequence_only_takes_legal_steps(kinds: list[EventKind]) -> None:
    job = new_job(T0)
    at = T0
    for kind in kinds:
        at += timedelta(seconds=1)
        before = job
        try:
            job = step(job, Event(kind, at, result=1, error="E: x"))
        except IllegalTransition:
            assert (before.status, kind) not in TRANSITIONS
            continue
        assert TRANSITIONS[(before.status, kind)] is job.status
        assert job.submitted_at == T0
        never_started = before.started_at is None and kind is not EventKind.START
        assert (job.started_at is None) == never_started
        assert (job.finished_at is not None) == job.status.is_terminal
        assert job.result is None or job.status is Status.SUCCEEDED
        assert job.error is None or job.status is Status.FAILED


# -- the model: submission, dispatch, finishing -----------------------------------------------


def test_submit_queues_and_dispatch_starts_in_order() -> None:
    oracle = model(max_concurrent=2)
    assert run(oracle, Submit("a"), Submit("b"), Submit("c")) == [ACCEPTED] * 3
    assert all(job.status is Status.QUEUED for job in oracle.jobs.values())
    oracle.apply(AdvanceTime(3))
    oracle.apply(Dispatch())
    assert [job.status for job in oracle.jobs.values()] == [
        Status.RUNNING, Status.RUNNING, Status.QUEUED]
    assert oracle.jobs["a"].started_at == T0 + timedelta(seconds=3)
    assert oracle.jobs["c"].started_at is None


def test_finish_before_start_ends_the_body_when_it_starts() -> None:
    oracle = model()
    run(oracle, Submit("a"), Finish("a", Succeed(42)))
    assert oracle.jobs["a"].status is Status.QUEUED
    run(oracle, AdvanceTime(2), Dispatch())
    job = oracle.jobs["a"]
    at = T0 + timedelta(seconds=2)
    assert job == JobState(Status.SUCCEEDED, T0, at, at, result=42, last_heartbeat=at)
    assert oracle.apply(GetResult("a")).answer == 42


def test_failure_records_type_and_message() -> None:
    oracle = model()
    run(oracle, Submit("a"), Dispatch(), AdvanceTime(1), Finish("a", Raise("KeyError", "k")))
    job = oracle.jobs["a"]
    assert job.status is Status.FAILED
    assert job.error == "KeyError: k"
    assert job.result is None
    assert job.finished_at == T0 + timedelta(seconds=1)
    assert oracle.apply(GetResult("a")).answer == not_completed("failed")


def test_only_the_first_finish_counts() -> None:
    oracle = model()
    run(oracle, Submit("a"), Dispatch(), Finish("a", Succeed(1)), Finish("a", Raise("E", "x")))
    assert oracle.jobs["a"].status is Status.SUCCEEDED
    assert oracle.jobs["a"].result == 1
    assert oracle.health().failed == 0


def test_get_result_answers() -> None:
    oracle = model()
    run(oracle, Submit("a"))
    assert oracle.apply(GetResult("zzz")).answer == NOT_FOUND
    assert oracle.apply(GetResult("a")).answer == not_completed("queued")
    oracle.apply(Dispatch())
    assert oracle.apply(GetResult("a")).answer == "error: not completed (status=running)"


def test_get_and_list() -> None:
    oracle = model(max_concurrent=1)
    run(oracle, Submit("a"), Submit("b"), Dispatch())
    assert oracle.apply(Get("missing")).answer is None
    got = oracle.apply(Get("a"))
    assert got.answer == oracle.jobs["a"]
    assert "LC-016" in got.requirements
    assert oracle.apply(ListJobs()).answer == ["a", "b"]
    assert oracle.apply(ListJobs("queued")).answer == ["b"]
    assert oracle.apply(ListJobs("succeeded")).answer == []


# -- the model: cancellation --------------------------------------------------------------------


def test_cancel_of_queued_job() -> None:
    oracle = model()
    oracle.apply(Submit("a"))
    oracle.apply(AdvanceTime(4))
    result = oracle.apply(Cancel("a"))
    assert result.answer is True
    assert "LC-011" in result.requirements
    job = oracle.jobs["a"]
    assert job.status is Status.CANCELLED
    assert job.finished_at == T0 + timedelta(seconds=4)
    assert job.started_at is None
    oracle.apply(Dispatch())  # a cancelled job never starts (LC-012)
    assert oracle.jobs["a"].started_at is None
    assert oracle.jobs["a"].status is Status.CANCELLED


def test_cancel_of_running_job_that_honours_cancellation() -> None:
    oracle = model()
    run(oracle, Submit("a"), Dispatch(), AdvanceTime(1))
    result = oracle.apply(Cancel("a"))
    assert result.answer is True
    assert "LC-013" in result.requirements
    assert oracle.jobs["a"].status is Status.CANCELLED
    assert oracle.jobs["a"].finished_at == T0 + timedelta(seconds=1)
    assert oracle.apply(Cancel("a")).answer is False  # terminal now


@pytest.mark.parametrize("outcome", [Succeed(7), Raise("ValueError", "late")])
def test_ignoring_body_stays_running_until_finish_then_ends_cancelled(outcome: Any) -> None:
    oracle = model()
    run(oracle, Submit("a", ignores_cancel=True), Dispatch())
    assert oracle.apply(Cancel("a")).answer is True
    assert oracle.jobs["a"].status is Status.RUNNING
    assert oracle.jobs["a"].finished_at is None
    # A second cancel of a running job whose cancellation is already requested is refused.
    second = oracle.apply(Cancel("a"))
    assert second.answer is False
    assert second.requirements == ("LC-015",)
    run(oracle, AdvanceTime(10), Dispatch())
    assert oracle.jobs["a"].status is Status.RUNNING
    result = oracle.apply(Finish("a", outcome))
    assert "LC-014" in result.requirements
    job = oracle.jobs["a"]
    assert job.status is Status.CANCELLED
    assert job.result is None and job.error is None  # the outcome is discarded
    assert job.finished_at == T0 + timedelta(seconds=10)
    assert oracle.health().processed == 0
    assert oracle.health().failed == 0
    assert oracle.health().cancelled == 1
    assert oracle.apply(GetResult("a")).answer == not_completed("cancelled")


@pytest.mark.parametrize("ending", ["succeed", "fail", "cancel"])
def test_cancel_of_terminal_job_is_refused_and_changes_nothing(ending: str) -> None:
    oracle = model()
    run(oracle, Submit("a"), Dispatch())
    if ending == "succeed":
        oracle.apply(Finish("a", Succeed("r")))
    elif ending == "fail":
        oracle.apply(Finish("a", Raise("E", "m")))
    else:
        oracle.apply(Cancel("a"))
    before = (oracle.jobs["a"], oracle.health())
    oracle.apply(AdvanceTime(5))
    result = oracle.apply(Cancel("a"))
    assert result.answer is False
    assert result.requirements == ("LC-015",)
    assert (oracle.jobs["a"], oracle.health()) == before


def test_cancel_of_unknown_job() -> None:
    oracle = model()
    result = oracle.apply(Cancel("ghost"))
    assert result.answer is False
    assert result.requirements == ("LC-015",)
    assert oracle.jobs == {}


def test_finish_after_cancel_of_queued_job_changes_nothing() -> None:
    oracle = model()
    run(oracle, Submit("a"), Cancel("a"))
    before = oracle.jobs["a"]
    run(oracle, Finish("a", Succeed(1)), Dispatch())
    assert oracle.jobs["a"] == before
    assert oracle.health().processed == 0


# -- the model: cleanup, cap, shutdown, health --------------------------------------------------


def test_cleanup_inclusive_boundary_from_finished_at() -> None:
    oracle = model()
    run(oracle, Submit("a"), Dispatch(), AdvanceTime(100), Finish("a", Succeed(1)))
    finished = oracle.jobs["a"].finished_at
    assert finished == T0 + timedelta(seconds=100)
    oracle.apply(AdvanceTime(59.999999))
    assert oracle.apply(Cleanup(60)).answer == 0  # measured from finished_at, not submitted_at
    assert "a" in oracle.jobs
    oracle.apply(AdvanceTime(0.000001))
    assert oracle.now - finished == timedelta(seconds=60)
    result = oracle.apply(Cleanup(60))
    assert result.answer == 1  # exactly max_age_seconds old: removed
    assert set(result.requirements) == {"LC-019", "LC-020", "LC-021"}
    assert oracle.jobs == {}


def test_cleanup_zero_age_removes_every_terminal_job_now() -> None:
    oracle = model()
    run(oracle, Submit("a"), Cancel("a"))
    assert oracle.apply(Cleanup(0)).answer == 1


def test_cleanup_never_removes_active_jobs() -> None:
    oracle = model(max_concurrent=1)
    run(oracle, Submit("a"), Submit("b"), Dispatch(), AdvanceTime(10**6))
    assert oracle.apply(Cleanup(0)).answer == 0
    assert [job.status for job in oracle.jobs.values()] == [Status.RUNNING, Status.QUEUED]


def test_task_cap_counts_terminal_jobs_and_cleanup_makes_room() -> None:
    oracle = model(max_tasks=2)
    run(oracle, Submit("a"), Submit("b"), Cancel("a"), Dispatch(), Finish("b", Succeed(0)))
    assert all(job.status.is_terminal for job in oracle.jobs.values())
    refused = oracle.apply(Submit("c"))
    assert refused.answer == REFUSED_CAPACITY
    assert refused.requirements == ("LC-009",)
    assert "c" not in oracle.jobs  # no record left behind
    assert oracle.health().total == 2
    assert oracle.apply(Cleanup(0)).answer == 2
    assert oracle.apply(Submit("d")).answer == ACCEPTED


def test_no_task_cap() -> None:
    oracle = model(max_tasks=None)
    assert run(oracle, *(Submit(f"j{i}") for i in range(50))) == [ACCEPTED] * 50


def test_shutdown_cancels_active_jobs_and_refuses_submits() -> None:
    oracle = model(max_concurrent=1)
    run(oracle, Submit("done"), Dispatch(), Finish("done", Succeed(1)),
        Submit("run", ignores_cancel=True), Submit("wait"), Dispatch(), AdvanceTime(3))
    assert oracle.jobs["run"].status is Status.RUNNING
    assert oracle.jobs["wait"].status is Status.QUEUED
    oracle.apply(Shutdown())
    at = T0 + timedelta(seconds=3)
    assert oracle.jobs["done"].status is Status.SUCCEEDED
    started = oracle.jobs["done"].finished_at
    assert oracle.jobs["run"] == JobState(Status.CANCELLED, T0, started, at, None, None,
                                          last_heartbeat=started)
    assert oracle.jobs["wait"].status is Status.CANCELLED
    assert oracle.jobs["wait"].started_at is None
    health = oracle.health()
    assert (health.processed, health.cancelled) == (1, 2)

    snapshot = (dict(oracle.jobs), oracle.health())
    oracle.apply(AdvanceTime(1))
    oracle.apply(Shutdown())  # idempotent
    assert (dict(oracle.jobs), oracle.health()) == snapshot

    refused = oracle.apply(Submit("late"))
    assert refused.answer == REFUSED_SHUT_DOWN
    assert refused.requirements == ("LC-023",)
    assert "late" not in oracle.jobs
    # The body that ignored cancellation finishing late changes nothing (LC-003).
    oracle.apply(Finish("run", Succeed("late")))
    assert (dict(oracle.jobs), oracle.health()) == snapshot


def test_shutdown_refusal_wins_over_capacity() -> None:
    oracle = model(max_tasks=1)
    run(oracle, Submit("a"), Shutdown())
    assert oracle.apply(Submit("b")).answer == REFUSED_SHUT_DOWN


def test_health_counters_cancelled_not_processed_and_survive_cleanup() -> None:
    oracle = model(max_concurrent=3)
    run(oracle, Submit("ok"), Submit("bad"), Submit("stop"), Submit("queued-cancel"),
        Dispatch(), Finish("ok", Succeed(1)), Finish("bad", Raise("E", "x")),
        Cancel("stop"), Cancel("queued-cancel"))
    health = oracle.health()
    assert (health.queued, health.running, health.total) == (0, 0, 4)
    assert (health.processed, health.failed, health.cancelled) == (2, 1, 2)
    oracle.apply(Cleanup(0))
    health = oracle.health()
    assert (health.queued, health.running, health.total) == (0, 0, 0)
    assert (health.processed, health.failed, health.cancelled) == (2, 1, 2)


# -- the model: random command sequences -------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=3)
outcomes = st.one_of(
    st.builds(Succeed, json_scalars),
    st.builds(Raise, st.sampled_from(["ValueError", "KeyError", "Boom"]), st.text(max_size=5)),
)


# Random commands; each Submit uses a fresh alias, the others any alias (maybe unknown).
command_sequences = partial(
    lifecycle_commands, max_size=30, outcomes=outcomes,
    kinds=["submit", "dispatch", "finish", "cancel", "time", "cleanup", "shutdown", "get",
           "result", "list"],
    seconds=[0, 0.5, 1, 30, 60], ages=[0, 1, 30, 60],
    statuses=[None, *(s.value for s in Status)])


@given(command_sequences(), st.integers(1, 3), st.sampled_from([None, 2, 4]))
@EXAMPLES
def test_health_always_agrees_with_held_jobs(
    commands: list[Command], max_concurrent: int, max_tasks: int | None
) -> None:
    oracle = model(max_concurrent, max_tasks)
    ended: dict[str, JobState] = {}  # every job ever seen terminal, with its final record
    previous = oracle.health()
    for command in commands:
        oracle.apply(command)
        health = oracle.health()
        statuses = [job.status for job in oracle.jobs.values()]
        # LC-024: the counts agree with the held records.
        assert health.queued == statuses.count(Status.QUEUED)
        assert health.running == statuses.count(Status.RUNNING)
        assert health.total == len(statuses)
        # LC-010: never more than max_concurrent running.
        assert health.running <= max_concurrent
        # LC-009: never more held records than the cap.
        assert max_tasks is None or health.total <= max_tasks
        # LC-025: counters only grow.
        assert health.processed >= previous.processed
        assert health.failed >= previous.failed
        assert health.cancelled >= previous.cancelled
        for alias, job in oracle.jobs.items():
            if alias in ended:
                assert job == ended[alias]  # LC-003: terminal records never change
            elif job.status.is_terminal:
                ended[alias] = job
        outcomes_seen = [job.status for job in ended.values()]
        assert health.processed == (outcomes_seen.count(Status.SUCCEEDED)
                                    + outcomes_seen.count(Status.FAILED))
        assert health.failed == outcomes_seen.count(Status.FAILED)
        assert health.cancelled == outcomes_seen.count(Status.CANCELLED)
        previous = health


@given(command_sequences())
@EXAMPLES
def test_records_are_always_well_formed(commands: list[Command]) -> None:
    oracle = model(max_concurrent=2, max_tasks=4)
    for command in commands:
        oracle.apply(command)
        for job in oracle.jobs.values():
            assert job.submitted_at <= oracle.now
            if job.status is Status.QUEUED:
                assert job.started_at is None and job.finished_at is None
            if job.started_at is not None:
                assert job.submitted_at <= job.started_at
            assert (job.finished_at is not None) == job.status.is_terminal
            if job.finished_at is not None:
                assert (job.started_at or job.submitted_at) <= job.finished_at
            assert job.result is None or job.status is Status.SUCCEEDED
            assert job.error is None or job.status is Status.FAILED
            if job.status is Status.RUNNING:
                assert job.started_at is not None


# -- commands: JSON round trip ----------------------------------------------------------------

EVERY_COMMAND: list[Command] = [
    Submit("a"),
    Submit("b", ignores_cancel=True),
    Dispatch(),
    Finish("a", Succeed({"x": [1, 2.5, None, True, "s"]})),
    Finish("a", Succeed()),
    Finish("b", Raise("ValueError", "bad input")),
    Cancel("a"),
    AdvanceTime(1.5),
    Cleanup(3600),
    Shutdown(),
    GetResult("a"),
    Get("b"),
    ListJobs(),
    ListJobs("failed"),
    Submit("r", retry=RetryPolicy(max_retries=2, non_retryable=("KeyError",))),
    ComputeDelay(RetryPolicy(max_retries=1), 3, Jitter.EQUAL, 0.25, None, 500.0),
    Heartbeat("a"),
    DetectStuck(60.0),
    StartReaper(),
    StartReaper(ttl_seconds=5.0, sweep_interval_ms=1000.0),
    StopReaper(),
    StoreOutage(2),
    ReaperStatus(),
    ListExpired(3.5),
    ExpireLeases(60.0),
    OperatorAlerts(),
    StaleOwnerWrite("a", "heartbeat"),
    ParkRequest("scout", "approval-1"),
    OperatorRequests(),
    JobStoreFault(StoreFault(FaultKind.FAIL, 2), ExpireLeases(60.0)),
    JobStoreFault(StoreFault(FaultKind.CRASH, 1), AdvanceTime(30.0)),
    SubmitConcurrently(("a", "b", "c")),
    Restart(),
    StopBySignal(10.0),
    StopBySignal(10.0, "SIGINT", (AdvanceTime(3.0), Finish("a", Succeed(1)))),
    QueryExecutions(),
    QueryExecutions("failed", "schedule", ("scout", "critic"), 2.5, "timeout", 50, 25),
    ExecutionStats(),
    ExecutionStats(1.0, ("scout",)),
]


def test_every_command_type_is_covered() -> None:
    assert {type(command).__name__ for command in EVERY_COMMAND} == set(COMMAND_TYPES)


@pytest.mark.parametrize("command", EVERY_COMMAND, ids=describe)
def test_command_json_round_trip(command: Command) -> None:
    document = command_to_json(command)
    assert document["command"] == type(command).__name__
    text = json.dumps(document)  # really JSON
    assert command_from_json(json.loads(text)) == command


def test_a_store_fault_read_back_from_json_keeps_its_kind() -> None:
    # Equality alone cannot tell: the kind is a StrEnum, equal to its plain string. A trace
    # that came back with "fail" as a string replayed it as a crash.
    command = JobStoreFault(StoreFault(FaultKind.FAIL, 1), ExpireLeases(1.0))
    back = command_from_json(json.loads(json.dumps(command_to_json(command))))
    assert isinstance(back, JobStoreFault)
    assert back.fault.kind is FaultKind.FAIL
    assert back.fault.describe() == "store write 1 fails"
    with pytest.raises(ValueError, match="fail or crash, not 'boom'"):
        StoreFault("boom", 1)  # type: ignore[arg-type]


def test_finish_json_shape() -> None:
    assert command_to_json(Finish("a", Raise("E", "m"))) == {
        "command": "Finish", "job": "a",
        "outcome": {"kind": "Raise", "error_type": "E", "message": "m",
                    "retry_after_ms": None},
    }
    assert command_to_json(Dispatch()) == {"command": "Dispatch"}


def test_command_from_json_does_not_mutate_its_input() -> None:
    document = command_to_json(Finish("a", Succeed(1)))
    copy = json.loads(json.dumps(document))
    command_from_json(document)
    assert document == copy


@pytest.mark.parametrize("document", [
    {"command": "Explode"},
    {"command": None},
    {"job": "a"},
    {"command": "submit", "job": "a"},
])
def test_command_from_json_unknown_kind(document: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="unknown command") as caught:
        command_from_json(document)
    assert "Submit" in str(caught.value)  # the known kinds are listed


@pytest.mark.parametrize("document", [
    {"command": "Dispatch", "job": "a"},
    {"command": "Submit", "job": "a", "priority": 3},
    {"command": "Finish", "job": "a", "outcome": {"kind": "Succeed", "result": 1}, "x": 0},
])
def test_command_from_json_unknown_field(document: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="has no field"):
        command_from_json(document)


@pytest.mark.parametrize("document", [
    {"command": "Submit"},
    {"command": "Finish", "job": "a"},
    {"command": "Finish", "job": "a", "outcome": {"kind": "Explode"}},
    {"command": "Finish", "job": "a", "outcome": {"result": 1}},
    {"command": "Finish", "job": "a", "outcome": {"kind": "Raise", "error_type": "E"}},
    {"command": "Finish", "job": "a", "outcome": {"kind": "Succeed", "extra": 1}},
])
def test_command_from_json_malformed_fields_raise_value_error(document: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        command_from_json(document)


def test_describe_is_readable() -> None:
    assert describe(Submit("a")) == "Submit(job='a')"
    assert describe(Submit("a", ignores_cancel=True)) == "Submit(job='a', ignores_cancel=True)"
    assert describe(Finish("a", Succeed(3))) == "Finish('a', returns 3)"
    assert describe(Finish("a", Raise("E", "m"))) == "Finish('a', raises E('m'))"
    assert describe(Dispatch()) == "Dispatch()"


# -- the task manager's cancel and submit, and the drain (LC-026, LC-027, LC-028) ------------


def test_interrupting_cancel_ends_a_body_that_ignores_cancellation() -> None:
    oracle = ReferenceModel(RuntimeSettings(1, None, cancel_interrupts=True), T0)
    run(oracle, Submit("a", ignores_cancel=True), Submit("b"), Dispatch(), AdvanceTime(5))
    step_result = oracle.apply(Cancel("a"))
    assert step_result.answer is True and step_result.requirements[0] == "LC-026"
    assert oracle.jobs["a"].status is Status.CANCELLED and oracle.jobs["a"].finished_at == T1
    assert oracle.scripts["a"].interrupted == 1
    run(oracle, Finish("a", Succeed(1)), Dispatch())
    assert oracle.jobs["a"].result is None and oracle.jobs["b"].status is Status.RUNNING
    assert oracle.apply(Cancel("a")).answer is False


def test_a_cooperative_cancel_leaves_a_body_that_ignores_it_running() -> None:
    oracle = model(max_concurrent=1)
    run(oracle, Submit("a", ignores_cancel=True), Dispatch())
    assert oracle.apply(Cancel("a")).requirements[0] == "LC-013"
    assert oracle.jobs["a"].status is Status.RUNNING and oracle.scripts["a"].interrupted == 0


@pytest.mark.parametrize(("module", "answer"), [
    ("data.process_batch", ACCEPTED),
    ("billing.charge", REFUSED_UNKNOWN_MODULE),
    ("Data.batch", REFUSED_INVALID_MODULE),
    ("data..batch", REFUSED_INVALID_MODULE),
    ("", REFUSED_INVALID_MODULE),
    ("a" * 129, REFUSED_INVALID_MODULE),
    ("data.process-batch", REFUSED_INVALID_MODULE),
    (None, ACCEPTED),
])
def test_submit_checks_the_module_id(module: str | None, answer: str) -> None:
    oracle = ReferenceModel(RuntimeSettings(10, 5, modules=frozenset({"data.process_batch"})), T0)
    assert oracle.apply(Submit("a", module=module)).answer == answer
    assert ("a" in oracle.jobs) is (answer == ACCEPTED)


def test_module_check_comes_after_shutdown_and_before_the_cap() -> None:
    oracle = ReferenceModel(RuntimeSettings(10, 1, modules=frozenset({"data.x"})), T0)
    assert run(oracle, Submit("a", module="data.x"), Submit("b", module="Bad"),
               Submit("c", module="data.y"), Submit("d", module="data.x"), Shutdown(),
               Submit("e", module="Bad")) == [ACCEPTED, REFUSED_INVALID_MODULE,
                                              REFUSED_UNKNOWN_MODULE, REFUSED_CAPACITY, None,
                                              REFUSED_SHUT_DOWN]


def test_drain_lets_jobs_run_until_the_timeout_then_cancels_the_rest() -> None:
    oracle = ReferenceModel(RuntimeSettings(1, None, shutdown_mode="drain",
                                   drain_timeout_seconds=30.0), T0)
    run(oracle, Submit("a"), Submit("b"), Submit("c"), Dispatch(), Shutdown())
    assert oracle.apply(Submit("x")).answer == REFUSED_SHUT_DOWN
    assert oracle.jobs["a"].status is Status.RUNNING
    run(oracle, Finish("a", Succeed(1)), AdvanceTime(10), Dispatch(), AdvanceTime(10),
        Shutdown(), AdvanceTime(9))
    assert oracle.jobs["a"].status is Status.SUCCEEDED
    assert oracle.jobs["b"].status is Status.RUNNING and oracle.jobs["c"].status is Status.QUEUED
    oracle.apply(AdvanceTime(5))  # past the deadline in one step
    deadline = T0 + timedelta(seconds=30)
    assert [(job.status, job.finished_at) for job in (oracle.jobs["b"], oracle.jobs["c"])] == [
        (Status.CANCELLED, deadline), (Status.CANCELLED, deadline)]
    assert oracle.scripts["c"].starts == 0
    assert oracle.health().cancelled == 2 and oracle.health().processed == 1


def test_a_drain_with_no_timeout_ends_at_the_call() -> None:
    oracle = ReferenceModel(
        RuntimeSettings(1, None, shutdown_mode="drain", drain_timeout_seconds=0.0), T0)
    run(oracle, Submit("a"), Dispatch(), Shutdown())
    assert oracle.jobs["a"].status is Status.CANCELLED and oracle.drain_deadline is None
