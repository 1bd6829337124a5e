"""Robot Framework keywords of the composite area (robot/composite.robot).

The commands' keywords are derived from their declarations (declarations.py) and go
through `CompositeHarness.run` (backend and oracle, compared); assertions read the
BACKEND's snapshot. The backend and profile come from ``${BACKEND}`` and
``${PROFILE}``; the lifecycle resource's listener skips tests of unclaimed areas.
"""

from __future__ import annotations

from robot.api.deco import keyword, library

from jobconform.conformance.area_keywords import AreaLibrary
from jobconform.conformance.composite.declarations import DECLARATIONS, add_composite_owners
from jobconform.conformance.composite.harness import CompositeHarness, composite_config
from jobconform.conformance.vocabulary import derive_keywords


def _number(text: str) -> int | float | str:
    """A Robot argument as the number it spells (parameters are numbers but for a few
    names like counted_classes, which stay text)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


@library(scope="TEST", auto_keywords=False)
class CompositeLibrary(AreaLibrary[CompositeHarness]):
    """Drive one backend composite runtime and the oracle per test."""

    START = "Start Composite"
    OPENS = "composite runtime"

    @keyword("Start Composite")
    def start_composite(self, *owners: str, **overrides: str) -> None:
        """A fresh composite runtime with `owners`, the profile's parameters overridden by
        ``name=value`` pairs of any composed area (parallel_cap=2, pause_threshold=2)."""
        harness = self._start(lambda backend, profile, registry: CompositeHarness(
            backend, profile, registry, composite_config(profile, **{
                name: _number(value) for name, value in overrides.items()})))
        for command in add_composite_owners(*owners):
            harness.run(command)

    # -- commands: derived from declarations.py (derive_keywords, at the end) --------------
    # -- assertions ---------------------------------------------------------------------------

    @keyword("Composite Work Should Be")
    def work_should_be(self, state: str, *works: str) -> None:
        """``state`` None: the work was never admitted."""
        shown = {work: value for work, _, value in self.harness.runtime.snapshot().executions}
        wanted = None if state == "None" else state
        for work in works:
            if shown.get(work) != wanted:
                raise AssertionError(f"composite work {work!r} is {shown.get(work)!r}, not"
                                     f" {wanted!r}")

    @keyword("Composite Job Should Be Refused")
    def should_be_refused(self, job: str) -> None:
        if self._answers.get(job) != "refused":
            raise AssertionError(f"job {job!r} should be refused, got"
                                 f" {self._answers.get(job)!r}")

    @keyword("Composite Loop Should Be")
    def loop_should_be(self, loop: str, status: str, runs: int) -> None:
        loops = {name: (shown, done) for name, shown, done
                 in self.harness.runtime.snapshot().loops}
        if loops.get(loop) != (status, runs):
            raise AssertionError(f"loop {loop!r} is {loops.get(loop)!r}, not"
                                 f" {(status, runs)!r}")

    @keyword("Composite Reminder Should Be")
    def reminder_should_be(self, reminder: str, status: str) -> None:
        shown = dict(self.harness.runtime.snapshot().reminders).get(reminder)
        if shown != status:
            raise AssertionError(f"reminder {reminder!r} is {shown!r}, not {status!r}")

    @keyword("Composite Breaker Should Be")
    def breaker_should_be(self, owner: str, state: str) -> None:
        breakers = {name: shown for name, shown, _ in self.harness.runtime.snapshot().breakers}
        if breakers.get(owner) != state:
            raise AssertionError(f"the breaker of {owner!r} is {breakers.get(owner)!r}, not"
                                 f" {state!r}")

    @keyword("Composite Admission Should Be Paused")
    def should_be_paused(self) -> None:
        if self.harness.runtime.snapshot().paused_until is None:
            raise AssertionError("the governor's pause should hold, but none is reported")


derive_keywords(CompositeLibrary, DECLARATIONS, lambda library: library)
