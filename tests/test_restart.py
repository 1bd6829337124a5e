"""The restart area (RS-001..RS-004): the oracle keeps records across a restart, the sql and
threaded+sql backends reopen their store and stop by signal, the machine reaches every
requirement, and each gallery runtime is caught at its requirement."""

from __future__ import annotations

from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest

from jobconform.backends.loading import load_backend
from jobconform.backends.protocol import Backend
from jobconform.backends.restart import RESTART, STOP_SIGNAL
from jobconform.backends.sql import SqlBackend
from jobconform.backends.threaded.sql_backend import ThreadedSqlBackend
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.harness import (
    Divergence,
    GracePeriodEnds,
    GracePeriodOpened,
    Harness,
)
from jobconform.conformance.restart.gallery import (
    GALLERY,
    KeptMemoryBackend,
    SignalledMemoryBackend,
    SigtermIgnored,
)
from jobconform.conformance.restart.machine import run_restart_machine
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.lifecycle import Status
from jobconform.reference.model import ReferenceModel, StepResult
from jobconform.spec import Registry
from jobconform.spec.runtime_settings import RuntimeSettings


def test_the_oracle_keeps_every_record_and_forgets_what_was_the_process() -> None:
    model = ReferenceModel(RuntimeSettings(2, None), EPOCH)
    for alias in ("a", "b", "c"):
        model.apply(cmd.Submit(alias))
    model.apply(cmd.Dispatch())
    model.apply(cmd.Finish("a", cmd.Succeed(1)))
    before = dict(model.jobs)
    result = model.apply(cmd.Restart())
    assert model.jobs == before
    assert result.requirements == ("RS-001", "RS-003")
    assert (model.orphans, model.carried_over) == ({"b"}, {"c"})
    assert (model.processed, model.last_heartbeat) == (0, None)
    # The orphan's body is gone: deciding it ends nothing; the lease pass brings it back.
    model.apply(cmd.AdvanceTime(61))
    requeued = model.apply(cmd.ExpireLeases(60))
    assert requeued.answer == {"requeued": 1, "parked": 0}
    assert "RS-003" in requeued.requirements
    assert model.jobs["b"].status is Status.QUEUED and not model.orphans
    assert model.apply(cmd.Dispatch()).requirements[0] == "RS-002"


def _every_requirement(harness: Harness) -> None:
    """A finished, a retried, a queued and a running job across two restarts."""
    retry = RetryPolicy(max_retries=1, retry_delay_ms=5000, backoff_multiplier=1)
    for command in (cmd.Submit("a"), cmd.Submit("b", retry=retry), cmd.Submit("c"),
                    cmd.Dispatch(), cmd.Finish("a", cmd.Succeed({"n": 1})),
                    cmd.Finish("b", cmd.Raise("IOError", "boom")), cmd.Submit("d"),
                    cmd.Restart(), cmd.AdvanceTime(3), cmd.Restart(), cmd.Submit("e"),
                    cmd.Dispatch(), cmd.AdvanceTime(60), cmd.ExpireLeases(60),
                    cmd.Dispatch(), cmd.Finish("c", cmd.Succeed(2)),
                    cmd.Finish("b", cmd.Succeed(3)), cmd.Finish("d", cmd.Succeed(4))):
        harness.run(command)
    assert {"RS-001", "RS-002", "RS-003"} <= harness.exercised
    views = {alias: harness.runtime.get(job_id) for alias, job_id in harness.ids.items()}
    assert {alias: view.status for alias, view in views.items() if view} == {
        "a": "succeeded", "b": "succeeded", "c": "succeeded", "d": "succeeded",
        "e": "running"}


@pytest.mark.parametrize("make", [SqlBackend, ThreadedSqlBackend, None],
                         ids=["sql", "threaded+sql", "sql-in-memory"])
def test_the_sql_backends_keep_their_jobs_across_a_restart(
        make: type[SqlBackend] | type[ThreadedSqlBackend] | None, registry: Registry,
        tmp_path: Path) -> None:
    backend: Backend = SqlBackend("sqlite://") if make is None else make(
        f"sqlite:///{tmp_path / 'jobs.db'}")
    assert RESTART in backend.capabilities
    with closing(Harness(backend, registry.profile("canonical"), registry,
                         max_concurrent=4)) as harness:
        _every_requirement(harness)


