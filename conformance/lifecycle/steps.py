"""The Behave front-end: a step library that drives the harness in plain sentences.

Every When-step sends one command through `Harness.run`, which applies it to the backend
and to the oracle and compares everything; a `Divergence` raised there is left to
propagate, so it becomes the scenario's failure with its whole message. Every Then-step
makes its own named check on what the BACKEND shows (a job record, the health snapshot,
the last answer), so a scenario states its expectation even where the oracle agrees.

Use it from a features folder:

    # features/environment.py
    from jobconform.conformance.lifecycle.steps import after_scenario, before_all, before_scenario

    # features/steps/lifecycle_steps.py
    from jobconform.conformance.lifecycle.steps import *  # noqa: F403

and pick the backend and profile on the command line: `behave -D backend=memory
-D profile=canonical` (the backend is an entry point name or `module:attr`; the profile
defaults to the one the backend declares). Statuses are written in the canonical
vocabulary; seconds count from the virtual clock's start, `EPOCH`.

A scenario is tagged with the requirement IDs it checks (`@LC-011`, `@RT-003`). Before it
runs, each tag is looked up in the spec: a requirement whose area the backend does not
claim, or whose profiles do not include the active one, makes the scenario SKIPPED with
the reason, so it is never run and never counted as a pass.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

from behave import given, register_type, then, use_step_matcher, when

from jobconform.backends.loading import load_backend
from jobconform.backends.protocol import Backend, JobView
from jobconform.conformance import tolerance
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.harness import DELAY_TOLERANCE_MS, Divergence, Harness
from jobconform.conformance.utc import field_off_utc
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.commands import describe
from jobconform.reference.lifecycle import JsonValue, Status
from jobconform.spec import Profile, Registry, load_registry

__all__ = ["ScenarioState", "after_scenario", "before_all", "before_scenario", "skip_reason",
           "state_of"]

DEFAULT_BACKEND = "memory"
# A requirement ID as a scenario tag: LC-011, RT-003 (the spec's id pattern).
REQUIREMENT_TAG = re.compile(r"[A-Z]{2,4}-\d{3}")

# -- typed registration ------------------------------------------------------------------

StepFunction = TypeVar("StepFunction", bound=Callable[..., None])
AreaState = TypeVar("AreaState")


def _register(decorators: Sequence[Any], *patterns: str) -> Callable[[StepFunction],
                                                                     StepFunction]:
    """Register one typed function under each pattern with each behave decorator."""

    def decorate(function: StepFunction) -> StepFunction:
        for pattern in patterns:
            for decorator in decorators:
                decorator(pattern)(function)
        return function

    return decorate


def setup_step(*patterns: str) -> Callable[[StepFunction], StepFunction]:
    """A Given-only step: it configures the runtime before any command."""
    return _register((given,), *patterns)


def action_step(*patterns: str) -> Callable[[StepFunction], StepFunction]:
    """A step that sends one command; usable as Given or When."""
    return _register((given, when), *patterns)


def check_step(*patterns: str) -> Callable[[StepFunction], StepFunction]:
    """A Then-step: a named check on what the backend shows. A check that fails on a
    listed deviation a harness recorded in this scenario (its consequence) passes over it:
    the scenario is reported on that deviation (conformance/tolerance.py)."""
    register = _register((then,), *patterns)

    def decorate(function: StepFunction) -> StepFunction:
        @functools.wraps(function)
        def checked(context: Any, *args: Any, **kwargs: Any) -> None:
            try:
                function(context, *args, **kwargs)
            except Divergence:
                raise  # a command the check ran diverged: the harness decided already
            except AssertionError:
                scenario = getattr(context, "scenario", None)
                if not tolerance.shows_listed_deviation(
                        requirement_tags(getattr(scenario, "effective_tags", ()))):
                    raise

        register(cast(StepFunction, checked))
        return function

    return decorate


# -- parameter types -----------------------------------------------------------------------


class _ParameterType:
    """A parse type: a callable with the regular expression it matches."""

    def __init__(self, pattern: str, convert: Callable[[str], object]) -> None:
        self.pattern = pattern
        self._convert = convert

    def __call__(self, text: str) -> object:
        return self._convert(text)


def _parse_json(text: str) -> JsonValue:
    try:
        value: JsonValue = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not a JSON value: {text!r} ({error})") from error
    return value


use_step_matcher("parse")
register_type(
    Status=_ParameterType("|".join(status.value for status in Status), str),
    Json=_ParameterType(r".+", _parse_json),
    Jitter=_ParameterType("|".join(mode.value for mode in Jitter), Jitter),
)

# -- per-run and per-scenario state ----------------------------------------------------------


@dataclass(frozen=True)
class RunConfig:
    """What `-D backend=…` and `-D profile=…` selected, loaded once per run."""

    backend_name: str
    backend: Backend
    profile: Profile
    registry: Registry


@dataclass
class ScenarioState:
    """One scenario's harness and what its steps have seen so far."""

    config: RunConfig
    # The job runtime's harness opens on first use: a scenario of a service area never
    # opens a job runtime, so a backend claiming only that area (pybreaker's) needs none.
    open_harness: Callable[[], Harness]
    submissions: dict[str, object] = field(default_factory=dict)  # alias -> answer
    reads: dict[str, JobView | None] = field(default_factory=dict)  # alias -> view read
    last_read: str | None = None
    last_command: cmd.Command | None = None
    # Harnesses of the areas beyond the lifecycle, opened by their own step modules on
    # first use (`area_state`); each is closed after the scenario.
    areas: dict[str, Any] = field(default_factory=dict)
    opened: Harness | None = None

    @property
    def harness(self) -> Harness:
        if self.opened is None:
            self.opened = self.open_harness()
        return self.opened

    def area_state(self, area: str, open_area: Callable[[RunConfig], AreaState]) -> AreaState:
        """The scenario's state for `area`, opened with `open_area(config)` on first use."""
        if area not in self.areas:
            self.areas[area] = open_area(self.config)
        return cast(AreaState, self.areas[area])

    def run(self, command: cmd.Command) -> object:
        """Apply a command through the harness; a Divergence propagates unchanged."""
        self.last_command = command
        return self.harness.run(command)


