"""The job runtime's commands and checks (lifecycle, retry, stuck), declared once
(conformance/vocabulary.py).

Each command's declaration names the Robot keyword that sends it, builds the command from
the keyword's arguments, and lists the Gherkin wordings that send it; each check's names
the Robot keyword that makes it and the Then-wordings, each building the `Reading` of
what the BACKEND shows (a job's record, an answer, the health report). The Behave steps
(conformance/lifecycle/steps.py) and the Robot keywords
(conformance/lifecycle/keywords.py) are derived from these lists; the wordings are the
feature files' and the Robot suites' own.

The keywords take results as JSON text and statuses in the canonical vocabulary or the
profile's own; the steps get JSON parsed already and statuses canonical (the `Json` and
`Status` types of conformance/step_library.py). A retry policy's cap left out is the
profile's (RT-001), so those commands are completed `OnProfile`. A submission's answer
is kept under its alias, for the Then-checks that read it.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from jobconform.conformance.area_steps import alias_list, at
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.harness import DELAY_TOLERANCE_MS, shown_arguments
from jobconform.conformance.job_readings import answer_to, answered, job_record, sent_answers
from jobconform.conformance.scenario import same_value
from jobconform.conformance.utc import describe_offset, field_off_utc
from jobconform.conformance.vocabulary import (
    Check,
    Declaration,
    InBulk,
    OnHarness,
    OnProfile,
    Phrase,
    Reading,
    check_worded,
    command_worded,
    json_value,
)
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.commands import describe
from jobconform.reference.lifecycle import JsonValue, Status, arguments_text, long_text
from jobconform.spec import Profile, SpecError

CANONICAL_STATUSES = tuple(status.value for status in Status)
TIMESTAMP_FIELDS = ("submitted_at", "started_at", "finished_at")


def canonical_status(profile: Profile, status: str) -> str:
    """A status a test gives, canonical or in the profile's words, in the canonical words.

    Raises:
        ValueError: neither names a status.
    """
    if status in CANONICAL_STATUSES:
        return status
    try:
        return profile.to_canonical(status)
    except SpecError as error:
        raise ValueError(f"{error}; or give a canonical status:"
                         f" {', '.join(CANONICAL_STATUSES)}") from None


def retry_policy(profile: Profile, max_retries: int, delay_ms: float = 1000.0,
                 multiplier: float = 2.0, cap_ms: float | None = None,
                 not_retried: str = "") -> RetryPolicy:
    """A retry policy from a test's values; the cap left out is the profile's (RT-001).
    Malformed values fail the step or keyword, not a check."""
    cap = profile.max_retry_delay_ms if cap_ms is None else cap_ms
    return RetryPolicy(max_retries=max_retries, retry_delay_ms=float(delay_ms),
                       backoff_multiplier=float(multiplier), max_retry_delay_ms=float(cap),
                       non_retryable=tuple(alias_list(not_retried)))


def _submitted(command: cmd.Submit) -> str:
    return command.job


# -- builders: each is a Robot keyword's signature and documentation ---------------------


def submit_job(alias: str) -> cmd.Submit:
    """Submit a job whose body honours cancellation; it must be accepted. Returns its id."""
    return cmd.Submit(alias)


_NUMBERED = re.compile(r"^(?P<stem>.*?)(?P<number>[0-9]+)$")


def alias_range(first: str, last: str) -> list[str]:
    """The aliases from ``first`` to ``last``, a stem and a number each ("v1" to "v300":
    v1, v2, ..., v300), in order. Malformed ranges fail the step or keyword.

    Raises:
        ValueError: the two do not share a stem, or ``last`` comes before ``first``.
    """
    start, end = _NUMBERED.match(first), _NUMBERED.match(last)
    if start is None or end is None or start["stem"] != end["stem"]:
        raise ValueError(f"a range of jobs is a stem and two numbers, as v1 to v300,"
                         f" not {first!r} to {last!r}")
    low, high = int(start["number"]), int(end["number"])
    if high < low:
        raise ValueError(f"the range {first!r} to {last!r} runs backwards")
    return [f"{start['stem']}{number}" for number in range(low, high + 1)]


def submit_jobs_in_range(first: str, last: str) -> InBulk:
    """Submit one job for each alias from ``first`` to ``last`` ("v1" to "v300"), in that
    order, each as Submit Job does (LC-038 holds at volume). Each submission is compared
    where it changed the state (its job, read by id, and the counts), the last in full
    (every record, the listing, the health snapshot)."""
    return InBulk(tuple(cmd.Submit(alias) for alias in alias_range(first, last)))


def jobs_in_range_return(first: str, last: str, result: str) -> InBulk:
    """The body of each job from ``first`` to ``last``, in that order, returns ``result``
    (a JSON value); compared as Submit Jobs In Range's."""
    value = json_value(result)
    return InBulk(tuple(cmd.Finish(alias, cmd.Succeed(value))
                        for alias in alias_range(first, last)))


def jobs_in_range_are_cancelled(first: str, last: str) -> InBulk:
    """Cancel each job from ``first`` to ``last``, in that order; compared as Submit Jobs
    In Range's."""
    return InBulk(tuple(cmd.Cancel(alias) for alias in alias_range(first, last)))


def job_raises_long_message(alias: str, error_type: str, length: int) -> cmd.Finish:
    """The job's body raises ``error_type`` with a message of ``length`` characters, the
    same text for a length every time (LC-039)."""
    return cmd.Finish(alias, cmd.Raise(error_type, long_text(int(length))))


def job_returns_long_text(alias: str, length: int) -> cmd.Finish:
    """The job's body returns a text of ``length`` characters, the same text for a length
    every time (LC-039)."""
    return cmd.Finish(alias, cmd.Succeed(long_text(int(length))))


def submit_job_ignoring_cancellation(alias: str) -> cmd.Submit:
    """Submit a job whose body never checks its cancellation token. Returns its id."""
    return cmd.Submit(alias, ignores_cancel=True)


def submit_job_with_retry(alias: str, max_retries: int, delay_ms: float = 1000.0,
                          multiplier: float = 2.0, cap_ms: float | None = None,
                          not_retried: str = "") -> OnProfile:
    """Submit a job with its own retry policy; it must be accepted. Returns its id.

    Unset values are RT-001's defaults: ``delay_ms`` 1000, ``multiplier`` 2, ``cap_ms``
    the profile's max_retry_delay_ms. ``not_retried`` lists error type names, separated
    by commas, that fail the job at once (RT-005).
    """
    return OnProfile(lambda profile: cmd.Submit(alias, retry=retry_policy(
        profile, max_retries, delay_ms, multiplier, cap_ms, not_retried)))


def submit_job_for_module(alias: str, module: str) -> cmd.Submit:
    """Submit a job naming ``module`` (LC-027); it must be accepted. Returns its id."""
    return cmd.Submit(alias, module=module)


def submit_job_for_owner(alias: str, owner: str, trigger: str | None = None) -> cmd.Submit:
    """Submit a job run for ``owner``, started by ``trigger`` if given (LC-033); it must
    be accepted. Returns its id."""
    return cmd.Submit(alias, owner=owner, trigger=trigger)


