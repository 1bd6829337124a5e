"""Correct backends that claim only part of the spec, for checks about partial claims.

`lifecycle_only` is the memory backend claiming the lifecycle area alone. The kit must
report every other area as "not claimed" and skip what needs them (a regression trace
that uses a retry policy, say), never run it and never count it as passed.

`breaker_without_seams` is the memory backend without `breaker-seams`: its breaker has
every method of the area but the dispatch seams' (`backstop`, `record_missed_heartbeat`,
`set_drain_lost`), as a third-party breaker has. CB-014 and CB-015 must show "not
claimed" and the rest of the breaker area pass, the three methods never called.

`retry_without_jitter` claims retry in part (`retry-without-jitter`): its delay function
knows no jitter mode but "none" and raises for the others, as a library with no jitter
modes does. RT-009 must show "not claimed" and the rest of the retry area pass.

`retry_intervals` claims retry in part (`retry-intervals`): its retries wait out a list
of intervals made from each job's policy (`retry_intervals_ms`), as a library configured
with a user's list does; it has no formula, no jitter and no server retry-after, and its
delay function answers only the n-th interval of that list. RT-002, RT-009 and RT-010
must show "not claimed" and the rest of the retry area pass.

`scheduling_utc_only` claims scheduling in part (`scheduling-utc-only`): the memory
scheduler refusing every zone but UTC (code timezone), as an adapter for a library whose
crons have no zone does (huey, procrastinate). SC-004 and SC-005 must show "not claimed",
the cases tagged `zones` be skipped, and the rest of the area pass in every suite: a kit
that asked it for a real zone other than UTC would meet a refusal the oracle does not make.

`self_running_without_watches` claims self-running with lifecycle and retry but neither
`stuck` nor `redelivery`, as a job library whose consumer polls and brings retries back
but has no job timeout or lease does: the threaded worker opened self-running with no stuck
pass and no lease of its own. SR-002 and SR-003 must show "not claimed", SR-001 and SR-004
pass, and no suite may send it a heartbeat or leave a job silent for a timeout.
"""

from __future__ import annotations

from typing import Any

from jobconform.backends.breaker.protocol import SEAM_METHODS
from jobconform.backends.breaker.runtime import StoreBreakerRuntime
from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import (
    BREAKER_SEAMS,
    LIFECYCLE,
    RETRY,
    RETRY_INTERVALS,
    RETRY_WITHOUT_JITTER,
    SCHEDULING_UTC_ONLY,
    Clock,
    RuntimeSettings,
)
from jobconform.backends.scheduling.memory import InMemoryScheduleStore
from jobconform.backends.scheduling.protocol import (
    SCHEDULING,
    ScheduleRejected,
    SchedulingConfig,
    SchedulingTarget,
)
from jobconform.backends.scheduling.runtime import StepSchedulingRuntime, timetable_problem
from jobconform.backends.self_running import SELF_RUNNING, Clockwork
from jobconform.backends.threaded import ThreadedBackend, ThreadedRuntime
from jobconform.backends.threaded.backend import self_running_config, waitable
from jobconform.bridges.translate import retry_intervals_ms
from jobconform.conformance.gallery import OverRuntime
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.breaker.oracle import BreakerSettings


class LifecycleOnlyBackend(MemoryBackend):
    name = "lifecycle-only"
    capabilities = frozenset({LIFECYCLE})


lifecycle_only = LifecycleOnlyBackend
LIFECYCLE_ONLY = f"{__name__}:lifecycle_only"


class BreakerWithoutSeams:
    """The memory breaker with the seams' methods taken away: asking for one raises
    AttributeError, as on a breaker that never had them."""

    def __init__(self, runtime: StoreBreakerRuntime) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        if name in SEAM_METHODS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self._runtime, name)

    def peer(self) -> BreakerWithoutSeams:
        return BreakerWithoutSeams(self._runtime.peer())


class BreakerWithoutSeamsBackend(MemoryBackend):
    name = "breaker-without-seams"
    capabilities = MemoryBackend.capabilities - {BREAKER_SEAMS}

    def open_breaker(self, clock: Clock,  # type: ignore[override]
                     settings: BreakerSettings) -> BreakerWithoutSeams:
        return BreakerWithoutSeams(super().open_breaker(clock, settings))


breaker_without_seams = BreakerWithoutSeamsBackend
BREAKER_WITHOUT_SEAMS = f"{__name__}:breaker_without_seams"


