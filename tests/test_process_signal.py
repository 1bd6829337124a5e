"""A stop by signal over the process protocol (RS-004): the kit sends its child SIGTERM
between two requests and waits for the exit on a short real-time safety limit; the
reference child shuts its job runtimes down on the signal and exits, and a child that
ignores SIGTERM is killed, and the report says so."""

from __future__ import annotations

import sys
import time

import pytest

from jobconform.backends.process import ProcessBackend
from jobconform.backends.process.backend import reference_child_command
from jobconform.backends.process.errors import ChildExited
from jobconform.backends.process.session import ChildSession
from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.clock import EPOCH, VirtualClock

SAFETY_SECONDS = 30.0
# Short, so the escalation costs a fraction of a second of real time.
EXIT_LIMIT_SECONDS = 0.5

# The reference child with SIGTERM ignored and no handler of its own installed: the
# runtime that "ignores SIGTERM" of issue 32.
IGNORING_CHILD = (
    "import signal, sys\n"
    "import jobconform.backends.process.child as child\n"
    "child.install_stop_signal_handlers = lambda served: None\n"
    "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
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
    report = session.stop_by_signal(EXIT_LIMIT_SECONDS)
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
