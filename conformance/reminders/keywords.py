"""Robot Framework keywords of the reminders area (robot/*reminder*.robot), derived from
its vocabulary (conformance/reminders/declarations.py): commands go through
`ReminderHarness.run` (backend and oracle, compared), checks read the BACKEND's records,
answers and dispatches. The backend and profile come from ``${BACKEND}`` and
``${PROFILE}``; the lifecycle resource's listener skips tests of unclaimed areas.
Reminders are named by aliases the test picks; time passes only through
``Advance Reminder Clock`` and the downtime of ``Restart Reminders``.
"""

from jobconform.conformance.reminders.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class ReminderLibrary(DerivedLibrary):
    """Drive one backend's reminders runtime and the oracle per test."""

    VOCABULARY = VOCABULARY
