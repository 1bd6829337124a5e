"""A real-time guard against a hung adapter.

The harness never waits on the wall clock to let time pass; this is the one exception
the project allows: if a single command does not return within a generous real-time
limit, the process prints what hung and dumps every thread's stack. When the guarded call
runs in the main thread, a signal then raises `AdapterHung` there: the case fails with
that message, the suites go on with fresh runtimes, and a report is written. Only if
that does not end the call either (a hang inside C code) does the process exit, instead of
hanging a CI job forever. A call that ends past its limit before the watchdog's next
look (it looks twice a second) hung all the same, whether it returned or raised: the limit
is the verdict, not the poll. Arming and disarming only set two attributes, so the guard
costs nothing per command. The limit reads the real clock (`real_monotonic`), so it fires
whatever a bridge or a test has frozen.

A hang is diagnosed once per scope (an adapter's runtime, or one of its service areas):
the first hung call's error carries every thread's stack, and every later guarded call of
that scope in this process fails at once, without calling the adapter, with an error that
points back to the first. A backend that hangs on every case therefore costs one safety
limit per area and suite process, not one per case. The signal raises a `BaseException`
inside the adapter's call, so that no `except Exception` of the adapter or of a harness
wrapper mistakes it for the adapter's own error; `guarded` turns it into `AdapterHung`.

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
import traceback
from collections.abc import Callable, Sequence
from importlib import import_module
from types import TracebackType
from typing import TypeVar

from jobconform.backends.process.errors import ChildHung
from jobconform.conformance.clock import real_monotonic

# What a guarded call is: its text, or a function that writes it, called only when the text
# is shown (a hang, an exit); most calls return, and a command's text costs a step's worth.
What = str | Callable[[], str]


def _text(what: What) -> str:
    return what if isinstance(what, str) else what()


# The handler installed for a signal, as the C function answers it: signal.getsignal turns
# the answer into an enum member where it can, and the failed lookup of a function costs
# more than a command of the memory backend (issue 33); `arm` reads it at every call.
_installed_handler: Callable[[int], object] = import_module("_signal").getsignal

EXIT_CODE_HUNG = 3
POLL_SECONDS = 0.5
# After the signal, how long the hung call gets to unwind before the process exits.
UNWIND_SECONDS = 10.0
HANG_SIGNAL = signal.SIGUSR2
# The first words of every hang's message: the runner reads a case's verdict from them
# (a case that hung is the adapter's verdict, "adapter hung", not a requirement's).
HUNG_MARK = "ADAPTER HUNG:"
# How many innermost frames of each thread a hang's message shows.
STACK_FRAMES = 12


class AdapterError(RuntimeError):
    """The adapter raised where the protocol allows no exception, or hung."""


class AdapterHung(AdapterError):
    """A guarded call did not return within its real-time safety limit, or was not tried
    because an earlier call of the same scope hung."""


class AdapterExited(RuntimeError):
    """A guarded call raised SystemExit or GeneratorExit: the adapter tried to end the run."""


class _HangSignal(BaseException):
    """Raised in the main thread by the watchdog's signal; `guarded` turns it into
    AdapterHung once it has left the adapter's code."""


def _raise_hung(signum: int, frame: object) -> None:
    raise _HangSignal(_WATCHDOG.hung_message)


def thread_stacks(leaving_out: int | None = None) -> str:
    """Every thread's innermost frames, named, for a hang's message (but the watchdog's
    and the thread `leaving_out`)."""
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    parts = []
    # sys._current_frames is the documented way to read another thread's stack.
    for ident, frame in sys._current_frames().items():
        if names.get(ident) == "jobconform-watchdog" or ident == leaving_out:
            continue
        stack = "".join(traceback.format_stack(frame)[-STACK_FRAMES:])
        parts.append(f"thread {names.get(ident, ident)!r}:\n{stack.rstrip()}")
    return "\n".join(parts)


