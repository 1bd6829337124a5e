"""A real-time guard against a hung adapter.

The harness never waits on the wall clock to let time pass; this is the one exception
the project allows: if a single command does not return within a generous real-time
limit, the process prints what hung and dumps every thread's stack. When the guarded call
runs in the main thread, a signal then raises `AdapterHung` there: the case fails with
that message, the suites go on with fresh runtimes, and a report is written. Only if
that does not end the call either (a hang inside C code) does the process exit, instead of
hanging a CI job forever. Arming and disarming only set two attributes, so the guard
costs nothing per command. The limit reads the real clock (`real_monotonic`), so it fires
whatever a bridge or a test has frozen.

Every call into an adapter passes through this guard, so it is also where an adapter that
tries to end the process (`sys.exit`, a stray `GeneratorExit`) is turned into an ordinary
error: `except Exception` lets those through, and the run would stop with the adapter's
exit code and no report. Ctrl-C (`KeyboardInterrupt`) still stops the run.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from jobconform.conformance.clock import real_monotonic

EXIT_CODE_HUNG = 3
POLL_SECONDS = 0.5
# After the signal, how long the hung call gets to unwind before the process exits.
UNWIND_SECONDS = 10.0
HANG_SIGNAL = signal.SIGUSR2


class AdapterHung(RuntimeError):
    """A guarded call did not return within its real-time safety limit."""


class AdapterExited(RuntimeError):
    """A guarded call raised SystemExit or GeneratorExit: the adapter tried to end the run."""


def _raise_hung(signum: int, frame: object) -> None:
    raise AdapterHung(_WATCHDOG.hung_message)


class _Watchdog:
    def __init__(self) -> None:
        self._deadline: float | None = None
        self._what = ""
        self._limit = 0.0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._interruptible = False
        self.hung_message = ""

    def arm(self, seconds: float, what: str) -> None:
        self._limit, self._what = seconds, what
        self._interruptible = threading.current_thread() is threading.main_thread()
        if self._interruptible and signal.getsignal(HANG_SIGNAL) is not _raise_hung:
            signal.signal(HANG_SIGNAL, _raise_hung)
        self._deadline = real_monotonic() + seconds
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="jobconform-watchdog",
                                                daemon=True)
                self._thread.start()

    def disarm(self) -> None:
        self._deadline = None

    def _watch(self) -> None:
        while True:
            # This wait is the real-time safety limit itself, not a way to let time pass.
            threading.Event().wait(POLL_SECONDS)
            deadline = self._deadline
            if deadline is None or real_monotonic() <= deadline:
                continue
            self.hung_message = (f"{self._what} did not return within {self._limit:g} s of"
                                 " real time; the adapter hangs")
            if self._interruptible:
                # The case fails with this message; the report names it, no stacks needed.
                self._deadline = real_monotonic() + UNWIND_SECONDS
                self._interruptible = False
                signal.pthread_kill(threading.main_thread().ident or 0, HANG_SIGNAL)
                continue
            print(f"\njobconform: {self.hung_message} (stacks of every thread follow)",
                  file=sys.__stderr__, flush=True)
            faulthandler.dump_traceback(file=2, all_threads=True)
            os._exit(EXIT_CODE_HUNG)


_WATCHDOG = _Watchdog()


@contextmanager
def guarded(seconds: float, what: str) -> Iterator[None]:
    """Exit the process with a stack dump if the body runs longer than `seconds`.

    Raises:
        AdapterExited: the body raised SystemExit or GeneratorExit (chained to it).
    """
    if seconds > 0:
        _WATCHDOG.arm(seconds, what)
    try:
        yield
    except (SystemExit, GeneratorExit) as stop:
        shown = f"{type(stop).__name__}({stop.code!r})" if isinstance(stop, SystemExit) else (
            type(stop).__name__)
        raise AdapterExited(f"the adapter raised {shown} during {what}; an adapter must not"
                            " end the run, so this case fails and the run goes on") from stop
    finally:
        if seconds > 0:
            _WATCHDOG.disarm()