def submit_job_with_options(alias: str, options: str) -> cmd.Submit:
    """Submit a job with ``options`` (a JSON value) as its execution options (LC-035); it
    must be accepted. Returns its id."""
    return cmd.Submit(alias, options=json_value(options))
def submit_job_with_arguments(alias: str, arguments: str) -> cmd.Submit:
    """Submit a job with ``arguments`` (a JSON value, LC-036); it must be accepted.
    Returns its id."""
    return cmd.Submit(alias, arguments=json_value(arguments))


def submit_job_that_returns(alias: str, result: str = "null", arguments: str = "null"
                            ) -> cmd.Submit:
    """Submit a job whose body is decided before the call: it returns ``result`` (a JSON
    value) once it runs, which a runtime with queued execution off does inside submit
    (LC-037). ``arguments``: the job's (LC-036), none by default. Returns its id."""
    return cmd.Submit(alias, arguments=json_value(arguments),
                      outcome=cmd.Succeed(json_value(result)))


def submit_job_that_raises(alias: str, error_type: str, message: str) -> cmd.Submit:
    """Submit a job whose body is decided before the call: it raises
    ``error_type(message)`` once it runs (LC-037). Returns its id."""
    return cmd.Submit(alias, outcome=cmd.Raise(error_type, message))


def dispatch() -> cmd.Dispatch:
    """A dispatch point: the runtime starts queued jobs into its free slots."""
    return cmd.Dispatch()


def job_returns(alias: str, result: str = "null") -> cmd.Finish:
    """The job's body returns ``result`` (a JSON value), now or as soon as it starts."""
    return cmd.Finish(alias, cmd.Succeed(json_value(result)))


def job_raises(alias: str, error_type: str, message: str,
               retry_after_ms: float | None = None) -> cmd.Finish:
    """The job's body raises ``error_type(message)``, now or as soon as it starts.

    ``retry_after_ms`` is a server's retry-after carried by the error (RT-010).
    """
    return cmd.Finish(alias, cmd.Raise(error_type, message, retry_after_ms))


def cancel_job(alias: str) -> cmd.Cancel:
    """Cancel the job (an alias never submitted is an unknown id); returns the answer."""
    return cmd.Cancel(alias)


def advance_clock(seconds: float) -> cmd.AdvanceTime:
    """Let ``seconds`` of virtual time pass."""
    return cmd.AdvanceTime(seconds)


def run_cleanup(max_age: float) -> cmd.Cleanup:
    """Remove terminal jobs at least ``max_age`` seconds old; returns the backend's count."""
    return cmd.Cleanup(max_age)


def shut_down_runtime() -> cmd.Shutdown:
    """Shut the runtime down: active jobs are cancelled, submissions refused."""
    return cmd.Shutdown()


def read_result(alias: str) -> cmd.GetResult:
    """The backend's answer to get_result: the value, or ``error: not found`` /
    ``error: not completed (status=...)``."""
    return cmd.GetResult(alias)


def list_jobs(status: str | None = None) -> OnProfile:
    """The aliases of the jobs the backend lists, optionally of one status only."""
    return OnProfile(lambda profile: cmd.ListJobs(
        None if status is None else canonical_status(profile, status)))


def query_executions(status: str | None = None, trigger: str | None = None,
                     owners: str | None = None, hours: float | None = None,
                     search: str | None = None, offset: int = 0,
                     limit: int | None = None) -> OnProfile:
    """One page of the executions query (LC-032, LC-033); returns the aliases of its jobs.

    ``owners`` lists owners separated by commas; a filter left out keeps every job, and
    ``limit`` left out is the runtime's page size.
    """
    return OnProfile(lambda profile: cmd.QueryExecutions(
        None if status is None else canonical_status(profile, status), trigger,
        None if owners is None else tuple(alias_list(owners)),
        None if hours is None else float(hours), search, int(offset),
        None if limit is None else int(limit)))


def read_execution_stats(hours: float | None = None,
                         owners: str | None = None) -> cmd.ExecutionStats:
    """The execution statistics (LC-034) over the last ``hours`` (every held job if left
    out), of ``owners`` only if given (separated by commas); returns the five counts."""
    return cmd.ExecutionStats(None if hours is None else float(hours),
                              None if owners is None else tuple(alias_list(owners)))


def query_clauses(clauses: str) -> OnProfile:
    """Parse a query's clauses into QueryExecutions (a status in the profile's words too).

    Raises:
        ValueError: a clause is not one of: status "S", trigger "T", owners "A, B",
            search "X", hours H, offset N, limit N; or one is given twice.
    """
    values: dict[str, Any] = {}
    for part in (piece.strip() for piece in _QUERY_SEPARATOR.split(clauses)):
        match = _QUERY_CLAUSE.fullmatch(part)
        if match is None:
            raise ValueError(f'cannot read {part!r} in {clauses!r}; write clauses such as'
                             ' \'status "failed"\', \'owners "ann, bob"\', \'hours 1\','
                             " 'offset 2', 'limit 2', joined by ',' or 'and'")
        name = match.group("name") or match.group("number_name")
        if name in values:
            raise ValueError(f"{name} is given twice in {clauses!r}")
        values[name] = (match.group("text") if match.group("name")
                        else float(match.group("number")))
    for whole in ("offset", "limit"):
        if whole in values:
            values[whole] = int(values[whole])
    return query_executions(**values)


def send_heartbeat(alias: str) -> cmd.Heartbeat:
    """The job's body reports progress (ST-001); only a running job's heartbeat counts."""
    return cmd.Heartbeat(alias)


def detect_stuck_jobs(timeout: float) -> cmd.DetectStuck:
    """A detection pass with ``timeout`` seconds; returns the backend's count of jobs
    it failed as stuck (ST-002)."""
    return cmd.DetectStuck(float(timeout))


def compute_delay(attempt: int, delay_ms: float = 1000.0, multiplier: float = 2.0,
                  cap_ms: float | None = None, jitter: str = "none", draw: float = 0.0,
                  previous_ms: float | None = None,
                  retry_after_ms: float | None = None) -> OnProfile:
    """Ask the backend's delay function; returns its answer in milliseconds.

    ``attempt`` counts retries already taken (0 before the first retry). ``jitter`` is
    none, full, equal or decorrelated; ``draw`` the uniform draw in [0, 1);
    ``previous_ms`` the previous delay (decorrelated); ``retry_after_ms`` a server's
    retry-after. The harness compares the answer with the oracle's.
    """
    try:
        mode = Jitter(jitter.strip().lower())
    except ValueError:
        raise ValueError(f"jitter must be one of {', '.join(m.value for m in Jitter)},"
                         f" not {jitter!r}") from None
    return OnProfile(lambda profile: cmd.ComputeDelay(
        retry_policy(profile, 0, delay_ms, multiplier, cap_ms), attempt, mode, draw,
        previous_ms, retry_after_ms))


