"""Progress lines for long runs: how far a Hypothesis machine or the self-test has got,
and about how long is left.

A machine's examples are counted where every one of them starts: each example builds a
fresh harness, which opens one runtime on the backend (`open`, or `open_<area>` for a
service area). `CountingBackend` stands in front of the backend and counts those opens.
Hypothesis counts only valid examples towards `--examples`, so a machine may run a few
more (examples it discarded, or the shrinking of a divergence). The
estimate of the time left is the mean time per example so far times the examples still
to go. Lines are printed at most every `interval` seconds of real time (only the display
looks at the wall clock; the checks run on the virtual clock as always).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from jobconform.backends.protocol import Backend

Progress = Callable[[str], None]
# Seconds of real time between two progress lines of one long task.
PROGRESS_INTERVAL_SECONDS = 10.0


def duration(seconds: float) -> str:
    """`42 s`, `3 min 05 s`, `1 h 02 min`."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Meter:
    """Counts finished units of one task and reports done/total, elapsed and time left."""

    def __init__(self, label: str, total: int, unit: str, progress: Progress,
                 interval: float = PROGRESS_INTERVAL_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.done = 0
        self._progress = progress
        self._interval = interval
        self._clock = clock
        self._started = clock()
        self._last_line = self._started

    def line(self) -> str:
        elapsed = self._clock() - self._started
        if self.done > self.total:
            # Hypothesis counts only valid examples towards its total: past it, the runs
            # are examples it discarded, or the shrinking of a divergence.
            return (f"{self.label}: {self.done} runs for {self.total} {self.unit}"
                    f" (discarded or shrinking), {duration(elapsed)}")
        text = f"{self.label}: {self.done}/{self.total} {self.unit}, {duration(elapsed)}"
        if 0 < self.done < self.total:
            left = elapsed / self.done * (self.total - self.done)
            text += f", about {duration(left)} left"
        return text

    def advance(self, count: int = 1) -> None:
        """One more unit done; prints a line when the interval has passed since the last."""
        self.done += count
        now = self._clock()
        if now - self._last_line >= self._interval:
            self._last_line = now
            self._progress(self.line())


class CountingBackend:
    """The backend, unchanged, except that every runtime it opens advances `meter`."""

    def __init__(self, backend: Backend, meter: Meter) -> None:
        self._backend = backend
        self._meter = meter

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._backend, name)
        if (name == "open" or name.startswith("open_")) and callable(attribute):
            def opened(*args: Any, **kwargs: Any) -> Any:
                self._meter.advance()
                return attribute(*args, **kwargs)
            return opened
        return attribute
