"""Harness-owned sinks (issue 18, item 2): an effect is recorded with the runtime's state at
the moment it happens, so the order inside one command is checked (RD-003, RM-007, LP-019)."""

from __future__ import annotations

from contextlib import closing
from typing import Any

import pytest

from jobconform.backends.loading import load_backend
from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings
from jobconform.conformance.harness import Divergence, Harness
from jobconform.conformance.loops.harness import LoopsHarness
from jobconform.conformance.reminders.harness import ReminderHarness
from jobconform.conformance.sinks import (
    NOT_READ,
    DispatchStates,
    LoopEventLog,
    LoopEventRecord,
    OperatorQueue,
)
from jobconform.reference import commands as cmd
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.loops import commands as lc
from jobconform.reference.loops.oracle import LoopParameters, Respond
from jobconform.reference.reminders import commands as rc
from jobconform.reference.reminders.oracle import DeliveryOutcome
from jobconform.spec import load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")
SHIPPED = ("memory", "sql", "threaded")


def park_one(harness: Harness) -> None:
    """A job whose first lease expiry parks it (cap 0)."""
    harness.run(cmd.Submit("a"))
    harness.run(cmd.Dispatch())
    harness.run(cmd.AdvanceTime(61))
    harness.run(cmd.ExpireLeases(60))


@pytest.mark.parametrize("name", SHIPPED)
def test_the_operator_sink_sees_the_job_still_running(name: str) -> None:
    with closing(Harness(load_backend(name), CANONICAL, REGISTRY, max_redelivery=0)) as harness:
        park_one(harness)
        assert harness.operator_queue is not None
        assert harness.operator_queue.raised() == [(harness.ids["a"], "running")]
        assert harness.run(cmd.OperatorAlerts()) == ["a"]  # pulling still answers


def test_a_runtime_without_the_sink_is_only_pulled() -> None:
    class PullOnlyRuntime(MemoryRuntime):
        attach_operator_sink = None  # as a runtime written before the sink

    class PullOnlyBackend(MemoryBackend):
        def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
            return PullOnlyRuntime(settings, clock)

    with closing(Harness(PullOnlyBackend(), CANONICAL, REGISTRY, max_redelivery=0)) as harness:
        park_one(harness)
        assert harness.operator_queue is None
        assert harness.run(cmd.OperatorAlerts()) == ["a"]


def test_an_alert_raised_after_the_job_failed_is_rd_003() -> None:
    from jobconform.conformance.reaper import gallery

    with closing(Harness(gallery.redelivery_alerts_after_parking(),  # type: ignore[attr-defined]
                         CANONICAL, REGISTRY, max_redelivery=0)) as harness:
        with pytest.raises(Divergence) as caught:
            park_one(harness)
        assert caught.value.primary == "RD-003"
        assert "its job's status at that moment" in str(caught.value)


def test_a_sink_that_cannot_read_records_why_and_never_raises() -> None:
    def broken(job_id: str) -> object:
        raise LookupError(job_id)

    queue = OperatorQueue(broken)
    queue.alert("j")
    assert queue.raised() == [("j", "<read raised LookupError: j>")]
    states = DispatchStates(None)
    states.dispatched("r")
    assert states.seen() == [("r", NOT_READ, NOT_READ)]


@pytest.mark.parametrize("name", SHIPPED)
def test_each_dispatch_finds_its_reminder_firing_with_the_attempt_counted(name: str) -> None:
    with closing(ReminderHarness(load_backend(name), CANONICAL, REGISTRY)) as harness:
        harness.run(rc.CreateReminder("a", "x", delay_seconds=61))
        harness.run(AdvanceTime(61))
        harness.run(rc.DeliverReminder("a", DeliveryOutcome.FAILS))
        harness.run(AdvanceTime(60))
        rid = harness.ids["a"]
        assert harness.target.states.seen() == [(rid, "firing", 1), (rid, "firing", 2)]


def test_a_dispatch_before_the_reminder_is_firing_is_rm_007() -> None:
    from jobconform.conformance.reminders import gallery

    backend: Any = gallery.reminder_dispatched_before_firing()  # type: ignore[attr-defined]
    with closing(ReminderHarness(backend, CANONICAL, REGISTRY)) as harness:
        harness.run(rc.CreateReminder("a", "x", delay_seconds=61))
        with pytest.raises(Divergence) as caught:
            harness.run(AdvanceTime(61))
        assert caught.value.primary == "RM-007"
        assert "as its dispatch number 1 was made" in str(caught.value)


@pytest.mark.parametrize("name", SHIPPED)
def test_each_loop_event_finds_what_it_reports_recorded(name: str) -> None:
    with closing(LoopsHarness(load_backend(name), CANONICAL, REGISTRY)) as harness:
        harness.run(lc.StartLoop("a", LoopParameters("go", 2)))
        harness.run(lc.EndRun("a", Respond("one", 0.5)))
        harness.run(lc.EndRun("a", Respond("two")))
        assert harness.events is not None
        loop_id = harness.ids["a"]
        assert [(record.kind, record.seen) for record in harness.events.events()] == [
            ("loop_run_completed", ("succeeded",)), ("loop_run_completed", ("succeeded",)),
            ("loop_completed", ("completed", "max_runs_reached"))]
        assert {record.loop_id for record in harness.events.events()} == {loop_id}


def test_a_loop_event_sink_that_cannot_read_records_why() -> None:
    def broken(loop_id: str) -> object:
        raise LookupError(loop_id)

    log = LoopEventLog(broken)
    log.loop_run_completed("l", 1, "e", None, 0)
    log.loop_completed("l", "failed", "error")
    assert [record.seen for record in log.events()] == [
        ("<read raised LookupError: l>",), ("<read raised LookupError: l>",) * 2]
    unopened = LoopEventLog()
    unopened.loop_run_completed("l", 1, "e", 0.5, 10)
    assert unopened.events() == [LoopEventRecord("loop_run_completed", "l", (1, "e", 0.5, 10),
                                                 (NOT_READ,))]
    missing = LoopEventLog(lambda loop_id: None)
    missing.loop_run_completed("l", 1, "e", None, 0)
    assert missing.events()[0].seen == ("<missing>",)