# -- the steps' delay clauses: "full jitter, draw 0.5 and previous 2000 ms" ----------------

_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_JITTER_MODES = "|".join(mode.value for mode in Jitter)
_DELAY_CLAUSES = {
    "jitter": re.compile(rf"(?P<value>{_JITTER_MODES}) jitter|jitter (?P<value2>{_JITTER_MODES})"),
    "draw": re.compile(rf"draw (?P<value>{_NUMBER})"),
    "previous_ms": re.compile(rf"(?:a )?previous (?:delay )?(?:of )?(?P<value>{_NUMBER}) ms"),
    "retry_after_ms": re.compile(rf"(?:a )?retry-after (?:of )?(?P<value>{_NUMBER}) ms"),
}


# The clauses of a query's step: `status "failed", owners "ann, bob" and limit 2`.
_QUERY_CLAUSE = re.compile(rf'(?P<name>status|trigger|owners|search) "(?P<text>[^"]*)"'
                           rf"|(?P<number_name>hours|offset|limit) (?P<number>{_NUMBER})")
# A comma outside quotes, or "and": what separates a query's clauses.
_QUERY_SEPARATOR = re.compile(r'(?:,|\band\b)(?=(?:[^"]*"[^"]*")*[^"]*$)')


def delay_options(text: str) -> dict[str, Any]:
    """Parse "full jitter, draw 0.5 and previous 2000 ms" into ComputeDelay's fields.

    Raises:
        ValueError: a clause is not one of: MODE jitter, draw U, previous P ms,
            retry-after R ms; or a clause is given twice.
    """
    options: dict[str, Any] = {}
    for clause in (part.strip() for part in re.split(r",|\band\b", text)):
        for name, pattern in _DELAY_CLAUSES.items():
            match = pattern.fullmatch(clause)
            if match is None:
                continue
            if name in options:
                raise ValueError(f"{name} is given twice in {text!r}")
            value = str(match.group("value") or match.groupdict().get("value2"))
            options[name] = Jitter(value) if name == "jitter" else float(value)
            break
        else:
            raise ValueError(
                f"cannot read {clause!r} in {text!r}; write clauses such as 'full jitter',"
                " 'draw 0.5', 'previous 2000 ms', 'retry-after 5000 ms', joined by ',' or"
                " 'and'")
    return options


def _delay_with(attempt: int, delay: float, multiplier: float, cap: float,
                options: str) -> OnProfile:
    return OnProfile(lambda profile: cmd.ComputeDelay(
        retry_policy(profile, 0, delay, multiplier, cap), attempt,
        **(delay_options(options) if options else {})))


_RETRY_FIELDS = ("{retries:d} retries, a delay of {delay:g} ms, multiplier {multiplier:g}"
                 " and a cap of {cap:g} ms")
_RETRY_FIELDS_ONE = _RETRY_FIELDS.replace(" retries,", " retry,", 1)  # "with 1 retry, …"
_NOT_RETRIED = ' and "{not_retried}" not retried'
_DELAY_QUERY = ("the delay for attempt {attempt:d} is computed with {delay:g} ms,"
                " multiplier {multiplier:g} and a cap of {cap:g} ms")


def _with_retry(alias: str, retries: int, delay: float = 1000.0, multiplier: float = 2.0,
                cap: float | None = None, not_retried: str = "") -> OnProfile:
    return submit_job_with_retry(alias, retries, delay, multiplier, cap, not_retried)


def _each_retry_wording(pattern: str) -> tuple[Phrase, ...]:
    """`pattern` with "retries" and with "retry" (one), without and with errors not
    retried."""
    one = pattern.replace(" retries", " retry", 1)
    return tuple(Phrase(wording, _with_retry)
                 for wording in (pattern, one, pattern + _NOT_RETRIED, one + _NOT_RETRIED))


