"""The glue every adapter of a real library writes, once: small typed helpers.

An adapter translates between the library and the kit's protocol. The same few
translations came back in every worked example and in every adapter users wrote:

- time: a library stamps with the wall clock (`wall_now`, virtual under `WallClock`), keeps
  naive or epoch-second times (`utc`), counts seconds where the spec counts milliseconds
  (`seconds`), or takes its retry delays as a list (`retry_intervals_ms`, for a backend
  declaring the partial claim `retry-intervals`) or grows them without a cap
  (`multiplied_delay_ms`);
- status: the library's own names for states (`canonical_status`);
- exceptions: the error text the spec records (`error_text`), exception classes for the
  failure names the harness raises (`error_types`), a reported outcome as the exception
  a library learns it from (`outcome_error`), and a library's wrapper around one call
  entered and ended where the protocol splits the call (`entered`, `exit_with`);
- the job table and the gate: `records_on_wall`, `cancel_in` and `shut_down_in` for a
  runtime whose records are the kit's `JobRecords`, released at the `DispatchGate`, and
  `dispatch_point` for a runtime whose own threads poll and move due work;
- the wait for the harness's decision: `may_run` in a worker thread, `Decisions` on an
  event loop.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from contextlib import AbstractContextManager, suppress
from datetime import UTC, datetime

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.bridges.gate import DispatchGate
from jobconform.bridges.records import JobRecords
from jobconform.bridges.threads import ThreadWaits
from jobconform.reference.backoff import RetryPolicy, delay_ms

ACTIVE = ("queued", "running")

# -- time ------------------------------------------------------------------------------------


def wall_now() -> datetime:
    """The wall clock the library reads, aware UTC: the virtual clock under `WallClock`."""
    return datetime.now(UTC)


def utc(moment: datetime | float | None) -> datetime | None:
    """A library's time as the protocol's aware UTC datetime: a naive datetime is taken
    as UTC, a number as seconds since the epoch; None stays None."""
    if moment is None:
        return None
    if isinstance(moment, datetime):
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return datetime.fromtimestamp(moment, UTC)


def seconds(milliseconds: float) -> float:
    """The spec counts milliseconds; most libraries take seconds."""
    return milliseconds / 1000.0


def retry_intervals_ms(policy: RetryPolicy) -> list[float]:
    """The delays before each of the policy's retries, for a library that takes a list of
    intervals and has no formula of its own: the first waits the first, and so on. The
    formula is the kit's, which is why such a backend leaves RT-002 out of its claim."""
    return [delay_ms(policy, attempt) for attempt in range(policy.max_retries)]


# -- status ----------------------------------------------------------------------------------

_SEPARATORS = re.compile(r"[\s-]+")


def multiplied_delay_ms(policy: RetryPolicy, attempt: int) -> float:
    """The delay before retry `attempt` (0: the first) of a library that keeps a task's
    delay and multiplies it by the backoff at each retry, in that order: no cap, no
    jitter (huey's retry_backoff)."""
    delay = policy.retry_delay_ms
    for _ in range(attempt):
        delay *= policy.backoff_multiplier
    return delay


def canonical_status(name: str, vocabulary: Mapping[str, str] | None = None) -> str:
    """The spec's name for a library's state: its entry in `vocabulary` (the library's
    name to the spec's), else the name itself in lower case with hyphens and spaces as
    underscores ("HALF-OPEN" is "half_open")."""
    if vocabulary and name in vocabulary:
        return vocabulary[name]
    return _SEPARATORS.sub("_", name.strip()).lower()


# -- exceptions ------------------------------------------------------------------------------


def error_text(error: BaseException) -> str:
    """The error a failed job records: the type's name, then the message
    ("ValueError: boom"), as the reference runtime writes it."""
    return f"{type(error).__name__}: {error}"


def error_types(*names: str) -> dict[str, type[Exception]]:
    """An exception class of each name, for the failure classes the harness names
    ("timeout", "auth") when a library tells failures apart by type."""
    return {name: type(name, (Exception,), {}) for name in names}


def outcome_error(outcome: str, failure_class: str | None,
                  types: Mapping[str, type[Exception]]) -> BaseException | None:
    """The exception a call's reported outcome is, for a library that learns outcomes
    from what its wrapped call raises: None for "success", `asyncio.CancelledError` for
    "cancelled", else the failure class's type from `types` (`error_types`)."""
    if outcome == "success":
        return None
    if outcome == "cancelled":
        return asyncio.CancelledError()
    return types[failure_class or ""]()


