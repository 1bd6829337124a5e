"""Blame ranking: which one requirement a divergence breaks, and which are only involved.

A command touches several requirements (a dispatch decides the concurrency limit, the
order, backoff and the bodies that end), and a record field is governed by a few more.
When the backend and the oracle disagree, a reader needs the one requirement that was
broken: the most specific one for the field and the command that differed. The others
are listed as "also involved".

The ranking is explicit domain knowledge, one rule per kind of difference, so that a
gallery backend with one bug class is blamed on that class's requirement; the self-test
checks exactly that for every entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta

from jobconform.reference import backoff
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.commands import Command
from jobconform.reference.faults import FaultKind
from jobconform.reference.lifecycle import (
    JobState,
    Status,
    cut_short,
    cut_text,
)
from jobconform.reference.model import WORKER_STOPPED, WORKER_STOPPING

# Requirements every observation checks whatever the command: they are never the most
# specific explanation when a command's own requirement is also involved.
GENERIC = frozenset({"LC-001", "LC-002", "LC-004", "LC-005", "LC-024", "LC-025", "LC-018"})

# Two delay functions agree when within this many milliseconds: SDKs that return whole
# milliseconds (truncating) must still pass.
DELAY_TOLERANCE_MS = 1.0

# A backend's own delay function, asked one question (Runtime.compute_delay_ms).
DelayFunction = Callable[[cmd.ComputeDelay], float]

# The unit a store or a driver wrongly keeps instants in (LC-005 asks for microseconds).
# Whole seconds are left out: an instant truncated to the second cannot be told from one
# read on a clock that stopped at the last whole second (the gallery's process_own_clock,
# a half-second into a sequence), whose time is wrong, not coarse (LC-004).
_COARSE_UNIT = timedelta(milliseconds=1)


def kept_coarser(expected: object, actual: object) -> bool:
    """`actual` is `expected` truncated or rounded to the millisecond: the instant was kept
    or read at a coarser precision than LC-005's microsecond (a store column keeping
    milliseconds, a driver or codec dropping microseconds)."""
    if not (isinstance(expected, datetime) and isinstance(actual, datetime)
            and expected.tzinfo is not None and actual.tzinfo is not None):
        return False
    within = (expected - datetime.min.replace(tzinfo=expected.tzinfo)) % _COARSE_UNIT
    truncated = expected - within
    return bool(within) and actual in (truncated, truncated + _COARSE_UNIT)


def ranked(requirements: Iterable[str], primary: str | None = None) -> tuple[str, ...]:
    """The requirements without repeats, the primary first (the default rank's if None)."""
    unique = tuple(dict.fromkeys(requirements))
    if primary is None:
        primary = default_primary(unique)
    if primary is None:
        return unique
    return (primary, *(rid for rid in unique if rid != primary))


def default_primary(requirements: Iterable[str]) -> str | None:
    """The first requirement that is not generic, else the first one."""
    unique = tuple(requirements)
    for rid in unique:
        if rid not in GENERIC:
            return rid
    return unique[0] if unique else None


def _first(wanted: Iterable[str], among: Iterable[str]) -> str | None:
    present = set(among)
    return next((rid for rid in wanted if rid in present), None)


def record_primary(command: Command | None, field: str, expected: object, actual: object,
                   job_before: JobState | None, command_requirements: tuple[str, ...],
                   field_requirements: tuple[str, ...],
                   retry_after_ignored: bool = False, delay_holds: bool = False,
                   now: datetime | None = None, delays_given: bool = False,
                   status: object = None, due_for_runtime: bool = False,
                   started_at: object = None) -> str:
    """The requirement a difference in one record field breaks.

    Args:
        command: the command after which the field differed.
        field: the record field (`status`, `started_at`, `retry_count`, ...).
        expected, actual: the field's values, the oracle's and the backend's.
        job_before: the oracle's record of that job before the command (None if new).
        command_requirements: what the oracle says decided the command.
        field_requirements: what governs the field whatever the command.
        retry_after_ignored: the job waits in backoff only because of a server's
            retry-after, its plain delay having passed.
        delay_holds: the backend's own delay function gives the spec's delay for the
            retry the job waits out (`retry_delay_holds`): a retried job the backend did
            not start when due then lost its turn (RT-003), not to a wrong delay (RT-002).
        now: the virtual time of the command; with `delay_holds`, a retried job that
            was due then and started out of its turn broke the queue's order (RT-003).
        delays_given: the backend waits out the intervals the kit gave it
            (`retry-intervals`) and has no delay formula (RT-002 left out): a retried job
            started before its interval passed broke its backoff's wait (RT-003).
        status: the status the backend's record shows (compared first, so where another
            field differs, the oracle's too).
        due_for_runtime: the job in backoff was due by the backend's own delay function
            (`delay_holds` or not): one the backend then did not start at a dispatch lost
            its turn (RT-003), whatever its delay.
        started_at: the start time the backend's record shows (compared with the job's
            before the command: the same one means the backend did not start it again).
    """
    involved = (*command_requirements, *field_requirements)
    if kept_coarser(expected, actual):
        return "LC-005"  # the right instant at a millisecond's precision
    if field in ("owner", "trigger", "options"):
        # What the submission named, shown on the record as named: only the field's own
        # rule governs it (LC-033, LC-035), whatever else the submission decided.
        return field_requirements[0]
    in_backoff = job_before is not None and job_before.retry_count > 0 and (
        job_before.status in (Status.QUEUED, Status.CANCELLED))
    lease_pass = isinstance(command, cmd.ExpireLeases) or (
        isinstance(command, cmd.JobStoreFault) and isinstance(command.command, cmd.ExpireLeases))
    if field in ("error", "result") and cut_text(expected, actual):
        return "LC-039"  # a long error or result cut to a column's width or a limit
    if field == "retry_count" and lease_pass:
        return "RD-001"  # a re-delivery spends no retry (RQ's is a retry), fault or not
    if field == "error" and lease_pass:
        return "RD-003"  # a parked job fails with the poison error, no other
    if field in ("retry_count", "max_retries"):
        return _first(("RT-003", "RT-008") if field == "retry_count" else ("RT-001", "RT-008"),
                      involved) or field_requirements[0]
    # The previous attempt's start kept on a retried attempt that started when the oracle's
    # did (the status agrees): the record's time, not an early start (issue 33).
    kept_previous_start = (field == "started_at" and job_before is not None
                           and actual == job_before.started_at)
    if (retry_after_ignored and in_backoff and field in ("status", "started_at")
            and not kept_previous_start):
        return "RT-010"  # started after its own delay, before the server's retry-after
    if field == "last_heartbeat":
        if (isinstance(command, cmd.Heartbeat) and job_before is not None
                and job_before.status.is_terminal):
            return "LC-003"  # a heartbeat written into a record that has ended
        if (job_before is not None and job_before.status is Status.CANCELLED
                and job_before.started_at is None):
            return "LC-012"  # a heartbeat from the body of a job cancelled before it started
        return "ST-001"
    if field == "alerted":
        return "RD-003"  # parked without the operator alert first
    if field == "poisoned":
        return "RD-002" if expected is True else "RD-003"
    if field == "redelivery_count":
        if (isinstance(command, cmd.JobStoreFault) and isinstance(expected, int)
                and isinstance(actual, int) and actual < expected):
            return "RD-007"  # a re-delivery the fault's write or crash never counted
        if isinstance(command, cmd.Heartbeat | cmd.Dispatch):
            return "RD-004"  # progress or a new delivery must not reset the count
        return "RD-001"
    if (field == "status" and expected == Status.FAILED.value
            and actual == Status.QUEUED.value and job_before is not None
            and job_before.redelivery_count > 0 and isinstance(command, cmd.ExpireLeases)):
        return "RD-002"  # re-queued past the cap instead of parked
    if (isinstance(command, cmd.Dispatch) and in_backoff and field == "status"
            and actual == Status.QUEUED.value and (delay_holds or due_for_runtime)
            and job_before is not None and started_at == job_before.started_at):
        # Due by the backend's own delay, left queued at this dispatch and not started
        # again (its start time is the previous attempt's): whatever the oracle's attempt
        # then did (failed for good, say), the runtime lost the job's turn (RT-003).
        return "RT-003"
    if (job_before is not None and job_before.max_retries > 0 and field == "status"
            and expected == Status.FAILED.value and actual == Status.QUEUED.value):
        # Failed in the oracle, retried by the backend: with retries left the error type
        # was listed as non-retryable (RT-005); with none left, the last failure (RT-004).
        return "RT-005" if job_before.retry_count < job_before.max_retries else "RT-004"
    if (isinstance(command, cmd.DetectStuck) and job_before is not None
            and job_before.status is not Status.RUNNING):
        return "ST-004"  # a detection pass changed a queued or terminal job
    if isinstance(command, cmd.Dispatch):
        if job_before is not None and job_before.status is Status.CANCELLED:
            if in_backoff:
                return "RT-006"
            # A job that had started: its outcome overwrote the cancel (a late completion);
            # one that never had: it started although cancelled.
            return "LC-003" if job_before.started_at is not None else "LC-012"
        if (job_before is not None and job_before.redelivery_count > 0
                and job_before.status is Status.QUEUED and field == "status"):
            return "RD-001"  # the re-delivered job did not run again as the same job
        # A retried job the oracle started at this dispatch and whose attempt failed
        # back into the queue at once agrees in status; its start time shows that the
        # runtime did not start it (it kept the previous attempt's).
        passed_over = (field == "started_at" and status == Status.QUEUED.value
                       and job_before is not None and actual == job_before.started_at != expected)
        if in_backoff and (field == "status" or passed_over):
            if actual not in _status_values() and field == "status":
                return "RT-003"  # backoff shown as a state of its own
            due = job_before is not None and now is not None and (
                job_before.next_attempt_at is None or job_before.next_attempt_at <= now)
            not_started = passed_over or expected == Status.RUNNING.value
            if ((delay_holds or due_for_runtime) and not_started) or (
                    delay_holds and actual == Status.RUNNING.value and due):
                # Due on the backend's side too, by its own delay, yet not started at this
                # dispatch like any queued job (a retry re-queued at the tail, or fetched
                # only at the worker's next poll); or, its delay right, started ahead of a
                # job whose turn it was: the order, not the delay.
                return "RT-003"
            if delays_given:
                return "RT-003"  # early on an interval it was given: the wait, not a formula
            return "RT-002"  # it started at the wrong time: the delay decides when
        # A start time that differs while the status agrees (a retried attempt showing
        # the first attempt's start) falls to the timestamp rule below (LC-004).
        if field == "started_at" and expected is not None and actual is None:
            # The job did not start at this dispatch although a slot was free for it (its
            # status may agree: a retried attempt that failed at once is queued again).
            return "LC-010"
    if (isinstance(command, cmd.Finish) and job_before is not None
            and job_before.status.is_terminal):
        return "LC-003"  # an outcome arriving after the job ended must change nothing
    if (isinstance(command, cmd.Cancel) and in_backoff and field == "status"
            and expected == Status.CANCELLED.value
            and actual in (Status.FAILED.value, Status.SUCCEEDED.value)):
        return "LC-003"  # the decided outcome of an earlier attempt overwrote the cancel
    if field in ("submitted_at", "started_at", "finished_at"):
        if isinstance(actual, datetime) and actual.utcoffset() is None:
            return "LC-005"  # a naive datetime, whatever its value
        return "LC-004"  # the status agrees (it is compared first): the time is wrong
    if field == "status" and actual not in _status_values():
        return _first(("RT-003",), involved) or "LC-001"
    if field == "error" and isinstance(expected, str) and isinstance(actual, str):
        return _first(("ST-002", "LC-007"), involved) or "LC-007"
    return default_primary(involved) or field_requirements[0]


def rewritten_after_stop(field: str, expected: object, actual: object,
                         exited_on_signal: bool) -> bool:
    """Whether a record difference after a stop by signal shows a job that the stop ended
    written again later (LC-003), rather than a stop gone wrong (RS-004..RS-007).

    The runtime exited on the signal, as the oracle says it does (the stop's answer
    agreed), and the job's status is the oracle's (compared first): the stop ended it as
    it should. Its end is later than the oracle's, so a write after the stop moved it: the
    body's late report of the cancel, which a store that does not check the status it
    expects lets through (sql_unconditioned_write). A runtime that ignored the signal is
    killed instead, its answer differs, and its records are the stop's consequence, blamed
    on the stop's rule (process_sigterm_ignored; issue 33: the cause, not a consequence).

    Args:
        field: the record field that differed.
        expected, actual: its values, the oracle's and the backend's.
        exited_on_signal: the runtime exited on the signal, as the oracle's did.
    """
    return (exited_on_signal and field == "finished_at" and isinstance(expected, datetime)
            and isinstance(actual, datetime) and actual > expected)


def _status_values() -> frozenset[object]:
    return frozenset(status.value for status in Status)


def delay_primary(question: cmd.ComputeDelay, backend_delay: DelayFunction) -> str:
    """Which part of a wrong delay is wrong, asked of the backend's own (pure) function
    with simpler questions: the exponential and its cap (RT-002), then the jitter
    (RT-009), then the retry-after floor (RT-010).

    A delay function that raises gives a wrong answer like any other: one that overflows
    at a large attempt breaks RT-002 (a very large n yields the cap), one that knows no
    such jitter mode breaks RT-009 (every mode is defined), whichever question raised.
    """
    plain = replace(question, jitter=Jitter.NONE, draw=0.0, previous_ms=None,
                    retry_after_ms=None)
    jittered = replace(question, retry_after_ms=None)
    for simpler, requirement in ((plain, "RT-002"), (jittered, "RT-009")):
        if delay_differs(simpler, backend_delay):
            return requirement
    return "RT-010" if question.retry_after_ms is not None else "RT-009"


def delay_differs(question: cmd.ComputeDelay, backend_delay: DelayFunction) -> bool:
    """Whether the backend's delay function answers `question` otherwise than the spec,
    raising included."""
    try:
        answer = float(backend_delay(question))
    except Exception:  # any error at all is not the delay the spec gives
        return True
    expected = backoff.delay_ms(question.policy, question.attempt, question.jitter,
                                question.draw, question.previous_ms, question.retry_after_ms)
    return abs(answer - expected) > DELAY_TOLERANCE_MS


def retry_delay_holds(job: JobState | None, policy: RetryPolicy | None,
                      backend_delay: DelayFunction | None) -> bool:
    """Whether the backend's delay function gives the spec's delay (no jitter, no
    retry-after) for the retry that `job`, in backoff, waits out: its last one.

    Not longer than the spec's, even within the tolerance: a delay of 1 ms where the spec
    says 0 keeps the job back past the instant the spec makes it due, which is the
    delay's fault (RT-002), not a lost turn."""
    if job is None or policy is None or backend_delay is None or job.retry_count == 0:
        return False
    question = cmd.ComputeDelay(policy, job.retry_count - 1)
    if delay_differs(question, backend_delay):
        return False
    return float(backend_delay(question)) <= backoff.delay_ms(policy, question.attempt)


def listing_primary(command: Command | None, expected: list[str], actual: list[str],
                    jobs: Mapping[str, JobState], command_requirements: tuple[str, ...],
                    failed_sweeps: int = 0) -> str:
    """The requirement a difference in the held jobs (which, and in what order) breaks.

    Args:
        jobs: the oracle's records before the command.
        failed_sweeps: the reaper sweeps a store outage has failed so far.
    """
    missing = [alias for alias in expected if alias not in actual]
    extra = [alias for alias in actual if alias not in expected]
    deleted_active = any(not jobs[alias].status.is_terminal for alias in missing
                         if alias in jobs)
    if isinstance(command, cmd.Cleanup):
        if deleted_active:
            return "LC-019"
        if extra or missing:
            return "LC-020"
    if isinstance(command, cmd.AdvanceTime) and (missing or extra):
        # Time passing removes jobs only through reaper sweeps.
        swept = "RP-003" in command_requirements
        if deleted_active:
            return "RP-004"  # the reaper deletes terminal jobs only
        if missing:
            return "RP-003" if swept else "RP-002"  # the cutoff, else the sweep's timing
        return "RP-005" if failed_sweeps else "RP-002"  # a sweep that did not happen
    if not missing and not extra:
        return "LC-018"  # the same jobs in another order
    if cut_short(expected, actual):
        return "LC-038"  # every job up to a page right, the rest left out
    return default_primary(command_requirements) or "LC-018"


def health_primary(command_requirements: tuple[str, ...], counts_differ: bool,
                   command: Command | None = None, extra_cancels: int = 0,
                   extra_failures: int = 0) -> str:
    """The requirement a difference in the health snapshot breaks.

    `extra_cancels` is how many more cancels the backend counted than the oracle while
    every job record agreed: after a shutdown or a cancel, that is a job already cancelled
    cancelled again, an ended job that did not absorb the command (LC-003).
    """
    if counts_differ:
        return "LC-024"
    if extra_cancels > 0 and isinstance(command, cmd.Shutdown | cmd.Cancel | cmd.Finish):
        # After a Finish, with every record agreeing: a body's late outcome counted the
        # job's cancel a second time.
        return "LC-003"
    if extra_failures > 0 and "LC-013" in command_requirements:
        # A failure counted at the cancel of a running job: the owner's own transition
        # failed because the caller had already moved the job (seed 000 B1).
        return "LC-013"
    # Outcome counters off after a retried attempt break the retry's rule (RT-007: an
    # attempt is no outcome); otherwise the counting itself (LC-025), whichever command
    # ended the job: a cancel counted as processed is one bug, after any cancel.
    return _first(("RT-007",), command_requirements) or "LC-025"


def worker_status_primary(expected: object, actual: object,
                          command_requirements: tuple[str, ...]) -> str:
    """The requirement a difference in the health report's worker status breaks.

    A worker still stopping where the drain has ended (or stopped while it lasts) shows
    when the drain shutdown ends, at the command that ended it: the drain's rule (LC-028),
    not the report's (LC-029), which is the field's whatever the cause (issue 33: the
    cause before the consequence).
    """
    if ({expected, actual} == {WORKER_STOPPING, WORKER_STOPPED}
            and "LC-028" in command_requirements):
        return "LC-028"
    return "LC-029"


def answer_primary(command: Command | None, expected: object, actual: object,
                   jobs_before: Mapping[str, JobState], now: datetime,
                   failed_sweeps: int = 0) -> str | None:
    """The requirement a wrong answer to a command breaks (None: the default rank)."""
    if isinstance(command, cmd.JobStoreFault):
        inner = command.command
        if (isinstance(inner, cmd.ExpireLeases) and isinstance(expected, dict)
                and isinstance(actual, dict) and expected.get("parked") == actual.get("parked")
                and sum(map(_count, actual.values())) < sum(map(_count, expected.values()))):
            # Fewer re-queued than the same pass without the fault: the fault lost a
            # re-delivery (issue 33: the fault's rule under an injected fault).
            return "RD-007"
        if (isinstance(inner, cmd.ExpireLeases) and command.fault.kind is FaultKind.CRASH
                and isinstance(expected, dict) and isinstance(actual, dict)
                and expected.get("requeued") == actual.get("requeued")
                and _count(actual.get("parked")) > _count(expected.get("parked"))):
            # More parked than the same pass without the crash, the re-queues right: the
            # recovery parked again a job the crashed pass had parked (and alerted), the
            # doubled alert RD-007 forbids.
            return "RD-007"
        if (isinstance(inner, cmd.ExpireLeases) and command.fault.kind is FaultKind.CRASH
                and isinstance(expected, dict) and isinstance(actual, dict)
                and expected.get("requeued") == actual.get("requeued")
                and _count(actual.get("parked")) < _count(expected.get("parked"))):
            # Fewer parked than the same pass through the crash and its restart, the
            # re-queues right and the alerts as the oracle's (the harness asks them
            # first, faulted_alerts_primary): the crash met a park made in other writes
            # than the spec's, and the restart did not make it again. The fault's rule,
            # not the cap's, which the same pass without the crash keeps (issue 33).
            return "RD-007"
        # Else the answer is the pass's own, judged as without the fault.
        return answer_primary(inner, expected, actual, jobs_before, now, failed_sweeps)
    if isinstance(command, cmd.Submit):
        # LC-027 also fixes where the module check stands among the refusals.
        if expected in _MODULE_REFUSALS or actual in _MODULE_REFUSALS:
            return "LC-027"
        # Else the spec's own refusal names the rule: refused for capacity where the spec
        # refuses a runtime shut down (its cap full of jobs it took after shutdown) is
        # LC-023's, and accepted where it refuses is the refusal's rule too.
        for answer in (expected, actual):
            if answer == cmd.REFUSED_SHUT_DOWN:
                return "LC-023"
            if answer == cmd.REFUSED_CAPACITY:
                return "LC-009"
        return "LC-008"
    if isinstance(command, cmd.DetectStuck):
        return stuck_primary(command.job_timeout_seconds, actual, jobs_before, now)
    if isinstance(command, cmd.Cleanup):
        return "LC-021"
    if isinstance(command, cmd.StartReaper):
        # Started again where it should still run: it stopped itself after a failed sweep.
        return "RP-005" if failed_sweeps else "RP-006"
    if isinstance(command, cmd.ReaperStatus) and isinstance(expected, dict) and isinstance(
            actual, dict):
        return reaper_status_primary(expected, actual, failed_sweeps)
    if isinstance(command, cmd.ExpireLeases) and isinstance(expected, dict) and isinstance(
            actual, dict):
        touched = sum(map(_count, actual.values()))
        if touched > sum(map(_count, expected.values())):
            # It touched a job not past its lease, whether it re-queued or parked it (RQ
            # fails a job silent exactly the lease: its bound is inclusive).
            return "RD-005"
        if expected.get("parked") != actual.get("parked"):
            return "RD-002"
        # It missed jobs past their lease (a silence counted in whole seconds, issue 33)
        # or re-queued them wrongly: the rule that takes every job past its lease.
        return "RD-001"
    return None


def faulted_alerts_primary(expected: list[tuple[str, object]],
                           raised: list[tuple[str, object]],
                           failed: frozenset[str] = frozenset()) -> str | None:
    """The requirement the operator alerts of a lease pass that a store fault met break,
    where its answer differs (None: the alerts say nothing of it; the answer's own rule).

    The fault moves the pass's answer (the crash lands on another write when a park takes
    another number of writes), but the alerts tell the cause: a job alerted once it had
    already failed, or failed as poison with no alert at all, is a park out of order
    (RD-003) with or without the fault; an alert raised again by the restarted rescuer is
    the fault's doubled alert (RD-007). A job the oracle alerted that the runtime neither
    alerted nor failed was not parked at its cap (RD-002).

    Args:
        expected: the oracle's alerts, each with its job's status when raised.
        raised: the runtime's, in the order raised.
        failed: the jobs the runtime's records show failed now.
    """
    if raised == expected:
        return None
    late = [alias for alias, status in raised
            if status == Status.FAILED.value and (alias, status) not in expected]
    alerted = {alias for alias, _ in raised}
    silent = [alias for alias, _ in expected if alias not in alerted and alias in failed]
    if late or silent:
        return "RD-003"
    if len(raised) > len(expected):
        return "RD-007"
    if any(alias not in alerted and alias not in failed for alias, _ in expected):
        return "RD-002"  # neither alerted nor failed: never parked, kept re-queued
    return None


def reaper_status_primary(expected: Mapping[str, object], actual: Mapping[str, object],
                          failed_sweeps: int) -> str | None:
    """The requirement a difference in the reaper's status breaks (None: no difference
    in the fields it counts).

    Args:
        failed_sweeps: the sweeps the oracle's reaper has failed so far.
    """
    if expected.get("running") != actual.get("running"):
        return "RP-005" if failed_sweeps else "RP-007"
    if sweeps_made(expected) != sweeps_made(actual):
        # A sweep that did not happen at its boundary (or an extra one), failed or
        # not: its timing, not how a failure is handled.
        return "RP-002"
    if expected.get("failed_sweeps") != actual.get("failed_sweeps"):
        return "RP-005"  # as many sweeps, but a failed one counted as made, or back
    if expected.get("deleted") != actual.get("deleted"):
        return "RP-003"
    return None


def faulted_sweeps_primary(expected: Mapping[str, object], actual: Mapping[str, object],
                           failed_sweeps: int, jobs: Mapping[str, JobState]) -> str | None:
    """The requirement a difference in the reaper's status after sweeps a store fault met
    breaks; None for the fault's own rule (RP-008: a count lost, a failed delete not
    counted as a failed sweep).

    A reaper that stopped, or swept at other times, is wrong with or without the fault
    and is blamed as without it: a shrunk counterexample often carries a fault it does
    not need, and the user's run named the fault's rule for a bug of the schedule where
    the self-test, which does not shrink, named the schedule's (issue 33).

    Args:
        failed_sweeps: the sweeps the oracle's reaper has failed so far.
        jobs: the oracle's records after the sweeps.
    """
    if (expected.get("running") != actual.get("running")
            or sweeps_made(expected) != sweeps_made(actual)):
        return reaper_status_primary(expected, actual, failed_sweeps)
    if _count(actual.get("failed_sweeps")) > _count(expected.get("failed_sweeps")):
        # The fault struck a write the oracle's sweeps never made: a delete of a job
        # that was not expired, an active one's where the oracle holds one.
        active = any(not job.status.is_terminal for job in jobs.values())
        return "RP-004" if active else "RP-003"
    return None


_MODULE_REFUSALS = (cmd.REFUSED_INVALID_MODULE, cmd.REFUSED_UNKNOWN_MODULE)


def _count(value: object) -> int:
    return value if isinstance(value, int) else 0


def sweeps_made(status: Mapping[str, object]) -> int:
    """The sweeps a reaper status counts, whether they succeeded or failed."""
    return _count(status.get("sweeps")) + _count(status.get("failed_sweeps"))


def stuck_primary(timeout_seconds: float, actual: object, jobs: Mapping[str, JobState],
                  now: datetime) -> str:
    """Which stuck-detection rule the backend's count follows: the exclusive boundary
    taken as inclusive (ST-003), queued jobs counted (ST-004), or silence measured from
    the start instead of the last heartbeat (ST-002, also the default)."""
    timeout = timedelta(seconds=timeout_seconds)
    running = [job for job in jobs.values() if job.status is Status.RUNNING]
    inclusive = sum(job.last_heartbeat is not None and now - job.last_heartbeat >= timeout
                    for job in running)
    exclusive = sum(job.last_heartbeat is not None and now - job.last_heartbeat > timeout
                    for job in running)
    queued = sum(job.status is Status.QUEUED and now - job.submitted_at > timeout
                 for job in jobs.values())
    from_start = sum(job.started_at is not None and now - job.started_at > timeout
                     for job in running)
    if actual == inclusive != exclusive:
        return "ST-003"
    if actual == from_start != exclusive:
        return "ST-002"
    if queued and actual in (exclusive + queued, inclusive + queued):
        return "ST-004"
    return "ST-002"


def body_primary(command: Command | None, job: JobState | None, starts: int) -> str:
    """The requirement a body run more often than its job started breaks.

    Args:
        command: the command after which the extra run showed.
        job: the oracle's record of the job now (None once cleaned up).
        starts: how often the oracle started the job.
    """
    if isinstance(command, cmd.Shutdown):
        return "LC-022"  # a job queued at shutdown is cancelled, its body never run
    if starts == 0:
        return "LC-012"  # cancelled before it started: its body never runs
    if (job is not None and job.status is Status.CANCELLED and job.retry_count > 0
            and starts == job.retry_count):
        return "RT-006"  # cancelled in backoff: the next attempt never runs
    return "LC-002"  # a started body run twice: a transition the job never made
