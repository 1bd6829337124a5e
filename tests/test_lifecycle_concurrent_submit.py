"""Submissions made at once from several threads (LC-030): the oracle, the command, the
harness's threads on the shipped runtimes, the not-claimed path, a hung submitter, and the
gallery's racy id counter."""

from __future__ import annotations

import threading
from contextlib import closing

import pytest
from runtime_stand_ins import MemoryBackendOf

from jobconform.backends.loading import BackendLoadError, check_backend
from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import (
    CONCURRENT_SUBMIT,
    LIFECYCLE,
    Clock,
    RuntimeSettings,
    TaskScript,
)
from jobconform.backends.sql import SqlBackend
from jobconform.backends.threaded import ThreadedBackend
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.harness import AdapterError, Divergence, Harness
from jobconform.conformance.lifecycle import gallery
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.model import ReferenceModel
from jobconform.spec import load_registry

REGISTRY = load_registry()
PROFILE = REGISTRY.profile("canonical")


def test_oracle_accepts_the_batch_and_adopts_an_order() -> None:
    model = ReferenceModel(RuntimeSettings(max_concurrent=2, max_tasks=4), EPOCH)
    model.apply(cmd.Submit("p"))
    step = model.apply(cmd.SubmitConcurrently(("a", "b", "c")))
    assert step.answer == [cmd.ACCEPTED] * 3
    assert step.requirements[0] == "LC-030"
    model.adopt_order(["c", "a", "b"])
    assert list(model.jobs) == ["p", "c", "a", "b"]
    model.apply(cmd.Dispatch())
    assert [alias for alias, job in model.jobs.items() if job.status.value == "running"] == \
        ["p", "c"]


def test_oracle_refuses_a_batch_past_the_cap_and_after_shutdown() -> None:
    model = ReferenceModel(RuntimeSettings(max_concurrent=2, max_tasks=2), EPOCH)
    model.apply(cmd.Submit("p"))
    with pytest.raises(ValueError, match="task cap"):
        model.apply(cmd.SubmitConcurrently(("a", "b")))
    model.apply(cmd.Shutdown())
    step = model.apply(cmd.SubmitConcurrently(("a", "b")))
    assert step.answer == [cmd.REFUSED_SHUT_DOWN] * 2
    assert list(model.jobs) == ["p"]


def test_the_command_checks_its_size_and_round_trips() -> None:
    with pytest.raises(ValueError, match="2 to 8"):
        cmd.SubmitConcurrently(("a",))
    with pytest.raises(ValueError, match="each job once"):
        cmd.SubmitConcurrently(("a", "a"))
    command = cmd.SubmitConcurrently(("a", "b"))
    assert cmd.command_from_json(cmd.command_to_json(command)) == command


@pytest.mark.parametrize("backend", [MemoryBackend(), SqlBackend(), ThreadedBackend()],
                         ids=["memory", "sql", "threaded"])
def test_the_shipped_runtimes_give_each_submission_its_own_job(backend: object) -> None:
    with closing(Harness(backend, PROFILE, REGISTRY, max_concurrent=2,  # type: ignore[arg-type]
                         max_tasks=9)) as harness:
        harness.run(cmd.Submit("p"))
        jobs = tuple(f"s{n}" for n in range(1, 9))
        assert harness.run(cmd.SubmitConcurrently(jobs)) == [cmd.ACCEPTED] * 8
        assert len({harness.ids[alias] for alias in jobs}) == 8
        harness.run(cmd.Dispatch())
        harness.run(cmd.ListJobs())
        assert "LC-030" in harness.exercised


class _OneLoopBackend(MemoryBackend):
    """An adapter that drives one event loop from the caller's thread: it does not claim
    concurrent-submit."""

    name = "one-loop"
    capabilities = frozenset({LIFECYCLE})


def test_an_adapter_without_the_claim_is_not_claimed_and_never_called_at_once() -> None:
    backend = _OneLoopBackend()
    reason = skip_reason(REGISTRY, backend, PROFILE, ["LC-030"])
    assert reason is not None and CONCURRENT_SUBMIT in reason
    with closing(Harness(backend, PROFILE, REGISTRY)) as harness:
        with pytest.raises(ValueError, match=CONCURRENT_SUBMIT):
            harness.run(cmd.SubmitConcurrently(("a", "b")))
        assert harness.model.jobs == {}


def test_a_batch_must_fit_under_the_cap_and_use_new_aliases() -> None:
    with closing(Harness(MemoryBackend(), PROFILE, REGISTRY, max_tasks=3)) as harness:
        harness.run(cmd.Submit("p"))
        with pytest.raises(ValueError, match="already used"):
            harness.run(cmd.SubmitConcurrently(("p", "q")))
        with pytest.raises(ValueError, match="task cap"):
            harness.run(cmd.SubmitConcurrently(("a", "b", "c")))
        harness.run(cmd.SubmitConcurrently(("a", "b")))


def test_the_racy_id_counter_is_caught_by_lc_030() -> None:
    with closing(Harness(gallery.racy_id_counter(), PROFILE, REGISTRY)) as harness:
        harness.run(cmd.Submit("p"))  # one thread at a time: never shows it
        with pytest.raises(Divergence) as caught:
            harness.run(cmd.SubmitConcurrently(("a", "b")))
        assert caught.value.primary == "LC-030"


class _LosingRuntime(MemoryRuntime):
    """Each submission gets its own id, but a submission made while another is under way
    is not stored (a list appended to from two threads, one append lost)."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._busy = threading.Lock()
        self._both_in = threading.Barrier(2)

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None) -> str:
        if threading.current_thread() is threading.main_thread():
            return super().submit(script, retry)
        self._both_in.wait(timeout=5)
        if self._busy.acquire(blocking=False):
            try:
                self._both_in.wait(timeout=5)
                return super().submit(script, retry)
            finally:
                self._busy.release()
        self._both_in.wait(timeout=5)
        return "lost-" + self._new_job_id()


def test_a_submission_lost_beside_another_is_lc_030() -> None:
    with closing(Harness(MemoryBackendOf(_LosingRuntime, "losing"), PROFILE, REGISTRY)) as harness:
        with pytest.raises(Divergence) as caught:
            harness.run(cmd.SubmitConcurrently(("a", "b")))
        assert caught.value.primary == "LC-030"
        assert "held (listed)" in caught.value.what


class _HangingRuntime(MemoryRuntime):
    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None) -> str:
        if threading.current_thread() is not threading.main_thread():
            threading.Event().wait(3)  # far past the test's safety limit
        return super().submit(script, retry)


def test_a_hung_submitter_fails_with_its_thread_named() -> None:
    with (closing(Harness(MemoryBackendOf(_HangingRuntime, "hanging"), PROFILE, REGISTRY,
                          safety_timeout=1.0)) as harness,
          pytest.raises(AdapterError, match="jobconform-submitter-1 did not finish")):
        harness.run(cmd.SubmitConcurrently(("a", "b")))


def test_concurrent_submit_needs_the_lifecycle_area() -> None:
    class ClaimOnly(MemoryBackend):
        name = "claim-only"
        capabilities = frozenset({CONCURRENT_SUBMIT})

    with pytest.raises(BackendLoadError, match=CONCURRENT_SUBMIT):
        check_backend(ClaimOnly(), "claim-only")
