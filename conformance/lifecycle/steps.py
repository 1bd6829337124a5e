"""The job runtime's Behave steps (lifecycle, retry and stuck areas) in plain sentences.

The commands' steps are derived from their declarations (declarations.py): each sends one
command through `Harness.run`, which applies it to the backend and to the oracle and
compares everything; a `Divergence` raised there is left to propagate, so it becomes the
scenario's failure with its whole message. Every Then-step makes its own named check on
what the BACKEND shows (a job record, the health snapshot, the last answer), so a
scenario states its expectation even where the oracle agrees. Statuses are written in the
canonical vocabulary; seconds count from the virtual clock's start, `EPOCH`.

The scenario's state, the hooks and the step decorators every area uses are the kit's
core (conformance/scenario.py, behave_hooks.py, step_library.py).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from jobconform.backends.protocol import JobView
from jobconform.conformance.area_steps import alias_list, at
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.harness import DELAY_TOLERANCE_MS, shown_arguments
from jobconform.conformance.lifecycle.declarations import DECLARATIONS, alias_range
from jobconform.conformance.scenario import (
    _check,
    job_view,
    last_answer,
    reopen_runtime,
    same_value,
    state_of,
)
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.conformance.utc import field_off_utc
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference import commands as cmd
from jobconform.reference.commands import describe
from jobconform.reference.lifecycle import JsonValue, arguments_text, long_text

__all__: list[str] = []

# -- Given: the runtime ------------------------------------------------------------------


@setup_step("a runtime")
def step_runtime(context: Any) -> None:
    """The runtime with the profile's own limits (the harness is already open)."""
    reopen_runtime(context)


@setup_step("a runtime with {slots:d} worker slot", "a runtime with {slots:d} worker slots")
def step_runtime_slots(context: Any, slots: int) -> None:
    reopen_runtime(context, max_concurrent=slots)


@setup_step("a runtime with a task cap of {cap:d}")
def step_runtime_cap(context: Any, cap: int) -> None:
    reopen_runtime(context, max_tasks=cap)


@setup_step("a runtime with {slots:d} worker slot and a task cap of {cap:d}",
            "a runtime with {slots:d} worker slots and a task cap of {cap:d}")
def step_runtime_slots_cap(context: Any, slots: int, cap: int) -> None:
    reopen_runtime(context, max_concurrent=slots, max_tasks=cap)


@setup_step("a runtime with no task cap")
def step_runtime_uncapped(context: Any) -> None:
    reopen_runtime(context, unlimited_tasks=True)


@setup_step("a runtime whose executions query pages {size:d} jobs at most")
def step_runtime_page_size(context: Any, size: int) -> None:
    reopen_runtime(context, page_size=size)


@setup_step("a runtime with {slots:d} worker slot and a task cap of {cap:d} whose executions"
            " query pages {size:d} jobs at most",
            "a runtime with {slots:d} worker slots and a task cap of {cap:d} whose executions"
            " query pages {size:d} jobs at most")
def step_runtime_slots_cap_page_size(context: Any, slots: int, cap: int, size: int) -> None:
    """A machine trace's runtime (conformance/trace.py)."""
    reopen_runtime(context, max_concurrent=slots, max_tasks=cap, page_size=size)


@setup_step("a runtime with queued execution off")
def step_runtime_synchronous(context: Any) -> None:
    """Seed 000's async.enabled false: submit runs each body itself (LC-037)."""
    reopen_runtime(context, queued_execution=False)


@setup_step("a runtime with queued execution off and a task cap of {cap:d}")
def step_runtime_synchronous_cap(context: Any, cap: int) -> None:
    reopen_runtime(context, max_tasks=cap, queued_execution=False)


# -- Given/When: commands, derived from their declarations (declarations.py) ---------------

derive_steps(DECLARATIONS, state_of)


