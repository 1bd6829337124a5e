"""procrastinate itself (its asyncio worker, its InMemoryConnector): lifecycle and retry. On a
`VirtualLoop` and `WallClock`, its task waits at the `DispatchGate`; cancel is its abort, retry a
`RetryStrategy` per policy. Also: procrastinate_redelivery.py, procrastinate_periodic.py."""

import asyncio
import logging

import procrastinate
from procrastinate.testing import InMemoryConnector

from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.bridges import DERIVED_HEALTH_NOTE, DispatchGate, VirtualLoop, WallClock, translate
from jobconform.reference.backoff import RetryPolicy


class ProcrastinateRuntime:
    Retried = type("Retried", (Exception,), {})  # retry_exceptions: errors not non_retryable
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self._wall = WallClock(clock).start()
        self._loop = VirtualLoop(clock, on_step=self._wall.move_to)
        self._jobs = jobs = translate.records_on_wall(settings)
        self._gate, self._decisions, self._closing = DispatchGate(), translate.Decisions(), False
        self._scripts = dict[str, tuple[int, TaskScript, RetryPolicy]]()  # rank, body, policy
        self._ids, self._tasks = dict[str, int](), dict[RetryPolicy, procrastinate.tasks.Task]()
        self.get, self.get_result, self.list_jobs = jobs.get, jobs.get_result, jobs.list_jobs
        self.cleanup, self.health = jobs.cleanup, jobs.health
        logging.getLogger("procrastinate").setLevel(logging.CRITICAL)  # a traceback per failure
        self.app = procrastinate.App(connector=InMemoryConnector())  # public: tests read it
        self._loop.run(self.app.open_async(), name="open_async")
        self.start_worker(concurrency=settings.max_concurrent)

    def start_worker(self, **options: float) -> None:  # its concurrency, its timers
        self._loop.spawn(self.app.run_worker_async(install_signal_handlers=False, **options))

    def _strategy(self, policy: RetryPolicy, retries: int) -> procrastinate.RetryStrategy:
        growth = round(policy.backoff_multiplier) if policy.backoff_multiplier >= 1.5 else 0  # ints
        return procrastinate.RetryStrategy(max_attempts=retries, retry_exceptions=[self.Retried],
            exponential_wait=growth, wait=0 if growth else round(policy.retry_delay_ms / 1000))

    async def _body(self, context: procrastinate.JobContext, job_id: str) -> object:
        rank, script, policy = self._scripts[job_id]
        if not await self._gate.wait_async(job_id, rank):
            return None
        self._jobs.update(job_id, "running")
        while not script.decided():
            try:
                await self._decisions.wait(job_id, script)
            except asyncio.CancelledError:  # procrastinate aborts the job: cancels its task
                if script.honours_cancellation or self._closing:
                    self._jobs.update(job_id, "cancelled")
                    raise
        if self._gate.released(job_id):  # a requested cancellation wins over the outcome
            self._jobs.update(job_id, "cancelled")
            raise asyncio.CancelledError
        try:
            result = script.run()
        except Exception as error:
            if (name := type(error).__name__) not in policy.non_retryable:
                error = type(name, (self.Retried,), {})(*error.args)  # same name and text
            if self._tasks[policy].get_retry_exception(exception=error, job=context.job):
                self._gate.finished(job_id)  # its worker retries it: back to the gate
                script.next_attempt()
                self._jobs.update(job_id, "queued", retry_count=context.job.attempts + 1)
            else:
                self._jobs.update(job_id, "failed", error=translate.error_text(error))
            raise error from None
        self._jobs.update(job_id, "succeeded", result=result)
        return result

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        policy, rank = retry or RetryPolicy(), len(self._scripts)  # submission order
        job_id = self._jobs.add(f"job-{rank}", policy.max_retries).job_id
        self._scripts[job_id] = (rank, script, policy)
        if policy not in self._tasks:  # a retry strategy is a task's: a task per policy
            self._tasks[policy] = self.app.task(name=f"body-{len(self._tasks)}", pass_context=True,
                retry=policy.max_retries and self._strategy(policy, policy.max_retries))(self._body)
        self._ids[job_id] = self._loop.run(self._tasks[policy].defer_async(job_id=job_id), "defer")
        return job_id  # its worker fetches it as the loop settles next (dispatch settles first)

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int, *unused: object) -> float:
        job = procrastinate.jobs.Job(queue="", lock=None, queueing_lock=None, task_name="",
                                     attempts=attempt)  # its formula, saturating at datetime.max
        decision = self._strategy(policy, attempt + 1).get_retry_decision(
            exception=self.Retried(), job=job)
        return (decision.retry_at - translate.wall_now()).total_seconds() * 1000.0  # type: ignore

    def settle(self) -> None:
        self._decisions.release_decided()
        self._loop.settle()

    def dispatch(self) -> None:
        self.settle()  # bodies the worker has fetched reach the gate first
        self._gate.open()
        self.settle()

    def cancel(self, job_id: str) -> bool:
        return translate.cancel_in(self._jobs, self._gate, job_id) is not None and self._end(job_id)

    def _end(self, job_id: str) -> bool:  # procrastinate's cancel: it aborts a running task
        self._loop.run(self.app.job_manager.cancel_job_by_id_async(self._ids[job_id], abort=True))
        self.settle()
        return True

    def shutdown(self) -> None:
        for job_id in translate.shut_down_in(self._jobs, self._gate):
            self._end(job_id)

    def close(self) -> None:
        self._closing = True
        self._gate.close()
        self._loop.close()  # cancels the worker, which ends its jobs and unregisters
        self._wall.stop()


class ProcrastinateBackend:  # jobconform run --backend procrastinate_jobs:ProcrastinateBackend
    name, profile, report_notes = "procrastinate", "canonical", (DERIVED_HEALTH_NOTE,)
    capabilities = frozenset({"lifecycle", "retry", "retry-without-jitter"})

    def open(self, settings: RuntimeSettings, clock: Clock) -> ProcrastinateRuntime:
        return ProcrastinateRuntime(settings, clock)
