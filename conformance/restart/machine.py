"""The Hypothesis machine for a restart over the same store (RS-001..RS-008).

Random programs of submissions (some with a retry policy), dispatches, outcomes,
heartbeats, clock steps, lease passes and restarts, applied to the backend and the oracle
by the lifecycle harness, which compares every record, the listing and the health after
each. A restart stops the runtime and opens a new one over the store; the oracle keeps
every record. Whether a job running at a restart (whose body went with the old process)
holds one of the new runtime's slots is the runtime's own, so no check may depend on it:
each example draws either one slot, and restarts only while nothing runs (the order in
which queued work comes back shows, RS-002), or a slot for every job, and restarts at any
time (running work is left to the lease pass, RS-003). Nothing decides, beats for or
cancels a job running at a restart until a lease pass re-queues it (the harness refuses
it). Where the backend claims stop-signal, an aimed rule stops the runtime by SIGTERM
(RS-004) at most once an example, with work running, while no job waits for a lease pass
(its shutdown would act on work no process runs); a second one stops it before any restart,
by SIGINT under cancel (RS-007), with a body ending in the grace period (RS-006). Under a
draining profile (RS-005) a stop leaves the work running and queued for the kill, as a
restart would, so it is drawn only in the examples with a slot for every job; lease passes
(and heartbeats) are drawn only where the profile has the redelivery area (or stuck, for
heartbeats), retry policies where it has retry.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from jobconform.backends.protocol import RETRY, Backend
from jobconform.backends.restart import RESTART
from jobconform.conformance.command_engine import AreaMachine, time_rule
from jobconform.conformance.defaults import RUN_EXAMPLES
from jobconform.conformance.harness import Harness
from jobconform.conformance.machine_runner import MachineRun, run_machine
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.lifecycle import Status
from jobconform.reference.model import SHUTDOWN_CANCEL
from jobconform.spec import Profile, Registry

ALIASES = ("a", "b", "c", "d")
TIME_STEPS = (0.5, 1.0, 2.0, 5.0)
LEASE_SECONDS = 2.0
RETRY_DELAYS_MS = (1000.0, 3000.0)
STEPS_PER_EXAMPLE = 16
GRACE_SECONDS = 10.0
outcomes = st.sampled_from((cmd.Succeed("done"), cmd.Raise("IOError", "boom")))


def make_restart_machine(backend: Backend, profile: Profile, registry: Registry | None,
                         run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend and profile."""
    delays: st.SearchStrategy[float | None] = (
        st.one_of(st.none(), st.sampled_from(RETRY_DELAYS_MS))
        if RETRY in profile.areas and RETRY in backend.capabilities else st.none())

    class RestartMachine(AreaMachine[Harness | None]):
        def __init__(self) -> None:
            super().__init__(run)
            self.harness = None
            self.contended = False
            self.signalled = False  # a stop by signal was drawn in this example
            self.restarted = False  # a restart was drawn in this example

        @initialize(contended=st.booleans())
        def open_runtime(self, contended: bool) -> None:
            self.contended = contended
            self.harness = replay_harness(backend, profile, registry, self._drawn_setup())

        def _drawn_setup(self) -> dict[str, object]:
            return {"contended": self.contended}

        @property
        def runtime(self) -> Harness:
            assert self.harness is not None, "open_runtime runs before every rule"
            return self.harness

        def _running_with_body(self) -> list[str]:
            """Running jobs whose body a process of this runtime holds (not orphans)."""
            model = self.runtime.model
            return [alias for alias, job in model.jobs.items()
                    if job.status is Status.RUNNING and alias not in model.orphans]

        @precondition(lambda self: self.harness is not None
                      and len(self.runtime.ids) < len(ALIASES))
        @rule(delay_ms=delays)
        def submit(self, delay_ms: float | None) -> None:
            alias = ALIASES[len(self.runtime.ids)]
            policy = None if delay_ms is None else RetryPolicy(
                max_retries=1, retry_delay_ms=delay_ms, backoff_multiplier=1,
                max_retry_delay_ms=60_000.0)
            self._run(cmd.Submit(alias, retry=policy))

        @rule()
        def dispatch(self) -> None:
            self._run(cmd.Dispatch())

        def _restart(self) -> None:
            self.restarted = True
            self._run(cmd.Restart())

        @precondition(lambda self: self.harness is not None and bool(self._running_with_body()))
        @rule(data=st.data(), outcome=outcomes)
        def finish(self, data: st.DataObject, outcome: cmd.Outcome) -> None:
            self._run(cmd.Finish(data.draw(st.sampled_from(self._running_with_body())),
                                 outcome))

        @precondition(lambda self: self.harness is not None and bool(self._running_with_body())
                      and (self.runtime.claims_stuck or self.runtime.claims_redelivery))
        @rule(data=st.data())
        def heartbeat(self, data: st.DataObject) -> None:
            self._run(cmd.Heartbeat(data.draw(st.sampled_from(self._running_with_body()))))

        advance = time_rule("advance", TIME_STEPS, cmd.AdvanceTime)

        @precondition(lambda self: self.harness is not None and self.runtime.claims_redelivery)
        @rule()
        def expire_leases(self) -> None:
            self._run(cmd.ExpireLeases(LEASE_SECONDS))

        @precondition(lambda self: self.harness is not None and not (
            self.contended and self.runtime.model.health().running))
        @rule()
        def restart(self) -> None:
            self._restart()

        @precondition(lambda self: self.harness is not None and not self.contended
                      and len(self.runtime.ids) < len(ALIASES))
        @rule()
        def restart_with_work_running(self) -> None:
            """Aimed at RS-003, which random draws reach late: a job starts, a second
            passes, and the process stops under it; a later lease pass brings it back."""
            self._run(cmd.Submit(ALIASES[len(self.runtime.ids)]))
            self._run(cmd.Dispatch())
            self._run(cmd.AdvanceTime(1.0))
            self._restart()

        @precondition(lambda self: self.harness is not None and self.contended
                      and not self.runtime.model.health().running
                      and len(self.runtime.ids) <= len(ALIASES) - 2)
        @rule()
        def restart_with_work_queued(self) -> None:
            """Aimed at RS-002, which random draws reach on some seeds only: two jobs wait
            in the queue of a one-slot runtime as it stops, and the new one starts them
            in their order."""
            for _ in range(2):
                self._run(cmd.Submit(ALIASES[len(self.runtime.ids)]))
            self._restart()
            self._run(cmd.Dispatch())

        def _may_stop_by_signal(self) -> bool:
            """Once an example, with room for two jobs more and no job waiting for a lease
            pass (a shutdown would act on work no process runs); under drain only with a
            slot for every job (the drain leaves the work for the kill, as a restart
            would)."""
            return (self.harness is not None and self.runtime.claims_stop_signal
                    and not self.runtime.model.orphans
                    and len(self.runtime.ids) <= len(ALIASES) - 2 and not self.signalled
                    and not (self.contended and self.runtime.model.limits.shutdown_mode
                             != SHUTDOWN_CANCEL))

        @precondition(lambda self: self._may_stop_by_signal())
        @rule(sigint=st.booleans(), ends_in_grace=st.booleans(), outcome=outcomes,
              seconds=st.sampled_from(TIME_STEPS))
        def stop_by_signal_with_work(self, sigint: bool, ends_in_grace: bool,
                                     outcome: cmd.Outcome, seconds: float) -> None:
            """Aimed at RS-004..RS-007, once an example: two jobs more, a dispatch, and a
            stop signal while one runs (or both), so the shutdown has work to end and a
            runtime that ignores the signal shows it. SIGINT is drawn under cancel and
            before any restart (RS-007), so a stop that misses what a restart left is
            named by SIGTERM's rule; in the grace period some time may pass and a running
            body end (RS-006). Drawn freely and often it would cancel what the restarts
            should carry over."""
            self._stop_with_work(sigint, ends_in_grace, outcome, seconds)

        @precondition(lambda self: self._may_stop_by_signal() and not self.restarted)
        @rule(outcome=outcomes, seconds=st.sampled_from(TIME_STEPS))
        def stop_by_signal_before_any_restart(self, outcome: cmd.Outcome,
                                              seconds: float) -> None:
            """Aimed at RS-006 and RS-007, which the rule above misses on some seeds: a
            restart usually comes first (leaving, under drain, jobs for a lease pass that
            bar the stop, and under cancel, SIGTERM). Here the stop comes while no restart
            has, by SIGINT where it cancels, and a running body ends in the grace period."""
            self._stop_with_work(True, True, outcome, seconds)

        def _stop_with_work(self, sigint: bool, ends_in_grace: bool, outcome: cmd.Outcome,
                            seconds: float) -> None:
            """Two jobs more, a dispatch, and the stop (SIGINT only when asked for, under
            cancel, before any restart), with a running body ending in the grace period
            when asked for."""
            self.signalled = True
            for _ in range(2):
                self._run(cmd.Submit(ALIASES[len(self.runtime.ids)]))
            self._run(cmd.Dispatch())
            cancels = self.runtime.model.limits.shutdown_mode == SHUTDOWN_CANCEL
            running = self._running_with_body()
            during: tuple[cmd.Finish | cmd.AdvanceTime, ...] = ()
            if ends_in_grace and running:
                during = (cmd.AdvanceTime(seconds), cmd.Finish(running[0], outcome))
            self._run(cmd.StopBySignal(GRACE_SECONDS, "SIGINT" if (
                sigint and cancels and not self.restarted) else "SIGTERM", during))

    return RestartMachine


def run_restart_machine(backend: Backend, profile: Profile, registry: Registry | None,
                        seed: int = 0, examples: int = RUN_EXAMPLES) -> MachineRun:
    """Run the machine; the same seed gives the same sequences and the same result. A
    profile without the area, or a backend without the claim, runs nothing."""
    if RESTART not in profile.areas or RESTART not in backend.capabilities:
        return MachineRun()
    return run_machine(make_restart_machine, backend, profile, registry, seed=seed,
                       examples=examples, steps=STEPS_PER_EXAMPLE)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> Harness:
    """The harness this machine runs its commands through, for a trace's replay
    (conformance/area_trace.py): one slot when the example drew `contended`, else a slot
    for every job; no task cap."""
    slots = 1 if setup.get("contended") else len(ALIASES)
    return Harness(backend, profile, registry, max_concurrent=slots, unlimited_tasks=True)
