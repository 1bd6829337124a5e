"""Robot Framework keywords for the lifecycle, retry, stuck, reaper and redelivery areas.

The keywords that send a command are derived from their declarations: the lifecycle,
retry and stuck areas' (declarations.py), the reaper's and re-delivery's (their areas'
declarations.py).
Every keyword that changes something drives the `Harness`, so the backend and the oracle
see the same command and any difference fails the test with the harness's `Divergence`
(its whole message, naming the requirement IDs). The assertion keywords then read the
BACKEND's own state (its records, its answers, its health snapshot) and compare it with
the concrete value the test states, so each check stands on its own as well.

Usage::

    *** Settings ***
    Library    jobconform.conformance.lifecycle.keywords.JobconformLibrary

The backend and profile come from the library arguments, else from the Robot variables
``${BACKEND}`` (an entry-point name or ``module:attr``; default ``memory``) and
``${PROFILE}`` (default: the profile the backend declares)::

    robot --variable BACKEND:memory --variable PROFILE:task-manager robot/

Jobs are named by aliases the test picks (``a``, ``b``). Seconds are counted from the
virtual clock's start, `jobconform.conformance.clock.EPOCH`; time passes only through
``Advance Clock``. Statuses are given in the canonical vocabulary (queued, running,
succeeded, failed, cancelled) or in the active profile's own names.

Tests are tagged with the requirement IDs they check (``LC-011``, ``RT-003``). When a test
starts, the library (its own listener) looks each tag up in the spec: a requirement whose
area the backend does not claim, or whose profiles do not include the active one, makes
the test SKIP with the reason before any keyword runs, so it is never counted as a pass.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any, cast

from robot.api import SkipExecution
from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.loading import BackendLoadError, load_backend
from jobconform.backends.protocol import Backend, HealthView, JobView
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.area_keywords import (
    DEFAULT_BACKEND,
    close_at_end_of_test,
    robot_variable,
    test_failure,
)
from jobconform.conformance.area_steps import at
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.harness import (
    DELAY_TOLERANCE_MS,
    Harness,
    Record,
    freeze,
    shown_arguments,
)
from jobconform.conformance.lifecycle.declarations import (
    DECLARATIONS,
    alias_range,
    canonical_status,
)
from jobconform.conformance.reaper import declarations as reaper
from jobconform.conformance.redelivery import declarations as redelivery
from jobconform.conformance.requirement_tags import requirement_tags
from jobconform.conformance.utc import describe_offset, field_off_utc
from jobconform.conformance.vocabulary import derive_keywords, json_value
from jobconform.reference import commands as cmd
from jobconform.reference.commands import describe
from jobconform.reference.lifecycle import POISON_ERROR, arguments_text, long_text
from jobconform.reference.model import request_label
from jobconform.spec import Profile, Registry, SpecError, load_registry

TIMESTAMP_FIELDS = ("submitted_at", "started_at", "finished_at")


@lru_cache(maxsize=1)
def _registry() -> Registry:
    return load_registry()


def _text_shown(value: object) -> str:
    """A long text as its length and its last characters; anything else as it is."""
    if isinstance(value, str) and len(value) > 40:
        return f"{len(value)} characters ending {value[-20:]!r}"
    return repr(value)


def _second(value: object) -> object:
    """A timestamp as seconds since EPOCH, for readable messages."""
    if isinstance(value, datetime) and value.tzinfo is not None:
        return (value - EPOCH).total_seconds()
    return value



@library(scope="TEST", auto_keywords=False)
class JobconformLibrary:
    """Drive one backend runtime and the oracle per test, and assert on what the backend shows.

    Args:
        backend: entry-point name or ``module:attr``; default ``${BACKEND}`` or ``memory``.
        profile: profile name; default ``${PROFILE}`` or the backend's declared profile.
    """

    ROBOT_LISTENER_API_VERSION = 3

    def __init__(self, backend: str | None = None, profile: str | None = None) -> None:
        self._backend_name = backend
        self._profile_name = profile
        self._harness: Harness | None = None
        self._profile: Profile | None = None
        # Records read with `Read Job`: the view handed out and a deep copy taken then.
        self._earlier: dict[str, tuple[JobView, Record]] = {}
        # Why the running test cannot apply to this backend and profile (None: it can).
        self._skip_reason: str | None = None
        # The last `Compute Delay`: its command and the backend's answer.
        self._last_delay: tuple[cmd.ComputeDelay, float] | None = None
        self._answers: dict[str, Any] = {}  # alias -> the answer to its submission
        self._sent: cmd.Command | None = None  # the last command sent
        # The library is its own listener so that each test's runtime is closed.
        self.ROBOT_LIBRARY_LISTENER = self

    # -- listener ------------------------------------------------------------------------

    def start_test(self, data: Any, result: Any) -> None:
        """Skip a test tagged with a requirement the backend or profile cannot check.

        The test's setup is replaced by ``Skip`` with the reason, so none of its keywords
        run; `Start Runtime` refuses too, should a setup run keywords before it.
        """
        self._skip_reason = None
        selected = self._selection()
        if selected is None:
            return  # a bad backend or profile name: `Start Runtime` reports it
        backend, profile = selected
        reason = skip_reason(_registry(), backend, profile, requirement_tags(result.tags),
                             case_tags=result.tags)
        if reason is None:
            return
        self._skip_reason = reason
        data.setup.config(name="BuiltIn.Skip", args=(reason,))

    def end_test(self, data: Any, result: Any) -> None:
        """Close the test's runtime, whatever the outcome; a close that raises fails the
        test, as it fails the Behave scenario (Robot only logs a listener's exception)."""
        harness, self._harness = self._harness, None
        close_at_end_of_test(harness, result)

    # -- helpers ---------------------------------------------------------------------------

    @property
    def harness(self) -> Harness:
        if self._harness is None:
            raise RuntimeError("no runtime in this test yet: call `Start Runtime` first")
        return self._harness

    @property
    def profile(self) -> Profile:
        if self._profile is None:
            raise RuntimeError("no runtime in this test yet: call `Start Runtime` first")
        return self._profile

    def _selection(self) -> tuple[Backend, Profile] | None:
        """The backend and profile the library arguments or variables name, if loadable."""
        backend_name = (self._backend_name or robot_variable("${BACKEND}")
                        or DEFAULT_BACKEND)
        try:
            backend: Backend = load_backend(backend_name)
            profile_name = (self._profile_name or robot_variable("${PROFILE}")
                            or backend.profile)
            return backend, _registry().profile(profile_name)
        except (BackendLoadError, SpecError):
            return None

    def _fail(self, message: str, checks: str | None = None) -> AssertionError:
        """An assertion error naming the requirements the running test is tagged with,
        `checks` first (test_failure)."""
        return test_failure(message, checks)

    def _canonical(self, status: str) -> str:
        """A status given in the test, in the canonical vocabulary."""
        return canonical_status(self.profile, status)

    def _job_id(self, alias: str) -> str:
        job_id = self.harness.ids.get(alias)
        if job_id is None:
            raise self._fail(f"job {alias!r} was never accepted by the backend, so it has no id")
        return job_id

    def _view(self, alias: str) -> JobView:
        """The backend's current record of the job; fails if the backend holds none."""
        view = self.harness.runtime.get(self._job_id(alias))
        if view is None:
            raise self._fail(f"the backend holds no record of job {alias!r}")
        return view

    def _health(self) -> HealthView:
        return self.harness.runtime.health()

    def _held_aliases(self) -> list[str]:
        harness = self.harness
        return [harness.aliases.get(view.job_id, f"<unknown id {view.job_id}>")
                for view in harness.runtime.list_jobs(None)]

    def _check_timestamp(self, alias: str, name: str, expected: datetime | None) -> None:
        actual = getattr(self._view(alias), name, "<missing>")
        if actual != expected:
            raise self._fail(
                f"job {alias!r} {name} should be "
                f"{'empty' if expected is None else f'second {_second(expected)}'}"
                f" ({expected!r}) but the backend shows {actual!r}"
                f" (second {_second(actual)})"
            )

    def _refused(self, alias: str, expected: str, ignores_cancel: bool = False,
                 module: str | None = None) -> None:
        before_total = self._health().total
        before_held = self._held_aliases()
        answer = (self.run(cmd.Submit(alias, ignores_cancel=ignores_cancel)) if module is None
                  else self.run(cmd.Submit(alias, module=module)))
        if answer != expected:
            raise self._fail(f"submission of {alias!r} should be {expected!r}, backend answered"
                             f" {answer!r}")
        if alias in self.harness.ids:
            raise self._fail(f"the refused submission of {alias!r} was given an id")
        after_total, after_held = self._health().total, self._held_aliases()
        if (after_total, after_held) != (before_total, before_held):
            raise self._fail(
                f"the refused submission of {alias!r} left a record behind: held jobs went from"
                f" {before_held} (total {before_total}) to {after_held} (total {after_total})"
            )

    # -- setting up ------------------------------------------------------------------------

    @keyword("Start Runtime")
    def start_runtime(self, slots: int | None = None, task_cap: int | None = None,
                      unlimited_tasks: bool = False,
                      redelivery_cap: int | None = None,
                      page_size: int | None = None, queued_execution: bool = True) -> None:
        """Open a fresh runtime on the backend, with the profile's limits unless overridden.

        ``slots`` is max_concurrent, ``task_cap`` is max_tasks; ``unlimited_tasks=True``
        removes the cap whatever the profile says; ``redelivery_cap`` is max_redelivery
        (RD-002; the profile's by default); ``page_size`` the most a page of the
        executions query holds (LC-032; the profile's, else 50, by default);
        ``queued_execution=False`` opens it with queued execution off, so that submit runs
        each body itself (LC-037).
        """
        if self._skip_reason is not None:
            raise SkipExecution(self._skip_reason)
        if self._harness is not None:
            raise RuntimeError("`Start Runtime` was already called in this test")
        if slots is not None and slots < 1:
            raise ValueError(f"slots must be at least 1, not {slots}")
        if task_cap is not None and task_cap < 1:
            raise ValueError(f"task_cap must be at least 1, not {task_cap}")
        if task_cap is not None and unlimited_tasks:
            raise ValueError("give either task_cap or unlimited_tasks=True, not both")
        if redelivery_cap is not None and redelivery_cap < 0:
            raise ValueError(f"redelivery_cap must be at least 0, not {redelivery_cap}")
        if page_size is not None and page_size < 1:
            raise ValueError(f"page_size must be at least 1, not {page_size}")
        backend_name = (self._backend_name or robot_variable("${BACKEND}")
                        or DEFAULT_BACKEND)
        backend: Backend = load_backend(backend_name)
        registry = _registry()
        profile_name = self._profile_name or robot_variable("${PROFILE}") or backend.profile
        self._profile = registry.profile(profile_name)
        self._harness = Harness(backend, self._profile, registry, max_concurrent=slots,
                                max_tasks=task_cap, unlimited_tasks=unlimited_tasks,
                                max_redelivery=redelivery_cap, page_size=page_size,
                                queued_execution=queued_execution)
        settings = self._harness.settings
        BuiltIn().log(f"runtime on backend {backend.name!r} ({backend_name}), profile"
                      f" {profile_name!r}: max_concurrent={settings.max_concurrent},"
                      f" max_tasks={settings.max_tasks}")

    # -- commands: derived from declarations.py (derive_keywords, at the end); what
    # -- stays here checks the answer in its own way or keeps what it read -------------------

    @property
    def answers(self) -> dict[str, Any]:
        """The submissions' answers by alias (conformance/vocabulary.py keeps them here)."""
        return self._answers

    def run(self, command: cmd.Command) -> object:
        """Send one command through the test's harness; its answer."""
        self._sent = command
        return self.harness.run(command)

    def _accepted(self, answer: object) -> str:
        """A submission's answer must be acceptance; the id the backend gave the job."""
        submitted = cast(cmd.Submit, self._sent)
        alias = submitted.job
        if answer != cmd.ACCEPTED:
            detail = (f" with {submitted.retry}" if submitted.retry is not None
                      else f" for module {submitted.module!r}" if submitted.module is not None
                      else "")
            raise self._fail(f"submission of {alias!r}{detail} should be accepted, backend"
                             f" answered {answer!r}")
        return self._job_id(alias)

    def _cancel_answer(self, answer: object) -> bool:
        if not isinstance(answer, bool):
            raise self._fail(f"cancel of {cast(cmd.Cancel, self._sent).job!r} should answer"
                             f" true or false, backend answered {answer!r}")
        return answer

    def _cleanup_count(self, answer: object) -> int:
        if not isinstance(answer, int) or isinstance(answer, bool):
            raise self._fail(f"cleanup should answer a count, backend answered {answer!r}")
        return answer

    def _listing(self, answer: object) -> list[str]:
        if not isinstance(answer, list):
            raise self._fail(f"list_jobs should answer a list, backend answered {answer!r}")
        return [str(alias) for alias in answer]

    def _stuck_count(self, answer: object) -> int:
        if not isinstance(answer, int) or isinstance(answer, bool):
            timeout = cast(cmd.DetectStuck, self._sent).job_timeout_seconds
            raise self._fail(f"detect_stuck({timeout:g}) should answer a count, backend"
                             f" answered {answer!r}")
        return answer

    def _delay_answer(self, answer: object) -> float:
        """The delay answered to `Compute Delay`, kept for the `Delay Should …` checks."""
        command = cast(cmd.ComputeDelay, self._sent)
        if not isinstance(answer, float):
            raise self._fail(f"{describe(command)} should answer a number of milliseconds,"
                             f" backend answered {answer!r}")
        self._last_delay = (command, answer)
        return answer

    @keyword("Submission For Module Should Be Refused")
    def submission_for_module_should_be_refused(self, alias: str, module: str,
                                                reason: str) -> None:
        """Submit ``alias`` naming ``module``: the answer must be the refusal ``reason``
        (``malformed``, ``unknown``, ``capacity`` or ``shut down``), leaving no record."""
        answers = {"malformed": cmd.REFUSED_INVALID_MODULE,
                   "unknown": cmd.REFUSED_UNKNOWN_MODULE,
                   "capacity": cmd.REFUSED_CAPACITY, "shut down": cmd.REFUSED_SHUT_DOWN}
        if reason not in answers:
            raise ValueError(f"reason is one of {', '.join(answers)}, not {reason!r}")
        self._refused(alias, answers[reason], module=module)

    @keyword("Submit Jobs At Once")
    def submit_jobs_at_once(self, *aliases: str, answer: str = "accepted") -> list[str]:
        """Submit one job per alias, each from a thread of its own, the threads released
        together (LC-030). Every answer must be ``answer`` (``accepted``, or ``shut down``
        for a refusal). Returns the ids, in alias order, of the jobs accepted."""
        answers = {"accepted": cmd.ACCEPTED, "shut down": cmd.REFUSED_SHUT_DOWN}
        if answer not in answers:
            raise ValueError(f"answer is one of {', '.join(answers)}, not {answer!r}")
        actual = self.harness.run(cmd.SubmitConcurrently(tuple(aliases)))
        wanted = [answers[answer]] * len(aliases)
        if actual != wanted:
            raise self._fail(f"submissions of {list(aliases)} made at once should each be"
                             f" answered {answers[answer]!r}, backend answered {actual!r}")
        return [self._job_id(alias) for alias in aliases if alias in self.harness.ids]

    @keyword("Jobs Should Each Be Held Once")
    def jobs_should_each_be_held_once(self, *aliases: str) -> None:
        """The ids the backend returned for ``aliases`` are all different, and its listing
        holds each exactly once (LC-030)."""
        ids = [self.harness.ids.get(alias) for alias in aliases]
        if None in ids or len(set(ids)) != len(ids):
            raise self._fail(f"jobs {list(aliases)} should each have an id of their own,"
                             f" backend returned {ids}")
        listed = [view.job_id for view in self.harness.runtime.list_jobs(None)]
        counts = {alias: listed.count(str(job_id)) for alias, job_id in zip(aliases, ids,
                                                                             strict=True)}
        if set(counts.values()) != {1}:
            raise self._fail(f"jobs {list(aliases)} should each be listed once, backend"
                             f" lists them {counts} times")

    @keyword("Submission Should Be Refused For Capacity")
    def submission_should_be_refused_for_capacity(self, alias: str) -> None:
        """Submit ``alias``: the answer must be a capacity refusal leaving no record."""
        self._refused(alias, cmd.REFUSED_CAPACITY)

    @keyword("Submission Should Be Refused As Shut Down")
    def submission_should_be_refused_as_shut_down(self, alias: str) -> None:
        """Submit ``alias``: the answer must be a shut-down refusal leaving no record."""
        self._refused(alias, cmd.REFUSED_SHUT_DOWN)

    @keyword("Result Should Be")
    def result_should_be(self, alias: str, expected: str) -> None:
        """get_result of the job must answer ``expected`` (a JSON value)."""
        wanted = json_value(expected)
        answer = self.run(cmd.GetResult(alias))
        if answer != wanted or type(answer) is not type(wanted):
            raise self._fail(f"get_result({alias!r}) should return {wanted!r}, backend answered"
                             f" {answer!r}")

    @keyword("Reading Result Should Fail With")
    def reading_result_should_fail_with(self, alias: str, expected: str) -> None:
        """get_result must fail; ``expected`` is ``not found`` or ``not completed (status=S)``
        (S canonical or the profile's name)."""
        answer = self.run(cmd.GetResult(alias))
        wanted = cmd.NOT_FOUND if expected == "not found" else None
        prefix = "not completed (status="
        if expected.startswith(prefix) and expected.endswith(")"):
            wanted = cmd.not_completed(self._canonical(expected[len(prefix):-1]))
        if wanted is None:
            raise ValueError(f"expected 'not found' or 'not completed (status=S)', not"
                             f" {expected!r}")
        if answer != wanted:
            raise self._fail(f"get_result({alias!r}) should fail with {wanted!r}, backend"
                             f" answered {answer!r}")

    @keyword("Read Job")
    def read_job(self, alias: str) -> object:
        """Read the job's record through get; returns the backend's view (or None).

        The view is kept, with a copy of its contents, for ``Earlier Record Should Still Show``.
        """
        view = self.harness.run(cmd.Get(alias))
        if view is not None:
            job_view = cast(JobView, view)
            self._earlier[alias] = (job_view, copy.deepcopy(freeze(job_view)))
        return view

    @keyword("Earlier Record Should Still Show")
    def earlier_record_should_still_show(self, alias: str, status: str) -> None:
        """The view returned by the last ``Read Job`` of ``alias`` must still show ``status``
        and everything it showed when it was read (LC-016: get returns a snapshot)."""
        if alias not in self._earlier:
            raise RuntimeError(f"no earlier record of {alias!r}: call `Read Job` first")
        view, then = self._earlier[alias]
        wanted = self._canonical(status)
        if view.status != wanted:
            raise self._fail(f"the record of {alias!r} read earlier now shows status"
                             f" {view.status!r}, not {wanted!r}: get did not return a copy")
        if then.status != wanted:
            raise self._fail(f"the record of {alias!r} showed {then.status!r} when read, not"
                             f" {wanted!r}")
        now = freeze(view)
        if now != then:
            raise self._fail(f"the record of {alias!r} read earlier changed after it was"
                             f" returned: {then!r} became {now!r}")

    @keyword("Listing Should Show")
    def listing_should_show(self, *aliases: str, status: str | None = None) -> None:
        """list_jobs (with ``status=`` as filter) must list exactly ``aliases``, in order."""
        wanted = None if status is None else self._canonical(status)
        listed = self._listing(self.run(cmd.ListJobs(wanted)))
        if listed != list(aliases):
            what = "all jobs" if status is None else f"jobs with status {status!r}"
            raise self._fail(f"listing {what} should show {list(aliases)}, backend listed"
                             f" {listed}")

    @keyword("Listing Should Show Jobs In Range")
    def listing_should_show_jobs_in_range(self, first: str, last: str,
                                          status: str | None = None) -> None:
        """list_jobs (with ``status=`` as filter) must list exactly the jobs ``first`` to
        ``last`` ("v1" to "v300"), in order (LC-038 at volume)."""
        wanted = None if status is None else self._canonical(status)
        listed = self._listing(self.run(cmd.ListJobs(wanted)))
        expected = alias_range(first, last)
        if listed != expected:
            what = "all jobs" if status is None else f"jobs with status {status!r}"
            raise self._fail(f"listing {what} should show the {len(expected)} jobs {first}"
                             f" to {last}, backend listed {len(listed)}: {listed[:3]} ..."
                             f" {listed[-3:]}")

    @keyword("Job Error Should Be The Long Message")
    def job_error_should_be_the_long_message(self, alias: str, error_type: str,
                                             length: int) -> None:
        """The job's error must be ``error_type: `` and the whole message of ``length``
        characters its body raised (LC-039)."""
        error = self._view(alias).error
        expected = f"{error_type}: {long_text(int(length))}"
        if error != expected:
            raise self._fail(f"the error of {alias!r} should be the {len(expected)}"
                             f" characters raised, backend has {_text_shown(error)}")

    @keyword("Job Result Should Be The Long Text")
    def job_result_should_be_the_long_text(self, alias: str, length: int) -> None:
        """The job's result must be the whole text of ``length`` characters its body
        returned (LC-039)."""
        result = self._view(alias).result
        if result != long_text(int(length)):
            raise self._fail(f"the result of {alias!r} should be the {length} characters"
                             f" returned, backend has {_text_shown(result)}")

    @keyword("Page Should Be")
    def page_should_be(self, *aliases: str) -> None:
        """The latest executions query answered exactly ``aliases``, in order (LC-032)."""
        answer = self._answer_to(cmd.QueryExecutions, "Page Should Be")
        if answer != list(aliases):
            raise self._fail(f"the page should hold {list(aliases)}, backend answered"
                             f" {answer!r}")

    @keyword("Stats Should Be")
    def stats_should_be(self, total: int, succeeded: int, failed: int, running: int,
                        queued: int) -> None:
        """The latest execution statistics answered these five counts (LC-034)."""
        answer = self._answer_to(cmd.ExecutionStats, "Stats Should Be")
        wanted = dict(zip(cmd.STATS_FIELDS, (total, succeeded, failed, running, queued),
                          strict=True))
        if answer != wanted:
            raise self._fail(f"the execution statistics should be {wanted}, backend"
                             f" answered {answer!r}")

    def _answer_to(self, kind: type, keyword_name: str) -> object:
        """The answer to the latest command, which must be of `kind`."""
        if not isinstance(self._sent, kind):
            raise RuntimeError(f"`{keyword_name}` checks the answer to {kind.__name__}, but"
                               f" the latest command was {self._sent!r}")
        return self.harness.last_answer

    # -- assertions on the backend's records ----------------------------------------------

    @keyword("Job Owner And Trigger Should Be")
    def job_owner_and_trigger_should_be(self, alias: str, owner: str | None,
                                        trigger: str | None = None) -> None:
        """The record shows the owner and trigger the job was submitted with (LC-033);
        ``None`` for one not given."""
        view = self._view(alias)
        actual = (getattr(view, "owner", "<missing>"), getattr(view, "trigger", "<missing>"))
        if actual != (owner, trigger):
            raise self._fail(f"job {alias!r} should show owner and trigger {(owner, trigger)},"
                             f" the backend shows {actual}")

    @keyword("Job Options Should Be")
    def job_options_should_be(self, alias: str, options: str) -> None:
        """The record shows ``options`` (a JSON value) as its execution options (LC-035)."""
        wanted = json_value(options)
        actual = getattr(self._view(alias), "options", "<missing>")
        if actual != wanted or type(actual) is not type(wanted):
            raise self._fail(f"job {alias!r} should show options {wanted!r}, the backend"
                             f" shows {actual!r}")

    @keyword("Job Body Should Have Been Handed Options")
    def job_body_should_have_been_handed_options(self, alias: str, options: str) -> None:
        """Each run of the job's body was handed ``options`` (a JSON value; LC-035)."""
        wanted = json_value(options)
        script = self.harness.scripts.get(alias)
        handed = [] if script is None else script.options_handed
        if not handed or any(value != wanted for value in handed):
            raise self._fail(f"each run of the body of job {alias!r} should have been handed"
                             f" {wanted!r}; it was handed {handed!r}")

    @keyword("Job Body Should Have Been Interrupted")
    def job_body_should_have_been_interrupted(self, alias: str) -> None:
        """The runtime interrupted the job's body (TaskScript.interrupt, LC-026)."""
        script = self.harness.scripts.get(alias)
        if script is None or not script.interrupted:
            raise self._fail(f"the body of job {alias!r} should have been interrupted")

    @keyword("Job Body Should Have Run")
    def job_body_should_have_run(self, alias: str, times: int) -> None:
        """The job's body was invoked exactly ``times`` times."""
        script = self.harness.scripts.get(alias)
        runs = None if script is None else script.invocations
        if runs != times:
            raise self._fail(f"the body of job {alias!r} should have run {times} times, it"
                             f" ran {runs}")

    @keyword("Job Status Should Be")
    def job_status_should_be(self, alias: str, status: str) -> None:
        """The backend's record of the job shows ``status``."""
        wanted = self._canonical(status)
        actual = self._view(alias).status
        if actual != wanted:
            raise self._fail(f"job {alias!r} status should be {wanted!r} but the backend shows"
                             f" {actual!r}")

    @keyword("Job Record Should Carry Its Id")
    def job_record_should_carry_its_id(self, alias: str) -> None:
        """The record's job_id is the id submit returned."""
        job_id = self._job_id(alias)
        actual = self._view(alias).job_id
        if actual != job_id:
            raise self._fail(f"job {alias!r} was submitted as {job_id!r} but its record says"
                             f" {actual!r}")

    @keyword("Job Should Have Been Submitted At Second")
    def job_should_have_been_submitted_at_second(self, alias: str, second: float) -> None:
        self._check_timestamp(alias, "submitted_at", at(second))

    @keyword("Job Should Have Started At Second")
    def job_should_have_started_at_second(self, alias: str, second: float) -> None:
        self._check_timestamp(alias, "started_at", at(second))

    @keyword("Job Should Have Finished At Second")
    def job_should_have_finished_at_second(self, alias: str, second: float) -> None:
        self._check_timestamp(alias, "finished_at", at(second))

    @keyword("Job Should Not Have Started")
    def job_should_not_have_started(self, alias: str) -> None:
        """started_at is empty."""
        self._check_timestamp(alias, "started_at", None)

    @keyword("Job Should Not Have Finished")
    def job_should_not_have_finished(self, alias: str) -> None:
        """finished_at is empty."""
        self._check_timestamp(alias, "finished_at", None)

    @keyword("Job Result Should Be")
    def job_result_should_be(self, alias: str, expected: str = "null") -> None:
        """The record's result field equals ``expected`` (a JSON value; null for empty)."""
        wanted = json_value(expected)
        actual = self._view(alias).result
        if actual != wanted or type(actual) is not type(wanted):
            raise self._fail(f"job {alias!r} result should be {wanted!r} but the backend shows"
                             f" {actual!r}")

    @keyword("Job Arguments Should Be")
    def job_arguments_should_be(self, alias: str, expected: str = "null") -> None:
        """The record shows the job's arguments as ``expected`` (a JSON value, LC-036):
        the same value, types apart, an object's keys in any order."""
        wanted = arguments_text(json_value(expected))
        shown = shown_arguments(getattr(self._view(alias), "arguments", "<missing>"))
        if shown != wanted:
            raise self._fail(f"job {alias!r} arguments should be {wanted} but the backend"
                             f" shows {shown}")

    @keyword("Job Body Should Have Received")
    def job_body_should_have_received(self, alias: str, expected: str = "null") -> None:
        """The job's body ran, and each invocation received ``expected`` (a JSON value)
        as its arguments (LC-036)."""
        wanted = arguments_text(json_value(expected))
        script = self.harness.scripts.get(alias)
        received = [] if script is None else [shown_arguments(value)
                                              for value in script.received_arguments]
        if not received or any(value != wanted for value in received):
            raise self._fail(f"the body of job {alias!r} should have received {wanted}, it"
                             f" received {received or 'nothing (it never ran)'}")

    @keyword("Job Error Should Be")
    def job_error_should_be(self, alias: str, expected: str | None) -> None:
        """The record's error field equals ``expected`` (``${NONE}`` for empty)."""
        actual = self._view(alias).error
        if actual != expected:
            raise self._fail(f"job {alias!r} error should be {expected!r} but the backend shows"
                             f" {actual!r}")

    @keyword("Job Should Not Be Held")
    def job_should_not_be_held(self, alias: str) -> None:
        """get answers nothing for the job and list_jobs does not list it."""
        view = self.harness.run(cmd.Get(alias))
        if view is not None:
            raise self._fail(f"get({alias!r}) should return nothing, backend returned {view!r}")
        held = self._held_aliases()
        if alias in held:
            raise self._fail(f"job {alias!r} should not be held but the backend lists it: {held}")

    @keyword("Timestamps Should Be UTC")
    def timestamps_should_be_utc(self, *aliases: str) -> None:
        """Every timestamp of the named jobs (of every held job if none named) is a
        timezone-aware datetime at UTC offset zero."""
        names = list(aliases) or self._held_aliases()
        if not names:
            raise RuntimeError("no jobs to check: name some, or submit some first")
        for alias in names:
            view = self._view(alias)
            for name in TIMESTAMP_FIELDS:
                value = getattr(view, name)
                if value is None and name != "submitted_at":
                    continue
                if not isinstance(value, datetime):
                    raise self._fail(f"job {alias!r} {name} should be a datetime, backend shows"
                                     f" {value!r}")
                if value.tzinfo is None or value.utcoffset() is None:
                    raise self._fail(f"job {alias!r} {name} is naive ({value!r}); it must be"
                                     " timezone-aware UTC")
                if value.utcoffset() != timedelta(0):
                    raise self._fail(f"job {alias!r} {name} is at offset {value.utcoffset()}"
                                     f" ({value!r}); it must be UTC")
            # Every other instant field of the record too (last_heartbeat, …): one
            # column at +05:30 is off while the others are UTC (LC-005).
            off = field_off_utc(view)
            if off is not None:
                raise self._fail(f"job {alias!r} {off[0]} is {describe_offset(off[1])};"
                                 " it must be timezone-aware UTC")

    # -- assertions on the health snapshot ------------------------------------------------

    @keyword("Health Should Show")
    def health_should_show(self, queued: int, running: int, total: int) -> None:
        """The backend's health snapshot counts ``queued``, ``running`` and ``total`` records."""
        health = self._health()
        actual = (health.queued, health.running, health.total)
        if actual != (queued, running, total):
            raise self._fail(f"health should show queued={queued} running={running}"
                             f" total={total}, backend shows queued={actual[0]}"
                             f" running={actual[1]} total={actual[2]}")

    @keyword("Worker Status Should Be")
    def worker_status_should_be(self, status: str) -> None:
        """The health report names its worker, non-empty and the same id as the harness
        saw first, with ``status`` (LC-029)."""
        health = self._health()
        worker_id = getattr(health, "worker_id", "<missing>")
        first = self.harness.worker_id or worker_id
        if not isinstance(worker_id, str) or not worker_id or worker_id != first:
            raise self._fail(f"the health report's worker_id should stay {first!r} (a"
                             f" non-empty string), backend shows {worker_id!r}", "LC-029")
        actual = getattr(health, "status", "<missing>")
        if actual != status:
            raise self._fail(f"the worker status should be {status!r}, backend shows"
                             f" {actual!r}")

    @keyword("A Second Runtime Should Name Another Worker")
    def second_runtime_names_another_worker(self) -> None:
        """Two runtimes the backend opens never share a worker id (LC-029)."""
        self.harness.check_worker_id_unique()

    @keyword("Report Last Heartbeat Should Be At Second")
    def report_heartbeat_should_be(self, seconds: float) -> None:
        """The health report's last heartbeat, a UTC time ``seconds`` after the clock's
        start (ST-005)."""
        actual = getattr(self._health(), "last_heartbeat", "<missing>")
        expected = at(seconds)
        if not (isinstance(actual, datetime) and actual.utcoffset() == timedelta(0)
                and actual == expected):
            raise self._fail(f"the health report's last heartbeat should be"
                             f" {expected.isoformat()} (UTC), backend shows {actual!r}")

    @keyword("Report Should Have No Last Heartbeat")
    def report_has_no_heartbeat(self) -> None:
        actual = getattr(self._health(), "last_heartbeat", "<missing>")
        if actual is not None:
            raise self._fail(f"the health report should have no last heartbeat yet, backend"
                             f" shows {actual!r}")

    @keyword("Counters Should Show")
    def counters_should_show(self, processed: int, failed: int, cancelled: int) -> None:
        """The backend's outcome counters show ``processed``, ``failed`` and ``cancelled``."""
        health = self._health()
        actual = (health.processed, health.failed, health.cancelled)
        if actual != (processed, failed, cancelled):
            raise self._fail(f"counters should show processed={processed} failed={failed}"
                             f" cancelled={cancelled}, backend shows processed={actual[0]}"
                             f" failed={actual[1]} cancelled={actual[2]}")

    # -- retry: the record and the delay function -----------------------------------------

    @keyword("Job Retry State Should Be")
    def job_retry_state_should_be(self, alias: str, retry_count: int, max_retries: int) -> None:
        """The backend's record shows ``retry_count`` retries taken of ``max_retries`` (RT-008)."""
        view = self._view(alias)
        actual = (getattr(view, "retry_count", "<missing>"),
                  getattr(view, "max_retries", "<missing>"))
        if actual != (retry_count, max_retries) or not all(
                type(value) is int for value in actual):
            raise self._fail(f"job {alias!r} should show retry_count={retry_count}"
                             f" max_retries={max_retries}, backend shows"
                             f" retry_count={actual[0]!r} max_retries={actual[1]!r}")

    def _delay(self) -> tuple[cmd.ComputeDelay, float]:
        if self._last_delay is None:
            raise RuntimeError("no delay computed in this test: call `Compute Delay` first")
        return self._last_delay

    @keyword("Delay Should Be")
    def delay_should_be(self, expected_ms: float) -> None:
        """The last computed delay is ``expected_ms``, within DELAY_TOLERANCE_MS."""
        command, actual = self._delay()
        if abs(actual - expected_ms) > DELAY_TOLERANCE_MS:
            raise self._fail(f"{describe(command)} should be {expected_ms:g} ms (within"
                             f" {DELAY_TOLERANCE_MS:g} ms), backend answered {actual!r}")

    @keyword("Delay Should Be At Most The Cap")
    def delay_should_be_at_most_the_cap(self) -> None:
        """The last computed delay does not exceed the policy's max_retry_delay_ms."""
        command, actual = self._delay()
        cap = command.policy.max_retry_delay_ms
        if actual > cap:
            raise self._fail(f"{describe(command)} should be at most the cap {cap:g} ms,"
                             f" backend answered {actual!r}")

    @keyword("Delay Should Be Below The Cap")
    def delay_should_be_below_the_cap(self) -> None:
        """The last computed delay is strictly below the cap (jitter did not vanish)."""
        command, actual = self._delay()
        cap = command.policy.max_retry_delay_ms
        if not actual < cap:
            raise self._fail(f"{describe(command)} should stay random below the cap {cap:g}"
                             f" ms, backend answered {actual!r}")

    @keyword("Delay Should Be More Than")
    def delay_should_be_more_than(self, ms: float) -> None:
        command, actual = self._delay()
        if not actual > ms:
            raise self._fail(f"{describe(command)} should be more than {ms:g} ms, backend"
                             f" answered {actual!r}")

    @keyword("Stuck Detection Should Fail")
    def stuck_detection_should_fail(self, timeout: float, count: int) -> None:
        """A detection pass with ``timeout`` seconds must answer that it failed ``count``
        jobs as stuck."""
        answer = self._stuck_count(self.run(cmd.DetectStuck(float(timeout))))
        if answer != count:
            raise self._fail(f"detect_stuck({timeout:g}) should fail {count} job(s) as stuck,"
                             f" backend answered {answer!r}")

    @keyword("Job Last Heartbeat Should Be At Second")
    def job_last_heartbeat_should_be_at_second(self, alias: str, second: float) -> None:
        """The backend's record shows last_heartbeat at ``second`` (ST-001)."""
        self._check_timestamp(alias, "last_heartbeat", at(second))

    @keyword("Job Should Have No Last Heartbeat")
    def job_should_have_no_last_heartbeat(self, alias: str) -> None:
        """The backend's record shows no last_heartbeat (a job never started)."""
        self._check_timestamp(alias, "last_heartbeat", None)

    # -- reaper: its commands derived from conformance/reaper/declarations.py; what stays
    # -- here checks an answer or lets the runtime's configured defaults pass (RP-001..RP-008)

    def _reaper_started(self, answer: object) -> None:
        if answer != cmd.REAPER_STARTED:
            raise self._fail(f"start_reaper should be accepted, backend answered {answer!r}")

    def _reaper_refused(self, answer: object) -> None:
        if answer != cmd.REFUSED_REAPER_RUNNING:
            raise self._fail("start_reaper on a running reaper should be refused"
                             f" ({cmd.REFUSED_REAPER_RUNNING!r}), backend answered {answer!r}")

    def _reaper_stopped(self, answer: object) -> bool:
        if not isinstance(answer, bool):
            raise self._fail(f"stop_reaper should answer true or false, backend answered"
                             f" {answer!r}")
        return answer

    @keyword("Stop Reaper Should Answer")
    def stop_reaper_should_answer(self, expected: bool) -> None:
        """Stop the reaper; it must answer ``expected`` (RP-007)."""
        answer = self._reaper_stopped(self.run(reaper.stop_reaper()))
        if answer is not expected:
            raise self._fail(f"stop_reaper should answer {expected}, backend answered {answer}")

    def _reaper_status(self) -> dict[str, object]:
        answer = self.harness.run(cmd.ReaperStatus())
        if not isinstance(answer, dict):
            raise self._fail(f"reaper_status should answer a dict, backend answered {answer!r}")
        return answer

    @keyword("Reaper Should Be Running")
    def reaper_should_be_running(self, expected: bool = True) -> None:
        """The backend's reaper status says running (or not, with ``expected=False``)."""
        running = self._reaper_status().get("running")
        if running is not expected:
            raise self._fail(f"reaper_status running should be {expected}, backend shows"
                             f" {running!r}")

    @keyword("Reaper Counts Should Be")
    def reaper_counts_should_be(self, sweeps: int, failed: int, deleted: int) -> None:
        """The backend's reaper status counts ``sweeps`` completed, ``failed`` failed sweeps
        and ``deleted`` deleted jobs (RP-005)."""
        status = self._reaper_status()
        actual = (status.get("sweeps"), status.get("failed_sweeps"), status.get("deleted"))
        if actual != (sweeps, failed, deleted):
            raise self._fail(f"reaper status should show sweeps={sweeps} failed_sweeps={failed}"
                             f" deleted={deleted}, backend shows sweeps={actual[0]!r}"
                             f" failed_sweeps={actual[1]!r} deleted={actual[2]!r}")

    @keyword("Expired Jobs Should Be")
    def expired_jobs_should_be(self, older_than: float, *aliases: str) -> None:
        """list_expired(now - ``older_than`` seconds) must return exactly ``aliases``, in
        submission order (RP-003)."""
        answer = self.run(reaper.list_expired_jobs(older_than))
        if answer != list(aliases):
            raise self._fail(f"list_expired(now - {older_than:g} s) should return"
                             f" {list(aliases)}, backend returned {answer!r}")

    @keyword("Advance Clock By Default Reaper TTL")
    def advance_clock_by_default_reaper_ttl(self) -> None:
        """Move the clock by the reaper TTL the runtime was configured with (the profile's)."""
        self.harness.run(cmd.AdvanceTime(self.harness.settings.reaper_ttl_seconds))

    @keyword("Advance Clock By Default Sweep Interval Minus")
    def advance_clock_by_default_sweep_interval_minus(self, seconds: float) -> None:
        """Move the clock by the configured sweep interval less ``seconds``."""
        interval = self.harness.settings.reaper_sweep_interval_ms / 1000
        if seconds > interval:
            raise ValueError(f"the default interval is {interval:g} s; {seconds:g} s cannot"
                             " be left out of it")
        self.harness.run(cmd.AdvanceTime(interval - seconds))

    # -- re-delivery: its commands derived from conformance/redelivery/declarations.py;
    # -- what stays here checks an answer or a record (RD-001..RD-007) ---------------------

    def _lease_pass(self, answer: object) -> dict[str, object]:
        if not isinstance(answer, dict):
            raise self._fail(f"expire_leases should answer a dict, backend answered {answer!r}")
        return answer

    @keyword("Previous Owner Write Should Be Refused")
    def previous_owner_write_should_be_refused(self, alias: str, write: str) -> None:
        """The owner of the delivery the job's latest lease expiry took away writes late
        (``outcome``, ``failure`` or ``heartbeat``); the runtime must refuse it (RD-006)."""
        answer = self.run(redelivery.previous_owner_writes(alias, write))
        if answer is not False:
            raise self._fail(f"the previous owner's {write} for job {alias!r} was accepted"
                             f" (answer {answer!r}); a superseded delivery writes nothing")

    @keyword("Lease Pass Should Re-queue And Park")
    def lease_pass_should_requeue_and_park(self, lease: float, requeued: int,
                                           parked: int) -> None:
        """A lease pass must answer that it re-queued ``requeued`` and parked ``parked``."""
        answer = self._lease_pass(self.run(redelivery.expire_leases(lease)))
        expected = {"requeued": requeued, "parked": parked}
        if answer != expected:
            raise self._fail(f"expire_leases({lease:g}) should answer {expected}, backend"
                             f" answered {answer!r}")

    @keyword("Lease Pass Under Store Fault Should Re-queue And Park")
    def lease_pass_under_store_fault(self, lease: float, fault: str, write: int,
                                     requeued: int, parked: int) -> None:
        """A lease pass while store write ``write`` ``fail``s or the process ``crash``es at
        it (a restarted rescuer then passes again at once) must answer ``requeued`` and
        ``parked`` (RD-007)."""
        answer = self.run(redelivery.expire_leases_under_store_fault(lease, fault, write))
        expected = {"requeued": int(requeued), "parked": int(parked)}
        if answer != expected:
            raise self._fail(f"expire_leases({lease:g}) under a store fault should answer"
                             f" {expected}, backend answered {answer!r}")

    @keyword("Job Redelivery Count Should Be")
    def job_redelivery_count_should_be(self, alias: str, count: int) -> None:
        """The backend's record shows ``count`` re-deliveries (RD-001, RD-004)."""
        actual = getattr(self._view(alias), "redelivery_count", "<missing>")
        if actual != count or type(actual) is not int:
            raise self._fail(f"job {alias!r} should show redelivery_count={count}, backend"
                             f" shows {actual!r}")

    @keyword("Job Should Be Parked As Poison")
    def job_should_be_parked_as_poison(self, alias: str) -> None:
        """Failed with the poison error, alerted and poisoned (RD-003)."""
        view = self._view(alias)
        actual = (view.status, view.error, getattr(view, "alerted", "<missing>"),
                  getattr(view, "poisoned", "<missing>"))
        expected = ("failed", POISON_ERROR, True, True)
        if actual != expected:
            raise self._fail(f"job {alias!r} should be parked as poison"
                             f" (status, error, alerted, poisoned) = {expected},"
                             f" backend shows {actual!r}")

    @keyword("Job Should Not Be Parked")
    def job_should_not_be_parked(self, alias: str) -> None:
        view = self._view(alias)
        actual = (getattr(view, "alerted", "<missing>"), getattr(view, "poisoned", "<missing>"))
        if actual != (False, False):
            raise self._fail(f"job {alias!r} should be neither alerted nor poisoned, backend"
                             f" shows (alerted, poisoned) = {actual!r}")

    @keyword("Operator Alerts Should Be")
    def operator_alerts_should_be(self, *aliases: str) -> None:
        """The backend's operator alerts name exactly ``aliases``, in the order raised."""
        answer = self.harness.run(cmd.OperatorAlerts())
        if answer != list(aliases):
            raise self._fail(f"operator alerts should be {list(aliases)}, backend shows"
                             f" {answer!r}")

    @keyword("Parked Request Should Be")
    def parked_request_should_be(self, agent: str, request: str, number: int) -> None:
        """Agent ``agent`` parks ``request`` (RD-008), which must land on request
        ``number``: the ``number``-th the runtime answered with."""
        answer = self.run(redelivery.park_request(agent, request))
        expected = request_label(int(number) - 1)
        if answer != expected:
            raise self._fail(f"parking {request!r} of {agent!r} should land on {expected},"
                             f" backend answered {answer!r}")

    @keyword("Operator Requests Should Be")
    def operator_requests_should_be(self, *requests: str) -> None:
        """The operator queue holds exactly ``requests``, each "agent request-id", in the
        order first parked, and each is the request of that place (RD-008)."""
        expected = [[request_label(index), *pair.split()]
                    for index, pair in enumerate(requests)]
        answer = self.harness.run(cmd.OperatorRequests())
        if answer != expected:
            raise self._fail(f"operator requests should be {expected}, backend shows"
                             f" {answer!r}")


derive_keywords(JobconformLibrary, DECLARATIONS, lambda library: library, {
    "Submit Job": JobconformLibrary._accepted,
    "Submit Job Ignoring Cancellation": JobconformLibrary._accepted,
    "Submit Job With Retry": JobconformLibrary._accepted,
    "Submit Job For Module": JobconformLibrary._accepted,
    "Submit Job For Owner": JobconformLibrary._accepted,
    "Submit Job With Options": JobconformLibrary._accepted,
    "Submit Job With Arguments": JobconformLibrary._accepted,
    "Submit Job That Returns": JobconformLibrary._accepted,
    "Submit Job That Raises": JobconformLibrary._accepted,
    "Cancel Job": JobconformLibrary._cancel_answer,
    "Run Cleanup": JobconformLibrary._cleanup_count,
    "List Jobs": JobconformLibrary._listing,
    "Detect Stuck Jobs": JobconformLibrary._stuck_count,
    "Compute Delay": JobconformLibrary._delay_answer,
})
derive_keywords(JobconformLibrary, reaper.DECLARATIONS, lambda library: library, {
    "Start Reaper": JobconformLibrary._reaper_started,
    "Start Reaper By Old Names": JobconformLibrary._reaper_started,
    "Starting Reaper Should Be Refused": JobconformLibrary._reaper_refused,
    "Stop Reaper": JobconformLibrary._reaper_stopped,
})
derive_keywords(JobconformLibrary, redelivery.DECLARATIONS, lambda library: library,
                {"Expire Leases": JobconformLibrary._lease_pass})
