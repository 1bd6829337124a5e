"""The Hypothesis front-end for loops: random loops and run outcomes, backend against oracle.

The machine starts loops with random parameters (some invalid), ends their runs with
random responses, costs (NaN, infinities, None and negatives included), non-success
results and raised errors, stops them at random moments, lets time pass in steps that
cross the per-run timeouts, delays and deadlines it draws, and restarts the runtime now
and then. The harness compares every loop after every command (status, stop reason,
runs, failed runs, total cost, messages, timestamps); Hypothesis shrinks a divergence to
a minimal command list.

Where the backend claims loop-events, the harness also checks each loop's events after
every command (LP-019): every run the rules end and every loop they end emits its event.
No rule of its own is drawn for it, so the sequences (and the gallery's first failures)
stay those of the rules below.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    precondition,
    rule,
)

from jobconform.backends.loops.protocol import LOOPS
from jobconform.backends.protocol import Backend
from jobconform.conformance.aim import TICK_SECONDS, steps_to_edge
from jobconform.conformance.command_engine import AreaMachine, time_rule
from jobconform.conformance.loops.harness import LoopsHarness
from jobconform.conformance.machine_runner import MachineRun, machine_runner
from jobconform.reference.loops import commands as lc
from jobconform.reference.loops.oracle import (
    FailResult,
    LoopParameters,
    LoopState,
    LoopStatus,
    RaiseError,
    Respond,
    RunOutcome,
)
from jobconform.spec import Profile, Registry

MAX_LOOPS = 8
MAX_RUNNING_LOOPS = 1
STEPS_PER_EXAMPLE = 25
RESTART_AFTER_STEPS = 12
TEMPLATES = ("go", "run {{run}}", "{{previous_response}}", "#{{run}} <{{previous_response}}>")
RESPONSES = ("a", " a\n", "b", "", "   ", "DONE", "x DONE y", "{{run}}")
# Real spend more often than not, so that budgets are crossed; every odd value still comes.
COSTS = (None, 0.0, 0.25, 0.5, 0.5, 1.0, 1.0, math.nan, math.inf, -math.inf, -1.0)
TIME_STEPS = (1.0, 5.0, 10.0, 30.0)

# A loop that would run on, with a short no-progress streak.
STALLING_LOOP = LoopParameters(message="go", max_runs=6, stop_signal="DONE",
                               no_progress_threshold=2, on_failure="continue")

# A 61 s deadline: run 1 ends at 30 s, run 2 (timeout at 90 s) is in flight at 61 s.
DEADLINE_LOOP = LoopParameters(message="go", max_runs=6, timeout_per_run_seconds=60.0,
                               max_duration_seconds=61)

# A deadline and a budget crossed by the same run: run 1 ends at 30 s under budget, run 2
# is still in flight at the 61 s deadline and spends past the budget; the gate after it
# must name the deadline first (LP-004). Random loops line the two up too rarely for the
# default run (issue 33).
DEADLINE_AND_BUDGET_LOOP = LoopParameters(message="go", max_runs=6, timeout_per_run_seconds=60.0,
                                          max_duration_seconds=61, max_cost_usd=1.0)

# A deadline inside the delay after run 1: run 1 ends at 20 s, the delay would end at 50 s,
# the deadline is at 40 s; the loop wakes at its deadline and ends there (LP-007).
DELAY_PAST_DEADLINE_LOOP = LoopParameters(message="go", max_runs=4, delay_seconds=30.0,
                                          timeout_per_run_seconds=30.0,
                                          max_duration_seconds=40)
DELAY_LOOP_FIRST_RUN_SECONDS = 20.0

# The timing edges of one loop in a row (conformance/aim.py): run 1 times out at 30 s
# (LP-009), run 2 starts after the delay d, at 30 + d (LP-008), and is the last: the loop
# completes with the timed-out run tolerated (LP-016). Its deadline, at 34 + d, is never
# reached; other rules aim at deadlines.
EDGE_TIMEOUT_SECONDS = 30
EDGE_DELAYS = (5, 30)


def edge_loop(delay: int) -> LoopParameters:
    return LoopParameters(message="go", max_runs=2, delay_seconds=float(delay),
                          timeout_per_run_seconds=float(EDGE_TIMEOUT_SECONDS),
                          max_duration_seconds=EDGE_TIMEOUT_SECONDS + 4 + delay,
                          on_failure="continue", max_consecutive_failures=3)

costs = st.sampled_from(COSTS)
responses = st.builds(Respond, st.one_of(st.none(), st.sampled_from(RESPONSES)), costs)
# Mostly successes: a failure under abort ends the loop, and long loops reach the
# interesting boundaries (deadline and budget together, no-progress streaks).
outcomes: st.SearchStrategy[RunOutcome] = st.one_of(
    responses, responses, responses,
    st.builds(FailResult, st.sampled_from(("AGENT_ERROR", "CIRCUIT_OPEN", "AUTH")), costs),
    st.builds(RaiseError, st.sampled_from(("ValueError", "TimeoutError")),
              st.sampled_from(("boom", ""))),
)


# A loop whose message quotes the previous response, for a failure between two answers:
# the run after the failure must still receive the last good answer (LP-003). Random
# loops took about 9,700 steps to line up the template, an answer, a failure and a
# further run (issue 33).
# Its second failure, after an answer, must not end it: the answer reset the failure
# streak (LP-015).
QUOTING_LOOP = LoopParameters(message="#{{run}} <{{previous_response}}>", max_runs=4,
                              on_failure="continue", max_consecutive_failures=2)
failures: st.SearchStrategy[RunOutcome] = st.one_of(
    st.builds(FailResult, st.sampled_from(("AGENT_ERROR", "AUTH")), costs),
    st.builds(RaiseError, st.just("ValueError"), st.sampled_from(("boom", ""))),
)


@st.composite
def loop_parameters(draw: st.DrawFn) -> LoopParameters:
    """Small limits, so that deadlines, budgets and streaks are reached within a few runs.

    The deadline is drawn relative to the per-run timeout, so that most loops are valid;
    one choice is a second shorter than the timeout, which must be refused.
    """
    timeout = draw(st.sampled_from((30, None, 60)))
    effective = 900 if timeout is None else timeout
    # A deadline a little after the first timeout falls inside the second run once the
    # first took a second or more; "short" (below the timeout) must be refused.
    extra = draw(st.sampled_from((1, None, 5, 0, 45, "short")))
    if extra is None:
        duration = None
    elif extra == "short":
        duration = effective - 1
    else:
        duration = effective + int(extra)
    return LoopParameters(
        message=draw(st.sampled_from(TEMPLATES)),
        max_runs=draw(st.integers(1, 6)),
        stop_signal=draw(st.sampled_from(("DONE", None))),
        delay_seconds=draw(st.sampled_from((0.0, 0.0, 5.0, 30.0))),
        timeout_per_run_seconds=None if timeout is None else float(timeout),
        max_duration_seconds=duration,
        max_cost_usd=draw(st.sampled_from((None, 0.5, 0.5, 1.0, 2.0))),
        no_progress_threshold=draw(st.sampled_from((0, 2, 2, 3))),
        # Under abort most loops end at their first failure or timeout; continue keeps
        # them alive long enough to meet deadlines, budgets and streaks.
        on_failure=draw(st.sampled_from(("abort", "continue", "continue"))),
        max_consecutive_failures=draw(st.sampled_from((1, 2, 3, 3))),
    )


# The rules that start a loop: only while the machine's limits leave room for one more.
room_for_a_loop = precondition(lambda self: len(self.harness.model.loops) < MAX_LOOPS
                               and len(self._running()) < MAX_RUNNING_LOOPS)


def make_loops_machine(backend: Backend, profile: Profile, registry: Registry | None,
                       run: MachineRun) -> type[RuleBasedStateMachine]:
    class LoopsMachine(AreaMachine[LoopsHarness]):
        loops = Bundle("loops")

        def __init__(self) -> None:
            super().__init__(run)
            self.harness = replay_harness(backend, profile, registry, {})
            self.restarted = False

        def _running(self) -> list[str]:
            return [alias for alias, loop in self.harness.model.loops.items()
                    if loop.status is LoopStatus.RUNNING]

        @room_for_a_loop
        @rule(target=loops, params=loop_parameters())
        def start(self, params: LoopParameters) -> str:
            alias = self._name("l")
            self._run(lc.StartLoop(alias, params))
            return alias

        # A stalled loop stopped by its operator: the second identical response completes
        # the no-progress streak at the boundary where the user stop also holds, and the
        # stop must win (LP-012, LP-013). Random runs rarely line the two up.
        @room_for_a_loop
        @rule(target=loops, first=st.sampled_from(("a", "x DONE y")),
              repeated=st.sampled_from(("a", " a\n")))
        def stalled_loop_stopped(self, first: str, repeated: str) -> str:
            # A first response with the stop signal ends the loop at once instead (LP-005);
            # the stop and the second run then meet an ended loop.
            alias = self._name("l")
            self._run(lc.StartLoop(alias, STALLING_LOOP))
            self._run(lc.EndRun(alias, Respond(first, 0.25)))
            self._run(lc.StopLoop(alias))
            self._run(lc.EndRun(alias, Respond(repeated, 0.25)))
            return alias

        # A run in flight when the deadline passes finishes, and the loop ends at the
        # boundary after it (LP-007): the deadline falls inside the second run.
        @room_for_a_loop
        @rule(target=loops, outcome=outcomes)
        def run_outlives_deadline(self, outcome: RunOutcome) -> str:
            return self._second_run_across_deadline(DEADLINE_LOOP, outcome)

        def _second_run_across_deadline(self, params: LoopParameters,
                                        second: RunOutcome) -> str:
            """A loop of `params` (a 61 s deadline) whose first run answers at 30 s and
            whose second ends 40 s later with `second`, past the deadline."""
            alias = self._name("l")
            self._run(lc.StartLoop(alias, params))
            self._run(lc.PassTime(30.0))
            self._run(lc.EndRun(alias, Respond("a", 0.25)))
            self._run(lc.PassTime(40.0))
            self._run(lc.EndRun(alias, second))
            return alias

        # A failure between two answers of a loop that quotes the previous response: the
        # third run must receive the first run's answer, not the failure's empty one; a
        # second failure after the answer starts a new streak.
        @room_for_a_loop
        @rule(target=loops, failure=failures, answer=st.sampled_from(("a", " a\n")))
        def failure_between_answers(self, failure: RunOutcome, answer: str) -> str:
            alias = self._name("l")
            self._run(lc.StartLoop(alias, QUOTING_LOOP))
            self._run(lc.EndRun(alias, Respond(answer, 0.25)))
            self._run(lc.EndRun(alias, failure))
            self._run(lc.EndRun(alias, Respond("b", 0.25)))
            self._run(lc.EndRun(alias, failure))
            return alias

        # -- aimed at the boundaries (conformance/aim.py) ------------------------------

        @room_for_a_loop
        @rule(target=loops, response=st.sampled_from(("a", "b")))
        def deadline_and_budget_together(self, response: str) -> str:
            return self._second_run_across_deadline(DEADLINE_AND_BUDGET_LOOP,
                                                    Respond(response, 2.5))

        # Onto the deadline that cuts the delay short, one tick before it and past it.
        @room_for_a_loop
        @rule(target=loops, answer=st.sampled_from(("a", " a\n")))
        def deadline_inside_delay(self, answer: str) -> str:
            alias = self._name("l")
            self._run(lc.StartLoop(alias, DELAY_PAST_DEADLINE_LOOP))
            self._run(lc.PassTime(DELAY_LOOP_FIRST_RUN_SECONDS))
            self._run(lc.EndRun(alias, Respond(answer, 0.25)))
            self._step_across(alias, lambda loop: loop.deadline)
            return alias

        # One tick before the run's timeout, on it and past it; then the same around the
        # end of the delay: random time steps reach these exact instants on some seeds
        # only.
        @room_for_a_loop
        # (Hypothesis orders rules by target, argument count and name: this one sorts
        # last.)
        @rule(target=loops, outcome=outcomes, delay=st.sampled_from(EDGE_DELAYS))
        def timing_edges(self, outcome: RunOutcome, delay: int) -> str:
            alias = self._name("l")
            self._run(lc.StartLoop(alias, edge_loop(delay)))
            self._step_across(alias, lambda loop: loop.run_timeout_at)
            self._step_across(alias, lambda loop: loop.next_run_at)
            if self.harness.model.loops[alias].current_run is not None:
                self._run(lc.EndRun(alias, outcome))
            return alias

        def _step_across(self, alias: str,
                         edge: Callable[[LoopState], datetime | None]) -> None:
            """Time steps to one tick before the loop's `edge`, onto it and one tick past
            it, while the loop runs and the edge is ahead."""
            loop = self.harness.model.loops[alias]
            when = edge(loop)
            if loop.status is not LoopStatus.RUNNING or when is None:
                return
            left = (when - self.harness.clock.now()).total_seconds()
            if left >= TICK_SECONDS:
                for step in steps_to_edge(0.0, left, profile.time_precision_seconds):
                    self._run(lc.PassTime(step))

        # Runs end far more often than anything else happens: that is where the rules are.
        @precondition(lambda self: bool(self._running()))
        @rule(data=st.data(), outcome=outcomes)
        def end_run(self, data: st.DataObject, outcome: RunOutcome) -> None:
            alias = data.draw(st.sampled_from(self._running()))
            self._run(lc.EndRun(alias, outcome))

        @precondition(lambda self: bool(self._running()))
        @rule(data=st.data(), outcome=outcomes)
        def end_another_run(self, data: st.DataObject, outcome: RunOutcome) -> None:
            self.end_run(data, outcome)

        @precondition(lambda self: bool(self._running()))
        @rule(data=st.data(), outcome=outcomes)
        def end_a_third_run(self, data: st.DataObject, outcome: RunOutcome) -> None:
            self.end_run(data, outcome)

        # A run that takes a while: the deadline may pass while it is in flight.
        @precondition(lambda self: bool(self._running()))
        @rule(data=st.data(), seconds=st.sampled_from(TIME_STEPS), outcome=outcomes)
        def slow_run(self, data: st.DataObject, seconds: float, outcome: RunOutcome) -> None:
            self._run(lc.PassTime(seconds))
            if self._running():
                self.end_run(data, outcome)

        # A run still in flight when the deadline passes: it must finish and be judged
        # (LP-007), and at the boundary after it the deadline outranks the budget (LP-004).
        @precondition(lambda self: bool(self._across_deadline()))
        @rule(data=st.data(), outcome=outcomes)
        def run_across_deadline(self, data: st.DataObject, outcome: RunOutcome) -> None:
            alias, seconds = data.draw(st.sampled_from(self._across_deadline()))
            self._run(lc.PassTime(seconds))
            self._run(lc.EndRun(alias, outcome))

        # The same with an expensive run: past the deadline and over any budget at once,
        # the boundary where the order of the two checks shows (LP-004).
        @precondition(lambda self: bool(self._across_deadline()))
        @rule(data=st.data(), response=st.sampled_from(("a", "b", "c")))
        def costly_run_across_deadline(self, data: st.DataObject, response: str) -> None:
            alias, seconds = data.draw(st.sampled_from(self._across_deadline()))
            self._run(lc.PassTime(seconds))
            self._run(lc.EndRun(alias, Respond(response, 2.5)))

        def _across_deadline(self) -> list[tuple[str, float]]:
            """Running loops whose run in flight outlives the deadline, with the seconds
            from now to the deadline."""
            now = self.harness.clock.now()
            found = []
            for alias, loop in self.harness.model.loops.items():
                deadline, timeout_at = loop.deadline, loop.run_timeout_at
                if (loop.status is LoopStatus.RUNNING and deadline is not None
                        and timeout_at is not None and now <= deadline < timeout_at):
                    found.append((alias, (deadline - now).total_seconds()))
            return found

        # The operator stops a loop and its run in flight then ends (a stop between runs
        # comes from `read_or_stop`).
        @precondition(lambda self: bool(self._running()))
        @rule(data=st.data(), outcome=outcomes)
        def stop_running(self, data: st.DataObject, outcome: RunOutcome) -> None:
            alias = data.draw(st.sampled_from(self._running()))
            self._run(lc.StopLoop(alias))
            self._run(lc.EndRun(alias, outcome))

        time_passes = time_rule("time_passes", TIME_STEPS, lc.PassTime)

        # A restart ends every running loop, so everything after it is dull: once per
        # example, after a history has built up.
        @precondition(lambda self: not self.restarted
                      and len(self.harness.commands) >= RESTART_AFTER_STEPS)
        @rule()
        def restart(self) -> None:
            self.restarted = True
            self._run(lc.RestartLoops())

        # Reads and stops of any loop, ended or refused ones included ("already_done",
        # not found).
        @rule(loop=loops, stop=st.booleans())
        def read_or_stop(self, loop: str, stop: bool) -> None:
            self._run(lc.StopLoop(loop) if stop else lc.ReadLoop(loop))

    return LoopsMachine


run_loops_machine = machine_runner(make_loops_machine, steps=STEPS_PER_EXAMPLE, area=LOOPS)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> LoopsHarness:
    """The harness of this machine's commands, for a trace's replay (area_trace.py)."""
    return LoopsHarness(backend, profile, registry)
