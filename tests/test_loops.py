"""Sequential agent loops: the oracle's rules, every shipped backend against it, the SQL
tables on SQLite, PostgreSQL and MariaDB, and runs on real threads."""

from __future__ import annotations

import math
import threading
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from sql_databases import DATABASES, database

from jobconform.backends.loading import BackendLoadError, check_backend
from jobconform.backends.loops.memory import StepLoopRuntime
from jobconform.backends.loops.protocol import LoopAgent, LoopsConfig, RunResult
from jobconform.backends.loops.runner import Progress, StoredLoop
from jobconform.backends.loops.sql import SqlLoopStore
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import LOOP_EVENTS
from jobconform.backends.sql.database import create_store_engine, migrate
from jobconform.backends.threaded import ThreadedBackend
from jobconform.backends.threaded.sql_backend import ThreadedSqlBackend
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import Divergence
from jobconform.conformance.loops.harness import OWN_EXECUTION, LoopsHarness
from jobconform.conformance.sinks import LoopEventLog
from jobconform.reference.loops import commands as lc
from jobconform.reference.loops import oracle
from jobconform.reference.loops.oracle import (
    FailResult,
    InvalidLoopParameters,
    LoopParameters,
    LoopStatus,
    RaiseError,
    Respond,
    StopReason,
)
from jobconform.spec import load_registry

DEFAULT_TIMEOUT = 900.0
T0 = EPOCH


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def started(**given: object) -> oracle.LoopState:
    values: dict[str, object] = {"message": "go", "max_runs": 5}
    values.update(given)
    return oracle.start(LoopParameters(**values), DEFAULT_TIMEOUT, T0)  # type: ignore[arg-type]


# -- the oracle --------------------------------------------------------------------------------


@pytest.mark.parametrize(("given", "refused"), [
    ({"max_runs": 0}, ("max_runs",)),
    ({"max_runs": 101}, ("max_runs",)),
    ({"max_runs": True}, ("max_runs",)),
    ({"message": ""}, ("message",)),
    ({"stop_signal": ""}, ("stop_signal",)),
    ({"delay_seconds": math.inf}, ("delay_seconds",)),
    ({"timeout_per_run_seconds": 7201}, ("timeout_per_run_seconds",)),
    ({"max_duration_seconds": 604_801}, ("max_duration_seconds",)),
    ({"max_duration_seconds": 899}, ("max_duration_seconds",)),
    ({"timeout_per_run_seconds": 60, "max_duration_seconds": 59}, ("max_duration_seconds",)),
    ({"max_cost_usd": -0.01}, ("max_cost_usd",)),
    ({"max_cost_usd": math.nan}, ("max_cost_usd",)),
    ({"no_progress_threshold": 1}, ("no_progress_threshold",)),
    ({"on_failure": "ignore"}, ("on_failure",)),
    ({"max_consecutive_failures": 0, "max_runs": 0}, ("max_runs", "max_consecutive_failures")),
])
def test_invalid_parameters_are_refused_by_name(given: dict[str, object],
                                                refused: tuple[str, ...]) -> None:
    with pytest.raises(InvalidLoopParameters) as caught:
        started(**given)
    assert tuple(p.parameter for p in caught.value.problems) == refused
    assert all(p.allowed for p in caught.value.problems)


def test_valid_edges_are_accepted() -> None:
    loop = started(max_runs=100, max_duration_seconds=900, max_cost_usd=1e-9,
                   no_progress_threshold=0, max_consecutive_failures=100)
    assert loop.status is LoopStatus.RUNNING and loop.runs[0].run_number == 1
    assert started(timeout_per_run_seconds=60, max_duration_seconds=60).deadline == at(60)


def test_placeholders_are_replaced_once_and_previous_response_is_trimmed() -> None:
    assert oracle.render("{{run}}/{{previous_response}}", 3, "{{run}}") == "3/{{run}}"
    loop = started(message="{{previous_response}}")
    loop = oracle.end_run(loop, Respond("x" * 2500 + "END"), T0)
    assert loop.runs[-1].message == ("x" * 2500 + "END")[-2000:]


def test_fingerprints_collapse_whitespace_but_keep_word_boundaries() -> None:
    same = {oracle.fingerprint(text) for text in ("", None, "  \n\t")}
    assert len(same) == 1
    assert oracle.fingerprint(" foo \n bar ") == oracle.fingerprint("foo bar")
    assert oracle.fingerprint("foo bar") != oracle.fingerprint("foobar")