DECLARATIONS = (
    # Before Submit Job: its 'jobs "{aliases}" are submitted' would take a range's
    # wording, with '"v1" to "v300"' for its aliases.
    command_worded("Submit Jobs In Range", submit_jobs_in_range,
                   'jobs "{first}" to "{last}" are submitted', kept_as=_submitted),
    Declaration("Submit Job", submit_job, (
        Phrase('job "{alias}" is submitted', submit_job),
        Phrase('jobs "{aliases}" are submitted',
               lambda aliases: [cmd.Submit(alias) for alias in alias_list(aliases)]),
    ), kept_as=_submitted),
    command_worded("Submit Job Ignoring Cancellation", submit_job_ignoring_cancellation,
                   'job "{alias}" is submitted with a body that ignores cancellation',
                   kept_as=_submitted),
    command_worded("Submit Job For Module", submit_job_for_module,
                   'job "{alias}" is submitted for module "{module}"', kept_as=_submitted),
    Declaration("Submit Job With Arguments", submit_job_with_arguments, (
        Phrase('job "{alias}" is submitted with arguments {arguments:Json}',
               lambda alias, arguments: cmd.Submit(alias, arguments=arguments)),
    ), kept_as=_submitted),
    Declaration("Submit Job That Returns", submit_job_that_returns, (
        Phrase('job "{alias}" is submitted with a body that returns {result:Json}',
               lambda alias, result: cmd.Submit(alias, outcome=cmd.Succeed(result))),
        # Worded apart from the two above: a wording that one of them begins would match
        # it too, with the rest of the line taken for its JSON value.
        Phrase('job "{alias}" whose body returns {result:Json} is submitted with arguments'
               ' {arguments:Json}', lambda alias, result, arguments: cmd.Submit(
                   alias, arguments=arguments, outcome=cmd.Succeed(result))),
    ), kept_as=_submitted),
    command_worded("Submit Job That Raises", submit_job_that_raises,
                   'job "{alias}" is submitted with a body that raises {error_type:w}'
                   ' "{message}"',
                   kept_as=_submitted),
    Declaration("Submit Job With Retry", submit_job_with_retry, (
        *_each_retry_wording('job "{alias}" is submitted with {retries:d} retries'),
        *_each_retry_wording(f'job "{{alias}}" is submitted with {_RETRY_FIELDS}'),
    ), kept_as=_submitted),
    Declaration("Submit Job For Owner", submit_job_for_owner, (
        # The longer wording first: the shorter one's owner would swallow its trigger.
        Phrase('job "{alias}" is submitted for owner "{owner}" with trigger "{trigger}"',
               submit_job_for_owner),
        Phrase('job "{alias}" is submitted for owner "{owner}"', submit_job_for_owner),
    ), kept_as=_submitted),
    Declaration("Submit Job With Options", submit_job_with_options, (
        Phrase('job "{alias}" is submitted with options {options:Json}',
               lambda alias, options: cmd.Submit(alias, options=options)),
    ), kept_as=_submitted),
    command_worded("Dispatch", dispatch, "the runtime dispatches"),
    # Before Job Returns and Job Raises: their wordings would take these, with the rest
    # of the line for a JSON value or an error type.
    command_worded("Job Returns A Long Text", job_returns_long_text,
                   'job "{alias}" returns a text of {length:d} characters'),
    command_worded("Job Raises With A Long Message", job_raises_long_message,
                   'job "{alias}" raises {error_type:w} with a message of {length:d} characters'),
    Declaration("Job Returns", job_returns, (
        Phrase('job "{alias}" returns {result:Json}',
               lambda alias, result: cmd.Finish(alias, cmd.Succeed(result))),
    )),
    Declaration("Job Raises", job_raises, (
        Phrase('job "{alias}" raises {error_type:w} "{message}"', job_raises),
        Phrase('job "{alias}" raises {error_type:w} "{message}" with a retry-after of'
               " {ms:g} ms", lambda alias, error_type, message, ms: job_raises(
                   alias, error_type, message, float(ms))),
    )),
    Declaration("Jobs In Range Return", jobs_in_range_return, (
        Phrase('jobs "{first}" to "{last}" return {result:Json}',
               lambda first, last, result: [cmd.Finish(alias, cmd.Succeed(result))
                                            for alias in alias_range(first, last)]),
    )),
    command_worded("Cancel Jobs In Range", jobs_in_range_are_cancelled,
                   'jobs "{first}" to "{last}" are cancelled'),
    command_worded("Cancel Job", cancel_job, 'job "{alias}" is cancelled'),
    command_worded("Advance Clock", advance_clock, "{seconds:g} seconds pass",
                   "{seconds:g} second passes"),
    Declaration("Run Cleanup", run_cleanup, (
        Phrase("cleanup runs with a max age of {seconds:g} seconds",
               lambda seconds: run_cleanup(seconds)),
    )),
    command_worded("Shut Down Runtime", shut_down_runtime, "the runtime shuts down"),
    command_worded("Read Result", read_result, 'the result of job "{alias}" is read'),
    Declaration("List Jobs", list_jobs, (
        Phrase("the jobs are listed", cmd.ListJobs),
        Phrase('the jobs are listed with status "{status:Status}"', cmd.ListJobs),
    )),
    Declaration("Query Executions", query_executions, (
        Phrase("the executions are queried", query_executions),
        Phrase("the executions are queried with {clauses}", query_clauses),
    )),
    Declaration("Read Execution Stats", read_execution_stats, (
        Phrase("the execution statistics are read", read_execution_stats),
        Phrase("the execution statistics are read for the last {hours:g} hours",
               lambda hours: read_execution_stats(hours)),
        Phrase("the execution statistics are read for the last {hours:g} hour",
               lambda hours: read_execution_stats(hours)),
        Phrase('the execution statistics are read for owners "{owners}"',
               lambda owners: read_execution_stats(None, owners)),
    )),
    command_worded("Send Heartbeat", send_heartbeat, 'job "{alias}" sends a heartbeat'),
    Declaration("Detect Stuck Jobs", detect_stuck_jobs, (
        Phrase("stuck jobs are detected with a timeout of {seconds:g} seconds",
               lambda seconds: detect_stuck_jobs(seconds)),
        Phrase("stuck jobs are detected with a timeout of {seconds:g} second",
               lambda seconds: detect_stuck_jobs(seconds)),
    )),
    Declaration("Compute Delay", compute_delay, (
        Phrase(_DELAY_QUERY, lambda attempt, delay, multiplier, cap: _delay_with(
            attempt, delay, multiplier, cap, "")),
        Phrase(_DELAY_QUERY + ", with {options}", _delay_with),
        Phrase(_DELAY_QUERY + " with {options}", _delay_with),
        Phrase("the delay for attempt {attempt:d} is computed with the default policy",
               compute_delay),
    )),
)


# -- checks: each reads what the BACKEND shows (a job's record, an answer, the health
# -- report) through the scenario's state or the Robot library, which share `harness`,
# -- `answers`, `profile`, `last_command` and `run` -----------------------------------------

_MISSING = "<missing>"


def _field(alias: str, name: str, wanted: object,
           agrees: Callable[[object, object], bool] = operator.eq,
           shown: Callable[[object], object] | None = None) -> Reading:
    """The job's record shows `wanted` in field `name`."""
    return Reading(f"job {alias!r} {name}",
                   lambda through: getattr(job_record(through, alias), name, _MISSING),
                   wanted, agrees, shown=shown)


def _health(name: str, *fields: str) -> Callable[[Any], object]:
    def read(through: Any) -> object:
        health = through.harness.runtime.health()
        return tuple(getattr(health, field, _MISSING) for field in fields)

    read.__doc__ = name
    return read


def _canonical(status: str) -> OnHarness:
    return OnHarness(lambda harness: canonical_status(harness.profile, status))


