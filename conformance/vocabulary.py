"""An area's commands declared once; its Behave action steps and Robot keywords derived.

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
`AfterCommands`, which the engine completes with that count as it sends it.

What is not a command (a Then-step's check of what the backend shows, a step that reads
and keeps a record) stays hand-written in the area's steps and keywords. A Robot keyword
that also checks the answer it got (a submission that must be accepted) names that check
in `derive_keywords`' `answered`.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, cast

from robot.api.deco import keyword

from jobconform.conformance.step_library import action_step
from jobconform.reference.lifecycle import JsonValue
from jobconform.spec import Profile


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
    which builds the command, or the commands in order, from the fields it parses."""

    pattern: str
    command: Callable[..., Any]


@dataclass(frozen=True)
class Declaration:
    """One command an area's suites send, declared once.

    Args:
        keyword: the Robot keyword that sends it.
        command: builds the command, or the commands in order, from the keyword's
            arguments; its signature is the keyword's.
        phrases: the Gherkin wordings that send it, as Given or When steps.
        kept_as: the alias a command's answer is kept under (a creation's), if any.
    """

    keyword: str
    command: Callable[..., Any]
    phrases: tuple[Phrase, ...] = ()
    kept_as: Callable[[Any], str] | None = None

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
        if isinstance(command, OnProfile):
            command = command.build(cast(ProfiledAnswers, through).profile)
        elif isinstance(command, AfterCommands):
            command = command.build(len(cast(LoggedAnswers, through).harness.commands))
        answer = through.run(command)
        if self.kept_as is not None:
            through.answers[self.kept_as(command)] = answer
        return answer


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

    # Robot reads a keyword's arguments, their defaults and types from its signature:
    # the builder's, behind the instance.
    builder = inspect.signature(declaration.command)
    instance = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    send.__signature__ = builder.replace(  # type: ignore[attr-defined]
        parameters=[instance, *builder.parameters.values()])
    send.__annotations__ = dict(inspect.get_annotations(declaration.command, eval_str=True))
    send.__name__ = send.__qualname__ = name
    send.__doc__ = declaration.command.__doc__
    registered: Callable[..., object] = keyword(declaration.keyword)(send)
    return registered
