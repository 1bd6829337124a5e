"""The composite oracle: loops, reminders, breaker-guarded jobs and the governor's pause
sharing one admission (spec/composite.yaml, CX-001 to CX-006).

It owns one model of each area and composes them; it copies none of their rules. The
admission model (`reference/admission.py`) holds every slot and backlog; a loop's state
comes from `reference/loops/oracle.py`, a reminder's from `reference/reminders/oracle.py`,
each owner's dispatch breaker from `reference/breaker/oracle.py` and the shared-cause pause
from `reference/governor/oracle.py`. What this module adds is only where they meet:

- a loop's run and a reminder's fire are admitted like a job (CX-001, CX-002);
- a job meeting a half-open breaker is the probe only if a slot is free for it, counting
  the work already waiting; otherwise it is refused and the probe is not taken (CX-003);
- while the governor's pause holds, no waiting work starts: not into a slot that frees,
  not ahead of new work, not by maintenance, which still expires stale work (CX-004);
- while it holds, no lapsed lease is reclaimed: an orphan of a restart whose lease has
  lapsed stays running and keeps its slot, and is reclaimed once the pause has ended
  (CX-005);
- a loop's run whose execution the admission stops at its execution timeout (AD-015),
  expires in the backlog (AD-008) or reclaims at its lease's end (AD-017) ends at that
  instant as the loop's own per-run timeout ends it (LP-009): failed with
  TIMEOUT, the failure policy deciding whether the next run asks for a slot (CX-006).

Time is a field, moved only by `PassTime`. Answers are plain data like the areas' own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from jobconform.reference import admission as ad
from jobconform.reference.admission import AdmissionConfig, AdmissionModel, Expected
from jobconform.reference.breaker.oracle import (
    Admission,
    BreakerModel,
    BreakerSettings,
    CallOutcome,
)
from jobconform.reference.composite import commands as cc
from jobconform.reference.governor.oracle import GovernorModel, GovernorSettings
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.loops import oracle as lo
from jobconform.reference.reminders.oracle import (
    DeliveryOutcome,
    ReminderConfig,
    ReminderOracle,
)

LOOPS_REQUIREMENT = "CX-001"
REMINDERS_REQUIREMENT = "CX-002"
PROBE_REQUIREMENT = "CX-003"
PAUSE_REQUIREMENT = "CX-004"
LEASE_REQUIREMENT = "CX-005"
TIMEOUT_REQUIREMENT = "CX-006"

REFUSED = "refused"  # a job the breaker fast-failed; nothing was admitted
AUTH = "auth"  # the failure class a failed job reports to its breaker
FAILED_RUN_STATUS = "AGENT_ERROR"
# Every run of a composite loop gets the longest per-run timeout; the checks end their
# runs before it (see `CompositeModel._pass_time`), the admission's execution timeout
# (900 s canonical) among them (CX-006).
LOOP_RUN_TIMEOUT_SECONDS = float(lo.TIMEOUT_PER_RUN_RANGE[1])
# How the admission may end a loop's run without its result: stopped at the execution
# timeout (AD-015), expired in the backlog (AD-008), reclaimed at its lease's end
# (AD-017). Each fails the run with TIMEOUT (CX-006).
STOPPED_STATES = frozenset({ad.TIMED_OUT, ad.EXPIRED, ad.LEASE_EXPIRED})

T = TypeVar("T")


@dataclass(frozen=True)
class CompositeConfig:
    """The parameters of each composed area (the profile's, or a check's own)."""

    admission: AdmissionConfig
    breaker: BreakerSettings
    governor: GovernorSettings
    reminders: ReminderConfig


def loop_parameters(loop: str, runs: int) -> lo.LoopParameters:
    """The loop a `StartLoop` starts: fixed mode, no delay, the longest per-run timeout."""
    return lo.LoopParameters(message=f"{loop} run {{{{run}}}}", max_runs=runs,
                             timeout_per_run_seconds=LOOP_RUN_TIMEOUT_SECONDS)


def run_response(work: str) -> str:
    """A loop run's response: distinct per run, so no loop ever stops for no progress."""
    return f"{work} done"