def load_run_config(userdata: Any) -> RunConfig:
    """Load the backend, spec and profile named by behave's userdata.

    Raises:
        BackendLoadError: the backend name or `module:attr` cannot be loaded.
        SpecError: the spec is malformed or the profile name is unknown.
    """
    backend_name = str(userdata.get("backend") or DEFAULT_BACKEND)
    backend = load_backend(backend_name)
    registry = load_registry()
    profile = registry.profile(str(userdata.get("profile") or backend.profile))
    return RunConfig(backend_name, backend, profile, registry)


def _run_config(context: Any) -> RunConfig:
    config = getattr(context, "jobconform_config", None)
    if not isinstance(config, RunConfig):
        config = load_run_config(context.config.userdata)
        context.jobconform_config = config
    return config


def open_state(config: RunConfig, max_concurrent: int | None = None,
               max_tasks: int | None = None, unlimited_tasks: bool = False,
               max_redelivery: int | None = None) -> ScenarioState:
    return ScenarioState(config, lambda: Harness(
        config.backend, config.profile, config.registry, max_concurrent=max_concurrent,
        max_tasks=max_tasks, unlimited_tasks=unlimited_tasks, max_redelivery=max_redelivery))


def state_of(context: Any) -> ScenarioState:
    state = getattr(context, "jobconform", None)
    if not isinstance(state, ScenarioState):
        raise RuntimeError(
            "no harness for this scenario; features/environment.py must import before_scenario"
            " and after_scenario from jobconform.conformance.lifecycle.steps"
        )
    return state


# -- hooks (re-exported by features/environment.py) -------------------------------------------


def before_all(context: Any) -> None:
    """Load the backend and profile once, so a bad name stops the run with a clear message."""
    _run_config(context)


