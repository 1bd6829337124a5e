"""Robot Framework keywords of task stores (robot/store.robot), derived from the store's
vocabulary (conformance/store/declarations.py): every operation goes through
`StoreHarness.run` (store and oracle, compared), the checks read the store's own last
answer and the records it handed out. The backend and profile come from ``${BACKEND}``
and ``${PROFILE}``; the lifecycle resource's listener skips tests of unclaimed areas. The
test's store opens on its first keyword.
"""

from jobconform.conformance.store.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class StoreLibrary(DerivedLibrary):
    """Drive one backend's task store and the oracle per test."""

    VOCABULARY = VOCABULARY
