"""Robot Framework keywords of the breaker area (robot/breaker.robot).

Every keyword that changes something sends one command through `BreakerHarness.run`, so
the backend's breaker and the oracle see the same command and a difference fails the test
with the harness's `Divergence`. The assertion keywords read the BACKEND's own answers and
state and compare them with the value the test states.

The backend and profile come from ``${BACKEND}`` and ``${PROFILE}`` as for the lifecycle
library (whose listener, loaded through ``lifecycle.resource``, skips tests of areas the
backend does not claim). ``Start Breaker`` takes overrides of the profile's parameters.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.conformance import tolerance
from jobconform.conformance.area_keywords import AreaLibrary
from jobconform.conformance.breaker.declarations import (
    BACKSTOP,
    DECLARATIONS,
    concurrent_answers_of,
    names,
)
from jobconform.conformance.breaker.harness import BreakerHarness, breaker_settings
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.vocabulary import derive_keywords
from jobconform.reference.breaker import commands as bc


@library(scope="TEST", auto_keywords=False)
class BreakerLibrary(AreaLibrary[BreakerHarness]):
    """Drive one backend breaker and the oracle per test."""

    START = "Start Breaker"
    OPENS = "breaker"

    def _fail(self, message: str) -> AssertionError:
        tags = BuiltIn().get_variable_value("@{TEST_TAGS}") or []
        ids = sorted(str(tag) for tag in tags if str(tag)[:3] == "CB-")
        return tolerance.robot_failure(
            message + (f" [test checks {', '.join(ids)}]" if ids else ""), ids)

    def _read(self, target: str, worker: int = 1) -> Any:
        return self.harness.workers[worker - 1].read(target)

    # -- setting up ----------------------------------------------------------------------

    @keyword("Start Breaker")
    def start_breaker(self, **overrides: str) -> None:
        """Open a fresh breaker (two workers on one store) with the profile's parameters,
        overridden by ``name=value`` pairs (failure_threshold=3, counted_classes=auth)."""
        self._start(lambda backend, profile, registry: BreakerHarness(
            backend, profile, registry, breaker_settings(profile, **overrides)))

    # -- commands: derived from declarations.py (derive_keywords, at the end); what
    # -- stays here is not a command alone ---------------------------------------------

    @keyword("Target Fails Calls")
    def fails_calls(self, target: str, count: int, failure_class: str) -> None:
        """``count`` calls to ``target`` arrive and each fails with ``failure_class``. Not a
        command alone: each call is named after the commands run so far."""
        for number in range(1, count + 1):
            call = f"{target}-{failure_class}-{len(self.harness.commands)}-{number}"
            self._answers[call] = self.run(bc.Call(target, call))
            self.run(bc.Report(target, call, "failure", failure_class))

    # -- assertions ----------------------------------------------------------------------

    @keyword("Answer Should Be")
    def answer_should_be(self, name: str, expected: str) -> None:
        """The backend's answer to call or work ``name``: admitted, probe, refused, queued."""
        actual = self._answers.get(name, "<never sent>")
        if actual != expected:
            raise self._fail(f"the answer to {name!r} should be {expected!r}, not {actual!r}")

    @keyword("Report Should Be")
    def report_should_be(self, name: str, expected: str) -> None:
        """The report kept under ``name`` (Report End), given as JSON (CB-018, CB-019)."""
        actual = self._answers.get(name, "<never sent>")
        if actual != json.loads(expected):
            raise self._fail(f"the report of {name!r} should be {expected}, not {actual!r}")

    @keyword("Backstop Should Have Failed")
    def backstop_failed(self, count: int) -> None:
        actual = self._answers.get(BACKSTOP, "<never run>")
        if actual != count:
            raise self._fail(f"the backstop sweep failed {actual!r} pieces of work, not"
                             f" {count}")

    @keyword("Concurrent Calls Should Get")
    def concurrent_should_get(self, probes: int, refused: int) -> None:
        wanted = {key: value for key, value in (("probe", probes), ("refused", refused))
                  if value}
        got = concurrent_answers_of(self._answers)
        if got != wanted:
            raise self._fail(f"the concurrent callers should get {wanted}, not {got}")

    @keyword("Breaker Should Be")
    def state_should_be(self, target: str, state: str, worker: int = 1) -> None:
        actual = getattr(self._read(target, worker), "state", "<unknown>")
        if actual != state:
            raise self._fail(f"worker {worker} reads {target!r} as {actual!r}, not {state!r}")

    @keyword("Breaker Should Count")
    def failures_should_be(self, target: str, failures: int) -> None:
        actual = getattr(self._read(target), "failures", None)
        if actual != failures:
            raise self._fail(f"{target!r} counts {actual} failures, not {failures}")

    @keyword("Cooldown Should Be")
    def cooldown_should_be(self, target: str, seconds: float) -> None:
        actual = getattr(self._read(target), "cooldown_seconds", None)
        if actual != seconds:
            raise self._fail(f"{target!r} has a cooldown of {actual} s, not {seconds} s")

    @keyword("Breaker Should Be Open Until Second")
    def open_until_should_be(self, target: str, second: float) -> None:
        actual = getattr(self._read(target), "open_until", None)
        wanted = EPOCH + timedelta(seconds=second)
        if actual != wanted:
            raise self._fail(f"{target!r} is open until {actual!r}, not {wanted!r}")

    @keyword("Probe Should Be")
    def probe_should_be(self, target: str, call: str | None) -> None:
        """``call`` is the probe in flight; give None for no probe."""
        actual = getattr(self._read(target), "probe", "<unreadable>")
        wanted = None if call in (None, "None") else call
        if actual != wanted:
            raise self._fail(f"the probe of {target!r} is {actual!r}, not {wanted!r}")

    @keyword("Breaker State Should Be Unknown")
    def state_unknown(self, target: str) -> None:
        actual = self._read(target)
        if actual is not None:
            raise self._fail(f"with the store down {target!r} should read unknown, not"
                             f" {actual!r}")

    @keyword("Queue Should Hold")
    def queue_should_hold(self, target: str, works: str = "") -> None:
        actual = tuple(self.harness.workers[0].queued(target))
        if actual != names(works):
            raise self._fail(f"the queue of {target!r} holds {actual}, not {names(works)}")

    @keyword("Failed Work Should Be")
    def failed_should_be(self, target: str, works: str = "") -> None:
        actual = tuple(self.harness.workers[0].failed_work(target))
        if actual != names(works):
            raise self._fail(f"the failed work of {target!r} is {actual}, not"
                             f" {names(works)}")

    @keyword("Logged Store Outages Should Be")
    def outages_should_be(self, count: int) -> None:
        actual = sum(worker.logged_outages() for worker in self.harness.workers)
        if actual != count:
            raise self._fail(f"{actual} store outages were logged, not {count}")

    # -- the profile's own values ------------------------------------------------------------

    @keyword("Target Fails Below Threshold")
    def fails_below_threshold(self, target: str) -> None:
        """One counted failure fewer than the profile's threshold."""
        assert self.harness.settings is not None
        self.fails_calls(target, self.harness.settings.failure_threshold - 1, "auth")

    @keyword("Wait Out Cooldown")
    def wait_out_cooldown(self, target: str) -> None:
        """The breaker clock moves by the cooldown the backend reads for ``target``."""
        cooldown = getattr(self._read(target), "cooldown_seconds", None)
        if not isinstance(cooldown, float):
            raise self._fail(f"the backend reads no cooldown for {target!r}: {cooldown!r}")
        self.run(bc.PassTime(cooldown))

    @keyword("Cooldown Should Follow The Profile")
    def cooldown_follows_profile(self, target: str, failed_probes: int) -> None:
        """The profile's base cooldown grown by ``failed_probes`` failed probes, capped."""
        settings = self.harness.settings
        assert settings is not None
        wanted = settings.cooldown_seconds
        for _ in range(failed_probes):
            wanted = min(wanted * settings.cooldown_multiplier, settings.cooldown_max_seconds)
        self.cooldown_should_be(target, wanted)


derive_keywords(BreakerLibrary, DECLARATIONS, lambda library: library)