def requirement_tags(tags: Any) -> list[str]:
    """The requirement IDs among behave tags (which carry no `@`), sorted and unique."""
    return sorted({str(tag) for tag in tags if REQUIREMENT_TAG.fullmatch(str(tag))})


def before_scenario(context: Any, scenario: Any) -> None:
    """Skip a scenario that cannot apply; else a fresh harness with the profile's limits."""
    config = _run_config(context)
    context.jobconform = None
    tolerance.start_case()  # a fresh journal of listed deviations for this scenario
    tags = getattr(scenario, "effective_tags", ())
    reason = skip_reason(config.registry, config.backend, config.profile,
                         requirement_tags(tags), case_tags=tags)
    if reason is not None:
        scenario.skip(reason)
        return
    context.jobconform = open_state(config)


def _step_error(scenario: Any, state: object) -> str | None:
    """The exception a step raised (Behave's JSON results leave out its message), with
    the requirement of the command it raised in when the harness does not say it."""
    for step in getattr(scenario, "steps", ()):
        error = getattr(step, "exception", None)
        if str(getattr(step, "status", "")).endswith("error") and error is not None:
            message = f"{type(error).__name__}: {error}"
            if ("requirement(s):" not in message and isinstance(state, ScenarioState)
                    and state.opened is not None):
                message += f"\n  requirement(s): {state.opened.last_command_named()}"
            return message
    return None


def after_scenario(context: Any, scenario: Any) -> None:
    state = getattr(context, "jobconform", None)
    error = _step_error(scenario, state)
    if error is not None:
        tolerance.write_case_error(
            f"{getattr(scenario.feature, 'name', '?')}: {scenario.name}", error)
    if isinstance(state, ScenarioState):
        try:
            try:
                for area_state in state.areas.values():
                    area_state.close()
            finally:
                if state.opened is not None:
                    state.opened.close()
                context.jobconform = None
        except Exception as close_error:
            # Behave marks the scenario `hook_error` and its JSON keeps no message: the
            # runner reads this one (after what the steps said, if they failed). A step's
            # own error, written above, stays the case's message: it is the first cause.
            if error is not None:
                raise
            tolerance.write_case_error(
                f"{getattr(scenario.feature, 'name', '?')}: {scenario.name}",
                f"closing the runtime: {type(close_error).__name__}: {close_error}")
            raise
    deviations = tolerance.take()
    if deviations:
        # Behave's own results cannot carry them: the runner reads this file beside them.
        tolerance.write_case_deviations(
            f"{getattr(scenario.feature, 'name', '?')}: {scenario.name}", deviations)


# -- helpers for checks -------------------------------------------------------------------


def _requirements(context: Any) -> str:
    """The scenario's requirement tags, with titles, as a Divergence names them: first
    the tag the latest command's primary requirement matches, if any."""
    scenario = getattr(context, "scenario", None)
    tags = requirement_tags(getattr(scenario, "effective_tags", ()))
    state = getattr(context, "jobconform", None)
    if isinstance(state, ScenarioState) and state.opened is not None:
        ranking = state.opened.last_command_ranked()
        tags.sort(key=lambda tag: ranking.index(tag) if tag in ranking else len(ranking))
    config = getattr(context, "jobconform_config", None)
    titles = ({r.id: r.title for r in config.registry.requirements}
              if isinstance(config, RunConfig) else {})
    return ", ".join(f"{tag} ({titles[tag]})" if tag in titles else tag for tag in tags)


def _check(context: Any, ok: bool, what: str, expected: object, actual: object) -> None:
    """Fail a Then-step in the Divergence's layout, naming the scenario's requirements."""
    state = getattr(context, "jobconform", None)
    scenario = getattr(context, "scenario", None)
    if not ok and tolerance.shows_listed_deviation(
            requirement_tags(getattr(scenario, "effective_tags", ()))):
        return  # a harness already recorded this listed deviation (see its docstring)
    if not ok:
        named = _requirements(context)
        commands = (state.opened.commands if isinstance(state, ScenarioState)
                    and state.opened is not None else [])
        steps = "\n".join(f"    {i}. {describe(c)}" for i, c in enumerate(commands, 1))
        raise AssertionError(
            "the backend's state does not meet the scenario's expectation\n"
            + (f"  requirement(s): {named}\n" if named else "")
            + f"  what: {what}\n  expected: {expected!r}\n  actual:   {actual!r}\n"
            + f"  commands so far:\n{steps or '    (none)'}"
        )


