"""pgqueuer's own retries (its DatabaseRetryEntrypointExecutor) against the retry area.

pgqueuer keeps a retry policy per entrypoint, not per job: each distinct policy the harness
asks for is an entrypoint of its own, registered with that executor, which has the spec's
formula: on a failed attempt it asks for a retry after `min(initial_delay *
backoff_multiplier ** attempts, max_delay)`, where `attempts` is the retries taken, until
`attempts` reaches `max_attempts` (the spec's max_retries), and then lets the error fail
the job. pgqueuer stores the retry as the row queued again with `execute_after = NOW() +
delay` and `attempts + 1`: it comes due on the virtual clock (`pgqueuer_clock`), and its
body waits at the gate again for the next dispatch. The record says queued, with the
retries taken, by the same rule the executor applies to the same `job.attempts`.

It has no jitter (`retry-without-jitter`), no retry-after and no list of error types it
does not retry: see expected-failures-retry.yaml.
"""

from dataclasses import replace
from datetime import timedelta
from functools import partial
from typing import Any

from pgqueuer.core.executors import DatabaseRetryEntrypointExecutor, EntrypointExecutorParameters
from pgqueuer.domain.errors import RetryRequested
from pgqueuer.domain.models import Job
from pgqueuer_jobs import PgqueuerBackend, PgqueuerRuntime

from jobconform.backends.protocol import RETRY_WITHOUT_JITTER, Clock, RuntimeSettings, TaskScript
from jobconform.bridges import translate as kit
from jobconform.reference.backoff import RetryPolicy


def retry_executor(policy: RetryPolicy,
                   parameters: EntrypointExecutorParameters) -> DatabaseRetryEntrypointExecutor:
    return DatabaseRetryEntrypointExecutor(
        parameters, max_attempts=policy.max_retries,
        initial_delay=timedelta(milliseconds=policy.retry_delay_ms),
        max_delay=timedelta(milliseconds=policy.max_retry_delay_ms),
        backoff_multiplier=policy.backoff_multiplier)


class PgqueuerRetryRuntime(PgqueuerRuntime):
    poll_every = timedelta(seconds=30)  # pgqueuer's default: a retry is found by a poll
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._entrypoints: dict[RetryPolicy, str] = {}
        super().__init__(settings, clock)

    def _entrypoint(self, retry: Any) -> tuple[str, int]:
        policy = retry or RetryPolicy()
        if policy not in self._entrypoints:  # the worker dequeues it from its next poll on
            name = self._entrypoints[policy] = f"body_retrying_{len(self._entrypoints)}"
            self.qm.entrypoint(name, accepts_context=True,
                               executor_factory=partial(retry_executor, policy))(self._body)
        return self._entrypoints[policy], policy.max_retries

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int, *unused: object) -> float:
        """The delay pgqueuer's executor asks for when attempt `attempt` (0: the first
        retry) fails, with a retry left: its own formula, run on an attempt that raises."""
        async def failing(job: Job) -> None:
            raise RuntimeError("attempt failed")
        executor = retry_executor(replace(policy, max_retries=attempt + 1),
                                  EntrypointExecutorParameters(0, failing))
        try:
            self.loop.run(executor.execute(Job.model_construct(attempts=attempt), None))  # type: ignore[arg-type]
        except RetryRequested as retry:
            return retry.delay.total_seconds() * 1000.0
        raise AssertionError("pgqueuer's executor asked for no retry")

    def _failed(self, job: Job, script: TaskScript, error: Exception) -> None:
        job_id = (job.payload or b"").decode()
        record = self._jobs.get(job_id)
        if record is not None and job.attempts < record.max_retries:  # pgqueuer retries it
            script.next_attempt()
            self._jobs.update(job_id, "queued", retry_count=job.attempts + 1)
        else:
            self._jobs.update(job_id, "failed", error=kit.error_text(error),
                              retry_count=job.attempts)


class PgqueuerRetryBackend(PgqueuerBackend):  # --backend pgqueuer_retry:PgqueuerRetryBackend
    capabilities = frozenset({"lifecycle", "retry", RETRY_WITHOUT_JITTER})

    def open(self, settings: RuntimeSettings, clock: Clock) -> PgqueuerRetryRuntime:
        return PgqueuerRetryRuntime(settings, clock)