def entered(block: AbstractContextManager[object],
            refusal: type[BaseException] = Exception) -> AbstractContextManager[object] | None:
    """Enter a library's wrapper around one call (a breaker's `calling()`) when the
    protocol starts the call; pair with `exit_with` when it reports the end.

    Returns:
        The entered block, or None when entering raised `refusal` (the library refused
        the call).
    """
    try:
        block.__enter__()
    except refusal:
        return None
    return block


def exit_with(block: AbstractContextManager[object] | None, error: BaseException | None) -> None:
    """End a block from `entered` as if the call had raised `error` in it (None: it
    returned). What the library raises on the way out, the error itself or its own, is
    how it passes the call's end on; the protocol's report never raises, so it is dropped."""
    if block is not None:
        with suppress(BaseException):
            block.__exit__(type(error) if error else None, error, None)


# -- the job table and the gate --------------------------------------------------------------


def records_on_wall(settings: RuntimeSettings) -> JobRecords:
    """The kit's job table, stamped by the wall clock, refusing past the task cap."""
    return JobRecords(wall_now, settings.max_tasks)


def cancel_in(records: JobRecords, gate: DispatchGate, job_id: str) -> str | None:
    """The protocol's cancel on the kit's records and gate: a queued job is cancelled at
    once, a running one is asked to stop (its body is let go at the gate).

    Returns:
        The status the job had ("queued" or "running") when this call cancelled it, so
        the adapter can tell its library too; None when cancel must return False (an
        unknown id, a finished job, or one whose cancellation was already asked).
    """
    record = records.get(job_id)
    if record is None or record.status not in ACTIVE or gate.released(job_id):
        return None
    gate.release(job_id)
    if record.status == "queued":
        records.update(job_id, "cancelled")
    return record.status


def shut_down_in(records: JobRecords, gate: DispatchGate) -> list[str]:
    """The protocol's shutdown on the kit's records and gate: submissions refused, every
    active job cancelled and let go. Returns their ids, for the library to drop them."""
    active = records.shut_down()
    for job_id in active:
        gate.release(job_id)
        records.update(job_id, "cancelled")
    return active


# -- the wait for the harness's decision -----------------------------------------------------


def cancellation_wins(gate: DispatchGate, job_id: str, script: TaskScript) -> bool:
    """Whether a requested cancellation ends the body instead of its outcome (LC-014):
    the job was released, and its script is decided or honours cancellation."""
    return gate.released(job_id) and (script.decided() or script.honours_cancellation)


def dispatch_point(waits: ThreadWaits, gate: DispatchGate, hops: int = 2) -> None:
    """A commanded dispatch for a runtime whose own threads poll: `hops` rounds of waking
    its sleeping threads and settling (each round moves work one stage on: a scheduler
    queues a due retry, then a worker fetches it), then the gate lets the bodies in."""
    for _ in range(hops):
        waits.wake_sleepers()
        waits.settle()
    gate.open()
    waits.settle()


def may_run(gate: DispatchGate, job_id: str, script: TaskScript) -> bool:
    """In the body's worker thread: wait for the harness's decision; then True to run
    the script, False when a requested cancellation wins (end the job cancelled)."""
    gate.wait_for_decision(job_id, script)
    return not cancellation_wins(gate, job_id, script)


class Decisions:
    """Bodies on an event loop waiting for the harness's decision.

    A body awaits `wait`; the runtime's `settle` calls `release_decided` before settling
    its loop. The decision lives in the script, so a wait that is cancelled (a library
    aborting its task) loses nothing: awaiting again goes on waiting.
    """

    def __init__(self, gate: DispatchGate | None = None) -> None:
        # With a gate, a body whose job was released and whose script honours
        # cancellation stops waiting too; without, cancellation is the library's (it
        # cancels the body's task).
        self._gate = gate
        self._waiting: dict[str, tuple[TaskScript, asyncio.Future[None]]] = {}

    async def wait(self, job_id: str, script: TaskScript) -> None:
        future = asyncio.get_running_loop().create_future()
        self._waiting[job_id] = (script, future)
        try:
            await future
        finally:
            self._waiting.pop(job_id, None)

    def abandon(self, job_id: str) -> None:
        """The delivery waiting for `job_id`'s decision was taken away (its worker is gone,
        a lease pass re-queued the job): it is never woken, and the job's next delivery
        waits for the next decision."""
        self._waiting.pop(job_id, None)

    def release_decided(self) -> None:
        for job_id, (script, future) in list(self._waiting.items()):
            let_go = (self._gate is not None and self._gate.released(job_id)
                      and script.honours_cancellation)
            if (script.decided() or let_go) and not future.done():
                future.set_result(None)
