"""The Hypothesis machine for the reaper and re-delivery areas.

Random programs of submissions, outcomes, clock steps, reaper starts and stops, store
outages, lease passes and operator requests parked, applied to the backend and the oracle
by the harness. Short
TTLs, intervals and leases (seconds, not hours) make sweeps, exact boundaries and
re-deliveries happen within a few steps; a re-delivery cap of 2 makes parking reachable.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from jobconform.backends.protocol import OPERATOR_QUEUE, Backend
from jobconform.conformance.aim import steps_to_edge
from jobconform.conformance.command_engine import time_rule
from jobconform.conformance.harness import Harness
from jobconform.conformance.job_draws import MACHINE_SLOTS, outcomes
from jobconform.conformance.job_machine import JobMachine, jobs
from jobconform.conformance.machine_runner import MachineRun, machine_runner
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.lifecycle import Status
from jobconform.reference.reaper import is_expired
from jobconform.spec import Profile, Registry

MACHINE_REDELIVERY_CAP = 2
# The runtime's configured reaper defaults, scaled down like the rest: a runtime that
# ignores its configuration (RP-002) shows within a few clock steps.
MACHINE_REAPER_TTL_SECONDS = 2.0
MACHINE_SWEEP_INTERVAL_MS = 1500.0
TIME_STEPS = (0.5, 1.0, 2.0, 5.0)
TTLS = (0.0, 1.0, 2.0, 5.0)
SWEEP_INTERVALS_MS = (500.0, 1000.0, 2000.0)
LEASES = (0.0, 1.0, 2.0)
# Whole ticks, so that one tick before the edge is a time ahead.
AIMED_TTLS = (1.0, 2.0, 5.0)
AIMED_LEASES = (1.0, 2.0)
RETRIES = RetryPolicy(max_retries=2, retry_delay_ms=0.0)
# Two agents and two request ids: a draw often reuses an id across agents (two requests)
# or parks the same one again (one request), RD-008.
AGENTS = ("scout", "critic")
REQUEST_IDS = ("approval-1", "approval-2")


def make_reaper_machine(backend: Backend, profile: Profile, registry: Registry | None,
                        run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class for the reaper and redelivery areas of one backend."""

    class ReaperMachine(JobMachine[Harness]):
        def __init__(self) -> None:
            super().__init__(run)
            self.harness = replay_harness(backend, profile, registry, {})
            self.starts = 0  # reaper starts with values, for the deprecated keywords

        @rule(target=jobs)
        def submit(self) -> str:
            alias = self._name("j")
            # Every other job has retries of its own where the backend claims retry: a
            # lapsed lease must spend none of them (RD-001; RQ re-delivers by a retry).
            # Taken from the count, not drawn, so the machine's draws stay as they were.
            retry = RETRIES if self.harness.claims_retry and self.counter % 2 == 0 else None
            self._run(cmd.Submit(alias, retry=retry))
            return alias

        @rule(job=jobs, outcome=outcomes)
        def finish(self, job: str, outcome: cmd.Outcome) -> None:
            self._run(cmd.Finish(job, outcome))

        advance_time = time_rule("advance_time", TIME_STEPS, cmd.AdvanceTime)

        # -- the reaper ---------------------------------------------------------------------

        @precondition(lambda self: self.harness.claims_reaper)
        @rule(ttl=st.sampled_from(TTLS), interval=st.sampled_from(SWEEP_INTERVALS_MS))
        def start_reaper(self, ttl: float, interval: float) -> None:
            # Every other start goes through seed 004's deprecated keywords where the
            # backend keeps them (RP-010). Taken from the count, not drawn, so the
            # machine's draws stay as they were.
            self.starts += 1
            old_names = self.harness.keeps_aliases and self.starts % 2 == 0
            self._run(cmd.StartReaper(ttl, interval, old_names=old_names))

        @precondition(lambda self: self.harness.claims_reaper)
        @rule()
        def start_reaper_with_defaults(self) -> None:
            self._run(cmd.StartReaper())

        @precondition(lambda self: self.harness.claims_reaper)
        @rule()
        def stop_reaper(self) -> None:
            self._run(cmd.StopReaper())

        @precondition(lambda self: self.harness.claims_reaper)
        @rule(sweeps=st.integers(1, 3))
        def store_outage(self, sweeps: int) -> None:
            self._run(cmd.StoreOutage(sweeps))

        @precondition(lambda self: self.harness.claims_reaper)
        @rule()
        def reaper_status(self) -> None:
            self._run(cmd.ReaperStatus())

        list_expired = time_rule("list_expired", TTLS, cmd.ListExpired,
                                 when=lambda self: self.harness.claims_reaper)

        # -- re-delivery ----------------------------------------------------------------------

        @precondition(lambda self: self.harness.claims_redelivery
                      and bool(self._jobs_where(lambda job: job.status is Status.RUNNING)))
        @rule(data=st.data())
        def heartbeat_running(self, data: st.DataObject) -> None:
            running = self._jobs_where(lambda job: job.status is Status.RUNNING)
            self._run(cmd.Heartbeat(data.draw(st.sampled_from(running))))

        expire_leases = time_rule("expire_leases", LEASES, cmd.ExpireLeases,
                                  when=lambda self: self.harness.claims_redelivery)

        # A dead worker's job: its lease lapses, the pass re-queues it, a worker takes it.
        # One rule for the three makes repeated re-deliveries (and the cap) common.
        @precondition(lambda self: self.harness.claims_redelivery)
        @rule(lease=st.sampled_from(LEASES))
        def lease_lapses_and_redelivered(self, lease: float) -> None:
            self._run(cmd.AdvanceTime(lease + 1))
            self._run(cmd.ExpireLeases(lease))
            self._run(cmd.Dispatch())
            # The owner that lost a job here writes late (RD-006), as a dead worker that
            # comes back does: every seed then reaches the superseded delivery.
            taken = self._jobs_where(lambda job: job.redelivery_count > 0)
            if taken:
                self._run(cmd.StaleOwnerWrite(taken[-1], cmd.STALE_WRITES[0]))

        # The owner that lost a job to a lease expiry writes late (RD-006): after a
        # re-delivery, whatever happened to the job since.
        @precondition(lambda self: self.harness.claims_redelivery and bool(self._jobs_where(
            lambda job: job.redelivery_count > 0 or job.poisoned)))
        @rule(data=st.data(), write=st.sampled_from(cmd.STALE_WRITES))
        def previous_owner_writes(self, data: st.DataObject, write: str) -> None:
            superseded = self._jobs_where(lambda job: job.redelivery_count > 0 or job.poisoned)
            self._run(cmd.StaleOwnerWrite(data.draw(st.sampled_from(superseded)), write))

        # -- aimed at the boundaries (conformance/aim.py) ------------------------------

        # A job ends now, then the clock steps to one tick before its expiry, onto it
        # (still kept: the cutoff is strict, RP-003) and one tick past it, asking
        # list_expired at each step; a running reaper sweeps on the way (RP-001, RP-004).
        @precondition(lambda self: self.harness.claims_reaper)
        @rule(ttl=st.sampled_from(AIMED_TTLS), cancel=st.booleans())
        def expiry_edge(self, ttl: float, cancel: bool) -> None:
            alias = self._name("j")
            self._run(cmd.Submit(alias))
            if cancel:
                self._run(cmd.Cancel(alias))
            else:
                self._run(cmd.Finish(alias, cmd.Succeed(None)))
                self._run(cmd.Dispatch())
            if self.harness.model.jobs[alias].finished_at is None:
                return  # no slot free: the job waits in the queue
            for step in steps_to_edge(0.0, ttl, profile.time_precision_seconds):
                self._run(cmd.AdvanceTime(step))
                self._run(cmd.ListExpired(ttl))

        # A job starts now and beats halfway through its lease; then the clock steps to one
        # tick before its lease lapses, counted from that beat, onto that instant (it keeps
        # its lease: RD-005) and one tick past it (re-queued or parked: RD-001, RD-002),
        # with a lease pass at each step. Its start is more than a lease behind at the
        # first pass, so a pass that measures silence from the start takes it while it
        # keeps its lease (RD-005); random draws seldom put a beat between a start and a
        # pass within one lease of each other.
        @precondition(lambda self: self.harness.claims_redelivery)
        @rule(lease=st.sampled_from(AIMED_LEASES))
        def lease_edge(self, lease: float) -> None:
            alias = self._name("j")
            self._run(cmd.Submit(alias))
            self._run(cmd.Dispatch())
            if self.harness.model.jobs[alias].status is not Status.RUNNING:
                return  # no slot free
            self._run(cmd.AdvanceTime(lease / 2))
            self._run(cmd.Heartbeat(alias))
            for step in steps_to_edge(0.0, lease, profile.time_precision_seconds):
                self._run(cmd.AdvanceTime(step))
                self._run(cmd.ExpireLeases(lease))

        # -- store faults between writes (RD-007, RP-008) -----------------------------------

        def _running_job(self) -> None:
            """A new job, started: a lease pass then has something to write."""
            self._run(cmd.Submit(self._name("j")))
            self._run(cmd.Dispatch())

        # A lease pass with a fault at a drawn write: one per re-queue, two per park, and
        # one past them (the fault never comes). Only where the backend claims the faults.
        @precondition(lambda self: self.harness.faults_redelivery)
        @rule(data=st.data(), kind=st.sampled_from(list(FaultKind)),
              lease=st.sampled_from(AIMED_LEASES))
        def lease_pass_under_fault(self, data: st.DataObject, kind: FaultKind,
                                   lease: float) -> None:
            self._running_job()
            self._run(cmd.AdvanceTime(lease + 1))
            writes = self.harness.model.lease_pass_writes(lease)
            write = data.draw(st.integers(1, writes + 1), label="write")
            self._run(cmd.JobStoreFault(StoreFault(kind, write), cmd.ExpireLeases(lease)))

        # The clock steps onto the next sweep with a delete of it failing: two jobs that
        # end now, on a reaper with no TTL if none runs, so that sweeps delete several.
        @precondition(lambda self: self.harness.faults_reaper
                      and self.harness.model.drain_deadline is None)
        @rule(data=st.data())
        def sweep_under_fault(self, data: st.DataObject) -> None:
            if self.harness.model.reaper is None:
                self._run(cmd.StartReaper(0.0, SWEEP_INTERVALS_MS[1]))
            for _ in range(2):
                alias = self._name("j")
                self._run(cmd.Submit(alias))
                self._run(cmd.Finish(alias, cmd.Succeed(None)))
            self._run(cmd.Dispatch())
            schedule = self.harness.model.reaper
            assert schedule is not None
            boundary = schedule.next_sweep
            expired = sum(is_expired(job, boundary - schedule.ttl)
                          for job in self.harness.model.jobs.values())
            write = data.draw(st.integers(1, expired + 1), label="write")
            seconds = (boundary - self.harness.model.now).total_seconds()
            self._run(cmd.JobStoreFault(StoreFault(FaultKind.FAIL, write),
                                        cmd.AdvanceTime(seconds)))
            self._run(cmd.ReaperStatus())

        @precondition(lambda self: self.harness.claims_redelivery)
        @rule()
        def operator_alerts(self) -> None:
            self._run(cmd.OperatorAlerts())

    if OPERATOR_QUEUE not in backend.capabilities:
        # A runtime without the operator queue (the worked examples') meets the machine it
        # was before the queue, rule for rule, so the same seed draws the same sequences.
        return ReaperMachine

    class ReaperMachineWithOperatorQueue(ReaperMachine):
        """Seed 002 §10.13's operator queue too: requests parked by agents (RD-008)."""

        @precondition(lambda self: self.harness.claims_operator_queue)
        @rule(agent=st.sampled_from(AGENTS), request=st.sampled_from(REQUEST_IDS))
        def park_request(self, agent: str, request: str) -> None:
            self._run(cmd.ParkRequest(agent, request))

        @precondition(lambda self: self.harness.claims_operator_queue)
        @rule()
        def operator_requests(self) -> None:
            self._run(cmd.OperatorRequests())

    return ReaperMachineWithOperatorQueue


run_reaper_machine = machine_runner(make_reaper_machine)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> Harness:
    """The harness of this machine's commands, for a trace's replay (area_trace.py)."""
    # No task cap: the reaper, not the cap, decides what stays.
    return Harness(backend, profile, registry, max_concurrent=MACHINE_SLOTS,
                   unlimited_tasks=True, max_redelivery=MACHINE_REDELIVERY_CAP,
                   reaper_ttl_seconds=MACHINE_REAPER_TTL_SECONDS,
                   reaper_sweep_interval_ms=MACHINE_SWEEP_INTERVAL_MS)
