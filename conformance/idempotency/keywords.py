"""Robot Framework keywords of the idempotency area (robot/idempotency.robot), derived from
its vocabulary (conformance/idempotency/declarations.py): commands go through
`IdempotencyHarness.run` (backend and oracle, compared), checks read the BACKEND's
answers. The backend and profile come from ``${BACKEND}`` and ``${PROFILE}``; the
lifecycle resource's listener skips tests of unclaimed areas. Claims are named by handles
the test picks; time passes only through ``Advance Key Clock``.
"""

from jobconform.conformance.idempotency.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class IdempotencyLibrary(DerivedLibrary):
    """Drive one backend's idempotency runtime and the oracle per test."""

    VOCABULARY = VOCABULARY
