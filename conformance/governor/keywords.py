"""Robot Framework keywords of the governor area (robot/governor.robot), derived from its
vocabulary (conformance/governor/declarations.py): commands go through `GovernorHarness.run`
(backend and oracle, compared), checks read the BACKEND's answers. The backend and profile
come from ``${BACKEND}`` and ``${PROFILE}``; the lifecycle resource's listener skips tests
of unclaimed areas.
"""

from jobconform.conformance.governor.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class GovernorLibrary(DerivedLibrary):
    """Drive one backend governor pair and the oracle per test."""

    VOCABULARY = VOCABULARY
