"""What an area's suites say, declared once; its Behave steps and Robot keywords derived.

Each `Declaration` says, for one command an area's suites send: the Robot keyword that
sends it (its arguments are those of `command`, which builds the command from them), the
Gherkin wordings that send it (each a `Phrase`: a step pattern and how the fields it
parses build the command), and whether the answer is kept under the alias it names.
One engine applies any declared command through the scenario's (or the test's) harness,
which applies it to the backend and the oracle and compares; so the steps and keywords
of an area hold no translation of their own.

A command may depend on the run's profile (a default the profile sets, a status in the
profile's own words): its builder then gives an `OnProfile`, which the engine completes
with the profile of the scenario or test it is sent through. A command named after how
many commands ran before it (a failure result that must be new each time) is built
`AfterCommands`, which the engine completes with that count as it sends it; one built
from the harness itself (calls named after the commands so far, a time the backend reads,
the harness's settings) is built `OnHarness`.

In an area with only `DECLARATIONS`, what is not a command (a Then-step's check, a step
that reads and keeps a record) stays hand-written in its steps and keywords; a Robot
keyword that also checks the answer it got names that check in `derive_keywords`'
`answered`. An area may instead declare everything its suites say, in one `Vocabulary`:
its commands, its checks (`Check`: a Then-step's wording and a Robot keyword that read one
thing the backend shows, an answer kept, the harness's last answer or the value a Robot
test hands it, and compare it with what the step or keyword wants), its settings
(`Setting`: a Given-step fixing parameters before the first command), its preconditions
(`Precondition`: a capability beyond the area a check needs, or it is skipped) and the
Robot keyword that opens a test's harness (and the commands it sends then). Its Behave
steps are then registered from it (`register_steps`, which the step loader calls for an
area declaring a vocabulary) and its Robot library is `DerivedLibrary` bound to it
(Robot's dynamic library API), so the area writes no step and no keyword (governor,
breaker, composite, idempotency, admission, loops, reminders, restart, scheduling, the
task store, the third-party tally). Where its commands also say how they apply to the
backend and the oracle (conformance/command_engine.py), its harness and its Hypothesis
machine are derived too.
"""

from __future__ import annotations

import inspect
import json
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, Protocol, cast

from robot.api import SkipExecution
from robot.api.deco import keyword
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.protocol import Backend
from jobconform.conformance.area_keywords import AreaLibrary, test_failure
from jobconform.conformance.area_steps import ConfiguredScenario
from jobconform.conformance.harness import Divergence
from jobconform.conformance.scenario import _check as check_then_step
from jobconform.conformance.scenario import state_of
from jobconform.conformance.standard_dates import with_standard_dates
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.reference.lifecycle import JsonValue
from jobconform.spec import Profile, Registry


class Answers(Protocol):
    """Where a scenario or a test runs its commands and keeps their answers by alias."""

    @property
    def answers(self) -> dict[str, Any]: ...

    def run(self, command: Any) -> object: ...


class ProfiledAnswers(Answers, Protocol):
    """Answers that know the run's profile, for commands built `OnProfile`."""

    @property
    def profile(self) -> Profile: ...


class CommandLog(Protocol):
    @property
    def commands(self) -> Sequence[Any]:
        """The commands run so far, in order."""
        ...


class LoggedAnswers(Answers, Protocol):
    """Answers whose harness keeps the commands it ran, for commands built
    `AfterCommands`."""

    @property
    def harness(self) -> CommandLog: ...


class ChangesOnlyHarness(Protocol):
    def comparing_changes_only(self) -> AbstractContextManager[None]:
        """Within it, each command's state is compared only where it changed."""
        ...


class BulkAnswers(Answers, Protocol):
    """Answers whose harness can compare a command only where it changed the state, for
    commands sent `InBulk`."""

    @property
    def harness(self) -> ChangesOnlyHarness: ...


@dataclass(frozen=True)
class InBulk:
    """Commands sent in a row and compared as one step: each only where it changed the
    oracle's state (the job it made or moved, read by id, and the counts), the last in
    full. A range of 300 submissions, each followed by a comparison of every record
    held, reads every row of a SQL store 300 times (LC-038)."""

    commands: tuple[Any, ...]


@dataclass(frozen=True)
class OnProfile:
    """A command the run's profile completes: `build(profile)` is the command."""

    build: Callable[[Profile], Any]