@pytest.mark.parametrize(("cost", "counted"), [
    (None, None), (math.nan, 0.0), (math.inf, 0.0), (-math.inf, 0.0), (-1.0, 0.0), (0.0, 0.0),
    (0.25, 0.25),
])
def test_only_finite_positive_costs_count(cost: float | None, counted: float | None) -> None:
    assert oracle.counted_cost(cost) == counted


def test_boundary_order_is_user_stop_then_deadline_then_budget() -> None:
    loop = started(timeout_per_run_seconds=10, max_duration_seconds=10, max_cost_usd=1.0)
    loop = oracle.end_run(loop, Respond("a", 2.0), at(1))  # over budget: stops now
    assert loop.stop_reason is StopReason.BUDGET_EXHAUSTED
    crossing = started(timeout_per_run_seconds=20, max_duration_seconds=20, max_cost_usd=1.0)
    crossing = oracle.end_run(crossing, Respond("a", 0.5), at(5))
    crossing = oracle.end_run(crossing, Respond("b", 0.5), at(24))
    assert crossing.stop_reason is StopReason.DEADLINE_EXCEEDED
    assert oracle.boundary_stop(crossing, at(24)) is StopReason.DEADLINE_EXCEEDED
    stopped = oracle.request_stop(crossing, at(24))[1]
    assert stopped.stop_reason is StopReason.DEADLINE_EXCEEDED  # already ended
    assert oracle.request_stop(crossing, at(24))[0] == "already_done"


def test_last_run_and_stop_signal_win_over_the_budget() -> None:
    last = started(max_runs=1, max_cost_usd=1.0)
    assert oracle.end_run(last, Respond("a", 5.0), T0).stop_reason is \
        StopReason.MAX_RUNS_REACHED
    signal = started(stop_signal="DONE", max_cost_usd=1.0)
    assert oracle.end_run(signal, Respond("DONE", 5.0), T0).stop_reason is \
        StopReason.STOP_SIGNAL_MATCHED


def test_no_progress_never_relabels_a_user_stop() -> None:
    loop = started(no_progress_threshold=2)
    loop = oracle.end_run(loop, Respond("same"), T0)
    _, loop = oracle.request_stop(loop, T0)
    loop = oracle.end_run(loop, Respond(" same "), T0)
    assert loop.stop_reason is StopReason.USER_STOPPED


def test_delay_is_capped_at_the_deadline_and_timers_cascade() -> None:
    loop = started(delay_seconds=100, timeout_per_run_seconds=10, max_duration_seconds=30,
                   on_failure="continue", max_consecutive_failures=5)
    loop = oracle.end_run(loop, Respond("a"), at(5))
    assert loop.next_run_at == at(30)
    loop = oracle.advance_to(loop, at(1000))
    assert (loop.stop_reason, loop.completed_at) == (StopReason.DEADLINE_EXCEEDED, at(30))
    timeouts = started(timeout_per_run_seconds=10, on_failure="continue",
                       max_consecutive_failures=3)
    timeouts = oracle.advance_to(timeouts, at(1000))
    assert [run.finished_at for run in timeouts.runs] == [at(10), at(20), at(30)]
    assert timeouts.stop_reason is StopReason.MAX_CONSECUTIVE_FAILURES


def test_failures_and_completed_with_errors() -> None:
    loop = started(message="<{{previous_response}}>", max_runs=3, on_failure="continue")
    loop = oracle.end_run(loop, Respond("good"), T0)
    loop = oracle.end_run(loop, RaiseError("ValueError", "boom"), T0)
    assert loop.runs[-1].message == "<good>"
    loop = oracle.end_run(loop, FailResult("AUTH", 0.5), T0)
    assert (loop.status, loop.failed_runs, loop.total_cost) == (
        LoopStatus.COMPLETED_WITH_ERRORS, 2, 0.5)
    assert loop.runs[1].error == "ValueError: boom"


def test_interrupt_marks_the_run_in_flight() -> None:
    loop = oracle.interrupt(started(), at(7))
    assert (loop.status, loop.runs[0].status.value, loop.elapsed_seconds(at(99))) == (
        LoopStatus.INTERRUPTED, "interrupted", 7.0)


# -- every shipped backend against the oracle ---------------------------------------------------


