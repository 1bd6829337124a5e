"""The oracle of the self-running area (SR-001..SR-009): when a runtime that runs its own
clockwork may, and must, have acted.

A commanded runtime acts at the command; a self-running one acts somewhere in a window.
Each function here gives that window from instants the runtime recorded (a job's
submission, start or last heartbeat, the end of its failed attempt or of the job, a
schedule's fire time, the end of a dispatched execution) and the
poll interval, or the reaper's sweep interval: the action is forbidden up to the window's
opening (or before it, for an opening it may act at), and required from its close on.
`read_points` are the instants a check reads at so that an early action is as visible as
a late or missing one: one where it is still forbidden, one inside, and the close. Pure:
no clock, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from jobconform.reference.backoff import RetryPolicy, delay_ms

# What a window's action is, for messages.
START = "start"
FAIL_STUCK = "fail as stuck"
REQUEUE = "re-queue (lease lapsed)"
START_RETRY = "start the retry"
REAP = "remove (reaper sweep)"
FIRE = "fire the schedule"
DELIVER = "dispatch the reminder"
LEARN_END = "learn how the execution ended"


@dataclass(frozen=True)
class Window:
    """When an action may and must happen.

    Attributes:
        action: what happens (START, FAIL_STUCK, ...).
        opens: the instant the window opens.
        closes: the last instant the action may wait for; it must have happened by then.
        at_opening: whether the action may happen at `opens` itself (a start may happen at
            its due time; a stuck job is failed only strictly after its timeout, ST-003).
    """

    action: str
    opens: datetime
    closes: datetime
    at_opening: bool

    def __post_init__(self) -> None:
        if self.closes < self.opens:
            raise ValueError(f"a window closes at or after it opens: {self}")

    def forbids(self, at: datetime) -> bool:
        """The action must not have happened by `at`."""
        return at < self.opens or (at == self.opens and not self.at_opening)

    def requires(self, at: datetime) -> bool:
        """The action must have happened by `at`."""
        return at >= self.closes

    def holds(self, happened_at: datetime) -> bool:
        """An action recorded at `happened_at` lies in the window."""
        return not self.forbids(happened_at) and happened_at <= self.closes

    def read_points(self) -> tuple[datetime, ...]:
        """Where a check reads: the last instant the action is still forbidden (the opening
        itself, or half a window before an opening it may act at), the middle, the close.
        A window that opens at the reading's start has nothing forbidden to read."""
        half = (self.closes - self.opens) / 2
        before = self.opens if not self.at_opening else self.opens - half
        return tuple(dict.fromkeys((before, self.opens + half, self.closes)))

    def describe(self) -> str:
        bracket = "[" if self.at_opening else "("
        return (f"{self.action} in {bracket}{self.opens.isoformat()},"
                f" {self.closes.isoformat()}]")


def poll(seconds: float) -> timedelta:
    return timedelta(seconds=seconds)


def start_window(ready_at: datetime, poll_interval_seconds: float) -> Window:
    """SR-001: a job ready at `ready_at` (submitted, re-queued, or waiting for a slot that
    freed then) starts within one poll interval; it may start at once."""
    return Window(START, ready_at, ready_at + poll(poll_interval_seconds), at_opening=True)


def stuck_window(last_heartbeat: datetime, job_timeout_seconds: float,
                 poll_interval_seconds: float) -> Window:
    """SR-002: failed as stuck strictly after last_heartbeat + timeout (ST-003), and within
    one poll interval after it."""
    deadline = last_heartbeat + timedelta(seconds=job_timeout_seconds)
    return Window(FAIL_STUCK, deadline, deadline + poll(poll_interval_seconds),
                  at_opening=False)


def lease_window(last_heartbeat: datetime, lease_seconds: float,
                 poll_interval_seconds: float) -> Window:
    """SR-003: re-queued strictly after last_heartbeat + lease, within one poll interval."""
    lapse = last_heartbeat + timedelta(seconds=lease_seconds)
    return Window(REQUEUE, lapse, lapse + poll(poll_interval_seconds), at_opening=False)


def retry_due(failed_at: datetime, policy: RetryPolicy, retries_taken: int) -> datetime:
    """When a failed attempt's retry is due: its end plus the policy's delay (RT-002,
    without jitter)."""
    return failed_at + timedelta(milliseconds=delay_ms(policy, retries_taken))


def retry_window(failed_at: datetime, policy: RetryPolicy, retries_taken: int,
                 poll_interval_seconds: float) -> Window:
    """SR-004: started again no earlier than due, no later than one poll interval after."""
    due = retry_due(failed_at, policy, retries_taken)
    return Window(START_RETRY, due, due + poll(poll_interval_seconds), at_opening=True)


def reap_window(finished_at: datetime, ttl_seconds: float, sweep_interval_ms: float) -> Window:
    """SR-005: a terminal job is removed by a sweep of the runtime's own reaper strictly
    after finished_at + ttl (a sweep at boundary b removes what list_expired(b - ttl)
    returns, and that is strict, RP-002, RP-003), and by the first sweep boundary after
    that instant, at most one sweep interval later."""
    expiry = finished_at + timedelta(seconds=ttl_seconds)
    return Window(REAP, expiry, expiry + timedelta(milliseconds=sweep_interval_ms),
                  at_opening=False)


def fire_window(fire_at: datetime, poll_interval_seconds: float) -> Window:
    """SR-006: a schedule's fire at `fire_at` (a one-shot job's instant, a cron fire time)
    is dispatched no earlier than `fire_at` (it may be at that instant, SC-006's "never
    before its fire time") and within one poll interval after it."""
    return Window(FIRE, fire_at, fire_at + poll(poll_interval_seconds), at_opening=True)


def delivery_window(due_at: datetime) -> Window:
    """SR-008: a pending reminder due at `due_at` (its fire_at, or the retry's due time
    after a dispatch that did not land) is dispatched at that instant: not before it, and
    by it. The window is the one instant; a check reads one tick before it and at it."""
    return Window(DELIVER, due_at, due_at, at_opening=True)


def end_window(ended_at: datetime, poll_interval_seconds: float) -> Window:
    """SR-009: a scheduler learns how an execution it dispatched ended, by itself, no
    earlier than the end (`ended_at`, when the target first answers it; learning it then
    is on time) and within one poll interval after it."""
    return Window(LEARN_END, ended_at, ended_at + poll(poll_interval_seconds),
                  at_opening=True)
