"""The composite area's adapter protocol: loops, reminders, jobs, the breaker and the
governor working through ONE admission (spec/composite.yaml, CX-001 to CX-006).

A backend that claims `composite` has `open_composite(clock, config) -> CompositeRuntime`
returning a fresh runtime per check: no owners, no work, the global breaker switch on, no
pause. `config` is a `jobconform.reference.composite.oracle.CompositeConfig` holding each
composed area's parameters.

A backend that already has the five areas' runtimes need not write one: the kit's wiring
(`jobconform.backends.composite.wiring.open_shared_admission(backend, clock, config)`)
opens them through the backend's own `open_admission`, `open_loops`, `open_reminders`,
`open_breaker` and `open_governor` and routes every piece of work through the one
admission runtime. The kit's memory, sql and threaded backends do exactly that.

Every piece of work that holds or waits for a slot has one name (`work`): the job's own,
`"<loop>#<n>"` for run n of a loop, and a reminder's execution the reminder's name. The
names are the harness's; the runtime keeps them as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from jobconform.backends.protocol import Clock
from jobconform.reference.composite.oracle import CompositeConfig

COMPOSITE = "composite"


@dataclass(frozen=True)
class CompositeSnapshot:
    """Everything the harness compares after each command, each list in its order."""

    executions: tuple[tuple[str, str, str], ...]  # (work, owner, admission state), by arrival
    loops: tuple[tuple[str, str, int], ...]  # (loop, status, runs completed), by start
    reminders: tuple[tuple[str, str], ...]  # (reminder, status), by creation
    breakers: tuple[tuple[str, str, str | None], ...]  # (owner, state, probe), by creation
    paused_until: datetime | None  # UTC


class CompositeRuntime(Protocol):
    def add_owner(self, owner: str) -> None:
        """An owner with the admission defaults, its dispatch breaker opted in.

        Raises:
            AdmissionRefused: detail {"error": "owner_exists", ...}.
        """
        ...

    def submit(self, owner: str, job: str) -> str:
        """A job for `owner` passes its breaker, then its admission.

        Returns:
            "running" or "queued" (admitted), or "refused": the breaker is open, its probe
            is taken, or it is half-open with no free slot for the probe (CX-003).

        Raises:
            UnknownOwner; BacklogFull (nothing was recorded, the probe not kept).
        """
        ...

    def start_loop(self, owner: str, loop: str, runs: int) -> str:
        """Start a fixed-mode loop of `runs` runs; answers the admission of run 1
        ("running" or "queued"; CX-001).

        Raises:
            UnknownOwner.
        """
        ...

    def create_reminder(self, owner: str, reminder: str, delay_seconds: float) -> str:
        """Schedule a reminder firing in `delay_seconds`; answers "created".

        Raises:
            UnknownOwner; ReminderRejected (a reminder rule is broken).
        """
        ...

    def finish(self, work: str, failed: bool = False) -> bool | list[object]:
        """Running work ends (an auth failure if `failed`); its slot frees and the backlog
        drains. A job's outcome reaches its breaker; a loop's run ends in its loop.

        Returns:
            False if the work was not running (nothing changed); True for a job or a
            reminder's execution; for a loop's run `[True, next]`, `next` being the
            admission of the loop's next run ("running" or "queued") or None when the
            loop ended.
        """
        ...

    def record_failure(self, owner: str, failure_class: str, result: str) -> None:
        """A terminal failure result of `owner` reaches the re-delivery governor."""
        ...

    def maintain(self) -> int:
        """One maintenance pass of the admission; during the governor's pause it expires
        stale work but starts none (CX-004). Returns how many entries expired."""
        ...

    def restart(self) -> None:
        """The admission's process restarts over the same store (AD-018): work running
        becomes an orphan, still running and holding its slot until its lease (timeout +
        300 s) lapses (AD-017); its own end still ends it. Queued work keeps its place; the
        loops, reminders, breakers and the governor's pause keep their state. While the
        governor's pause holds, no lapsed lease is reclaimed; once it has ended, the lapsed
        ones are (CX-005).

        Optional: an adapter without it is reported as not meeting CX-005, nothing else."""
        ...

    def settle(self) -> None:
        """Return once everything due at the clock's current time has happened: reminders
        due have fired (their executions admitted), every decided run is recorded, and
        work past its timeout or its lapsed lease has ended, the lease only when no pause
        holds (CX-005)."""
        ...

    def snapshot(self) -> CompositeSnapshot: ...

    def close(self) -> None: ...


@runtime_checkable
class CompositeBackend(Protocol):
    def open_composite(self, clock: Clock, config: CompositeConfig) -> CompositeRuntime:
        """A fresh composite runtime using `clock` for every timestamp."""
        ...