def _second_of(value: object) -> object:
    """A timestamp with its second after the clock's start, for readable messages."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return f"{value.isoformat()} (second {(value - EPOCH).total_seconds():g})"
    return value


def _at(alias: str, name: str, seconds: float | None) -> Reading:
    return _field(alias, name, None if seconds is None else at(seconds), shown=_second_of)


def _shown_text(value: object) -> object:
    """A long text as its length and its last characters."""
    if isinstance(value, str) and len(value) > 40:
        return f"{len(value)} characters ending {value[-20:]!r}"
    return value


def _shown_range(aliases: object) -> object:
    """A long listing as its length and its ends."""
    if not isinstance(aliases, list) or len(aliases) <= 6:
        return aliases
    return f"{len(aliases)} jobs: {aliases[:3]} ... {aliases[-3:]}"


def _each_same(actual: object, wanted: object) -> bool:
    """Something was received, and each time the same value as `wanted`."""
    return isinstance(actual, list) and bool(actual) and all(
        same_value(wanted, value) for value in actual)


def _each_equal(actual: object, wanted: object) -> bool:
    return isinstance(actual, list) and bool(actual) and all(value == wanted
                                                             for value in actual)


def _script(through: Any, alias: str) -> Any:
    return through.harness.scripts.get(alias)


def _received(alias: str) -> Callable[[Any], object]:
    def read(through: Any) -> object:
        script = _script(through, alias)
        return [] if script is None else [shown_arguments(value)
                                          for value in script.received_arguments]

    return read


def _handed(alias: str) -> Callable[[Any], object]:
    def read(through: Any) -> object:
        script = _script(through, alias)
        return [] if script is None else list(script.options_handed)

    return read


def _held(through: Any) -> list[str]:
    """The ids of the jobs the backend lists."""
    return [view.job_id for view in through.harness.runtime.list_jobs(None)]


def stray_records(through: Any) -> list[str]:
    """The ids the backend holds records of without an accepted submission."""
    return [job_id for job_id in _held(through) if job_id not in through.harness.aliases]


def _not_held(alias: str) -> Callable[[Any], object]:
    def read(through: Any) -> object:
        job_id = through.harness.ids.get(alias)
        if job_id is None:  # never accepted: it must have left no record behind
            return stray_records(through)
        view = through.harness.runtime.get(job_id)
        held = [] if view is None else [f"held as {view.status}"]
        return held + (["listed"] if job_id in _held(through) else [])

    return read


def _own_ids(aliases: Sequence[str]) -> Callable[[Any], object]:
    """How often the backend lists each job, where each has an id of its own."""
    def read(through: Any) -> object:
        ids = [through.harness.ids.get(alias) for alias in aliases]
        if None in ids or len(set(ids)) != len(ids):
            return {"ids": ids}
        listed = _held(through)
        return {alias: listed.count(str(job_id))
                for alias, job_id in zip(aliases, ids, strict=True)}

    return read


def _no_stray_records() -> Reading:
    return Reading("records the runtime holds without an accepted submission",
                   stray_records, [])


def _refusal(alias: str, answer: str, why: str) -> tuple[Reading, ...]:
    """The submission of `alias` was answered `answer`, gave it no id and left no record."""
    return (Reading(f"the submission of job {alias!r} is refused {why}",
                    lambda through: through.answers.get(alias), answer),
            Reading(f"the refused job {alias!r} must get no id",
                    lambda through: through.harness.ids.get(alias), None),
            _no_stray_records())


def _refused_now(alias: str, answer: str, module: str | None = None) -> Reading:
    """Submit `alias`: the answer is `answer`, it gets no id, and the jobs held (and
    their total) are the same after as before."""
    def read(through: Any) -> object:
        before = (through.harness.runtime.health().total, _held(through))
        sent = through.run(cmd.Submit(alias) if module is None
                           else cmd.Submit(alias, module=module))
        after = (through.harness.runtime.health().total, _held(through))
        return sent, alias in through.harness.ids, after == before

    return Reading(f"the submission of {alias!r} (its answer, given an id, nothing left"
                   " behind)", read, (answer, False, True))


def _utc_offences(aliases: Sequence[str]) -> Callable[[Any], object]:
    """Each instant a job's record shows that is not timezone-aware UTC: the named jobs,
    or every held one where none is named."""
    def read(through: Any) -> object:
        names = list(aliases) or [through.harness.aliases.get(job_id, job_id)
                                  for job_id in _held(through)]
        if not names:
            raise RuntimeError("no jobs to check: name some, or submit some first")
        offences = []
        for alias in names:
            view = job_record(through, alias)
            for name in TIMESTAMP_FIELDS:
                value = getattr(view, name, None)
                if value is None and name != "submitted_at":
                    continue
                if not (isinstance(value, datetime) and value.utcoffset() == timedelta(0)):
                    offences.append((alias, name, value))
            # Every other instant field of the record too: one column at +05:30 is off
            # while the others are UTC (LC-005).
            off = field_off_utc(view)
            if off is not None:
                offences.append((alias, off[0], describe_offset(off[1])))
        return offences

    return read


def _delay(what: str, wanted: object,
           agrees: Callable[[float, float, object], bool]) -> Reading:
    """The delay answered to the latest Compute Delay, a number of milliseconds, agrees
    with `wanted` (`agrees(delay, cap, wanted)`)."""
    def read(through: Any) -> object:
        answer = answer_to(cmd.ComputeDelay, through)
        command = through.last_command
        if not isinstance(answer, float):
            raise AssertionError(f"{describe(command)} should answer a number of"
                                 f" milliseconds, the backend answered {answer!r}")
        return answer, command.policy.max_retry_delay_ms

    return Reading(f"the delay answered (and the cap): {what}", read, wanted,
                   lambda actual, wanted: agrees(*cast(tuple[float, float], actual), wanted))


# The checks' builders a Robot keyword takes: each is its signature and documentation.


def job_status_should_be(alias: str, status: str) -> Reading:
    """The backend's record of the job shows ``status`` (canonical or the profile's)."""
    return _field(alias, "status", _canonical(status))


def job_record_should_carry_its_id(alias: str) -> Reading:
    """The record's job_id is the id submit returned."""
    return _field(alias, "job_id", OnHarness(lambda harness: harness.ids.get(alias)))


def job_should_have_been_submitted_at_second(alias: str, second: float) -> Reading:
    return _at(alias, "submitted_at", second)


def job_should_have_started_at_second(alias: str, second: float) -> Reading:
    return _at(alias, "started_at", second)


def job_should_have_finished_at_second(alias: str, second: float) -> Reading:
    return _at(alias, "finished_at", second)


def job_should_not_have_started(alias: str) -> Reading:
    """started_at is empty."""
    return _at(alias, "started_at", None)


def job_should_not_have_finished(alias: str) -> Reading:
    """finished_at is empty."""
    return _at(alias, "finished_at", None)


def job_last_heartbeat_should_be_at_second(alias: str, second: float) -> Reading:
    """The backend's record shows last_heartbeat at ``second`` (ST-001)."""
    return _at(alias, "last_heartbeat", second)


def job_should_have_no_last_heartbeat(alias: str) -> Reading:
    """The backend's record shows no last_heartbeat (a job never started)."""
    return _at(alias, "last_heartbeat", None)


def timestamps_should_be_utc(*aliases: str) -> Reading:
    """Every timestamp of the named jobs (of every held job if none named) is a
    timezone-aware datetime at UTC offset zero."""
    return Reading("the instants (job, field, value) that are not timezone-aware UTC",
                   _utc_offences(aliases), [])


def job_result_should_be(alias: str, expected: str = "null") -> Reading:
    """The record's result field equals ``expected`` (a JSON value; null for empty)."""
    return _field(alias, "result", json_value(expected), same_value)


def job_arguments_should_be(alias: str, expected: str = "null") -> Reading:
    """The record shows the job's arguments as ``expected`` (a JSON value, LC-036):
    the same value, types apart, an object's keys in any order."""
    return _arguments(alias, json_value(expected))


def _arguments(alias: str, arguments: JsonValue) -> Reading:
    return Reading(f"job {alias!r} arguments", lambda through: shown_arguments(getattr(
        job_record(through, alias), "arguments", _MISSING)), arguments_text(arguments))


def job_body_should_have_received(alias: str, expected: str = "null") -> Reading:
    """The job's body ran, and each invocation received ``expected`` (a JSON value)
    as its arguments (LC-036)."""
    return _body_received(alias, json_value(expected))


def _body_received(alias: str, arguments: JsonValue) -> Reading:
    return Reading(f"the arguments the body of job {alias!r} received", _received(alias),
                   arguments_text(arguments), _each_equal)


def job_error_should_be(alias: str, expected: str | None) -> Reading:
    """The record's error field equals ``expected`` (``${NONE}`` for empty)."""
    return _field(alias, "error", expected)


def job_error_should_be_the_long_message(alias: str, error_type: str,
                                         length: int) -> Reading:
    """The job's error must be ``error_type: `` and the whole message of ``length``
    characters its body raised (LC-039)."""
    return _field(alias, "error", f"{error_type}: {long_text(int(length))}",
                  shown=_shown_text)


def job_result_should_be_the_long_text(alias: str, length: int) -> Reading:
    """The job's result must be the whole text of ``length`` characters its body
    returned (LC-039)."""
    return _field(alias, "result", long_text(int(length)), shown=_shown_text)


