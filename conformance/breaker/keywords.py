"""Robot Framework keywords of the breaker area (robot/breaker.robot), derived from its
vocabulary (conformance/breaker/declarations.py): every keyword that changes something
sends its commands through `BreakerHarness.run` (backend and oracle, compared), and the
checks read the BACKEND's own answers and state. The backend and profile come from
``${BACKEND}`` and ``${PROFILE}``; the lifecycle resource's listener skips tests of
unclaimed areas. ``Start Breaker`` takes overrides of the profile's parameters.
"""

from jobconform.conformance.breaker.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class BreakerLibrary(DerivedLibrary):
    """Drive one backend breaker (two workers on one store) and the oracle per test."""

    VOCABULARY = VOCABULARY
