"""The breaker area's harness: each command goes to the backend's breaker and to the oracle.

A check runs two workers on one store (the runtime the backend opened and its `peer()`),
as two worker processes would share one breaker. After every command the harness reads
every target the check has named from both workers, their queues and failed work, and
the count of logged store outages, and compares all of it with `BreakerModel`. The first
difference raises `Divergence`, naming the requirements the command touched.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, ClassVar, cast

from jobconform.backends.breaker.protocol import BREAKER, BreakerRuntime
from jobconform.backends.protocol import BREAKER_SEAMS
from jobconform.conformance import read_ahead
from jobconform.conformance.area_harness import (
    PairedHarness,
    all_profile_parameters,
    check_time_step,
)
from jobconform.conformance.harness import AdapterError
from jobconform.conformance.utc import WANTED, describe_offset, is_off_utc
from jobconform.reference.breaker import commands as bc
from jobconform.reference.breaker.classify import RawEnd, classify_end, killed, report_end
from jobconform.reference.breaker.oracle import (
    Admission,
    BreakerModel,
    BreakerSettings,
    BreakerState,
    BreakerView,
    CallOutcome,
    TargetBreaker,
    live_probe,
    state_at,
)
from jobconform.reference.commands import Command, describe
from jobconform.spec import Profile

WORKERS = PairedHarness.WORKERS
OUTCOMES = tuple(outcome.value for outcome in CallOutcome)


def breaker_settings(profile: Profile, **overrides: Any) -> BreakerSettings:
    """The profile's breaker parameters, with any overrides (e.g. failure_threshold=2).

    Raises:
        SpecError: the profile has no breaker parameters.
        ValueError: a parameter is out of range or unknown.
    """
    return BreakerSettings.from_parameters(all_profile_parameters(profile, BREAKER, overrides))


def raw_end(command: bc.CallEndsRaw | bc.EndReported) -> RawEnd:
    return RawEnd(command.signal, command.exit_code, command.output, command.error_text)


def as_report(command: bc.CallEndsRaw) -> bc.Report:
    """The report of the failure under the class the spec gives the raw end."""
    return bc.Report(command.target, command.call, "failure",
                     classify_end(raw_end(command)), command.worker)


def report_primary(command: bc.EndReported, expected: object, answer: object) -> str:
    """The rule of the report's first differing field: its class (CB-016 for a kill,
    CB-017 otherwise), the signal named (CB-018), a silent failure's causes (CB-019)."""
    wanted = expected if isinstance(expected, dict) else {}
    shown = answer if isinstance(answer, dict) else {}
    if wanted.get("failure_class") != shown.get("failure_class"):
        return "CB-016" if killed(raw_end(command)) else "CB-017"
    if wanted.get("signal") != shown.get("signal"):
        return "CB-018"
    return "CB-019"


