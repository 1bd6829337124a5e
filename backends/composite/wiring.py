"""The kit's composite runtime: a backend's own area runtimes wired to one admission.

`SharedAdmission` holds one admission runtime and routes every piece of work through it:
a job after its owner's dispatch breaker, each run of a loop (the loop runtime is scripted
so that a run ends only once it holds a slot), and each reminder's fire (the reminders
runtime dispatches to this object, which admits the fire). It asks the governor whether a
pause holds before each admission operation that could start waiting work or reclaim a
lapsed lease, and holds the admission's drain (CX-004) and its lease reaper (CX-005)
while it does. When the admission stops a loop's run at its execution timeout, expires
it in the backlog or reclaims it at its lease's end, it tells the loop runtime that the
run failed with TIMEOUT (CX-006). It adds no rule of an area's
own: those stay in the runtimes it wires.

`open_shared_admission(backend, clock, config)` opens the runtimes through the backend's
`open_admission`, `open_loops`, `open_reminders`, `open_breaker` and `open_governor`, so a
backend with those gets `open_composite` in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, TypeVar

from jobconform.backends.admission import terms
from jobconform.backends.admission.protocol import AdmissionRuntime, UnknownOwner
from jobconform.backends.breaker.protocol import BreakerRuntime
from jobconform.backends.composite.protocol import CompositeSnapshot
from jobconform.backends.governor.protocol import GovernorRuntime
from jobconform.backends.loops.protocol import LoopAgent, LoopRuntime, LoopsConfig
from jobconform.backends.protocol import Clock
from jobconform.backends.reminders.protocol import (
    Delivery,
    DeliveryTarget,
    ReminderRuntime,
)
from jobconform.reference.composite.commands import loop_run
from jobconform.reference.composite.oracle import (
    AUTH,
    FAILED_RUN_STATUS,
    LOOP_RUN_TIMEOUT_SECONDS,
    REFUSED,
    CompositeConfig,
    loop_parameters,
    reminder_message,
    run_response,
)
from jobconform.reference.loops.oracle import TIMEOUT_ERROR, FailResult, Respond, RunOutcome
from jobconform.reference.reminders.oracle import DeliveryOutcome

PROBE = "probe"
# How the admission ends a loop's run without its result: stopped at its execution timeout
# (AD-015), expired in the backlog (AD-008) or reclaimed at its lease's end (AD-017).
RUN_STOPPED_STATES = frozenset({terms.TIMED_OUT, terms.EXPIRED, terms.LEASE_EXPIRED})
# The runtimes whose settles and reads the wiring keeps (see SharedAdmission._changes).
LOOPS, REMINDERS, BREAKER, GOVERNOR = "loops", "reminders", "breaker", "governor"

T = TypeVar("T")


class HoldableAdmission(AdmissionRuntime, Protocol):
    """An admission runtime whose drain and lease reaper can be held (the kit's
    `AdmissionService`)."""

    def hold_drain(self, held: bool) -> None:
        """While held, no queued work starts; expiry goes on."""
        ...

    def hold_lease_reclaim(self, held: bool) -> None:
        """While held, no lapsed lease is reclaimed; timeouts go on."""
        ...

    def version(self) -> int | None:
        """A number that moves whenever what the admission shows may have changed, or
        None when it cannot tell."""
        ...


@dataclass
class _Loop:
    loop_id: str  # the loop runtime's id
    agent: LoopAgent
    owner: str
    run_number: int  # the run that holds, or waits for, a slot
    work: str  # that run's work name
    # The loop runtime showed the loop ended after its latest run: no run of it is left
    # for the admission to stop (a finished run stays finished).
    ended: bool = False


class SharedAdmission:
    """A `CompositeRuntime` (backends/composite/protocol.py) over five area runtimes."""

    def __init__(self, admission: HoldableAdmission, loops: LoopRuntime,
                 breaker: BreakerRuntime, governor: GovernorRuntime,
                 open_reminders: Callable[[DeliveryTarget], ReminderRuntime],
                 clock: Clock) -> None:
        self.admission = admission
        self.loops = loops
        self.breaker = breaker
        self.governor = governor
        self._loops: dict[str, _Loop] = {}  # by the harness's loop name
        self._loop_names: dict[str, str] = {}  # work name of a run's loop -> loop name
        self._jobs: dict[str, str] = {}  # job -> owner
        self._owners: set[str] = set()  # the owners added (the admission's, read cheaply)
        self._holds: tuple[bool, bool] | None = None  # the drain's and reaper's, as last set
        self._reminders: dict[str, tuple[str, str]] = {}  # runtime id -> (name, owner)
        self._reminder_ids: dict[str, str] = {}  # name -> runtime id
        self._timed_out_runs: set[str] = set()  # loop runs whose timeout the loop was told
        # The admission's version when a look for stopped loop runs last found none: no
        # run can have stopped while it stands (see _end_timed_out_runs).
        self._no_run_stopped_at: int | None = None
        # The executions the admission listed last, and the snapshot's entries of them.
        self._executions_read: tuple[object, tuple[tuple[str, str, str], ...]] | None = None
        # Those entries, and each execution's state by its work.
        self._states_read: tuple[object, dict[str, str]] | None = None
        # The parts of the snapshot handed out last, and that snapshot.
        self._snapshot_read: tuple[tuple[Any, ...], CompositeSnapshot] | None = None
        # The wiring is the only caller of the loops, reminders, breaker and governor
        # runtimes: what one shows, and what it has due, moves only with the clock's time
        # or with a call of the wiring that changes it, which it counts here. A check
        # settles and reads them all after every command, and most commands touch one:
        # a settle or a read at the same time and count is skipped (`_settle`, `_read`).
        # The admission keeps its own reads (its `version`).
        self._clock = clock
        self._changes = dict.fromkeys((LOOPS, REMINDERS, BREAKER, GOVERNOR), 0)
        self._settled: dict[str, tuple[datetime, int]] = {}  # runtime -> (time, count)
        self._reads: dict[str, tuple[tuple[datetime, int], Any]] = {}  # runtime -> kept
        self.breaker.set_global_switch(True)
        self.reminders = open_reminders(self)

    # -- owners and jobs --------------------------------------------------------------------

    def add_owner(self, owner: str) -> None:
        self._changes[BREAKER] += 1  # its owners are the breakers shown
        self.admission.add_owner(owner)
        self._owners.add(owner)
        self.breaker.set_opt_in(owner, True)

    def _known(self, owner: str) -> None:
        if owner not in self._owners:
            raise UnknownOwner(terms.refusal("unknown_owner", owner=owner))

    def free_slot(self, owner: str) -> bool:
        """A slot that neither running work nor work already waiting has a claim on."""
        view = self.admission.owner(owner)
        return view is not None and view.running + view.queued < view.effective_cap

    def submit(self, owner: str, job: str) -> str:
        self._known(owner)
        self._changes[BREAKER] += 1
        decision = self.breaker.admit(owner, job)
        if decision == REFUSED:
            return REFUSED
        if decision == PROBE and not self.free_slot(owner):
            self.breaker.record(owner, job, "cancelled", None)  # give the probe up
            return REFUSED
        self._hold()
        try:
            answer = self.admission.admit(owner, job)
        except Exception:
            if decision == PROBE:
                self.breaker.record(owner, job, "cancelled", None)
            raise
        self._jobs[job] = owner
        return answer

    # -- loops --------------------------------------------------------------------------------

    def admit_loop_run(self, work: str, owner: str) -> str:
        self._hold()
        return self.admission.admit(owner, work)

    def start_loop(self, owner: str, loop: str, runs: int) -> str:
        self._known(owner)
        agent = LoopAgent()
        settled = self._settled.get(LOOPS) == (self._clock.now(), self._changes[LOOPS])
        self._changes[LOOPS] += 1
        loop_id = self.loops.start_loop(loop_parameters(loop, runs), agent)
        if settled:  # a loop just started has nothing due: its first run is undecided
            self._settled[LOOPS] = (self._clock.now(), self._changes[LOOPS])
        work = loop_run(loop, 1)
        self._loops[loop] = _Loop(loop_id, agent, owner, 1, work)
        self._loop_names[work] = loop
        return self.admit_loop_run(work, owner)

    def _end_run(self, loop: _Loop, name: str, work: str, failed: bool) -> list[object]:
        outcome = FailResult(FAILED_RUN_STATUS) if failed else Respond(run_response(work))
        return self._end_run_with(loop, name, outcome)

    def _end_run_with(self, loop: _Loop, name: str, outcome: RunOutcome) -> list[object]:
        self._changes[LOOPS] += 1
        loop.agent.decide(loop.run_number, outcome)
        self._settle(LOOPS, self.loops.settle, self._clock.now())
        snapshot = self.loops.get_loop(loop.loop_id)
        if snapshot is None or snapshot.status != "running":
            loop.ended = snapshot is not None
            return [True, None]
        loop.run_number += 1
        following = loop.work = loop_run(name, loop.run_number)
        self._loop_names[following] = name
        return [True, self.admit_loop_run(following, loop.owner)]

    def run_timed_out(self, work: str, states: Mapping[str, str]) -> bool:
        """The admission stopped this loop run at its execution timeout (AD-015), expired
        it in the backlog (AD-008) or reclaimed it at its lease's end (AD-017); `states`
        holds each execution's state, by its work."""
        return states.get(work) in RUN_STOPPED_STATES

    def _end_timed_out_runs(self) -> None:
        """Each loop's run that the admission stopped, expired or reclaimed fails with
        TIMEOUT, as the loop's own per-run timeout would end it; a loop that goes on asks
        a slot for its next run (CX-006). In the loops' start order."""
        version = self.admission.version()
        if version is not None and version == self._no_run_stopped_at:
            return  # nothing in the admission changed since a look that found none
        ended = False
        # Read once: what the scan does (a loop's next run admitted) stops no other run.
        states = self._execution_states()
        for name, loop in list(self._loops.items()):
            if loop.ended:
                continue
            work = loop.work
            if work in self._timed_out_runs or not self.run_timed_out(work, states):
                continue
            self._timed_out_runs.add(work)
            self._end_run_with(loop, name, FailResult(TIMEOUT_ERROR))
            ended = True
        self._no_run_stopped_at = None if ended else version

    # -- reminders ----------------------------------------------------------------------------

    def create_reminder(self, owner: str, reminder: str, delay_seconds: float) -> str:
        self._known(owner)
        self._changes[REMINDERS] += 1
        reminder_id = self.reminders.create(reminder_message(reminder),
                                            delay_seconds=delay_seconds)
        self._reminders[reminder_id] = (reminder, owner)
        self._reminder_ids[reminder] = reminder_id
        return "created"

    def admit_fire(self, work: str, owner: str) -> None:
        self._hold()
        self.admission.admit(owner, work)

    def dispatch(self, reminder_id: str, message: str,
                 triggered_by: str | None = None) -> Delivery:
        """The reminders runtime fires: the execution is admitted (running or queued), as
        any other work of its owner; a refusal is a clean failure before it started."""
        delivery = Delivery(reminder_id, message, triggered_by)
        name, owner = self._reminders[reminder_id]
        try:
            self.admit_fire(name, owner)
        except Exception:
            delivery.decide(DeliveryOutcome.FAILS)
        else:
            delivery.decide(DeliveryOutcome.LANDS)
        return delivery

    # -- ending work, the governor and maintenance ----------------------------------------------

    def finish(self, work: str, failed: bool = False) -> bool | list[object]:
        execution = self.admission.execution(work)
        if execution is None or execution.state != terms.RUNNING:
            return False
        self._hold()
        self.admission.finish(work)
        if work in self._jobs:
            self._changes[BREAKER] += 1
            self.breaker.record(self._jobs[work], work, "failure" if failed else "success",
                                AUTH if failed else None)
        name = self._loop_names.get(work)
        if name is not None:
            return self._end_run(self._loops[name], name, work, failed)
        return True

    def record_failure(self, owner: str, failure_class: str, result: str) -> None:
        self._changes[GOVERNOR] += 1
        self.governor.record_failure(owner, failure_class, result)

    def drain_held(self, paused: bool) -> bool:
        """Whether the admission's drain is held, `paused` being whether the governor's
        pause holds (CX-004)."""
        return paused

    def lease_reclaim_held(self, paused: bool) -> bool:
        """Whether the admission's lease reaper is held, `paused` as for drain_held
        (CX-005)."""
        return paused

    def _hold(self) -> None:
        """Hold the admission's drain (CX-004) and its lease reaper (CX-005) while the
        governor's pause holds; asked before every admission operation that could start
        waiting work or reclaim a lapsed lease."""
        paused = self._read(GOVERNOR, self.governor.paused_until, self._clock.now()) is not None
        holds = (self.drain_held(paused), self.lease_reclaim_held(paused))
        if holds != self._holds:  # the admission keeps them; only the wiring sets them
            self.admission.hold_drain(holds[0])
            self.admission.hold_lease_reclaim(holds[1])
            self._holds = holds

    def restart(self) -> None:
        """The admission's process restarts (AD-018): its running work becomes orphans
        whose slots only their leases free. The other runtimes keep their state."""
        self.admission.restart()

    def maintain(self) -> int:
        self._hold()
        expired = self.admission.maintain()
        self._end_timed_out_runs()
        return expired

    # -- reads and lifetime ----------------------------------------------------------------------

    def settle(self) -> None:
        # Time may have passed since the last operation: the pause as it stands now
        # decides whether a slot freed by a timeout is filled (CX-004) and whether a
        # lapsed lease is reclaimed (CX-005).
        self._hold()
        now = self._clock.now()  # it stands while the runtimes settle
        self._settle(LOOPS, self.loops.settle, now)
        self._settle(REMINDERS, self._settle_reminders, now)
        self.admission.settle()
        self._end_timed_out_runs()

    def _settle_reminders(self) -> None:
        # A fire is admitted inside the dispatch; the runtime records it at its next settle.
        self.reminders.settle()
        self.reminders.settle()

    def _settle(self, runtime: str, settle: Callable[[], None], now: datetime) -> None:
        """`settle()` unless `runtime` was settled at the clock's time `now` and the
        wiring has not changed it since: then nothing more is due."""
        if self._settled.get(runtime) == (now, self._changes[runtime]):
            return
        settle()
        self._changes[runtime] += 1  # what it shows may have moved
        self._settled[runtime] = (now, self._changes[runtime])

    def _read(self, runtime: str, read: Callable[[], T], now: datetime) -> T:
        """`read()`, or what it gave at the clock's time `now` with no change of
        `runtime` by the wiring since."""
        key = (now, self._changes[runtime])
        kept = self._reads.get(runtime)
        if kept is not None and kept[0] == key:
            return kept[1]  # type: ignore[no-any-return]
        value = read()
        self._reads[runtime] = (key, value)
        return value

    def snapshot(self) -> CompositeSnapshot:
        # The executions alone, not the admission's whole snapshot (owners, schedules,
        # calls), which nothing here shows (issue 33: it is read after every command).
        now = self._clock.now()
        parts = (self._executions(), self._read(LOOPS, self._loops_shown, now),
                 self._read(REMINDERS, self._reminders_shown, now),
                 self._read(BREAKER, self._breakers_shown, now),
                 self._read(GOVERNOR, self.governor.paused_until, now))
        last = self._snapshot_read
        if last is None or last[0] != parts:
            last = self._snapshot_read = (parts, CompositeSnapshot(*parts))
        return last[1]

    def _loops_shown(self) -> tuple[tuple[str, str, int], ...]:
        by_id = {shown.loop_id: shown for shown in self.loops.list_loops()}
        loops = []
        for name, loop in self._loops.items():
            shown = by_id.get(loop.loop_id)
            loops.append((name, shown.status, shown.runs_completed) if shown is not None
                         else (name, "missing", 0))
        return tuple(loops)

    def _reminders_shown(self) -> tuple[tuple[str, str], ...]:
        reminders = []
        for name, reminder_id in self._reminder_ids.items():
            view = self.reminders.get(reminder_id)
            reminders.append((name, view.status if view is not None else "missing"))
        return tuple(reminders)

    def _breakers_shown(self) -> tuple[tuple[str, str, str | None], ...]:
        breakers = []
        for owner in self.admission.owners():
            read = self.breaker.read(owner)
            breakers.append((owner, str(read.state), read.probe) if read is not None
                            else (owner, "unreadable", None))
        return tuple(breakers)

    def _executions(self) -> tuple[tuple[str, str, str], ...]:
        """(work, owner, state) of every execution. The admission hands out the same
        tuple while no execution changed (the kit's memory store): its entries are kept
        as long as it does."""
        listed = self.admission.executions()
        read = self._executions_read
        if read is not None and read[0] is listed:
            return read[1]
        entries = tuple([(e.execution_id, e.owner, e.state) for e in listed])
        if isinstance(listed, tuple):  # a list could be changed in place
            self._executions_read = (listed, entries)
        return entries

    def _execution_states(self) -> dict[str, str]:
        """Each execution's state by its work, from the entries `_executions` lists."""
        entries = self._executions()
        read = self._states_read
        if read is None or read[0] is not entries:
            read = self._states_read = (entries, {work: state for work, _, state in entries})
        return read[1]

    def close(self) -> None:
        for runtime in (self.reminders, self.loops, self.breaker, self.governor,
                        self.admission):
            runtime.close()


def open_shared_admission(backend: Any, clock: Clock, config: CompositeConfig,
                          wiring: type[SharedAdmission] = SharedAdmission) -> SharedAdmission:
    """A composite runtime from `backend`'s own area runtimes (see the module text)."""
    admission = backend.open_admission(clock, config.admission)
    loops = backend.open_loops(clock, LoopsConfig(LOOP_RUN_TIMEOUT_SECONDS))
    breaker = backend.open_breaker(clock, config.breaker)
    governor = backend.open_governor(clock, config.governor)
    return wiring(admission, loops, breaker, governor,
                  lambda target: backend.open_reminders(clock, config.reminders, target),
                  clock)
