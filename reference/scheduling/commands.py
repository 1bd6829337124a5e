"""The scheduling area's commands: plain data every front-end speaks.

Schedules are named by aliases the check picks ("s1"); the harness maps the runtime's ids
to them. Time passes with the lifecycle's `AdvanceTime`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import TypeAlias

from jobconform.reference.commands import AdvanceTime, fields_given, written
from jobconform.reference.scheduling.oracle import ExecutionOutcome, PreCheckAnswer, Verdict


@dataclass(frozen=True)
class CreateOnce:
    """A one-shot job by exactly one of `run_at` and `delay_seconds` (SC-001)."""

    schedule: str
    message: str
    run_at: datetime | None = None
    delay_seconds: float | None = None
    pre_check: PreCheckAnswer | None = None  # None: no pre-check hook


@dataclass(frozen=True)
class CreateCron:
    schedule: str
    message: str
    expression: str
    timezone: str = "UTC"
    pre_check: PreCheckAnswer | None = None


@dataclass(frozen=True)
class ScriptPreCheck:
    """The schedule's pre-check answers `answer` from now on (a schedule without one
    ignores it)."""

    schedule: str
    answer: PreCheckAnswer


@dataclass(frozen=True)
class TriggerSchedule:
    schedule: str


@dataclass(frozen=True)
class EndExecution:
    """The runtime learns how the execution it dispatched for `scheduled_for` ended
    (SC-019); `cost` None: not known."""

    schedule: str
    scheduled_for: datetime
    outcome: ExecutionOutcome
    cost: float | None = None


@dataclass(frozen=True)
class SetValidation:
    """The schedule's business validation switch and timeout (SC-020)."""

    schedule: str
    enabled: bool
    timeout_seconds: float


@dataclass(frozen=True)
class EndValidation:
    """The validation run of the execution dispatched for `scheduled_for` answers
    `verdict` (SC-022, SC-023)."""

    schedule: str
    scheduled_for: datetime
    verdict: Verdict


@dataclass(frozen=True)
class EditSchedule:
    """Change the fields given; None leaves a field as it is (SC-017)."""

    schedule: str
    message: str | None = None
    expression: str | None = None
    timezone: str | None = None


@dataclass(frozen=True)
class DeleteSchedule:
    schedule: str


@dataclass(frozen=True)
class SetAutonomy:
    enabled: bool


@dataclass(frozen=True)
class StartSecondScheduler:
    """A second scheduler starts over the same store, as a second process would."""


@dataclass(frozen=True)
class RestartScheduling:
    """Every scheduler crashes, `down_seconds` pass, and one starts over the same store."""

    down_seconds: float = 0.0


@dataclass(frozen=True)
class GetSchedule:
    schedule: str


@dataclass(frozen=True)
class ListSchedules:
    pass


@dataclass(frozen=True)
class ReadHistory:
    schedule: str


SchedulingCommand: TypeAlias = (CreateOnce | CreateCron | ScriptPreCheck | TriggerSchedule
                                | EndExecution | SetValidation | EndValidation | EditSchedule
                                | DeleteSchedule | SetAutonomy | StartSecondScheduler
                                | RestartScheduling | GetSchedule | ListSchedules | ReadHistory
                                | AdvanceTime)


def describe_scheduling_command(command: SchedulingCommand) -> str:
    """One readable line per command; fields left at their defaults are omitted."""
    values: list[tuple[str, object]] = []
    for name, value in fields_given(command):
        if isinstance(value, StrEnum):
            value = value.value
        elif isinstance(value, datetime):
            value = value.isoformat()
        values.append((name, value))
    return written(command, values)