@action_step('threads submit jobs "{aliases}" at once')
def step_submit_concurrently(context: Any, aliases: str) -> None:
    """One thread per job, released together (LC-030); each thread's answer is kept as
    that job's submission answer."""
    state = state_of(context)
    jobs = tuple(alias_list(aliases))
    answers = state.run(cmd.SubmitConcurrently(jobs))
    assert isinstance(answers, list)
    state.submissions.update(zip(jobs, answers, strict=True))


@action_step('job "{alias}" is read')
def step_read(context: Any, alias: str) -> None:
    state = state_of(context)
    # Get answers the backend's own view, or None for an id it does not hold.
    state.reads[alias] = cast("JobView | None", state.run(cmd.Get(alias)))
    state.last_read = alias


# -- Then: the backend's records ------------------------------------------------------------


@check_step('job "{alias}" is {status:Status}')
def check_status(context: Any, alias: str, status: str) -> None:
    view = job_view(context, alias)
    _check(context, view.status == status, f"job {alias!r} status", status, view.status)


@check_step('jobs "{aliases}" are {status:Status}')
def check_statuses(context: Any, aliases: str, status: str) -> None:
    for alias in alias_list(aliases):
        check_status(context, alias, status)


def _check_time(context: Any, alias: str, name: str, seconds: float | None) -> None:
    actual = getattr(job_view(context, alias), name)
    expected = None if seconds is None else at(seconds)
    shown = actual if actual is None else f"{actual.isoformat()}" \
        f" (second {(actual - EPOCH).total_seconds():g})"
    _check(context, actual == expected, f"job {alias!r} {name}",
           None if expected is None else f"{expected.isoformat()} (second {seconds:g})", shown)


@check_step('job "{alias}" was submitted at second {seconds:g}')
def check_submitted_at(context: Any, alias: str, seconds: float) -> None:
    _check_time(context, alias, "submitted_at", seconds)


@check_step('job "{alias}" started at second {seconds:g}')
def check_started_at(context: Any, alias: str, seconds: float) -> None:
    _check_time(context, alias, "started_at", seconds)


@check_step('job "{alias}" finished at second {seconds:g}')
def check_finished_at(context: Any, alias: str, seconds: float) -> None:
    _check_time(context, alias, "finished_at", seconds)


@check_step('job "{alias}" has no start time')
def check_no_start(context: Any, alias: str) -> None:
    _check_time(context, alias, "started_at", None)


@check_step('job "{alias}" has no finish time')
def check_no_finish(context: Any, alias: str) -> None:
    _check_time(context, alias, "finished_at", None)


@check_step('every timestamp of job "{alias}" is timezone-aware UTC')
def check_utc(context: Any, alias: str) -> None:
    view = job_view(context, alias)
    for name in ("submitted_at", "started_at", "finished_at"):
        value = getattr(view, name)
        if value is None:
            continue
        aware = isinstance(value, datetime) and value.tzinfo is not None
        _check(context, aware and value.utcoffset() == timedelta(0),
               f"job {alias!r} {name} must be timezone-aware UTC", "a UTC-aware datetime",
               value)
    # Every other instant field of the record too: one column at +05:30 is off (LC-005).
    off = field_off_utc(view)
    _check(context, off is None, f"job {alias!r} {off[0] if off else ''} must be"
           " timezone-aware UTC", "a UTC-aware datetime", off[1] if off else None)


@check_step('job "{alias}" has the result {result:Json}')
def check_result(context: Any, alias: str, result: JsonValue) -> None:
    view = job_view(context, alias)
    _check(context, same_value(result, view.result), f"job {alias!r} result", result, view.result)


@check_step('job "{alias}" has the arguments {arguments:Json}')
def check_arguments(context: Any, alias: str, arguments: JsonValue) -> None:
    """The record shows the job's arguments as given (LC-036): the same JSON value, types
    apart, an object's keys in any order."""
    shown = shown_arguments(getattr(job_view(context, alias), "arguments", "<missing>"))
    wanted = arguments_text(arguments)
    _check(context, shown == wanted, f"job {alias!r} arguments", wanted, shown)


