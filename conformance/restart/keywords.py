"""Robot Framework keywords for a restart over the same store (robot/restart.robot,
RS-001..RS-008), derived from its vocabulary (conformance/restart/declarations.py).

A restart is one more command of the lifecycle library's harness: these keywords run it
through the runtime that `Start Runtime` opened, so a suite imports both::

    *** Settings ***
    Resource    lifecycle.resource
    Library     jobconform.conformance.restart.keywords.RestartLibrary

Every other keyword of a restart test (submit, dispatch, lease passes, reads) is the
lifecycle library's; its listener skips a test whose requirements the backend does not
claim.
"""

from jobconform.conformance.restart.declarations import VOCABULARY
from jobconform.conformance.vocabulary import DerivedLibrary


class RestartLibrary(DerivedLibrary):
    """Restart the test's runtime over the same store."""

    VOCABULARY = VOCABULARY
