"""What a backend implements to claim `restart` (spec area restart, RS-001..RS-003) and
`stop-signal` (RS-004..RS-008).

A backend whose job store outlives its runtime (a database, not the process's memory)
claims the `restart` capability and has

    def restart(self, runtime: Runtime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> Runtime: ...

It stops `runtime` as its process would stop without a shutdown: its threads end and its
connections close, and it writes nothing more (a body it was running is let go, and that
job stays running in the store). Then it opens a new runtime over the same store, as a new
process given the same database would, with the same `settings` and `clock`, and returns
it; the harness uses only the new one from then on. `bodies` maps each job id the harness
submitted to its body: a real process finds a job's code by its task name, and the kit's
bodies are the harness's scripts, so the new runtime runs a job it claims with the body
given for its id (a job submitted to the new runtime runs the body submitted with it).

The new runtime holds every job the old one held, unchanged (RS-001), starts the queued
ones first in their order (RS-002), and leaves a job that was running to its lease pass
(RS-003). What was the process's own starts afresh: its health counters, its worker id.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from jobconform.backends.protocol import STOP_SIGNAL as STOP_SIGNAL
from jobconform.backends.protocol import Clock, Runtime, RuntimeSettings, TaskScript

RESTART = "restart"
# `stop-signal`, a stop by signal (RS-004..RS-008): SIGTERM or SIGINT, the profile's
# shutdown, the grace period's steps, SIGKILL at its end if work is left, the host's
# handlers back.


class RestartBackend(Protocol):
    """What a backend claiming `restart` adds to `jobconform.backends.protocol.Backend`."""

    def restart(self, runtime: Runtime, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> Runtime:
        """Stop `runtime` without a shutdown and open a new one over the same store.

        Args:
            runtime: a runtime this backend opened (with `open`, or by an earlier restart).
            settings, clock: the new runtime's, the same the old one had.
            bodies: the body of each job by its id.

        Returns:
            The new runtime; `runtime` is not used again.
        """
        ...


@dataclass(frozen=True)
class SignalPlan:
    """A stop by signal as the harness plans it (RS-004..RS-008).

    `signal` is "SIGTERM" or "SIGINT" (the same stop, RS-007). `steps` are what happens
    in the grace period, in order: each decides a body's end or lets virtual time pass
    (the clock is the harness's), and the last brings the clock to the grace period's
    end, `grace_seconds` after the signal. The backend runs each step and then lets its
    runtime catch up (a settle, while its process is still there), so a body that ends in
    the grace period ends then, and a drain timeout reached in it acts then.
    """

    signal: str
    grace_seconds: float
    steps: tuple[Callable[[], object], ...] = ()


@dataclass(frozen=True)
class SignalStop:
    """How a stop by signal went: the runtime opened after it, whether the stop had to
    be escalated to a kill because the old one had not exited when the grace period
    ended, and whether the signal handlers the host had before the runtime installed
    its own were back once it stopped (RS-008; None: not observable, as after a kill)."""

    runtime: Runtime
    escalated: bool
    handlers_restored: bool | None = None


class StopSignalBackend(RestartBackend, Protocol):
    """What a backend claiming `stop-signal` (RS-004..RS-008) adds beside `restart`."""

    def stop_by_signal(self, runtime: Runtime, settings: RuntimeSettings, clock: Clock,
                       bodies: Mapping[str, TaskScript], plan: SignalPlan) -> SignalStop:
        """Send `runtime`'s process `plan.signal`, run `plan.steps` (settling the runtime
        after each while its process is there); if it has not exited when the last
        step has brought the clock to the grace period's end, kill it; then open a new
        runtime over the same store as `restart` does.

        The grace period is virtual time: a real process is waited for on a short
        real-time safety limit only, never for the grace period in real time.
        """
        ...


STOP_SIGNAL_NAMES = ("SIGTERM", "SIGINT")


class StopSignalHandlers:
    """Handlers for SIGTERM and SIGINT that a runtime in the kit's own process installs
    (seed 000 Startup): each runs `on_signal(name)`, the runtime's stop. `restore` puts
    back the handlers that were there when `install` ran, the host's (RS-008)."""

    def __init__(self, on_signal: Callable[[str], None],
                 handled: tuple[str, ...] = STOP_SIGNAL_NAMES) -> None:
        self._on_signal = on_signal
        self._handled = handled
        self._previous: dict[signal.Signals, Any] = {}

    def install(self) -> None:
        for name in self._handled:
            signum = signal.Signals[name]
            self._previous[signum] = signal.getsignal(signum)
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self._on_signal(signal.Signals(signum).name)

    def restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        self._previous.clear()


def stop_in_process(runtime: Runtime, plan: SignalPlan, install: Callable[[], None],
                    reopen: Callable[[], Runtime],
                    taken: Callable[[], None] = lambda: None) -> SignalStop:
    """A stop by signal for a runtime that lives in the kit's own process, with a real
    signal.

    The kit stands in for the host: it puts handlers of its own for SIGTERM and SIGINT in
    place (they only note the signal, so one the runtime does not handle stops nothing),
    `install` has the runtime install its own, and the signal is raised in this process
    (CPython runs its handler before `raise_signal` returns; `taken` returns once what the
    handler started is done). The grace period's steps follow, each with a settle. The
    runtime has exited when no job is left queued or running; otherwise it is killed at
    the grace period's end, which for an in-process runtime is a restart without a
    shutdown: `reopen` opens the new runtime over the same store either way. Whatever
    the runtime did to them, the kit's own handlers are back when this returns.

    Raises:
        RuntimeError: not called from the main thread (Python takes signals there only).
    """
    if threading.current_thread() is not threading.main_thread():
        raise RuntimeError("a stop by signal in the kit's own process is sent from the main"
                           " thread, where Python runs signal handlers")
    signums = [signal.Signals[name] for name in STOP_SIGNAL_NAMES]
    kit_handlers = {signum: signal.getsignal(signum) for signum in signums}
    host_handlers: dict[signal.Signals, Any] = {signum: _noted for signum in signums}
    try:
        for signum, handler in host_handlers.items():
            signal.signal(signum, handler)
        install()
        signal.raise_signal(signal.Signals[plan.signal])
        taken()
        for step in plan.steps:
            step()
            runtime.settle()
        health = runtime.health()  # counts, so no status vocabulary is assumed
        escalated = health.queued + health.running > 0
        # A killed process leaves no handlers to look at: only an exit is checked.
        restored = None if escalated else all(signal.getsignal(signum) is handler
                                              for signum, handler in host_handlers.items())
    finally:
        for signum, handler in kit_handlers.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
    return SignalStop(reopen(), escalated, handlers_restored=restored)


def _noted(signum: int, frame: FrameType | None) -> None:
    """The stand-in host's handler: a signal no runtime handler took stops nothing."""


def shutdown_on_signal(runtime: Runtime,
                       handled: tuple[str, ...] = STOP_SIGNAL_NAMES) -> StopSignalHandlers:
    """The handlers of a runtime whose stop signal is its shutdown (the profile's mode):
    once it has taken the signal it puts the host's handlers back, so a second Ctrl-C
    reaches the host. `handled` names the signals it takes (the self-test's broken
    runtimes leave one out)."""

    def on_signal(name: str) -> None:
        handlers.restore()
        runtime.shutdown()

    handlers = StopSignalHandlers(on_signal, handled)
    return handlers