def _same(expected: object, actual: object) -> bool:
    """Equal and of the same type (True is not 1, 1 is not 1.0)."""
    return expected == actual and type(expected) is type(actual)


def _at(seconds: float) -> datetime:
    return EPOCH + timedelta(seconds=seconds)


def _aliases(text: str) -> list[str]:
    return [alias.strip() for alias in text.split(",") if alias.strip()]


def _view(context: Any, alias: str) -> JobView:
    """The backend's current record of an accepted job; fails if it holds none."""
    state = state_of(context)
    job_id = state.harness.ids.get(alias)
    if job_id is None:
        raise AssertionError(f"job {alias!r} was never accepted, so it has no record"
                             f" (submission answer: {state.submissions.get(alias)!r})")
    view = state.harness.runtime.get(job_id)
    _check(context, view is not None, f"job {alias!r} should be held", "a record", None)
    assert view is not None
    return view


def _last_answer(context: Any, kind: type[cmd.Command], step: str) -> object:
    state = state_of(context)
    if not isinstance(state.last_command, kind):
        raise AssertionError(f"'{step}' checks the answer to a {kind.__name__} command, but"
                             f" the last command was {state.last_command!r}")
    return state.harness.last_answer


# -- Given: the runtime ------------------------------------------------------------------


def _reconfigure(context: Any, max_concurrent: int | None = None,
                 max_tasks: int | None = None, unlimited_tasks: bool = False,
                 max_redelivery: int | None = None) -> None:
    old = state_of(context)
    if old.opened is not None and old.opened.commands:
        raise ValueError("configure the runtime before the scenario's first command")
    if max_concurrent is not None and max_concurrent < 1:
        raise ValueError(f"a runtime needs at least one worker slot, not {max_concurrent}")
    if max_tasks is not None and max_tasks < 1:
        raise ValueError(f"a task cap is at least 1, not {max_tasks}")
    if max_redelivery is not None and max_redelivery < 0:
        raise ValueError(f"a re-delivery cap is at least 0, not {max_redelivery}")
    if old.opened is not None:
        old.opened.close()
    context.jobconform = open_state(old.config, max_concurrent, max_tasks, unlimited_tasks,
                                    max_redelivery)


@setup_step("a runtime")
def step_runtime(context: Any) -> None:
    """The runtime with the profile's own limits (the harness is already open)."""
    _reconfigure(context)


@setup_step("a runtime with {slots:d} worker slot", "a runtime with {slots:d} worker slots")
def step_runtime_slots(context: Any, slots: int) -> None:
    _reconfigure(context, max_concurrent=slots)


@setup_step("a runtime with a task cap of {cap:d}")
def step_runtime_cap(context: Any, cap: int) -> None:
    _reconfigure(context, max_tasks=cap)


@setup_step("a runtime with {slots:d} worker slot and a task cap of {cap:d}",
            "a runtime with {slots:d} worker slots and a task cap of {cap:d}")
def step_runtime_slots_cap(context: Any, slots: int, cap: int) -> None:
    _reconfigure(context, max_concurrent=slots, max_tasks=cap)


@setup_step("a runtime with no task cap")
def step_runtime_uncapped(context: Any) -> None:
    _reconfigure(context, unlimited_tasks=True)


# -- Given/When: commands ------------------------------------------------------------------


def _submit(context: Any, alias: str, ignores_cancel: bool) -> None:
    state = state_of(context)
    state.submissions[alias] = state.run(cmd.Submit(alias, ignores_cancel=ignores_cancel))


@action_step('job "{alias}" is submitted')
def step_submit(context: Any, alias: str) -> None:
    _submit(context, alias, ignores_cancel=False)


