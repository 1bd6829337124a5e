"""The harness keeps its signal handlers when a runtime installs its own.

A worker that must run in the main thread usually must because it installs signal
handlers (`signal.signal` works in the main thread only): SIGTERM and SIGINT for a warm
shutdown, sometimes SIGHUP or SIGUSR1. The harness's thread is the main thread, and it
needs its own handlers: SIGINT to stop a run, and the watchdog's signal, which turns a
hung command into a failed case instead of a killed process. The adapter starts such a
worker inside `keeping_signal_handlers()`: whatever the worker installs there, the
harness's handlers are back afterwards. docs/runtime-shapes.md has the whole recipe.
"""

from __future__ import annotations

import signal
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from jobconform.conformance.watchdog import HANG_SIGNAL

HARNESS_SIGNALS = (signal.SIGINT, signal.SIGTERM, HANG_SIGNAL)


@contextmanager
def keeping_signal_handlers(signals: Iterable[signal.Signals] = HARNESS_SIGNALS,
                            ) -> Iterator[None]:
    """The handlers of `signals` after the block are the ones before it.

    Raises:
        ValueError: not called in the main thread (no handler can be set elsewhere).
    """
    before = {number: signal.getsignal(number) for number in signals}
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
