"""Celery's embedded worker (threads pool) in process, RabbitMQ and Redis on loopback. The task
is the job's body: it waits at the gate, then for the decision, and keeps the spec's records. A
retry's ETA waits in the timer thread, asleep under ThreadWaits; sockets: Deliveries settles it,
each message received first. autoretry is per task, the policy per job: the body calls retry."""

import logging
from contextlib import ExitStack
from typing import TYPE_CHECKING, ClassVar
from unittest import mock
from uuid import uuid4

from jobconform import bridges
from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import ThreadWaits, WallClock, translate
from jobconform.reference.backoff import Jitter, RetryPolicy

with bridges.importing_on_bridges("kombu.asynchronous.timer", "celery.utils.timer2"):
    import celery.utils.time
    import celery.utils.timer2
    from celery import Celery, signals
    from celery.bootsteps import RUN
    from celery.contrib.testing.worker import start_worker
    from celery.exceptions import Retry, WorkerShutdown
    from kombu import Exchange, Queue
if TYPE_CHECKING:
    from celery.worker.request import Request
signals.setup_logging.connect(lambda **_: None, weak=False)  # Celery leaves logging alone
logging.getLogger("celery").setLevel(logging.CRITICAL)  # a traceback per failed body


SHUTDOWN_SECONDS = 2.0  # of real time, for the worker to act on the broadcast (see close)


def stop() -> None:  # a message for the worker's consumer: it never runs (see close)
    pass


class CeleryRuntime:
    conf: ClassVar[dict[str, object]] = {"broker_url": "amqp://127.0.0.1:5672//"}  # or a subclass's
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall, self._waits = WallClock(clock).start(), ThreadWaits(clock).start()
        self._jobs = jobs = translate.records_on_wall(settings)
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health = jobs.cleanup, jobs.health
        self._gate, self._work = bridges.DispatchGate(), {}  # job id -> rank, script, policy
        self._deliveries = bridges.Deliveries(self._gate, settings.max_concurrent, receipts=True)
        self.settle, self.dispatch = self._deliveries.settle, self._deliveries.dispatch
        self.app = Celery(name := f"jobconform-{uuid4().hex[:8]}", backend="redis://127.0.0.1:6379/5")
        self.app.conf.update(task_queues=[Queue(  # its own, gone with it (or unused for 60 s)
            name, Exchange(name, auto_delete=True), name, auto_delete=True, expires=60)],
            task_default_queue=name, broker_heartbeat=0, worker_prefetch_multiplier=0,
            broker_connection_retry_on_startup=True, result_expires=600, **self.conf)
        self._task = self.app.task(name="body", shared=False, typing=False)(self._body)
        self._stop = self.app.task(name="stop", shared=False)(stop)
        signals.task_received.connect(self._received, weak=False, dispatch_uid=name)
        with self._waits.adopting(), ExitStack() as worker:  # its consumer, timer, pool threads
            self._controller = worker.enter_context(start_worker(  # join: a real-time limit
                self.app, concurrency=settings.max_concurrent, pool="threads", shutdown_timeout=60,
                perform_ping_check=False, use_eventloop=False, hostname=f"{name}@jc"))
            self.hostname, self._worker = self._controller.hostname, worker.pop_all()

    def _received(self, request: "Request", **_: object) -> None:  # in the worker's consumer
        if request.task_name == self._stop.name:  # as remote control's shutdown, from a queue
            raise WorkerShutdown(0)
        self._deliveries.received(request.id)  # off the wire

    def _body(self, job_id: str) -> object:
        rank, script, _ = self._work[job_id]
        with self._deliveries.body(job_id):
            if not self._gate.wait(job_id, rank):
                return None
            self._jobs.update(job_id, "running")
            if not (translate.may_run(self._gate, job_id, script) and script.decided()):
                return self._jobs.update(job_id, "cancelled") and None  # or let go: closed
            return self._end(job_id)

    def _end(self, job_id: str) -> object:  # the decided body's: its result, a retry or its error
        (_, script, policy), retries = self._work[job_id], self._task.request.retries
        try:
            result = script.run()
        except Exception as error:
            if type(error).__name__ not in policy.non_retryable:  # autoretry's call:
                self._deliveries.sent(job_id, delay := self.compute_delay_ms(policy, retries) / 1e3)
                try:
                    self._task.retry(exc=error, countdown=delay, max_retries=policy.max_retries)
                except Retry:
                    script.next_attempt()
                    self._jobs.update(job_id, "queued", retry_count=retries + 1)
                    raise
                except Exception:  # Celery re-raises the error once no retry is left
                    self._deliveries.dropped(job_id)
            self._jobs.update(job_id, "failed", error=translate.error_text(error))
            raise
        return self._jobs.update(job_id, "succeeded", result=result) and result

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int, jitter: Jitter = Jitter.NONE,
                         draw: float = 0.0, *no_place_in_celery: float | None) -> float:
        """autoretry's: retry_backoff (0: off), retry_backoff_max, retry_jitter (drawn)."""
        backoff, drawn = translate.seconds(policy.retry_delay_ms), lambda stop: int(draw * stop)
        with mock.patch.object(celery.utils.time, "random", mock.Mock(randrange=drawn)):
            return 1000.0 * (celery.utils.time.get_exponential_backoff_interval(
                int(max(1.0, backoff)), attempt, int(translate.seconds(policy.max_retry_delay_ms)),
                full_jitter=jitter is Jitter.FULL) if backoff else self._task.default_retry_delay)

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        policy, rank = retry or RetryPolicy(), len(self._work)
        job_id = self._jobs.add(f"{self.app.main}-{rank}", policy.max_retries).job_id
        self._work[job_id] = (rank, script, policy)
        self._deliveries.sent(job_id)
        self._task.apply_async((job_id,), task_id=job_id)
        return job_id

    def cancel(self, job_id: str) -> bool:  # Celery's task then leaves at the gate, at once
        return translate.cancel_in(self._jobs, self._gate, job_id) is not None

    def shutdown(self) -> None:
        translate.shut_down_in(self._jobs, self._gate)

    def close(self) -> None:
        self._gate.close()
        self._waits.closing()  # the timer thread's sleeps end, so the worker can stop
        # Its loop polls the broker until a message comes (kombu's 2 s reads the frozen
        # clock) and sees start_worker's stop flag only then. Remote control's shutdown
        # stops it as it waits for its broker's reply, which gives the bodies' late acks
        # time; but on Redis's pub/sub that broadcast is lost when the worker has not
        # subscribed yet: then a message on its own queue, which it cannot miss, stops it.
        self.app.control.shutdown(destination=[self.hostname])
        try:
            bridges.until(lambda: self._controller.blueprint.state != RUN,
                          "the worker's stop on remote control's shutdown", SHUTDOWN_SECONDS)
        except bridges.DeliveriesTimeout:
            self._stop.apply_async()
        try:
            self._worker.close()
        finally:  # the bridges stop even when the join gave up
            signals.task_received.disconnect(dispatch_uid=self.app.main)
            self.app.close()
            self._waits.stop()
            self._wall.stop()


class CeleryBackend:  # jobconform run --backend celery_jobs:CeleryBackend
    name, profile, capabilities = "celery", "canonical", frozenset({"lifecycle", "retry"})
    report_notes = (bridges.DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> CeleryRuntime:
        return CeleryRuntime(settings, clock)
