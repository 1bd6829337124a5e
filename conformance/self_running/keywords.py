"""Robot Framework keywords for a self-running runtime (robot/self_running.robot,
SR-001..SR-009), derived from its vocabulary (conformance/self_running/declarations.py).

`Open Self-Running Runtime` opens the backend's runtime with `open_self_running`
(``slots=``, ``job_timeout=``, ``lease=`` override the defaults); after that, keywords only
submit, end bodies, send heartbeats and let time pass, and the `SelfRunningHarness` reads
at every read point of an open window on the way: a runtime that acts early, late or never
fails the test with a `Divergence` naming the requirement. The backend and profile come
from ``${BACKEND}`` and ``${PROFILE}``; the lifecycle resource's listener skips tests of
unclaimed areas.
"""

from jobconform.conformance.self_running.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class SelfRunningLibrary(DerivedLibrary):
    """Drive one backend's self-running runtime per test."""

    VOCABULARY = VOCABULARY