@action_step('job "{alias}" is submitted with a body that ignores cancellation')
def step_submit_ignoring(context: Any, alias: str) -> None:
    _submit(context, alias, ignores_cancel=True)


@action_step('job "{alias}" is submitted for module "{module}"')
def step_submit_module(context: Any, alias: str, module: str) -> None:
    """A submission naming a module id (LC-027)."""
    state = state_of(context)
    state.submissions[alias] = state.run(cmd.Submit(alias, module=module))


@action_step('jobs "{aliases}" are submitted')
def step_submit_many(context: Any, aliases: str) -> None:
    for alias in _aliases(aliases):
        _submit(context, alias, ignores_cancel=False)


@action_step('threads submit jobs "{aliases}" at once')
def step_submit_concurrently(context: Any, aliases: str) -> None:
    """One thread per job, released together (LC-030); each thread's answer is kept as
    that job's submission answer."""
    state = state_of(context)
    jobs = tuple(_aliases(aliases))
    answers = state.run(cmd.SubmitConcurrently(jobs))
    assert isinstance(answers, list)
    state.submissions.update(zip(jobs, answers, strict=True))


@action_step("the runtime dispatches")
def step_dispatch(context: Any) -> None:
    state_of(context).run(cmd.Dispatch())


@action_step('job "{alias}" returns {result:Json}')
def step_returns(context: Any, alias: str, result: JsonValue) -> None:
    state_of(context).run(cmd.Finish(alias, cmd.Succeed(result)))


@action_step('job "{alias}" raises {error_type:w} "{message}"')
def step_raises(context: Any, alias: str, error_type: str, message: str) -> None:
    state_of(context).run(cmd.Finish(alias, cmd.Raise(error_type, message)))


@action_step('job "{alias}" raises {error_type:w} "{message}" with a retry-after of {ms:g} ms')
def step_raises_retry_after(context: Any, alias: str, error_type: str, message: str,
                            ms: float) -> None:
    """The body raises an error carrying a server's retry-after (RT-010)."""
    state_of(context).run(cmd.Finish(alias, cmd.Raise(error_type, message, float(ms))))


@action_step('job "{alias}" is cancelled')
def step_cancel(context: Any, alias: str) -> None:
    state_of(context).run(cmd.Cancel(alias))


@action_step("{seconds:g} seconds pass", "{seconds:g} second passes")
def step_advance(context: Any, seconds: float) -> None:
    state_of(context).run(cmd.AdvanceTime(seconds))


@action_step("cleanup runs with a max age of {seconds:g} seconds")
def step_cleanup(context: Any, seconds: float) -> None:
    state_of(context).run(cmd.Cleanup(seconds))


@action_step("the runtime shuts down")
def step_shutdown(context: Any) -> None:
    state_of(context).run(cmd.Shutdown())


@action_step('the result of job "{alias}" is read')
def step_read_result(context: Any, alias: str) -> None:
    state_of(context).run(cmd.GetResult(alias))


@action_step('job "{alias}" is read')
def step_read(context: Any, alias: str) -> None:
    state = state_of(context)
    # Get answers the backend's own view, or None for an id it does not hold.
    state.reads[alias] = cast("JobView | None", state.run(cmd.Get(alias)))
    state.last_read = alias


@action_step("the jobs are listed")
def step_list(context: Any) -> None:
    state_of(context).run(cmd.ListJobs())


@action_step('the jobs are listed with status "{status:Status}"')
def step_list_status(context: Any, status: str) -> None:
    state_of(context).run(cmd.ListJobs(status))


# -- Then: the backend's records ------------------------------------------------------------


@check_step('job "{alias}" is {status:Status}')
def check_status(context: Any, alias: str, status: str) -> None:
    view = _view(context, alias)
    _check(context, view.status == status, f"job {alias!r} status", status, view.status)


@check_step('jobs "{aliases}" are {status:Status}')
def check_statuses(context: Any, aliases: str, status: str) -> None:
    for alias in _aliases(aliases):
        check_status(context, alias, status)