def test_the_sql_backend_restarts_over_a_database_server(database_url: str,
                                                         registry: Registry) -> None:
    # database_url: conftest's, an empty database of each kind (SQLite as a file).
    with closing(Harness(SqlBackend(database_url), registry.profile("canonical"), registry,
                         max_concurrent=4)) as harness:
        _every_requirement(harness)


def test_memory_and_threaded_keep_jobs_in_the_process_and_claim_no_restart() -> None:
    assert RESTART not in load_backend("memory").capabilities
    assert RESTART not in load_backend("threaded").capabilities
    assert RESTART in load_backend("sql").capabilities


def test_nothing_acts_on_the_lost_body_of_a_job_running_at_a_restart(
        registry: Registry) -> None:
    with closing(Harness(KeptMemoryBackend(), registry.profile("canonical"), registry)) as harness:
        for command in (cmd.Submit("a"), cmd.Dispatch(), cmd.Restart()):
            harness.run(command)
        for refused in (cmd.Finish("a", cmd.Succeed(1)), cmd.Heartbeat("a"),
                        cmd.Cancel("a"), cmd.Shutdown()):
            with pytest.raises(ValueError, match="restart"):
                harness.run(refused)


def test_a_restart_is_refused_on_a_backend_without_the_claim(registry: Registry) -> None:
    with (closing(Harness(load_backend("memory"), registry.profile("canonical"),
                          registry)) as harness,
          pytest.raises(ValueError, match="does not claim restart")):
        harness.run(cmd.Restart())


@pytest.mark.parametrize("name", ["sql", "threaded+sql"])
def test_the_machine_reaches_every_requirement(name: str, registry: Registry) -> None:
    run = run_restart_machine(load_backend(name), registry.profile("canonical"), registry,
                              examples=30)
    assert run.divergence is None
    assert {"RS-001", "RS-002", "RS-003", "RS-004"} <= run.exercised


@pytest.mark.parametrize("entry", GALLERY, ids=[entry.name for entry in GALLERY])
def test_each_broken_restart_is_caught_at_its_requirement(entry: object,
                                                          registry: Registry) -> None:
    backend = load_backend(entry.target)  # type: ignore[attr-defined]
    # Two slots: "a" runs across the restart (the gallery's memory runtime counts it in a
    # slot), "b" and "c" wait; one dispatch after it starts one of them.
    harness = Harness(backend, registry.profile(entry.profile),  # type: ignore[attr-defined]
                      registry, max_concurrent=2)
    # The stop by signal's entries are stopped by SIGTERM where the others restart, and
    # restarted before it: the runtime SIGTERM stops runs a and b and holds c queued, all
    # three submitted to the runtime before it.
    commands: tuple[cmd.Command, ...] = (
        cmd.Submit("a"), cmd.Dispatch(), cmd.Submit("b"), cmd.Submit("c"),
        cmd.AdvanceTime(1), cmd.Restart(), cmd.Dispatch())
    if entry.catches in ("RS-004", "RS-005", "RS-008"):  # type: ignore[attr-defined]
        commands = (cmd.Submit("a"), cmd.Submit("b"), cmd.Submit("c"), cmd.Restart(),
                    cmd.Dispatch(), cmd.AdvanceTime(1), cmd.StopBySignal(10),
                    cmd.Dispatch())
    if entry.catches in ("RS-006", "RS-007"):  # type: ignore[attr-defined]
        # A body ends in the grace period (RS-006); SIGINT in place of SIGTERM (RS-007).
        signal = "SIGINT" if entry.catches == "RS-007" else "SIGTERM"  # type: ignore[attr-defined]
        commands = (cmd.Submit("a"), cmd.Submit("b"), cmd.Submit("c"), cmd.Dispatch(),
                    cmd.StopBySignal(10, signal, (cmd.AdvanceTime(3),
                                                  cmd.Finish("a", cmd.Succeed(1)))))
    try:
        with pytest.raises(Divergence) as caught:
            for command in commands:
                harness.run(command)
        assert caught.value.primary == entry.catches  # type: ignore[attr-defined]
    finally:
        harness.close()


def test_the_correct_gallery_base_passes(registry: Registry) -> None:
    with closing(Harness(KeptMemoryBackend(), registry.profile("canonical"), registry,
                         max_concurrent=4)) as harness:
        _every_requirement(harness)


def _signalled(limits: RuntimeSettings) -> tuple[ReferenceModel, StepResult]:
    """One slot: a ran and succeeded, b runs, c waits; then SIGTERM with 10 s of grace."""
    model = ReferenceModel(limits, EPOCH)
    for alias in ("a", "b", "c"):
        model.apply(cmd.Submit(alias))
    model.apply(cmd.Dispatch())
    model.apply(cmd.Finish("a", cmd.Succeed(1)))
    model.apply(cmd.Dispatch())
    return model, model.apply(cmd.StopBySignal(10))