def job_should_not_be_held(alias: str) -> Reading:
    """get answers nothing for the job and list_jobs does not list it."""
    def read(through: Any) -> object:
        view = through.harness.run(cmd.Get(alias))
        return ([] if view is None else [f"get answers {view!r}"]) + (
            ["listed"] if alias in [through.harness.aliases.get(job_id)
                                    for job_id in _held(through)] else [])

    return Reading(f"job {alias!r} should not be held", read, [])


def jobs_should_each_be_held_once(*aliases: str) -> Reading:
    """The ids the backend returned for ``aliases`` are all different, and its listing
    holds each exactly once (LC-030)."""
    return Reading(f"how often each of jobs {list(aliases)} is listed (each with an id of"
                   " its own)", _own_ids(aliases), dict.fromkeys(aliases, 1))


def submission_should_be_refused_for_capacity(alias: str) -> Reading:
    """Submit ``alias``: the answer must be a capacity refusal leaving no record."""
    return _refused_now(alias, cmd.REFUSED_CAPACITY)


def submission_should_be_refused_as_shut_down(alias: str) -> Reading:
    """Submit ``alias``: the answer must be a shut-down refusal leaving no record."""
    return _refused_now(alias, cmd.REFUSED_SHUT_DOWN)


_MODULE_REFUSALS = {"malformed": cmd.REFUSED_INVALID_MODULE,
                    "unknown": cmd.REFUSED_UNKNOWN_MODULE,
                    "capacity": cmd.REFUSED_CAPACITY, "shut down": cmd.REFUSED_SHUT_DOWN}


def submission_for_module_should_be_refused(alias: str, module: str,
                                            reason: str) -> Reading:
    """Submit ``alias`` naming ``module``: the answer must be the refusal ``reason``
    (``malformed``, ``unknown``, ``capacity`` or ``shut down``), leaving no record."""
    if reason not in _MODULE_REFUSALS:
        raise ValueError(f"reason is one of {', '.join(_MODULE_REFUSALS)}, not {reason!r}")
    return _refused_now(alias, _MODULE_REFUSALS[reason], module)


def job_body_should_have_been_interrupted(alias: str) -> Reading:
    """The runtime interrupted the job's body (TaskScript.interrupt, LC-026)."""
    return Reading(f"whether the body of job {alias!r} was interrupted", lambda through: (
        None if (script := _script(through, alias)) is None else script.interrupted), True)


def job_body_should_have_run(alias: str, times: int) -> Reading:
    """The job's body was invoked exactly ``times`` times."""
    return Reading(f"how often the body of job {alias!r} ran", lambda through: (
        None if (script := _script(through, alias)) is None else script.invocations),
        times)


def job_owner_and_trigger_should_be(alias: str, owner: str | None,
                                    trigger: str | None = None) -> Reading:
    """The record shows the owner and trigger the job was submitted with (LC-033);
    ``None`` for one not given."""
    return Reading(f"job {alias!r} (owner, trigger)", lambda through: (
        getattr(view := job_record(through, alias), "owner", _MISSING),
        getattr(view, "trigger", _MISSING)), (owner, trigger))


def job_options_should_be(alias: str, options: str) -> Reading:
    """The record shows ``options`` (a JSON value) as its execution options (LC-035)."""
    return _field(alias, "options", json_value(options), same_value)


def job_body_should_have_been_handed_options(alias: str, options: str) -> Reading:
    """Each run of the job's body was handed ``options`` (a JSON value; LC-035)."""
    return Reading(f"the options each run of job {alias!r}'s body was handed",
                   _handed(alias), json_value(options), _each_equal)


def job_retry_state_should_be(alias: str, retry_count: int, max_retries: int) -> Reading:
    """The backend's record shows ``retry_count`` retries taken of ``max_retries`` (RT-008)."""
    return Reading(f"job {alias!r} (retry_count, max_retries)", lambda through: (
        getattr(view := job_record(through, alias), "retry_count", _MISSING),
        getattr(view, "max_retries", _MISSING)), (retry_count, max_retries),
        lambda actual, wanted: all(same_value(*pair) for pair in zip(
            cast(tuple[object, ...], wanted), cast(tuple[object, ...], actual), strict=True)))


def result_should_be(alias: str, expected: str) -> Reading:
    """get_result of the job must answer ``expected`` (a JSON value)."""
    return sent_answers(cmd.GetResult(alias), f"get_result({alias!r})", json_value(expected),
                 same_value)


def reading_result_should_fail_with(alias: str, expected: str) -> Reading:
    """get_result must fail; ``expected`` is ``not found`` or ``not completed (status=S)``
    (S canonical or the profile's name)."""
    prefix = "not completed (status="
    if expected == "not found":
        wanted: object = cmd.NOT_FOUND
    elif expected.startswith(prefix) and expected.endswith(")"):
        wanted = OnHarness(lambda harness: cmd.not_completed(canonical_status(
            harness.profile, expected[len(prefix):-1])))
    else:
        raise ValueError(f"expected 'not found' or 'not completed (status=S)', not"
                         f" {expected!r}")
    return sent_answers(cmd.GetResult(alias), f"get_result({alias!r})", wanted)


def _listing(status: str | None) -> Callable[[Any], object]:
    def read(through: Any) -> object:
        wanted = None if status is None else canonical_status(through.profile, status)
        return through.run(cmd.ListJobs(wanted))

    return read


def listing_should_show(*aliases: str, status: str | None = None) -> Reading:
    """list_jobs (with ``status=`` as filter) must list exactly ``aliases``, in order."""
    return Reading(f"the jobs listed with status {status}, in order", _listing(status),
                   list(aliases))


def listing_should_show_jobs_in_range(first: str, last: str,
                                      status: str | None = None) -> Reading:
    """list_jobs (with ``status=`` as filter) must list exactly the jobs ``first`` to
    ``last`` ("v1" to "v300"), in order (LC-038 at volume)."""
    return Reading(f"the jobs listed with status {status}, in order", _listing(status),
                   alias_range(first, last), shown=_shown_range)


def page_should_be(*aliases: str) -> Reading:
    """The latest executions query answered exactly ``aliases``, in order (LC-032)."""
    return answered(cmd.QueryExecutions, "the page's jobs, in order", list(aliases))


def stats_should_be(total: int, succeeded: int, failed: int, running: int,
                    queued: int) -> Reading:
    """The latest execution statistics answered these five counts (LC-034)."""
    return answered(cmd.ExecutionStats, "the execution statistics", dict(zip(
        cmd.STATS_FIELDS, (total, succeeded, failed, running, queued), strict=True)))


def health_should_show(queued: int, running: int, total: int) -> Reading:
    """The backend's health snapshot counts ``queued``, ``running`` and ``total`` records."""
    return Reading("health (queued, running, total)",
                   _health("health", "queued", "running", "total"), (queued, running, total))


def counters_should_show(processed: int, failed: int, cancelled: int) -> Reading:
    """The backend's outcome counters show ``processed``, ``failed`` and ``cancelled``."""
    return Reading("health counters (processed, failed, cancelled)",
                   _health("counters", "processed", "failed", "cancelled"),
                   (processed, failed, cancelled))


