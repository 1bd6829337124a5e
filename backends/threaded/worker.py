"""The threaded worker runtime: a poll loop that claims jobs into a thread pool (seed 000).

A worker has an id (`worker-<8 hex>`), a `ThreadPoolExecutor` of `max_workers` threads and a
poll thread. Each poll claims up to `max_workers - active` queued jobs from the store and
submits each to the pool. The pool thread running a job owns it: it blocks in the job's
body (the harness's `TaskScript`) and then writes the job's terminal state itself, with a
write conditioned on the job still running under the fencing token of this worker's claim,
so a late outcome, or one from a delivery that was rescued and claimed again, is absorbed
(LC-003, RD-006; the rules are `jobconform.backends.ownership`). A
cancel of a running job only records the request and signals the job's cancellation token;
the owner moves the job (LC-013). Under `cancel_interrupts` (LC-026) the cancel, holding the
lock, writes the job cancelled under the claim's token itself and lets go of the pool thread,
so the job is cancelled when cancel returns and the body's later outcome is never recorded.

Between polls the poll thread sleeps on the clock. With `poll_interval=None` it polls only at
dispatch points: that is how the conformance backend runs it, because the oracle starts jobs
only at dispatch points (LC-010); with an interval it also polls each time the clock passes
the next poll boundary.

A periodic poll also fails the jobs silent past `job_timeout` (seed 000's
`detect_stuck_jobs()` on the worker's own timer, SR-002), before it claims.

The poll thread also runs the opt-in reaper (RP-001..RP-007) and, by default, lease passes
(`WorkerConfig.recovery_interval`): it sleeps until the earliest of the next poll, sweep and
lease pass, and runs each one the clock has reached. A lease pass re-queues the jobs of a
worker that died (no heartbeat for `lease_seconds`), so they come back without an operator.

`settle()` waits on conditions, never on the wall clock, until every thread of the worker is
idle or blocked on the clock or on an undecided body. A real-time safety limit turns a hang
into a `SettleTimeout` that says what each job is waiting for and where each thread is.

Every change of the worker's own state (owned jobs, counters, poll requests) happens under
one condition, `_state`; store calls that must be atomic with that state (a claim and the
token it creates, a cancel request and the owner's terminal write) are made under it too.
"""

from __future__ import annotations

import copy
import signal
import sys
import threading
import traceback
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from types import FrameType, TracebackType
from typing import Any

from jobconform.backends import ownership
from jobconform.backends.ownership import RecoverySchedule
from jobconform.backends.protocol import (
    WORKER_RUNNING,
    WORKER_STOPPED,
    WORKER_STOPPING,
    Clock,
    RuntimeShutDown,
    TaskScript,
)
from jobconform.backends.reaper import OperatorAlerts
from jobconform.backends.runtime_health import HealthSnapshot
from jobconform.backends.store import (
    CANCELLED,
    FAILED,
    QUEUED,
    RUNNING,
    SUCCEEDED,
    TERMINAL,
    JobStore,
    StoredJob,
)
from jobconform.backends.store_runtime import StoreRuntime
from jobconform.backends.threaded.clock import SystemClock, WaitableClock
from jobconform.backends.threaded.config import ENABLED_ENV, WorkerConfig
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.lifecycle import JsonValue

# A real-time bound on settle and dispatch. It never lets time pass for the worker (the
# clock is virtual); it only turns a hung worker into an error, well before the harness's
# own 60 s guard ends the process.
SETTLE_LIMIT_SECONDS = 10.0
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SettleTimeout(RuntimeError):
    """The worker's threads did not become quiet within the real-time safety limit."""


class WorkerDisabled(RuntimeError):
    """The configuration turns asynchronous execution off, so the worker does not start."""


class WorkerCrashed(RuntimeError):
    """A store call failed inside one of the worker's threads; the message holds the
    traceback, which would otherwise be lost in the thread."""