SCRIPT: list[lc.LoopCommand] = [
    lc.StartLoop("a", LoopParameters("#{{run}} {{previous_response}}", 4, stop_signal="DONE",
                                     delay_seconds=5, timeout_per_run_seconds=20,
                                     max_duration_seconds=60, max_cost_usd=2.0,
                                     on_failure="continue")),
    lc.StartLoop("refused", LoopParameters("go", 3, no_progress_threshold=1)),
    lc.EndRun("a", Respond("first", math.nan)),
    lc.PassTime(30),  # the delay, then run 2 times out
    lc.EndRun("a", Respond("second", None)),
    lc.StartLoop("b", LoopParameters("go", 3)),
    lc.StopLoop("b"),
    lc.EndRun("b", Respond("b1", 0.1)),
    lc.PassTime(3),
    lc.StopLoop("refused"),
    lc.RestartLoops(),
    lc.PassTime(100),
    lc.ReadLoop("a"),
]


def run_script(backend: object) -> LoopsHarness:
    registry = load_registry()
    with closing(LoopsHarness(backend,  # type: ignore[arg-type]
                              registry.profile("canonical"), registry)) as harness:
        for command in SCRIPT:
            harness.run(command)
    return harness


@pytest.mark.parametrize("backend", [MemoryBackend(), ThreadedBackend(), ThreadedSqlBackend()],
                         ids=["memory", "threaded", "threaded+sql"])
def test_backend_matches_the_oracle(backend: object) -> None:
    harness = run_script(backend)
    a, b = harness.model.loops["a"], harness.model.loops["b"]
    assert a.status is LoopStatus.INTERRUPTED and b.stop_reason is StopReason.USER_STOPPED
    # Interrupted while waiting out the delay after run 3: no run was in flight.
    assert [run.error for run in a.runs] == [None, "TIMEOUT", None]


@pytest.mark.parametrize("kind", DATABASES)
def test_sql_backend_matches_the_oracle_on_every_database(kind: str, tmp_path: Path) -> None:
    from jobconform.backends.sql import SqlBackend

    with database(kind, tmp_path) as url:
        run_script(SqlBackend(url))


@pytest.mark.parametrize("kind", DATABASES)
def test_a_loop_survives_a_new_process_on_the_same_database(kind: str, tmp_path: Path) -> None:
    """A second runtime on a second engine (a new process) reads what the first wrote and
    interrupts the loop that was running; ended loops keep everything."""
    with database(kind, tmp_path) as url:
        clock = VirtualClock()
        first_engine = create_store_engine(url)
        migrate(first_engine)
        first = StepLoopRuntime(clock, LoopsConfig(DEFAULT_TIMEOUT), SqlLoopStore(first_engine))
        done, running = LoopAgent(), LoopAgent()
        ended_id = first.start_loop(LoopParameters("x", 1), done)
        done.decide(1, Respond("é" * 3000, 0.75))
        running_id = first.start_loop(LoopParameters("{{previous_response}}", 3), running)
        running.decide(1, Respond("kept"))
        first.settle()
        first_engine.dispose()

        clock.advance(42)
        second_engine = create_store_engine(url)
        second = StepLoopRuntime(clock, LoopsConfig(DEFAULT_TIMEOUT),
                                 SqlLoopStore(second_engine))
        second.restart()
        ended, interrupted = second.get_loop(ended_id), second.get_loop(running_id)
        second_engine.dispose()
    assert ended is not None and interrupted is not None
    assert (ended.status, ended.stop_reason, ended.total_cost) == ("completed",
                                                                   "max_runs_reached", 0.75)
    assert ended.last_response == "é" * 3000
    assert (interrupted.status, interrupted.stop_reason) == ("interrupted", "interrupted")
    assert [run.status for run in interrupted.runs] == ["succeeded", "interrupted"]
    assert interrupted.runs[1].message == "kept"
    assert interrupted.completed_at == EPOCH + timedelta(seconds=42)


def test_threaded_runs_execute_one_after_another_on_a_worker_thread() -> None:
    seen: list[tuple[int, str]] = []

    class RecordingAgent(LoopAgent):
        def execute(self, run_number: int, message: str, triggered_by: str | None = None,
                    loop_id: str | None = None) -> RunResult:
            seen.append((run_number, threading.current_thread().name))
            return super().execute(run_number, message, triggered_by, loop_id)

    clock = VirtualClock()
    with closing(ThreadedBackend().open_loops(clock, LoopsConfig(DEFAULT_TIMEOUT))) as runtime:
        agent = RecordingAgent()
        loop_id = runtime.start_loop(LoopParameters("go", 3, no_progress_threshold=0), agent)
        for number in (1, 2, 3):
            runtime.settle()
            view = runtime.get_loop(loop_id)
            assert view is not None and len(view.runs) == number  # never a run ahead
            agent.decide(number, Respond("same"))
        runtime.settle()
        view = runtime.get_loop(loop_id)
    assert view is not None and view.stop_reason == "max_runs_reached"
    assert [number for number, _ in seen] == [1, 2, 3]
    assert {name for _, name in seen} == {f"jobconform-loop-{loop_id}"}


