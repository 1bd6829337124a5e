"""A backend that opens only the lifecycle but claims another area as well: what a loader
must refuse, naming the opener the area needs and the backend lacks."""

from __future__ import annotations


class LifecycleOnlyBackend:
    """Claims the lifecycle and `area`, and has the lifecycle's `open` alone."""

    profile = "canonical"

    def __init__(self, area: str, name: str = "half") -> None:
        self.name = name
        self.capabilities = frozenset({"lifecycle", area})

    def open(self, settings: object, clock: object) -> None:
        return None