@dataclass
class BreakerHarness(PairedHarness[bc.BreakerCommand]):
    """Differential execution of breaker commands on a backend and the oracle.

    Args:
        settings: the breaker parameters; the profile's by default (the other arguments
            are every area harness's, see `AreaHarness`).
    """

    AREA: ClassVar[str] = BREAKER

    settings: BreakerSettings | None = None

    def __post_init__(self) -> None:
        self._require_area("breaker checks cannot run on it")
        opener = self._opener("clock, settings")
        if self.settings is None:
            self.settings = breaker_settings(self.profile)
        # The backstop sweep, missed heartbeats and lost drains (CB-014, CB-015) are sent
        # only to a backend claiming the seams; any other need not have those methods.
        self.claims_seams = BREAKER_SEAMS in self.backend.capabilities
        self.model = BreakerModel(self.settings)
        self.targets: list[str] = []
        settings = self.settings
        self.workers: list[BreakerRuntime] = self._open_with_peer(
            lambda: opener(self.clock, settings))

    # -- the one operation -------------------------------------------------------------

    def _note(self, command: bc.BreakerCommand) -> None:
        """Every target a command names is read after every later command."""
        target = getattr(command, "target", None)
        if isinstance(target, str) and target not in self.targets:
            self.targets.append(target)

    def _observe_after(self, command: bc.BreakerCommand,
                       requirements: tuple[str, ...]) -> None:
        self.observe(requirements, command)

    def _compare_answer(self, command: bc.BreakerCommand, requirements: tuple[str, ...],
                        expected: object, answer: object) -> None:
        if isinstance(command, bc.EndReported) and answer != expected:
            raise self._fail(requirements, f"the answer to {self._describe(command)}",
                             expected, answer, report_primary(command, expected, answer))
        if answer != expected:
            # More than one probe admitted at once breaks CB-007, whatever admitted the
            # first of them (a lapsed lease included).
            probes = answer.get("probe", 0) if isinstance(answer, dict) else 0
            raise self._fail((*requirements, "CB-007") if probes > 1 else requirements,
                             f"the answer to {self._describe(command)}", expected, answer,
                             "CB-007" if isinstance(probes, int) and probes > 1 else None)

    def _adopt(self) -> None:
        """Take what the backend shows into the oracle after a listed deviation: each
        named target's breaker as worker 0 reads it (kept where the read is unknown or
        unreadable), its queue and failed work, and the count of logged outages."""
        model, now = self.model, self.clock.now()
        lease = timedelta(seconds=model.settings.probe_lease_seconds)
        for target in self.targets:
            shown = self._readout(self.workers[0], target)
            if isinstance(shown, BreakerView):
                held = model.breaker(target)
                # A read shows no lease's end: the oracle's if the same probe holds it
                # there too, else a full lease from now (the backend shows it live).
                probe_until = (None if shown.probe is None else held.probe_until
                               if live_probe(held, now) == shown.probe else now + lease)
                model.breakers[target] = TargetBreaker(
                    shown.failures, shown.cooldown_seconds,
                    None if shown.state is BreakerState.CLOSED else shown.open_until,
                    shown.probe, probe_until)
            model.queues[target] = list(self._call(
                "queued", partial(self.workers[0].queued, target)))
            model.failed_work[target] = list(self._call(
                "failed_work", partial(self.workers[0].failed_work, target)))
        model.warnings = sum(self._call("logged_outages", worker.logged_outages)
                             for worker in self.workers)

    # -- applying ------------------------------------------------------------------------

    def _check_command(self, command: bc.BreakerCommand) -> None:
        self._check_worker(command)
        if isinstance(command, bc.Report):
            if command.outcome not in OUTCOMES:
                raise ValueError(f"outcome {command.outcome!r} is unknown; use one of"
                                 f" {', '.join(OUTCOMES)}")
            if (command.outcome == CallOutcome.FAILURE) != (command.failure_class is not None):
                raise ValueError("a failure needs a failure class and only a failure has one")
        if (isinstance(command, bc.MissedHeartbeat | bc.DrainLost | bc.BackstopSweep
                       | bc.CallEndsRaw | bc.EndReported) and not self.claims_seams):
            raise ValueError(f"backend {self.backend.name!r} does not claim {BREAKER_SEAMS};"
                             f" {self._describe(command)} cannot be checked on it")
        if isinstance(command, bc.PassTime):
            check_time_step(command.seconds)
        if isinstance(command, bc.CallsAtOnce) and len(set(command.calls)) != len(
                command.calls):
            raise ValueError(f"concurrent calls need distinct names, not {command.calls!r}")

    def _apply(self, command: bc.BreakerCommand) -> tuple[object, object]:
        """Real threads call at once, then the oracle replays them (see below); any other
        command as every paired area applies it."""
        if isinstance(command, bc.CallsAtOnce):
            return self._calls_at_once(command)
        return super()._apply(command)

    def _apply_to_backend(self, command: bc.BreakerCommand) -> object:
        """The backend's answer (None for a command that answers nothing)."""
        match command:
            case bc.SwitchBreaker(on=on):
                # The switches are deployment configuration: one worker sets them for all.
                self._call("set_global_switch", lambda: self.workers[0].set_global_switch(on))
            case bc.OptIn(target=target, on=on):
                self._call("set_opt_in", lambda: self.workers[0].set_opt_in(target, on))
            case bc.Call(target=target, call=call, worker=index):
                worker = self.workers[index]
                return self._call("admit", lambda: worker.admit(target, call))
            case bc.Report():
                report = command
                worker = self.workers[report.worker]
                self._call("record", lambda: worker.record(
                    report.target, report.call, report.outcome, report.failure_class))
            case bc.AddWork(target=target, work=work):
                return self._call("enqueue", lambda: self.workers[0].enqueue(target, work))
            case bc.ResetBreaker(target=target):
                self._call("reset", lambda: self.workers[0].reset(target))
            case bc.StoreOutage(down=down):
                self._on_every_worker("set_store_available",
                                      lambda worker: worker.set_store_available(not down))
            case bc.CallEndsRaw():
                ended = command
                worker = self.workers[ended.worker]
                return self._call("record_end", lambda: worker.record_end(
                    ended.target, ended.call, ended.signal, ended.exit_code, ended.output,
                    ended.error_text))
            case bc.EndReported():
                asked = command
                worker = self.workers[asked.worker]
                return self._call("report_end", lambda: worker.report_end(
                    asked.signal, asked.exit_code, asked.output, asked.error_text))
            case bc.MissedHeartbeat(target=target, worker=index):
                worker = self.workers[index]
                self._call("record_missed_heartbeat",
                           lambda: worker.record_missed_heartbeat(target))
            case bc.DrainLost(lost=lost):
                self._on_every_worker("set_drain_lost",
                                      lambda worker: worker.set_drain_lost(lost))
            case bc.BackstopSweep(worker=index):
                return self._call("backstop", self.workers[index].backstop)
            case bc.ReadBreaker(target=target):
                return self._readout(self.workers[0], target)
        return None

    def _apply_to_model(self, command: bc.BreakerCommand, now: datetime) -> object:
        """The oracle's answer (None for a command that answers nothing), at `now` (the
        clock before the command); time passing moves the clock, which both sides read."""
        model = self.model
        match command:
            case bc.SwitchBreaker(on=on):
                model.global_switch = on
            case bc.OptIn(target=target, on=on):
                (model.opted_in.add if on else model.opted_in.discard)(target)
            case bc.Call(target=target, call=call):
                return model.admit(target, call, now).value
            case bc.CallsAtOnce():
                return dict(sorted(Counter(model.admit(command.target, call, now).value
                                           for call in command.calls).items()))
            case bc.Report():
                model.record(command.target, command.call, CallOutcome(command.outcome),
                             command.failure_class, now)
            case bc.AddWork(target=target, work=work):
                return model.enqueue(target, work, now).value
            case bc.ResetBreaker(target=target):
                model.reset(target)
            case bc.StoreOutage(down=down):
                model.store_down = down
            case bc.CallEndsRaw():
                return model.record_end(command.target, command.call, raw_end(command), now)
            case bc.EndReported():
                return report_end(raw_end(command))
            case bc.MissedHeartbeat(target=target):
                model.missed_heartbeat(target, now)
            case bc.DrainLost(lost=lost):
                model.drain_lost = lost
            case bc.BackstopSweep():
                return model.backstop(now)
            case bc.PassTime(seconds=seconds):
                self.clock.advance(seconds)
            case bc.ReadBreaker(target=target):
                return model.read(target, now)
        return None

    def _calls_at_once(self, command: bc.CallsAtOnce) -> tuple[object, object]:
        """Real threads call at one moment; the oracle then replays them with the
        backend's probe (if any) first, since any one caller may win the race."""
        answers: dict[str, object] = {}
        errors: list[BaseException] = []
        barrier = threading.Barrier(len(command.calls))

        def caller(index: int, call: str) -> None:
            worker = self.workers[index % WORKERS]
            try:
                barrier.wait()
                answers[call] = worker.admit(command.target, call)
            except BaseException as error:  # reported below, in the harness's thread
                errors.append(error)

        threads = [threading.Thread(target=caller, args=(i, call), name=f"caller-{call}")
                   for i, call in enumerate(command.calls)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise AdapterError(f"adapter {self.backend.name!r} raised"
                               f" {type(errors[0]).__name__}: {errors[0]} during a concurrent"
                               " admit; the protocol allows no exception there")
        probes = [call for call in command.calls if answers[call] == Admission.PROBE]
        order = probes[:1] + [call for call in command.calls if call not in probes[:1]]
        now = self.clock.now()
        expected = Counter(self.model.admit(command.target, call, now).value for call in order)
        actual = Counter(str(answer) for answer in answers.values())
        return dict(sorted(actual.items())), dict(sorted(expected.items()))

    # -- comparing -----------------------------------------------------------------------

    def observe(self, requirements: tuple[str, ...] = (),
                command: bc.BreakerCommand | None = None) -> None:
        """Compare named targets on both workers, their queues and the outage log.

        A command naming a target can change only that target (time, the switches and
        the store's availability can change every target), so only it is read then.
        """
        now = self.clock.now()
        target_named = getattr(command, "target", None)
        # The worker the command went through is read first: a difference there is the
        # command's, one on the other worker only is the store's sharing (CB-013).
        acting = getattr(command, "worker", None) or 0
        order = [acting, *(index for index in range(WORKERS) if index != acting)]
        targets = [target_named] if isinstance(target_named, str) else self.targets
        with_work = isinstance(command, bc.AddWork | bc.Report | bc.MissedHeartbeat
                               | bc.BackstopSweep | bc.CallEndsRaw | None)
        read_ahead.plan_reads([
            *(call for target in targets for call in (
                *((self.workers[index], "read", {"target": target}) for index in order),
                *(((self.workers[0], "queued", {"target": target}),
                   (self.workers[0], "failed_work", {"target": target})) if with_work else ()))),
            *((worker, "logged_outages", {}) for worker in self.workers)])
        for target in targets:
            wanted = self.model.read(target, now)
            for index in order:
                actual = self._readout(self.workers[index], target)
                if actual != wanted:
                    # A read that differs on a worker other than the one the command went
                    # through: the other worker did not see it through the store.
                    shared = ("CB-013",) if index != acting else ()
                    fields = self._field_requirements(wanted, actual)
                    # A read that differs on the second worker only: the breaker is not
                    # shared through the store (CB-013). Else the differing field's rule,
                    # the one the command also names if any (a timeout counted: CB-003).
                    # An uncounted failure that moved the count or the cooldown was
                    # counted: CB-003, whatever state the breaker was in.
                    # A raw end's class was compared as its answer already, so what
                    # differs here is how that class was counted, as for its report.
                    report = (as_report(command) if isinstance(command, bc.CallEndsRaw)
                              else command)
                    uncounted = (isinstance(report, bc.Report)
                                 and report.outcome == CallOutcome.FAILURE
                                 and report.failure_class
                                 not in self.model.settings.counted_classes
                                 and bool({"CB-002", "CB-008"} & set(fields)))
                    # A missed heartbeat that moved the breaker where the oracle did not
                    # (or did not move it) is CB-015's, whatever field shows it.
                    heartbeat = isinstance(command, bc.MissedHeartbeat)
                    raise self._fail(requirements + shared + fields + (
                                         ("CB-003",) if uncounted else ()),
                                     f"worker {index}'s read of target {target!r}",
                                     wanted, actual, shared[0] if shared
                                     else "CB-015" if heartbeat
                                     else "CB-003" if uncounted
                                     else "CB-010" if fields[:1] == ("CB-010",) else next(
                                         (rid for rid in fields if rid in requirements),
                                         fields[0] if fields else None))
                open_until = actual.open_until if isinstance(actual, BreakerView) else None
                if is_off_utc(open_until):
                    # The right instant at another offset compares equal: CB-013 asks
                    # for the end of the open period in UTC.
                    assert open_until is not None
                    raise self._fail((*requirements, "CB-013"), f"worker {index}'s read of"
                                     f" target {target!r}: open_until as a UTC instant",
                                     WANTED, describe_offset(open_until), "CB-013")
            if with_work:
                self._compare_work(target, requirements, command)
        outages = sum(self._call("logged_outages", worker.logged_outages)
                      for worker in self.workers)
        if outages != self.model.warnings:
            raise self._fail((*requirements, "CB-011"), "operations logged as store outages",
                             self.model.warnings, outages, "CB-011")

    def _compare_work(self, target: str, requirements: tuple[str, ...],
                      command: bc.BreakerCommand | None = None) -> None:
        """The target's queue and failed work: only new work, outcomes and missed
        heartbeats (trips) and the backstop sweep change them, so they are read after
        those commands (and on a full observation)."""
        # The command's own rule decides a difference it made: the sweep's (CB-014), a
        # missed heartbeat's trip (CB-015); a lost drain's work is the backstop's too.
        own = ("CB-014" if isinstance(command, bc.BackstopSweep)
               else "CB-015" if isinstance(command, bc.MissedHeartbeat)
               else "CB-014" if self.model.drain_lost and isinstance(
                   command, bc.Report | bc.CallEndsRaw)
               else None)
        queued = list(self._call("queued", lambda: self.workers[0].queued(target)))
        if queued != self.model.queues.get(target, []):
            # Work still queued that a trip should have drained into failed work is CB-006.
            undrained = [work for work in queued if work in self.model.failed_work.get(
                target, []) and work not in self.model.queues.get(target, [])]
            # A trip that did not drain is CB-006's whatever tripped it; a sweep that left
            # work is the sweep's.
            primary = ("CB-014" if isinstance(command, bc.BackstopSweep)
                       else "CB-006" if undrained else own or "CB-005")
            raise self._fail((*requirements, "CB-005", "CB-006"), f"the queue of {target!r}",
                             self.model.queues.get(target, []), queued, primary)
        failed = list(self._call("failed_work", lambda: self.workers[0].failed_work(target)))
        if failed != self.model.failed_work.get(target, []):
            raise self._fail((*requirements, "CB-006"), f"the failed work of {target!r}",
                             self.model.failed_work.get(target, []), failed, own or "CB-006")

    def _readout(self, worker: BreakerRuntime, target: str) -> BreakerView | str | None:
        """The backend's read as a `BreakerView`, or a description of what was wrong."""
        readout = self._call("read", lambda: worker.read(target))
        if readout is None:
            return None
        try:
            return BreakerView(BreakerState(readout.state), readout.failures,
                               float(readout.cooldown_seconds), readout.open_until,
                               readout.probe)
        except (AttributeError, ValueError, TypeError) as error:
            return f"<unreadable breaker view: {error}>"

    @staticmethod
    def _field_requirements(wanted: BreakerView | None, actual: object) -> tuple[str, ...]:
        if wanted is None or not isinstance(actual, BreakerView):
            return ("CB-011",) if wanted is None or actual is None else ("CB-013",)
        named: list[str] = []
        if actual.failures != wanted.failures:
            named += ["CB-002", "CB-003", "CB-004"]
        if actual.cooldown_seconds != wanted.cooldown_seconds:
            named += ["CB-008", "CB-009"]
        if actual.open_until != wanted.open_until and actual.state == wanted.state:
            # The right state with its open period ending elsewhere (a store keeping the
            # trip time in whole seconds): the end decides which calls are refused, CB-005,
            # whatever command moved the breaker there.
            named += ["CB-005"]
        if actual.probe != wanted.probe:
            # A probe still held where its lease has lapsed is CB-010's case.
            lapsed = wanted.probe is None and actual.probe is not None
            named += ["CB-010", "CB-007"] if lapsed else ["CB-007", "CB-010"]
        return tuple(named)

    def _requirements(self, command: bc.BreakerCommand) -> tuple[str, ...]:
        """The requirements a command exercises, judged on the oracle before it runs."""
        model, now = self.model, self.clock.now()
        target = getattr(command, "target", None)
        if isinstance(command, bc.StoreOutage):
            return ("CB-011",)
        if isinstance(command, bc.DrainLost):
            return ("CB-014",)
        if isinstance(command, bc.BackstopSweep):
            return ("CB-014", "CB-011") if model.store_down else ("CB-014",)
        if isinstance(command, bc.SwitchBreaker | bc.OptIn):
            return ("CB-001",)
        if isinstance(command, bc.CallEndsRaw):
            # The class decides first (CB-016 for a kill, CB-017 otherwise); the failure
            # it makes then exercises what a report of that class would.
            by_class = self._requirements(as_report(command))
            return ("CB-016" if killed(raw_end(command)) else "CB-017", *by_class)
        if isinstance(command, bc.EndReported):
            # The report's class is the raw end's (CB-016, CB-017); a kill's names its
            # signal (CB-018); a failure with no output may show a silent one's causes.
            end = raw_end(command)
            return ("CB-016", "CB-018") if killed(end) else (
                ("CB-017", "CB-019") if not end.output else ("CB-017",))
        if isinstance(command, bc.PassTime | bc.ReadBreaker) or target is None:
            return ("CB-013",)
        if isinstance(command, bc.ResetBreaker):
            return ("CB-012",)
        if not model.engaged(target):
            return ("CB-001",)
        if model.store_down:
            return ("CB-011",)
        breaker = model.breaker(target)
        state = state_at(breaker, now)
        if isinstance(command, bc.AddWork):
            return ("CB-005",)
        if isinstance(command, bc.MissedHeartbeat):
            trips = (state is BreakerState.CLOSED
                     and breaker.failures + 1 >= self.model.settings.failure_threshold)
            drain = ("CB-014",) if self.model.drain_lost else ("CB-006",)
            return ("CB-015", *drain) if trips else ("CB-015",)
        if isinstance(command, bc.Call | bc.CallsAtOnce):
            if state is BreakerState.CLOSED:
                return ("CB-002",)
            if state is BreakerState.OPEN:
                return ("CB-005",)
            lapsed = breaker.probe is not None and live_probe(breaker, now) is None
            # With the probe's lease lapsed, the lease (CB-010) decides this call.
            return ("CB-010", "CB-007") if lapsed else ("CB-007",)
        assert isinstance(command, bc.Report)
        counted = (command.outcome == CallOutcome.FAILURE
                   and command.failure_class in self.model.settings.counted_classes)
        if command.outcome == CallOutcome.CANCELLED:
            by_outcome = "CB-004"
        elif command.outcome == CallOutcome.FAILURE and not counted:
            by_outcome = "CB-003"
        elif state is BreakerState.CLOSED:
            trips = counted and breaker.failures + 1 >= self.model.settings.failure_threshold
            # A counted failure exercises the class rule too (every class counts under
            # the pybreaker profile).
            by_class = ("CB-003",) if counted else ()
            # A trip whose drain is lost leaves the work to the backstop (CB-014).
            drain = ("CB-014",) if self.model.drain_lost else ("CB-006",)
            return ("CB-002", *by_class, *drain) if trips else ("CB-002", *by_class)
        else:
            by_outcome = "CB-008" if command.outcome == CallOutcome.SUCCESS else "CB-009"
        if state is not BreakerState.CLOSED and live_probe(breaker, now) != command.call:
            return ("CB-010",) if breaker.probe == command.call else ("CB-007",)
        return (by_outcome,)

    @staticmethod
    def _describe(command: bc.BreakerCommand) -> str:
        return describe(cast(Command, command))
