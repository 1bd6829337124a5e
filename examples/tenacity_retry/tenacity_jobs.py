"""A job runner whose retries are tenacity's own loop, on the kit's bridges.

Each body runs in a thread under `tenacity.Retrying`, which decides on retries and sleeps
its delays (`time.sleep`: virtual, `ThreadWaits`). tenacity keeps no job records, so what
it reports (`before_sleep`, the loop's end) goes into the kit's `JobRecords`, stamped by
`datetime.now()` (virtual, `WallClock`); `DispatchGate` starts attempts at dispatch points.
"""

import itertools
import threading
from types import SimpleNamespace
from unittest import mock

import tenacity

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, ThreadWaits, WallClock, translate
from jobconform.reference.backoff import Jitter, RetryPolicy


class Cancelled(Exception):
    """The job was cancelled: tenacity must not retry it."""


def tenacity_wait(policy: RetryPolicy, jitter: Jitter) -> tenacity.wait.wait_base:
    """tenacity's closest wait: exponential with a cap, or full jitter (it has no others)."""
    seconds = {"multiplier": translate.seconds(policy.retry_delay_ms),
               "exp_base": policy.backoff_multiplier,
               "max": translate.seconds(policy.max_retry_delay_ms)}
    if jitter is Jitter.FULL:
        return tenacity.wait_random_exponential(**seconds)
    return tenacity.wait_exponential(**seconds)


class TenacityRuntime:
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall, self._waits = WallClock(clock).start(), ThreadWaits(clock).start()
        self._records = jobs = translate.records_on_wall(settings)
        self._gate, self._ranks = DispatchGate(slots=settings.max_concurrent), itertools.count()
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health, self.settle = jobs.cleanup, jobs.health, self._waits.settle

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        policy, rank = retry or RetryPolicy(), next(self._ranks)
        job_id = self._records.add(f"job-{rank}", policy.max_retries).job_id
        with self._waits.adopting():
            threading.Thread(target=self._work, args=(job_id, rank, script, policy)).start()
        return job_id

    def _work(self, job_id: str, rank: int, script: TaskScript, policy: RetryPolicy) -> None:
        def backing_off(state: tenacity.RetryCallState) -> None:
            self._gate.finished(job_id)
            script.next_attempt()
            self._records.update(job_id, "queued", retry_count=state.attempt_number)

        retrying = tenacity.Retrying(
            wait=tenacity_wait(policy, Jitter.NONE), before_sleep=backing_off, reraise=True,
            stop=tenacity.stop_after_attempt(policy.max_retries + 1),
            retry=tenacity.retry_if_exception(lambda error: not isinstance(error, Cancelled)
                                              and type(error).__name__ not in policy.non_retryable))
        try:
            for attempt in retrying:
                with attempt:
                    if not self._gate.wait(job_id, rank):
                        raise Cancelled
                    self._records.update(job_id, "running")
                    if not translate.may_run(self._gate, job_id, script):
                        raise Cancelled  # a requested cancellation wins over the outcome
                    result = script.run()
            self._records.update(job_id, "succeeded", result=result)
        except Cancelled:
            self._records.update(job_id, "cancelled")
        except Exception as error:
            self._records.update(job_id, "failed", error=translate.error_text(error))
        finally:
            self._gate.finished(job_id)

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int, jitter: Jitter = Jitter.NONE,
                         draw: float = 0.0, *no_place_in_tenacity: float | None) -> float:
        state = tenacity.RetryCallState(tenacity.Retrying(), fn=None, args=(), kwargs={})
        state.attempt_number = attempt + 1  # tenacity's first retry waits after attempt 1
        drawn = SimpleNamespace(uniform=lambda low, high: low + draw * (high - low))
        with mock.patch.object(tenacity.wait, "random", drawn):  # its jitter takes the kit's draw
            return float(tenacity_wait(policy, jitter)(state)) * 1000.0

    def dispatch(self) -> None:
        self._waits.settle()  # attempts whose delay has passed reach the gate first
        self._gate.open()
        self._waits.settle()

    def cancel(self, job_id: str) -> bool:
        return translate.cancel_in(self._records, self._gate, job_id) is not None

    def shutdown(self) -> None:
        translate.shut_down_in(self._records, self._gate)
        self._waits.settle()

    def close(self) -> None:
        self._gate.close()
        self._waits.stop()
        self._wall.stop()


class TenacityBackend:  # jobconform run --backend tenacity_jobs:TenacityBackend
    name = "tenacity"
    profile = "canonical"
    capabilities = frozenset({"lifecycle", "retry"})
    report_notes = (DERIVED_HEALTH_NOTE,)

    def open(self, settings: RuntimeSettings, clock: Clock) -> TenacityRuntime:
        return TenacityRuntime(settings, clock)
