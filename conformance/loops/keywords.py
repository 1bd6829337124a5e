"""Robot Framework keywords for sequential agent loops (spec/loops.yaml, LP-001..LP-019).

Every keyword that changes something (those that send one command are derived from
conformance/loops/declarations.py) drives the `LoopsHarness`, so the backend and the
oracle see the same command and any difference fails the test with the harness's
`Divergence`. The assertion keywords read the BACKEND's own loop record and compare it
with the value the test states.

Usage::

    *** Settings ***
    Resource    lifecycle.resource    # its library skips tests of unclaimed areas
    Library     jobconform.conformance.loops.keywords.LoopsLibrary

The backend and profile come from ``${BACKEND}`` and ``${PROFILE}`` as for the lifecycle
library. Loop parameters are given as named arguments whose values are JSON
(``max_runs=3``, ``message="go {{run}}"``, ``max_cost_usd=NaN``).
"""

from __future__ import annotations

from datetime import timedelta

from robot.api import SkipExecution
from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.loops.protocol import LoopSnapshot, RunSnapshot
from jobconform.backends.loops.runner import LOOP_TRIGGER
from jobconform.conformance import tolerance
from jobconform.conformance.area_keywords import AreaLibrary
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.loops.declarations import (
    DECLARATIONS,
    start_loop,
    stop_loop,
    written_value,
)
from jobconform.conformance.loops.harness import (
    LoopsHarness,
    loop_event_matches,
    run_event_matches,
    same_cost,
)
from jobconform.conformance.vocabulary import derive_keywords
from jobconform.reference.loops import commands as lc


