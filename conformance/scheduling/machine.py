"""The scheduling Hypothesis machine: random schedules, pre-check answers, manual triggers,
switch flips, a second scheduler, clock steps and restarts, backend against oracle at
every step.

The harness does the comparing (every answer, every schedule, every history, every
dispatch and pre-check call); this machine only generates commands. Each run starts the
clock just before a daylight-saving change of America/New_York (or at the kit's epoch),
and the expressions name the hours that change, so gaps and folds come up in a few
steps; a rule jumps to the next fire time, where firing happens.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    initialize,
    multiple,
    precondition,
    rule,
)

from jobconform.backends.protocol import (
    SCHEDULING_ENDS,
    SCHEDULING_UTC_ONLY,
    SCHEDULING_VALIDATION,
    Backend,
)
from jobconform.conformance.aim import steps_onto
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.command_engine import AreaMachine, time_rule
from jobconform.conformance.machine_runner import MachineRun, machine_runner
from jobconform.conformance.scheduling.harness import SchedulingHarness
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling import commands as sc
from jobconform.reference.scheduling.oracle import (
    BusinessStatus,
    ExecutionOutcome,
    PreCheckAnswer,
    Verdict,
)
from jobconform.spec import Profile, Registry

# An hour before New York's clocks jump from 02:00 to 03:00 (2026-03-08), and an hour
# before its 01:00-02:00 hour repeats (2026-11-01).
STARTS = (datetime(2026, 3, 8, 6, 0, tzinfo=UTC), datetime(2026, 11, 1, 4, 0, tzinfo=UTC),
          EPOCH)
ZONES = ("America/New_York", "America/New_York", "UTC", "Mars/Olympus_Mons")
EXPRESSIONS = ("30 2 * * *", "30 1 * * *", "*/30 * * * *", "0 * * * *", "15 1,3 * * *",
               "not cron")
PRE_CHECKS = (None, None, *PreCheckAnswer)
# Edits move timetables onto the hours New York's clocks skip or repeat (SC-004, SC-005
# through SC-017), or leave a field as it is (None); an unknown zone or a bad expression
# is refused.
EDIT_EXPRESSIONS = (None, "30 2 * * *", "30 1 * * *", "0 * * * *", "not cron")
EDIT_ZONES = (None, "America/New_York", "America/New_York", "UTC", "Mars/Olympus_Mons")
# A runtime that claims scheduling-utc-only is given UTC where New York would be drawn
# (and still the unknown zone, which it must refuse); it gets no DST aim.
ZONE_UTC_ONLY = {"America/New_York": "UTC"}
# A change is an edit three times in four, else a deletion (SC-017, SC-018).
CHANGES = ("edit", "edit", "delete", "edit")
TIME_STEPS = (0.0, 60.0, 1799.0, 1800.0, 3600.0, 7200.0)
# What an execution cost when it ended (None: not known).
END_COSTS = (None, 0.0, 0.25)
DOWNTIMES = (0.0, 1800.0, 3600.0, 7200.0)
# Validation switched on twice in three, with a timeout some clock steps outrun, or one
# that is rejected (SC-020).
VALIDATION_SWITCHES = (True, True, False)
VALIDATION_TIMEOUTS = (600.0, 3600.0, 0.0)
# The aimed validated run answers an unclear verdict (SC-023) twice in three: once in two,
# some seeds left SC-023 unreached at 100 examples.
AIMED_VERDICTS = (Verdict.PASS, Verdict.FAIL, Verdict.PROSE, Verdict.ODD_JSON, Verdict.PROSE,
                  Verdict.ODD_JSON)


# Thirty commands make a catch-up after downtime and a DST change reachable in one sequence.
STEPS_PER_EXAMPLE = 30


def make_scheduling_machine(backend: Backend, profile: Profile, registry: Registry | None,
                            run: MachineRun) -> type[RuleBasedStateMachine]:
    zoned = SCHEDULING_UTC_ONLY not in backend.capabilities
    zones, edit_zones = ((ZONES, EDIT_ZONES) if zoned else (
        tuple(ZONE_UTC_ONLY.get(z, z) for z in ZONES),
        tuple(z if z is None else ZONE_UTC_ONLY.get(z, z) for z in EDIT_ZONES)))

    class SchedulingMachine(AreaMachine[SchedulingHarness | None]):
        schedules = Bundle("schedules")

        def __init__(self) -> None:
            super().__init__(run)
            self.harness = None
            self.start = EPOCH

        # SC-004 and SC-005 by aim, as a sequence opens on a start an hour before a change
        # of New York's clocks, in half of them: random draws reached the changing hours
        # too rarely once edits and deletions joined the rules, a rule aimed at them was
        # drawn too late (after the clock had passed the change) on some seeds.
        @initialize(target=schedules, start=st.sampled_from(STARTS),
                    across_the_change=st.booleans())
        def open_harness(self, start: datetime, across_the_change: bool) -> MultipleResults[str]:
            self.start = start
            self.harness = SchedulingHarness(backend, profile, registry, start=start)
            if zoned and across_the_change and start in STARTS[:2]:
                return multiple(self._fire_across_the_change())
            return multiple()

        @property
        def h(self) -> SchedulingHarness:
            assert self.harness is not None
            return self.harness

        def _drawn_setup(self) -> dict[str, object]:
            return {"start": self.start}

        @rule(target=schedules, expression=st.sampled_from(EXPRESSIONS),
              timezone=st.sampled_from(zones), pre_check=st.sampled_from(PRE_CHECKS))
        def create_cron(self, expression: str, timezone: str,
                        pre_check: PreCheckAnswer | None) -> str:
            alias = self._name("s")
            self._run(sc.CreateCron(alias, f"run {alias}", expression, timezone, pre_check))
            return alias

        @rule(target=schedules, offset=st.sampled_from((-60.0, 0.0, 60.0, 1800.0, 3600.0)),
              form=st.sampled_from(("delay", "run_at", "run_at", "both", "neither")),
              pre_check=st.sampled_from(PRE_CHECKS))
        def create_once(self, offset: float, form: str,
                        pre_check: PreCheckAnswer | None) -> str:
            alias = self._name("s")
            run_at = self.h.clock.now() + timedelta(seconds=offset)
            self._run(sc.CreateOnce(
                alias, f"run {alias}", run_at=run_at if form in ("run_at", "both") else None,
                delay_seconds=offset if form in ("delay", "both") else None,
                pre_check=pre_check))
            return alias

        @rule(schedule=schedules, answer=st.sampled_from(list(PreCheckAnswer)))
        def script_pre_check(self, schedule: str, answer: PreCheckAnswer) -> None:
            self._run(sc.ScriptPreCheck(schedule, answer))

        @rule(schedule=st.one_of(schedules, st.just("unknown")))
        def trigger(self, schedule: str) -> None:
            self._run(sc.TriggerSchedule(schedule))

        # One rule for editing and deleting: two rules of their own would thin out the
        # sequences (a DST change reached, autonomy off and on again) others need.
        @rule(schedule=schedules, action=st.sampled_from(CHANGES),
              message=st.sampled_from(("edited", None)),
              expression=st.sampled_from(EDIT_EXPRESSIONS),
              timezone=st.sampled_from(edit_zones))
        def change(self, schedule: str, action: str, message: str | None,
                   expression: str | None, timezone: str | None) -> None:
            if action == "delete":
                self._run(sc.DeleteSchedule(schedule))
            else:
                self._run(sc.EditSchedule(schedule, None if message is None
                                          else f"{message} {schedule}", expression, timezone))

        @rule(enabled=st.booleans())
        def set_autonomy(self, enabled: bool) -> None:
            self._run(sc.SetAutonomy(enabled))

        @precondition(lambda self: self.harness is not None and self.h.schedulers == 1)
        @rule()
        def start_second_scheduler(self) -> None:
            self._run(sc.StartSecondScheduler())

        restart = time_rule("restart", DOWNTIMES, sc.RestartScheduling)
        advance_time = time_rule("advance_time", TIME_STEPS, AdvanceTime)

        # Reaching a fire time exactly is what fires schedules; random steps alone would
        # mostly land before or after it. The clock stops one tick short of it first
        # (conformance/aim.py), where nothing may run yet (SC-002, SC-006: never early).
        @precondition(lambda self: self.harness is not None and self._next_fire() is not None)
        @rule()
        def advance_to_next_fire(self) -> None:
            fire = self._next_fire()
            assert fire is not None
            left = max(0.0, (fire - self.h.clock.now()).total_seconds())
            for step in steps_onto(0.0, left, profile.time_precision_seconds):
                self._run(AdvanceTime(step))

        def _next_fire(self) -> datetime | None:
            return min((s.next_fire_at for s in self.h.oracle.schedules.values()
                        if s.next_fire_at is not None), default=None)

        # A daily schedule at the hour that changes (02:30 skipped in March, 01:30
        # repeated in November) and an hourly one (a wildcard hour fires in both
        # occurrences of the repeated hour), then on through three of the hourly one's
        # fires, across the change, each next fire time read as it falls due.
        def _fire_across_the_change(self) -> str:
            daily, hourly = self._name("s"), self._name("s")
            expression = "30 2 * * *" if self.start == STARTS[0] else "30 1 * * *"
            self._run(sc.CreateCron(daily, f"run {daily}", expression, "America/New_York",
                                    None))
            self._run(sc.CreateCron(hourly, f"run {hourly}", "0 * * * *", "America/New_York",
                                    None))
            for _ in range(3):
                fire = self.h.oracle.schedules[hourly].next_fire_at if (
                    hourly in self.h.oracle.schedules) else None
                if fire is None:
                    break
                self._run(sc.ListSchedules())  # each next fire time read as it falls due
                left = max(0.0, (fire - self.h.clock.now()).total_seconds())
                for step in steps_onto(0.0, left, profile.time_precision_seconds):
                    self._run(AdvanceTime(step))
            return daily

        # Autonomy off across fires, then on again: the fires that fell while it was off
        # are not run in a burst when it comes back (SC-011). Random draws line up a
        # firing schedule, a pause, fire times passing and the resume too rarely for the
        # default run's examples (issue 33). Three arguments sort it after the other
        # target rules, so those keep their draws.
        @precondition(lambda self: self.harness is not None)
        @rule(target=schedules, expression=st.sampled_from(("*/30 * * * *", "0 * * * *")),
              paused=st.sampled_from((3600.0, 7200.0)), after=st.sampled_from((0.0, 60.0)))
        def resumed_after_missed_fires(self, expression: str, paused: float,
                                       after: float) -> str:
            alias = self._name("s")
            self._run(sc.CreateCron(alias, f"run {alias}", expression, "UTC", None))
            self._run(sc.SetAutonomy(False))
            self._run(AdvanceTime(paused))
            self._run(sc.SetAutonomy(True))
            self._run(AdvanceTime(after))
            return alias

        # An edit or a deletion made exactly on a fire time: an hourly schedule reached on
        # its fire, then edited onto a timetable that holds that instant (its first fire
        # is strictly after the edit, SC-017) or deleted (it never fires again, SC-018),
        # and on to the next fire of either timetable, its fires through a pre-check as
        # drawn (SC-012..SC-014; always one: with none drawn among them, seed 10 of the
        # canonical run reached no prompt's fire, SC-013). Random draws land a change on a
        # fire time too rarely for the default run's examples.
        @precondition(lambda self: self.harness is not None)
        @rule(target=schedules, action=st.sampled_from(("edit", "delete")),
              pre_check=st.sampled_from(tuple(PreCheckAnswer)))
        def change_on_a_fire(self, action: str, pre_check: PreCheckAnswer) -> str:
            alias = self._name("s")
            self._run(sc.CreateCron(alias, f"run {alias}", "0 * * * *", "UTC", pre_check))
            self._run(sc.SetAutonomy(True))
            for change in (None, action):
                if change == "edit":
                    self._run(sc.EditSchedule(alias, None, "*/30 * * * *", None))
                elif change == "delete":
                    self._run(sc.DeleteSchedule(alias))
                fire = self.h.clock.now() + timedelta(hours=1) if change == "delete" else (
                    self.h.oracle.schedules[alias].next_fire_at
                    if alias in self.h.oracle.schedules else None)
                if fire is None:
                    break
                left = max(0.0, (fire - self.h.clock.now()).total_seconds())
                for step in steps_onto(0.0, left, profile.time_precision_seconds):
                    self._run(AdvanceTime(step))
            return alias

        @rule(schedule=schedules)
        def get(self, schedule: str) -> None:
            self._run(sc.GetSchedule(schedule))

        @rule()
        def list_schedules(self) -> None:
            self._run(sc.ListSchedules())

        @rule(schedule=st.one_of(schedules, st.just("unknown")))
        def read_history(self, schedule: str) -> None:
            self._run(sc.ReadHistory(schedule))

    if SCHEDULING_ENDS not in backend.capabilities:
        # For a scheduler whose history does not learn ends, the machine is the one it
        # was before them, rule for rule, so the same seed draws the same sequences.
        return SchedulingMachine

    class SchedulingMachineWithEnds(SchedulingMachine):
        """Seed 002 §10.6 too: the runtime learns how its dispatched executions ended."""

        # An end for one of the schedule's executions, picked by its place in the history
        # (an unheld schedule's, or one with none, is refused or not found), and with
        # `late`, a failure inferred later for the same fire, which must be refused once
        # the first end stands (SC-019).
        @rule(schedule=st.one_of(SchedulingMachine.schedules, st.just("unknown")),
              pick=st.integers(0, 3),
              outcome=st.sampled_from(list(ExecutionOutcome)),
              cost=st.sampled_from(END_COSTS), late=st.booleans())
        def end_execution(self, schedule: str, pick: int, outcome: ExecutionOutcome,
                          cost: float | None, late: bool) -> None:
            held = self.h.oracle.history.get(schedule)
            executions = self.h.oracle.executions(schedule) if held else []
            fire = (executions[pick % len(executions)].scheduled_for if executions
                    else self.h.clock.now())
            self._run(sc.EndExecution(schedule, fire, outcome, cost))
            if late:
                self._run(sc.EndExecution(schedule, fire, ExecutionOutcome.FAILED))

    if SCHEDULING_VALIDATION not in backend.capabilities:
        return SchedulingMachineWithEnds

    class SchedulingMachineWithValidation(SchedulingMachineWithEnds):
        """Seed 002 §10.9 too: what succeeded is validated where its schedule asks."""

        @rule(schedule=st.one_of(SchedulingMachine.schedules, st.just("unknown")),
              enabled=st.sampled_from(VALIDATION_SWITCHES),
              timeout=st.sampled_from(VALIDATION_TIMEOUTS))
        def set_validation(self, schedule: str, enabled: bool, timeout: float) -> None:
            self._run(sc.SetValidation(schedule, enabled, timeout))

        # A verdict for an execution pending validation, picked among all of them, else
        # for a fire of the schedule drawn (refused, or not found), so that the verdict
        # rules (SC-022..SC-024) need no luck to find a run waiting.
        @rule(schedule=st.one_of(SchedulingMachine.schedules, st.just("unknown")),
              pick=st.integers(0, 3), verdict=st.sampled_from(list(Verdict)))
        def end_validation(self, schedule: str, pick: int, verdict: Verdict) -> None:
            oracle = self.h.oracle
            pending = [(alias, execution.scheduled_for) for alias in oracle.history
                       for execution in oracle.executions(alias)
                       if execution.business_status == BusinessStatus.PENDING_VALIDATION]
            if pending:
                schedule, fire = pending[pick % len(pending)]
            else:
                executions = oracle.executions(schedule) if schedule in oracle.history else []
                fire = (executions[pick % len(executions)].scheduled_for if executions
                        else self.h.clock.now())
            self._run(sc.EndValidation(schedule, fire, verdict))

        # A validated run by aim: validation on, a manual run that succeeds, and its
        # verdict, in time or a second after the run's timeout. Drawn apart, the four
        # steps met too rarely for the verdict's rules (SC-022..SC-024) in a sequence.
        @rule(schedule=SchedulingMachine.schedules, verdict=st.sampled_from(AIMED_VERDICTS),
              late=st.booleans())
        def validated_run(self, schedule: str, verdict: Verdict, late: bool) -> None:
            self._run(sc.SetValidation(schedule, True, VALIDATION_TIMEOUTS[0]))
            self._run(sc.TriggerSchedule(schedule))
            fire = self.h.clock.now()
            self._run(sc.EndExecution(schedule, fire, ExecutionOutcome.SUCCEEDED))
            if late:
                self._run(AdvanceTime(VALIDATION_TIMEOUTS[0] + 1))
            self._run(sc.EndValidation(schedule, fire, verdict))

    return SchedulingMachineWithValidation


run_scheduling_machine = machine_runner(make_scheduling_machine, steps=STEPS_PER_EXAMPLE)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> SchedulingHarness:
    """The harness of this machine's commands, for a trace's replay (area_trace.py)."""
    start = setup.get("start", EPOCH)
    if not isinstance(start, datetime):
        raise ValueError(f"a scheduling trace's start is a datetime, not {start!r}")
    return SchedulingHarness(backend, profile, registry, start=start)
