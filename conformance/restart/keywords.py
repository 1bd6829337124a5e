"""Robot Framework keywords for a restart over the same store (robot/restart.robot,
RS-001..RS-008).

A restart is one more command of the lifecycle library's harness: this library's
keywords, derived from the commands' declarations (declarations.py), run it through the
runtime that `Start Runtime` opened, so a suite imports both::

    *** Settings ***
    Resource    lifecycle.resource
    Library     jobconform.conformance.restart.keywords.RestartLibrary

Every other keyword of a restart test (submit, dispatch, lease passes, reads) is the
lifecycle library's; its listener skips a test whose requirements the backend does not
claim.
"""

from __future__ import annotations

from typing import cast

from robot.api.deco import library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.conformance.lifecycle.keywords import JobconformLibrary
from jobconform.conformance.restart.declarations import DECLARATIONS
from jobconform.conformance.vocabulary import derive_keywords

LIFECYCLE_LIBRARY = "jobconform.conformance.lifecycle.keywords.JobconformLibrary"


@library(scope="TEST", auto_keywords=False)
class RestartLibrary:
    """Restart the test's runtime over the same store."""


def _lifecycle(restart: RestartLibrary) -> JobconformLibrary:
    """The test's lifecycle library, whose harness runs the restart."""
    return cast(JobconformLibrary, BuiltIn().get_library_instance(LIFECYCLE_LIBRARY))


derive_keywords(RestartLibrary, DECLARATIONS, _lifecycle)