@dataclass(frozen=True)
class AfterCommands:
    """A command named after the number of commands the harness ran before it:
    `build(count)` is the command."""

    build: Callable[[int], Any]


@dataclass(frozen=True)
class OnHarness:
    """What the scenario's or the test's harness completes: `build(harness)` is the
    command or the commands in order (named after the commands run so far, timed by what
    the backend reads), or a check's wanted value (the harness's own settings)."""

    build: Callable[[Any], Any]


def json_value(text: str) -> JsonValue:
    """A JSON value as a Robot test writes it (``42``, ``"done"``, ``{"n": 1}``, ``null``).

    Raises:
        ValueError: `text` is not JSON.
    """
    try:
        value: JsonValue = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{text!r} is not a JSON value ({error.msg}); write strings in double"
                         ' quotes, e.g. "done", and null for no value') from None
    return value


@dataclass(frozen=True)
class Phrase:
    """One Gherkin wording of a command: `pattern` (a behave step pattern) and `command`,
    which builds the command, or the commands in order, from the fields it parses (and,
    for a step that carries a table, from its rows as `table`, a list of heading ->
    cell mappings)."""

    pattern: str
    command: Callable[..., Any]
    table: bool = False


@dataclass(frozen=True)
class View:
    """One thing the backend's service shows (`backend(service)`) and the oracle's model
    says it should show (`oracle(model)`); after a listed deviation the model takes what
    the service shows (`adopt(model, shown)`)."""

    name: str
    backend: Callable[[Any], object]
    oracle: Callable[[Any], object]
    adopt: Callable[[Any, Any], None]


@dataclass(frozen=True)
class Declaration:
    """One command an area's suites send, declared once.

    Args:
        keyword: the Robot keyword that sends it.
        command: builds the command, or the commands in order, from the keyword's
            arguments; its signature is the keyword's.
        phrases: the Gherkin wordings that send it, as Given or When steps.
        kept_as: the alias a command's answer is kept under (a creation's), if any (None
            for a command of the declaration whose answer is not kept).
    """

    keyword: str
    command: Callable[..., Any]
    phrases: tuple[Phrase, ...] = ()
    kept_as: Callable[[Any], str | None] | None = None
    # How the derived harness applies it (conformance/command_engine.py), where the area's
    # harness is derived: the command class it applies, its call on the backend's service
    # and on the oracle's model (each giving the answer), the views it may change (those
    # compared after it) and the requirements it rests on, the primary first.
    applies_to: type | None = None
    backend: Callable[[Any, Any], object] | None = None
    oracle: Callable[[Any, Any], object] | None = None
    changes: tuple[View, ...] = ()
    requirements: tuple[str, ...] = ()

    def send(self, through: Answers, built: Any) -> object:
        """Run the built command(s) through `through`; the last answer."""
        if isinstance(built, InBulk):
            if not built.commands:
                return None
            with cast(BulkAnswers, through).harness.comparing_changes_only():
                for command in built.commands[:-1]:
                    self._send_one(through, command)
            return self._send_one(through, built.commands[-1])
        answer: object = None
        for command in built if isinstance(built, list | tuple) else [built]:
            answer = self._send_one(through, command)
        return answer

    def _send_one(self, through: Answers, command: Any) -> object:
        if isinstance(command, OnHarness):
            return self.send(through, command.build(cast(LoggedAnswers, through).harness))
        if isinstance(command, OnProfile):
            command = command.build(cast(ProfiledAnswers, through).profile)
        elif isinstance(command, AfterCommands):
            command = command.build(len(cast(LoggedAnswers, through).harness.commands))
        answer = through.run(command)
        alias = None if self.kept_as is None else self.kept_as(command)
        if alias is not None:
            through.answers[alias] = answer
        return answer


def command_worded(keyword: str, command: Callable[..., Any], *patterns: str,
                   kept_as: Callable[[Any], str | None] | None = None) -> Declaration:
    """A command each of whose Gherkin wordings parses the fields its keyword takes as
    arguments, so that `command` builds it from either (its answer kept as `kept_as`
    says, as a `Declaration`'s)."""
    return Declaration(keyword, command, tuple(Phrase(pattern, command) for pattern in patterns),
                       kept_as)


