"""A stop by signal over the process protocol (RS-004): the kit sends its child SIGTERM
between two requests and waits for the exit on a short real-time safety limit; the
reference child shuts its job runtimes down on the signal and exits, and a child that
ignores SIGTERM is killed, and the report says so."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from jobconform.backends.process import ProcessBackend
from jobconform.backends.process import session as session_module
from jobconform.backends.process.backend import reference_child_command
from jobconform.backends.process.errors import ChildExited
from jobconform.backends.process.session import ChildSession
from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.backends.restart import RESTART, STOP_SIGNAL
from jobconform.backends.sql.database import SQL_URL_ENV
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import Divergence, Harness
from jobconform.reference import commands as cmd
from jobconform.spec import Registry

SAFETY_SECONDS = 30.0


# Short, so the escalation costs a fraction of a second of real time.
EXIT_LIMIT_SECONDS = 0.5
# For a child that does exit on the signal: it needs milliseconds, but on a loaded machine
# (two tox environments on two cores) its handler can take longer than the short limit,
# which would then read as an escalation.
EXITING_LIMIT_SECONDS = 10.0

# The reference child with SIGTERM ignored and no handler of its own installed: the
# runtime that "ignores SIGTERM" of issue 32.
IGNORING_CHILD = (
    "import signal, sys\n"
    "import jobconform.backends.process.child as child\n"
    "child.install_stop_signal_handlers = lambda served: None\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    "sys.exit(child.main())\n"
)

# The reference child whose stop leaves its handlers for SIGINT and SIGTERM in place of
# the ones it found (the runtime that "leaves its handlers installed"): its exit status
# still says honestly where they are.
LEAVING_CHILD = (
    "import signal, sys\n"
    "import jobconform.backends.process.child as child\n"
    "install = child.install_stop_signal_handlers\n"
    "def leave_installed(served):\n"
    "    found = signal.getsignal(signal.SIGTERM)\n"
    "    install(served)\n"
    "    return lambda: (0 if signal.getsignal(signal.SIGTERM) is found\n"
    "                    else child.HANDLERS_LEFT_EXIT_CODE)\n"
    "child.install_stop_signal_handlers = leave_installed\n"
    "sys.exit(child.main())\n"
)


def _open_with_work(session: ChildSession) -> None:
    """One job runtime in the child, with a job running and one queued."""
    backend = ProcessBackend(session=session)
    runtime = backend.open(RuntimeSettings(max_concurrent=1, max_tasks=None),
                           VirtualClock(EPOCH))
    runtime.submit(TaskScript())
    runtime.submit(TaskScript())
    runtime.dispatch()


def test_the_reference_child_shuts_down_on_sigterm_and_exits() -> None:
    session = ChildSession(reference_child_command(), SAFETY_SECONDS)
    _open_with_work(session)
    report = session.stop_by_signal(EXITING_LIMIT_SECONDS)
    assert (report.escalated, report.exit_code) == (False, 0)
    assert report.message == "exited on SIGTERM"
    # Its handler shut the runtime down (cancel mode: nothing is left active).
    session.stop()
    assert any("1 job runtime(s) shut down, 0 job(s) still active" in line
               for line in session._stderr)
    assert not session.alive
    with pytest.raises(ChildExited, match="cannot be sent SIGTERM"):
        session.stop_by_signal(EXIT_LIMIT_SECONDS)


def test_a_child_that_ignores_sigterm_is_killed_after_the_limit() -> None:
    session = ChildSession([sys.executable, "-c", IGNORING_CHILD], SAFETY_SECONDS)
    _open_with_work(session)
    answered = session.requests_answered
    started = time.monotonic()
    report = session.stop_by_signal(EXIT_LIMIT_SECONDS)
    assert time.monotonic() - started < EXIT_LIMIT_SECONDS + 5  # bounded in real time
    assert report.escalated and report.exit_code == -9 and report.requests == answered
    assert report.message == (f"stopped by SIGTERM after {answered} commands; escalated to"
                              " SIGKILL after the grace period")
    assert not session.alive


# -- restart and stop by signal through the protocol, the child serving sql over a file --------


def _end_sessions(*commands: list[str]) -> None:
    """Close the shared sessions of these command lines, so no later test of this worker
    finds a child serving another test's database."""
    for command in commands:
        ended = session_module._SESSIONS.pop(tuple(command), None)
        if ended is not None:
            ended.close()


