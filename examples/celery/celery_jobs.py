"""Celery itself: its embedded worker in process (threads pool), RabbitMQ and Redis on loopback.

`start_worker` runs Celery's worker with `max_concurrent` pool threads on a queue of its own
on RabbitMQ; results go to Redis. The task is the job's body: it waits at the `DispatchGate`,
then for the harness's decision, and writes the spec's records into the kit's `JobRecords`.
Time: `WallClock` makes the ETA a retry stamps virtual; the worker's timer thread holds it
until then, sleeping under `ThreadWaits` (the synchronous loop: the event loop's poll is real).
kombu's timer reads `time.monotonic` through default arguments and timer2 calls `sleep` bound
by name, both fixed at import, so they are imported here with the bridges on: what they bind
is the bridges' own (real time when no bridge is on). Retry: `autoretry_for`'s options are
fixed per task when the worker starts, the kit's policy is per job, so the body makes the call
autoretry makes (`Task.retry` with `retry_backoff`'s countdown, the job's `max_retries`).
Settle: the worker waits on sockets and a C queue, which no bridge sees; settle waits for what
the adapter knows is in flight (a message due while a thread is free, a body not yet waiting).
"""

import itertools
import logging
import sys
import threading
import uuid
from contextlib import ExitStack
from datetime import datetime, timedelta
from types import SimpleNamespace
from unittest import mock

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, ThreadWaits, WallClock, translate
from jobconform.conformance.clock import VirtualClock
from jobconform.reference.backoff import Jitter, RetryPolicy

if "kombu.asynchronous.timer" in sys.modules:
    raise ImportError("celery_jobs must import kombu's timer itself, on the bridges (docstring)")
_boot = VirtualClock()
with WallClock(_boot), ThreadWaits(_boot):
    import celery.utils.time
    import celery.utils.timer2
    from celery import Celery, Task, signals
    from celery.contrib.testing.worker import start_worker
    from kombu import Exchange, Queue

signals.setup_logging.connect(lambda **_: None, weak=False)  # Celery leaves logging alone
logging.getLogger("celery").setLevel(logging.CRITICAL)  # a traceback per failed body
BROKER, RESULTS = "amqp://guest:guest@127.0.0.1:5672//", "redis://127.0.0.1:6379/5"
SETTLE_LIMIT_SECONDS = 10.0


class CeleryRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall, self._waits = WallClock(clock).start(), ThreadWaits(clock).start()
        self._jobs = jobs = translate.records_on_wall(settings)
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health = jobs.cleanup, jobs.health
        self._gate, self._ranks, self._threads = DispatchGate(), itertools.count(), settings.max_concurrent
        self._work: dict[str, tuple[int, TaskScript, RetryPolicy]] = {}
        self._moves = threading.Condition()  # guards the two below; bodies notify it
        self._due: dict[str, datetime | None] = {}  # a message sent, its body not begun: ETA
        self._inside: dict[str, str] = {}  # job id -> where its body is: gate, deciding, leaving
        self.name = name = f"jobconform-celery-{uuid.uuid4().hex[:12]}"
        self.app = Celery(name, broker=BROKER, backend=RESULTS, set_as_current=False)
        self.app.conf.update(  # the queue, its exchange, the control exchange: ours alone
            task_queues=[Queue(name, Exchange(name, auto_delete=True), name, auto_delete=True)],
            task_default_queue=name, control_exchange=name, broker_heartbeat=0,
            worker_prefetch_multiplier=0, broker_connection_retry_on_startup=True)
        self._task = self.app.task(name="body", shared=False, typing=False)(self._body)
        self._stack = ExitStack()
        with self._waits.adopting():  # its consumer, timer and pool threads
            self.worker = self._stack.enter_context(start_worker(
                self.app, concurrency=settings.max_concurrent, pool="threads",
                perform_ping_check=False, use_eventloop=False, hostname=f"{name}@jobconform"))

    def _at(self, body: tuple[str, int], where: str | None) -> None:
        """Where a body (job id, attempt) is: gate, deciding, leaving; None once it ended."""
        with self._moves:
            if where == "gate":
                self._due.pop(body[0], None)
            self._inside.pop(body) if where is None else self._inside.update({body: where})
            self._moves.notify_all()

    def _expect(self, job_id: str, due: datetime | None) -> None:
        """A message is sent for the job, its body to begin from `due` (None: no more)."""
        with self._moves:
            self._due.pop(job_id, None) if due is None else self._due.update({job_id: due})
            self._moves.notify_all()

    def _body(self, job_id: str) -> object:
        task = self._task
        (rank, script, policy), body = self._work[job_id], (job_id, task.request.retries)
        self._at(body, "gate")
        try:
            if not self._gate.wait(job_id, rank):
                return None
            self._jobs.update(job_id, "running")
            self._at(body, "deciding")
            run = translate.may_run(self._gate, job_id, script)
            self._at(body, "leaving")
            if not run:
                self._jobs.update(job_id, "cancelled")
                return None
            try:
                result = script.run()
            except Exception as error:
                if type(error).__name__ not in policy.non_retryable:
                    self._retry(task, job_id, script, policy, error)
                self._jobs.update(job_id, "failed", error=translate.error_text(error))
                raise
            self._jobs.update(job_id, "succeeded", result=result)
            return result
        finally:
            self._gate.finished(job_id)
            self._at(body, None)

    def _retry(self, task: Task, job_id: str, script: TaskScript, policy: RetryPolicy,
               error: Exception) -> None:
        """Celery's retry with autoretry's countdown: raises its `Retry` if Celery retries."""
        countdown = self.compute_delay_ms(policy, task.request.retries) / 1000
        self._expect(job_id, translate.wall_now() + timedelta(seconds=countdown))
        try:  # Celery decides: with no retry left it re-raises the error
            retry = task.retry(exc=error, countdown=countdown, max_retries=policy.max_retries,
                               throw=False)
        except Exception:
            self._expect(job_id, None)
            return
        script.next_attempt()
        self._jobs.update(job_id, "queued", retry_count=task.request.retries + 1)
        raise retry from None

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int, jitter: Jitter = Jitter.NONE,
                         draw: float = 0.0, *no_place_in_celery: float | None) -> float:
        """autoretry's countdown: `retry_backoff` is the base, `retry_backoff_max` the cap,
        `retry_jitter` full jitter (its only one), drawing the kit's number."""
        backoff = translate.seconds(policy.retry_delay_ms)
        if not backoff:  # backoff off: autoretry leaves Celery's default_retry_delay
            return float(self._task.default_retry_delay) * 1000.0
        drawn = SimpleNamespace(randrange=lambda stop: int(draw * stop))
        with mock.patch.object(celery.utils.time, "random", drawn):
            return 1000.0 * celery.utils.time.get_exponential_backoff_interval(
                int(max(1.0, backoff)), attempt, int(translate.seconds(policy.max_retry_delay_ms)),
                full_jitter=jitter is Jitter.FULL)

    def _quiet(self) -> bool:
        for (job_id, _), where in self._inside.items():
            script, released = self._work[job_id][1], self._gate.released(job_id)
            if where == "leaving" or (where == "gate" and (released or self._gate.started(job_id))):
                return False
            if where == "deciding" and (script.decided() or (released and script.honours_cancellation)):
                return False
        now = translate.wall_now()
        return len(self._inside) >= self._threads or all(due > now for due in self._due.values())

    def settle(self) -> None:
        with self._moves:
            if not self._moves.wait_for(self._quiet, timeout=SETTLE_LIMIT_SECONDS):
                raise TimeoutError(f"Celery's worker did not settle in {SETTLE_LIMIT_SECONDS} s"
                                   f" of real time: bodies {self._inside}, messages {self._due}")

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        policy, rank = retry or RetryPolicy(), next(self._ranks)
        job_id = self._jobs.add(f"{self.name}-{rank}", policy.max_retries).job_id
        self._work[job_id] = (rank, script, policy)
        self._expect(job_id, translate.wall_now())
        self._task.apply_async((job_id,), task_id=job_id)
        return job_id

    def dispatch(self) -> None:
        self.settle()  # bodies of messages due reach the gate first
        self._gate.open()
        self.settle()

    def cancel(self, job_id: str) -> bool:
        was = translate.cancel_in(self._jobs, self._gate, job_id)
        if was == "queued":  # its body, if Celery still runs it, leaves at the gate
            self._expect(job_id, None)
            self.app.control.revoke(job_id)
        return was is not None

    def shutdown(self) -> None:
        active = translate.shut_down_in(self._jobs, self._gate)
        for job_id in active:
            self._expect(job_id, None)
        if active:
            self.app.control.revoke(active)
        self.settle()

    def close(self) -> None:
        self._gate.close()
        self._waits.closing()  # the timer thread's sleeps end: the worker can stop
        self.app.control.shutdown(destination=[self.worker.hostname])  # its loop ends now
        self._stack.close()
        self.app.close()
        self._waits.stop()
        self._wall.stop()


class CeleryBackend:  # jobconform run --backend celery_jobs:CeleryBackend
    name, profile, capabilities = "celery", "canonical", frozenset({"lifecycle", "retry"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> CeleryRuntime:
        return CeleryRuntime(settings, clock)