def test_the_oracle_stops_by_signal_as_a_shutdown_then_a_restart() -> None:
    model, result = _signalled(RuntimeSettings(1, None))
    assert result.answer == cmd.EXITED_ON_SIGTERM
    assert result.requirements[0] == "RS-004" and "LC-022" in result.requirements
    assert {alias: job.status for alias, job in model.jobs.items()} == {
        "a": Status.SUCCEEDED, "b": Status.CANCELLED, "c": Status.CANCELLED}
    assert not model.orphans and not model.shut_down and model.cancelled == 0


def test_the_oracle_stops_by_signal_under_drain_and_kills_at_the_grace_period() -> None:
    """RS-005: the drain lets b run on and c wait; nothing ends them within the grace
    period, so the kill comes, and the records stay as they were for the next runtime."""
    model, result = _signalled(RuntimeSettings(1, None, shutdown_mode="drain",
                                      drain_timeout_seconds=30))
    assert result.answer == cmd.ESCALATED_TO_SIGKILL
    assert result.requirements[0] == "RS-005" and "LC-028" in result.requirements
    assert {alias: job.status for alias, job in model.jobs.items()} == {
        "a": Status.SUCCEEDED, "b": Status.RUNNING, "c": Status.QUEUED}
    assert model.orphans == {"b"} and model.carried_over == {"c"} and not model.shut_down
    idle = ReferenceModel(RuntimeSettings(1, None, shutdown_mode="drain"), EPOCH)
    assert idle.apply(cmd.StopBySignal(10)).answer == cmd.EXITED_ON_SIGTERM


def test_the_oracle_lets_time_pass_inside_a_stop_under_drain() -> None:
    """RS-006: b ends 3 s into the grace period and is recorded as it ended; c, queued,
    is what the kill at the grace period's end leaves. A drain timeout shorter than the
    grace period cancels what is left and the process exits (SIGINT alike, RS-007)."""
    drain = RuntimeSettings(1, None, shutdown_mode="drain", drain_timeout_seconds=30)
    model = ReferenceModel(drain, EPOCH)
    for command in (cmd.Submit("b"), cmd.Submit("c"), cmd.Dispatch()):
        model.apply(command)
    result = model.apply(cmd.StopBySignal(10, during=(cmd.AdvanceTime(3),
                                                      cmd.Finish("b", cmd.Succeed(2)))))
    assert result.answer == cmd.ESCALATED_TO_SIGKILL and result.requirements[0] == "RS-006"
    assert model.jobs["b"].status is Status.SUCCEEDED
    assert model.jobs["b"].finished_at == EPOCH + timedelta(seconds=3)
    assert model.jobs["c"].status is Status.QUEUED
    assert model.now == EPOCH + timedelta(seconds=10)
    timed_out = ReferenceModel(drain, EPOCH)
    for command in (cmd.Submit("b"), cmd.Dispatch()):
        timed_out.apply(command)
    result = timed_out.apply(cmd.StopBySignal(60, "SIGINT"))
    assert result.answer == cmd.exited_on("SIGINT") and result.requirements[0] == "RS-007"
    assert timed_out.jobs["b"].status is Status.CANCELLED
    assert timed_out.jobs["b"].finished_at == EPOCH + timedelta(seconds=30)


def _stopped_by_signal(harness: Harness) -> None:
    for command in (cmd.Submit("a"), cmd.Submit("b"), cmd.Dispatch(),
                    cmd.Finish("a", cmd.Succeed(1)), cmd.Submit("c"), cmd.AdvanceTime(2),
                    cmd.StopBySignal(10), cmd.Submit("d"), cmd.Dispatch(),
                    cmd.Finish("d", cmd.Succeed(4))):
        harness.run(command)
    assert "RS-004" in harness.exercised


@pytest.mark.parametrize("make", [SqlBackend, ThreadedSqlBackend, SignalledMemoryBackend],
                         ids=["sql", "threaded+sql", "gallery-base"])