@check_step('the body of job "{alias}" received the arguments {arguments:Json}')
def check_body_arguments(context: Any, alias: str, arguments: JsonValue) -> None:
    """The job's body ran, and each of its invocations received these arguments (LC-036)."""
    script = state_of(context).harness.scripts.get(alias)
    received = [] if script is None else [shown_arguments(value)
                                          for value in script.received_arguments]
    wanted = arguments_text(arguments)
    _check(context, bool(received) and all(value == wanted for value in received),
           f"the arguments the body of job {alias!r} received", [wanted], received)


@check_step('job "{alias}" has no result')
def check_no_result(context: Any, alias: str) -> None:
    view = job_view(context, alias)
    _check(context, view.result is None, f"job {alias!r} result", None, view.result)


@check_step('job "{alias}" has the error "{error}"')
def check_error(context: Any, alias: str, error: str) -> None:
    view = job_view(context, alias)
    _check(context, view.error == error, f"job {alias!r} error", error, view.error)


@check_step('job "{alias}" has no error')
def check_no_error(context: Any, alias: str) -> None:
    view = job_view(context, alias)
    _check(context, view.error is None, f"job {alias!r} error", None, view.error)


@check_step('job "{alias}" is not held')
def check_not_held(context: Any, alias: str) -> None:
    state = state_of(context)
    job_id = state.harness.ids.get(alias)
    if job_id is None:  # never accepted: it must have left no record behind
        check_no_stray_records(context)
        return
    view = state.harness.runtime.get(job_id)
    _check(context, view is None, f"job {alias!r} should no longer be held", None,
           None if view is None else view.status)
    held = [v.job_id for v in state.harness.runtime.list_jobs(None)]
    _check(context, job_id not in held, f"job {alias!r} should not be listed", "absent", held)


@check_step('jobs "{aliases}" have distinct ids')
def check_distinct_ids(context: Any, aliases: str) -> None:
    ids = [job_view(context, alias).job_id for alias in alias_list(aliases)]
    _check(context, len(set(ids)) == len(ids), f"the ids of jobs {aliases}", "all distinct",
           ids)


@check_step("no record is held that was not accepted")
def check_no_stray_records(context: Any) -> None:
    state = state_of(context)
    stray = [v.job_id for v in state.harness.runtime.list_jobs(None)
             if v.job_id not in state.harness.aliases]
    _check(context, not stray, "records the runtime holds without an accepted submission",
           [], stray)


def _check_refused(context: Any, alias: str, answer: str, why: str) -> None:
    state = state_of(context)
    if alias not in state.submissions:
        raise AssertionError(f"job {alias!r} was never submitted in this scenario")
    actual = state.submissions[alias]
    _check(context, actual == answer, f"the submission of job {alias!r} is refused {why}",
           answer, actual)
    _check(context, alias not in state.harness.ids,
           f"the refused job {alias!r} must get no id", None, state.harness.ids.get(alias))
    check_no_stray_records(context)


@check_step('the submission of job "{alias}" is accepted')
def check_accepted(context: Any, alias: str) -> None:
    state = state_of(context)
    actual = state.submissions.get(alias)
    _check(context, actual == cmd.ACCEPTED, f"the submission of job {alias!r}", cmd.ACCEPTED,
           actual)


@check_step('jobs "{aliases}" each have an id of their own, held once')
def check_own_ids(context: Any, aliases: str) -> None:
    """The ids the BACKEND returned for these jobs are all different, and its listing
    holds each exactly once (LC-030)."""
    harness = state_of(context).harness
    jobs = alias_list(aliases)
    ids = [harness.ids.get(alias) for alias in jobs]
    _check(context, None not in ids and len(set(ids)) == len(ids),
           f"the ids of jobs {jobs} (each its own)", "distinct ids", ids)
    listed = [view.job_id for view in harness.runtime.list_jobs(None)]
    counts = {alias: listed.count(str(job_id)) for alias, job_id in zip(jobs, ids,
                                                                         strict=True)}
    _check(context, set(counts.values()) == {1}, "how often each job is listed",
           dict.fromkeys(jobs, 1), counts)


