"""One Behave scenario's state: the run's backend and profile, the job runtime's harness,
the harnesses of the other areas, and the checks that fail a Then-step in one layout.

Pick the backend and profile on the command line: `behave -D backend=memory
-D profile=canonical` (the backend is an entry point name or `module:attr`; the profile
defaults to the one the backend declares). The hooks that open and close a scenario's
state are in conformance/behave_hooks.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from jobconform.backends.loading import load_backend
from jobconform.backends.protocol import Backend, JobView
from jobconform.conformance import tolerance
from jobconform.conformance.harness import Harness
from jobconform.conformance.requirement_tags import requirement_tags
from jobconform.reference import commands as cmd
from jobconform.reference.commands import describe
from jobconform.spec import Profile, Registry, load_registry

DEFAULT_BACKEND = "memory"

AreaState = TypeVar("AreaState")


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

    @property
    def answers(self) -> dict[str, object]:
        """The submissions' answers by alias (conformance/vocabulary.py keeps them here)."""
        return self.submissions

    @property
    def profile(self) -> Profile:
        return self.config.profile

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


def run_config(context: Any) -> RunConfig:
    """The run's config, loaded on first use and kept on the Behave context."""
    config = getattr(context, "jobconform_config", None)
    if not isinstance(config, RunConfig):
        config = load_run_config(context.config.userdata)
        context.jobconform_config = config
    return config


def open_state(config: RunConfig, max_concurrent: int | None = None,
               max_tasks: int | None = None, unlimited_tasks: bool = False,
               max_redelivery: int | None = None,
               page_size: int | None = None,
               queued_execution: bool = True) -> ScenarioState:
    return ScenarioState(config, lambda: Harness(
        config.backend, config.profile, config.registry, max_concurrent=max_concurrent,
        max_tasks=max_tasks, unlimited_tasks=unlimited_tasks, max_redelivery=max_redelivery,
        page_size=page_size, queued_execution=queued_execution))


def state_of(context: Any) -> ScenarioState:
    state = getattr(context, "jobconform", None)
    if not isinstance(state, ScenarioState):
        raise RuntimeError(
            "no harness for this scenario; features/environment.py must import before_scenario"
            " and after_scenario from jobconform.conformance.behave_hooks"
        )
    return state


def reopen_runtime(context: Any, max_concurrent: int | None = None,
                   max_tasks: int | None = None, unlimited_tasks: bool = False,
                   max_redelivery: int | None = None, page_size: int | None = None,
                   queued_execution: bool = True) -> None:
    """Open the scenario's job runtime again with these limits (a Given-step's), and
    queued execution on or off (LC-037).

    Raises:
        ValueError: a command was sent already, or a limit is out of range.
    """
    old = state_of(context)
    if old.opened is not None and old.opened.commands:
        raise ValueError("configure the runtime before the scenario's first command")
    if max_concurrent is not None and max_concurrent < 1:
        raise ValueError(f"a runtime needs at least one worker slot, not {max_concurrent}")
    if max_tasks is not None and max_tasks < 1:
        raise ValueError(f"a task cap is at least 1, not {max_tasks}")
    if max_redelivery is not None and max_redelivery < 0:
        raise ValueError(f"a re-delivery cap is at least 0, not {max_redelivery}")
    if page_size is not None and page_size < 1:
        raise ValueError(f"a page holds at least one job, not {page_size}")
    if old.opened is not None:
        old.opened.close()
    context.jobconform = open_state(old.config, max_concurrent, max_tasks, unlimited_tasks,
                                    max_redelivery, page_size, queued_execution)


# -- checks in the Divergence's layout ------------------------------------------------------


def _requirements(context: Any, checks: str | None = None) -> str:
    """The scenario's requirement tags, with titles, as a Divergence names them: first
    the requirement the failed step itself checks (`checks`), if the scenario is tagged
    with it, else the tag the latest command's primary requirement matches, if any."""
    scenario = getattr(context, "scenario", None)
    tags = requirement_tags(getattr(scenario, "effective_tags", ()))
    state = getattr(context, "jobconform", None)
    if isinstance(state, ScenarioState) and state.opened is not None:
        ranking = state.opened.last_command_ranked()
        tags.sort(key=lambda tag: ranking.index(tag) if tag in ranking else len(ranking))
    if checks in tags:
        tags.sort(key=lambda tag: tag != checks)
    config = getattr(context, "jobconform_config", None)
    titles = ({r.id: r.title for r in config.registry.requirements}
              if isinstance(config, RunConfig) else {})
    return ", ".join(f"{tag} ({titles[tag]})" if tag in titles else tag for tag in tags)


def _check(context: Any, ok: bool, what: str, expected: object, actual: object,
           checks: str | None = None) -> None:
    """Fail a Then-step in the Divergence's layout, naming the scenario's requirements,
    `checks` first: the one requirement the step's own reading belongs to, where it has
    one (a health report's worker field is LC-029's in a scenario of shutdown too)."""
    state = getattr(context, "jobconform", None)
    scenario = getattr(context, "scenario", None)
    if not ok and tolerance.shows_listed_deviation(
            requirement_tags(getattr(scenario, "effective_tags", ()))):
        return  # a harness already recorded this listed deviation (see its docstring)
    if not ok:
        named = _requirements(context, checks)
        commands = (state.opened.commands if isinstance(state, ScenarioState)
                    and state.opened is not None else [])
        steps = "\n".join(f"    {i}. {describe(c)}" for i, c in enumerate(commands, 1))
        raise AssertionError(
            "the backend's state does not meet the scenario's expectation\n"
            + (f"  requirement(s): {named}\n" if named else "")
            + f"  what: {what}\n  expected: {expected!r}\n  actual:   {actual!r}\n"
            + f"  commands so far:\n{steps or '    (none)'}"
        )


def same_value(expected: object, actual: object) -> bool:
    """Equal and of the same type (True is not 1, 1 is not 1.0)."""
    return expected == actual and type(expected) is type(actual)


def job_view(context: Any, alias: str) -> JobView:
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


def last_answer(context: Any, kind: type[cmd.Command], step: str) -> object:
    """The job runtime's answer to the last command, which must be a `kind`."""
    state = state_of(context)
    if not isinstance(state.last_command, kind):
        raise AssertionError(f"'{step}' checks the answer to a {kind.__name__} command, but"
                             f" the last command was {state.last_command!r}")
    return state.harness.last_answer