def worker_status_should_be(status: str) -> tuple[Reading, ...]:
    """The health report names its worker, non-empty and the same id as the harness
    saw first, with ``status`` (LC-029)."""
    def worker(through: Any) -> object:
        return getattr(through.harness.runtime.health(), "worker_id", _MISSING)

    def first(harness: Any) -> object:  # as the harness saw it first
        return harness.worker_id or getattr(harness.runtime.health(), "worker_id", None)

    return (Reading("the health report's worker_id (non-empty, the same in every snapshot)",
                    worker, OnHarness(first), lambda actual, wanted: isinstance(
                        actual, str) and bool(actual) and actual == wanted, checks="LC-029"),
            # The status is ranked by the latest command: a drain that ends late shows
            # here (LC-028).
            Reading("the health report's worker status", _health("status", "status"),
                    (status,)))


def second_runtime_should_name_another_worker() -> Reading:
    """Two runtimes the backend opens never share a worker id (LC-029)."""
    return Reading("a second runtime's worker id", lambda through: (
        through.harness.check_worker_id_unique()), None)


def report_last_heartbeat_should_be_at_second(seconds: float) -> Reading:
    """The health report's last heartbeat, a UTC time ``seconds`` after the clock's
    start (ST-005)."""
    return Reading("the health report's last_heartbeat (timezone-aware UTC)",
                   _health("heartbeat", "last_heartbeat"), (at(seconds),),
                   lambda actual, wanted: actual == wanted and cast(
                       datetime, cast(tuple[object], actual)[0]).utcoffset() == timedelta(0))


def report_should_have_no_last_heartbeat() -> Reading:
    return Reading("the health report's last_heartbeat",
                   _health("heartbeat", "last_heartbeat"), (None,))


def delay_should_be(expected_ms: float) -> Reading:
    """The last computed delay is ``expected_ms``, within DELAY_TOLERANCE_MS."""
    return _delay(f"within {DELAY_TOLERANCE_MS:g} ms of", float(expected_ms),
                  lambda delay, cap, wanted: abs(delay - cast(float, wanted))
                  <= DELAY_TOLERANCE_MS)


def delay_should_be_at_most_the_cap() -> Reading:
    """The last computed delay does not exceed the policy's max_retry_delay_ms."""
    return _delay("never exceeds max_retry_delay_ms", "at most the cap",
                  lambda delay, cap, wanted: delay <= cap)


def delay_should_be_below_the_cap() -> Reading:
    """The last computed delay is strictly below the cap (jitter did not vanish)."""
    return _delay("stays random below max_retry_delay_ms", "below the cap",
                  lambda delay, cap, wanted: delay < cap)


def delay_should_be_more_than(ms: float) -> Reading:
    return _delay("more than", float(ms),
                  lambda delay, cap, wanted: delay > cast(float, wanted))


def stuck_detection_should_fail(timeout: float, count: int) -> Reading:
    """A detection pass with ``timeout`` seconds must answer that it failed ``count``
    jobs as stuck."""
    return sent_answers(cmd.DetectStuck(float(timeout)), f"detect_stuck({timeout:g})'s count",
                 count, same_value)


def _statuses(aliases: str, status: str) -> Reading:
    jobs = alias_list(aliases)
    return Reading(f"jobs {jobs} status", lambda through: [
        job_record(through, alias).status for alias in jobs], [status] * len(jobs))


def _cancel_answer(wanted: bool) -> Reading:
    return answered(cmd.Cancel, "cancel's answer", wanted, same_value)


def _stuck_count(count: int) -> Reading:
    return answered(cmd.DetectStuck, "detect_stuck's count of jobs failed as stuck", count,
                   same_value)


def _ids_distinct(aliases: str) -> Reading:
    return Reading(f"the ids of jobs {aliases}", lambda through: [
        job_record(through, alias).job_id for alias in alias_list(aliases)],
        "all distinct", lambda ids, wanted: len(set(cast(list[str], ids))) == len(
            cast(list[str], ids)))


