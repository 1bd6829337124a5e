"""The admission harness: each command goes to the backend's admission runtime and to the
oracle, and everything they show must agree.

After every command the harness compares the command's answer, then the whole observable
state: the ceiling (stored and in force), every owner's view, every backlog in order,
every execution record, every call's state and every owner's schedules. The first
difference raises `Divergence` naming the requirements involved. Every backend call runs
under the real-time watchdog, so a hung adapter fails with a clear message instead of
hanging the run.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from functools import partial
from typing import Any, ClassVar

from jobconform.backends.admission.protocol import (
    AdmissionRefused,
    AdmissionRuntime,
    AdmissionSnapshot,
    ExecutionView,
)
from jobconform.backends.protocol import ADMISSION, ADMISSION_PEERS
from jobconform.conformance import read_ahead
from jobconform.conformance.area_harness import AreaHarness, check_time_step, profile_parameters
from jobconform.conformance.sealed_views import ATOMS as PLAIN
from jobconform.conformance.utc import WANTED, describe_offset, first_off_utc, in_utc
from jobconform.conformance.watchdog import guarded
from jobconform.reference import admission as ad
from jobconform.reference.admission import AdmissionCommand, AdmissionConfig, AdmissionModel
from jobconform.spec import Profile, SpecError

# Which requirement an observed field belongs to, beyond the command's own.
OWNER_FIELD_REQUIREMENTS = {
    "parallel_cap": ("AD-001",),
    "ceiling": ("AD-003",),
    "effective_cap": ("AD-003",),
    "running": ("AD-004",),
    "available_slots": ("AD-004",),
    "queued": ("AD-005",),
    "backlog_depth": ("AD-005",),
    "execution_timeout_seconds": ("AD-012",),
}
STATE_REQUIREMENTS = {
    ad.QUEUED: ("AD-005",),
    ad.RUNNING: ("AD-004",),
    ad.FINISHED: ("AD-006",),
    ad.CANCELLED: ("AD-007",),
    ad.EXPIRED: ("AD-008",),
    ad.BUDGET_EXHAUSTED: ("AD-011",),
    ad.TIMED_OUT: ("AD-015",),
    ad.LEASE_EXPIRED: ("AD-017",),
}
TIMEOUT_STATES = frozenset({ad.TIMED_OUT, ad.LEASE_EXPIRED})


# A view type's field names, asked once per type.
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def view_fields(view: Any) -> dict[str, Any]:
    """`asdict(view)`, read field by field where every field holds a plain value (as in the
    kit's own views: `asdict` would copy each of them, after every command)."""
    names = _FIELD_NAMES.get(type(view))
    if names is None:
        names = _FIELD_NAMES[type(view)] = tuple(field.name for field in fields(view))
    values = {name: getattr(view, name) for name in names}
    if all(type(value) in PLAIN for value in values.values()):
        return values
    return asdict(view)


def admission_config(profile: Profile, **overrides: Any) -> AdmissionConfig:
    """The profile's admission defaults, with a check's own values on top.

    Raises:
        SpecError: the profile lacks a default, or an override names no parameter.
        ValueError: a value is out of range.
    """
    return AdmissionConfig(**profile_parameters(profile, ADMISSION, AdmissionConfig.names(),
                                                overrides, SpecError))


def ceiling_primary(expected: object, actual: object) -> str:
    """A ceiling read that differs: a stored value outside 1 to 32 is clamped on read and
    kept as it is (AD-003); within the range, what was written or defaulted (AD-002)."""
    stored = expected.get("stored") if isinstance(expected, dict) else None
    if isinstance(stored, int) and not 1 <= stored <= 32:
        return "AD-003"
    return "AD-002"


@dataclass
class AdmissionHarness(AreaHarness[AdmissionCommand]):
    """Differential execution of admission commands on one backend runtime and the oracle.

    Args:
        backend: the adapter under test; it must claim `admission`.
        profile: the profile whose admission defaults apply.
        registry: the spec, for requirement titles in messages.
        overrides: admission parameters of this check (backlog_depth=2, ...).
    """

    AREA: ClassVar[str] = ADMISSION
    PASSES_THROUGH: ClassVar[tuple[type[Exception], ...]] = (AdmissionRefused,)

    overrides: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._require_area()
        self.config = admission_config(self.profile, **self.overrides)
        self.model = AdmissionModel(self.config, self.clock.now())
        self.last_answer: object = None
        opener = self._opener("clock, config")
        self.runtime: AdmissionRuntime = self._open(lambda: opener(self.clock, self.config))
        # The second runtime over the same store (AD-027), opened by the first command
        # that goes through it.
        self.peer: AdmissionRuntime | None = None
        self.log_watch = self._watch_logs(self.runtime)

    def _to_close(self) -> list[AdmissionRuntime]:
        return [self.runtime] if self.peer is None else [self.peer, self.runtime]

    def _runtimes(self) -> list[AdmissionRuntime]:
        """The fleet: the first runtime, then the second where one is open."""
        return [self.runtime] if self.peer is None else [self.runtime, self.peer]

    def _open_peer(self) -> AdmissionRuntime:
        """The second runtime, opened by the first through `open_peer()` (AD-027). The
        settings store is the fleet's: if its reads fail, they fail for both (AD-020)."""
        if self.peer is not None:
            return self.peer
        open_peer = getattr(self.runtime, "open_peer", None)
        if ADMISSION_PEERS not in self.backend.capabilities or not callable(open_peer):
            raise self._fail(("AD-027",), "a second runtime over the same store",
                             "an open_peer() method, claimed as admission-peers"
                             " (backends/admission/protocol.py)", "none", "AD-027")
        peer: AdmissionRuntime = self._call("open_peer", open_peer)
        self.peer = peer
        if self.model.settings_failing:
            self._call("fail_settings_reads", lambda: peer.fail_settings_reads(True))
        return peer

    def close(self) -> None:
        super().close()
        if self.log_watch is not None:
            self.log_watch.close()

    # -- the one operation ---------------------------------------------------------------

    def run(self, command: AdmissionCommand) -> object:
        """Apply `command` to both sides and compare everything; return the backend's answer.

        Raises:
            Divergence: the backend differs from the oracle.
            AdapterError: the adapter raised outside its contract or hung.
            ValueError: the command itself is malformed (an alias used twice, bad time).
        """
        self._check_command(command)
        self.commands.append(command)
        if self.log_watch is not None:
            self.log_watch.discard()  # a command is checked on the records it made
        self.model.logs.clear()
        expected = self.model.apply(command)
        self.exercised.update(expected.requirements)
        with guarded(self.safety_timeout, partial(ad.describe, command), self.hang_scope):
            actual = self._apply(command)
            self.last_answer = actual
            self.listed.check(len(self.commands),
                              functools.partial(self._compare_answer, command, expected,
                                                actual),
                              functools.partial(self.observe, expected.requirements),
                              self._adopt)
        return actual

    def run_oracle(self, command: AdmissionCommand) -> object:
        """The command applied to the oracle alone, the clock moved as `_apply` moves it:
        the oracle's answer (the cost floor, see machine_runner.oracle_alone)."""
        self._check_command(command)
        self.commands.append(command)
        self.model.logs.clear()
        answer = self.model.apply(command).answer
        if isinstance(command, ad.PassTime):
            self.clock.advance(command.seconds)
        return answer

    def _compare_answer(self, command: AdmissionCommand, expected: ad.Expected,
                        actual: object) -> None:
        if actual != expected.answer or type(actual) is not type(expected.answer):
            # Admitted against refused: whether the backlog had room (AD-005); admitted
            # either way, the per-owner cap decides running against queued (AD-004).
            refused = any(answer not in (ad.RUNNING, ad.QUEUED)
                          for answer in (actual, expected.answer))
            primary = ("AD-005" if isinstance(command, ad.Admit) and refused
                       and "AD-005" in expected.requirements else None)
            if (isinstance(command, ad.Admit) and self.peer is not None
                    and (expected.answer, actual) == (ad.QUEUED, ad.RUNNING)):
                # Started where the fleet's slots were full: one runtime did not count
                # what the other runs (AD-027).
                primary = "AD-027"
            if isinstance(command, ad.ReadCeiling):
                primary = self._ceiling_primary(expected.answer, actual)
            raise self._fail(expected.requirements, f"the answer to {ad.describe(command)}",
                             expected.answer, actual, primary)

    def _adopt(self) -> None:
        """After a listed deviation the oracle takes the runtime's snapshot: the stored
        ceiling, each owner's settings, backlog and schedules, and the states of the
        executions and calls it knows."""
        model = self.model
        snapshot = self._call("snapshot", self.runtime.snapshot)
        if snapshot.ceiling.stored is not None:  # None: the settings cannot be read (AD-020)
            model.stored_ceiling = snapshot.ceiling.stored
        shown = {owner.name: owner for owner in snapshot.owners}
        for name in [name for name in model.owners if name not in shown]:
            del model.owners[name]
            model.backlogs.pop(name, None)
        for name, owner in shown.items():
            model.owners[name] = ad.Owner(owner.view.parallel_cap, owner.view.backlog_depth,
                                          owner.view.execution_timeout_seconds,
                                          tuple((s, t) for s, t in owner.schedules))
            model.backlogs[name] = list(owner.backlog)
        for view in snapshot.executions:
            known = model.executions.get(view.execution_id)
            if known is not None:
                # What the oracle fixed on arrival (timeout, identity) stays unless the
                # runtime shows its own.
                model.executions[view.execution_id] = replace(
                    known, owner=view.owner, state=view.state, arrived_at=view.arrived_at,
                    started_at=view.started_at, ended_at=view.ended_at,
                    timeout_seconds=(known.timeout_seconds if view.timeout_seconds is None
                                     else view.timeout_seconds),
                    identity=known.identity if view.identity is None else view.identity)
        for call, state in snapshot.calls:
            if call in model.calls:
                model.calls[call] = replace(model.calls[call], state=state)


    # -- applying --------------------------------------------------------------------------

    def _check_command(self, command: AdmissionCommand) -> None:
        if isinstance(command, ad.Admit) and command.execution in self.model.executions:
            raise ValueError(f"execution alias {command.execution!r} is already used")
        if isinstance(command, ad.StartCall) and command.call in self.model.calls:
            raise ValueError(f"call alias {command.call!r} is already used")
        if isinstance(command, ad.PassTime):
            check_time_step(command.seconds)

    def _optional(self, runtime: Any, name: str, requirement: str, what: str,
                  signature: str) -> Callable[..., Any]:
        """The runtime's method `name`, which only `requirement` needs: a runtime without
        it fails that requirement, not the run."""
        method: object = getattr(runtime, name, None)
        if not callable(method):
            raise self._fail((requirement,), what,
                             f"a {signature} method (backends/admission/protocol.py)", "none",
                             requirement)
        return method

    def _refusable(self, action: str, function: Callable[[], object]) -> object:
        """Call the runtime; a refusal becomes its structured detail, None becomes "ok"."""
        try:
            answer = self._call(action, function)
        except AdmissionRefused as refusal:
            return refusal.detail
        return ad.OK if answer is None else answer

    def _apply(self, command: AdmissionCommand) -> object:
        c: Any = command
        rt = self._open_peer() if getattr(c, "peer", False) else self.runtime
        match command:
            case ad.SetCeiling():
                # The admin goes only where a check names one (AD-022), so an adapter
                # written before 0.20 still writes the ceiling.
                named = {} if c.by is None else {"by": c.by}
                return self._refusable("set_ceiling", lambda: rt.set_ceiling(c.value, **named))
            case ad.ReadCeilingChanges():
                changes = self._optional(rt, "ceiling_changes", "AD-022",
                                         "the runtime's record of ceiling changes",
                                         "ceiling_changes()")
                return [{"value": change.value, "by": change.by,
                         "at": change.at.isoformat()}
                        for change in self._call("ceiling_changes", changes)]
            case ad.StoreRawCeiling():
                self._call("store_raw_ceiling", lambda: rt.store_raw_ceiling(c.value))
                return None
            case ad.ReadCeiling():
                return asdict(self._call("ceiling", rt.ceiling))
            case ad.FailSettingsReads():
                fail_reads = self._optional(rt, "fail_settings_reads", "AD-020",
                                            "the runtime's settings fault injection",
                                            "fail_settings_reads(failing)")
                self._call("fail_settings_reads", lambda: fail_reads(c.failing))
                if self.peer is not None:  # the settings store is the fleet's
                    peer_reads = self.peer.fail_settings_reads
                    self._call("fail_settings_reads", lambda: peer_reads(c.failing))
                return None
            case ad.AddOwner():
                return self._refusable("add_owner", lambda: rt.add_owner(c.owner))
            case ad.SetParallelCap():
                return self._refusable("set_parallel_cap",
                                       lambda: rt.set_parallel_cap(c.owner, c.value))
            case ad.SetBacklogDepth():
                return self._refusable("set_backlog_depth",
                                       lambda: rt.set_backlog_depth(c.owner, c.value))
            case ad.SetExecutionTimeout():
                return self._refusable("set_execution_timeout",
                                       lambda: rt.set_execution_timeout(c.owner, c.seconds))
            case ad.ReadOwner():
                view = self._call("owner", lambda: rt.owner(c.owner))
                return ad.unknown_owner(c.owner) if view is None else asdict(view)
            case ad.DeleteOwner():
                return self._refusable("delete_owner", lambda: rt.delete_owner(c.owner))
            case ad.Admit():
                # The 0.7.0 arguments go only where a check names them, so an adapter
                # written for 0.6 still admits plain work.
                named = {name: getattr(c, name)
                         for name in ("timeout_seconds", "identity", "schedule")
                         if getattr(c, name) is not None}
                return self._refusable("admit",
                                       lambda: rt.admit(c.owner, c.execution, **named))
            case ad.FinishExecution():
                return self._call("finish", lambda: rt.finish(c.execution))
            case ad.CancelExecution():
                return self._call("cancel", lambda: rt.cancel(c.execution))
            case ad.Maintain():
                return self._call("maintain", rt.maintain)
            case ad.PassTime():
                self.clock.advance(c.seconds)
                return None
            case ad.Restart():
                restart = self._optional(rt, "restart", "AD-018", "the runtime's restart",
                                         "restart()")
                self._call("restart", restart)
                if self.peer is not None:  # the fleet restarts: every worker's process
                    self._call("restart", self.peer.restart)
                return None
            case ad.StartCall():
                return self._refusable("start_call",
                                       lambda: rt.start_call(c.call, c.execution, c.target))
            case ad.EndCall():
                return self._call("end_call", lambda: rt.end_call(c.call))
            case ad.AddSchedule():
                return self._refusable("add_schedule", lambda: rt.add_schedule(
                    c.owner, c.schedule, c.timeout_seconds))
            case ad.ChangeSchedule():
                return self._refusable("change_schedule", lambda: rt.change_schedule(
                    c.owner, c.schedule, c.timeout_seconds))
            case ad.RemoveSchedule():
                return self._refusable("remove_schedule",
                                       lambda: rt.remove_schedule(c.owner, c.schedule))
            case ad.StoreRawSchedule():
                store_raw = self._optional(rt, "store_raw_schedule", "AD-021",
                                           "the runtime's raw schedule write",
                                           "store_raw_schedule(owner, schedule,"
                                           " timeout_seconds)")
                self._call("store_raw_schedule",
                           lambda: store_raw(c.owner, c.schedule, c.timeout_seconds))
                return None
        raise ValueError(f"not an admission command: {command!r}")

    # -- comparing -------------------------------------------------------------------------

    def _same(self, requirements: tuple[str, ...], what: str, expected: object,
              actual: object) -> None:
        if expected != actual:
            raise self._fail(requirements, what, expected, actual)

    def observe(self, requirements: tuple[str, ...] = ()) -> None:
        """Compare the runtime's whole observable state, read in one snapshot, with the
        oracle's."""
        model = self.model
        # The log records' check, then the next command's discard (no call between).
        logs = 2 if self.log_watch is not None and callable(
            getattr(self.runtime, "log_records", None)) else 0
        read_ahead.plan_reads([*((runtime, "settle", {}) for runtime in self._runtimes()),
                               (self.runtime, "snapshot", {}),
                               *[(self.runtime, "log_records", {})] * logs])
        for runtime in self._runtimes():
            self._call("settle", runtime.settle)
        snapshot = self._call("snapshot", self.runtime.snapshot)
        if self.peer is not None:
            self._observe_fleet(requirements, snapshot)
        wanted_ceiling, actual_ceiling = model.ceiling_view(), view_fields(snapshot.ceiling)
        if wanted_ceiling != actual_ceiling:
            raise self._fail((*requirements, "AD-002", "AD-003"),
                             "the fleet ceiling (stored, in force)", wanted_ceiling,
                             actual_ceiling, self._ceiling_primary(wanted_ceiling,
                                                                   actual_ceiling))
        self._observe_time_outs(requirements, snapshot.executions)
        self._same((*requirements, "AD-009"), "the owners", list(model.owners),
                   [owner.name for owner in snapshot.owners])
        for owner in snapshot.owners:
            name, actual = owner.name, view_fields(owner.view)
            wanted = model.owner_view(name)
            assert wanted is not None  # the names matched above
            for key, field_requirements in OWNER_FIELD_REQUIREMENTS.items():
                if wanted[key] != actual.get(key):  # the message built only for a difference
                    raise self._fail(requirements + field_requirements,
                                     f"owner {name!r} {key}", wanted[key], actual.get(key))
            if model.backlogs[name] != list(owner.backlog):
                # Its depth agreed above (AD-005): which entries are left, and their order,
                # is the drain's arrival order.
                raise self._fail((*requirements, "AD-005", "AD-006"),
                                 f"owner {name!r} backlog, in order", model.backlogs[name],
                                 list(owner.backlog), "AD-006")
            # A row stored above its owner's timeout stays as it is (AD-021).
            schedule_requirements = ("AD-021",) if model.over_cap(name) else ()
            self._same((*requirements, "AD-013", "AD-014", *schedule_requirements),
                       f"owner {name!r} schedules",
                       [list(s) for s in model.owners[name].schedules],
                       [list(s) for s in owner.schedules])
        self._observe_executions(requirements, snapshot.executions)
        self._observe_bodies(requirements)
        calls = dict(snapshot.calls)
        self._same((*requirements, "AD-010"), "the calls, in arrival order", list(model.calls),
                   list(calls))
        for alias, call in model.calls.items():
            state = calls[alias]
            call_requirements = ("AD-011",) if ad.CALL_REFUSED in (state, call.state) else ()
            self._same((*requirements, "AD-010", *call_requirements), f"call {alias!r} state",
                       call.state, state)
        # The records of the calls started and refused (AD-025, AD-026), after `settle`,
        # where the runtime refuses what waited too long.
        self._check_log_records(self.log_watch, model.logs, requirements)

    @staticmethod
    def _state_requirements(wanted: Any, view: ExecutionView) -> tuple[str, ...]:
        """The requirements of an execution's states on both sides."""
        return (STATE_REQUIREMENTS.get(wanted.state, ())
                + STATE_REQUIREMENTS.get(view.state, ()))

    def _observe_fleet(self, requirements: tuple[str, ...],
                       snapshot: AdmissionSnapshot) -> None:
        """With two runtimes over the store, neither starts work while the fleet's slots
        are full (AD-027): an owner never runs more than its effective cap, unless the
        oracle's own running work is over a lowered cap (no preemption, AD-004)."""
        for owner in snapshot.owners:
            if owner.name not in self.model.owners:
                continue
            wanted = self.model.running(owner.name)
            bound = max(wanted, self.model.effective_cap(owner.name))
            if owner.view.running > bound:
                raise self._fail((*requirements, "AD-027", "AD-004"),
                                 f"owner {owner.name!r} running across both runtimes",
                                 wanted, owner.view.running, "AD-027")

    def _ceiling_primary(self, expected: object, actual: object) -> str:
        """While the settings cannot be read, the ceiling is the fail-open rule's (AD-020)."""
        if self.model.settings_failing:
            return "AD-020"
        return ceiling_primary(expected, actual)

    def _observe_time_outs(self, requirements: tuple[str, ...],
                           views: tuple[ExecutionView, ...]) -> None:
        """An execution stopped at its timeout, or its slot reclaimed, on one side only:
        checked before the counts it changes, so the timeout's rule is the one named. An
        orphan of a restart is its lease's business (AD-017), whatever ended it; an
        execution ended because its call waited out the acquire timeout on one side only
        is that timeout's (AD-011: the call's refusal is the cause, the owner's running
        count the consequence)."""
        for view in views:
            wanted = self.model.executions.get(view.execution_id)
            if wanted is None or wanted.state == view.state:
                continue
            states = {wanted.state, view.state}
            if ad.BUDGET_EXHAUSTED in states and not wanted.orphaned:
                raise self._fail((*requirements, "AD-011"),
                                 f"execution {view.execution_id!r} state", wanted.state,
                                 view.state, "AD-011")
            if not states & TIMEOUT_STATES:
                continue
            primary = ("AD-017" if wanted.orphaned or ad.LEASE_EXPIRED in states
                       else "AD-015")
            raise self._fail((*requirements, "AD-015", "AD-017"),
                             f"execution {view.execution_id!r} state", wanted.state,
                             view.state, primary)

    def _observe_bodies(self, requirements: tuple[str, ...]) -> None:
        """Where the runtime runs real bodies, count them: exactly the running executions
        of each owner that it started since its last restart are inside their bodies,
        never more than the cap lets run."""
        probes: list[Callable[[str], int]] = [
            probe for probe in (getattr(runtime, "bodies_running", None)
                                for runtime in self._runtimes()) if callable(probe)]
        if not probes:
            return
        for name in self.model.owners:
            # Both runtimes' bodies count: the cap is the fleet's (AD-027).
            inside = sum(self._call("bodies_running", functools.partial(probe, name))
                         for probe in probes)
            own = sum(1 for e in self.model.executions.values()
                      if e.owner == name and e.state == ad.RUNNING and not e.orphaned)
            self._same((*requirements, "AD-004"), f"owner {name!r} bodies running at once"
                       " (probe)", own, inside)

    def _observe_executions(self, requirements: tuple[str, ...],
                            views: tuple[ExecutionView, ...]) -> None:
        self._same((*requirements, "AD-005"), "the executions, in arrival order",
                   list(self.model.executions), [view.execution_id for view in views])
        for view in views:
            wanted = self.model.executions[view.execution_id]
            alias = view.execution_id
            # Each comparison builds its requirements and message only for a difference
            # (issue 33: this runs for every execution after every command).
            if wanted.state != view.state:
                raise self._fail(requirements + self._state_requirements(wanted, view),
                                 f"execution {alias!r} state", wanted.state, view.state)
            if wanted.owner != view.owner:
                raise self._fail((*requirements, "AD-004"), f"execution {alias!r} owner",
                                 wanted.owner, view.owner)
            for name in ("arrived_at", "started_at", "ended_at"):
                if getattr(wanted, name) != getattr(view, name):
                    raise self._fail(requirements + self._state_requirements(wanted, view),
                                     f"execution {alias!r} {name}", getattr(wanted, name),
                                     getattr(view, name))
            if wanted.timeout_seconds != view.timeout_seconds:
                primary = ("AD-016" if wanted.overridden
                           else "AD-021" if wanted.scheduled else "AD-015")
                raise self._fail((*requirements, "AD-015", "AD-016", "AD-021"),
                                 f"execution {alias!r} timeout_seconds",
                                 wanted.timeout_seconds, view.timeout_seconds, primary)
            if wanted.identity != view.identity:
                raise self._fail((*requirements, "AD-019"), f"execution {alias!r} identity",
                                 wanted.identity, view.identity, "AD-019")
            # The right instant at another offset compares equal: AD-004 asks for UTC.
            if type(view) is ExecutionView and all(
                    in_utc(instant) for instant in (view.arrived_at, view.started_at,
                                                    view.ended_at)):
                continue  # the kit's view, whose other fields agreed with the oracle's
            off = first_off_utc(view, f"execution {alias!r}")
            if off is not None:
                raise self._fail((*requirements, "AD-004"), f"{off[0]} as a UTC instant",
                                 WANTED, describe_offset(off[1]), "AD-004")