def _check_time(context: Any, alias: str, name: str, seconds: float | None) -> None:
    actual = getattr(_view(context, alias), name)
    expected = None if seconds is None else _at(seconds)
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
    view = _view(context, alias)
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
    view = _view(context, alias)
    _check(context, _same(result, view.result), f"job {alias!r} result", result, view.result)


@check_step('job "{alias}" has no result')
def check_no_result(context: Any, alias: str) -> None:
    view = _view(context, alias)
    _check(context, view.result is None, f"job {alias!r} result", None, view.result)


@check_step('job "{alias}" has the error "{error}"')
def check_error(context: Any, alias: str, error: str) -> None:
    view = _view(context, alias)
    _check(context, view.error == error, f"job {alias!r} error", error, view.error)


@check_step('job "{alias}" has no error')
def check_no_error(context: Any, alias: str) -> None:
    view = _view(context, alias)
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
    ids = [_view(context, alias).job_id for alias in _aliases(aliases)]
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
    jobs = _aliases(aliases)
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
    _check(context, _same(answer, actual), "the answer to the last command", answer, actual)


@check_step("the cancellation is accepted")
def check_cancel_true(context: Any) -> None:
    actual = _last_answer(context, cmd.Cancel, "the cancellation is accepted")
    _check(context, actual is True, "cancel's answer", True, actual)


@check_step("the cancellation is rejected")
def check_cancel_false(context: Any) -> None:
    actual = _last_answer(context, cmd.Cancel, "the cancellation is rejected")
    _check(context, actual is False, "cancel's answer", False, actual)


@check_step("cleanup removed {count:d} job", "cleanup removed {count:d} jobs")
def check_cleanup_count(context: Any, count: int) -> None:
    actual = _last_answer(context, cmd.Cleanup, "cleanup removed …")
    _check(context, _same(count, actual), "cleanup's count of removed records", count, actual)


@check_step("the result is {result:Json}")
def check_result_answer(context: Any, result: JsonValue) -> None:
    actual = _last_answer(context, cmd.GetResult, "the result is …")
    _check(context, _same(result, actual), "get_result's answer", result, actual)


@check_step("reading the result fails as not found")
def check_result_not_found(context: Any) -> None:
    actual = _last_answer(context, cmd.GetResult, "reading the result fails as not found")
    _check(context, actual == cmd.NOT_FOUND, "get_result's answer", cmd.NOT_FOUND, actual)


@check_step("reading the result fails as not completed with status {status:Status}")
def check_result_not_completed(context: Any, status: str) -> None:
    actual = _last_answer(context, cmd.GetResult, "reading the result fails as not completed")
    expected = cmd.not_completed(status)
    _check(context, actual == expected, "get_result's answer", expected, actual)


@check_step("the read returns nothing")
def check_read_nothing(context: Any) -> None:
    actual = _last_answer(context, cmd.Get, "the read returns nothing")
    _check(context, actual is None, "get's answer for an id the runtime does not hold", None,
           actual)


@check_step('the listing is "{aliases}"')
def check_listing(context: Any, aliases: str) -> None:
    actual = _last_answer(context, cmd.ListJobs, "the listing is …")
    expected = _aliases(aliases)
    _check(context, actual == expected, "the listed jobs, in order", expected, actual)


@check_step("the listing is empty")
def check_listing_empty(context: Any) -> None:
    actual = _last_answer(context, cmd.ListJobs, "the listing is empty")
    _check(context, actual == [], "the listed jobs", [], actual)


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
           "the health report's worker_id (non-empty, the same in every snapshot)", first,
           worker_id)
    actual = getattr(health, "status", "<missing>")
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
    expected = _at(seconds)
    in_utc = isinstance(actual, datetime) and actual.utcoffset() == timedelta(0)
    _check(context, in_utc and actual == expected,
           "the health report's last_heartbeat (timezone-aware UTC)",
           f"{expected.isoformat()} (second {seconds:g})", actual)


@check_step("the health report has no last heartbeat")
def check_report_no_heartbeat(context: Any) -> None:
    actual = getattr(state_of(context).harness.runtime.health(), "last_heartbeat",
                     "<missing>")
    _check(context, actual is None, "the health report's last_heartbeat", None, actual)