@pytest.fixture
def sql_file_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The reference child serving the sql backend over a SQLite file: a store that
    outlives the child, so it claims restart and stop-signal."""
    monkeypatch.setenv(SQL_URL_ENV, f"sqlite:///{tmp_path / 'jobs.db'}")
    command = [*reference_child_command(), "--backend", "sql"]
    yield command
    _end_sessions(command, [sys.executable, "-c", IGNORING_CHILD, "--backend", "sql"],
                  [sys.executable, "-c", LEAVING_CHILD, "--backend", "sql"])


def _harness(command: list[str], registry: Registry) -> Harness:
    backend = ProcessBackend(command=command)
    assert {RESTART, STOP_SIGNAL} <= backend.capabilities
    return Harness(backend, registry.profile("canonical"), registry, max_concurrent=2)


def test_a_child_over_a_database_file_restarts_and_stops_by_signal(
        sql_file_child: list[str], registry: Registry) -> None:
    with closing(_harness(sql_file_child, registry)) as harness:
        for command in (cmd.Submit("a"), cmd.Submit("b"), cmd.Dispatch(),
                        cmd.Finish("a", cmd.Succeed(1)), cmd.Submit("c"), cmd.Restart(),
                        cmd.AdvanceTime(61), cmd.ExpireLeases(60), cmd.Dispatch(),
                        cmd.Finish("b", cmd.Succeed(2)), cmd.Submit("d"),
                        cmd.AdvanceTime(1), cmd.StopBySignal(10), cmd.Submit("e"),
                        cmd.Dispatch(), cmd.Finish("e", cmd.Succeed(5))):
            harness.run(command)
        assert {"RS-001", "RS-003", "RS-004"} <= harness.exercised


def test_a_draining_child_is_killed_at_the_grace_period_and_its_work_stays(
        sql_file_child: list[str], registry: Registry) -> None:
    """RS-005 under draining-worker: the child's SIGTERM handler drains, so with b
    running it stays, and the kit kills it; the next child finds b running, c queued."""
    with closing(Harness(ProcessBackend(command=sql_file_child),
                         registry.profile("draining-worker"), registry,
                         max_concurrent=2)) as harness:
        for command in (cmd.Submit("a"), cmd.Submit("b"), cmd.Dispatch(),
                        cmd.Finish("a", cmd.Succeed(1)), cmd.Submit("c"),
                        cmd.AdvanceTime(1)):
            harness.run(command)
        assert harness.run(cmd.StopBySignal(10)) == cmd.ESCALATED_TO_SIGKILL
        harness.run(cmd.Dispatch())
        harness.run(cmd.Finish("c", cmd.Succeed(3)))
        assert "RS-005" in harness.exercised


def test_a_child_that_ignores_sigterm_is_caught_at_rs_004(
        sql_file_child: list[str], registry: Registry) -> None:
    with closing(_harness([sys.executable, "-c", IGNORING_CHILD, "--backend", "sql"],
                          registry)) as harness, pytest.raises(Divergence) as caught:
        for command in (cmd.Submit("a"), cmd.Submit("b"), cmd.Dispatch(),
                        cmd.StopBySignal(10)):
            harness.run(command)
    assert caught.value.primary == "RS-004"
    assert caught.value.actual == ("stopped by SIGTERM after 3 commands; escalated to"
                                   " SIGKILL after the grace period (10 s)")


def test_a_child_over_an_in_memory_database_claims_no_restart(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SQL_URL_ENV, "sqlite://")
    with closing(ChildSession([*reference_child_command(), "--backend", "sql"],
                              SAFETY_SECONDS)) as session:
        claims = ProcessBackend(session=session).capabilities
    assert RESTART not in claims and STOP_SIGNAL not in claims
    assert "lifecycle" in claims


def test_a_restart_of_a_session_a_test_gave_leaves_the_shared_sessions_alone(
        sql_file_child: list[str], registry: Registry) -> None:
    given = ChildSession(sql_file_child, SAFETY_SECONDS)
    backend = ProcessBackend(session=given)
    harness = Harness(backend, registry.profile("canonical"), registry)
    try:
        for command in (cmd.Submit("a"), cmd.Restart(), cmd.Dispatch(),
                        cmd.Finish("a", cmd.Succeed(1))):
            harness.run(command)
        assert not given.alive and backend.session is not given and backend.session.alive
        assert tuple(sql_file_child) not in session_module._SESSIONS
    finally:
        harness.close()
        backend.session.close()


def test_a_draining_child_lets_a_body_end_in_the_grace_period_and_exits_when_drained(
        sql_file_child: list[str], registry: Registry) -> None:
    """RS-006 through the pipe: b ends 3 s into the grace period and is recorded so, and
    c is what the kill leaves; then a child whose last body ends in the grace period
    exits by itself (no kill)."""
    with closing(Harness(ProcessBackend(command=sql_file_child),
                         registry.profile("draining-worker"), registry,
                         max_concurrent=1)) as harness:
        for command in (cmd.Submit("b"), cmd.Submit("c"), cmd.Dispatch()):
            harness.run(command)
        stop = cmd.StopBySignal(10, during=(cmd.AdvanceTime(3),
                                            cmd.Finish("b", cmd.Succeed(2))))
        assert harness.run(stop) == cmd.ESCALATED_TO_SIGKILL
        for command in (cmd.Dispatch(), cmd.AdvanceTime(1)):
            harness.run(command)
        last = cmd.StopBySignal(10, during=(cmd.Finish("c", cmd.Succeed(3)),))
        assert harness.run(last) == cmd.EXITED_ON_SIGTERM
        assert {"RS-006", "RS-008"} <= harness.exercised


def test_a_child_stops_on_sigint_as_on_sigterm_and_puts_its_handlers_back(
        sql_file_child: list[str], registry: Registry) -> None:
    """RS-007 and RS-008: the child's exit status after the signal says its handlers are
    back."""
    with closing(_harness(sql_file_child, registry)) as harness:
        for command in (cmd.Submit("a"), cmd.Submit("b"), cmd.Dispatch()):
            harness.run(command)
        assert harness.run(cmd.StopBySignal(10, "SIGINT")) == cmd.exited_on("SIGINT")
        assert {"RS-007", "RS-008"} <= harness.exercised


def test_a_child_that_leaves_its_handlers_installed_is_caught_at_rs_008(
        sql_file_child: list[str], registry: Registry) -> None:
    with closing(_harness([sys.executable, "-c", LEAVING_CHILD, "--backend", "sql"],
                          registry)) as harness, pytest.raises(Divergence) as caught:
        for command in (cmd.Submit("a"), cmd.Dispatch(), cmd.StopBySignal(10)):
            harness.run(command)
    assert caught.value.primary == "RS-008"


def test_the_sigterm_ignoring_gallery_backends_share_one_child() -> None:
    # Children are shared by command line: a database folder per instance started a child
    # per instance, alive until the kit exits (hundreds in a run over every area).
    from jobconform.conformance.gallery.process import SigtermIgnoredBackend

    first, second = SigtermIgnoredBackend(), SigtermIgnoredBackend()
    assert first.session is second.session
