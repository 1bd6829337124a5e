"""The adapter protocol: what a job runtime implements to be checked by the kit.

An adapter is two small objects. A `Backend` says what it claims (capabilities, profile)
and opens a fresh `Runtime` for each check, with the harness's clock and settings. The
`Runtime` wraps the job system under test. Task bodies are not the runtime's own: the
harness passes a `TaskScript` with each submission, and the runtime runs it as the job's
body. Nothing here needs inheriting; any object with these attributes fits.

Statuses cross the boundary in the canonical vocabulary (queued, running, succeeded,
failed, cancelled); `jobconform.spec.Profile.to_canonical` translates a runtime's own names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from jobconform.reference.commands import Outcome, Raise
from jobconform.reference.lifecycle import JsonValue

LIFECYCLE = "lifecycle"
KNOWN_CAPABILITIES = frozenset(
    {LIFECYCLE, "retry", "reaper", "loops", "breaker", "idempotency", "capacity", "reminders"}
)


class JobNotFound(KeyError):
    """get_result was asked for an id the runtime does not hold."""


class JobNotCompleted(RuntimeError):
    """get_result was asked for a job that has not succeeded."""

    def __init__(self, job_id: str, status: str) -> None:
        super().__init__(f"job {job_id} is not completed (status={status})")
        self.status = status


class CapacityExceeded(RuntimeError):
    """A submission was refused because the task cap is reached."""


class RuntimeShutDown(RuntimeError):
    """A submission was refused because the runtime has been shut down."""


class Clock(Protocol):
    def now(self) -> datetime:
        """The current virtual time, timezone-aware UTC."""
        ...


class TaskScript:
    """A job's body, controlled by the harness.

    The runtime calls `run()` once the script is decided; it returns the scripted result
    or raises the scripted exception, as a real body would. A body that honours
    cancellation ends as soon as its cancellation is requested; one that ignores it keeps
    running until it is decided.
    """

    def __init__(self, honours_cancellation: bool = True) -> None:
        self.honours_cancellation = honours_cancellation
        self._outcome: Outcome | None = None

    def decide(self, outcome: Outcome) -> None:
        """Fix how the body ends; only the first decision counts."""
        if self._outcome is None:
            self._outcome = outcome

    def decided(self) -> bool:
        return self._outcome is not None

    def run(self) -> JsonValue:
        """Execute the body.

        Returns:
            The scripted result.

        Raises:
            Exception: an exception whose type name and message are the scripted ones.
            RuntimeError: the body has not been decided yet (a runtime bug).
        """
        outcome = self._outcome
        if outcome is None:
            raise RuntimeError("the runtime ran a task body the harness has not decided yet")
        if isinstance(outcome, Raise):
            error_type = type(outcome.error_type, (Exception,), {})
            raise error_type(outcome.message)
        return outcome.result


class JobView(Protocol):
    """One job record as the runtime returns it; it must be a snapshot (LC-016)."""

    @property
    def job_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def submitted_at(self) -> datetime: ...
    @property
    def started_at(self) -> datetime | None: ...
    @property
    def finished_at(self) -> datetime | None: ...
    @property
    def result(self) -> object: ...
    @property
    def error(self) -> str | None: ...


class HealthView(Protocol):
    @property
    def queued(self) -> int: ...
    @property
    def running(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def processed(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def cancelled(self) -> int: ...


@dataclass(frozen=True)
class RuntimeSettings:
    """Limits for one runtime, from the profile's defaults or a check's own values."""

    max_concurrent: int
    max_tasks: int | None


class Runtime(Protocol):
    def submit(self, script: TaskScript) -> str:
        """Create a queued job whose body is `script`.

        Returns:
            The new job's id, unique within this runtime, at once.

        Raises:
            CapacityExceeded: the task cap is reached; no record was created.
            RuntimeShutDown: shutdown has been called; no record was created.
        """
        ...

    def dispatch(self) -> None:
        """A dispatch point: start queued jobs, oldest first, into free slots."""
        ...

    def settle(self) -> None:
        """Return once every body that can end now has ended and been recorded.

        Does not start queued jobs (only `dispatch` does).
        """
        ...

    def cancel(self, job_id: str) -> bool:
        """Cancel a queued job, or request cancellation of a running one.

        Returns:
            True if cancellation was applied or requested by this call, else False.
        """
        ...

    def get(self, job_id: str) -> JobView | None:
        """A snapshot of the job, or None for an unknown id."""
        ...

    def get_result(self, job_id: str) -> object:
        """The result of a succeeded job.

        Raises:
            JobNotFound: unknown id.
            JobNotCompleted: the job exists but has not succeeded.
        """
        ...

    def list_jobs(self, status: str | None = None) -> Sequence[JobView]:
        """Snapshots of held jobs in submission order, optionally of one status only."""
        ...

    def cleanup(self, max_age_seconds: float) -> int:
        """Remove terminal jobs at least this old; return how many were removed."""
        ...

    def shutdown(self) -> None:
        """Cancel every queued and running job; refuse submissions from now on."""
        ...

    def health(self) -> HealthView:
        """Counts and counters taken in one atomic snapshot."""
        ...

    def close(self) -> None:
        """Release whatever the runtime holds (threads, connections)."""
        ...


@runtime_checkable
class Backend(Protocol):
    """What the loader finds by entry point or `module:attr`."""

    name: str
    profile: str
    capabilities: frozenset[str]

    def open(self, settings: RuntimeSettings, clock: Clock) -> Runtime:
        """A fresh, empty runtime using `clock` for every timestamp."""
        ...