@check_step('the submission of job "{alias}" is refused for capacity')
def check_refused_capacity(context: Any, alias: str) -> None:
    _check_refused(context, alias, cmd.REFUSED_CAPACITY, "for capacity")


@check_step('the submission of job "{alias}" is refused because the runtime is shut down')
def check_refused_shut_down(context: Any, alias: str) -> None:
    _check_refused(context, alias, cmd.REFUSED_SHUT_DOWN, "because the runtime is shut down")


@check_step('the submission of job "{alias}" is refused because the module id is malformed')
def check_refused_invalid_module(context: Any, alias: str) -> None:
    _check_refused(context, alias, cmd.REFUSED_INVALID_MODULE,
                   "because the module id is malformed")


@check_step('the submission of job "{alias}" is refused because no such module exists')
def check_refused_unknown_module(context: Any, alias: str) -> None:
    _check_refused(context, alias, cmd.REFUSED_UNKNOWN_MODULE,
                   "because no such module exists")


@check_step('the body of job "{alias}" was interrupted')
def check_body_interrupted(context: Any, alias: str) -> None:
    """The runtime interrupted the body's invocation (TaskScript.interrupt, LC-026)."""
    script = state_of(context).harness.scripts.get(alias)
    _check(context, script is not None and script.interrupted,
           f"whether the body of job {alias!r} was interrupted", True,
           None if script is None else script.interrupted)


@check_step('the body of job "{alias}" ran {times:d} times', 'the body of job "{alias}" never ran')
def check_body_runs(context: Any, alias: str, times: int = 0) -> None:
    script = state_of(context).harness.scripts.get(alias)
    _check(context, script is not None and script.invocations == times,
           f"how often the body of job {alias!r} ran", times,
           None if script is None else script.invocations)


@check_step("the record read earlier still shows {status:Status}")
def check_earlier_read(context: Any, status: str) -> None:
    state = state_of(context)
    if state.last_read is None:
        raise AssertionError("no job was read earlier in this scenario")
    check_earlier_read_of(context, state.last_read, status)


@check_step('the record of job "{alias}" read earlier still shows {status:Status}')
def check_earlier_read_of(context: Any, alias: str, status: str) -> None:
    state = state_of(context)
    if alias not in state.reads:
        raise AssertionError(f"job {alias!r} was not read earlier in this scenario")
    view = state.reads[alias]
    _check(context, view is not None, f"the earlier read of job {alias!r}", "a record", None)
    assert view is not None
    _check(context, view.status == status,
           f"the record of job {alias!r} read earlier must not change (a snapshot)", status,
           view.status)


# -- Then: answers ----------------------------------------------------------------------------


@check_step("the answer is {answer:Json}")
def check_answer(context: Any, answer: JsonValue) -> None:
    actual = state_of(context).harness.last_answer
    _check(context, same_value(answer, actual), "the answer to the last command", answer, actual)


@check_step("the cancellation is accepted")
def check_cancel_true(context: Any) -> None:
    actual = last_answer(context, cmd.Cancel, "the cancellation is accepted")
    _check(context, actual is True, "cancel's answer", True, actual)


@check_step("the cancellation is rejected")
def check_cancel_false(context: Any) -> None:
    actual = last_answer(context, cmd.Cancel, "the cancellation is rejected")
    _check(context, actual is False, "cancel's answer", False, actual)


@check_step("cleanup removed {count:d} job", "cleanup removed {count:d} jobs")
def check_cleanup_count(context: Any, count: int) -> None:
    actual = last_answer(context, cmd.Cleanup, "cleanup removed …")
    _check(context, same_value(count, actual), "cleanup's count of removed records", count, actual)


@check_step("the result is {result:Json}")
def check_result_answer(context: Any, result: JsonValue) -> None:
    actual = last_answer(context, cmd.GetResult, "the result is …")
    _check(context, same_value(result, actual), "get_result's answer", result, actual)


