"""Correct backends that claim only part of the spec, for checks about partial claims.

`lifecycle_only` is the memory backend claiming the lifecycle area alone. The kit must
report every other area as "not claimed" and skip what needs them (a regression trace
that uses a retry policy, say), never run it and never count it as passed.

`breaker_without_seams` is the memory backend without `breaker-seams`: its breaker has
every method of the area but the dispatch seams' (`backstop`, `record_missed_heartbeat`,
`set_drain_lost`), as a third-party breaker has. CB-014 and CB-015 must show "not
claimed" and the rest of the breaker area pass, the three methods never called.
"""

from __future__ import annotations

from typing import Any

from jobconform.backends.breaker.protocol import SEAM_METHODS
from jobconform.backends.breaker.runtime import StoreBreakerRuntime
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import BREAKER_SEAMS, LIFECYCLE, Clock
from jobconform.reference.breaker.oracle import BreakerSettings


class LifecycleOnlyBackend(MemoryBackend):
    name = "lifecycle-only"
    capabilities = frozenset({LIFECYCLE})


lifecycle_only = LifecycleOnlyBackend
LIFECYCLE_ONLY = f"{__name__}:lifecycle_only"


class BreakerWithoutSeams:
    """The memory breaker with the seams' methods taken away: asking for one raises
    AttributeError, as on a breaker that never had them."""

    def __init__(self, runtime: StoreBreakerRuntime) -> None:
        self._runtime = runtime

    def __getattr__(self, name: str) -> Any:
        if name in SEAM_METHODS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self._runtime, name)

    def peer(self) -> BreakerWithoutSeams:
        return BreakerWithoutSeams(self._runtime.peer())


class BreakerWithoutSeamsBackend(MemoryBackend):
    name = "breaker-without-seams"
    capabilities = MemoryBackend.capabilities - {BREAKER_SEAMS}

    def open_breaker(self, clock: Clock,  # type: ignore[override]
                     settings: BreakerSettings) -> BreakerWithoutSeams:
        return BreakerWithoutSeams(super().open_breaker(clock, settings))


breaker_without_seams = BreakerWithoutSeamsBackend
BREAKER_WITHOUT_SEAMS = f"{__name__}:breaker_without_seams"
