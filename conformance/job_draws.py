"""What every Hypothesis machine over the job runtime draws from: its limits, how a job's
body ends, and a job's arguments.

The lifecycle machine, the reaper's and the traces' replay (conformance/trace.py) run
the runtime with the same small limits, so a counterexample found by one replays under
the others; and a body ends the same ways whichever machine scripts it.
"""

from __future__ import annotations

from hypothesis import strategies as st

from jobconform.reference import commands as cmd
from jobconform.reference.lifecycle import JsonValue

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


# A job's arguments (LC-036): JSON values small enough to shrink fast, with the edges a
# store or a wire breaks drawn often: integers at the signed 64-bit bounds and just past
# a float's 53 bits of mantissa, floats (-0.0 and subnormals among them) apart from
# integers, strings of any code points but surrogates (no UTF-8 text holds those), and
# nesting a few levels deep.
INTEGER_EDGES = (2**63 - 1, -(2**63), 2**53 + 1, -(2**53) - 1)
# The characters `st.text()` draws by default (`characters(codec="utf-8")`), named by
# category instead: the same code points, so the same draws. Hypothesis finds a codec's
# characters by encoding every code point, once per working directory: 2 s of CPU in a
# fresh one, a twelfth of the main job; the table of categories costs a tenth of that.
TEXT_CHARACTERS = st.characters(exclude_categories=["Cs"])
JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(INTEGER_EDGES),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(TEXT_CHARACTERS, max_size=8),
)
job_arguments: st.SearchStrategy[JsonValue] = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.text(TEXT_CHARACTERS, max_size=4), inner,
                                            max_size=3)),
    max_leaves=6,
)