def derive_steps(declarations: Iterable[Declaration],
                 scenario: Callable[[Any], Answers]) -> None:
    """Register every phrase of `declarations` as a Given/When step sending its command
    through the scenario's harness (`scenario(context)`)."""
    for declaration in declarations:
        for phrase in declaration.phrases:
            action_step(phrase.pattern)(_step(declaration, phrase, scenario))


def _step(declaration: Declaration, phrase: Phrase,
          scenario: Callable[[Any], Answers]) -> Callable[..., None]:
    def step(context: Any, **fields: Any) -> None:
        if phrase.table:
            fields["table"] = [{heading: row[heading] for heading in context.table.headings}
                               for row in context.table]
        declaration.send(scenario(context), phrase.command(**fields))

    step.__doc__ = f"{phrase.pattern} (the command of keyword `{declaration.keyword}`)"
    return step


def keyword_method_name(name: str) -> str:
    """`Create Reminder` -> `create_reminder`: the method a derived keyword becomes."""
    return re.sub(r"\W+", "_", name).strip("_").lower()


# What a keyword makes of the answer it got: given the library instance and the answer,
# it checks it (raising the test's failure) and returns what the keyword returns.
Answered = Callable[[Any, object], object]


def derive_keywords(library: type, declarations: Iterable[Declaration],
                    through: Callable[[Any], Answers],
                    answered: Mapping[str, Answered] | None = None) -> None:
    """Add to the Robot `library` class one keyword per declaration, taking the arguments
    of its `command` and sending what it builds through `through(library instance)`;
    where `answered` names the keyword, the keyword returns what that makes of the answer.

    Raises:
        ValueError: a keyword would hide a method of `library`, or `answered` names a
            keyword no declaration has.
    """
    declared = list(declarations)
    unknown = set(answered or {}) - {declaration.keyword for declaration in declared}
    if unknown:
        raise ValueError(f"no declaration has the keyword(s) {sorted(unknown)}")
    for declaration in declared:
        name = keyword_method_name(declaration.keyword)
        if hasattr(library, name):
            raise ValueError(f"{library.__name__} already has {name!r}; the keyword"
                             f" {declaration.keyword!r} would hide it")
        setattr(library, name, _keyword(declaration, name, through,
                                        (answered or {}).get(declaration.keyword)))


def _keyword(declaration: Declaration, name: str, through: Callable[[Any], Answers],
             answered: Answered | None) -> Callable[..., object]:
    def send(self: Any, *args: Any, **kwargs: Any) -> object:
        answer = declaration.send(through(self), declaration.command(*args, **kwargs))
        return answer if answered is None else answered(self, answer)

    return _robot_keyword(declaration.keyword, name, declaration.command, send)


def _robot_keyword(spelt: str, name: str, builder: Callable[..., Any],
                   run: Callable[..., object]) -> Callable[..., object]:
    """`run(self, *args)` as the static keyword `spelt`, with `builder`'s signature."""

    def method(self: Any, *args: Any, **kwargs: Any) -> object:
        return run(self, *args, **kwargs)

    # Robot reads a keyword's arguments, their defaults and types from its signature:
    # the builder's, behind the instance.
    signature = inspect.signature(builder)
    instance = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    method.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[instance, *signature.parameters.values()])
    method.__annotations__ = dict(inspect.get_annotations(builder, eval_str=True))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = builder.__doc__
    registered: Callable[..., object] = keyword(spelt)(method)
    return registered


@dataclass(frozen=True)
class Reading:
    """What a check reads and wants: `read(through)` reads the backend's side (through the
    scenario's or the test's harness, or an answer it kept), and `agrees(actual, wanted)`
    decides; `what` names the reading in the failure."""

    what: str
    read: Callable[[Any], object]
    wanted: object  # an OnHarness: what the harness makes it
    agrees: Callable[[object, object], bool] = operator.eq
    # The one requirement the reading itself belongs to, named first where the test is
    # tagged with it (a health report's worker field is LC-029's in a test of shutdown).
    checks: str | None = None
    # How a failure shows both sides (a text of 10,000 characters as its length).
    shown: Callable[[object], object] | None = None

    def check(self, through: Any) -> tuple[bool, object, object]:
        """Whether what `through` shows agrees, and what was wanted and what it shows as
        a failure shows them."""
        wanted = (self.wanted.build(through.harness) if isinstance(self.wanted, OnHarness)
                  else self.wanted)
        actual = self.read(through)
        agrees = self.agrees(actual, wanted)
        if self.shown is not None:
            wanted, actual = self.shown(wanted), self.shown(actual)
        # Shown as a divergence shows them: freezegun's instants, which a runtime under the
        # wall-clock bridge answers and a suite's own under it builds, as plain datetimes.
        return agrees, with_standard_dates(wanted), with_standard_dates(actual)