@check_step("reading the result fails as not found")
def check_result_not_found(context: Any) -> None:
    actual = last_answer(context, cmd.GetResult, "reading the result fails as not found")
    _check(context, actual == cmd.NOT_FOUND, "get_result's answer", cmd.NOT_FOUND, actual)


@check_step("reading the result fails as not completed with status {status:Status}")
def check_result_not_completed(context: Any, status: str) -> None:
    actual = last_answer(context, cmd.GetResult, "reading the result fails as not completed")
    expected = cmd.not_completed(status)
    _check(context, actual == expected, "get_result's answer", expected, actual)


@check_step("the read returns nothing")
def check_read_nothing(context: Any) -> None:
    actual = last_answer(context, cmd.Get, "the read returns nothing")
    _check(context, actual is None, "get's answer for an id the runtime does not hold", None,
           actual)


@check_step('the listing is "{aliases}"')
def check_listing(context: Any, aliases: str) -> None:
    actual = last_answer(context, cmd.ListJobs, "the listing is …")
    expected = alias_list(aliases)
    _check(context, actual == expected, "the listed jobs, in order", expected, actual)


@check_step('the listing is jobs "{first}" to "{last}"')
def check_listing_range(context: Any, first: str, last: str) -> None:
    actual = last_answer(context, cmd.ListJobs, "the listing is jobs … to …")
    expected = alias_range(first, last)
    _check(context, actual == expected, "the listed jobs, in order",
           f"{len(expected)} jobs, {first} to {last}", _shown_range(actual))


def _shown_range(aliases: object) -> object:
    """A long listing as its length, its ends and the first place it breaks a run."""
    if not isinstance(aliases, list) or len(aliases) <= 6:
        return aliases
    return f"{len(aliases)} jobs: {aliases[:3]} ... {aliases[-3:]}"


@check_step('job "{alias}" has the {error_type:w} error with the message of {length:d}'
            ' characters')
def check_long_error(context: Any, alias: str, error_type: str, length: int) -> None:
    actual = job_view(context, alias).error
    expected = f"{error_type}: {long_text(length)}"
    _check(context, actual == expected, f"job {alias!r} error, whole",
           f"{len(expected)} characters", _shown_text(actual, expected))


@check_step('the result of job "{alias}" is the text of {length:d} characters')
def check_long_result(context: Any, alias: str, length: int) -> None:
    actual = job_view(context, alias).result
    expected = long_text(length)
    _check(context, actual == expected, f"job {alias!r} result, whole",
           f"{len(expected)} characters", _shown_text(actual, expected))


def _shown_text(actual: object, expected: str) -> object:
    """A long text as its length, and where it leaves the expected one."""
    if not isinstance(actual, str):
        return actual
    same = next((index for index, (a, b) in enumerate(zip(actual, expected, strict=False))
                 if a != b), min(len(actual), len(expected)))
    return f"{len(actual)} characters, the same as expected up to character {same}"


@check_step("the listing is empty")
def check_listing_empty(context: Any) -> None:
    actual = last_answer(context, cmd.ListJobs, "the listing is empty")
    _check(context, actual == [], "the listed jobs", [], actual)


@check_step('the page is "{aliases}"')
def check_page(context: Any, aliases: str) -> None:
    actual = last_answer(context, cmd.QueryExecutions, "the page is …")
    expected = alias_list(aliases)
    _check(context, actual == expected, "the page's jobs, in order", expected, actual)


@check_step("the page is empty")
def check_page_empty(context: Any) -> None:
    actual = last_answer(context, cmd.QueryExecutions, "the page is empty")
    _check(context, actual == [], "the page's jobs", [], actual)


@check_step("the statistics show {total:d} in total, {succeeded:d} succeeded, {failed:d}"
            " failed, {running:d} running and {queued:d} queued")
def check_stats(context: Any, total: int, succeeded: int, failed: int, running: int,
                queued: int) -> None:
    actual = last_answer(context, cmd.ExecutionStats, "the statistics show …")
    expected = dict(zip(cmd.STATS_FIELDS, (total, succeeded, failed, running, queued),
                        strict=True))
    _check(context, actual == expected, "the execution statistics", expected, actual)


