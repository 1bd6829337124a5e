"""What every Hypothesis machine over the job runtime draws from: its limits and how a
job's body ends.

The lifecycle machine, the reaper's and the traces' replay (conformance/trace.py) run
the runtime with the same small limits, so a counterexample found by one replays under
the others; and a body ends the same ways whichever machine scripts it.
"""

from __future__ import annotations

from hypothesis import strategies as st

from jobconform.reference import commands as cmd

# Two slots and a cap of four records: a full cap and a queue behind busy slots are a
# few steps away.
MACHINE_SLOTS = 2
MACHINE_TASK_CAP = 4
# The executions query's page size on the machine's runtime: below its task cap, so that
# a page without a limit, or with a larger one, meets it (LC-032).
MACHINE_PAGE_SIZE = 3
ERROR_TYPES = ("ValueError", "TimeoutError", "PlanError")

# A server's retry-after on a raised error: none, below, near and above typical delays.
RETRY_AFTERS = st.one_of(st.none(), st.sampled_from([500.0, 3000.0, 20_000.0]))


def outcomes_with(
        retry_afters: st.SearchStrategy[float | None]) -> st.SearchStrategy[cmd.Outcome]:
    """How a body ends: a result, or an error carrying one of these retry-afters."""
    return st.one_of(
        st.builds(cmd.Succeed,
                  st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["ok", ""]))),
        st.builds(cmd.Raise, st.sampled_from(ERROR_TYPES), st.sampled_from(["boom", "", "a: b"]),
                  retry_afters),
    )


outcomes = outcomes_with(RETRY_AFTERS)
