"""The composite harness: each command goes to the backend's composite runtime and to the
composite oracle, and their answers and snapshots must agree.

After every command the runtime settles, then the harness compares the command's answer
and the whole snapshot (every execution of the one admission, every loop, reminder and
breaker, and the pause) with `CompositeModel`. The first difference raises `Divergence`.
Its primary requirement follows from what differs: a loop CX-001 (CX-006 when its last
ended run is one the admission timed out), a reminder CX-002, a breaker CX-003, the pause
CX-004. For an execution, an orphan whose lapsed lease the pause held is CX-005's; a work
in another state at a command where two areas meet (a job at a half-open breaker: CX-003;
work waiting while the pause holds the drain: CX-004; a lapsed lease held: CX-005) is that
meeting point's; a work one side never admitted is its kind's (a loop's run CX-001, or
CX-006 when it follows a run the admission timed out; a reminder's execution CX-002), a
job's the command's.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar, cast

from jobconform.backends.admission.protocol import AdmissionRefused
from jobconform.backends.composite.protocol import (
    COMPOSITE,
    CompositeBackend,
    CompositeRuntime,
    CompositeSnapshot,
)
from jobconform.backends.reminders.protocol import ReminderRejected
from jobconform.conformance import read_ahead
from jobconform.conformance.admission.harness import admission_config
from jobconform.conformance.area_harness import AreaHarness
from jobconform.conformance.breaker.harness import breaker_settings
from jobconform.conformance.governor.harness import governor_settings
from jobconform.conformance.harness import Divergence
from jobconform.conformance.reminders.harness import CONFIG_PARAMETERS, config_for
from jobconform.conformance.watchdog import guarded
from jobconform.reference.admission import AdmissionConfig
from jobconform.reference.commands import Command, describe
from jobconform.reference.composite import commands as cc
from jobconform.reference.composite.oracle import (
    LEASE_REQUIREMENT,
    LOOPS_REQUIREMENT,
    PAUSE_REQUIREMENT,
    PROBE_REQUIREMENT,
    REMINDERS_REQUIREMENT,
    CompositeConfig,
    CompositeModel,
    CompositeView,
)
from jobconform.reference.reminders.oracle import rejected
from jobconform.spec import Profile, SpecError

# Commands where two areas meet: their own requirement is the primary of any difference.
MEETING_POINTS = (PROBE_REQUIREMENT, PAUSE_REQUIREMENT, LEASE_REQUIREMENT)


def composite_config(profile: Profile, **overrides: Any) -> CompositeConfig:
    """Each composed area's parameters from the profile, with a check's own values on top;
    an override goes to the area that has a parameter of its name (the names are
    distinct across the admission, breaker, governor and reminders areas).

    Raises:
        SpecError: an override names no parameter of those areas, or the profile lacks one.
        ValueError: a value is out of range.
    """
    breaker_names = set(profile.area_parameters.get("breaker", {}))
    governor_names = set(profile.area_parameters.get("governor", {}))
    split: dict[str, dict[str, Any]] = {"admission": {}, "breaker": {}, "governor": {},
                                        "reminders": {}}
    for name, value in overrides.items():
        if name in AdmissionConfig.names():
            split["admission"][name] = value
        elif name in breaker_names:
            split["breaker"][name] = value
        elif name in governor_names:
            split["governor"][name] = value
        elif name in CONFIG_PARAMETERS:
            split["reminders"][name] = value
        else:
            raise SpecError(f"{name!r} is no parameter of the admission, breaker, governor"
                            " or reminders area")
    return CompositeConfig(admission_config(profile, **split["admission"]),
                           breaker_settings(profile, **split["breaker"]),
                           governor_settings(profile, **split["governor"]),
                           config_for(profile, **split["reminders"]))


def _first_difference(expected: tuple[tuple[Any, ...], ...],
                      actual: tuple[tuple[Any, ...], ...]) -> str | None:
    """The name (first field) of the first entry that differs, in the oracle's order."""
    for index in range(max(len(expected), len(actual))):
        wanted = expected[index] if index < len(expected) else None
        shown = actual[index] if index < len(actual) else None
        if wanted != shown:
            return str((wanted or shown or ("?",))[0])
    return None


