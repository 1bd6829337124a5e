"""Blame ranking (conformance/blame.py): the one primary requirement of a divergence.

Issue 29's three misblamed cases, each also a gallery entry proven in every suite
(`first_start_kept`, `unknown_jitter_mode`, `tail_requeue`): here the rules themselves,
one difference at a time.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from jobconform.backends.loading import load_backend
from jobconform.conformance import blame
from jobconform.conformance.harness import Divergence, Harness
from jobconform.reference import backoff
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.lifecycle import JobState, Status
from jobconform.spec import Registry

T0 = datetime(2026, 1, 1, tzinfo=UTC)
POLICY = RetryPolicy(max_retries=2, retry_delay_ms=1000.0)
# A retried job waiting out its first retry's delay, as the oracle had it before a dispatch.
IN_BACKOFF = JobState(Status.QUEUED, T0, started_at=T0, retry_count=1, max_retries=2,
                      next_attempt_at=T0 + timedelta(seconds=1))
DISPATCH_REQUIREMENTS = ("LC-010", "RT-003", "RT-002")


def _dispatch_primary(field: str, expected: object, actual: object,
                      delay_holds: bool = False, now: datetime | None = None,
                      status: str = "running") -> str:
    return blame.record_primary(cmd.Dispatch(), field, expected, actual, IN_BACKOFF,
                                DISPATCH_REQUIREMENTS, ("LC-001", "LC-002"),
                                delay_holds=delay_holds, now=now, status=status)


def _spec_delay(question: cmd.ComputeDelay) -> float:
    return backoff.delay_ms(question.policy, question.attempt, question.jitter,
                            question.draw, question.previous_ms, question.retry_after_ms)


def _no_jitter_modes(question: cmd.ComputeDelay) -> float:
    if question.jitter is not Jitter.NONE:
        raise ValueError(f"no such jitter mode: {question.jitter.value}")
    return _spec_delay(question)


def _overflowing(question: cmd.ComputeDelay) -> float:
    policy = question.policy
    return min(policy.retry_delay_ms * policy.backoff_multiplier ** question.attempt,
               policy.max_retry_delay_ms)


def _twice_as_long(question: cmd.ComputeDelay) -> float:
    return 2 * _spec_delay(question)


def test_a_retried_start_that_keeps_the_first_start_time_breaks_the_timestamp_rule() -> None:
    # The status agrees (running, compared first): only the time is wrong, so it is the
    # record's timestamp rule, not "no retrying state" nor the delay.
    restarted = T0 + timedelta(seconds=1)
    assert _dispatch_primary("started_at", restarted, T0) == "LC-004"
    assert _dispatch_primary("started_at", restarted, T0, delay_holds=True) == "LC-004"


def test_a_due_retry_passed_over_whose_attempt_failed_at_once_in_the_oracle() -> None:
    # Queued on both sides: the oracle started it and its attempt failed back into the
    # queue, the runtime kept it waiting (RQ re-queues a due retry at the tail): its start
    # time is the previous attempt's. The queue order where the delay is right (RT-003),
    # the delay where it is not (RT-002) -- as for a status that differs.
    restarted = T0 + timedelta(seconds=1)
    assert _dispatch_primary("started_at", restarted, T0, delay_holds=True,
                             status="queued") == "RT-003"
    assert _dispatch_primary("started_at", restarted, T0, status="queued") == "RT-002"


def test_a_retry_due_by_the_runtimes_own_delay_but_not_started_lost_its_turn() -> None:
    # The runtime's delay is wrong (longer than the spec's) but had passed too: a worker
    # that fetches a due retry only at its next poll (procrastinate) keeps it waiting; the
    # turn (RT-003), not the delay.
    restarted = T0 + timedelta(seconds=1)
    for field, expected, actual, status in (("status", "running", "queued", "running"),
                                            ("started_at", restarted, T0, "queued")):
        assert blame.record_primary(
            cmd.Dispatch(), field, expected, actual, IN_BACKOFF, DISPATCH_REQUIREMENTS,
            ("LC-001", "LC-002"), status=status, due_for_runtime=True) == "RT-003"


def test_a_due_last_retry_left_queued_lost_its_turn_not_its_final_failure() -> None:
    # The oracle starts the job's last retry at the dispatch and its attempt fails for
    # good; the runtime, due by its own delay, did not start it (pgqueuer fetches a retry
    # only at its next poll): RT-003, the listed cause, not RT-004's final failure. A
    # runtime that did start it and re-queued it (a new start time) broke RT-004.
    last = replace(IN_BACKOFF, retry_count=2)
    kept = blame.record_primary(cmd.Dispatch(), "status", "failed", "queued", last,
                                DISPATCH_REQUIREMENTS, ("LC-001", "LC-002"), status="queued",
                                due_for_runtime=True, started_at=T0)
    assert kept == "RT-003"
    again = blame.record_primary(cmd.Dispatch(), "status", "failed", "queued", last,
                                 DISPATCH_REQUIREMENTS, ("LC-001", "LC-002"),
                                 status="queued", due_for_runtime=True,
                                 started_at=T0 + timedelta(seconds=1))
    assert again == "RT-004"


def test_a_sixth_state_for_a_job_in_backoff_breaks_rt003() -> None:
    assert _dispatch_primary("status", "running", "retrying") == "RT-003"


def test_a_due_retried_job_not_started_breaks_rt003_when_the_delay_is_right() -> None:
    # The backend's own delay agrees, yet it started another job in its turn: the queue
    # order after a retry (re-queued at the tail), not the delay.
    assert _dispatch_primary("status", "running", "queued", delay_holds=True) == "RT-003"
    # Its delay is wrong: the job was not yet due on the backend's side.
    assert _dispatch_primary("status", "running", "queued") == "RT-002"
    # Started before it was due is the delay's (a re-queue without its backoff), whatever
    # the backend's delay function answers when asked.
    assert _dispatch_primary("status", "queued", "running", delay_holds=True) == "RT-002"
    assert _dispatch_primary("status", "queued", "running", delay_holds=True,
                             now=IN_BACKOFF.next_attempt_at - timedelta(seconds=0.5)) == "RT-002"


def test_a_due_retried_job_started_out_of_its_turn_breaks_rt003() -> None:
    # Due, its delay right on both sides, and started where the oracle starts another job
    # (the turn an earlier re-queue at the tail gave it): the queue's order, not the delay.
    assert _dispatch_primary("status", "queued", "running", delay_holds=True,
                             now=IN_BACKOFF.next_attempt_at) == "RT-003"


@pytest.mark.parametrize(("function", "question", "primary"), [
    # A mode the function does not know, whatever the attempt: the jitter (RT-009).
    (_no_jitter_modes, cmd.ComputeDelay(POLICY, 1, Jitter.EQUAL, 0.5), "RT-009"),
    (_no_jitter_modes, cmd.ComputeDelay(POLICY, 1, Jitter.DECORRELATED, 0.5, 1000.0),
     "RT-009"),
    # An overflow raises on the plain question too: the exponential and its cap (RT-002).
    (_overflowing, cmd.ComputeDelay(POLICY, 1100), "RT-002"),
    (_overflowing, cmd.ComputeDelay(POLICY, 1100, Jitter.FULL, 0.5), "RT-002"),
    (_twice_as_long, cmd.ComputeDelay(POLICY, 1, Jitter.FULL, 0.5), "RT-002"),
], ids=["equal-unknown", "decorrelated-unknown", "overflow", "overflow-jittered",
        "wrong-exponent"])
def test_a_delay_function_that_raises_is_blamed_like_one_that_answers_wrong(
        function: blame.DelayFunction, question: cmd.ComputeDelay, primary: str) -> None:
    assert blame.delay_primary(question, function) == primary


def test_the_delay_holds_only_where_the_backends_function_gives_the_spec_delay() -> None:
    assert blame.retry_delay_holds(IN_BACKOFF, POLICY, _spec_delay)
    assert blame.retry_delay_holds(IN_BACKOFF, POLICY, _no_jitter_modes)  # none asked
    assert not blame.retry_delay_holds(IN_BACKOFF, POLICY, _twice_as_long)
    # Longer within the tolerance still holds a job past the instant the spec makes it
    # due (node-retry waits 1 ms for a zero base): the delay's fault, not a lost turn.
    zero_base = RetryPolicy(max_retries=2, retry_delay_ms=0.0)
    assert not blame.retry_delay_holds(IN_BACKOFF, zero_base, lambda question: 1.0)
    assert blame.retry_delay_holds(IN_BACKOFF, zero_base, _spec_delay)
    # Nothing to ask: not a retried job, no policy, no delay function.
    assert not blame.retry_delay_holds(JobState(Status.QUEUED, T0), POLICY, _spec_delay)
    assert not blame.retry_delay_holds(IN_BACKOFF, None, _spec_delay)
    assert not blame.retry_delay_holds(IN_BACKOFF, POLICY, None)


def test_a_detection_pass_that_changes_a_queued_job_breaks_st004() -> None:
    queued = JobState(Status.QUEUED, T0)
    assert blame.record_primary(cmd.DetectStuck(60.0), "status", "queued", "failed", queued,
                                ("ST-002", "ST-003", "ST-004"),
                                ("LC-001", "LC-002")) == "ST-004"


def test_a_lease_pass_that_spends_a_retry_or_fails_with_its_own_error_breaks_rd() -> None:
    # RQ re-delivers a lapsed job as a retry, and fails one with AbandonedJobError: the
    # retry count and the error a lease pass leaves are RD-001's and RD-003's, whatever
    # the retry and error rules say of other commands.
    running = JobState(Status.RUNNING, T0)
    rules = ("RD-001", "RD-002", "RD-003", "RD-005")
    assert blame.record_primary(cmd.ExpireLeases(60.0), "retry_count", 0, 1, running, rules,
                                ("RT-008", "RT-003")) == "RD-001"
    assert blame.record_primary(cmd.ExpireLeases(60.0), "error",
                                "poison_lease: re-delivery cap reached", "AbandonedJobError",
                                running, rules, ("LC-006", "LC-007")) == "RD-003"


@pytest.mark.parametrize(("expected", "actual", "primary"), [
    # Refused for capacity where the spec refuses a shut-down runtime: its cap was full
    # of jobs it took after shutdown (LC-023), not a capacity rule broken.
    (cmd.REFUSED_SHUT_DOWN, cmd.REFUSED_CAPACITY, "LC-023"),
    (cmd.REFUSED_CAPACITY, cmd.REFUSED_SHUT_DOWN, "LC-009"),
    ("job-1", cmd.REFUSED_CAPACITY, "LC-009"),
    (cmd.REFUSED_SHUT_DOWN, "job-1", "LC-023"),
    # The module check's place among the refusals is LC-027's, on either side.
    (cmd.REFUSED_CAPACITY, cmd.REFUSED_INVALID_MODULE, "LC-027"),
    (cmd.REFUSED_UNKNOWN_MODULE, cmd.REFUSED_SHUT_DOWN, "LC-027"),
])
def test_a_wrong_submit_answer_is_blamed_on_the_spec_refusal(expected: str, actual: str,
                                                            primary: str) -> None:
    assert blame.answer_primary(cmd.Submit("a"), expected, actual, {}, T0) == primary


@pytest.mark.parametrize(("actual", "failed_sweeps", "primary"), [
    # No sweep at all where one failed on the store: the sweep's timing (a reaper that
    # sweeps only when its worker polls), not how it handles the failure.
    ({"running": True, "sweeps": 0, "failed_sweeps": 0, "deleted": 0}, 1, "RP-002"),
    # The sweep was made, and its failure counted as a success: the failure handling.
    ({"running": True, "sweeps": 1, "failed_sweeps": 0, "deleted": 0}, 1, "RP-005"),
    # Stopped after the failed sweep.
    ({"running": False, "sweeps": 0, "failed_sweeps": 1, "deleted": 0}, 1, "RP-005"),
])
def test_a_wrong_reaper_status_is_blamed_on_the_sweep_it_shows(
        actual: dict[str, object], failed_sweeps: int, primary: str) -> None:
    expected = {"running": True, "sweeps": 0, "failed_sweeps": 1, "deleted": 0}
    assert blame.answer_primary(cmd.ReaperStatus(), expected, actual, {}, T0,
                                failed_sweeps) == primary


@pytest.mark.parametrize(("expected", "actual", "held", "primary"), [
    # The status the sweeps a store fault met leave shows a bug the fault did not cause:
    # blamed as without it (issue 33: a shrunk counterexample keeps a fault it does not
    # need), no sweep at its boundary ...
    ({"running": True, "sweeps": 1, "failed_sweeps": 0, "deleted": 0},
     {"running": True, "sweeps": 0, "failed_sweeps": 0, "deleted": 0}, Status.SUCCEEDED,
     "RP-002"),
    # ... a reaper stopped by the failed sweep ...
    ({"running": True, "sweeps": 0, "failed_sweeps": 1, "deleted": 0},
     {"running": False, "sweeps": 0, "failed_sweeps": 1, "deleted": 0}, Status.SUCCEEDED,
     "RP-005"),
    # ... a sweep the fault struck where the oracle's made no write: it deleted a job that
    # had not expired, an active one where one is held.
    ({"running": True, "sweeps": 2, "failed_sweeps": 0, "deleted": 0},
     {"running": True, "sweeps": 1, "failed_sweeps": 1, "deleted": 0}, Status.QUEUED,
     "RP-004"),
    ({"running": True, "sweeps": 2, "failed_sweeps": 0, "deleted": 0},
     {"running": True, "sweeps": 1, "failed_sweeps": 1, "deleted": 0}, Status.SUCCEEDED,
     "RP-003"),
    # What the fault explains is the fault's rule (None): deletes before it uncounted.
    ({"running": True, "sweeps": 0, "failed_sweeps": 1, "deleted": 1},
     {"running": True, "sweeps": 0, "failed_sweeps": 1, "deleted": 0}, Status.SUCCEEDED,
     None),
])
def test_a_reaper_status_after_a_store_fault_is_blamed_on_the_faults_rule_only_for_its_part(
        expected: dict[str, object], actual: dict[str, object], held: Status,
        primary: str | None) -> None:
    failed_sweeps = expected["failed_sweeps"]
    assert isinstance(failed_sweeps, int)
    jobs = {"j1": JobState(held, T0)}
    assert blame.faulted_sweeps_primary(expected, actual, failed_sweeps, jobs) == primary


def test_a_retry_started_early_on_an_interval_it_was_given_breaks_rt003() -> None:
    # A `retry-intervals` backend has no formula of its own (RT-002 is left out of its
    # claim): started before the interval the kit gave it had passed, it broke the wait
    # in backoff (RT-003). RQ's scheduler, scoring whole seconds, does this.
    early = IN_BACKOFF.next_attempt_at - timedelta(seconds=0.5)  # type: ignore[operator]
    assert blame.record_primary(cmd.Dispatch(), "status", "queued", "running", IN_BACKOFF,
                                DISPATCH_REQUIREMENTS, ("LC-001", "LC-002"),
                                delay_holds=True, now=early, delays_given=True) == "RT-003"


def test_a_lease_pass_that_requeues_fewer_under_a_fault_is_blamed_on_the_fault_rule() -> None:
    # Issue 33: under an injected store fault, a pass that re-queued fewer jobs than the
    # same pass without it lost a re-delivery to the fault (RD-007), not a lease boundary.
    from jobconform.reference.faults import FaultKind, StoreFault

    now = datetime(2026, 1, 1, tzinfo=UTC)
    under_fault = cmd.JobStoreFault(StoreFault(FaultKind.FAIL, 2), cmd.ExpireLeases(2.0))
    lost = blame.answer_primary(under_fault, {"requeued": 1, "parked": 0},
                                {"requeued": 0, "parked": 0}, {}, now)
    assert lost == "RD-007"
    # More than the pass should touch is still the boundary's, fault or none.
    extra = blame.answer_primary(under_fault, {"requeued": 0, "parked": 0},
                                 {"requeued": 1, "parked": 0}, {}, now)
    assert extra == "RD-005"


def test_a_lease_pass_that_misses_a_job_past_its_lease_is_blamed_on_the_lease_rule() -> None:
    # Issue 33: a pass that re-queues fewer jobs than it should (a silence counted in whole
    # seconds leaves a job silent for the lease plus a microsecond) breaks RD-001, the rule
    # that takes every job past its lease; RD-005 is for jobs touched before their time.
    now = datetime(2026, 1, 1, tzinfo=UTC)
    missed = blame.answer_primary(cmd.ExpireLeases(60.0), {"requeued": 1, "parked": 0},
                                  {"requeued": 0, "parked": 0}, {}, now)
    assert missed == "RD-001"
    extra = blame.answer_primary(cmd.ExpireLeases(60.0), {"requeued": 0, "parked": 0},
                                 {"requeued": 1, "parked": 0}, {}, now)
    assert extra == "RD-005"


@pytest.mark.parametrize(("entry_name", "primary"), [
    ("reaper_sweeps_every_minute", "RP-002"),
    ("reaper_stops_after_error", "RP-005"),
    ("reaper_deletes_pending", "RP-004"),
    ("stuck_fails_queued", "ST-004"),
])
def test_the_default_runs_shrunk_counterexample_names_what_the_self_test_proves(
        entry_name: str, primary: str, tmp_path: Path) -> None:
    # The self-test does not shrink; `jobconform run` does, and its shrunk counterexample
    # of these gallery bugs carried a store fault, or a boundary, that named another
    # rule than the self-test's (issue 33). Run as the user's run does, at its defaults.
    from jobconform.conformance.defaults import RUN_EXAMPLES, RUN_SEED
    from jobconform.conformance.runner import RunConfig, run_hypothesis
    from jobconform.conformance.selftest import gallery
    from jobconform.spec import load_registry

    registry = load_registry()
    entry = next(entry for entry in gallery() if entry.name == entry_name)
    config = RunConfig(entry.target, entry.profile, ("hypothesis",), seed=RUN_SEED,
                       examples=RUN_EXAMPLES, work_dir=tmp_path,
                       machine_areas=frozenset({registry.requirement(primary).area}))
    failed = [case for case in run_hypothesis(config, registry).cases if not case.passed]
    assert [case.primaries[:1] for case in failed] == [(primary,)]


def test_an_instant_truncated_or_rounded_to_the_millisecond_is_the_precision_rule() -> None:
    """A record instant read back at a millisecond's precision is LC-005's (issue 33),
    whatever field or command: a store keeping milliseconds, a codec or a driver dropping
    microseconds."""
    exact = datetime(2026, 1, 1, 0, 0, 1, 500_600, tzinfo=UTC)
    for coarse in (exact.replace(microsecond=500_000), exact.replace(microsecond=501_000)):
        assert blame.kept_coarser(exact, coarse)
        assert blame.record_primary(cmd.Dispatch(), "started_at", exact, coarse, None,
                                    ("LC-010",), ("LC-004",)) == "LC-005"
    # A millisecond late on a whole millisecond, another instant, or the last whole second
    # (a clock that stopped there, as much as a store keeping seconds) is a wrong time.
    on_grid = exact.replace(microsecond=500_000)
    assert not blame.kept_coarser(on_grid, on_grid + timedelta(milliseconds=1))
    assert not blame.kept_coarser(exact, exact + timedelta(seconds=5))
    assert not blame.kept_coarser(exact, exact.replace(microsecond=0))
    assert not blame.kept_coarser(exact, None)
    assert not blame.kept_coarser(exact, exact)


def test_what_the_submission_named_is_blamed_on_its_field_rule() -> None:
    """Options dropped from the record are LC-035's, though the submission that named them
    also named an owner and a trigger (LC-033 among the command's requirements)."""
    submit = cmd.Submit("a", owner="bob", trigger="manual", options={"model": "haiku"})
    assert blame.record_primary(submit, "options", {"model": "haiku"}, None, None,
                                ("LC-033", "LC-035"), ("LC-035",)) == "LC-035"
    assert blame.record_primary(submit, "owner", "bob", None, None,
                                ("LC-033", "LC-035"), ("LC-033",)) == "LC-033"


def test_a_worker_still_stopping_after_the_drain_is_blamed_on_the_drain() -> None:
    # The report's status is the consequence; when the drain ends is the cause (LC-028),
    # at a step the drain decides. Elsewhere the report's own rule (LC-029).
    assert blame.worker_status_primary("stopped", "stopping", ("LC-028", "LC-025")) == "LC-028"
    assert blame.worker_status_primary("stopping", "stopped", ("LC-028",)) == "LC-028"
    assert blame.worker_status_primary("stopped", "stopping", ("LC-022",)) == "LC-029"
    assert blame.worker_status_primary("running", "stopped", ("LC-028",)) == "LC-029"
def test_the_alerts_of_a_faulted_lease_pass_name_the_cause_of_its_wrong_answer() -> None:
    alerted = [("a", "running")]
    # Alerted after the job failed, or failed with no alert: the park's order (RD-003).
    assert blame.faulted_alerts_primary(alerted, [("a", "failed")]) == "RD-003"
    assert blame.faulted_alerts_primary(alerted, [], frozenset({"a"})) == "RD-003"
    # Alerted again by the restarted rescuer: the fault's doubled alert (RD-007).
    assert blame.faulted_alerts_primary(alerted, alerted * 2, frozenset({"a"})) == "RD-007"
    # Neither alerted nor failed: never parked at its cap (RD-002).
    assert blame.faulted_alerts_primary(alerted, []) == "RD-002"
    # The alerts agree: they say nothing; the answer's own rule.
    assert blame.faulted_alerts_primary(alerted, alerted) is None
def test_a_crash_that_leaves_fewer_parked_with_the_alerts_right_is_the_faults() -> None:
    # A park made in one write where the spec makes two: the crash at write 2 meets it,
    # and the restart does not make it again. The same pass without the crash parks right.
    from jobconform.reference.faults import FaultKind, StoreFault
    crash = cmd.JobStoreFault(StoreFault(FaultKind.CRASH, 2), cmd.ExpireLeases(60.0))
    expected, actual = {"requeued": 1, "parked": 1}, {"requeued": 1, "parked": 0}
    assert blame.answer_primary(crash, expected, actual, {}, T0) == "RD-007"
    assert blame.answer_primary(cmd.ExpireLeases(60.0), expected, actual, {}, T0) == "RD-002"
def test_a_stop_under_drain_that_cut_the_work_short_is_told_from_a_late_kill() -> None:
    # Cut short at the signal (RS-005): exited at once where the grace period had to run
    # out, a job cancelled where it ended by itself, or ended sooner than the drain let
    # it. A job left running at the kill is how the grace period ended it (RS-006).
    from jobconform.conformance.harness import Divergence, _cut_short
    stop = cmd.StopBySignal()
    def shows(what: str, expected: object, actual: object) -> bool:
        return _cut_short(Divergence(("RS-006",), what, expected, actual, [stop], {}), stop)
    assert shows("the answer to StopBySignal()", cmd.ESCALATED_TO_SIGKILL, cmd.EXITED_ON_SIGTERM)
    assert shows("job 'a' status", "failed", "cancelled")
    assert shows("job 'a' finished_at", T0 + timedelta(seconds=30), T0)
    assert not shows("job 'a' status", "failed", "running")
    assert not shows("the answer to StopBySignal()", cmd.EXITED_ON_SIGTERM,
                     cmd.ESCALATED_TO_SIGKILL)


def test_a_job_the_stop_ended_and_a_later_write_moved_is_a_late_completion() -> None:
    # The runtime exited on the signal and the job's status agrees: the stop ended it, and
    # a write after that moved its end (LC-003). Killed instead, or an end no later than
    # the oracle's, the stop's own rule stands.
    later = T0 + timedelta(seconds=10)
    assert blame.rewritten_after_stop("finished_at", T0, later, exited_on_signal=True)
    assert not blame.rewritten_after_stop("finished_at", T0, later, exited_on_signal=False)
    assert not blame.rewritten_after_stop("finished_at", later, T0, exited_on_signal=True)
    assert not blame.rewritten_after_stop("status", "cancelled", "succeeded",
                                          exited_on_signal=True)


@pytest.mark.parametrize(("target", "primary"), [
    ("jobconform.conformance.gallery.sql:sql_unconditioned_write", "LC-003"),
    ("jobconform.conformance.restart.gallery:stop_signal_ignored", "RS-004"),
])
def test_a_stop_by_signal_names_the_rewrite_apart_from_a_signal_ignored(
        target: str, primary: str, registry: Registry) -> None:
    # A store without the status check lets the cancelled body's report rewrite the job
    # the stop cancelled (its finish moves to the grace period's end): LC-003, as after a
    # plain shutdown. A runtime that ignores SIGTERM is killed: the stop's rule (RS-004).
    harness = Harness(load_backend(target), registry.profile("canonical"), registry)
    try:
        with pytest.raises(Divergence) as caught:
            for command in (cmd.Submit("a"), cmd.Dispatch(), cmd.StopBySignal()):
                harness.run(command)
        assert caught.value.primary == primary
    finally:
        harness.close()


def test_a_retried_start_that_keeps_the_first_start_is_no_early_start_under_a_retry_after() -> None:
    # A retry-after held the job past its own delay; the retried attempt started when the
    # oracle's did (the status agrees), showing the first attempt's start: the record's
    # time (LC-004), not a start before the retry-after (RT-010), which shows a start
    # time of its own.
    retried_at = T0 + timedelta(seconds=5)
    def primary(actual: datetime, status: str = "running") -> str:
        return blame.record_primary(cmd.Dispatch(), "started_at", retried_at, actual,
                                    IN_BACKOFF, DISPATCH_REQUIREMENTS, ("LC-004",),
                                    retry_after_ignored=True, now=retried_at, status=status)
    assert primary(T0) == "LC-004"
    assert primary(T0 + timedelta(seconds=1)) == "RT-010"


def test_a_drain_cut_short_at_the_signal_is_the_stop_s_bug_not_the_drain_s(
        registry: Registry) -> None:
    # stop_signal_drain_cut_short cut its work short at the signal by opening its runtime
    # in cancel mode, so a drain shutdown called in the program was cut short too: run
    # over every area, every suite named LC-028 beside RS-005 (issue 33), a second bug in
    # the entry, not a misblame. Now a plain drain agrees with the oracle, and the stop by
    # signal is blamed on RS-005.
    target = "jobconform.conformance.restart.gallery:stop_signal_drain_cut_short"
    profile = registry.profile("draining-worker")
    drained = Harness(load_backend(target), profile, registry)
    try:
        for command in (cmd.Submit("a"), cmd.Dispatch(), cmd.Shutdown(),
                        cmd.Finish("a", cmd.Succeed(1)), cmd.AdvanceTime(60)):
            drained.run(command)
    finally:
        drained.close()
    signalled = Harness(load_backend(target), profile, registry)
    try:
        with pytest.raises(Divergence) as caught:
            for command in (cmd.Submit("a"), cmd.Dispatch(), cmd.StopBySignal()):
                signalled.run(command)
        assert caught.value.primary == "RS-005"
    finally:
        signalled.close()


def test_a_start_before_the_retry_after_under_a_policy_of_no_delay_is_the_floor_s() -> None:
    # The policy's own delay (0) had passed; only the server's retry-after held the job.
    # A runtime that started it at once broke the floor (RT-010), whether it drops the
    # retry-after alone or every delay (threaded_retry_without_backoff, whose delay
    # function is the shipped one): nothing seen tells the two apart, so the blame stays
    # RT-010 and that entry declares RT-010 among what it also breaks (issue 33).
    held = replace(IN_BACKOFF, next_attempt_at=T0 + timedelta(seconds=20))
    now = T0 + timedelta(seconds=1)
    for delay_holds in (True, False):
        assert blame.record_primary(cmd.Dispatch(), "status", Status.QUEUED.value,
                                    Status.RUNNING.value, held, DISPATCH_REQUIREMENTS,
                                    ("LC-001",), retry_after_ignored=True,
                                    delay_holds=delay_holds, now=now) == "RT-010"
