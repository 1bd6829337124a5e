"""Robot Framework keywords for a restart over the same store (robot/restart.robot,
RS-001..RS-004).

A restart is one more command of the lifecycle library's harness: this library runs it
on the runtime that `Start Runtime` opened, so a suite imports both::

    *** Settings ***
    Resource    lifecycle.resource
    Library     jobconform.conformance.restart.keywords.RestartLibrary

Every other keyword of a restart test (submit, dispatch, lease passes, reads) is the
lifecycle library's; its listener skips a test whose requirements the backend does not
claim.
"""

from __future__ import annotations

from typing import cast

from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.conformance.lifecycle.keywords import JobconformLibrary
from jobconform.reference import commands as cmd

LIFECYCLE_LIBRARY = "jobconform.conformance.lifecycle.keywords.JobconformLibrary"


@library(scope="TEST", auto_keywords=False)
class RestartLibrary:
    """Restart the test's runtime over the same store."""

    @keyword("Restart Runtime Over The Same Store")
    def restart(self) -> None:
        """The process stops without a shutdown and a new one opens over its store; the
        harness then compares every record, the listing and the health with the oracle."""
        lifecycle = cast(JobconformLibrary, BuiltIn().get_library_instance(LIFECYCLE_LIBRARY))
        lifecycle.harness.run(cmd.Restart())

    @keyword("Send SIGTERM To The Runtime")
    def stop_by_signal(self, grace_seconds: float = 10.0) -> None:
        """SIGTERM to the runtime's process, SIGKILL if it is still there when the grace
        period ends, and a new runtime over the same store (RS-004); the harness compares
        how it stopped, every record, the listing and the health with the oracle."""
        lifecycle = cast(JobconformLibrary, BuiltIn().get_library_instance(LIFECYCLE_LIBRARY))
        lifecycle.harness.run(cmd.StopBySignal(float(grace_seconds)))