@dataclass
class CompositeHarness(AreaHarness[cc.CompositeCommand]):
    """Differential execution of composite commands on one backend and the oracle.

    Raises:
        ValueError: the backend does not claim the area.
        AdapterError: the backend has no `open_composite` or it raised.
    """

    AREA: ClassVar[str] = COMPOSITE
    PASSES_THROUGH: ClassVar[tuple[type[Exception], ...]] = (AdmissionRefused,
                                                             ReminderRejected)

    config: CompositeConfig | None = None

    def __post_init__(self) -> None:
        self._require_area("composite checks cannot run")
        if not isinstance(self.backend, CompositeBackend):
            raise ValueError(f"backend {self.backend.name!r} lacks open_composite; composite"
                             " checks cannot run")
        if self.config is None:
            self.config = composite_config(self.profile)
        self.model = CompositeModel(self.config, self.clock.now())
        backend, config = self.backend, self.config
        with guarded(self.safety_timeout, f"opening the composite runtime of {backend.name!r}",
                     self.hang_scope):
            self.runtime: CompositeRuntime = self._call(
                "open_composite", lambda: backend.open_composite(self.clock, config))

    def run(self, command: cc.CompositeCommand) -> object:
        """Apply `command` to both sides, compare, return the backend's answer.

        Raises:
            Divergence: the backend differs from the oracle.
            AdapterError: the adapter raised where the protocol allows no exception, or hung.
            ValueError: the command is malformed, or leaves what the area states.
        """
        if isinstance(command, cc.PassTime) and not 0 <= command.seconds < float("inf"):
            raise ValueError(f"time passes by a finite amount >= 0, not {command.seconds!r}")
        expected = self.model.apply(command)
        self.commands.append(command)
        self.exercised.update(expected.requirements)
        with guarded(self.safety_timeout, partial(describe, cast(Command, command)),
                     self.hang_scope):
            answer = self._apply(command)
            read_ahead.plan_reads([(self.runtime, "settle", {}), (self.runtime, "snapshot", {})])
            self._call("settle", self.runtime.settle)
            if answer != expected.answer:
                raise self._fail(expected.requirements,
                                 f"the answer to {describe(cast(Command, command))}",
                                 expected.answer, answer, expected.requirements[0])
            self.observe(expected.requirements)
        return answer

    def run_oracle(self, command: cc.CompositeCommand) -> object:
        """The command applied to the oracle alone, the clock moved as `_apply` moves it:
        the oracle's answer (the cost floor, see machine_runner.oracle_alone)."""
        if isinstance(command, cc.PassTime) and not 0 <= command.seconds < float("inf"):
            raise ValueError(f"time passes by a finite amount >= 0, not {command.seconds!r}")
        answer = self.model.apply(command).answer
        self.commands.append(command)
        if isinstance(command, cc.PassTime):
            self.clock.advance(command.seconds)
        return answer

    def _to_close(self) -> list[CompositeRuntime]:
        return [self.runtime]

    def _apply(self, command: cc.CompositeCommand) -> object:
        runtime = self.runtime
        try:
            match command:
                case cc.AddOwner(owner=owner):
                    self._call("add_owner", lambda: runtime.add_owner(owner))
                    return "ok"
                case cc.SubmitJob(owner=owner, job=job):
                    return self._call("submit", lambda: runtime.submit(owner, job))
                case cc.StartLoop(owner=owner, loop=loop, runs=runs):
                    return self._call("start_loop",
                                      lambda: runtime.start_loop(owner, loop, runs))
                case cc.CreateReminder(owner=owner, reminder=reminder, delay_seconds=delay):
                    return self._call("create_reminder",
                                      lambda: runtime.create_reminder(owner, reminder, delay))
                case cc.FinishWork(work=work, failed=failed):
                    return self._call("finish", lambda: runtime.finish(work, failed))
                case cc.RecordFailure(owner=owner, failure_class=failure_class,
                                      result=result):
                    self._call("record_failure",
                               lambda: runtime.record_failure(owner, failure_class, result))
                    return None
                case cc.Maintain():
                    return self._call("maintain", runtime.maintain)
                case cc.Restart():
                    restart = getattr(runtime, "restart", None)
                    if not callable(restart):
                        raise self._fail((LEASE_REQUIREMENT,), "the runtime's restart",
                                         "a restart() method (backends/composite/protocol.py)",
                                         None, LEASE_REQUIREMENT)
                    self._call("restart", restart)
                    return None
                case cc.PassTime(seconds=seconds):
                    self.clock.advance(seconds)
                    return None
        except AdmissionRefused as refusal:
            return refusal.detail
        except ReminderRejected as rejection:
            return rejected(rejection.code)
        raise ValueError(f"not a composite command: {command!r}")

    def observe(self, requirements: tuple[str, ...] = ()) -> None:
        """The backend's snapshot must be the oracle's."""
        wanted = self.model.view()
        shown: CompositeSnapshot = self._call("snapshot", self.runtime.snapshot)
        if (wanted.executions == tuple(shown.executions) and wanted.loops == tuple(shown.loops)
                and wanted.reminders == tuple(shown.reminders)
                and wanted.breakers == tuple(shown.breakers)
                and wanted.paused_until == shown.paused_until):
            return  # all agree: no difference to name (the common case, every command)
        actual = CompositeView(tuple(shown.executions), tuple(shown.loops),
                               tuple(shown.reminders), tuple(shown.breakers),
                               shown.paused_until)
        checks: tuple[tuple[str, Any, Any, str | None], ...] = (
            ("the admission's executions (work, owner, state)", wanted.executions,
             actual.executions, None),
            ("the loops (loop, status, runs completed)", wanted.loops, actual.loops,
             LOOPS_REQUIREMENT),
            ("the reminders (reminder, status)", wanted.reminders, actual.reminders,
             REMINDERS_REQUIREMENT),
            ("the breakers (owner, state, probe)", wanted.breakers, actual.breakers,
             PROBE_REQUIREMENT),
            ("the end of the governor's pause", wanted.paused_until, actual.paused_until,
             PAUSE_REQUIREMENT),
        )
        for what, expected, shown_value, requirement in checks:
            if expected == shown_value:
                continue
            primary = requirement
            if requirement == LOOPS_REQUIREMENT:
                loop = _first_difference(expected, shown_value)
                primary = self.model.loop_requirement(loop) if loop else requirement
            if primary is None:  # executions: what the differing work is, and where
                primary = self._execution_primary(expected, shown_value, requirements)
            raise self._fail((*(r for r in (primary,) if r), *requirements), what,
                             expected, shown_value, primary)

    def _execution_primary(self, expected: tuple[tuple[str, str, str], ...],
                           actual: tuple[tuple[str, str, str], ...],
                           requirements: tuple[str, ...]) -> str | None:
        """A work one side never admitted is its kind's (a loop's run CX-001, a reminder's
        execution CX-002), whatever states differ after it. Otherwise a work in another
        state at a command where two areas meet is that meeting point's, else its
        kind's; a job's is the command's."""
        meeting = next((rid for rid in requirements if rid in MEETING_POINTS), None)
        shown = {entry[0] for entry in actual}
        wanted = {entry[0] for entry in expected}
        # A work one side never admitted explains the states that differ after it.
        missing = [entry[0] for entry in (*expected, *actual)
                   if entry[0] not in shown or entry[0] not in wanted]
        if missing:
            return self.model.kind_requirement(missing[0]) or meeting or (
                requirements[0] if requirements else None)
        work = _first_difference(expected, actual)
        if work in self.model.held_leases:
            return LEASE_REQUIREMENT  # an orphan whose lapsed lease the pause held
        kind = self.model.kind_requirement(work) if work is not None else None
        if meeting is not None:
            return meeting
        return kind or (requirements[0] if requirements else None)

    def _fail(self, requirements: tuple[str, ...], what: str, expected: object,
              actual: object, primary: str | None = None) -> Divergence:
        return super()._fail(requirements or (LOOPS_REQUIREMENT,), what, expected, actual,
                             primary)
