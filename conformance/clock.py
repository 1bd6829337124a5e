"""The virtual clock: time passes only when the harness advances it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

# A fixed start so that every run sees the same timestamps.
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class VirtualClock:
    def __init__(self, start: datetime = EPOCH) -> None:
        if start.utcoffset() != timedelta(0):
            raise ValueError(f"the virtual clock starts at a UTC instant, not {start!r}")
        self._now = start

    def now(self) -> datetime:
        return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward.

        Raises:
            ValueError: seconds is negative or not finite; time never goes back.
        """
        if not 0 <= seconds < float("inf"):
            raise ValueError(f"the clock only moves forward by a finite amount, not {seconds!r}")
        self._now += timedelta(seconds=seconds)
