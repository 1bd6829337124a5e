"""Robot Framework keywords of the governor area (robot/governor.robot).

Commands go through `GovernorHarness.run` (backend and oracle, compared); assertions read
the BACKEND's answers. The backend and profile come from ``${BACKEND}`` and ``${PROFILE}``;
the lifecycle resource's listener skips tests of unclaimed areas.
"""

from __future__ import annotations

from datetime import timedelta

from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.conformance import tolerance
from jobconform.conformance.area_keywords import AreaLibrary
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.governor.declarations import DECLARATIONS, OFFER, RESEND, WAIT
from jobconform.conformance.governor.harness import GovernorHarness, governor_settings
from jobconform.conformance.requirement_tags import requirement_tags
from jobconform.conformance.vocabulary import derive_keywords


@library(scope="TEST", auto_keywords=False)
class GovernorLibrary(AreaLibrary[GovernorHarness]):
    """Drive one backend governor and the oracle per test."""

    START = "Start Governor"
    OPENS = "governor"

    def _fail(self, message: str) -> AssertionError:
        ids = requirement_tags(BuiltIn().get_variable_value("@{TEST_TAGS}") or [])
        return tolerance.robot_failure(message, ids)

    @keyword("Start Governor")
    def start_governor(self, **overrides: str) -> None:
        """A fresh governor pair on one store, the profile's parameters overridden by
        ``name=value`` pairs (target_limit=2, pause_threshold=3)."""
        self._start(lambda backend, profile, registry: GovernorHarness(
            backend, profile, registry, governor_settings(profile, **overrides)))

    # -- commands: derived from declarations.py (derive_keywords, at the end) --------------
    # -- assertions ---------------------------------------------------------------------------

    @keyword("Re-Send Sweep Should Be Due At Second")
    def sweep_due(self, second: float | None, governor: int = 1) -> None:
        """``second`` None: no re-send sweep is due (no restart yet)."""
        actual = self.harness.workers[governor - 1].resend_sweep_at()
        wanted = None if second is None else EPOCH + timedelta(seconds=second)
        if actual != wanted:
            raise self._fail(f"governor {governor}'s first re-send sweep is due at"
                             f" {actual!r}, not {wanted!r}")

    @keyword("Envelopes Should Be Re-Sent At Seconds")
    def envelopes_at(self, seconds: str) -> None:
        """``seconds``: comma-separated, one per envelope asked about."""
        actual = self._answers.get(RESEND)
        wanted = tuple(EPOCH + timedelta(seconds=float(s)) for s in seconds.split(",")
                       if s.strip())
        if not (isinstance(actual, tuple) and len(actual) == len(wanted) and all(
                abs((got - want).total_seconds()) < 1e-6
                for got, want in zip(actual, wanted, strict=True))):
            raise self._fail(f"the envelopes are re-sent at {actual!r}, not {wanted!r}")

    @keyword("No Envelope Should Be Re-Sent")
    def no_envelopes(self) -> None:
        """The governor asked has not restarted: no sweep, nothing re-sent."""
        actual = self._answers.get(RESEND, "nothing asked")
        if actual is not None:
            raise self._fail(f"no envelope should be re-sent before a restart, got {actual!r}")

    @keyword("Re-Delivery Wait Should Be")
    def wait_should_be(self, ms: float) -> None:
        wait = self._answers.get(WAIT)
        if not isinstance(wait, float) or abs(wait - ms) > 1.0:
            raise self._fail(f"the re-delivery wait is {wait!r} ms, not {ms} ms")

    @keyword("Re-Delivery Should Be Accepted")
    def should_be_accepted(self) -> None:
        offer = self._answers.get(OFFER)
        if offer != (True, None):
            raise self._fail(f"the re-delivery should be accepted, got {offer!r}")

    @keyword("Re-Delivery Should Be Refused")
    def should_be_refused(self, retry_after_seconds: float) -> None:
        offer = self._answers.get(OFFER)
        if not (isinstance(offer, tuple) and offer[0] is False
                and isinstance(offer[1], int | float)
                and abs(offer[1] - retry_after_seconds) < 1e-6):
            raise self._fail(f"the re-delivery should be refused with a retry-after of"
                             f" {retry_after_seconds} s, got {offer!r}")

    @keyword("Pause Should End At Second")
    def pause_should_end(self, second: float | None, governor: int = 2) -> None:
        """``second`` None: no pause."""
        actual = self.harness.workers[governor - 1].paused_until()
        wanted = None if second is None else EPOCH + timedelta(seconds=second)
        if actual != wanted:
            raise self._fail(f"governor {governor} reports the pause ending {actual!r},"
                             f" not {wanted!r}")


derive_keywords(GovernorLibrary, DECLARATIONS, lambda library: library)