def test_a_broken_runner_is_caught_naming_the_requirement() -> None:
    from jobconform.conformance.loops.gallery import loops_no_progress_relabels_user_stop

    registry = load_registry()
    harness = LoopsHarness(loops_no_progress_relabels_user_stop(),  # type: ignore[operator]
                           registry.profile("canonical"), registry)
    harness.run(lc.StartLoop("a", LoopParameters("go", 5, no_progress_threshold=2)))
    harness.run(lc.EndRun("a", Respond("same")))
    harness.run(lc.StopLoop("a"))
    with pytest.raises(Divergence) as caught:
        harness.run(lc.EndRun("a", Respond("same")))
    harness.close()
    assert caught.value.requirements[0] == "LP-013"


def test_a_backend_claiming_loops_without_open_loops_is_refused() -> None:
    class NoLoops(MemoryBackend):
        open_loops = None  # type: ignore[assignment]

    with pytest.raises(BackendLoadError,
                       match="claims the loops area but has no method open_loops"):
        check_backend(NoLoops(), "no-loops")


# -- LP-019: loop events -----------------------------------------------------------------------


def test_the_oracle_notes_one_event_per_ended_run_then_one_for_the_loop() -> None:
    model = oracle.LoopsModel(DEFAULT_TIMEOUT)
    model.start("a", LoopParameters("go", 3, delay_seconds=5.0, timeout_per_run_seconds=30,
                                    on_failure="continue"), at(0))
    model.end_run("a", Respond("one", 0.25), at(2.5))
    model.advance_to(at(37.5))  # run 2 starts at 7.5 and times out at 37.5
    model.start("b", LoopParameters("go", 3), at(37.5))
    model.restart(at(40))  # a waits out its delay, b has run 1 in flight: neither ends a run
    assert model.events["a"] == [
        oracle.RunCompleted(1, 0.25, 2500.0, oracle.RunStatus.SUCCEEDED),
        oracle.RunCompleted(2, None, 30000.0, oracle.RunStatus.FAILED),
        oracle.LoopCompleted(LoopStatus.INTERRUPTED, StopReason.INTERRUPTED)]
    assert model.events["b"] == [oracle.LoopCompleted(LoopStatus.INTERRUPTED,
                                                      StopReason.INTERRUPTED)]
    model.restart(at(50))  # ended loops emit nothing more
    assert len(model.events["a"]) == 3 and len(model.events["b"]) == 1


@pytest.mark.parametrize("backend", [MemoryBackend(), ThreadedBackend()],
                         ids=["memory", "threaded"])
def test_a_shipped_backend_emits_the_oracles_events(backend: object) -> None:
    harness = run_script(backend)
    assert harness.emits_events and "LP-019" in harness.exercised
    kinds = [(event[0], event[1]) for event in harness.loop_events("a")]
    assert kinds == [("loop_run_completed", 1), ("loop_run_completed", 2),
                     ("loop_run_completed", 3), ("loop_completed", "interrupted")]
    assert harness.loop_events("b")[-1] == ("loop_completed", "stopped", "user_stopped",
                                            "stopped", "user_stopped")
    assert {event[2] for event in harness.loop_events("a")[:3]} == {OWN_EXECUTION}


def test_the_sql_backend_emits_its_events_after_it_commits() -> None:
    from jobconform.backends.sql import SqlBackend

    harness = run_script(SqlBackend())
    assert [event[-1] for event in harness.loop_events("a")[:3]] == ["succeeded", "failed",
                                                                     "succeeded"]


def test_an_event_sent_before_its_record_is_caught_as_lp_019() -> None:
    from jobconform.conformance.loops.gallery import loops_run_event_before_record

    registry = load_registry()
    harness = LoopsHarness(loops_run_event_before_record(),  # type: ignore[operator]
                           registry.profile("canonical"), registry)
    harness.run(lc.StartLoop("a", LoopParameters("go", 3)))
    with pytest.raises(Divergence) as caught:
        harness.run(lc.EndRun("a", Respond("one", 0.5)))
    harness.close()
    assert caught.value.requirements == ("LP-019",)
    assert "running" in str(caught.value)


class CompletedTwice(StepLoopRuntime):
    """loop_completed sent a second time right after the first."""

    def _commit(self, loop: StoredLoop, before: Progress) -> None:
        super()._commit(loop, before)
        if loop.status != "running" and self.events is not None:
            self.events.loop_completed(loop.loop_id, loop.status, loop.stop_reason or "")


