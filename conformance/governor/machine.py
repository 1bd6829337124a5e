"""The governor's Hypothesis machine: random offers, failure results, replays, waits and time.

Small caps (two per target, three in all) and a pause threshold of three distinct targets
among four make full windows, refusals, pauses and their expiry likely within a few dozen
steps; time steps land on the window and TTL edges. The `GovernorHarness` compares every
answer, both governors' pause and each one's re-send sweep after a restart with the oracle.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule

from jobconform.backends.protocol import Backend
from jobconform.conformance.aim import fine_steps, steps_to_edge
from jobconform.conformance.command_engine import AreaMachine, time_rule
from jobconform.conformance.governor.harness import GovernorHarness, governor_settings
from jobconform.conformance.machine_runner import MachineRun, machine_runner
from jobconform.reference.governor import commands as gc
from jobconform.spec import Profile, Registry

TARGETS = ("t1", "t2", "t3", "t4")
# Raw ends (signal, exit code, output, error text): kills by signal, by exit code and by
# marker beside an auth indicator, confirmed auth messages, and a silent failure (RG-014).
RawEndFields = tuple[str | None, int | None, bool, str]
RAW_ENDS: tuple[RawEndFields, ...] = (
    ("SIGKILL", None, False, ""), (None, 137, False, ""),
    (None, -15, True, "authentication failed"), (None, 1, False, "OOM kill: unauthorized"),
    (None, 1, True, "HTTP 401 Unauthorized"), (None, 1, False, "invalid API key"),
    (None, 1, False, ""))
CLASSES = ("auth", "billing", "timeout")
TIME_STEPS = (0.0, 1.0, 15.0, 30.0, 59.0, 60.0, 120.0, 300.0)
# Small limits reach full windows and an armed pause in few steps.
MACHINE_PARAMETERS = {"target_limit": 2, "fleet_limit": 3, "pause_threshold": 3}

targets = st.sampled_from(TARGETS)
workers = st.sampled_from((0, 1))


def make_governor_machine(backend: Backend, profile: Profile, registry: Registry | None,
                          run: MachineRun) -> type[RuleBasedStateMachine]:
    class GovernorMachine(AreaMachine[GovernorHarness]):
        def __init__(self) -> None:
            super().__init__(run)
            self.harness = GovernorHarness(backend, profile, registry, governor_settings(
                profile, **MACHINE_PARAMETERS))
            self.results = 0

        @rule(at=targets, worker=workers)
        def offer(self, at: str, worker: int) -> None:
            self._run(gc.Offer(at, worker))

        @rule(at=targets, failure_class=st.sampled_from(CLASSES), worker=workers,
              replay=st.booleans())
        def record_failure(self, at: str, failure_class: str, worker: int,
                           replay: bool) -> None:
            """A new result, or a replay of the last one (under whatever target)."""
            if not (replay and self.results):
                self.results += 1
            self._run(gc.RecordFailure(at, failure_class, f"r{self.results}", worker))

        @rule(at=targets, worker=workers)
        def record_rate_limited(self, at: str, worker: int) -> None:
            """RG-010: a new result the agent answered with HTTP 429. Replays are
            record_failure's: a replay counted shows only when a later failure arms the
            pause, and a run without shrinking blames that failure (RG-007's gallery
            entry is found by replay_at_threshold)."""
            self.results += 1
            self._run(gc.RecordRateLimited(at, f"r{self.results}", worker))

        @rule(count=st.integers(2, 4), worker=workers)
        def rate_limit_storm(self, count: int, worker: int) -> None:
            """RG-010: the provider rate-limits several targets at one moment."""
            for at in TARGETS[:count]:
                self.results += 1
                self._run(gc.RecordRateLimited(at, f"r{self.results}", worker))

        @rule(ends=st.lists(st.sampled_from(RAW_ENDS), min_size=2, max_size=4),
              worker=workers)
        def raw_end_storm(self, ends: list[RawEndFields], worker: int) -> None:
            """RG-014: several targets' results end at one moment as raw ends the governor
            classes itself, as in a wave of OOM kills: kills never arm the pause."""
            for index, (signal, exit_code, output, error_text) in enumerate(ends):
                self.results += 1
                at = TARGETS[index]
                self._run(gc.RecordRawEnd(at, f"r{self.results}", signal, exit_code, output,
                                          error_text, worker))

        @rule(failure_class=st.sampled_from(CLASSES), count=st.integers(2, 4))
        def shared_cause(self, failure_class: str, count: int) -> None:
            """Several targets fail alike at one moment, as in a provider outage."""
            for at in TARGETS[:count]:
                self.results += 1
                self._run(gc.RecordFailure(at, failure_class, f"r{self.results}"))

        @rule(previous=st.one_of(st.none(), st.sampled_from([500.0, 1000.0, 5000.0, 40_000.0])),
              draw=st.sampled_from([0.0, 0.25, 0.5, 0.999]),
              retry_after=st.one_of(st.none(), st.sampled_from([2000.0, 90_000.0])))
        def ask_wait(self, previous: float | None, draw: float,
                     retry_after: float | None) -> None:
            self._run(gc.AskWait(previous, draw, retry_after))

        @rule(worker=workers, draw=st.sampled_from([0.0, 0.25, 0.5, 0.999]))
        def restart(self, worker: int, draw: float) -> None:
            """RG-009: a worker restarts; its first re-send sweep waits its own jitter."""
            self._run(gc.Restart(draw, worker))

        @rule(worker=workers, draws=st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.999]),
                                             max_size=4))
        def ask_resend_times(self, worker: int, draws: list[float]) -> None:
            """RG-012: when the sweep after the latest restart sends its envelopes."""
            self._run(gc.AskResendTimes(tuple(draws), worker))

        @rule(down=st.booleans())
        def store_outage(self, down: bool) -> None:
            """RG-011: the shared store goes down (everything fails open) or comes back."""
            self._run(gc.GovernorStoreOutage(down))

        @rule(worker=workers, enabled=st.booleans())
        def switch(self, worker: int, enabled: bool) -> None:
            """RG-013: a governor's master switch; off, it holds nothing back but still
            counts the failures it records."""
            self._run(gc.SwitchGovernor(enabled, worker))

        elapse = time_rule("elapse", TIME_STEPS, gc.Elapse)

        # Time finer than a second anywhere in a sequence (issue 33, LC-005): the whole
        # steps above arm every pause on a whole second, where a store keeping its end in
        # whole seconds is right. After one of these, a pause is armed between whole
        # seconds, and both governors' reads of it show such a store's end, up to a second
        # early (RG-008); pause_ttl_edge's offers a microsecond either side of the end show
        # a governor comparing it coarser.
        time_passes_finely = time_rule(
            "time_passes_finely", fine_steps(profile.time_precision_seconds), gc.Elapse)

        # -- aimed at the boundaries (conformance/aim.py) ------------------------------

        @rule(failure_class=st.sampled_from(("auth", "billing")), worker=workers)
        def pause_ttl_edge(self, failure_class: str, worker: int) -> None:
            """RG-008: a shared cause arms the pause (if none holds), then offers one tick
            before its end (refused), exactly at it and one tick past it (judged by the
            caps again)."""
            settings = self.harness.settings
            assert settings is not None
            if self.harness.model.running_pause(self.harness.clock.now()) is None:
                for at in TARGETS[:settings.pause_threshold]:
                    self.results += 1
                    self._run(gc.RecordFailure(at, failure_class, f"r{self.results}"))
            paused_until = self.harness.model.running_pause(self.harness.clock.now())
            if paused_until is None:
                return
            left = (paused_until - self.harness.clock.now()).total_seconds()
            for step in steps_to_edge(0.0, left, profile.time_precision_seconds):
                self._run(gc.Elapse(step))
                self._run(gc.Offer(TARGETS[0], worker))

        @rule(failure_class=st.sampled_from(("auth", "billing")), worker=workers)
        def replay_at_threshold(self, failure_class: str, worker: int) -> None:
            """RG-007: one target fewer than the pause threshold fails alike, then the last
            of those results is replayed under another target: counted, the replay alone
            would arm the pause."""
            settings = self.harness.settings
            assert settings is not None
            if self.harness.model.running_pause(self.harness.clock.now()) is not None:
                return
            for at in TARGETS[:settings.pause_threshold - 1]:
                self.results += 1
                self._run(gc.RecordFailure(at, failure_class, f"r{self.results}", worker))
            self._run(gc.RecordFailure(TARGETS[settings.pause_threshold - 1], failure_class,
                                       f"r{self.results}", 1 - worker))

        @rule(at=targets, worker=workers)
        def target_window_edge(self, at: str, worker: int) -> None:
            """RG-002: the target's cap is filled at one instant, then offers one tick
            before the window has slid past those, exactly at its length and one tick
            past it."""
            settings = self.harness.settings
            assert settings is not None
            for _ in range(settings.target_limit):
                self._run(gc.Offer(at, worker))
            for step in steps_to_edge(0.0, settings.target_window_seconds,
                                      profile.time_precision_seconds):
                self._run(gc.Elapse(step))
                self._run(gc.Offer(at, worker))

        @rule()
        def read_pause(self) -> None:
            self._run(gc.ReadPause())

    return GovernorMachine


run_governor_machine = machine_runner(make_governor_machine)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> GovernorHarness:
    """The harness of this machine's commands, for a trace's replay (area_trace.py)."""
    return GovernorHarness(backend, profile, registry,
                           governor_settings(profile, **MACHINE_PARAMETERS))