# -- retry: submissions with a policy, and the delay function (spec area "retry") -------------

_RETRY_FIELDS = ("{retries:d} retries, a delay of {delay:g} ms, multiplier {multiplier:g}"
                 " and a cap of {cap:g} ms")
_RETRY_FIELDS_ONE = _RETRY_FIELDS.replace(" retries,", " retry,", 1)  # "with 1 retry, …"


def _policy(max_retries: int, delay: float, multiplier: float, cap: float,
            not_retried: str = "") -> RetryPolicy:
    """A retry policy from a step's numbers; malformed values fail the step, not a check."""
    return RetryPolicy(max_retries=max_retries, retry_delay_ms=float(delay),
                       backoff_multiplier=float(multiplier), max_retry_delay_ms=float(cap),
                       non_retryable=tuple(_aliases(not_retried)))


def _default_policy(context: Any, max_retries: int, not_retried: str = "") -> RetryPolicy:
    """RT-001's defaults: delay 1000 ms, multiplier 2, the profile's cap."""
    cap = state_of(context).config.profile.max_retry_delay_ms
    return RetryPolicy(max_retries=max_retries, max_retry_delay_ms=cap,
                       non_retryable=tuple(_aliases(not_retried)))


def _submit_with_policy(context: Any, alias: str, policy: RetryPolicy) -> None:
    state = state_of(context)
    state.submissions[alias] = state.run(cmd.Submit(alias, retry=policy))


@action_step('job "{alias}" is submitted with {retries:d} retries',
             'job "{alias}" is submitted with {retries:d} retry')
def step_submit_retry_defaults(context: Any, alias: str, retries: int) -> None:
    """A retry policy with RT-001's defaults for everything but max_retries."""
    _submit_with_policy(context, alias, _default_policy(context, retries))


@action_step('job "{alias}" is submitted with {retries:d} retries and "{not_retried}"'
             " not retried",
             'job "{alias}" is submitted with {retries:d} retry and "{not_retried}"'
             " not retried")
def step_submit_retry_defaults_not_retried(context: Any, alias: str, retries: int,
                                           not_retried: str) -> None:
    """Defaults, plus error type names (comma-separated) that are never retried."""
    _submit_with_policy(context, alias, _default_policy(context, retries, not_retried))


@action_step(f'job "{{alias}}" is submitted with {_RETRY_FIELDS}',
             f'job "{{alias}}" is submitted with {_RETRY_FIELDS_ONE}')
def step_submit_retry(context: Any, alias: str, retries: int, delay: float,
                      multiplier: float, cap: float) -> None:
    _submit_with_policy(context, alias, _policy(retries, delay, multiplier, cap))


@action_step(f'job "{{alias}}" is submitted with {_RETRY_FIELDS} and "{{not_retried}}"'
             " not retried",
             f'job "{{alias}}" is submitted with {_RETRY_FIELDS_ONE}'
             ' and "{not_retried}" not retried')
def step_submit_retry_not_retried(context: Any, alias: str, retries: int, delay: float,
                                  multiplier: float, cap: float, not_retried: str) -> None:
    _submit_with_policy(context, alias, _policy(retries, delay, multiplier, cap, not_retried))


_NUMBER = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_JITTER_MODES = "|".join(mode.value for mode in Jitter)
_DELAY_CLAUSES = {
    "jitter": re.compile(rf"(?P<value>{_JITTER_MODES}) jitter|jitter (?P<value2>{_JITTER_MODES})"),
    "draw": re.compile(rf"draw (?P<value>{_NUMBER})"),
    "previous_ms": re.compile(rf"(?:a )?previous (?:delay )?(?:of )?(?P<value>{_NUMBER}) ms"),
    "retry_after_ms": re.compile(rf"(?:a )?retry-after (?:of )?(?P<value>{_NUMBER}) ms"),
}


def _delay_options(text: str) -> dict[str, Any]:
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