def readings_of(built: Reading | tuple[Reading, ...]) -> tuple[Reading, ...]:
    """What a check's builder gave: one reading, or several made in order."""
    return built if isinstance(built, tuple) else (built,)


def unchanged_since_read(noun: str, read_of: Callable[[Any], str | None], kept_as: str,
                         now: Callable[[Any, Any], object]) -> Reading:
    """The record the last read answered (kept under `kept_as`) still reads as it did
    then: read as (what it read then, what the view it got reads now). `read_of(command)`
    is the alias a read command read (None for any other command); the harness holds the
    view each read got under "get:ALIAS", and `now(harness, view)` is how it reads now."""
    def then_and_now(through: Any) -> object:
        harness = through.harness
        reads = [alias for alias in map(read_of, harness.commands) if alias is not None]
        held = harness.held.get(f"get:{reads[-1]}") if reads else None
        if held is None:
            return f"no {noun} was read"
        return through.answers.get(kept_as), now(harness, held[0])

    def unchanged(actual: object, wanted: object) -> bool:
        return isinstance(actual, tuple) and actual[0] == actual[1]

    return Reading(f"the {noun} read earlier (as read, now)", then_and_now,
                   "the same record twice", unchanged)


@dataclass(frozen=True)
class Check:
    """One check an area's suites make, declared once: the Robot keyword that makes it
    (None: the Robot suites do not), `reading`, which builds the `Reading` from the
    keyword's arguments (its signature is the keyword's), and the Gherkin wordings of it
    as Then-steps, each `Phrase` building the `Reading` from the fields it parses."""

    keyword: str | None
    reading: Callable[..., Reading | tuple[Reading, ...]]
    phrases: tuple[Phrase, ...] = ()


def check_worded(keyword: str | None, reading: Callable[..., Reading | tuple[Reading, ...]],
                 *patterns: str) -> Check:
    """A check each of whose Then-step wordings parses the fields its keyword takes as
    arguments, so that `reading` builds its `Reading` from either."""
    return Check(keyword, reading, tuple(Phrase(pattern, reading) for pattern in patterns))


@dataclass(frozen=True)
class Setting:
    """A Given-step fixing some of the area's parameters before its first command:
    `overrides` builds them (name -> value) from the fields `pattern` parses. In Robot the
    start keyword takes the same names as `name=value`."""

    pattern: str
    overrides: Callable[..., dict[str, object]]


def parameter_setting(pattern: str, noun: str, known: Sequence[str]) -> Setting:
    """A Given-step fixing one of the `known` parameters by name: `pattern` parses its
    `name` and `value` (ValueError for a name not known)."""
    def overrides(name: str, value: object) -> dict[str, object]:
        if name not in known:
            raise ValueError(f"unknown {noun} parameter {name!r}; known: {', '.join(known)}")
        return {name: value}

    return Setting(pattern, overrides)


def kept(name: str, unset: object = None) -> Callable[[Any], object]:
    """Reads the answer kept under `name` (`unset` where none was)."""
    return lambda through: through.answers.get(name, unset)


@dataclass(frozen=True)
class Precondition:
    """What a check needs of the backend beyond its area (a capability it may leave
    unclaimed): the Robot keyword and the Given-step that skip the test or the scenario,
    never pass it, where `unmet(harness)` gives a reason."""

    keyword: str
    pattern: str
    unmet: Callable[[Any], str | None]

    @classmethod
    def claimed(cls, keyword: str, pattern: str, claims: Callable[[Any], bool],
                lacking: str) -> Precondition:
        """The precondition met where `claims(harness)`; else the reason is "backend
        <name> does not <lacking>"."""

        def unmet(harness: Any) -> str | None:
            return None if claims(harness) else (
                f"backend {harness.backend.name} does not {lacking}")

        return cls(keyword, pattern, unmet)


# How an area's harness opens: (backend, profile, registry, parameter overrides) -> harness.
Opener = Callable[[Backend, Profile, Registry, dict[str, Any]], Any]