class CancellationToken:
    """One running job's cancellation signal, shared by cancellers and the owning thread.

    `request` is a caller's cancel: a body that honours cancellation stops at once, one that
    ignores it runs on until it ends. `interrupt` is the worker stopping: it releases the
    body whatever it does (LC-022). Either way the job ends cancelled, and the owning pool
    thread writes that; only an interrupting cancel (LC-026) writes it itself, and then
    abandons the token. Flags are set under the worker's lock, then the body is woken.
    """

    def __init__(self, script: TaskScript) -> None:
        self._script = script
        self.requested = False
        self.interrupted = False
        self.abandoned = False  # the worker let go of the job: the thread writes nothing
        # When the job counts as cancelled, if not when its thread records it: a drain's
        # deadline (LC-028).
        self.cancelled_at: datetime | None = None

    def request(self) -> None:
        self.requested = True
        self._script.wake()

    def interrupt(self, at: datetime | None = None) -> None:
        """Interrupt the body's invocation at its wait, whatever it does (LC-022, LC-026,
        LC-028); the job ends cancelled, at `at` if given."""
        self.interrupted = True
        self.cancelled_at = at
        self._script.interrupt()

    def abandon(self) -> None:
        """The job was failed as stuck, re-delivered, parked or cancelled by an interrupting
        cancel: release the body, and let the thread end without recording anything (the
        job is no longer its own)."""
        self.abandoned = True
        self._script.wake()

    @property
    def releases_body(self) -> bool:
        """The body must stop waiting for its decision."""
        return (self.interrupted or self.abandoned
                or (self.requested and self._script.honours_cancellation))

    @property
    def is_cancelled(self) -> bool:
        """Whatever the body returned or raised, the job ends cancelled (LC-014)."""
        return self.requested or self.interrupted


@dataclass
class _OwnedJob:
    """A job this worker claimed, from the claim until its pool thread lets go of it."""

    script: TaskScript
    token: CancellationToken
    fencing_token: int  # the claim's: every write for this delivery carries it
    arguments: JsonValue  # the job's, handed to its body (LC-036)
    options: JsonValue  # the job's execution options, handed to its body (LC-035)
    reached_body: bool = False  # its pool thread has started waiting in the body
    # The store refused a heartbeat of this delivery: the job was re-delivered or ended
    # meanwhile, and a token once superseded never owns it again, so the poll stops beating.
    lost: bool = False

    def blocked_on_body(self) -> bool:
        return (self.reached_body and not self.script.decided()
                and not self.token.releases_body)

    def describe(self) -> str:
        if not self.reached_body:
            return "claimed, but its pool thread has not reached the body"
        return ("its body can end (decided or released) but its pool thread has not"
                " recorded the outcome")


# The worker's health report: the step runtime's, read under the worker's lock.
WorkerHealth = HealthSnapshot