def _compute_delay(context: Any, attempt: int, policy: RetryPolicy, options: str = "") -> None:
    """Ask the backend's own delay function; the harness compares it with the oracle's."""
    fields = _delay_options(options) if options else {}
    state_of(context).run(cmd.ComputeDelay(policy, attempt, **fields))


_DELAY_QUERY = ("the delay for attempt {attempt:d} is computed with {delay:g} ms,"
                " multiplier {multiplier:g} and a cap of {cap:g} ms")


@action_step(_DELAY_QUERY)
def step_compute_delay(context: Any, attempt: int, delay: float, multiplier: float,
                       cap: float) -> None:
    """Attempt counts retries already taken: 0 before the first retry (RT-002)."""
    _compute_delay(context, attempt, _policy(0, delay, multiplier, cap))


@action_step(_DELAY_QUERY + ", with {options}", _DELAY_QUERY + " with {options}")
def step_compute_delay_with(context: Any, attempt: int, delay: float, multiplier: float,
                            cap: float, options: str) -> None:
    """Options: MODE jitter (or jitter MODE), draw U, previous P ms, retry-after R ms."""
    _compute_delay(context, attempt, _policy(0, delay, multiplier, cap), options)


@action_step("the delay for attempt {attempt:d} is computed with the default policy")
def step_compute_delay_default(context: Any, attempt: int) -> None:
    _compute_delay(context, attempt, _default_policy(context, 0))


# -- Then: retry state and delays -------------------------------------------------------------


@check_step('job "{alias}" has retry count {count:d} of {max_retries:d}')
def check_retry_count(context: Any, alias: str, count: int, max_retries: int) -> None:
    """retry_count and max_retries as the BACKEND's record shows them (RT-008)."""
    view = _view(context, alias)
    actual = (getattr(view, "retry_count", "<missing>"),
              getattr(view, "max_retries", "<missing>"))
    _check(context, _same(count, actual[0]) and _same(max_retries, actual[1]),
           f"job {alias!r} (retry_count, max_retries)", (count, max_retries), actual)


def _last_delay(context: Any, step: str) -> tuple[float, cmd.ComputeDelay]:
    actual = _last_answer(context, cmd.ComputeDelay, step)
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


@action_step('job "{alias}" sends a heartbeat')
def step_heartbeat(context: Any, alias: str) -> None:
    """The job's body reports progress (ST-001)."""
    state_of(context).run(cmd.Heartbeat(alias))


@action_step("stuck jobs are detected with a timeout of {seconds:g} seconds",
             "stuck jobs are detected with a timeout of {seconds:g} second")
def step_detect_stuck(context: Any, seconds: float) -> None:
    """A detection pass; its answer is the count of jobs it failed (ST-002)."""
    state_of(context).run(cmd.DetectStuck(float(seconds)))


@check_step("{count:d} job was failed as stuck", "{count:d} jobs were failed as stuck")
def check_stuck_count(context: Any, count: int) -> None:
    actual = _last_answer(context, cmd.DetectStuck, "… failed as stuck")
    _check(context, _same(count, actual), "detect_stuck's count of jobs failed as stuck",
           count, actual)


@check_step('job "{alias}" last heartbeat is at second {seconds:g}')
def check_last_heartbeat(context: Any, alias: str, seconds: float) -> None:
    """last_heartbeat as the BACKEND's record shows it (ST-001)."""
    view = _view(context, alias)
    actual = getattr(view, "last_heartbeat", "<missing>")
    expected = _at(seconds)
    shown = (f"{actual.isoformat()} (second {(actual - EPOCH).total_seconds():g})"
             if isinstance(actual, datetime) and actual.tzinfo is not None else actual)
    _check(context, actual == expected, f"job {alias!r} last_heartbeat",
           f"{expected.isoformat()} (second {seconds:g})", shown)


@check_step('job "{alias}" has no last heartbeat')
def check_no_last_heartbeat(context: Any, alias: str) -> None:
    view = _view(context, alias)
    actual = getattr(view, "last_heartbeat", "<missing>")
    _check(context, actual is None, f"job {alias!r} last_heartbeat", None, actual)