def with_settings(harness: Callable[[Backend, Profile, Registry, Any], Any],
                  settings: Callable[..., Any]) -> Opener:
    """The opener of a harness taking the area's settings fourth: the profile's
    parameters, `settings(profile, **overrides)`."""
    return lambda backend, profile, registry, overrides: harness(
        backend, profile, registry, settings(profile, **overrides))


@dataclass(frozen=True, eq=False)  # one per area, known by itself (its harness is cached)
class Vocabulary:
    """Everything an area's Behave steps and Robot keywords say, declared once.

    Args:
        area: the area (the capability a backend claims).
        noun: what its steps call its service in messages ("governor").
        start: the Robot keyword that opens a test's harness, taking the parameters that
            differ from the profile's as `name=value`; None where the area `runs_through`
            another's harness.
        start_sends: builds, from the start keyword's positional arguments (its signature
            is theirs), the commands it sends once the harness is open (the owners a
            composite test starts with); None: the start keyword takes none.
        commands: its commands.
        checks: its checks.
        settings: its Given-steps fixing parameters.
        preconditions: what its checks need beyond the area, or are skipped.
        opens_on_first_use: in Robot, a keyword before the start keyword opens the
            test's harness with the profile's parameters (as a Behave scenario's opens).
        open: opens the harness; None for a harness derived from the commands
            (conformance/command_engine.py, which `engine` then describes).
        engine: the oracle's model and how the derived harness opens the service.
        runs_through: the Robot library (its import name) whose test harness the area's
            keywords run through, as its steps run through the scenario's job runtime:
            the area opens no harness of its own (a restart is one more command of the
            job runtime the lifecycle library opened). None: the area's own harness.
    """

    area: str
    noun: str
    start: str | None
    commands: tuple[Declaration, ...]
    checks: tuple[Check, ...] = ()
    settings: tuple[Setting, ...] = ()
    preconditions: tuple[Precondition, ...] = ()
    opens_on_first_use: bool = False
    open: Opener | None = None
    start_sends: Callable[..., Any] | None = None
    engine: Any = None  # a command_engine.Engine (typed there: it imports this module)
    runs_through: str | None = None

    def open_harness(self, backend: Backend, profile: Profile, registry: Registry,
                     overrides: dict[str, Any]) -> Any:
        """The area's harness on `backend`, its parameters `overrides` on the profile's."""
        if self.open is not None:
            return self.open(backend, profile, registry, overrides)
        from jobconform.conformance.command_engine import derived_harness

        return derived_harness(self)(backend, profile, registry, overrides=overrides)


class _Scenario(ConfiguredScenario[Any]):
    """One scenario's harness of a declared area (set per area by `_scenario_type`)."""

    VOCABULARY: ClassVar[Vocabulary]

    def open(self) -> Any:
        config = self.config
        return self.VOCABULARY.open_harness(config.backend, config.profile, config.registry,
                                            self.overrides)


def _scenario_type(vocabulary: Vocabulary) -> type[_Scenario]:
    return type(f"{vocabulary.noun.title()}Scenario", (_Scenario,),
                {"VOCABULARY": vocabulary, "NOUN": vocabulary.noun})


_REGISTERED: set[str] = set()  # the areas whose steps are registered in this process


def register_steps(vocabulary: Vocabulary) -> None:
    """Register the area's Behave steps: its settings as Given-steps, its commands as
    Given/When-steps (`derive_steps`) and its checks as Then-steps, each running through
    the scenario's harness of the area, opened on first use. Registering an area's
    steps again (a second run in one process) does nothing: Behave keeps its steps."""
    if vocabulary.area in _REGISTERED:
        return
    _REGISTERED.add(vocabulary.area)
    opened = _scenario_type(vocabulary)

    def scenario(context: Any) -> Any:  # a _Scenario, or the scenario's own state
        if vocabulary.runs_through is not None:
            return state_of(context)
        return state_of(context).area_state(vocabulary.area, opened)

    for setting in vocabulary.settings:
        setup_step(setting.pattern)(_setting_step(setting, scenario))
    for precondition in vocabulary.preconditions:
        setup_step(precondition.pattern)(_precondition_step(precondition, scenario))
    derive_steps(vocabulary.commands, scenario)
    derive_checks(vocabulary.checks, scenario)