CHECKS = (
    Check("Job Status Should Be", job_status_should_be, (
        Phrase('job "{alias}" is {status:Status}',
               lambda alias, status: _field(alias, "status", status)),)),
    check_worded(None, _statuses, 'jobs "{aliases}" are {status:Status}'),
    check_worded("Job Should Have Been Submitted At Second",
                 job_should_have_been_submitted_at_second,
                 'job "{alias}" was submitted at second {second:g}'),
    check_worded("Job Should Have Started At Second", job_should_have_started_at_second,
                 'job "{alias}" started at second {second:g}'),
    check_worded("Job Should Have Finished At Second", job_should_have_finished_at_second,
                 'job "{alias}" finished at second {second:g}'),
    check_worded("Job Should Not Have Started", job_should_not_have_started,
                 'job "{alias}" has no start time'),
    check_worded("Job Should Not Have Finished", job_should_not_have_finished,
                 'job "{alias}" has no finish time'),
    Check("Timestamps Should Be UTC", timestamps_should_be_utc, (
        Phrase('every timestamp of job "{alias}" is timezone-aware UTC',
               lambda alias: timestamps_should_be_utc(alias)),)),
    Check("Job Result Should Be", job_result_should_be, (
        Phrase('job "{alias}" has the result {result:Json}',
               lambda alias, result: _field(alias, "result", result, same_value)),
        Phrase('job "{alias}" has no result', lambda alias: _field(alias, "result", None)),
    )),
    Check("Job Arguments Should Be", job_arguments_should_be, (
        Phrase('job "{alias}" has the arguments {arguments:Json}', _arguments),)),
    Check("Job Body Should Have Received", job_body_should_have_received, (
        Phrase('the body of job "{alias}" received the arguments {arguments:Json}',
               _body_received),)),
    Check("Job Error Should Be", job_error_should_be, (
        Phrase('job "{alias}" has the error "{error}"',
               lambda alias, error: job_error_should_be(alias, error)),
        Phrase('job "{alias}" has no error', lambda alias: job_error_should_be(alias, None)),
    )),
    Check("Job Should Not Be Held", job_should_not_be_held, (
        Phrase('job "{alias}" is not held', lambda alias: Reading(
            f"job {alias!r} should not be held, listed or leave a record", _not_held(alias),
            [])),)),
    check_worded(None, _ids_distinct, 'jobs "{aliases}" have distinct ids'),
    check_worded(None, _no_stray_records, "no record is held that was not accepted"),
    Check(None, _refusal, (
        Phrase('the submission of job "{alias}" is accepted', lambda alias: Reading(
            f"the submission of job {alias!r}", lambda through: through.answers.get(alias),
            cmd.ACCEPTED)),
        Phrase('the submission of job "{alias}" is refused for capacity', lambda alias: (
            _refusal(alias, cmd.REFUSED_CAPACITY, "for capacity"))),
        Phrase('the submission of job "{alias}" is refused because the runtime is shut down',
               lambda alias: _refusal(alias, cmd.REFUSED_SHUT_DOWN,
                                      "because the runtime is shut down")),
        Phrase('the submission of job "{alias}" is refused because the module id is'
               ' malformed', lambda alias: _refusal(alias, cmd.REFUSED_INVALID_MODULE,
                                                    "because the module id is malformed")),
        Phrase('the submission of job "{alias}" is refused because no such module exists',
               lambda alias: _refusal(alias, cmd.REFUSED_UNKNOWN_MODULE,
                                      "because no such module exists")),
    )),
    Check("Jobs Should Each Be Held Once", jobs_should_each_be_held_once, (
        Phrase('jobs "{aliases}" each have an id of their own, held once',
               lambda aliases: jobs_should_each_be_held_once(*alias_list(aliases))),)),
    Check("Submission Should Be Refused For Capacity",
          submission_should_be_refused_for_capacity),
    Check("Submission Should Be Refused As Shut Down",
          submission_should_be_refused_as_shut_down),
    Check("Submission For Module Should Be Refused", submission_for_module_should_be_refused),
    check_worded("Job Body Should Have Been Interrupted", job_body_should_have_been_interrupted,
                 'the body of job "{alias}" was interrupted'),
    Check("Job Body Should Have Run", job_body_should_have_run, (
        Phrase('the body of job "{alias}" ran {times:d} times', job_body_should_have_run),
        Phrase('the body of job "{alias}" never ran',
               lambda alias: job_body_should_have_run(alias, 0)),
    )),
    Check("Job Record Should Carry Its Id", job_record_should_carry_its_id),
    Check("Result Should Be", result_should_be),
    Check("Reading Result Should Fail With", reading_result_should_fail_with),
    Check("Listing Should Show", listing_should_show),
    Check("Listing Should Show Jobs In Range", listing_should_show_jobs_in_range),
    Check(None, answered, (
        Phrase("the answer is {answer:Json}", lambda answer: Reading(
            "the answer to the last command", lambda through: through.harness.last_answer,
            answer, same_value)),
        Phrase("the cancellation is accepted", lambda: _cancel_answer(True)),
        Phrase("the cancellation is rejected", lambda: _cancel_answer(False)),
        Phrase("cleanup removed {count:d} job", lambda count: answered(
            cmd.Cleanup, "cleanup's count of removed records", count, same_value)),
        Phrase("cleanup removed {count:d} jobs", lambda count: answered(
            cmd.Cleanup, "cleanup's count of removed records", count, same_value)),
        Phrase("the result is {result:Json}", lambda result: answered(
            cmd.GetResult, "get_result's answer", result, same_value)),
        Phrase("reading the result fails as not found", lambda: answered(
            cmd.GetResult, "get_result's answer", cmd.NOT_FOUND)),
        Phrase("reading the result fails as not completed with status {status:Status}",
               lambda status: answered(cmd.GetResult, "get_result's answer",
                                      cmd.not_completed(status))),
        Phrase("the read returns nothing", lambda: answered(
            cmd.Get, "get's answer for an id the runtime does not hold", None)),
        Phrase('the listing is "{aliases}"', lambda aliases: answered(
            cmd.ListJobs, "the listed jobs, in order", alias_list(aliases))),
        Phrase('the listing is jobs "{first}" to "{last}"', lambda first, last: answered(
            cmd.ListJobs, "the listed jobs, in order", alias_range(first, last),
            shown=_shown_range)),
    )),
    check_worded("Job Error Should Be The Long Message", job_error_should_be_the_long_message,
                 'job "{alias}" has the {error_type:w} error with the message of {length:d}'
                 ' characters'),
    check_worded("Job Result Should Be The Long Text", job_result_should_be_the_long_text,
                 'the result of job "{alias}" is the text of {length:d} characters'),
    Check(None, answered, (
        Phrase("the listing is empty", lambda: answered(cmd.ListJobs, "the listed jobs", [])),
    )),
    Check("Page Should Be", page_should_be, (
        Phrase('the page is "{aliases}"',
               lambda aliases: page_should_be(*alias_list(aliases))),
        Phrase("the page is empty", page_should_be),
    )),
    check_worded("Stats Should Be", stats_should_be,
                 "the statistics show {total:d} in total, {succeeded:d} succeeded, {failed:d}"
                 " failed, {running:d} running and {queued:d} queued"),
    check_worded("Job Owner And Trigger Should Be", job_owner_and_trigger_should_be,
                 'job "{alias}" is owned by "{owner}" with trigger "{trigger}"'),
    Check("Job Options Should Be", job_options_should_be, (
        Phrase('job "{alias}" has options {options:Json}', lambda alias, options: _field(
            alias, "options", options, same_value)),)),
    Check("Job Body Should Have Been Handed Options",
          job_body_should_have_been_handed_options, (
              Phrase('the body of job "{alias}" was handed options {options:Json}',
                     lambda alias, options: Reading(
                         f"the options each run of job {alias!r}'s body was handed",
                         _handed(alias), options, _each_same)),)),
    check_worded("Health Should Show", health_should_show,
                 "the health shows {queued:d} queued, {running:d} running, {total:d} in total"),
    check_worded("Counters Should Show", counters_should_show,
                 "the counters show {processed:d} processed, {failed:d} failed,"
                 " {cancelled:d} cancelled"),
    check_worded("Worker Status Should Be", worker_status_should_be,
                 'the health report names its worker, with status "{status}"'),
    check_worded("A Second Runtime Should Name Another Worker",
                 second_runtime_should_name_another_worker,
                 "a second runtime of the backend names another worker"),
    check_worded("Report Last Heartbeat Should Be At Second",
                 report_last_heartbeat_should_be_at_second,
                 "the health report's last heartbeat is at second {seconds:g}"),
    check_worded("Report Should Have No Last Heartbeat", report_should_have_no_last_heartbeat,
                 "the health report has no last heartbeat"),
    check_worded("Job Retry State Should Be", job_retry_state_should_be,
                 'job "{alias}" has retry count {retry_count:d} of {max_retries:d}'),
    check_worded("Delay Should Be", delay_should_be, "the delay is {expected_ms:g} ms"),
    check_worded("Delay Should Be At Most The Cap", delay_should_be_at_most_the_cap,
                 "the delay is at most the cap"),
    check_worded("Delay Should Be Below The Cap", delay_should_be_below_the_cap,
                 "the delay is below the cap"),
    check_worded("Delay Should Be More Than", delay_should_be_more_than,
                 "the delay is more than {ms:g} ms"),
    Check("Stuck Detection Should Fail", stuck_detection_should_fail, (
        Phrase("{count:d} job was failed as stuck", _stuck_count),
        Phrase("{count:d} jobs were failed as stuck", _stuck_count),
    )),
    check_worded("Job Last Heartbeat Should Be At Second", job_last_heartbeat_should_be_at_second,
                 'job "{alias}" last heartbeat is at second {second:g}'),
    check_worded("Job Should Have No Last Heartbeat", job_should_have_no_last_heartbeat,
                 'job "{alias}" has no last heartbeat'),
)
