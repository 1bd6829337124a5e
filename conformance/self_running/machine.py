"""The Hypothesis machine for a self-running runtime: random submissions, bodies that end
or fail into a retry, heartbeats and stretches of time, on a runtime that is never told to
dispatch, detect stuck jobs or expire leases (SR-001..SR-009).

The runtime has a slot for every job the machine submits: a retry or a re-delivery that
falls due while every slot is held waits for the runtime's order among eligible jobs, which
the harness does not model; the fixed SR-001 checks take slots away instead. Each example
draws which silence the runtime watches: a job timeout (the
lease far away, SR-002) or a lease (the job timeout far away, SR-003); two silences close
together would leave the order of the two passes to the runtime. Every `pass_time` stops
at the read points of every open window (`SelfRunningHarness`), so the drawn stretches
only decide where time lands between them. Retry delays are whole seconds of at least two
poll intervals, so a retry's early read comes after its failure.

With the reaper claimed (SR-005), an ended job's removal window is an open window like the
others: `windows_pass` lets the reaper's TTL and one sweep interval go by, so the machine
reaches it without a rule of its own and its draws stay as they were.

With scheduling claimed (SR-006), a rule creates a one-shot job or a cron schedule on
the backend's scheduler, over the same clock; each fire's window is an open window too, so
every stretch of time stops at its read points. A backend without the claim never draws it.

With scheduling-ends claimed too (SR-009), every schedule's executions end, and the
scheduler must learn each end by itself within one poll interval; each end's window is an
open window like the fires'. The ends take no draw of their own, so that the machine's
other draws stay as they were: the first schedule's executions run half a poll interval
after their dispatch (an end between two polls) and succeed, the second's three seconds
and fail, the third's twenty seconds (longer than most stretches) and are cancelled.

With the breaker's seams claimed (SR-007), a rule trips a target's breaker with work
queued and its drain lost (at most twice, in half of the examples, so that the other
rules keep their share), and may let the backstop's interval pass at once: every stretch
of time stops one tick before the next sweep boundary and at it while such work waits.

With reminders claimed (SR-008), a rule creates a reminder (at most two) a minute or a
minute and a half ahead, whose first dispatches may fail (each comes back
retry_delay_seconds later, and three failures end it), and may let its delay pass at
once: every stretch of time stops one tick before each due time and at it.

It draws only what the backend claims (spec/self-running.yaml `needs`): the job timeout
with `stuck`, the lease with `redelivery`, retry policies with `retry`. A backend claiming
neither silence gets no silence and no heartbeats (nothing would read them); one claiming
no retry gets jobs without a policy.
"""

from __future__ import annotations

from functools import partial
from operator import methodcaller
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

from jobconform.backends.protocol import REDELIVERY, RETRY, STUCK, Backend
from jobconform.backends.scheduling.protocol import SCHEDULING
from jobconform.backends.self_running import SELF_RUNNING
from jobconform.conformance.command_engine import AreaMachine, time_rule
from jobconform.conformance.machine_runner import MachineRun, machine_runner
from jobconform.conformance.self_running.backstop import (
    backstop_interval_of,
    watches_backstop,
)
from jobconform.conformance.self_running.harness import RUNNING, SelfRunningHarness
from jobconform.conformance.self_running.reminders import watches_reminders
from jobconform.conformance.self_running.schedules import EndPlan, watches_ends
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.spec import Profile, Registry

ALIASES = ("a", "b", "c", "d")
SILENCES = (5.0, 12.0, 30.0)
FAR = 100_000.0
STRETCHES = (0.5, 1.0, 2.0, 4.0, 9.0, 25.0)
RETRY_DELAYS_MS = (2000.0, 3000.0, 7000.0)
STEPS_PER_EXAMPLE = 12
SCHEDULES = ("s1", "s2", "s3")
# A one-shot job's delay (0: due at once), or a cron expression: fire times two minutes
# apart, so a long stretch passes several, or a quarter of an hour apart, so few of its
# read points land in the reaper's hour-long windows.
ONE_SHOT_DELAYS = (0.0, 0.5, 7.0, 45.0)
CRON_EXPRESSIONS = ("*/2 * * * *", "*/15 * * * *")
# How each schedule's executions end (SR-009), by its place: s1, s2, s3.
END_PLANS = (EndPlan(0.5, "succeeded"), EndPlan(3.0, "failed"),
             EndPlan(20.0, "cancelled", None))