@check_step('job "{alias}" is owned by "{owner}" with trigger "{trigger}"')
def check_owner_trigger(context: Any, alias: str, owner: str, trigger: str) -> None:
    view = job_view(context, alias)
    actual = (getattr(view, "owner", "<missing>"), getattr(view, "trigger", "<missing>"))
    _check(context, actual == (owner, trigger), f"job {alias!r} (owner, trigger)",
           (owner, trigger), actual)


@check_step('job "{alias}" has options {options:Json}')
def check_options(context: Any, alias: str, options: JsonValue) -> None:
    actual = getattr(job_view(context, alias), "options", "<missing>")
    _check(context, same_value(actual, options), f"job {alias!r} options", options, actual)


@check_step('the body of job "{alias}" was handed options {options:Json}')
def check_options_handed(context: Any, alias: str, options: JsonValue) -> None:
    script = state_of(context).harness.scripts[alias]
    _check(context, bool(script.options_handed) and all(
        same_value(handed, options) for handed in script.options_handed),
        f"the options each run of job {alias!r}'s body was handed", options,
        script.options_handed)


# -- Then: health -----------------------------------------------------------------------------


@check_step("the health shows {queued:d} queued, {running:d} running, {total:d} in total")
def check_health_counts(context: Any, queued: int, running: int, total: int) -> None:
    health = state_of(context).harness.runtime.health()
    actual = (health.queued, health.running, health.total)
    _check(context, actual == (queued, running, total),
           "health (queued, running, total)", (queued, running, total), actual)


@check_step("the counters show {processed:d} processed, {failed:d} failed,"
            " {cancelled:d} cancelled")
def check_counters(context: Any, processed: int, failed: int, cancelled: int) -> None:
    health = state_of(context).harness.runtime.health()
    actual = (health.processed, health.failed, health.cancelled)
    _check(context, actual == (processed, failed, cancelled),
           "health counters (processed, failed, cancelled)", (processed, failed, cancelled),
           actual)


# -- Then: the health report's worker (LC-029) and its last heartbeat (ST-005) ---------------


@check_step('the health report names its worker, with status "{status}"')
def check_worker_status(context: Any, status: str) -> None:
    """worker_id (non-empty, the same as at the first snapshot) and status, as the BACKEND
    reports them (LC-029)."""
    harness = state_of(context).harness
    health = harness.runtime.health()
    worker_id = getattr(health, "worker_id", "<missing>")
    first = harness.worker_id or worker_id  # as the harness saw it first
    _check(context, isinstance(worker_id, str) and bool(worker_id) and worker_id == first,
           "the health report's worker_id (non-empty, the same in every snapshot)",
           first or "a non-empty string", worker_id, checks="LC-029")
    actual = getattr(health, "status", "<missing>")
    # The status is ranked by the latest command: a drain that ends late shows here (LC-028).
    _check(context, actual == status, "the health report's worker status", status, actual)


@check_step("a second runtime of the backend names another worker")
def check_second_worker(context: Any) -> None:
    """Two runtimes the backend opens never share a worker id (LC-029)."""
    state_of(context).harness.check_worker_id_unique()


@check_step("the health report's last heartbeat is at second {seconds:g}")
def check_report_heartbeat(context: Any, seconds: float) -> None:
    """last_heartbeat as the BACKEND's health report shows it, in UTC (ST-005)."""
    actual = getattr(state_of(context).harness.runtime.health(), "last_heartbeat",
                     "<missing>")
    expected = at(seconds)
    in_utc = isinstance(actual, datetime) and actual.utcoffset() == timedelta(0)
    _check(context, in_utc and actual == expected,
           "the health report's last_heartbeat (timezone-aware UTC)",
           f"{expected.isoformat()} (second {seconds:g})", actual)


@check_step("the health report has no last heartbeat")
def check_report_no_heartbeat(context: Any) -> None:
    actual = getattr(state_of(context).harness.runtime.health(), "last_heartbeat",
                     "<missing>")
    _check(context, actual is None, "the health report's last_heartbeat", None, actual)


