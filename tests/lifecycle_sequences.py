"""Random sequences of lifecycle commands, for the differential tests of the oracle and of
the memory and threaded backends against it.

Each Submit names a fresh alias ("j0", "j1", ...); every other command names a job
submitted earlier or "ghost", which no Submit names. The tests differ only in which kinds
they draw, how often, and from which values, so those are the arguments.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from hypothesis import strategies as st

from jobconform.reference import commands as cmd


@st.composite
def lifecycle_commands(draw: st.DrawFn, *, max_size: int, kinds: Sequence[str],
                       outcomes: st.SearchStrategy[cmd.Outcome], seconds: Sequence[float],
                       ages: Sequence[float],
                       statuses: Sequence[str | None] = ()) -> list[cmd.Command]:
    """Up to `max_size` commands of `kinds` (a kind listed twice is drawn twice as often):
    "submit", "dispatch", "finish" (with one of `outcomes`), "cancel", "time" (one of
    `seconds`), "cleanup" (one of `ages`), "shutdown", "get", "result", "read" (a get or a
    result, evenly) and "list" (one of `statuses`)."""
    fresh = (f"j{number}" for number in itertools.count())
    used: list[str] = []
    commands: list[cmd.Command] = []
    for _ in range(draw(st.integers(0, max_size))):
        kind = draw(st.sampled_from(list(kinds)))
        any_alias = st.sampled_from([*used, "ghost"])
        if kind == "submit":
            used.append(next(fresh))
            commands.append(cmd.Submit(used[-1], ignores_cancel=draw(st.booleans())))
        elif kind == "dispatch":
            commands.append(cmd.Dispatch())
        elif kind == "finish":
            commands.append(cmd.Finish(draw(any_alias), draw(outcomes)))
        elif kind == "cancel":
            commands.append(cmd.Cancel(draw(any_alias)))
        elif kind == "time":
            commands.append(cmd.AdvanceTime(draw(st.sampled_from(list(seconds)))))
        elif kind == "cleanup":
            commands.append(cmd.Cleanup(draw(st.sampled_from(list(ages)))))
        elif kind == "shutdown":
            commands.append(cmd.Shutdown())
        elif kind == "get" or (kind == "read" and draw(st.booleans())):
            commands.append(cmd.Get(draw(any_alias)))
        elif kind in ("result", "read"):
            commands.append(cmd.GetResult(draw(any_alias)))
        elif kind == "list":
            commands.append(cmd.ListJobs(draw(st.sampled_from(list(statuses)))))
        else:
            raise ValueError(f"no command kind {kind!r}")
    return commands
