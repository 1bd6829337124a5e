"""What an adapter implements for the tally area: `open_tally()` on its backend."""

from typing import Protocol, runtime_checkable


class Tally(Protocol):
    def increment(self) -> None: ...
    def reset(self) -> None: ...
    def value(self) -> int: ...


@runtime_checkable
class TallyBackend(Protocol):
    def open_tally(self) -> Tally: ...
