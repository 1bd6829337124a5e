"""Store faults as plain data: what the harness plans, shared by every area that has them.

A fault strikes one write of the store during the next command, counted from 1 in the
order the runtime makes them:

- `fail`: that write does not happen and the store says so (a dropped connection, a
  deadlock victim). The process lives on; nothing is lost if the runtime makes the write
  again.
- `crash`: the process dies just before that write. It and everything the runtime would
  have done after it never happen; everything before it did. The runtime is then
  restarted over the same store, as the area's restart command does.

The oracles read a fault in these terms and say what must hold after it: nothing lost,
nothing done twice, a legal state.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from jobconform.reference.numbers import is_whole_number


class FaultKind(StrEnum):
    FAIL = "fail"
    CRASH = "crash"


@dataclass(frozen=True)
class StoreFault:
    """Strike the `write`-th store write (from 1) of the next command with `kind`.

    Raises:
        ValueError: `kind` is not a fault kind, or `write` is not a whole number of at
            least 1.
    """

    kind: FaultKind
    write: int

    def __post_init__(self) -> None:
        # A fault read back from a trace carries its kind as the plain string; the checks
        # below compare members by identity, so the string is made the member again.
        if self.kind not in tuple(FaultKind):
            raise ValueError(f"a store fault is {' or '.join(FaultKind)}, not {self.kind!r}")
        object.__setattr__(self, "kind", FaultKind(self.kind))
        if not is_whole_number(self.write) or self.write < 1:
            raise ValueError(f"a store fault strikes write 1 or later, not {self.write!r}")

    def describe(self) -> str:
        if self.kind is FaultKind.FAIL:
            return f"store write {self.write} fails"
        return f"the process crashes at store write {self.write}"