def derive_checks(checks: Iterable[Check], scenario: Callable[[Any], Any]) -> None:
    """Register every phrase of `checks` as a Then-step reading through `scenario(context)`
    (its harness, its answers, its profile)."""
    for check in checks:
        for phrase in check.phrases:
            check_step(phrase.pattern)(_check_step(phrase, scenario))


def _setting_step(setting: Setting,
                  scenario: Callable[[Any], _Scenario]) -> Callable[..., None]:
    def step(context: Any, **fields: Any) -> None:
        scenario(context).configure(**setting.overrides(**fields))

    step.__doc__ = setting.pattern
    return step


def _precondition_step(precondition: Precondition,
                       scenario: Callable[[Any], _Scenario]) -> Callable[..., None]:
    def step(context: Any) -> None:
        reason = precondition.unmet(scenario(context).harness)
        if reason is not None:
            context.scenario.skip(reason)

    step.__doc__ = f"{precondition.pattern}: skips the scenario where the backend cannot"
    return step


def _check_step(phrase: Phrase, scenario: Callable[[Any], Any]) -> Callable[..., None]:
    def step(context: Any, **fields: Any) -> None:
        for reading in readings_of(phrase.command(**fields)):
            agrees, wanted, actual = reading.check(scenario(context))
            check_then_step(context, agrees, reading.what, wanted, actual, reading.checks)

    step.__doc__ = phrase.pattern
    return step


# A derived keyword: the function whose signature, types and documentation are the
# keyword's, and what running it does with the library instance and the arguments.
@dataclass(frozen=True)
class _Keyword:
    signature_of: Callable[..., Any]
    run: Callable[..., object]


def _start_signature(**parameters: str) -> None:
    """Open this test's harness on ${BACKEND} and ${PROFILE} (the backend's own profile by
    default), the profile's parameters overridden by ``name=value`` pairs. A backend
    that does not claim the area skips the test."""


def _start_signature_of(sends: Callable[..., Any] | None) -> Callable[..., Any]:
    """The start keyword's signature: `sends`'s positional parameters, then the
    parameters as ``name=value``."""
    if sends is None:
        return _start_signature

    def start(*sent: Any, **parameters: str) -> None: ...

    positional = inspect.signature(sends).parameters.values()
    start.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        *positional, inspect.Parameter("parameters", inspect.Parameter.VAR_KEYWORD,
                                       annotation=str)])
    start.__annotations__ = {**inspect.get_annotations(sends, eval_str=True),
                             "parameters": str}
    start.__doc__ = f"{_start_signature.__doc__}\n\nThen: {inspect.getdoc(sends)}"
    return start