def test_sigterm_shuts_down_and_the_next_runtime_finds_every_record(
        make: type[Backend], registry: Registry, tmp_path: Path) -> None:
    backend = (make() if make is SignalledMemoryBackend  # type: ignore[call-arg]
               else make(f"sqlite:///{tmp_path / 'jobs.db'}"))  # type: ignore[call-arg]
    assert STOP_SIGNAL in backend.capabilities
    with closing(Harness(backend, registry.profile("canonical"), registry,
                         max_concurrent=2)) as harness:
        _stopped_by_signal(harness)


@pytest.mark.parametrize("make", [SqlBackend, ThreadedSqlBackend, SignalledMemoryBackend],
                         ids=["sql", "threaded+sql", "gallery-base"])
def test_sigterm_under_drain_is_escalated_and_the_next_runtime_finds_the_work_running(
        make: type[Backend], registry: Registry, tmp_path: Path) -> None:
    """RS-005 under draining-worker: the drain keeps b running and c queued through the
    grace period, the kill leaves them so, and the next runtime starts c in the slot b
    does not hold."""
    backend = (make() if make is SignalledMemoryBackend  # type: ignore[call-arg]
               else make(f"sqlite:///{tmp_path / 'jobs.db'}"))  # type: ignore[call-arg]
    with closing(Harness(backend, registry.profile("draining-worker"), registry,
                         max_concurrent=2)) as harness:
        for command in (cmd.Submit("a"), cmd.Submit("b"), cmd.Dispatch(),
                        cmd.Finish("a", cmd.Succeed(1)), cmd.Submit("c"),
                        cmd.AdvanceTime(2)):
            harness.run(command)
        assert harness.run(cmd.StopBySignal(10)) == cmd.ESCALATED_TO_SIGKILL
        for command in (cmd.Dispatch(), cmd.Finish("c", cmd.Succeed(3))):
            harness.run(command)
        assert "RS-005" in harness.exercised


def test_an_ignored_sigterm_is_escalated_and_the_message_says_so(registry: Registry) -> None:
    with closing(Harness(SigtermIgnored(), registry.profile("canonical"), registry,
                         max_concurrent=1)) as harness, pytest.raises(Divergence) as caught:
        _stopped_by_signal(harness)
    assert caught.value.primary == "RS-004"
    assert caught.value.expected == cmd.EXITED_ON_SIGTERM
    assert caught.value.actual == ("stopped by SIGTERM after 6 commands; escalated to"
                                   " SIGKILL after the grace period (10 s)")


def test_a_stop_by_signal_needs_the_claim_and_no_job_waiting_for_a_lease_pass(
        registry: Registry) -> None:
    with (closing(Harness(KeptMemoryBackend(), registry.profile("canonical"), registry)) as harness,
          pytest.raises(ValueError, match="does not claim restart and stop-signal")):
        harness.run(cmd.StopBySignal(10))
    with closing(Harness(SignalledMemoryBackend(), registry.profile("canonical"),
                         registry)) as harness:
        for command in (cmd.Submit("a"), cmd.Dispatch(), cmd.Restart()):
            harness.run(command)
        with pytest.raises(ValueError, match="restart"):
            harness.run(cmd.StopBySignal(10))


def test_a_stop_written_step_by_step_is_the_one_command_and_refuses_reads(
        registry: Registry) -> None:
    """The front-ends' GracePeriodOpened ... GracePeriodEnds runs one StopBySignal with the
    steps in between as its `during`; a read or a dispatch cannot come between, and the
    steps must fit in the grace period."""
    with closing(Harness(SignalledMemoryBackend(), registry.profile("draining-worker"),
                         registry, max_concurrent=1)) as harness:
        for command in (cmd.Submit("a"), cmd.Submit("b"), cmd.Dispatch()):
            harness.run(command)
        harness.run(GracePeriodOpened("SIGTERM", 10))
        with pytest.raises(ValueError, match="only bodies end and time passes"):
            harness.run(cmd.Get("a"))
        harness.run(cmd.AdvanceTime(3))
        harness.run(cmd.Finish("a", cmd.Succeed(1)))
        assert harness.run(GracePeriodEnds()) == cmd.ESCALATED_TO_SIGKILL  # b is queued
        assert harness.commands[-1] == cmd.StopBySignal(10, "SIGTERM", (
            cmd.AdvanceTime(3), cmd.Finish("a", cmd.Succeed(1))))
        # Killed at the grace period's end: its handlers are not looked at (RS-008).
        assert "RS-006" in harness.exercised and "RS-008" not in harness.exercised
        with pytest.raises(ValueError, match="more than the grace period"):
            harness.run(cmd.StopBySignal(2, during=(cmd.AdvanceTime(3),)))