def test_a_loop_completed_sent_twice_is_caught_as_lp_019() -> None:
    class Twice(MemoryBackend):
        def open_loops(self, clock: VirtualClock, config: LoopsConfig,  # type: ignore[override]
                       events: LoopEventLog | None = None) -> StepLoopRuntime:
            return CompletedTwice(clock, config, events=events)

    registry = load_registry()
    harness = LoopsHarness(Twice(), registry.profile("canonical"), registry)
    harness.run(lc.StartLoop("a", LoopParameters("go", 1)))
    with pytest.raises(Divergence) as caught:
        harness.run(lc.EndRun("a", Respond("done")))
    harness.close()
    assert caught.value.requirements == ("LP-019",)


def test_an_execution_id_shared_by_two_runs_is_caught_as_lp_019() -> None:
    from jobconform.backends.loops.runner import LoopRules, StoredRun

    class OneExecution(LoopRules):
        def execution_id(self, loop: StoredLoop, run: StoredRun) -> str:
            return loop.loop_id

    class Shared(MemoryBackend):
        def open_loops(self, clock: VirtualClock, config: LoopsConfig,  # type: ignore[override]
                       events: LoopEventLog | None = None) -> StepLoopRuntime:
            return StepLoopRuntime(clock, config, rules=OneExecution(), events=events)

    registry = load_registry()
    harness = LoopsHarness(Shared(), registry.profile("canonical"), registry)
    harness.run(lc.StartLoop("a", LoopParameters("go", 3)))
    harness.run(lc.EndRun("a", Respond("one")))
    with pytest.raises(Divergence) as caught:
        harness.run(lc.EndRun("a", Respond("two")))
    harness.close()
    assert caught.value.requirements == ("LP-019",)
    assert "already the execution of loop 'a' run 1" in str(caught.value)


def test_an_adapter_without_loop_events_is_opened_as_before_and_not_claimed() -> None:
    class TwoArguments(MemoryBackend):
        capabilities = MemoryBackend.capabilities - {LOOP_EVENTS}

        def open_loops(self, clock: VirtualClock,  # type: ignore[override]
                       config: LoopsConfig) -> StepLoopRuntime:
            return StepLoopRuntime(clock, config)

    harness = run_script(TwoArguments())
    assert not harness.emits_events and harness.loop_events("a") == []
    assert "LP-019" not in harness.exercised
    registry = load_registry()
    reason = skip_reason(registry, TwoArguments(), registry.profile("canonical"), ["LP-019"])
    assert reason is not None and LOOP_EVENTS in reason


def test_loop_events_without_the_loops_area_is_refused() -> None:
    class EventsOnly(MemoryBackend):
        capabilities = frozenset({"lifecycle", LOOP_EVENTS})

    with pytest.raises(BackendLoadError, match=LOOP_EVENTS):
        check_backend(EventsOnly(), "events-only")


def test_the_composite_wiring_opens_loops_without_an_event_sink() -> None:
    from jobconform.backends.composite.wiring import open_shared_admission
    from jobconform.conformance.composite.harness import composite_config

    registry = load_registry()
    opened: list[object] = []

    class Watched(MemoryBackend):
        def open_loops(self, clock: VirtualClock, config: LoopsConfig,  # type: ignore[override]
                       events: LoopEventLog | None = None) -> StepLoopRuntime:
            opened.append(events)
            return super().open_loops(clock, config, events)

    composite = open_shared_admission(Watched(), VirtualClock(),
                                      composite_config(registry.profile("canonical")))
    composite.close()
    assert opened == [None]


def test_the_default_run_finds_a_failed_run_that_overwrites_the_previous_response() -> None:
    # Random draws needed about 9,700 steps to line up a loop whose message quotes the
    # previous response, a good answer, a failure and a further run (issue 33); the
    # user's default run (100 examples, seed 0) must find what the self-test proves.
    from jobconform.conformance.defaults import RUN_EXAMPLES
    from jobconform.conformance.loops.gallery import loops_failed_run_overwrites_previous
    from jobconform.conformance.loops.machine import run_loops_machine

    registry = load_registry()
    run = run_loops_machine(loops_failed_run_overwrites_previous(),  # type: ignore[operator]
                            registry.profile("canonical"), registry, seed=0,
                            examples=RUN_EXAMPLES)
    assert run.divergence is not None, "the loops machine missed a failed run overwriting"
    assert run.divergence.requirements[0] == "LP-003"
