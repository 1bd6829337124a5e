"""Robot Framework keywords of the loops area (robot/loops.robot), derived from its
vocabulary (conformance/loops/declarations.py): commands go through `LoopsHarness.run`
(backend and oracle, compared), checks read the BACKEND's own loop record. The backend and
profile come from ``${BACKEND}`` and ``${PROFILE}``; the lifecycle resource's listener
skips tests of unclaimed areas. Loop parameters are given as named arguments whose values
are JSON (``max_runs=3``, ``message="go {{run}}"``, ``max_cost_usd=NaN``).
"""

from jobconform.conformance.loops.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class LoopsLibrary(DerivedLibrary):
    """One loop runtime and the oracle per test."""

    VOCABULARY = VOCABULARY
