"""Robot Framework keywords of the scheduling area (robot/scheduling.robot), derived from
its vocabulary (conformance/scheduling/declarations.py): commands go through
`SchedulingHarness.run` (backend and oracle, compared), checks read the BACKEND's
schedules, histories, dispatches, pre-check calls and alerts. The backend and profile come
from ``${BACKEND}`` and ``${PROFILE}``; the lifecycle resource's listener skips tests of
unclaimed areas. ``Start Scheduling`` takes the clock's first instant as ``start=`` beside
the parameters it overrides (``missed_fires=all``). Schedules are named by aliases the test
picks; instants are ISO 8601 with an offset, and time passes only through the keywords that
advance the scheduling clock and the downtime of ``Restart Schedulers``.
"""

from jobconform.conformance.scheduling.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class SchedulingLibrary(DerivedLibrary):
    """Drive one backend's scheduler(s) and the oracle per test."""

    VOCABULARY = VOCABULARY
