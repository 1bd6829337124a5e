"""The composite area's commands: plain data, like the lifecycle's (reference/commands.py).

Owners, jobs, loops, reminders and failure results are named by strings the harness picks.
A loop's run n is known as `"<loop>#<n>"` and a reminder's execution by the reminder's own
name, so every piece of work holding or waiting for a slot has one name (`work`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias


@dataclass(frozen=True)
class AddOwner:
    """A new owner (an agent) with the admission defaults; its breaker is engaged."""

    owner: str


@dataclass(frozen=True)
class SubmitJob:
    """New work for `owner`, through its dispatch breaker and then its admission; answers
    "running", "queued", "refused" (the breaker said no) or a refusal dict."""

    owner: str
    job: str


@dataclass(frozen=True)
class StartLoop:
    """A fixed-mode loop of `runs` runs for `owner`; answers the admission of run 1."""

    owner: str
    loop: str
    runs: int


@dataclass(frozen=True)
class CreateReminder:
    """A reminder of `owner` due in `delay_seconds`; it fires when the clock reaches it."""

    owner: str
    reminder: str
    delay_seconds: float


@dataclass(frozen=True)
class FinishWork:
    """Running work ends: a job, a loop's run or a reminder's execution. `failed` ends it
    with an auth failure (a job's counts at its breaker; a loop's run fails its loop).
    Answers whether it was running, and for a loop's run the admission of the next run."""

    work: str
    failed: bool = False


@dataclass(frozen=True)
class RecordFailure:
    """A terminal failure result of `owner` reaches the re-delivery governor."""

    owner: str
    failure_class: str
    result: str


@dataclass(frozen=True)
class Maintain:
    """One maintenance pass of the admission; answers how many entries expired."""


@dataclass(frozen=True)
class Restart:
    """The admission's process restarts over the same store (AD-018): work running becomes
    an orphan that keeps its slot until its lease lapses (AD-017), and whose own end, its
    result arriving late, still ends it. The loops, reminders, breaker and governor keep
    their state, as the seed's shared stores do (CX-005)."""


@dataclass(frozen=True)
class PassTime:
    seconds: float


CompositeCommand: TypeAlias = (AddOwner | SubmitJob | StartLoop | CreateReminder | FinishWork
                               | RecordFailure | Maintain | Restart | PassTime)


def loop_run(loop: str, number: int) -> str:
    """The work name of run `number` of `loop`."""
    return f"{loop}#{number}"