class _Watchdog:
    def __init__(self) -> None:
        self._deadline: float | None = None
        self._what: What = ""
        self._limit = 0.0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._interruptible = False
        self._scope = ""
        self.hung_message = ""
        # scope -> its first hang's message, stacks included (see `guarded`).
        self.hung_scopes: dict[str, str] = {}

    def arm(self, seconds: float, what: What, scope: str) -> None:
        self._limit, self._what, self._scope = seconds, what, scope
        self._interruptible = threading.current_thread() is threading.main_thread()
        if self._interruptible and _installed_handler(HANG_SIGNAL) is not _raise_hung:
            signal.signal(HANG_SIGNAL, _raise_hung)
        self._deadline = real_monotonic() + seconds
        if self._thread is not None:  # started once; the lock is for the first arm only
            return
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
            self.hung_message = _hang_text(self._what, self._limit)
            if self._interruptible:
                # The case fails with this message and the stacks; the later calls of the
                # scope are not tried (see `guarded`).
                self.hung_message += ("\nthe stacks of the threads when it hung (innermost"
                                      f" last):\n{thread_stacks()}")
                self.hung_scopes[self._scope] = self.hung_message
                self._deadline = real_monotonic() + UNWIND_SECONDS
                self._interruptible = False
                signal.pthread_kill(threading.main_thread().ident or 0, HANG_SIGNAL)
                continue
            print(f"\njobconform: {self.hung_message} (stacks of every thread follow)",
                  file=sys.__stderr__, flush=True)
            faulthandler.dump_traceback(file=2, all_threads=True)
            os._exit(EXIT_CODE_HUNG)


_WATCHDOG = _Watchdog()


def _hang_text(what: What, limit: float, ending: str = "") -> str:
    """A hang's first line: the call, its real-time safety limit, and how it ended if it
    did (`ending`)."""
    return (f"{HUNG_MARK} {_text(what)} did not return within {limit:g} s of real time"
            f" (the kit's real-time safety timeout){ending}; the adapter hangs")


def _overran(what: What, limit: float, scope: str, elapsed: float,
             error: BaseException | None) -> AdapterHung:
    """A guarded call that ended after its limit, before the watchdog's next look: the
    limit is the verdict, not the poll, so it hung as much as one the signal stopped (a
    library's own join that gives up at the same limit and raises would otherwise be the
    adapter's error in one run and a hang in the next)."""
    raised = error.__cause__ or error if isinstance(error, AdapterError) else error
    ending = f": it ended after {elapsed:.1f} s"
    if raised is not None:
        first_line = str(raised).strip().partition("\n")[0]
        ending += f", raising {type(raised).__name__}: {first_line}"
    # The calling thread's own stack is the kit's, past the call: the others are shown.
    others = thread_stacks(threading.get_ident()) or "(no other thread)"
    message = (_hang_text(what, limit, ending) + "\nthe stacks of the other threads as it"
               f" ended (innermost last):\n{others}")
    _WATCHDOG.hung_scopes.setdefault(scope, message)
    return AdapterHung(message)


def hung(scope: str, message: str) -> AdapterHung:
    """A hang the adapter reported itself (a process child past its own safety limit):
    recorded like one the watchdog caught, so the later calls of `scope` are not tried."""
    text = f"{HUNG_MARK} {message}"
    _WATCHDOG.hung_scopes.setdefault(scope, text)
    return AdapterHung(text)


def hangs() -> list[str]:
    """The first hang's message of each scope that hung since `forget_hangs`, in order."""
    return list(_WATCHDOG.hung_scopes.values())


def forget_hangs() -> None:
    """Start a run with no scope marked hung (the self-test runs many backends in one
    process)."""
    _WATCHDOG.hung_scopes.clear()


class _Interrupts:
    """Whether an adapter call raised KeyboardInterrupt since `forget_interrupts`: Robot
    Framework, which runs in this process, takes one raised inside a keyword as its own
    stop and returns, so the run learns of it only here."""

    raised = False


def note_adapter_interrupt() -> None:
    _Interrupts.raised = True


def adapter_interrupted() -> bool:
    return _Interrupts.raised


T = TypeVar("T")


