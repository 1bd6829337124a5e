"""Tell a runtime which reads follow, so that one behind a pipe answers them together.

After every command the harness settles the runtime and reads its whole state back. In
process, each of those calls is a method call; through the process protocol each is a
round trip to the child, and the round trips, not the work, were most of a step's time.
A runtime that can answer several calls in one exchange (the process backend's proxies,
with a child announcing `batch`) offers `plan_reads`; the harness says what it calls
next, and every other runtime is called exactly as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# A call the harness will make: the runtime, the method's name, its arguments by name.
PlannedCall = tuple[object, str, dict[str, Any]]


def plan_reads(reads: Sequence[PlannedCall], with_next_call: bool = False) -> None:
    """Announce the calls the harness makes next, a settle and then reads.

    Args:
        reads: the calls, in the order the harness makes them with no other call between
            (the harness may stop at a difference before it makes them all, so each after
            the first must be a read, or a settle of another runtime of the check that
            the harness makes straight after). A runtime without `plan_reads` (every one
            in process) is called as ever.
        with_next_call: the next call of any method of the first call's runtime (the
            command) comes first and is followed by `reads` and nothing else, so it may
            travel with them.
    """
    if not reads:
        return
    plan = getattr(reads[0][0], "plan_reads", None)
    if callable(plan):
        plan(list(reads), with_next_call)