# -- Then: retry state and delays -------------------------------------------------------------


@check_step('job "{alias}" has retry count {count:d} of {max_retries:d}')
def check_retry_count(context: Any, alias: str, count: int, max_retries: int) -> None:
    """retry_count and max_retries as the BACKEND's record shows them (RT-008)."""
    view = job_view(context, alias)
    actual = (getattr(view, "retry_count", "<missing>"),
              getattr(view, "max_retries", "<missing>"))
    _check(context, same_value(count, actual[0]) and same_value(max_retries, actual[1]),
           f"job {alias!r} (retry_count, max_retries)", (count, max_retries), actual)


def _last_delay(context: Any, step: str) -> tuple[float, cmd.ComputeDelay]:
    actual = last_answer(context, cmd.ComputeDelay, step)
    command = state_of(context).last_command
    assert isinstance(command, cmd.ComputeDelay)
    _check(context, isinstance(actual, float), f"the answer to {describe(command)}",
           "a number of milliseconds", actual)
    assert isinstance(actual, float)
    return actual, command


@check_step("the delay is {ms:g} ms")
def check_delay(context: Any, ms: float) -> None:
    """The backend's delay, within DELAY_TOLERANCE_MS of the stated value."""
    actual, command = _last_delay(context, "the delay is …")
    _check(context, abs(actual - ms) <= DELAY_TOLERANCE_MS,
           f"the delay answered to {describe(command)} (within {DELAY_TOLERANCE_MS:g} ms)",
           float(ms), actual)


@check_step("the delay is at most the cap")
def check_delay_capped(context: Any) -> None:
    actual, command = _last_delay(context, "the delay is at most the cap")
    cap = command.policy.max_retry_delay_ms
    _check(context, actual <= cap, f"the delay answered to {describe(command)} never exceeds"
           " max_retry_delay_ms", f"at most {cap:g}", actual)


@check_step("the delay is below the cap")
def check_delay_below_cap(context: Any) -> None:
    actual, command = _last_delay(context, "the delay is below the cap")
    cap = command.policy.max_retry_delay_ms
    _check(context, actual < cap, f"the delay answered to {describe(command)} stays random"
           " below max_retry_delay_ms", f"less than {cap:g}", actual)


@check_step("the delay is more than {ms:g} ms")
def check_delay_above(context: Any, ms: float) -> None:
    actual, command = _last_delay(context, "the delay is more than …")
    _check(context, actual > ms, f"the delay answered to {describe(command)}",
           f"more than {ms:g}", actual)


# -- stuck: heartbeats and detection passes (spec area "stuck") -------------------------------


@check_step("{count:d} job was failed as stuck", "{count:d} jobs were failed as stuck")
def check_stuck_count(context: Any, count: int) -> None:
    actual = last_answer(context, cmd.DetectStuck, "… failed as stuck")
    _check(context, same_value(count, actual), "detect_stuck's count of jobs failed as stuck",
           count, actual)


@check_step('job "{alias}" last heartbeat is at second {seconds:g}')
def check_last_heartbeat(context: Any, alias: str, seconds: float) -> None:
    """last_heartbeat as the BACKEND's record shows it (ST-001)."""
    view = job_view(context, alias)
    actual = getattr(view, "last_heartbeat", "<missing>")
    expected = at(seconds)
    shown = (f"{actual.isoformat()} (second {(actual - EPOCH).total_seconds():g})"
             if isinstance(actual, datetime) and actual.tzinfo is not None else actual)
    _check(context, actual == expected, f"job {alias!r} last_heartbeat",
           f"{expected.isoformat()} (second {seconds:g})", shown)


@check_step('job "{alias}" has no last heartbeat')
def check_no_last_heartbeat(context: Any, alias: str) -> None:
    view = job_view(context, alias)
    actual = getattr(view, "last_heartbeat", "<missing>")
    _check(context, actual is None, f"job {alias!r} last_heartbeat", None, actual)