def call_adapter(function: Callable[[], T], action: str, *, backend: str, protocol: str,
                 allowed: tuple[type[Exception], ...], hang_scope: str) -> T:
    """Call the adapter for `action`, as every harness does.

    Args:
        backend: the backend's name, for the message.
        protocol: what allows no exception there ("the protocol", "the breaker protocol").
        allowed: the exceptions that pass through as raised (the protocol's own, and the
            harness's verdicts).
        hang_scope: the scope a hung process child marks as hung.

    Raises:
        AdapterError: any other exception (`AdapterHung` where the process child hung).
        KeyboardInterrupt: as raised, noted first because Robot would swallow it.
    """
    try:
        return function()
    except allowed:
        raise
    except ChildHung as error:
        raise hung(hang_scope, f"{action}: {error}") from error
    except Exception as error:
        raise AdapterError(
            f"adapter {backend!r} raised {type(error).__name__}: {error}"
            f" during {action}; {protocol} allows no exception there"
        ) from error
    except KeyboardInterrupt:
        note_adapter_interrupt()  # Robot would swallow it (watchdog._Interrupts)
        raise


def forget_interrupts() -> None:
    _Interrupts.raised = False


def guarded(seconds: float, what: What, scope: str = "adapter") -> _Guard:
    """Fail the body with AdapterHung if it runs longer than `seconds` (or exit the process
    with a stack dump when it cannot be interrupted).

    `what` names the call in those messages: a text, or a function writing it, called only
    when a message shows it.

    `scope` names what a hang puts out of use: once a call of the scope hung, every later
    guarded call of it raises AdapterHung at once instead of running its body.

    Raises:
        AdapterHung: the body hung, or an earlier call of the same scope did.
        AdapterExited: the body raised SystemExit or GeneratorExit (chained to it).
    """
    return _Guard(seconds, what, scope)


class _Guard:
    """`guarded`'s context: a class, as a generator-based one costs three times as much
    and wraps every adapter call (issue 33)."""

    __slots__ = ("_scope", "_seconds", "_started", "_what")

    def __init__(self, seconds: float, what: What, scope: str) -> None:
        self._seconds, self._what, self._scope = seconds, what, scope
        self._started = 0.0

    def __enter__(self) -> None:
        first = _WATCHDOG.hung_scopes.get(self._scope)
        if first is not None:
            said = first.splitlines()[0].removeprefix(HUNG_MARK).strip()
            raise AdapterHung(f"{HUNG_MARK} {_text(self._what)} was not tried: an earlier"
                              f" call of the same adapter hung ({said}); every later case of"
                              " this area is blocked, the first one shows the stacks")
        if self._seconds > 0:
            self._started = real_monotonic()
            _WATCHDOG.arm(self._seconds, self._what, self._scope)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        if self._seconds > 0:
            _WATCHDOG.disarm()
        if isinstance(error, _HangSignal):
            raise AdapterHung(str(error)) from None
        if self._seconds > 0 and not isinstance(error, AdapterHung | KeyboardInterrupt) and (
                elapsed := real_monotonic() - self._started) > self._seconds:
            raise _overran(self._what, self._seconds, self._scope, elapsed, error) from error
        if isinstance(error, SystemExit | GeneratorExit):
            shown = (f"{type(error).__name__}({error.code!r})"
                     if isinstance(error, SystemExit) else type(error).__name__)
            raise AdapterExited(f"the adapter raised {shown} during {_text(self._what)}; an"
                                " adapter must not end the run, so this case fails and the"
                                " run goes on") from error


def run_at_once(call: Callable[[int], None], names: Sequence[str], limit: float,
                what: str, others: str) -> None:
    """`call(index)` on a daemon thread of its own for each of the thread `names`, every
    thread started before any is waited for, each waited for at most `limit` seconds of
    real time (a check's calls that must reach the adapter together).

    Raises:
        AdapterError: a thread is still running after its wait: `what` on it did not
            finish while the `others` too.
    """
    threads = [threading.Thread(target=call, args=(index,), daemon=True, name=name)
               for index, name in enumerate(names)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=limit)
        if thread.is_alive():
            raise AdapterError(f"{what} on {thread.name} did not finish within {limit:g} s"
                               f" of real time while other threads {others} too")
