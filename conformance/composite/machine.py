"""The composite Hypothesis machine: loop runs, reminder fires, jobs, breaker probes and
governor pauses drawn against one admission.

Two owners with two slots each make full slots and backlogs likely within a few steps; a
breaker that trips after two auth failures and cools down for 30 s, and a pause armed by
two owners failing alike, reach the half-open probe and the held drain often. Two aimed
rules walk straight to those meeting points (CX-003, CX-004). The pause holding a lapsed
lease (CX-005) needs a restart and twenty minutes of clock, so it runs as a fixed
sequence on a runtime of its own (`LEASE_HOLD`), drawing nothing, as do a loop run
expired in the backlog and one whose lease is reclaimed (CX-006, `LOOP_ENDINGS`). The
`CompositeHarness` compares every answer and the whole snapshot with the oracle after
each command.

The machine stays inside what the area states: backlogs far below their depth, and the
clock stopped well before any loop run's per-run timeout. It still passes the owners'
execution timeout (900 s), so the drawn sequences see loop runs the admission stops
(CX-006) without a rule of their own.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from jobconform.backends.protocol import Backend
from jobconform.conformance.command_engine import AreaMachine
from jobconform.conformance.composite.harness import CompositeHarness, composite_config
from jobconform.conformance.machine_runner import (
    MachineRun,
    machine_runner,
    run_on_a_runtime_of_its_own,
)
from jobconform.reference import admission as ad
from jobconform.reference.composite import commands as cc
from jobconform.spec import Profile, Registry

OWNERS = ("a", "b")
TIME_STEPS = (0.0, 1.0, 30.0, 60.0)
# The clock stops here: far below a loop run's per-run timeout (7200 s).
MAX_ELAPSED_SECONDS = 3600.0
MACHINE_PARAMETERS: dict[str, object] = {
    "parallel_cap": 2, "backlog_depth": 200, "failure_threshold": 2, "cooldown_seconds": 30,
    "pause_threshold": 2, "pause_ttl_seconds": 300,
}

# CX-005 as a fixed sequence on a runtime of its own: three orphans of a restart (their
# leases lapse 900 + 300 s after they started), a pause armed a minute before the leases
# lapse, the lapse during the pause (the orphans stay running and a's keep its slots, so
# new work waits; b's late result still ends its orphan), then the pause's end, when a's
# orphans are reclaimed and the waiting work starts. No loop, reminder or breaker takes
# part, and no slot frees while work waits in the pause, so the other entries' mistakes
# stay with the drawn sequences. A drawn rule would move every other rule's draws.
LEASE_HOLD: tuple[cc.CompositeCommand, ...] = (
    *(cc.AddOwner(owner) for owner in OWNERS),
    cc.SubmitJob("a", "o1"), cc.SubmitJob("a", "o2"), cc.SubmitJob("b", "o3"),
    cc.Restart(),
    cc.PassTime(1140.0),
    cc.RecordFailure("a", "auth", "lease-x1"), cc.RecordFailure("b", "auth", "lease-x2"),
    cc.PassTime(60.0),
    cc.SubmitJob("a", "o4"),
    cc.FinishWork("o3"),
    cc.PassTime(240.0),
)

# CX-006's other endings as a fixed sequence on a runtime of its own, whose backlog
# expires work older than 200 s: a's loop run waits behind two jobs and maintenance
# expires it (AD-008); b's loop run is orphaned by a restart and its lease lapses 900 +
# 300 s after it started (AD-017). Each loop fails its run with TIMEOUT and, under abort,
# fails. The drawn sequences keep work far below the default backlog age, and a drawn
# rule would move every other rule's draws.
LOOP_ENDINGS_PARAMETERS: dict[str, object] = {**MACHINE_PARAMETERS,
                                              "backlog_max_age_seconds": 200}
LOOP_ENDINGS: tuple[cc.CompositeCommand, ...] = (
    *(cc.AddOwner(owner) for owner in OWNERS),
    cc.SubmitJob("a", "e1"), cc.SubmitJob("a", "e2"), cc.StartLoop("a", "EL1", 2),
    cc.StartLoop("b", "EL2", 2),
    cc.Restart(),
    cc.PassTime(201.0),
    cc.Maintain(),
    cc.PassTime(1000.0),
)

# The aimed rules send up to a dozen commands each, so fewer rules make an example.
STEPS_PER_EXAMPLE = 20

owners = st.sampled_from(OWNERS)


def make_composite_machine(backend: Backend, profile: Profile, registry: Registry | None,
                           run: MachineRun) -> type[RuleBasedStateMachine]:
    lease_hold_passed = False  # the fixed sequence is deterministic: once passed, it passes

    class CompositeMachine(AreaMachine[CompositeHarness]):
        def __init__(self) -> None:
            super().__init__(run)
            # First, before the sequence's own runtime opens (run_on_a_runtime_of_its_own
            # says why).
            self._lease_hold_on_a_runtime_of_its_own()
            self.harness = self._open()
            self._start = self.harness.clock.now()
            for owner in OWNERS:
                self._run(cc.AddOwner(owner))

        def _lease_hold_on_a_runtime_of_its_own(self) -> None:
            """CX-005's fixed sequence (`LEASE_HOLD`) and CX-006's (`LOOP_ENDINGS`), until
            they have passed once; a sequence that diverges diverges in every example, so
            Hypothesis reports it as such."""
            nonlocal lease_hold_passed
            if lease_hold_passed:
                return
            run_on_a_runtime_of_its_own(self._open, LEASE_HOLD, run)
            run_on_a_runtime_of_its_own(self._open_for_loop_endings, LOOP_ENDINGS, run)
            lease_hold_passed = True

        @staticmethod
        def _open_for_loop_endings() -> CompositeHarness:
            return CompositeHarness(backend, profile, registry,
                                    composite_config(profile, **LOOP_ENDINGS_PARAMETERS))

        @staticmethod
        def _open() -> CompositeHarness:
            return CompositeHarness(backend, profile, registry,
                                    composite_config(profile, **MACHINE_PARAMETERS))

        def _elapsed(self) -> float:
            return (self.harness.clock.now() - self._start).total_seconds()

        def _running(self) -> list[str]:
            return [work for work, execution in self.harness.model.admission.executions.items()
                    if execution.state == ad.RUNNING]

        def _pass(self, seconds: float) -> None:
            if self._elapsed() + seconds <= MAX_ELAPSED_SECONDS:
                self._run(cc.PassTime(seconds))

        @rule(owner=owners)
        def submit(self, owner: str) -> None:
            self._run(cc.SubmitJob(owner, self._name("j")))

        @rule(owner=owners, runs=st.integers(1, 3))
        def start_loop(self, owner: str, runs: int) -> None:
            self._run(cc.StartLoop(owner, self._name("L"), runs))

        @rule(owner=owners, delay=st.sampled_from((60.0, 90.0)))
        def create_reminder(self, owner: str, delay: float) -> None:
            self._run(cc.CreateReminder(owner, self._name("r"), delay))

        @precondition(lambda self: bool(self._running()))
        @rule(pick=st.integers(0, 7), failed=st.booleans())
        def finish(self, pick: int, failed: bool) -> None:
            running = self._running()
            self._run(cc.FinishWork(running[pick % len(running)], failed))

        @rule(owner=owners, failure_class=st.sampled_from(("auth", "timeout")))
        def record_failure(self, owner: str, failure_class: str) -> None:
            self._run(cc.RecordFailure(owner, failure_class, self._name("x")))

        @rule()
        def maintain(self) -> None:
            self._run(cc.Maintain())

        @rule(seconds=st.sampled_from(TIME_STEPS))
        def pass_time(self, seconds: float) -> None:
            self._pass(seconds)

        # -- aimed at the meeting points ---------------------------------------------------

        @rule(owner=owners, busy=st.booleans())
        def half_open_probe(self, owner: str, busy: bool) -> None:
            """CX-003: trip the owner's breaker with two failed jobs, wait out its cooldown,
            fill its slots with loop runs when `busy`, then send jobs at the half-open
            breaker: the probe is refused while no slot is free."""
            for _ in range(2):
                job = self._name("j")
                if self._run(cc.SubmitJob(owner, job)) == ad.RUNNING:
                    self._run(cc.FinishWork(job, failed=True))
            self._pass(30.0)
            if busy:
                self._run(cc.StartLoop(owner, self._name("L"), 1))
                self._run(cc.StartLoop(owner, self._name("L"), 1))
            self._run(cc.SubmitJob(owner, self._name("j")))
            self._run(cc.SubmitJob(owner, self._name("j")))

        @rule(owner=owners)
        def paused_drain(self, owner: str) -> None:
            """CX-004: both owners fail alike (a pause), work waits behind full slots, a
            slot frees, maintenance runs during the pause and after its end."""
            for failing in OWNERS:
                self._run(cc.RecordFailure(failing, "auth", self._name("x")))
            for _ in range(3):
                self._run(cc.StartLoop(owner, self._name("L"), 2))
            running = [work for work in self._running()
                       if self.harness.model.admission.executions[work].owner == owner]
            if running:
                self._run(cc.FinishWork(running[0]))
            self._run(cc.Maintain())
            self._pass(300.0)
            self._run(cc.Maintain())

    return CompositeMachine


run_composite_machine = machine_runner(make_composite_machine, steps=STEPS_PER_EXAMPLE)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> CompositeHarness:
    """The harness of this machine's commands, for a trace's replay (area_trace.py)."""
    return CompositeHarness(backend, profile, registry,
                            composite_config(profile, **MACHINE_PARAMETERS))
