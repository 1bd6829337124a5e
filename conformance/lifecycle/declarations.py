"""The job runtime's commands (lifecycle, retry, stuck), declared once
(conformance/vocabulary.py).

Each declaration names the Robot keyword that sends a command, builds the command from
the keyword's arguments, and lists the Gherkin wordings that send it. The Behave steps
(conformance/lifecycle/steps.py) and the Robot keywords
(conformance/lifecycle/keywords.py) are derived from this list; the wordings are the
feature files' and the Robot suites' own.

The keywords take results as JSON text and statuses in the canonical vocabulary or the
profile's own; the steps get JSON parsed already and statuses canonical (the `Json` and
`Status` types of conformance/step_library.py). A retry policy's cap left out is the
profile's (RT-001), so those commands are completed `OnProfile`. A submission's answer
is kept under its alias, for the Then-checks that read it.
"""

from __future__ import annotations

import re
from typing import Any

from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.vocabulary import (
    Declaration,
    InBulk,
    OnProfile,
    Phrase,
    json_value,
)
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.lifecycle import Status, long_text
from jobconform.spec import Profile, SpecError

CANONICAL_STATUSES = tuple(status.value for status in Status)


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
    Declaration("Submit Jobs In Range", submit_jobs_in_range, (
        Phrase('jobs "{first}" to "{last}" are submitted', submit_jobs_in_range),
    ), kept_as=_submitted),
    Declaration("Submit Job", submit_job, (
        Phrase('job "{alias}" is submitted', submit_job),
        Phrase('jobs "{aliases}" are submitted',
               lambda aliases: [cmd.Submit(alias) for alias in alias_list(aliases)]),
    ), kept_as=_submitted),
    Declaration("Submit Job Ignoring Cancellation", submit_job_ignoring_cancellation, (
        Phrase('job "{alias}" is submitted with a body that ignores cancellation',
               submit_job_ignoring_cancellation),
    ), kept_as=_submitted),
    Declaration("Submit Job For Module", submit_job_for_module, (
        Phrase('job "{alias}" is submitted for module "{module}"', submit_job_for_module),
    ), kept_as=_submitted),
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
    Declaration("Submit Job That Raises", submit_job_that_raises, (
        Phrase('job "{alias}" is submitted with a body that raises {error_type:w}'
               ' "{message}"', submit_job_that_raises),
    ), kept_as=_submitted),
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
    Declaration("Dispatch", dispatch, (Phrase("the runtime dispatches", dispatch),)),
    # Before Job Returns and Job Raises: their wordings would take these, with the rest
    # of the line for a JSON value or an error type.
    Declaration("Job Returns A Long Text", job_returns_long_text, (
        Phrase('job "{alias}" returns a text of {length:d} characters', job_returns_long_text),
    )),
    Declaration("Job Raises With A Long Message", job_raises_long_message, (
        Phrase('job "{alias}" raises {error_type:w} with a message of {length:d} characters',
               job_raises_long_message),
    )),
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
    Declaration("Cancel Jobs In Range", jobs_in_range_are_cancelled, (
        Phrase('jobs "{first}" to "{last}" are cancelled', jobs_in_range_are_cancelled),
    )),
    Declaration("Cancel Job", cancel_job, (Phrase('job "{alias}" is cancelled', cancel_job),)),
    Declaration("Advance Clock", advance_clock, (
        Phrase("{seconds:g} seconds pass", advance_clock),
        Phrase("{seconds:g} second passes", advance_clock),
    )),
    Declaration("Run Cleanup", run_cleanup, (
        Phrase("cleanup runs with a max age of {seconds:g} seconds",
               lambda seconds: run_cleanup(seconds)),
    )),
    Declaration("Shut Down Runtime", shut_down_runtime, (
        Phrase("the runtime shuts down", shut_down_runtime),
    )),
    Declaration("Read Result", read_result, (
        Phrase('the result of job "{alias}" is read', read_result),
    )),
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
    Declaration("Send Heartbeat", send_heartbeat, (
        Phrase('job "{alias}" sends a heartbeat', send_heartbeat),
    )),
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
