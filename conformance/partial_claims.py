"""A correct backend that claims only part of the spec, for checks about partial claims.

`lifecycle_only` is the memory backend claiming the lifecycle area alone. The kit must
report every other area as "not claimed" and skip what needs them (a regression trace
that uses a retry policy, say), never run it and never count it as passed.
"""

from __future__ import annotations

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import LIFECYCLE


class LifecycleOnlyBackend(MemoryBackend):
    name = "lifecycle-only"
    capabilities = frozenset({LIFECYCLE})


lifecycle_only = LifecycleOnlyBackend
LIFECYCLE_ONLY = f"{__name__}:lifecycle_only"