@library(scope="TEST", auto_keywords=False)
class LoopsLibrary(AreaLibrary[LoopsHarness]):
    """One loop runtime and the oracle per test."""

    START = "Start Loop Runtime"
    OPENS = "loop runtime"

    def _mismatch(self, what: str, expected: object, actual: object) -> AssertionError:
        tags = [str(t) for t in BuiltIn().get_variable_value("@{TEST_TAGS}") or []
                if str(t).startswith("LP-")]
        return tolerance.robot_failure(f"requirement(s): {', '.join(sorted(tags))}\n"
                                       f"  what: {what}\n  expected: {expected!r}\n"
                                       f"  actual:   {actual!r}", tags)

    def _view(self, alias: str) -> LoopSnapshot:
        loop_id = self.harness.ids.get(alias)
        if loop_id is None:
            raise self._mismatch(f"loop {alias!r} should have been started", "an id", None)
        view = self.harness.runtime.get_loop(loop_id)
        if view is None:
            raise self._mismatch(f"loop {alias!r} should be held", "a record", None)
        return view

    def _run(self, alias: str, number: int) -> RunSnapshot:
        runs = self._view(alias).runs
        if not 1 <= number <= len(runs):
            raise self._mismatch(f"loop {alias!r} run {number}", f"run {number}",
                                 f"{len(runs)} runs")
        return runs[number - 1]

    # -- actions: the commands are derived from declarations.py (derive_keywords, at the
    # -- end) ------------------------------------------------------------------------------

    @keyword("Start Loop Runtime")
    def start_loop_runtime(self) -> None:
        """A fresh loop runtime of ``${BACKEND}`` under ``${PROFILE}``."""
        self._start(LoopsHarness)

    @keyword("Start Of Loop Should Be Refused")
    def start_should_be_refused(self, alias: str, refused: str, **parameters: str) -> None:
        """Start loop ``alias``; it must be refused naming ``refused`` (comma-separated)."""
        answer = self.run(start_loop(alias, **parameters))
        wanted = lc.Refused(tuple(name.strip() for name in refused.split(",")))
        if answer != wanted:
            raise self._mismatch(f"the answer to starting loop {alias!r}", wanted, answer)

    # -- checks ------------------------------------------------------------------------------

    @keyword("Loop Should Have Ended")
    def loop_should_have_ended(self, alias: str, status: str, reason: str) -> None:
        view = self._view(alias)
        if (view.status, view.stop_reason) != (status, reason):
            raise self._mismatch(f"loop {alias!r} status and stop reason", (status, reason),
                             (view.status, view.stop_reason))

    @keyword("Loop Should Be Running")
    def loop_should_be_running(self, alias: str, runs: int) -> None:
        view = self._view(alias)
        if (view.status, view.stop_reason, len(view.runs)) != ("running", None, int(runs)):
            raise self._mismatch(f"loop {alias!r} status, stop reason and runs",
                             ("running", None, int(runs)),
                             (view.status, view.stop_reason, len(view.runs)))

    @keyword("Loop Run Counts Should Be")
    def loop_counts(self, alias: str, runs: int, failed: int) -> None:
        view = self._view(alias)
        if (len(view.runs), view.failed_runs) != (int(runs), int(failed)):
            raise self._mismatch(f"loop {alias!r} runs and failed runs", (int(runs), int(failed)),
                             (len(view.runs), view.failed_runs))

    @keyword("Run Message Should Be")
    def run_message(self, alias: str, number: int, message: str) -> None:
        shown = self._run(alias, int(number)).message
        sent = self.harness.agents[alias].received.get(int(number), shown)
        if (shown, sent) != (message, message):
            raise self._mismatch(f"loop {alias!r} run {number} message (recorded, sent)",
                             (message, message), (shown, sent))

    @keyword("Run Should Be Labelled As Its Loop's")
    def run_labelled(self, alias: str, number: int) -> None:
        """The agent was called for run ``number`` with triggered_by "loop" and the loop's
        id as start_loop answered it (LP-020)."""
        wanted = (LOOP_TRIGGER, self.harness.ids[alias])
        labels = self.harness.agents[alias].labels.get(int(number), "<never executed>")
        if labels != wanted:
            raise self._mismatch(f"loop {alias!r} run {number}: its execution's"
                                 " (triggered_by, loop_id)", wanted, labels)

    @keyword("Run Status Should Be")
    def run_status(self, alias: str, number: int, status: str, error: str = "") -> None:
        run = self._run(alias, int(number))
        wanted = (status, error or None)
        if (run.status, run.error) != wanted:
            raise self._mismatch(f"loop {alias!r} run {number} status and error", wanted,
                             (run.status, run.error))

    @keyword("Run Should Have Started At")
    def run_started(self, alias: str, number: int, seconds: float) -> None:
        wanted = EPOCH + timedelta(seconds=float(seconds))
        run = self._run(alias, int(number))
        if run.started_at != wanted:
            raise self._mismatch(f"loop {alias!r} run {number} started_at", wanted, run.started_at)

    @keyword("Loop Should Have Ended At")
    def loop_ended_at(self, alias: str, seconds: float) -> None:
        wanted = EPOCH + timedelta(seconds=float(seconds))
        view = self._view(alias)
        if view.completed_at != wanted:
            raise self._mismatch(f"loop {alias!r} completed_at", wanted, view.completed_at)

    @keyword("Loop Should Have Spent")
    def loop_spent(self, alias: str, total: float) -> None:
        view = self._view(alias)
        if not same_cost(float(total), view.total_cost):
            raise self._mismatch(f"loop {alias!r} total_cost", float(total), view.total_cost)

    @keyword("Loop Cost Warnings Should Be")
    def loop_cost_warnings(self, alias: str, *numbers: int) -> None:
        wanted = tuple(int(n) for n in numbers)
        view = self._view(alias)
        if tuple(view.cost_warnings) != wanted:
            raise self._mismatch(f"loop {alias!r} cost_warnings", wanted, view.cost_warnings)

    @keyword("Loop Elapsed Seconds Should Be")
    def loop_elapsed(self, alias: str, seconds: float) -> None:
        view = self._view(alias)
        if abs(view.elapsed_seconds - float(seconds)) > 1e-6:
            raise self._mismatch(f"loop {alias!r} elapsed_seconds", float(seconds),
                             view.elapsed_seconds)

    @keyword("Stop Answer Should Be")
    def stop_answer(self, alias: str, answer: str) -> None:
        actual = self.run(stop_loop(alias))
        if actual != answer:
            raise self._mismatch(f"the answer to stopping loop {alias!r}", answer, actual)

    # -- loop events (LP-019) ----------------------------------------------------------------

    @keyword("Require Loop Events")
    def require_loop_events(self) -> None:
        """Skip the test where the backend does not claim loop-events: LP-019 cannot be
        checked there, so it is not run."""
        harness = self.harness
        if not harness.emits_events:
            raise SkipExecution(f"backend {harness.backend.name} does not report loop events"
                                " to an event sink (loop-events)")

    def _event(self, alias: str, index: int) -> tuple[object, ...]:
        events = self.harness.loop_events(alias)
        if not 1 <= int(index) <= len(events):
            raise self._mismatch(f"loop {alias!r} should have emitted an event {index}",
                             f"event {index}", events)
        return events[int(index) - 1]

    @keyword("Loop Should Have Emitted")
    def loop_should_have_emitted(self, alias: str, count: int) -> None:
        """Loop ``alias`` emitted ``count`` events so far (LP-019)."""
        events = self.harness.loop_events(alias)
        if len(events) != int(count):
            raise self._mismatch(f"the number of events loop {alias!r} emitted", int(count), events)

    @keyword("Run Event Should Be")
    def run_event_should_be(self, alias: str, index: int, run: int, status: str,
                            cost: str, duration_ms: float) -> None:
        """Event ``index`` of loop ``alias`` is loop_run_completed for run ``run``, with an
        execution id of its own, ``cost`` (a number or none) and ``duration_ms``, the run
        recorded ``status`` when it came."""
        event = self._event(alias, index)
        wanted_cost = written_value(cost)
        if not run_event_matches(event, int(run), status, wanted_cost, float(duration_ms)):
            raise self._mismatch(f"event {index} of loop {alias!r} (event, run, execution, cost,"
                             " duration ms, the run's status when emitted)",
                             ("loop_run_completed", int(run), "<an execution id of its own>",
                              wanted_cost, float(duration_ms), status), event)

    @keyword("Loop Event Should Be")
    def loop_event_should_be(self, alias: str, index: int, status: str, reason: str) -> None:
        """Event ``index`` of loop ``alias`` is loop_completed naming ``status`` and
        ``reason``, the loop recorded so when it came."""
        event = self._event(alias, index)
        if not loop_event_matches(event, status, reason):
            raise self._mismatch(f"event {index} of loop {alias!r} (event, status, stop reason,"
                             " the loop's status and stop reason when emitted)",
                             ("loop_completed", status, reason, status, reason), event)


derive_keywords(LoopsLibrary, DECLARATIONS, lambda library: library)
