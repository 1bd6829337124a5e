"""The composite oracle: many jobs, worker slots and the virtual clock, one command at a time.

It answers the same commands a backend does and records, for each command, the
requirement IDs that decided its answer, so a divergence can name them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from jobconform.reference import lifecycle
from jobconform.reference.commands import (
    ACCEPTED,
    NOT_FOUND,
    REFUSED_CAPACITY,
    REFUSED_SHUT_DOWN,
    AdvanceTime,
    Cancel,
    Cleanup,
    Command,
    Dispatch,
    Finish,
    Get,
    GetResult,
    ListJobs,
    Outcome,
    Raise,
    Shutdown,
    Submit,
    Succeed,
    not_completed,
)
from jobconform.reference.lifecycle import Event, EventKind, JobState, JsonValue, Status

Answer = JsonValue | JobState


@dataclass(frozen=True)
class Limits:
    max_concurrent: int
    max_tasks: int | None


@dataclass(frozen=True)
class Health:
    queued: int
    running: int
    total: int
    processed: int
    failed: int
    cancelled: int


@dataclass(frozen=True)
class StepResult:
    answer: Answer
    requirements: tuple[str, ...]


@dataclass
class _Script:
    """What the harness has said about one job's body."""

    ignores_cancel: bool
    outcome: Outcome | None = None
    cancel_requested: bool = False


@dataclass
class ReferenceModel:
    """The oracle. Job aliases are its job ids."""

    limits: Limits
    now: datetime
    jobs: dict[str, JobState] = field(default_factory=dict)
    scripts: dict[str, _Script] = field(default_factory=dict)
    processed: int = 0
    failed: int = 0
    cancelled: int = 0
    shut_down: bool = False

    def apply(self, command: Command) -> StepResult:
        """Apply one command; return the answer and the requirements that decided it."""
        match command:
            case Submit():
                return self._submit(command)
            case Dispatch():
                return StepResult(None, self._dispatch())
            case Finish():
                return StepResult(None, self._finish(command.job, command.outcome))
            case Cancel():
                return self._cancel(command.job)
            case AdvanceTime():
                self.now += timedelta(seconds=command.seconds)
                return StepResult(None, ())
            case Cleanup():
                return self._cleanup(command.max_age_seconds)
            case Shutdown():
                return StepResult(None, self._shutdown())
            case GetResult():
                return self._get_result(command.job)
            case Get():
                return StepResult(self.jobs.get(command.job), ("LC-016",))
            case ListJobs():
                names: list[JsonValue] = [a for a, job in self.jobs.items()
                         if command.status is None or job.status.value == command.status]
                return StepResult(names, ("LC-018",))

    def health(self) -> Health:
        statuses = [job.status for job in self.jobs.values()]
        return Health(
            queued=statuses.count(Status.QUEUED),
            running=statuses.count(Status.RUNNING),
            total=len(statuses),
            processed=self.processed,
            failed=self.failed,
            cancelled=self.cancelled,
        )

    def _move(self, alias: str, kind: EventKind, result: JsonValue = None,
              error: str | None = None) -> None:
        job = lifecycle.step(self.jobs[alias], Event(kind, self.now, result, error))
        self.jobs[alias] = job
        if job.status is Status.CANCELLED:
            self.cancelled += 1
        elif job.status is Status.FAILED:
            self.failed += 1
            self.processed += 1
        elif job.status is Status.SUCCEEDED:
            self.processed += 1

    def _submit(self, command: Submit) -> StepResult:
        if self.shut_down:
            return StepResult(REFUSED_SHUT_DOWN, ("LC-023",))
        if self.limits.max_tasks is not None and len(self.jobs) >= self.limits.max_tasks:
            return StepResult(REFUSED_CAPACITY, ("LC-009",))
        self.jobs[command.job] = lifecycle.new_job(self.now)
        self.scripts[command.job] = _Script(ignores_cancel=command.ignores_cancel)
        return StepResult(ACCEPTED, ("LC-008", "LC-009"))

    def _dispatch(self) -> tuple[str, ...]:
        running = sum(job.status is Status.RUNNING for job in self.jobs.values())
        for alias, job in self.jobs.items():
            if running >= self.limits.max_concurrent:
                break
            if job.status is Status.QUEUED:
                self._move(alias, EventKind.START)
                running += 1
                self._run_body(alias)
        return ("LC-010", "LC-012")

    def _run_body(self, alias: str) -> None:
        """Let a running job's body end if the harness has already decided how."""
        script = self.scripts[alias]
        job = self.jobs.get(alias)
        if job is None or job.status is not Status.RUNNING:
            return
        if script.cancel_requested and (not script.ignores_cancel or script.outcome is not None):
            self._move(alias, EventKind.CANCEL)
        elif isinstance(script.outcome, Succeed):
            self._move(alias, EventKind.SUCCEED, result=script.outcome.result)
        elif isinstance(script.outcome, Raise):
            message = lifecycle.error_message(script.outcome.error_type, script.outcome.message)
            self._move(alias, EventKind.FAIL, error=message)

    def _finish(self, alias: str, outcome: Outcome) -> tuple[str, ...]:
        script = self.scripts.get(alias)
        if script is None or script.outcome is not None:
            return ("LC-003",)
        script.outcome = outcome
        self._run_body(alias)
        if script.cancel_requested:
            return ("LC-014", "LC-003")
        return ("LC-003", "LC-006", "LC-007", "LC-025")

    def _cancel(self, alias: str) -> StepResult:
        job = self.jobs.get(alias)
        if job is None or job.status.is_terminal:
            return StepResult(False, ("LC-015",))
        script = self.scripts[alias]
        if job.status is Status.QUEUED:
            self._move(alias, EventKind.CANCEL)
            return StepResult(True, ("LC-011", "LC-025"))
        if script.cancel_requested:
            return StepResult(False, ("LC-015",))
        script.cancel_requested = True
        self._run_body(alias)
        return StepResult(True, ("LC-013", "LC-025"))

    def _cleanup(self, max_age_seconds: float) -> StepResult:
        limit = timedelta(seconds=max_age_seconds)
        expired = [
            alias for alias, job in self.jobs.items()
            if job.status.is_terminal and self.now - (job.finished_at or job.submitted_at) >= limit
        ]
        for alias in expired:
            del self.jobs[alias]
        return StepResult(len(expired), ("LC-019", "LC-020", "LC-021"))

    def _shutdown(self) -> tuple[str, ...]:
        for alias, job in self.jobs.items():
            if job.status.is_terminal:
                continue
            self.scripts[alias].cancel_requested = True
            self._move(alias, EventKind.CANCEL)
        self.shut_down = True
        return ("LC-022", "LC-023", "LC-025")

    def _get_result(self, alias: str) -> StepResult:
        job = self.jobs.get(alias)
        if job is None:
            return StepResult(NOT_FOUND, ("LC-017",))
        if job.status is not Status.SUCCEEDED:
            return StepResult(not_completed(job.status.value), ("LC-017",))
        return StepResult(job.result, ("LC-017", "LC-006"))
