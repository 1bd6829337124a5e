"""Backends for the tally area: the kit's memory runtime, plus a tally (right or broken)."""

from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings


class CountingTally:
    def __init__(self) -> None:
        self.count = 0

    def increment(self) -> None:
        self.count += 1

    def reset(self) -> None:
        self.count = 0

    def value(self) -> int:
        return self.count


class ResetIgnoredTally(CountingTally):
    """The broken tally: a reset does nothing (TL-002)."""

    def reset(self) -> None:
        pass


class TallyBackend:
    name = "tally"
    profile = "canonical"
    capabilities = frozenset({"tally"})
    tally_type: type[CountingTally] = CountingTally

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return MemoryBackend().open(settings, clock)

    def open_tally(self) -> CountingTally:
        return self.tally_type()


class BrokenTallyBackend(TallyBackend):
    name = "tally-broken"
    tally_type = ResetIgnoredTally