class NoJitterRuntime(MemoryRuntime):
    """A delay function that knows no jitter modes and raises for any: right for a
    backend claiming retry without jitter, a deviation (RT-009) for a full retry claim
    (conformance/gallery/adoption.py's no_jitter_modes)."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        if jitter is not Jitter.NONE:
            raise ValueError(f"no such jitter mode: {jitter.value}")
        return super().compute_delay_ms(policy, attempt, retry_after_ms=retry_after_ms)


class RetryWithoutJitterBackend(OverRuntime):
    name = "retry-without-jitter"
    capabilities = frozenset({LIFECYCLE, RETRY, RETRY_WITHOUT_JITTER})
    runtime_type = NoJitterRuntime


retry_without_jitter = RetryWithoutJitterBackend
RETRY_WITHOUT_JITTER_BACKEND = f"{__name__}:retry_without_jitter"


class IntervalsRuntime(MemoryRuntime):
    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        # The retry step asks it for each retry's delay: the list's entry, whatever the
        # jitter or the server's retry-after (an IndexError past the list's end).
        return retry_intervals_ms(policy)[attempt]


class RetryIntervalsBackend(OverRuntime):
    name = "retry-intervals"
    capabilities = frozenset({LIFECYCLE, RETRY, RETRY_INTERVALS})
    runtime_type = IntervalsRuntime


retry_intervals = RetryIntervalsBackend
RETRY_INTERVALS_BACKEND = f"{__name__}:retry_intervals"


class UtcOnlyScheduler(StepSchedulingRuntime):
    """The step scheduler refusing a timetable in any zone but UTC with the code timezone,
    after the expression's own check (the expression is refused first, SC-003)."""

    def _refuse_zone(self, expression: str, timezone: str) -> None:
        if timezone != "UTC" and timetable_problem(expression, "UTC", self._clock.now()) is None:
            raise ScheduleRejected("timezone", f"no zone but UTC here: {timezone!r}")

    def create_cron(self, message: str, expression: str, timezone: str,
                    pre_check: bool = False) -> str:
        self._refuse_zone(expression, timezone)
        return super().create_cron(message, expression, timezone, pre_check)

    def edit(self, schedule_id: str, message: str | None = None,
             expression: str | None = None, timezone: str | None = None) -> None:
        held = self.get(schedule_id)
        if held is not None and held.kind == "cron" and timezone is not None:
            self._refuse_zone(expression or str(held.expression), timezone)
        super().edit(schedule_id, message, expression, timezone)


class SchedulingUtcOnlyBackend(MemoryBackend):
    name = "scheduling-utc-only"
    capabilities = frozenset({SCHEDULING, SCHEDULING_UTC_ONLY})

    def open_scheduling(self, clock: Clock, config: SchedulingConfig,
                        target: SchedulingTarget) -> UtcOnlyScheduler:
        return UtcOnlyScheduler(InMemoryScheduleStore(), clock, config, target)


scheduling_utc_only = SchedulingUtcOnlyBackend
SCHEDULING_UTC_ONLY_BACKEND = f"{__name__}:scheduling_utc_only"


# Beyond any check's clock: the worker's stuck and lease passes never find a job.
NEVER_SECONDS = 10.0**9


class WithoutWatchesWorker(ThreadedRuntime):
    """The threaded worker as a runtime with no stuck pass and no lease: nothing of it
    reads a heartbeat, so a check that sends one has drawn what the claim leaves out."""

    def heartbeat(self, job_id: str) -> None:
        raise AssertionError("heartbeat sent to a runtime that claims neither stuck nor"
                             " redelivery")


class SelfRunningWithoutWatchesBackend(ThreadedBackend):
    name = "self-running-without-watches"
    capabilities = frozenset({LIFECYCLE, RETRY, SELF_RUNNING})

    def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                          clockwork: Clockwork) -> ThreadedRuntime:
        never = Clockwork(clockwork.poll_interval_seconds, NEVER_SECONDS, NEVER_SECONDS)
        return WithoutWatchesWorker(self.new_store(), waitable(clock),
                                    self_running_config(settings, never),
                                    max_tasks=settings.max_tasks,
                                    max_redelivery=settings.max_redelivery)


self_running_without_watches = SelfRunningWithoutWatchesBackend
SELF_RUNNING_WITHOUT_WATCHES_BACKEND = f"{__name__}:self_running_without_watches"
