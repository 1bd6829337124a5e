"""Robot Framework keywords of the composite area (robot/composite.robot), derived from its
vocabulary (conformance/composite/declarations.py): commands go through
`CompositeHarness.run` (backend and oracle, compared), checks read the BACKEND's snapshot.
The backend and profile come from ``${BACKEND}`` and ``${PROFILE}``; the lifecycle
resource's listener skips tests of unclaimed areas.
"""

from jobconform.conformance.composite.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class CompositeLibrary(DerivedLibrary):
    """Drive one backend composite runtime and the oracle per test."""

    VOCABULARY = VOCABULARY
