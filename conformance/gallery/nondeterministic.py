"""A backend that answers the same commands differently: the "nondeterministic backend"
verdict's proof.

A race in an adapter (a worker thread that sometimes wins, sometimes loses) makes a
runtime answer one command sequence in two ways. To show it without a real race, this
backend alternates: the first time a job that has ended is cancelled, its cancel answers
true (LC-015 says false); the next time it answers false, then true again, and so on. The
alternation lives in the backend, shared by every runtime it opens, so a replay of the
failing example meets the other answer. That is deterministic in a test and differs on
every replay, as a race does.

`lost_cancel` alternates where a listed deviation follows: a cancel of a running job is
lost on every other call. Listed, the deviation makes the oracle adopt the job still
running, so the rules the machine may draw next follow the alternation, and Hypothesis
meets the same choices drawing other rules ("inconsistent data generation").

They are not in the self-test's gallery: the suites must not name a requirement for them,
but give the machine the verdict "nondeterministic backend" (tests/test_nondeterminism.py).
"""

from __future__ import annotations

from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import LIFECYCLE, Clock, RuntimeSettings
from jobconform.backends.store import RUNNING, TERMINAL


class Alternation:
    """True, false, true, ...: one answer per call, shared by every runtime."""

    def __init__(self) -> None:
        self.calls = 0

    def next(self) -> bool:
        self.calls += 1
        return self.calls % 2 == 1


class AlternatingRuntime(MemoryRuntime):
    """A memory runtime given its backend's alternation, to answer by."""

    def __init__(self, settings: RuntimeSettings, clock: Clock,
                 alternation: Alternation) -> None:
        super().__init__(settings, clock)
        self._alternation = alternation


class AlternatingBackend(MemoryBackend):
    """The memory backend whose every runtime (a `runtime_type`) shares its alternation,
    so that a replay meets the other answer."""

    capabilities = frozenset({LIFECYCLE})
    runtime_type: type[AlternatingRuntime] = AlternatingRuntime

    def __init__(self) -> None:
        self.alternation = Alternation()

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return self.runtime_type(settings, clock, self.alternation)


class AlternatingCancelRuntime(AlternatingRuntime):
    """Cancel of a job that has ended answers true on every other call."""

    def cancel(self, job_id: str) -> bool:
        job = self._store.get(job_id)
        if job is not None and job.status in TERMINAL:
            return self._alternation.next()
        return super().cancel(job_id)


class AlternatingCancelBackend(AlternatingBackend):
    """The memory runtime whose cancel of an ended job answers true, then false, in turn."""

    name = "gallery.alternating_cancel"
    runtime_type = AlternatingCancelRuntime


alternating_cancel = AlternatingCancelBackend


class AlternatingOpenBackend(AlternatingBackend):
    """The memory backend whose every other open fails, as a broker connection that is
    sometimes refused under load: the example that met the refusal raised before its first
    command, and its replay passed."""

    name = "gallery.alternating_open"

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        if self.alternation.next():
            raise ConnectionRefusedError("the broker refused the connection")
        return MemoryRuntime(settings, clock)


alternating_open = AlternatingOpenBackend


class LostCancelRuntime(AlternatingRuntime):
    """Cancel of a running job is lost on every other call: it answers false and the job
    runs on, as when a worker thread claims the job's cancel request first."""

    def cancel(self, job_id: str) -> bool:
        job = self._store.get(job_id)
        if job is not None and job.status == RUNNING and self._alternation.next():
            return False
        return super().cancel(job_id)


class LostCancelBackend(AlternatingBackend):
    """The memory runtime whose cancel of a running job is lost on every other call. With
    that deviation listed, the oracle adopts the job still running, so which rules the
    machine may draw next (cancel_running's precondition) depends on the alternation:
    Hypothesis sees the same choices lead to different draws ("inconsistent data
    generation"), not a failure it can replay."""

    name = "gallery.lost_cancel"
    runtime_type = LostCancelRuntime


lost_cancel = LostCancelBackend
