"""How the kit's Behave steps register: one typed function under each of its patterns.

A step is a setup (Given only: it configures before any command), an action (Given or
When: it sends a command) or a check (Then: it reads what the backend shows). The parse
types the patterns of every area use (`{status:Status}`, `{value:Json}`,
`{mode:Jitter}`) are registered here, before any step library compiles a pattern; an
area's own (`ParameterType`, scheduling's `{instant:Instant}`) with its declarations.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

from behave import given, register_type, then, use_step_matcher, when
from behave.matchers import (
    Match,
    ParseMatcher,
    get_step_matcher_factory,
    register_step_matcher_class,
)

from jobconform.conformance import tolerance
from jobconform.conformance.harness import Divergence
from jobconform.conformance.requirement_tags import requirement_tags
from jobconform.reference.backoff import Jitter
from jobconform.reference.lifecycle import JsonValue, Status

StepFunction = TypeVar("StepFunction", bound=Callable[..., None])


class LiteralEndsMatcher(ParseMatcher):  # type: ignore[misc]  # behave is untyped
    """Behave's parse matcher, which first compares the literal text its pattern starts
    and ends with (before the first brace, after the last).

    Behave tries a step's line against every registered pattern in turn until one
    matches, and checks each new pattern against every one before it: with some 850
    patterns, running each pattern's regular expression was a fifth of the Behave suite's
    CPU. A parse pattern matches case-sensitively from the line's start to its end, with
    its literal text as it is, so a line that does not start and end with that text
    cannot match; every other line is matched as before.
    """

    NAME = "jobconform-parse"

    def __init__(self, func: Any, pattern: str, step_type: str | None = None,
                 custom_types: Any = None) -> None:
        super().__init__(func, pattern, step_type, custom_types)
        literal = re.split(r"[{}]", pattern)
        self.literal_start, self.literal_end = literal[0], literal[-1]

    def match(self, step_text: str) -> Match | None:
        if not (step_text.startswith(self.literal_start)
                and step_text.endswith(self.literal_end)):
            return None
        return cast(Match | None, super().match(step_text))


register_step_matcher_class(LiteralEndsMatcher.NAME, LiteralEndsMatcher, override=True)


def _register(decorators: Sequence[Any], *patterns: str) -> Callable[[StepFunction],
                                                                     StepFunction]:
    """Register one typed function under each pattern with each behave decorator, with
    the kit's matcher whichever one behave has in use (it resets it between step files),
    and that one back in use after."""

    def decorate(function: StepFunction) -> StepFunction:
        in_use = get_step_matcher_factory().current_matcher
        use_step_matcher(LiteralEndsMatcher.NAME)
        try:
            for pattern in patterns:
                for decorator in decorators:
                    decorator(pattern)(function)
        finally:
            use_step_matcher(in_use.NAME)
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


class ParameterType:
    """A parse type: a callable with the regular expression it matches."""

    def __init__(self, pattern: str, convert: Callable[[str], object]) -> None:
        self.pattern = pattern
        self._convert = convert

    def __call__(self, text: str) -> object:
        return self._convert(text)


def parse_json(text: str) -> JsonValue:
    """A JSON value as a step writes it (`42`, `"done"`, `{"n": 1}`, `null`).

    Raises:
        ValueError: the text is not JSON.
    """
    try:
        value: JsonValue = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"not a JSON value: {text!r} ({error})") from error
    return value


use_step_matcher(LiteralEndsMatcher.NAME)
register_type(
    Status=ParameterType("|".join(status.value for status in Status), str),
    Json=ParameterType(r".+", parse_json),
    Jitter=ParameterType("|".join(mode.value for mode in Jitter), Jitter),
)
