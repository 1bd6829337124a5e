"""Commands of the loops area: plain data, the same for every front-end.

Loops are named by aliases the harness picks ("l1"); the harness maps them to the
backend's ids. `EndRun` scripts the in-flight run of a loop (it does nothing when the
loop has none); time passes only through `PassTime`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from jobconform.reference.commands import fields_given, written
from jobconform.reference.loops.oracle import (
    FailResult,
    LoopParameters,
    RaiseError,
    Respond,
    RunOutcome,
)


@dataclass(frozen=True)
class StartLoop:
    loop: str
    params: LoopParameters


@dataclass(frozen=True)
class EndRun:
    loop: str
    outcome: RunOutcome


@dataclass(frozen=True)
class StopLoop:
    loop: str


@dataclass(frozen=True)
class PassTime:
    seconds: float


@dataclass(frozen=True)
class RestartLoops:
    """The process restarts: what only it held is lost; start-up recovery runs."""


@dataclass(frozen=True)
class ReadLoop:
    loop: str


LoopCommand = StartLoop | EndRun | StopLoop | PassTime | RestartLoops | ReadLoop

# Answers.
STARTED = "started"
NOT_FOUND = "not_found"


@dataclass(frozen=True)
class Refused:
    """StartLoop was refused; the parameters named as invalid, in field order."""

    parameters: tuple[str, ...]


def describe_outcome(outcome: RunOutcome) -> str:
    if isinstance(outcome, Respond):
        return f"responds {outcome.response!r} costing {outcome.cost!r}"
    if isinstance(outcome, FailResult):
        return f"returns {outcome.status} costing {outcome.cost!r}"
    assert isinstance(outcome, RaiseError)
    return f"raises {outcome.error_type}({outcome.message!r})"


def describe_loop_command(command: LoopCommand) -> str:
    """One readable line, for failure messages and reproducers."""
    if isinstance(command, EndRun):
        return f"EndRun({command.loop!r}, {describe_outcome(command.outcome)})"
    if isinstance(command, StartLoop):
        given = ", ".join(f"{name}={value!r}" for name, value
                          in fields_given(command.params, always=("message", "max_runs")))
        return f"StartLoop({command.loop!r}, {given})"
    return written(command, ((f.name, getattr(command, f.name)) for f in fields(command)))
