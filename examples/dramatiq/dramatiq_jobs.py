"""Dramatiq itself (Worker threads, RedisBroker on Redis db 7): lifecycle, retry, self-running
(`dramatiq_self_running`). Retries: `Retries` per message, the actor `throws` what is not
retried; its jitter, always on, draws from Python's `random`, seeded with the job and retry
count before each draw (reproducible runs). No AgeLimit, TimeLimit: see dramatiq_limits.py."""

import random
import uuid
from typing import Any

import dramatiq
from dramatiq.brokers.redis import RedisBroker
from dramatiq.common import compute_backoff
from dramatiq.middleware import Middleware, Retries
from dramatiq.middleware.retries import DEFAULT_MAX_BACKOFF

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.backends.self_running import Clockwork
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, ThreadWaits, WallClock, translate
from jobconform.reference.backoff import RetryPolicy

NotRetried = type("NotRetried", (Exception,), {})  # the actor's throws: non-retryable errors


class SeededDraws(Middleware):  # after Retries in the list, so it hears a failure first
    def after_process_message(self, broker: object, message: Any, **ended: Any) -> None:
        random.seed(f"{message.args[0]}:{message.options.get('retries', 0)}")


class DramatiqRuntime(Middleware):  # its broker's first: a broker's after-hooks run backwards
    def __init__(self, settings: RuntimeSettings, clock: Clock,
                 clockwork: Clockwork | None = None) -> None:  # None: commanded
        self._wall, every = WallClock(clock).start(), clockwork and clockwork.poll_interval_seconds
        self._waits = ThreadWaits(clock, in_turn=bool(every)).start()  # self-running: no races
        self._jobs = jobs = translate.records_on_wall(settings)
        self._gate = DispatchGate(on_arrival=bool(every))  # self-running: its polls dispatch
        self._scripts = dict[str, tuple[int, TaskScript, RetryPolicy]]()
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health, self.settle = jobs.cleanup, jobs.health, self._waits.settle
        dramatiq.get_logger("dramatiq").setLevel("CRITICAL")  # it logs a traceback per failure
        self.broker = RedisBroker(url="redis://127.0.0.1:6379/7", maintenance_chance=0,  # random
                                  namespace=f"jobconform-{uuid.uuid4().hex}",
                                  middleware=[self, Retries(), SeededDraws()])  # self last
        self._actor = dramatiq.actor(self._body, broker=self.broker, actor_name="body",
                                     queue_name="jobs", throws=(NotRetried,))
        self._worker = dramatiq.Worker(self.broker, worker_threads=settings.max_concurrent,
                                       worker_timeout=int(1000 * (every or 1)))  # idle polls' cap
        with self._waits.adopting():
            self._worker.start()

    def _body(self, job_id: str) -> None:
        rank, script, policy = self._scripts[job_id]
        if not self._gate.wait(job_id, rank):
            return  # cancelled before it began
        self._jobs.update(job_id, "running")
        if not translate.may_run(self._gate, job_id, script):
            self._jobs.update(job_id, "cancelled")
            return
        try:
            result = script.run()
        except Exception as error:
            if (name := type(error).__name__) in policy.non_retryable:  # same name and text
                raise type(name, (NotRetried,), {})(*error.args) from error
            raise
        self._jobs.update(job_id, "succeeded", result=result)

    def after_process_message(self, broker: object, message: Any, **ended: Any) -> None:
        job_id, error = message.args[0], ended.get("exception")
        if error is not None and message.failed:  # Retries gave up, or the actor throws it
            self._jobs.update(job_id, "failed", error=translate.error_text(error))
        elif error is not None:  # Retries sent it to the delay queue: to the gate when due
            self._gate.finished(job_id)
            self._scripts[job_id][1].next_attempt()
            self._jobs.update(job_id, "queued", retry_count=message.options["retries"])

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        policy, rank = retry or RetryPolicy(), len(self._scripts)  # submission order
        job_id = self._jobs.add(f"job-{rank}", policy.max_retries).job_id
        self._scripts[job_id] = (rank, script, policy)
        self._actor.send_with_options(args=(job_id,), max_retries=policy.max_retries,
                                      min_backoff=policy.retry_delay_ms,
                                      max_backoff=policy.max_retry_delay_ms)
        return job_id

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int, *asked: Any) -> float:
        held = random.getstate()  # the others' draws go on as if this one had not been made
        random.seed(f"compute:{attempt}")  # Retries' own formula and jitter, a seeded draw
        delay = compute_backoff(attempt, factor=policy.retry_delay_ms,  # type: ignore[arg-type]
                                max_backoff=min(policy.max_retry_delay_ms, DEFAULT_MAX_BACKOFF))
        random.setstate(held)
        return float(delay[1])

    def dispatch(self) -> None:
        for _ in range(2):  # the delay queue's consumer moves a due retry, then it is fetched
            self._waits.wake_sleepers()
            self._waits.settle()
        self._gate.open()
        self._waits.settle()

    def cancel(self, job_id: str) -> bool:
        return translate.cancel_in(self._jobs, self._gate, job_id) is not None

    def shutdown(self) -> None:
        translate.shut_down_in(self._jobs, self._gate)  # bodies let go end as settle sees

    def close(self) -> None:
        self._gate.close()
        self._waits.closing()
        self._worker.stop(timeout=10_000)
        self.broker.client.delete(*self.broker.client.keys(f"{self.broker.namespace}*") or ["-"])
        self.broker.client.connection_pool.disconnect()
        self._waits.stop()
        self._wall.stop()


class DramatiqBackend:  # jobconform run --backend dramatiq_jobs:DramatiqBackend
    name, profile, report_notes = "dramatiq", "canonical", (DERIVED_HEALTH_NOTE,)
    capabilities = frozenset({"lifecycle", "retry", "retry-without-jitter"})  # no mode, no draw

    def open(self, settings: RuntimeSettings, clock: Clock) -> DramatiqRuntime:
        return DramatiqRuntime(settings, clock)