class ThreadedRuntime(StoreRuntime):
    """A worker over a job store; it starts its threads at once.

    Args:
        store: where the jobs live; other workers may share it.
        clock: the time source; a periodic poll needs one it can sleep on (`WaitableClock`,
            such as the kit's `VirtualClock`). Default: `SystemClock`.
        config: default `WorkerConfig.from_environment()`.
        max_tasks: the task cap (LC-009) checked at each submission.
        settle_limit: real-time seconds that `settle` and `dispatch` may take.
        install_signal_handlers: shut down (as `shutdown_mode` says) on SIGINT and
            SIGTERM; the host's previous handlers come back as the worker takes the
            signal, or when it stops (RS-007, RS-008).
        reaper_ttl_seconds, reaper_sweep_interval_ms: the reaper's defaults when
            `start_reaper` is called without them (RP-002).
        max_redelivery: lease expiries a job may have before it is parked (RD-002).
        bodies: where the body of a claimed job submitted elsewhere comes from, called
            with the claimed record (one new body per delivery): for a worker process
            serving jobs submitted elsewhere, or one restarted over the store (RS-002). A
            job submitted here runs the body submitted with it. None fails a job submitted
            elsewhere, since its body is not here.

    Raises:
        WorkerDisabled: `config.enabled` is false.
        TypeError: a periodic poll with a clock that cannot be slept on.
        RuntimeError: signal handlers asked for outside the main thread.

    Close it (or use it as a context manager): its pool threads may be blocked in bodies
    that only a stop releases.
    """

    def __init__(self, store: JobStore, clock: Clock | None = None,
                 config: WorkerConfig | None = None, *, max_tasks: int | None = None,
                 settle_limit: float = SETTLE_LIMIT_SECONDS,
                 install_signal_handlers: bool = False,
                 reaper_ttl_seconds: float = 3600.0,
                 reaper_sweep_interval_ms: float = 300_000.0,
                 max_redelivery: int = 3,
                 bodies: Callable[[StoredJob], TaskScript | None] | None = None,
                 cancel_interrupts: bool = False, shutdown_mode: str = "cancel",
                 drain_timeout_seconds: float = 30.0,
                 modules: frozenset[str] = frozenset(), page_size: int = 50,
                 queued_execution: bool = True) -> None:
        self._config = config if config is not None else WorkerConfig.from_environment()
        if not self._config.enabled:
            raise WorkerDisabled(f"asynchronous execution is disabled; set {ENABLED_ENV}=1"
                                 " or pass WorkerConfig(enabled=True) to start a worker")
        self._clock = clock if clock is not None else SystemClock()
        if self._config.poll_interval is not None and not isinstance(self._clock,
                                                                       WaitableClock):
            raise TypeError(f"the poll loop sleeps on its clock between polls, and"
                            f" {type(self._clock).__name__} has no wait_until; pass a"
                            " VirtualClock or SystemClock, or poll_interval=None")
        self._store = store
        self._max_tasks = max_tasks
        self._settle_limit = settle_limit
        self.worker_id = f"worker-{uuid.uuid4().hex[:8]}"

        self._state = threading.Condition()
        self._scripts: dict[str, TaskScript] = {}  # submitted here, not yet claimed
        self._owned: dict[str, _OwnedJob] = {}
        self._stopping = False  # no more submissions or polls
        self._cancel_interrupts = cancel_interrupts
        self._shutdown_mode = shutdown_mode
        self._drain_timeout = timedelta(seconds=drain_timeout_seconds)
        self._modules = modules
        self._page_size = page_size  # the executions query's (LC-032)
        # Off: each body runs inside submit, in the caller's thread (LC-037).
        self._queued_execution = queued_execution
        self._draining = False  # a drain-mode shutdown was called: no more submissions
        self._drain_deadline: datetime | None = None  # when the drain cancels the rest
        self._stopped = False  # ...and every running job has ended, the threads are gone
        self._polls_requested = 0
        self._polls_done = 0
        self._next_poll_at: datetime | None = None
        self._crashes: list[str] = []
        self._reaper = self.reaper_type(store, reaper_ttl_seconds, reaper_sweep_interval_ms)
        self._max_redelivery = max_redelivery
        self._bodies = bodies
        self._alerts = OperatorAlerts()
        self._superseded: dict[str, int] = {}
        self._recovery: RecoverySchedule | None = None
        if self._config.recovers:
            assert self._config.recovery_interval is not None
            self._recovery = RecoverySchedule.starting(
                self._clock.now(), self._config.lease_seconds, self._config.recovery_interval)

        self._stop_lock = threading.Lock()  # one stop at a time; the others wait for it
        self._previous_handlers: dict[int, Any] = {}
        self._signal_stop: threading.Thread | None = None
        self._pool = ThreadPoolExecutor(max_workers=self._config.max_workers,
                                        thread_name_prefix=f"{self.worker_id}-job")
        if install_signal_handlers:
            self._install_signal_handlers()
        if self._config.poll_interval is not None:
            self._next_poll_at = self._clock.now()  # the first poll is due at once
        self._poll_thread = threading.Thread(target=self._poll_loop,
                                             name=f"{self.worker_id}-poll")
        self._poll_thread.start()

    @property
    def config(self) -> WorkerConfig:
        return self._config

    def __enter__(self) -> ThreadedRuntime:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    # -- submission and dispatch -------------------------------------------------------

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None, arguments: JsonValue = None,
               owner: str | None = None, trigger: str | None = None,
               options: JsonValue = None) -> str:
        with self._state:
            if self._stopping or self._draining:
                raise RuntimeShutDown(f"worker {self.worker_id} is stopped; open a new"
                                      " runtime to submit")
            job = self._new_record(self._modules, retry, module_id, arguments, owner, trigger,
                                   options)
            # Under the lock: a body run in submit (LC-037) is over before a poll looks.
            return self._accept(job, script, self._queued_execution, self._max_tasks,
                                self.worker_id)

    def dispatch(self) -> None:
        """Wake the poll loop for one poll now, wait for it, then settle.

        The clock does not move: the poll claims at the current time.
        """
        with self._state:
            if not self._stopping:
                self._polls_requested += 1
                wanted = self._polls_requested
                self._state.notify_all()
                if not self._state.wait_for(
                        lambda: self._polls_done >= wanted or self._stopping,
                        timeout=self._settle_limit):
                    raise SettleTimeout(self._stall_report("the requested poll did not run"))
        self.settle()

    def settle(self) -> None:
        """Return once every thread of the worker is idle or blocked on the clock or on an
        undecided body, so every outcome that can be recorded now has been.

        Raises:
            SettleTimeout: not quiet within the real-time safety limit.
            WorkerCrashed: a store call failed in a worker thread since the last settle.
        """
        with self._state:
            if not self._state.wait_for(self._quiet, timeout=self._settle_limit):
                raise SettleTimeout(self._stall_report("the worker did not settle"))
            crashes, self._crashes = self._crashes, []
        if crashes:
            raise WorkerCrashed(f"worker {self.worker_id}: " + "\n".join(crashes))

    def _quiet(self) -> bool:
        return (not self._poll_due() and not self._sweep_due() and not self._recovery_due()
                and not self._drain_due()
                and all(owned.blocked_on_body() for owned in self._owned.values()))

    # -- the poll loop (poll thread) -----------------------------------------------------

    def _poll_loop(self) -> None:
        with self._state:
            while True:
                while not (self._stopping or self._poll_due() or self._sweep_due()
                           or self._recovery_due() or self._drain_due()):
                    self._sleep_until_next_wake()
                if self._stopping:
                    return
                if self._drain_due():
                    self._end_drain()
                if self._sweep_due():
                    self._sweep()
                if self._poll_due():
                    self._poll()
                # After the poll, whose heartbeats keep this worker's own leases.
                if self._recovery_due():
                    self._recover()

    def _poll_due(self) -> bool:
        if self._stopping:
            return False
        if self._polls_requested > self._polls_done:
            return True
        return self._next_poll_at is not None and self._clock.now() >= self._next_poll_at

    def _next_sweep_at(self) -> datetime | None:
        return self._reaper.next_sweep_at()

    def _sweep_due(self) -> bool:
        if self._stopping:
            return False
        next_sweep = self._next_sweep_at()
        return next_sweep is not None and self._clock.now() >= next_sweep

    def _recovery_due(self) -> bool:
        return (not self._stopping and self._recovery is not None
                and self._recovery.due(self._clock.now()))

    def _recover(self) -> None:
        """The worker's own lease pass: a dead worker's jobs go back to the queue (or, at
        the cap, are parked) without an operator scheduling anything."""
        assert self._recovery is not None
        now = self._clock.now()
        try:
            self.expire_leases(self._recovery.lease_seconds)
        except Exception:
            self._crashes.append(f"lease pass at {now.isoformat()}:\n"
                                 f"{traceback.format_exc()}")
        # The next pass is the first boundary after the pass's end: a pass slower than
        # the interval must not run back to back with the next one under the lock.
        self._recovery.passed(self._clock.now())
        self._state.notify_all()

    def _sleep_until_next_wake(self) -> None:
        """Sleep until the next poll, sweep or lease pass is due, or a dispatch, start or
        stop notifies."""
        next_pass = None if self._recovery is None else self._recovery.next_pass
        deadlines = [at for at in (self._next_poll_at, self._next_sweep_at(), next_pass,
                                   self._drain_deadline)
                     if at is not None]
        if not deadlines:
            self._state.wait()
            return
        assert isinstance(self._clock, WaitableClock)  # checked by __init__ and start_reaper
        self._clock.wait_until(self._state, min(deadlines))

    def _sweep(self) -> None:
        """Run the reaper's due sweeps; a store failure is the reaper's to log (RP-005)."""
        now = self._clock.now()
        try:
            self._reaper.run_due(now)
        except Exception:
            self._crashes.append(f"reaper sweep at {now.isoformat()}:\n"
                                 f"{traceback.format_exc()}")
        self._state.notify_all()

    def _poll(self) -> None:
        """Beat for the owned jobs, then claim queued jobs into the free pool threads."""
        now = self._clock.now()
        # Served and rescheduled first, so that a failing store cannot make the loop spin.
        self._polls_done = self._polls_requested
        if self._config.poll_interval is not None:
            self._next_poll_at = now + timedelta(seconds=self._config.poll_interval)
        try:
            self._beat(now)
            if self._config.poll_interval is not None:
                # Seed 000's detect_stuck_jobs() on the worker's own timer (SR-002): before
                # the claim, so a slot a stuck job held is free for this poll.
                self.detect_stuck(self._config.job_timeout)
            free = self._config.max_workers - len(self._owned)
            if free > 0:
                for job in self._claim(free, now):
                    self._record_heartbeat(job.last_heartbeat)  # the claim's (ST-001)
                    self._start(job)
        except Exception:
            self._crashes.append(f"poll at {now.isoformat()}:\n{traceback.format_exc()}")
        if self._config.poll_interval is not None:
            # Counted again from the poll's end: a poll slower than the interval (a slow
            # store) must still leave the pool threads a turn at the lock before the next,
            # or their outcomes wait behind an endless run of polls.
            self._next_poll_at = max(self._next_poll_at or now, self._clock.now()
                                     + timedelta(seconds=self._config.poll_interval))
        self._state.notify_all()

    def _beat(self, now: datetime) -> None:
        """Record that each job this worker runs is alive: the worker's heartbeat is the
        latest of its jobs' (ST-005)."""
        for job_id, owned in self._owned.items():
            if owned.lost:
                continue
            if self._config.poll_beats_jobs:
                beaten = ownership.heartbeat(self._store, job_id, owned.fencing_token, now)
                if beaten is None:
                    owned.lost = True
                else:
                    self._record_heartbeat(now)
            else:
                beaten = self._store.get(job_id)
            # A canceller in another process can only reach the owner through the store.
            if (beaten is not None and beaten.fencing_token == owned.fencing_token
                    and beaten.cancel_requested and not owned.token.requested):
                owned.token.request()

    def _claim(self, limit: int, now: datetime) -> list[StoredJob]:
        return self._store.claim(self.worker_id, limit, now)

    def _start(self, job: StoredJob) -> None:
        script = self._scripts.pop(job.job_id, None)
        if script is None and self._bodies is not None:
            script = self._bodies(job)
        if script is None:
            # Claimed from a store shared with other runtimes: its body lives there.
            if ownership.finish(self._store, job.job_id, job.fencing_token, FAILED,
                                self._clock.now(), error=f"LookupError: worker"
                                f" {self.worker_id} has no body for this job") is not None:
                self._count_outcome(FAILED)
            return
        owned = _OwnedJob(script, CancellationToken(script), job.fencing_token,
                          job.arguments, copy.deepcopy(job.options))
        self._owned[job.job_id] = owned
        self._pool.submit(self._run_owned, job.job_id, owned)

    # -- a job's pool thread -------------------------------------------------------------

    def _run_owned(self, job_id: str, owned: _OwnedJob) -> None:
        """The pool thread's whole time with one job: run its body, record how it ended."""
        try:
            self._run_body_and_record(job_id, owned)
        except Exception:
            with self._state:
                self._crashes.append(f"job {job_id}:\n{traceback.format_exc()}")
        finally:
            with self._state:
                # A retried job may already be claimed again, owned by a new entry.
                if self._owned.get(job_id) is owned:
                    del self._owned[job_id]
                self._state.notify_all()

    def _run_body_and_record(self, job_id: str, owned: _OwnedJob) -> None:
        with self._state:
            owned.reached_body = True
            self._state.notify_all()
        token = owned.token
        decided = owned.script.wait_for_decision(released=lambda: token.releases_body)
        result: JsonValue = None
        raised: Exception | None = None
        if decided:
            try:
                result = owned.script.run(owned.arguments, owned.options)
            except Exception as error:  # the body's own failure, never the worker's
                raised = error
        with self._state:
            if token.abandoned:
                # Failed as stuck, re-delivered, parked, or cancelled by an interrupting
                # cancel meanwhile.
                return
            if token.is_cancelled:
                self._end(job_id, CANCELLED, at=token.cancelled_at)
            elif raised is not None:
                if not self._retry(job_id, owned, raised):
                    self._end(job_id, FAILED, error=self._error_message(raised))
            else:
                self._end(job_id, SUCCEEDED, result=result)

    def _retry(self, job_id: str, owned: _OwnedJob, raised: Exception) -> bool:
        """Send a failed attempt back to the queue if its policy allows (RT-003..RT-005).

        The job goes back to queued with its next attempt's time; the poll that claims it
        at or after that time runs the same body again, waiting for a new decision. The
        caller holds `_state`.

        Returns:
            True if the policy took the failure (the job is queued again, or was moved by
            someone else meanwhile), False if the job must fail now.
        """
        job = self._store.get(job_id)
        delay = None if job is None else self._retry_delay_ms(job, raised)
        if job is None or delay is None:
            return False
        requeued = ownership.requeue_for_retry(
            self._store, job, owned.fencing_token,
            self._clock.now() + timedelta(milliseconds=delay))
        if requeued is not None:
            # Let go of the job now, under the lock: once its script forgets the outcome
            # the entry would look like a body waiting for a decision, so a settle could
            # return while it still holds a slot that the next poll must see free.
            if self._owned.get(job_id) is owned:
                del self._owned[job_id]
            owned.script.next_attempt()
            self._scripts[job_id] = owned.script  # the next claim finds its body here
        return True

    def _end(self, job_id: str, status: str, result: JsonValue = None,
             error: str | None = None, at: datetime | None = None) -> None:
        """The owner's terminal write, under its claim's token (caller holds `_state`).

        The job stops being this worker's before the write, in the same hold of the lock,
        so no poll beats for a job whose outcome is written: a poll that took the lock
        between this write and the pool thread's next turn at it used to (its `finally`
        in `_run_owned` let go of the job only then).
        """
        owned = self._owned.pop(job_id, None)
        if owned is None:
            return  # let go of meanwhile: nothing of this worker's to record
        ended = ownership.finish(self._store, job_id, owned.fencing_token, status,
                                 self._clock.now() if at is None else at, result, error)
        if ended is not None:  # else the job moved meanwhile: the late outcome is absorbed
            self._count_outcome(status)

    def _drain_due(self) -> bool:
        return (not self._stopping and self._drain_deadline is not None
                and self._clock.now() >= self._drain_deadline)

    def _end_drain(self) -> None:
        """The drain's deadline: interrupt every running body and cancel every other job
        still active in the store, at the deadline (LC-028). The poll thread holds
        `_state`."""
        deadline = self._drain_deadline
        assert deadline is not None
        self._drain_deadline = None
        for owned in self._owned.values():
            owned.token.interrupt(at=deadline)
        self._cancel_active(deadline)
        self._state.notify_all()

    def _cancel_active(self, at: datetime) -> None:
        """Cancel, at `at`, every job in the store still queued or running that no body of
        this worker's runs (those end through their tokens): the queued ones, submitted
        here or to a runtime before a restart, and running ones whose body is gone with
        another process (RS-003). Each is cancelled as read, so one claimed again
        meanwhile is left to its new delivery. The caller holds `_state`."""
        for job in self._store.list():
            if (job.status not in TERMINAL and job.job_id not in self._owned
                    and ownership.stop_as_seen(self._store, job, at) is not None):
                self._scripts.pop(job.job_id, None)
                self._count_outcome(CANCELLED)

    # -- heartbeats, stuck jobs and re-delivery (ST-001..ST-004, RD-001..RD-005) ---------------

    def heartbeat(self, job_id: str) -> None:
        """The job's body reports progress: a write of the delivery this worker owns, so
        only a running job's heartbeat counts, and never a superseded delivery's."""
        with self._state:
            owned = self._owned.get(job_id)
            if owned is not None:
                now = self._clock.now()
                if ownership.heartbeat(self._store, job_id, owned.fencing_token,
                                       now) is not None:
                    self._record_heartbeat(now)

    def detect_stuck(self, job_timeout_seconds: float) -> int:
        """Fail every running job silent for more than the timeout, this worker's or a
        dead worker's, and free the pool threads of this worker's; return how many."""
        with self._state:
            failed = 0
            for job in self._silent_jobs(job_timeout_seconds):
                if ownership.fail_stuck(self._store, job, self._clock.now()) is not None:
                    self._count_outcome(FAILED)
                    failed += 1
                    self._let_go(job.job_id)
            return failed

    def expire_leases(self, lease_seconds: float) -> dict[str, int]:
        """Re-queue, or at the cap park, every running job silent past the lease."""
        with self._state:
            requeued = parked = 0
            for job in self._silent_jobs(lease_seconds):
                if ownership.below_cap(job, self._max_redelivery):
                    requeued += self._redeliver(job)
                else:
                    parked += self._park(job)
            return {"requeued": requeued, "parked": parked}

    def stale_owner_write(self, job_id: str, write: str) -> bool:
        with self._state:
            return super().stale_owner_write(job_id, write)

    def _silent_jobs(self, seconds: float) -> list[StoredJob]:
        """Running jobs whose last heartbeat is strictly before now - seconds (ST-003)."""
        return ownership.silent_jobs(self._store,
                                     ownership.silence_cutoff(self._clock.now(), seconds))

    def _redeliver(self, job: StoredJob) -> int:
        """Back to the queue under the same id, one more re-delivery counted (RD-001); the
        next claim here runs the same body again, waiting for a new decision."""
        if not self._requeue_lapsed(job):
            return 0
        owned = self._let_go(job.job_id)
        if owned is not None:
            owned.script.next_attempt()
            self._scripts[job.job_id] = owned.script
        return 1

    def _park(self, job: StoredJob) -> int:
        """Alert the operator first (once per id), then fail the job as poison (RD-003)."""
        if not self._park_lapsed(job):
            return 0
        self._let_go(job.job_id)
        return 1

    def _let_go(self, job_id: str) -> _OwnedJob | None:
        """Stop owning a job that someone else ended or re-queued: its slot is free at once,
        and its pool thread ends without writing (caller holds `_state`)."""
        owned = self._owned.pop(job_id, None)
        if owned is not None:
            owned.token.abandon()
        return owned

    # -- the reaper (RP-001..RP-007) ---------------------------------------------------------

    def start_reaper(self, ttl_seconds: float | None = None,
                     sweep_interval_ms: float | None = None, *,
                     interval_seconds: float | None = None,
                     max_age_seconds: float | None = None) -> None:
        """As `StoreRuntime.start_reaper`; the poll thread runs the sweeps.

        Raises:
            ReaperAlreadyRunning: it runs already; its schedule stays (RP-006).
            TypeError: the worker's clock cannot be slept on until a sweep boundary.
        """
        if not isinstance(self._clock, WaitableClock):
            raise TypeError(f"the reaper sleeps on the worker's clock, and"
                            f" {type(self._clock).__name__} has no wait_until; pass a"
                            " VirtualClock or SystemClock")
        with self._state:
            super().start_reaper(ttl_seconds, sweep_interval_ms,
                                 interval_seconds=interval_seconds,
                                 max_age_seconds=max_age_seconds)
            self._state.notify_all()  # the poll thread sleeps until the first sweep now

    # -- cancellation and stopping ---------------------------------------------------------

    def cancel(self, job_id: str) -> bool:
        with self._state:
            job = self._store.get(job_id)
            if job is None or job.status in TERMINAL:
                return False
            if job.status == QUEUED:
                if self._cancel_queued(job_id):
                    self._scripts.pop(job_id, None)  # its body never runs now
                    return True
                # Claimed meanwhile by another worker sharing the store: it is running now.
                job = self._store.get(job_id)
                if job is None or job.status != RUNNING:
                    return False
            return self._request_cancellation(job)

    def _request_cancellation(self, job: StoredJob) -> bool:
        """Record the request and signal the owner's token; the owner moves the job. A job
        of this worker's under cancel_running interrupt is cancelled here instead."""
        if job.cancel_requested:
            return False
        if ownership.request_cancellation(self._store, job) is None:
            # The delivery read has ended or was taken back meanwhile: cancel what is there.
            return self.cancel(job.job_id)
        owned = self._owned.get(job.job_id)
        # Only the delivery asked hears it: not a stale one of this worker's, whose job a
        # lease pass took back and another worker has claimed since.
        if owned is not None and owned.fencing_token == job.fencing_token:
            if self._cancel_interrupts:
                self._interrupt_owned(job.job_id, owned)
            else:
                owned.token.request()
        return True

    def _interrupt_owned(self, job_id: str, owned: _OwnedJob) -> None:
        """Cancel a running job of this worker's by interrupting its body (LC-026): the job
        is cancelled, finished and counted before cancel returns, written under the claim's
        token as the owner's own write, and its slot is free at once. The pool thread is
        let go of: its body is released whatever it does, never runs, and the thread
        records nothing, so the body's later outcome is ignored. The caller holds
        `_state`."""
        if ownership.finish(self._store, job_id, owned.fencing_token, CANCELLED,
                            self._clock.now()) is not None:
            self._count_outcome(CANCELLED)
        del self._owned[job_id]
        owned.token.request()
        owned.token.interrupt()
        owned.token.abandon()

    def stop(self) -> None:
        """Graceful shutdown (seed 000): refuse submissions, end the poll loop, cancel every
        running job through its token, drain the pool, join the poll thread and restore
        the signal handlers. Queued jobs stay queued, for another worker on the store."""
        with self._stop_lock:
            with self._state:
                self._stopping = True
                self._state.notify_all()
            self._poll_thread.join()
            with self._state:
                for owned in self._owned.values():
                    owned.token.interrupt()
            self._finish_stopping()

    def halt(self) -> None:
        """The process ends without a graceful stop (killed, crashed, restarted over its
        store, RS-003): the poll thread ends and every body is let go, and nothing more is
        written, so a job running here stays running in the store for a lease pass to
        bring back. `close` after it only releases the store."""
        with self._stop_lock:
            with self._state:
                self._stopping = True
                for job_id in list(self._owned):
                    self._let_go(job_id)
                self._state.notify_all()
            self._poll_thread.join()
            self._finish_stopping()

    def _finish_stopping(self) -> None:
        """The end of a stop or a halt, its poll thread joined (the caller holds
        `_stop_lock`): wait for the pool threads, give the signal handlers back, and say
        the worker stopped."""
        self._pool.shutdown(wait=True)
        self._restore_signal_handlers()
        with self._state:
            self._stopped = True
            self._state.notify_all()

    def wait_stopped(self, timeout: float | None = None) -> bool:
        """Block until the worker has stopped, say on a signal (a worker process's main
        thread waits here); True if it has, False if `timeout` real seconds passed."""
        with self._state:
            return self._state.wait_for(lambda: self._stopped, timeout)

    def shutdown(self) -> None:
        """Stop, and cancel every job still active in the store (LC-022): the running
        bodies through their tokens, then what is left, queued or running, whoever
        submitted it: a runtime restarted over the store (RS-004) ends the jobs the one
        before it left too. In drain mode, refuse submissions now and let the poll thread
        cancel what is still active once the drain timeout has passed on the clock
        (LC-028). `stop` is the one that ends only this worker's part in a shared store."""
        if self._shutdown_mode == "drain":
            with self._state:
                if not (self._draining or self._stopping):
                    self._draining = True
                    self._drain_deadline = self._clock.now() + self._drain_timeout
                    self._state.notify_all()  # the poll thread sleeps until the deadline
            return
        self.stop()
        with self._state:
            self._cancel_active(self._clock.now())

    def close(self) -> None:
        """Stop, and release the store; no thread of the worker is left running."""
        self.stop()
        if self._signal_stop is not None:
            self._signal_stop.join()
        self._store.close()

    # -- signals ---------------------------------------------------------------------------

    def take_stop_signals(self) -> None:
        """Install the SIGINT and SIGTERM handlers now, as `install_signal_handlers` does
        at the start (from the main thread only)."""
        self._install_signal_handlers()

    def wait_signal_stop(self) -> None:
        """Return once the shutdown a stop signal started has returned (in drain mode at
        once: the drain goes on in the poll thread)."""
        if self._signal_stop is not None:
            self._signal_stop.join()

    def _install_signal_handlers(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            raise RuntimeError("signal handlers can only be installed from the main thread;"
                               " create the runtime there or leave install_signal_handlers"
                               " off")
        for signum in STOP_SIGNALS:
            self._previous_handlers[signum] = signal.getsignal(signum)
            signal.signal(signum, self._on_stop_signal)

    def _on_stop_signal(self, signum: int, frame: FrameType | None) -> None:
        # This runs in the main thread between two bytecodes, maybe while that thread
        # holds the worker's lock, which stopping needs: another thread does the stopping.
        # SIGINT and SIGTERM are the same stop, the shutdown the settings ask for (RS-007).
        self._restore_signal_handlers()
        self._signal_stop = threading.Thread(target=self.shutdown,
                                             name=f"{self.worker_id}-signal-stop")
        self._signal_stop.start()

    def _restore_signal_handlers(self) -> None:
        # Python changes handlers only from the main thread; off it, a later stop or close
        # from the main thread restores them.
        if threading.current_thread() is not threading.main_thread():
            return
        for signum, handler in self._previous_handlers.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        self._previous_handlers.clear()

    # -- health (LC-029; the reads are StoreRuntime's) -------------------------------------

    def health(self) -> WorkerHealth:
        with self._state:
            return self._health(self._store.counts(), self.worker_id, self._status())

    def _status(self) -> str:
        """LC-029: stopping while a stop joins its threads or a drain waits for its
        deadline; stopped once the threads are gone or the drain has cancelled the rest."""
        if self._stopped:
            return WORKER_STOPPED
        if self._stopping:
            return WORKER_STOPPING
        if self._draining:
            return WORKER_STOPPING if self._drain_deadline is not None else WORKER_STOPPED
        return WORKER_RUNNING

    # -- retention ---------------------------------------------------------------------------

    def cleanup_expired(self) -> int:
        """Remove finished jobs older than the configured TTL (seed 000 §Job Cleanup)."""
        return self.cleanup(self._config.job_ttl)

    # -- diagnostics -------------------------------------------------------------------------

    def _stall_report(self, what: str) -> str:
        lines = [f"worker {self.worker_id}: {what} within {self._settle_limit:g} s of real"
                 " time (a safety limit; virtual time does not pass while waiting)"]
        if self._poll_due():
            lines.append("  the poll loop has a poll due that it has not run")
        if self._sweep_due():
            lines.append("  the reaper has a sweep due that the poll thread has not run")
        if self._recovery_due():
            lines.append("  a lease pass is due that the poll thread has not run")
        lines += [f"  job {job_id}: {owned.describe()}"
                  for job_id, owned in self._owned.items() if not owned.blocked_on_body()]
        lines.append("where each thread is:")
        frames = sys._current_frames()
        for thread in threading.enumerate():
            frame = frames.get(thread.ident) if thread.ident is not None else None
            stack = "".join(traceback.format_stack(frame)) if frame else "    (no frame)\n"
            lines.append(f"--- thread {thread.name}:\n{stack.rstrip()}")
        return "\n".join(lines)