def reminder_message(reminder: str) -> str:
    return f"reminder {reminder}"


@dataclass(frozen=True)
class CompositeView:
    """What the harness compares after every command, in each list's order."""

    executions: tuple[tuple[str, str, str], ...]  # (work, owner, state), by arrival
    loops: tuple[tuple[str, str, int], ...]  # (loop, status, runs completed), by start
    reminders: tuple[tuple[str, str], ...]  # (reminder, status), by creation
    breakers: tuple[tuple[str, str, str | None], ...]  # (owner, state, probe), by creation
    paused_until: datetime | None


@dataclass
class CompositeModel:
    config: CompositeConfig
    now: datetime
    loops: dict[str, lo.LoopState] = field(default_factory=dict)
    loop_owners: dict[str, str] = field(default_factory=dict)
    reminder_owners: dict[str, str] = field(default_factory=dict)
    jobs: dict[str, str] = field(default_factory=dict)  # job -> owner
    probes: set[str] = field(default_factory=set)  # jobs admitted as the half-open probe
    # Orphans whose lease lapsed while the pause held their reclaim (CX-005).
    held_leases: set[str] = field(default_factory=set)
    # part of the view -> (what it was built from, the part): see `_kept`
    _parts: dict[str, tuple[Any, Any]] = field(default_factory=dict, repr=False,
                                               compare=False)
    _loop_entries: dict[str, tuple[lo.LoopState, tuple[str, str, int]]] = field(
        default_factory=dict, repr=False, compare=False)  # see _loops_view

    def __post_init__(self) -> None:
        self.admission = AdmissionModel(self.config.admission, self.now)
        self.breakers = BreakerModel(self.config.breaker, global_switch=True)
        self.governor = GovernorModel(self.config.governor)
        self.reminders = ReminderOracle(self.config.reminders)

    # -- reads -------------------------------------------------------------------------

    def paused(self) -> bool:
        return self.governor.pause_at(self.now) is not None

    def free_slot(self, owner: str) -> bool:
        """A slot neither running work nor work already waiting has a claim on (CX-003)."""
        model = self.admission
        waiting = len(model.backlogs[owner])
        return model.running(owner) + waiting < model.effective_cap(owner)

    def lease_held(self) -> bool:
        """Some orphan whose lease lapsed during the pause is still running (CX-005)."""
        executions = self.admission.executions
        return any(executions[work].state == ad.RUNNING for work in self.held_leases)

    def half_open(self, owner: str) -> bool:
        view = self.breakers.read(owner, self.now)
        return view is not None and view.state.value == "half_open"

    def kind_requirement(self, work: str) -> str | None:
        """The requirement about how this work is admitted, by what the work is."""
        if work in self.reminder_owners:
            return REMINDERS_REQUIREMENT
        if work in self.probes:
            return PROBE_REQUIREMENT
        loop, mark, number = work.rpartition("#")
        if mark and loop in self.loops:
            runs = self.loops[loop].runs
            previous = int(number) - 1
            if 0 < previous <= len(runs) and runs[previous - 1].error == lo.TIMEOUT_ERROR:
                return TIMEOUT_REQUIREMENT  # admitted as its run before timed out
            return LOOPS_REQUIREMENT
        return None

    def loop_requirement(self, loop: str) -> str:
        """CX-006 for a loop whose last ended run the admission timed out, else CX-001."""
        state = self.loops.get(loop)
        ended = [run for run in state.runs if run.status is not lo.RunStatus.RUNNING] if (
            state is not None) else []
        if ended and ended[-1].error == lo.TIMEOUT_ERROR:
            return TIMEOUT_REQUIREMENT
        return LOOPS_REQUIREMENT

    def view(self) -> CompositeView:
        executions = self.admission.executions
        breakers = self.breakers
        reminders = self.reminders.reminders
        parts = (
            self._kept("executions", tuple(executions.items()), lambda: tuple([
                (work, execution.owner, execution.state)
                for work, execution in executions.items()])),
            self._kept("loops", tuple(self.loops.items()), self._loops_view),
            self._kept("reminders", (tuple(self.reminder_owners), tuple(reminders.items())),
                       lambda: tuple((name, reminders[name].status.value)
                                     for name in self.reminder_owners)),
            self._kept("breakers", (self.now, tuple(self.admission.owners),
                                    tuple(breakers.breakers.items()), breakers.store_down),
                       self._breakers_view),
            self.governor.pause_at(self.now),
        )
        return self._kept("view", parts, lambda: CompositeView(*parts))

    def _kept(self, part: str, source: object, build: Callable[[], T]) -> T:
        """The view's `part` as built last while what it is built from (`source`, frozen
        values) is the same: the harness views the model after every command, and most
        commands change one part."""
        kept = self._parts.get(part)
        if kept is not None and kept[0] == source:
            return kept[1]  # type: ignore[no-any-return]
        built = build()
        self._parts[part] = (source, built)
        return built

    def _loops_view(self) -> tuple[tuple[str, str, int], ...]:
        """Each loop's entry, kept with the (frozen) state it was read from: a command
        changes one loop, and counting a loop's runs reads all of them."""
        entries = self._loop_entries
        view = []
        for name, loop in self.loops.items():
            kept = entries.get(name)
            if kept is None or kept[0] is not loop:
                kept = entries[name] = (loop, (name, loop.status.value, loop.runs_completed))
            view.append(kept[1])
        return tuple(view)

    def _breakers_view(self) -> tuple[tuple[str, str, str | None], ...]:
        breakers = []
        for owner in self.admission.owners:
            breaker = self.breakers.read(owner, self.now)
            assert breaker is not None  # the composite's breaker store never goes down
            breakers.append((owner, breaker.state.value, breaker.probe))
        return tuple(breakers)

    # -- commands ----------------------------------------------------------------------

    def apply(self, command: cc.CompositeCommand) -> Expected:
        """Answer `command` and move the composed models.

        Raises:
            ValueError: the command reuses a name, or would take the check outside what
                the composite area states (a backlog at its depth for a loop's run or a
                reminder's fire, a loop run reaching its timeout).
        """
        held = self.paused() and any(self.admission.backlogs.values())
        lease_held = self.lease_held()
        expected = self._apply(command)
        requirements = expected.requirements
        if PROBE_REQUIREMENT in requirements[:1]:
            return expected
        if lease_held or self.lease_held():
            # An orphan's lapsed lease is held, or its hold ends now: whether it runs and
            # keeps its slot is CX-005's to say.
            requirements = (LEASE_REQUIREMENT,
                            *(r for r in requirements if r != LEASE_REQUIREMENT))
        if held and isinstance(command, cc.SubmitJob | cc.StartLoop | cc.FinishWork
                               | cc.Maintain | cc.PassTime):
            # Work waited while the pause held the drain: what starts is CX-004's to say.
            requirements = (PAUSE_REQUIREMENT, *requirements)
        return Expected(expected.answer, requirements)

    def _apply(self, command: cc.CompositeCommand) -> Expected:
        self.admission.drain_held = self.admission.lease_reclaim_held = self.paused()
        match command:
            case cc.AddOwner(owner=owner):
                answer = self.admission.apply(ad.AddOwner(owner)).answer
                if answer == ad.OK:
                    self.breakers.opted_in.add(owner)
                return Expected(answer, (LOOPS_REQUIREMENT,))
            case cc.SubmitJob():
                return self._submit(command)
            case cc.StartLoop():
                return self._start_loop(command)
            case cc.CreateReminder():
                return self._create_reminder(command)
            case cc.FinishWork():
                return self._finish(command)
            case cc.RecordFailure(owner=owner, failure_class=failure_class, result=result):
                self.governor.record_failure(owner, failure_class, result, self.now)
                return Expected(None, (PAUSE_REQUIREMENT,))
            case cc.Maintain():
                answer = self.admission.apply(ad.Maintain()).answer
                expired = self._end_timed_out_runs()
                if expired:
                    self._admit_runs_after_timeouts(expired)
                    return Expected(answer, (PAUSE_REQUIREMENT, TIMEOUT_REQUIREMENT))
                return Expected(answer, (PAUSE_REQUIREMENT,))
            case cc.Restart():
                self.admission.apply(ad.Restart())
                return Expected(None, (LEASE_REQUIREMENT,))
            case cc.PassTime(seconds=seconds):
                return self._pass_time(seconds)
        raise ValueError(f"not a composite command: {command!r}")

    def _fresh(self, name: str) -> None:
        taken = (name in self.admission.executions or name in self.jobs
                 or name in self.loops or name in self.reminder_owners)
        if taken:
            raise ValueError(f"the name {name!r} is already used in this check")

    def _admit(self, work: str, owner: str) -> JsonValue:
        """Admit a loop's run or a reminder's fire, which the area keeps off full backlogs."""
        owner_view = self.admission.owner_view(owner)
        if (owner_view is not None and not self.free_slot(owner)
                and owner_view["queued"] == owner_view["backlog_depth"]):
            raise ValueError(f"{work!r} would meet {owner!r}'s full backlog; composite"
                             " checks keep backlogs below their depth")
        return self.admission.apply(ad.Admit(work, owner)).answer

    def _submit(self, command: cc.SubmitJob) -> Expected:
        owner, job = command.owner, command.job
        self._fresh(job)
        if owner not in self.admission.owners:
            return Expected(ad.unknown_owner(owner), (LOOPS_REQUIREMENT,))
        half_open = self.half_open(owner)
        requirements = (PROBE_REQUIREMENT,) if half_open else (LOOPS_REQUIREMENT,
                                                               REMINDERS_REQUIREMENT)
        decision = self.breakers.admit(owner, job, self.now)
        if decision is Admission.REFUSED:
            return Expected(REFUSED, (PROBE_REQUIREMENT,))
        if decision is Admission.PROBE and not self.free_slot(owner):
            # The probe is given up at once, so the next job may be the probe.
            self.breakers.record(owner, job, CallOutcome.CANCELLED, None, self.now)
            return Expected(REFUSED, requirements)
        answer = self.admission.apply(ad.Admit(job, owner)).answer
        if isinstance(answer, str):  # admitted: running or queued (a dict is a refusal)
            self.jobs[job] = owner
            if decision is Admission.PROBE:
                self.probes.add(job)
        elif decision is Admission.PROBE:
            self.breakers.record(owner, job, CallOutcome.CANCELLED, None, self.now)
        return Expected(answer, requirements)

    def _start_loop(self, command: cc.StartLoop) -> Expected:
        owner, name = command.owner, command.loop
        self._fresh(name)
        if owner not in self.admission.owners:
            return Expected(ad.unknown_owner(owner), (LOOPS_REQUIREMENT,))
        self.loops[name] = lo.start(loop_parameters(name, command.runs),
                                    LOOP_RUN_TIMEOUT_SECONDS, self.now)
        self.loop_owners[name] = owner
        return Expected(self._admit(cc.loop_run(name, 1), owner), (LOOPS_REQUIREMENT,))

    def _create_reminder(self, command: cc.CreateReminder) -> Expected:
        owner, name = command.owner, command.reminder
        self._fresh(name)
        if owner not in self.admission.owners:
            return Expected(ad.unknown_owner(owner), (REMINDERS_REQUIREMENT,))
        answer = self.reminders.create(name, reminder_message(name), None,
                                       command.delay_seconds, self.now)
        if name in self.reminders.reminders:
            self.reminder_owners[name] = owner
        return Expected(answer, (REMINDERS_REQUIREMENT,))

    def _finish(self, command: cc.FinishWork) -> Expected:
        work = command.work
        requirement = self.kind_requirement(work) or LOOPS_REQUIREMENT
        execution = self.admission.executions.get(work)
        if execution is None or execution.state != ad.RUNNING:
            return Expected(False, (requirement,))
        self.admission.apply(ad.FinishExecution(work))
        if work in self.jobs:
            outcome = CallOutcome.FAILURE if command.failed else CallOutcome.SUCCESS
            self.breakers.record(self.jobs[work], work, outcome,
                                 AUTH if command.failed else None, self.now)
        loop_name, mark, _ = work.rpartition("#")
        if not (mark and loop_name in self.loops):
            return Expected(True, (requirement,))
        run: lo.RunOutcome = (lo.FailResult(FAILED_RUN_STATUS) if command.failed
                              else lo.Respond(run_response(work)))
        loop = lo.end_run(self.loops[loop_name], run, self.now)
        self.loops[loop_name] = loop
        following = loop.current_run
        if following is None:
            return Expected([True, None], (LOOPS_REQUIREMENT,))
        next_work = cc.loop_run(loop_name, following.run_number)
        return Expected([True, self._admit(next_work, self.loop_owners[loop_name])],
                        (LOOPS_REQUIREMENT,))

    def _pass_time(self, seconds: float) -> Expected:
        self.now += timedelta(seconds=seconds)
        # Work that reaches its timeout during the pass frees its slot; whether the drain
        # may fill it, and whether a lapsed lease is reclaimed, is the pause as it stands
        # at the end of the pass, when a runtime next looks (a pause ending at the very
        # instant of a timeout or a lease's end no longer holds).
        paused = self.paused()
        self.admission.drain_held = self.admission.lease_reclaim_held = paused
        self.admission.apply(ad.PassTime(seconds))
        if paused:
            for work, execution in self.admission.executions.items():
                lease_end = execution.lease_end()
                if (execution.state == ad.RUNNING and execution.orphaned
                        and lease_end is not None and lease_end <= self.now):
                    self.held_leases.add(work)
        timed_out = self._end_timed_out_runs()
        for name, loop in self.loops.items():
            timeout_at = loop.run_timeout_at
            if timeout_at is not None and timeout_at <= self.now:
                raise ValueError(f"loop {name!r}'s run would reach its per-run timeout;"
                                 " composite checks end every run before it")
        # The reminders runtime dispatches what is due; the composite's dispatch admits
        # the fire and the dispatch call returns (the execution started or was queued).
        self.reminders.settle(self.now)
        firing = [name for name, outcome in self.reminders.deliveries.items()
                  if outcome is None]
        for name in firing:
            self._admit(name, self.reminder_owners[name])
            self.reminders.decide(name, DeliveryOutcome.LANDS)
        self.reminders.settle(self.now)
        if timed_out:
            self._admit_runs_after_timeouts(timed_out)
            return Expected(None, (REMINDERS_REQUIREMENT, TIMEOUT_REQUIREMENT))
        return Expected(None, (REMINDERS_REQUIREMENT,))

    def _end_timed_out_runs(self) -> list[str]:
        """End each loop's run whose execution the admission stopped at its timeout
        (AD-015), expired in the backlog (AD-008) or reclaimed at its lease's end (AD-017)
        at that instant, as its own per-run timeout would (LP-009); the loops whose runs
        ended, in start order (CX-006)."""
        ended = []
        for name, loop in self.loops.items():
            run = loop.current_run
            if run is None:
                continue
            execution = self.admission.executions.get(cc.loop_run(name, run.run_number))
            if execution is None or execution.state not in STOPPED_STATES:
                continue
            if execution.state == ad.TIMED_OUT:
                instant = execution.deadline()
            elif execution.state == ad.LEASE_EXPIRED:
                instant = execution.lease_end()
            else:
                instant = execution.ended_at
            assert instant is not None  # it ran, or it ended
            self.loops[name] = lo.timeout_run(loop, instant)
            ended.append(name)
        return ended

    def _admit_runs_after_timeouts(self, loops: list[str]) -> None:
        """The next run of each loop that goes on asks for a slot when the runtime next
        looks, after the pass's own admissions (its timeouts' drains, reminders' fires)."""
        for name in loops:
            following = self.loops[name].current_run
            if following is not None:
                self._admit(cc.loop_run(name, following.run_number), self.loop_owners[name])
