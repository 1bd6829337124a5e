"""The breaker's Hypothesis machine: random calls, outcomes, concurrent callers and time.

The `BreakerHarness` does the comparing after every command (both workers' reads, the
queues, the failed work, the outage log); this machine only generates commands. Two
targets, time steps that land on the cooldown and lease edges, and outcomes of every
class make trips, probes, lapsed leases and doubling cooldowns likely within a few dozen
steps. A divergence is shrunk to a minimal command list.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    initialize,
    multiple,
    rule,
)

from jobconform.backends.protocol import BREAKER_SEAMS, Backend
from jobconform.conformance.aim import TICK_SECONDS, fine_steps, steps_onto
from jobconform.conformance.breaker.harness import BreakerHarness, breaker_settings
from jobconform.conformance.command_engine import AreaMachine, time_rule
from jobconform.conformance.machine_runner import MachineRun, machine_runner
from jobconform.reference.breaker import commands as bc
from jobconform.reference.breaker.oracle import FAILURE_CLASSES, BreakerSettings
from jobconform.spec import Profile, Registry, SpecError

TARGETS = ("t1", "t2")
MACHINE_THRESHOLD = 2
# Seconds that land on and next to the canonical cooldowns (30, 60, 120 s) and the lease.
TIME_STEPS = (0.0, 1.0, 29.0, 30.0, 59.0, 60.0, 120.0, 300.0)
Called = tuple[str, str]  # (target, call)
PROBE_OUTCOMES = (("success", None), ("failure", "auth"), ("failure", "timeout"),
                  ("cancelled", None))
probe_outcomes = st.sampled_from(PROBE_OUTCOMES)

targets = st.sampled_from(TARGETS)
workers = st.sampled_from((0, 1))
outcomes = st.one_of(
    st.just(("success", None)),
    st.just(("cancelled", None)),
    # Counted failures are drawn more often, so that breakers trip.
    st.tuples(st.just("failure"), st.sampled_from(("auth", "auth", *FAILURE_CLASSES))),
)


# Raw ends of failed calls (CB-016, CB-017): kills by signal name and by exit code, and
# plain exits, each with or without output and with texts that carry auth indicators,
# kill markers, both or neither. Plain exits are half of the draws: they are where an
# auth indicator decides, and where no output must not.
RAW_TEXTS = ("", "", "tool call failed", "authentication", "Authentication failed",
             "HTTP 401 Unauthorized", "invalid API key", "token expired or revoked",
             "Execution terminated by SIGKILL", "request timed out",
             "OOM kill: authentication failed", "Unauthorized: SIGTERM received")
RawEndFields = tuple[str | None, int | None, bool, str]
raw_texts = st.sampled_from(RAW_TEXTS)
raw_ends = st.one_of(
    st.tuples(st.sampled_from(("SIGKILL", "SIGTERM", "SIGINT")),
              st.sampled_from((None, 1, 137, -9)), st.booleans(), raw_texts),
    st.tuples(st.sampled_from((None, "SIGHUP")), st.sampled_from((137, 143, 130, -9, -15, -2)),
              st.booleans(), raw_texts),
    st.tuples(st.sampled_from((None, "SIGHUP")), st.sampled_from((None, 1, 2, 139, 255)),
              st.booleans(), raw_texts),
    st.tuples(st.sampled_from((None, "SIGHUP")), st.sampled_from((None, 1, 2, 139, 255)),
              st.booleans(), raw_texts),
)


def machine_settings(profile: Profile) -> BreakerSettings:
    """The profile's breaker settings with the machine's low threshold: it reaches trips,
    probes and doubled cooldowns in few steps, as the lifecycle machine's two slots reach
    a full runtime."""
    settings = breaker_settings(profile)
    return replace(settings, failure_threshold=min(settings.failure_threshold,
                                                   MACHINE_THRESHOLD))


def checks_dispatch_seams(profile: Profile, registry: Registry | None,
                          backend: Backend | None = None) -> bool:
    """Whether the backstop sweep and missed heartbeats apply under this profile (CB-014,
    CB-015: the canonical profile's dispatch layer) and, given a backend, whether it claims
    `breaker-seams`; elsewhere the machine has no rule sending either, so a breaker without
    them is never asked for them."""
    if registry is None:
        return False
    if backend is not None and BREAKER_SEAMS not in backend.capabilities:
        return False
    try:
        return all(profile.name in registry.requirement(rid).profiles
                   for rid in ("CB-014", "CB-015"))
    except SpecError:
        return False


def race_won_first(names: tuple[str, ...], probe: str | None) -> tuple[str, ...]:
    """Concurrent callers in the order later rules draw them from the bundle: the one that
    won the race for the probe first (if one of them did), then the others as named.

    Which caller wins is the threads' timing, not the seed's (CB-007 only says one does).
    Later rules draw a caller by its position in the bundle, so with the callers in naming
    order the same seed would report on the probe in one run and on a refused caller in
    the next, and the runs would part from there. In this order a position stands for the
    same role in every run, so the same seed runs the same commands; only which of the
    callers' names the probe carries may differ.
    """
    return tuple(sorted(names, key=lambda name: name != probe))


def make_breaker_machine(backend: Backend, profile: Profile, registry: Registry | None,
                         run: MachineRun) -> type[RuleBasedStateMachine]:
    seams = checks_dispatch_seams(profile, registry, backend)

    class BreakerMachine(AreaMachine[BreakerHarness]):
        calls = Bundle("calls")

        def __init__(self) -> None:
            super().__init__(run)
            self.harness = BreakerHarness(backend, profile, registry,
                                          machine_settings(profile))

        @initialize()
        def engage(self) -> None:
            self._run(bc.SwitchBreaker(True))
            for target in TARGETS:
                self._run(bc.OptIn(target, True))

        @rule(target=calls, at=targets, worker=workers)
        def call(self, at: str, worker: int) -> Called:
            call = self._name("c")
            self._run(bc.Call(at, call, worker))
            return at, call

        @rule(at=targets, worker=workers, failures=st.integers(1, MACHINE_THRESHOLD))
        def calls_failing_auth(self, at: str, worker: int, failures: int) -> None:
            """Calls that fail with auth at once: they make trips, hence probes, common."""
            for _ in range(failures):
                call = self._name("c")
                self._run(bc.Call(at, call, worker))
                self._run(bc.Report(at, call, "failure", "auth", worker))

        @rule(target=calls, at=targets, count=st.integers(2, 5))
        def calls_at_once(self, at: str, count: int) -> MultipleResults[Called]:
            names = tuple(self._name("c") for _ in range(count))
            self._run(bc.CallsAtOnce(at, names))
            return multiple(*((at, name) for name in race_won_first(
                names, self.harness.model.breaker(at).probe)))

        @rule(called=calls, outcome=outcomes, worker=workers)
        def report(self, called: Called, outcome: tuple[str, str | None], worker: int) -> None:
            at, call = called
            self._run(bc.Report(at, call, outcome[0], outcome[1], worker))

        @rule(at=targets, rounds=st.lists(probe_outcomes, min_size=1, max_size=3),
              worker=workers, silence=st.sampled_from((0.0, 0.0, 59.0, 60.0)))
        def probe_rounds(self, at: str, rounds: list[tuple[str, str | None]], worker: int,
                         silence: float) -> None:
            """While the target is open: its cooldown runs out, a call arrives and, after
            `silence` seconds (up to the lease), reports; up to three rounds in a row, so
            that a failed probe's longer cooldown meets a later success."""
            for outcome, failure_class in rounds:
                open_until = self.harness.model.breaker(at).open_until
                if open_until is None:
                    return
                now = self.harness.clock.now()
                if open_until > now:
                    self._run(bc.PassTime((open_until - now).total_seconds()))
                call = self._name("p")
                self._run(bc.Call(at, call, worker))
                if silence:
                    self._run(bc.PassTime(silence))
                self._run(bc.Report(at, call, outcome, failure_class, 1 - worker))

        @rule(at=targets)
        def add_work(self, at: str) -> None:
            self._run(bc.AddWork(at, self._name("w")))

        pass_time = time_rule("pass_time", TIME_STEPS, bc.PassTime)

        # Time finer than a second anywhere in a sequence (issue 33, LC-005): the whole
        # steps above keep every open period's end on a whole second, where a breaker
        # comparing it with the clock in whole seconds is right. After one of these, a
        # trip ends between whole seconds, and cooldown_edge's call a microsecond before
        # the end shows such a breaker admitting its probe early (CB-005). (Named
        # within_a_second, sorting last, seed 0 no longer reached breaker_cooldown_kept.)
        time_passes_finely = time_rule(
            "time_passes_finely", fine_steps(profile.time_precision_seconds), bc.PassTime)

        @rule(at=targets)
        def wait_out_cooldown(self, at: str) -> None:
            """Time moves exactly to the end of the target's open period, the edge where
            an off-by-one shows."""
            open_until = self.harness.model.breaker(at).open_until
            now = self.harness.clock.now()
            if open_until is not None and open_until > now:
                self._run(bc.PassTime((open_until - now).total_seconds()))

        # -- aimed at the boundaries (conformance/aim.py) ------------------------------

        @rule(at=targets, worker=workers, lapse=st.booleans())
        def cooldown_edge(self, at: str, worker: int, lapse: bool) -> None:
            """CB-005/CB-007/CB-008/CB-010: the target trips if it is not open, then a
            call one tick before the open period ends (refused: still open) and one
            exactly at its end (the probe), which succeeds at once (the breaker closes,
            its cooldown reset) or, with `lapse`, only after the clock has stopped one
            tick before its lease ends and then on the lease's end."""
            if self.harness.model.breaker(at).open_until is None:
                self.calls_failing_auth(at, worker, MACHINE_THRESHOLD)
            open_until = self.harness.model.breaker(at).open_until
            now = self.harness.clock.now()
            if open_until is None or open_until - now < timedelta(seconds=TICK_SECONDS):
                return  # engaged off, store down, or already at the edge
            left = (open_until - now).total_seconds()
            call = ""
            for step in steps_onto(0.0, left, profile.time_precision_seconds):
                self._run(bc.PassTime(step))
                call = self._name("e")
                self._run(bc.Call(at, call, worker))
            if lapse:
                for step in steps_onto(0.0, self.harness.model.settings.probe_lease_seconds,
                                       profile.time_precision_seconds):
                    self._run(bc.PassTime(step))
            self._run(bc.Report(at, call, "success", None, worker))

        @rule(at=targets)
        def reset(self, at: str) -> None:
            self._run(bc.ResetBreaker(at))

        # The disturbances are brief (off, one call and its outcome, on again): left in
        # place they would keep most sequences away from trips and probes.

        @rule(at=targets, outcome=outcomes)
        def while_store_down(self, at: str, outcome: tuple[str, str | None]) -> None:
            self._run(bc.StoreOutage(True))
            self._disturbed_call(at, outcome)
            self._run(bc.StoreOutage(False))

        @rule(at=targets, outcome=outcomes)
        def while_opted_out(self, at: str, outcome: tuple[str, str | None]) -> None:
            self._run(bc.OptIn(at, False))
            self._disturbed_call(at, outcome)
            self._run(bc.OptIn(at, True))

        @rule(at=targets, outcome=outcomes)
        def while_switched_off(self, at: str, outcome: tuple[str, str | None]) -> None:
            self._run(bc.SwitchBreaker(False))
            self._disturbed_call(at, outcome)
            self._run(bc.SwitchBreaker(True))

        def _disturbed_call(self, at: str, outcome: tuple[str, str | None]) -> None:
            call = self._name("d")
            self._run(bc.Call(at, call))
            self._run(bc.AddWork(at, self._name("w")))
            self._run(bc.Report(at, call, outcome[0], outcome[1]))

        @rule(at=targets)
        def read(self, at: str) -> None:
            self._run(bc.ReadBreaker(at))

    if not seams:
        # Under a profile without the dispatch seams, or for a backend not claiming them,
        # the machine is the one it was before them, rule for rule, so the same seed draws
        # the same sequences there.
        return BreakerMachine

    class BreakerMachineWithSeams(BreakerMachine):
        """Seed 002's dispatch layer too: missed heartbeats, the backstop sweep and the
        runtime's own classing of raw ends (CB-014 to CB-017)."""

        @rule(at=targets, worker=workers, ends=st.lists(raw_ends, min_size=1, max_size=3))
        def raw_end(self, at: str, worker: int, ends: list[RawEndFields]) -> None:
            """CB-016, CB-017: calls arrive and each fails with a raw end the runtime
            classes; a closed breaker's count, an open one's probe, show what it decided.
            CB-018, CB-019: the error it reports for the same end."""
            for signal, exit_code, output, error_text in ends:
                call = self._name("r")
                self._run(bc.Call(at, call, worker))
                self._run(bc.CallEndsRaw(at, call, signal, exit_code, output, error_text,
                                         worker))
                self._run(bc.EndReported(call, signal, exit_code, output, error_text,
                                         worker))

        @rule(at=targets, worker=workers)
        def missed_heartbeat(self, at: str, worker: int) -> None:
            self._run(bc.MissedHeartbeat(at, worker))

        @rule(worker=workers)
        def backstop(self, worker: int) -> None:
            self._run(bc.BackstopSweep(worker))

        @rule(at=targets, worker=workers, works=st.integers(1, 2),
              wait=st.sampled_from((0.0, 29.0, 30.0, 60.0)))
        def lost_drain(self, at: str, worker: int, works: int, wait: float) -> None:
            """CB-014: work is queued, the target trips (if it is not open already)
            with its drain lost, time passes (into half-open, the backstop's usual case:
            its period outlasts the base cooldown) and the backstop sweeps."""
            for _ in range(works):
                self._run(bc.AddWork(at, self._name("w")))
            self._run(bc.DrainLost(True))
            if self.harness.model.breaker(at).open_until is None:
                self.calls_failing_auth(at, worker, MACHINE_THRESHOLD)
            self._run(bc.DrainLost(False))
            if wait:
                self._run(bc.PassTime(wait))
            self._run(bc.BackstopSweep(1 - worker))

    return BreakerMachineWithSeams


run_breaker_machine = machine_runner(make_breaker_machine)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> BreakerHarness:
    """The harness of this machine's commands, for a trace's replay (area_trace.py)."""
    return BreakerHarness(backend, profile, registry, machine_settings(profile))
