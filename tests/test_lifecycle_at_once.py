"""Submit and cancel have made their change when they return (LC-031): the harness reads
the job straight after the call, and a write left pending until the runtime next runs is
caught, with the rule for a wrong end state keeping its blame. Under cancel_running
interrupt (task-manager) a cancel of a running job is read so too, with the health
snapshot, and a late record is LC-026's."""

from __future__ import annotations

from contextlib import closing

import pytest
from runtime_stand_ins import MemoryBackendOf

from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings, TaskScript
from jobconform.backends.sql import SqlBackend
from jobconform.backends.store import QUEUED, StoredJob
from jobconform.backends.threaded import ThreadedBackend
from jobconform.conformance.harness import Divergence, Harness
from jobconform.conformance.lifecycle import gallery
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.spec import load_registry

REGISTRY = load_registry()
PROFILE = REGISTRY.profile("canonical")
TASK_MANAGER = REGISTRY.profile("task-manager")
SHIPPED = pytest.mark.parametrize("backend", [MemoryBackend(), SqlBackend(), ThreadedBackend()],
                                  ids=["memory", "sql", "threaded"])


@SHIPPED
def test_the_shipped_runtimes_make_the_change_before_returning(backend: object) -> None:
    with closing(Harness(backend, PROFILE, REGISTRY,  # type: ignore[arg-type]
                         max_concurrent=1)) as harness:
        harness.run(cmd.Submit("a"))
        harness.run(cmd.Submit("b"))
        harness.run(cmd.Cancel("a"))
        harness.run(cmd.Dispatch())
        harness.run(cmd.Cancel("b"))  # running, cooperative: not read at once (LC-013)
        assert "LC-031" in harness.exercised


def test_a_cancel_write_not_awaited_is_lc_031() -> None:
    with closing(Harness(gallery.cancel_write_not_awaited(), PROFILE, REGISTRY)) as harness:
        harness.run(cmd.Submit("a"))
        with pytest.raises(Divergence) as caught:
            harness.run(cmd.Cancel("a"))
        assert caught.value.primary == "LC-031"
        assert "read straight after" in caught.value.what


class _SubmitStoredLater(MemoryRuntime):
    """Submit returns the id and stores the record only when the runtime next runs."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self._pending: list[tuple[TaskScript, str]] = []

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None) -> str:
        job_id = self._new_job_id()
        self._pending.append((script, job_id))
        return job_id

    def settle(self) -> None:
        pending, self._pending = self._pending, []
        for script, job_id in pending:
            self._store.add(StoredJob(job_id, QUEUED, self._now()), None)
            self._scripts[job_id] = script
        super().settle()


def test_a_submit_stored_only_once_settled_is_lc_031() -> None:
    with closing(Harness(MemoryBackendOf(_SubmitStoredLater, "submit-stored-later"), PROFILE,
                         REGISTRY)) as harness:
        with pytest.raises(Divergence) as caught:
            harness.run(cmd.Submit("a"))
        assert caught.value.primary == "LC-031"
        assert caught.value.actual is None


class _CancelOnlyFlagsQueued(MemoryRuntime):
    """Cancel of a queued job returns true and changes nothing, ever: the end state is
    wrong, so the rule for it (LC-011) keeps the blame."""

    def cancel(self, job_id: str) -> bool:
        job = self._store.get(job_id)
        if job is not None and job.status == QUEUED:
            return True
        return super().cancel(job_id)


def test_a_wrong_end_state_keeps_its_own_rule() -> None:
    with closing(Harness(MemoryBackendOf(_CancelOnlyFlagsQueued, "cancel-only-flags"), PROFILE,
                         REGISTRY)) as harness:
        harness.run(cmd.Submit("a"))
        with pytest.raises(Divergence) as caught:
            harness.run(cmd.Cancel("a"))
        assert caught.value.primary != "LC-031"


@SHIPPED
def test_the_shipped_runtimes_have_cancelled_a_running_job_when_an_interrupting_cancel_returns(
        backend: object) -> None:
    """Every round cancels a running job, whose body ignores its token or honours it, and
    the harness reads the job and the health straight after each cancel returned."""
    with closing(Harness(backend, TASK_MANAGER, REGISTRY,  # type: ignore[arg-type]
                         max_concurrent=2, unlimited_tasks=True)) as harness:
        for round_ in range(10):
            harness.run(cmd.Submit(f"a{round_}", ignores_cancel=True))
            harness.run(cmd.Submit(f"b{round_}"))
            harness.run(cmd.Dispatch())
            harness.run(cmd.AdvanceTime(1))
            assert harness.run(cmd.Cancel(f"a{round_}")) is True
            assert harness.run(cmd.Cancel(f"b{round_}")) is True
            harness.run(cmd.Finish(f"a{round_}", cmd.Succeed("too late")))
        assert "LC-026" in harness.exercised


def test_an_interrupting_cancel_not_awaited_is_lc_026() -> None:
    with closing(Harness(gallery.interrupting_cancel_not_awaited(), TASK_MANAGER,
                         REGISTRY)) as harness:
        harness.run(cmd.Submit("a", ignores_cancel=True))
        harness.run(cmd.Dispatch())
        with pytest.raises(Divergence) as caught:
            harness.run(cmd.Cancel("a"))
        assert caught.value.primary == "LC-026"
        assert "read straight after" in caught.value.what


def test_a_cooperative_cancel_of_a_running_job_is_not_read_at_once() -> None:
    """Under canonical the job stays running until its body observes the request (LC-013):
    the same runtime, whose owner acts only when it next runs, conforms there."""
    with closing(Harness(gallery.interrupting_cancel_not_awaited(), PROFILE, REGISTRY)) as harness:
        harness.run(cmd.Submit("a", ignores_cancel=True))
        harness.run(cmd.Submit("b"))
        harness.run(cmd.Dispatch())
        assert harness.run(cmd.Cancel("a")) is True
        assert harness.run(cmd.Cancel("b")) is True
        harness.run(cmd.Finish("a", cmd.Succeed(1)))
