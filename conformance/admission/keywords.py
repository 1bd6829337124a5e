"""Robot Framework keywords of the admission area (robot/admission.robot), derived from its
vocabulary (conformance/admission/declarations.py): commands go through
`AdmissionHarness.run` (backend and oracle, compared) and return the backend's answer;
checks read that answer or the BACKEND's admission runtime. The backend and profile come
from ``${BACKEND}`` and ``${PROFILE}``; the lifecycle resource's listener skips tests of
unclaimed areas.
"""

from jobconform.conformance.admission.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class AdmissionLibrary(DerivedLibrary):
    """One admission runtime per test, opened by ``Start Admission Runtime``."""

    VOCABULARY = VOCABULARY