class DerivedLibrary(AreaLibrary[Any]):
    """A Robot library whose keywords are derived from an area's `Vocabulary`, through
    Robot's dynamic library API: a subclass names only its `VOCABULARY`. One harness per
    test, opened by the start keyword and closed as the test ends."""

    ROBOT_LIBRARY_SCOPE = "SUITE"
    VOCABULARY: ClassVar[Vocabulary]
    KEYWORDS: ClassVar[dict[str, _Keyword]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        vocabulary = cls.VOCABULARY
        cls.START, cls.OPENS = vocabulary.start or "", f"{vocabulary.noun} harness"
        keywords = {} if vocabulary.start is None else {vocabulary.start: _Keyword(
            _start_signature_of(vocabulary.start_sends), DerivedLibrary._open_test)}
        for declaration in vocabulary.commands:
            keywords[declaration.keyword] = _Keyword(declaration.command, partial(
                _send, declaration))
        for check in vocabulary.checks:
            if check.keyword is not None:
                keywords[check.keyword] = _Keyword(check.reading, partial(
                    _verify_through, check))
        for precondition in vocabulary.preconditions:
            keywords[precondition.keyword] = _Keyword(_requires, partial(_require,
                                                                         precondition))
        cls.KEYWORDS = keywords

    def through(self) -> Any:
        """Where the keywords send commands and read: this library, or the one the
        vocabulary `runs_through` (the test's instance of it)."""
        if self.VOCABULARY.runs_through is None:
            return self
        return BuiltIn().get_library_instance(self.VOCABULARY.runs_through)

    @property
    def harness(self) -> Any:
        if self._harness is None and self.VOCABULARY.opens_on_first_use:
            self._open_test()
        return super().harness

    def _open_test(self, *sent: Any, **parameters: str) -> None:
        vocabulary = self.VOCABULARY

        def open_harness(backend: Backend, profile: Profile, registry: Registry) -> Any:
            if vocabulary.area not in backend.capabilities:
                raise SkipExecution(f"backend {backend.name!r} does not claim the"
                                    f" {vocabulary.area} area")
            return vocabulary.open_harness(backend, profile, registry, dict(parameters))

        self._start(open_harness)
        if vocabulary.start is not None and vocabulary.start_sends is not None:
            Declaration(vocabulary.start, vocabulary.start_sends).send(
                self, vocabulary.start_sends(*sent))

    # Robot's dynamic library API.

    def get_keyword_names(self) -> list[str]:
        return list(self.KEYWORDS)

    def run_keyword(self, name: str, args: Sequence[Any],
                    named: Mapping[str, Any] | None = None) -> object:
        return self.KEYWORDS[name].run(self, *args, **(named or {}))

    def get_keyword_arguments(self, name: str) -> list[str | tuple[str, object]]:
        return robot_arguments(self.KEYWORDS[name].signature_of)

    def get_keyword_types(self, name: str) -> dict[str, object]:
        function = self.KEYWORDS[name].signature_of
        types = dict(inspect.get_annotations(function, eval_str=True))
        types.pop("return", None)
        return types

    def get_keyword_documentation(self, name: str) -> str:
        if name == "__intro__":
            return f"The {self.VOCABULARY.noun} area's keywords, derived from its vocabulary."
        keyword = self.KEYWORDS.get(name)
        return (inspect.getdoc(keyword.signature_of) or "") if keyword else ""


def _send(declaration: Declaration, library: DerivedLibrary, *args: Any,
          **kwargs: Any) -> object:
    try:
        return declaration.send(library.through(), declaration.command(*args, **kwargs))
    except Divergence:
        raise
    except AssertionError as error:
        # A command built from what the backend reads, which it could not read: the
        # test's failure, naming its requirements.
        raise test_failure(str(error)) from None


def _requires() -> None:
    """Skip the test where the backend does not have what it checks: it is not run."""


def _require(precondition: Precondition, library: DerivedLibrary) -> None:
    reason = precondition.unmet(library.through().harness)
    if reason is not None:
        raise SkipExecution(reason)


def _verify_through(check: Check, library: DerivedLibrary, *args: Any,
                    **kwargs: Any) -> None:
    verify(check, library.through(), *args, **kwargs)


def verify(check: Check, through: Any, *args: Any, **kwargs: Any) -> None:
    """Make `check` as its Robot keyword does with `args`, reading through `through`; a
    reading that fails on its own (a job never created) fails as a check does.

    Raises:
        AssertionError: the test's failure, naming its requirement tags.
    """
    for reading in readings_of(check.reading(*args, **kwargs)):
        try:
            agrees, wanted, actual = reading.check(through)
        except Divergence:
            raise
        except AssertionError as error:
            raise test_failure(str(error), reading.checks) from None
        if not agrees:
            raise test_failure(f"{reading.what} should be {wanted!r}, the backend shows"
                               f" {actual!r}", reading.checks)


def derive_check_keywords(library: type, checks: Iterable[Check],
                          through: Callable[[Any], Any]) -> None:
    """Add to the Robot `library` class one keyword per check that has one, taking the
    arguments of its `reading` and reading through `through(library instance)`.

    Raises:
        ValueError: a keyword would hide a method of `library`.
    """
    for check in checks:
        if check.keyword is None:
            continue
        name = keyword_method_name(check.keyword)
        if hasattr(library, name):
            raise ValueError(f"{library.__name__} already has {name!r}; the keyword"
                             f" {check.keyword!r} would hide it")
        setattr(library, name, _robot_keyword(check.keyword, name, check.reading, partial(
            lambda check, self, *args, **kwargs: verify(check, through(self), *args,
                                                        **kwargs), check)))


def robot_arguments(function: Callable[..., Any]) -> list[str | tuple[str, object]]:
    """A function's parameters as Robot's dynamic API spells a keyword's arguments."""
    spelt: list[str | tuple[str, object]] = []
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind is parameter.VAR_POSITIONAL:
            spelt.append(f"*{parameter.name}")
        elif parameter.kind is parameter.VAR_KEYWORD:
            spelt.append(f"**{parameter.name}")
        elif parameter.default is parameter.empty:
            spelt.append(parameter.name)
        else:
            spelt.append((parameter.name, parameter.default))
    return spelt