BREAKER_TARGETS = ("t1", "t2")
MAX_TRIPS = 2
REMINDERS = ("r1", "r2")
# At least the canonical min_delay_seconds; one lands between two whole seconds.
REMINDER_DELAYS = (60.0, 61.5, 90.0)


def make_self_running_machine(backend: Backend, profile: Profile, registry: Registry | None,
                              run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend and profile."""
    claims = frozenset(backend.capabilities)
    # Which silence an example watches: True the job timeout, False the lease, None neither.
    watched: st.SearchStrategy[bool | None] = (
        st.booleans() if {STUCK, REDELIVERY} <= claims else st.just(STUCK in claims)
        if claims & {STUCK, REDELIVERY} else st.none())
    schedules = SCHEDULING in claims and SCHEDULING in profile.areas
    backstop = watches_backstop(backend, profile, registry)
    reminds = watches_reminders(backend, profile, registry)
    ends = schedules and watches_ends(backend, profile, registry)
    delays: st.SearchStrategy[float | None] = (
        st.one_of(st.none(), st.sampled_from(RETRY_DELAYS_MS)) if RETRY in claims
        else st.none())

    class SelfRunningMachine(AreaMachine[SelfRunningHarness | None]):
        def __init__(self) -> None:
            super().__init__(run)
            self.harness = None
            self.silence = 0.0
            self.trips = 0
            self.setup: dict[str, Any] = {}

        @initialize(watches_stuck=watched, silence=st.sampled_from(SILENCES),
                    delay_ms=delays, trips=st.booleans() if backstop else st.just(False))
        def open_runtime(self, watches_stuck: bool | None, silence: float,
                         delay_ms: float | None, trips: bool) -> None:
            """Open the runtime and submit the first job: every example has one. Half of
            the examples trip breakers (SR-007), so that the others keep the job rules'
            share of the steps."""
            self.setup = {"watches_stuck": watches_stuck, "silence": silence}
            self.trips = 0 if trips else MAX_TRIPS
            self.silence = 0.0 if watches_stuck is None else silence
            self.harness = SelfRunningHarness(
                backend, profile, registry, max_concurrent=len(ALIASES),
                job_timeout_seconds=silence if watches_stuck else FAR,
                lease_seconds=silence if watches_stuck is False else FAR)
            self._submit(delay_ms)

        @property
        def runtime(self) -> SelfRunningHarness:
            assert self.harness is not None, "open_runtime runs before every rule"
            return self.harness

        def _drawn_setup(self) -> dict[str, Any]:
            return self.setup

        def _do(self, action: str, *args: object) -> None:
            """Call the harness's method `action` with `args`, as one step of the run."""
            self._run(methodcaller(action, *args))

        def _running(self) -> list[str]:
            return [alias for alias, job in self.runtime.jobs.items() if job.status == RUNNING]

        def _submit(self, delay_ms: float | None) -> None:
            alias = ALIASES[len(self.runtime.jobs)]
            policy = None if delay_ms is None else RetryPolicy(
                max_retries=2, retry_delay_ms=delay_ms, backoff_multiplier=1,
                max_retry_delay_ms=60_000.0)
            self._do("submit", alias, policy)

        @precondition(lambda self: self.harness is not None
                      and len(self.harness.jobs) < len(ALIASES))
        @rule(delay_ms=delays)
        def submit(self, delay_ms: float | None) -> None:
            self._submit(delay_ms)

        @precondition(lambda self: schedules and self.harness is not None
                      and len(self.harness.schedules.schedules) < len(SCHEDULES))
        @rule(timetable=st.one_of(st.sampled_from(ONE_SHOT_DELAYS),
                                  st.sampled_from(CRON_EXPRESSIONS)))
        def schedule(self, timetable: float | str) -> None:
            """A one-shot job or a cron schedule: it must fire by itself (SR-006); where
            ends are watched, the scheduler must learn by itself how each of its
            executions ended (SR-009)."""
            place = len(self.runtime.schedules.schedules)
            alias, plan = SCHEDULES[place], END_PLANS[place] if ends else None
            if isinstance(timetable, str):
                self._do("schedule_cron", alias, timetable, "UTC", plan)
            else:
                self._do("schedule_once", alias, timetable, plan)

        @precondition(lambda self: backstop and self.harness is not None
                      and self.trips < MAX_TRIPS)
        @rule(at=st.sampled_from(BREAKER_TARGETS), works=st.integers(1, 2),
              sweep=st.booleans())
        def breaker_trips(self, at: str, works: int, sweep: bool) -> None:
            """Work queued for `at` and its breaker tripped with the drain lost: the
            runtime's own backstop must fail it at its next sweep, not before (SR-007);
            with `sweep`, the backstop's interval passes at once (reading one tick before
            the boundary and at it), else later stretches of time reach it."""
            self.trips += 1
            names = tuple(f"{at}-w{self.trips}-{number}" for number in range(works))
            self._do("trip_breaker_with_lost_drain", at, names)
            if sweep:
                self._do("pass_time", backstop_interval_of(profile))

        @precondition(lambda self: reminds and self.harness is not None
                      and len(self.harness.reminders.ids) < len(REMINDERS))
        @rule(delay=st.sampled_from(REMINDER_DELAYS), failures=st.integers(0, 3),
              wait=st.booleans())
        def remind(self, delay: float, failures: int, wait: bool) -> None:
            """A reminder whose first `failures` dispatches fail: each dispatch must come
            by itself at its due time, none a tick before (SR-008); with `wait`, its delay
            passes at once, else later stretches of time reach it."""
            self._do("remind", REMINDERS[len(self.runtime.reminders.ids)], delay, failures)
            if wait:
                self._do("pass_time", delay)

        @precondition(lambda self: self.silence > 0)
        @rule()
        def silence_passes(self) -> None:
            """Long enough for a job silent from now on to be failed or re-delivered."""
            self._do("pass_time", self.silence + 2 * self.runtime.poll_interval)

        pass_time = time_rule("pass_time", STRETCHES, partial(methodcaller, "pass_time"))

        @rule()
        def windows_pass(self) -> None:
            self._do("pass_through_windows")

        @precondition(lambda self: self.harness is not None and bool(self._running()))
        @rule(data=st.data(), fails=st.booleans())
        def body_ends(self, data: st.DataObject, fails: bool) -> None:
            alias = data.draw(st.sampled_from(self._running()))
            outcome: cmd.Outcome = cmd.Raise("IOError", "boom") if fails else cmd.Succeed(1)
            self._do("finish", alias, outcome)

        @precondition(lambda self: self.harness is not None and bool(self._running()))
        @rule(data=st.data())
        def body_fails_between_polls(self, data: st.DataObject) -> None:
            """Half a poll interval passes, then a running body fails: its retry comes due
            off the poll grid, between two ticks, which random stretches (mostly whole
            ticks) rarely give, where a runtime whose scheduler and workers poll on grids
            of their own starts it late (SR-004)."""
            alias = data.draw(st.sampled_from(self._running()))
            self._do("pass_time", self.runtime.poll_interval / 2)
            if alias in self._running():
                self._do("finish", alias, cmd.Raise("IOError", "boom"))

        @precondition(lambda self: self.harness is not None and self.silence > 0
                      and bool(self._running()))
        @rule(data=st.data())
        def heartbeat(self, data: st.DataObject) -> None:
            self._do("heartbeat", data.draw(st.sampled_from(self._running())))

    return SelfRunningMachine


run_self_running_machine = machine_runner(make_self_running_machine, steps=STEPS_PER_EXAMPLE,
                                          area=SELF_RUNNING)
