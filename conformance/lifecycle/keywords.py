"""Robot Framework keywords for the lifecycle, retry, stuck, reaper and redelivery areas.

The keywords that send a command or make a check are derived from their declarations:
the lifecycle, retry and stuck areas' (declarations.py), the reaper's and re-delivery's
(their areas' declarations.py). What stays here opens the runtime (and skips a test it
cannot check), submits from threads released together, and reads a record a later
keyword checks for a snapshot.
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
from functools import lru_cache
from typing import Any, cast

from robot.api import SkipExecution
from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.loading import BackendLoadError, load_backend
from jobconform.backends.protocol import Backend, JobView
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.area_keywords import (
    DEFAULT_BACKEND,
    close_at_end_of_test,
    robot_variable,
    test_failure,
)
from jobconform.conformance.harness import (
    Harness,
    Record,
    freeze,
)
from jobconform.conformance.lifecycle.declarations import (
    CHECKS,
    DECLARATIONS,
    canonical_status,
)
from jobconform.conformance.reaper import declarations as reaper
from jobconform.conformance.redelivery import declarations as redelivery
from jobconform.conformance.requirement_tags import requirement_tags
from jobconform.conformance.vocabulary import derive_check_keywords, derive_keywords
from jobconform.reference import commands as cmd
from jobconform.reference.commands import describe
from jobconform.spec import Profile, Registry, SpecError, load_registry


@lru_cache(maxsize=1)
def _registry() -> Registry:
    return load_registry()


@library(scope="SUITE", auto_keywords=False)
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
        self._forget_test()
        # The library is its own listener so that each test's runtime is closed.
        self.ROBOT_LIBRARY_LISTENER = self

    def _forget_test(self) -> None:
        """Nothing of an earlier test: the state a test starts with.

        One instance serves a suite's tests (scope SUITE): with one per test, Robot made
        a new instance and registered its listener three times a test, a tenth of the
        Robot suite's CPU. Every test starts from this state as a new instance did.
        """
        self._harness: Harness | None = None
        self._profile: Profile | None = None
        # Records read with `Read Job`: the view handed out and a deep copy taken then.
        self._earlier: dict[str, tuple[JobView, Record]] = {}
        # Why the running test cannot apply to this backend and profile (None: it can).
        self._skip_reason: str | None = None
        self._answers: dict[str, Any] = {}  # alias -> the answer to its submission
        # The last command sent (the checks of an answer read its kind).
        self.last_command: cmd.Command | None = None

    # -- listener ------------------------------------------------------------------------

    def start_test(self, data: Any, result: Any) -> None:
        """Skip a test tagged with a requirement the backend or profile cannot check.

        The test's setup is replaced by ``Skip`` with the reason, so none of its keywords
        run; `Start Runtime` refuses too, should a setup run keywords before it.
        """
        self._forget_test()
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
        self.last_command = command
        return self.harness.run(command)

    def _accepted(self, answer: object) -> str:
        """A submission's answer must be acceptance; the id the backend gave the job."""
        submitted = cast(cmd.Submit, self.last_command)
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
            raise self._fail(f"cancel of {cast(cmd.Cancel, self.last_command).job!r} should answer"
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
            timeout = cast(cmd.DetectStuck, self.last_command).job_timeout_seconds
            raise self._fail(f"detect_stuck({timeout:g}) should answer a count, backend"
                             f" answered {answer!r}")
        return answer

    def _delay_answer(self, answer: object) -> float:
        """The delay answered to `Compute Delay` (the `Delay Should …` checks read it)."""
        if not isinstance(answer, float):
            command = cast(cmd.ComputeDelay, self.last_command)
            raise self._fail(f"{describe(command)} should answer a number of milliseconds,"
                             f" backend answered {answer!r}")
        return answer

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

    # -- reaper and re-delivery: their commands and checks derived from their areas'
    # -- declarations.py; what stays here checks the answer a command keyword got

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

    def _lease_pass(self, answer: object) -> dict[str, object]:
        if not isinstance(answer, dict):
            raise self._fail(f"expire_leases should answer a dict, backend answered {answer!r}")
        return answer


derive_check_keywords(JobconformLibrary, CHECKS, lambda library: library)
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
derive_check_keywords(JobconformLibrary, reaper.CHECKS, lambda library: library)
derive_check_keywords(JobconformLibrary, redelivery.CHECKS, lambda library: library)
