"""The reminders harness: each command goes to the backend's reminders runtime and to the
oracle, and everything they show must agree.

After every command both sides settle (the runtime records decided dispatches and fires
what the clock has reached), then the harness compares the command's answer, every held
reminder, how many dispatches each reminder got, and every snapshot handed out earlier.
The first difference raises `Divergence` naming the requirement IDs involved.

The delivery target is the harness's own: every dispatch the runtime makes is recorded,
and `DeliverReminder` decides how the reminder's dispatch in flight ends.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import partial
from typing import ClassVar

from jobconform.backends.faults import ProcessCrashed
from jobconform.backends.protocol import REMINDER_LABELS, REMINDERS
from jobconform.backends.reminders.protocol import (
    REMINDER_TRIGGER,
    Delivery,
    ReminderConflict,
    ReminderNotFound,
    ReminderRejected,
    ReminderRuntime,
    ReminderView,
)
from jobconform.conformance import read_ahead
from jobconform.conformance.area_harness import (
    AliasedHarness,
    check_time_step,
    profile_parameters,
    same_answer,
)
from jobconform.conformance.harness import AdapterError
from jobconform.conformance.sinks import NOT_READ, DispatchStates
from jobconform.conformance.utc import off_utc_field
from jobconform.conformance.watchdog import guarded
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.reminders.commands import (
    CancelReminder,
    CreateReminder,
    DeliverReminder,
    GetReminder,
    ListReminders,
    ListRemindersByDefault,
    ReminderCommand,
    ReminderStoreFault,
    RestartReminders,
    SetAutonomy,
    SweepReminders,
    describe_reminder_command,
)
from jobconform.reference.reminders.oracle import (
    CONFLICT,
    CREATED,
    NOT_FOUND,
    REJECTIONS,
    REPLAYED,
    DeliveryOutcome,
    ReminderConfig,
    ReminderOracle,
    ReminderState,
    ReminderStatus,
    illegal_combination,
    rejected,
)
from jobconform.spec import Profile

MAX_KEY_LENGTH = 255  # the reminders table's key column
CONFIG_PARAMETERS = ("min_delay_seconds", "max_delay_seconds", "max_message_chars",
                     "max_pending", "max_per_day", "max_attempts", "retry_delay_seconds",
                     "retention_days", "create_rate_limit", "create_window_seconds")
WHOLE_NUMBER_PARAMETERS = ("max_message_chars", "max_pending", "max_per_day", "max_attempts",
                           "create_rate_limit")
OUTCOME_REQUIREMENTS = {
    DeliveryOutcome.LANDS: ("RM-008",),
    DeliveryOutcome.FAILS: ("RM-009",),
    DeliveryOutcome.UNKNOWN: ("RM-010",),
}
FIELD_REQUIREMENTS = {
    "status": ("RM-006",),
    "message": ("RM-001",),
    "created_at": ("RM-001",),
    "fire_at": ("RM-001",),
    "due_at": ("RM-007", "RM-009"),
    "attempts": ("RM-007", "RM-009"),
    "fired_at": ("RM-008", "RM-010"),
}


def key_requirement(command: CreateReminder) -> tuple[str]:
    """The rule a creation's de-duplication follows: the key it gives (RM-017), or the
    key derived for it when it gives none (RM-018)."""
    return ("RM-017",) if command.idempotency_key is not None else ("RM-018",)


def status_requirements(expected: object, actual: object) -> tuple[str, ...]:
    """The rules of the transitions that could explain a reminder shown in the wrong state:
    pending against firing is the firing rule, whatever command came before."""
    pair = {expected, actual}
    named = []
    if "firing" in pair:
        named.append("RM-007")
    if "fired" in pair:
        named += ["RM-008", "RM-010"]
    if "failed" in pair:
        named.append("RM-009")
    if "cancelled" in pair:
        named.append("RM-011")
    return tuple(named)


def config_for(profile: Profile, **overrides: float) -> ReminderConfig:
    """The area's parameters from the profile, with a check's own values on top.

    Raises:
        ValueError: an unknown parameter name or a value out of range.
        SpecError: the profile sets no defaults for the area.
    """
    values = profile_parameters(profile, REMINDERS, CONFIG_PARAMETERS, overrides)
    for name in WHOLE_NUMBER_PARAMETERS:
        value = values[name]
        if isinstance(value, float) and value.is_integer():
            values[name] = int(value)
    return ReminderConfig(**values)


@dataclass(frozen=True)
class ReminderRecord:
    """A reminder reduced to what the spec fixes (ids are compared through aliases)."""

    status: object
    message: object
    created_at: object
    fire_at: object
    due_at: object
    attempts: object
    fired_at: object


_MISSING = "<missing>"


def freeze(view: ReminderView) -> ReminderRecord:
    values = [getattr(view, name, _MISSING) for name in FIELD_REQUIREMENTS]
    return ReminderRecord(*values)


# The types of field values that cannot change in place (see `still_shows`).
_IMMUTABLE = frozenset({str, int, float, bool, type(None), datetime})
INSTANT_FIELDS = ("created_at", "fire_at", "due_at", "fired_at")


def still_shows(view: ReminderView, record: ReminderRecord) -> bool:
    """Whether `view` shows the very objects `record` was frozen from, each of a type that
    cannot change in place (instants with a fixed offset or none): then `freeze(view)` is
    `record` again. False means only: freeze it and compare."""
    for name in FIELD_REQUIREMENTS:
        now = getattr(view, name, _MISSING)
        if now is not getattr(record, name) or type(now) not in _IMMUTABLE:
            return False
        if isinstance(now, datetime) and type(now.tzinfo) not in (timezone, type(None)):
            return False
    return True


def expected_record(state: ReminderState) -> ReminderRecord:
    return ReminderRecord(state.status.value, state.message, state.created_at, state.fire_at,
                          state.due_at, state.attempts, state.fired_at)


class HarnessTarget:
    """The delivery target: records every dispatch; the harness decides how each ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.deliveries: list[Delivery] = []
        # Reads each reminder as its dispatch is made, where the runtime allows it.
        self.states = DispatchStates(read=None)

    def dispatch(self, reminder_id: str, message: str,
                 triggered_by: str | None = None) -> Delivery:
        delivery = Delivery(reminder_id, message, triggered_by)
        with self._lock:
            self.deliveries.append(delivery)
        self.states.dispatched(reminder_id)
        return delivery

    def made(self) -> list[Delivery]:
        with self._lock:
            return list(self.deliveries)


@dataclass
class ReminderHarness(AliasedHarness[ReminderCommand]):
    """Differential execution of reminder commands on one backend and the oracle.

    Args:
        overrides: parameters of this check replacing the profile's (see
            CONFIG_PARAMETERS; the other arguments, and what opening raises, are every
            area harness's: see `AreaHarness`).
    """

    AREA: ClassVar[str] = REMINDERS
    PASSES_THROUGH: ClassVar[tuple[type[Exception], ...]] = (
        ReminderRejected, ReminderNotFound, ReminderConflict)

    overrides: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._require_area("its reminders cannot be checked")
        self.config = config_for(self.profile, **self.overrides)
        self.oracle = ReminderOracle(self.config)
        self.target = HarnessTarget()
        self.held: dict[str, tuple[ReminderView, ReminderRecord]] = {}
        # Per reminder, the last record found in UTC, and the oracle's state with its record
        # (frozen values, replaced on a change): what did not change is not worked out again.
        self._in_utc: dict[str, ReminderRecord] = {}
        self._expected: dict[str, tuple[ReminderState, ReminderRecord]] = {}
        self._live_from = 0  # deliveries before this index were lost in a restart
        # Reminders not yet final when the runtime last restarted: a later divergence of
        # one of them also implicates what the restart kept or lost (RM-012).
        self.carried: set[str] = set()
        # The reminders a faulted command wrote: where their fields are impossible, or a
        # dispatch their failed write guarded was made, the fault's rule is the one broken.
        self.fault_writes: set[str] = set()
        # Each dispatch labelled as a reminder's (RM-021): read only where claimed.
        self.labels_claimed = REMINDER_LABELS in self.backend.capabilities
        opener = self._opener("clock, config, target")
        self.runtime: ReminderRuntime = self._open(
            lambda: opener(self.clock, self.config, self.target))
        self._read_at_dispatch()

    def _read_at_dispatch(self) -> None:
        """Let the target read each reminder as it is dispatched, where the runtime says
        it may (ReadableDuringDispatch); otherwise dispatches are only counted."""
        runtime = self.runtime
        readable = getattr(runtime, "readable_during_dispatch", False) is True
        self.target.states.read = (lambda reminder_id: runtime.get(reminder_id)) if (
            readable) else None

    # -- the one operation ---------------------------------------------------------------

    def _run(self, command: ReminderCommand) -> object:
        expected, requirements = self._expect(command)
        self.exercised.update(requirements)
        with guarded(self.safety_timeout, partial(describe_reminder_command, command),
                     self.hang_scope):
            actual = self._apply(command)  # AdvanceTime moves the clock here
            self.fault_writes = set()
            if isinstance(command, ReminderStoreFault) and command.fault.kind is FaultKind.CRASH:
                # What landed before the crash stands, and nothing else (RM-014); then the
                # runtime restarts, and what it does at boot is the restart's rule (RM-012).
                self.oracle.settle(self.clock.now(), crash_at=command.fault.write)
                self._check_crash_left(requirements)
                self._restart_after_crash()
                self.oracle.restart(self.clock.now())
            written = self.oracle.settle(self.clock.now())
            if isinstance(command, ReminderStoreFault) and command.fault.kind is FaultKind.FAIL:
                self.fault_writes = set(written)
            self._compare(command, expected, actual, requirements)
        return actual

    def run_oracle(self, command: ReminderCommand) -> object:
        """The command applied to the oracle alone, the clock moved as `_apply` moves it:
        the oracle's answer (the cost floor, see machine_runner.oracle_alone)."""
        self._check_command(command)
        self.commands.append(command)
        expected, _ = self._expect(command)
        inner = command.command if isinstance(command, ReminderStoreFault) else command
        if isinstance(inner, AdvanceTime | RestartReminders):
            self.clock.advance(inner.seconds if isinstance(inner, AdvanceTime)
                               else inner.down_seconds)
        if isinstance(command, ReminderStoreFault) and command.fault.kind is FaultKind.CRASH:
            self.oracle.settle(self.clock.now(), crash_at=command.fault.write)
            self.oracle.restart(self.clock.now())
        self.oracle.settle(self.clock.now())
        return expected

    def _adopt(self) -> None:
        """After a listed deviation the oracle takes each reminder as the backend lists
        it (one it cannot read in the spec's terms is left as the oracle has it), the
        dispatches it made, and every reminder read earlier as it is now. One it no longer
        lists at all (a retention sweep deleted it) leaves the oracle too."""
        listed: set[str] = set()
        for view in self._call("list_reminders", lambda: self.runtime.list_reminders(None)):
            alias = self.aliases.get(view.reminder_id)
            if alias is None or alias not in self.oracle.reminders:
                continue
            listed.add(alias)
            try:
                status = ReminderStatus(view.status)
            except ValueError:
                continue
            self.oracle.reminders[alias] = ReminderState(
                view.message, status, view.created_at, view.fire_at, view.due_at,
                view.attempts, view.fired_at, self.oracle.reminders[alias].idempotency_key,
                self.oracle.reminders[alias].derived_key)
        for alias in [alias for alias in self.oracle.reminders if alias not in listed]:
            del self.oracle.reminders[alias]
        made = Counter(self.aliases.get(d.reminder_id, d.reminder_id)
                       for d in self.target.made())
        self.oracle.dispatches = {alias: made.get(alias, 0) for alias in
                                  self.oracle.dispatches.keys() | made.keys()}
        self.held = {key: (view, freeze(view)) for key, (view, _) in self.held.items()}

    def _to_close(self) -> list[ReminderRuntime]:
        return [self.runtime]

    def _check_command(self, command: ReminderCommand) -> None:
        if isinstance(command, ReminderStoreFault):
            self._require_store_faults("RM-014")
            self._check_command(command.command)
            return
        if isinstance(command, CreateReminder):
            self._check_new_alias("reminder", command.reminder)
        if isinstance(command, CreateReminder) and command.idempotency_key is not None and (
                not 0 < len(command.idempotency_key) <= MAX_KEY_LENGTH):
            raise ValueError(f"an idempotency key has 1 to {MAX_KEY_LENGTH} characters, not"
                             f" {len(command.idempotency_key)}")
        check_time_step(command.seconds if isinstance(command, AdvanceTime) else
                        command.down_seconds if isinstance(command, RestartReminders) else 0.0)

    # -- the oracle's side ---------------------------------------------------------------

    def _expect(self, command: ReminderCommand) -> tuple[object, tuple[str, ...]]:
        now = self.clock.now()
        oracle = self.oracle
        match command:
            case CreateReminder():
                answer = oracle.create(command.reminder, command.message, command.fire_at,
                                       command.delay_seconds, now, command.idempotency_key)
                # Given a key or not, the creation rests on the rule of that key (RM-017,
                # RM-018): it found no live reminder, or it answers the one it found.
                keyed = key_requirement(command)
                if answer == rejected("rate_limited"):  # before any other rule (RM-020)
                    return answer, ("RM-020",)
                if answer.startswith(f"{REPLAYED}:"):
                    return answer, keyed
                if answer == CREATED:  # acceptance rests on every rule of creation
                    return answer, ("RM-001", "RM-002", "RM-003", "RM-004", "RM-005", "RM-006",
                                    *keyed, "RM-020")
                return answer, ("RM-006", REJECTIONS[answer.split(":", 1)[1]], *keyed)
            case CancelReminder():
                return oracle.cancel(command.reminder), ("RM-011",)
            case DeliverReminder():
                oracle.decide(command.reminder, command.outcome)
                return None, ("RM-006", *OUTCOME_REQUIREMENTS[command.outcome])
            case RestartReminders():
                self.carried |= {alias for alias, r in oracle.reminders.items()
                                 if r.status.value in ("pending", "firing")}
                oracle.restart(now + timedelta(seconds=command.down_seconds))
                return None, ("RM-012", *self._held())
            case SetAutonomy():
                oracle.set_autonomy(command.enabled)
                return None, ("RM-015",)
            case SweepReminders():
                return oracle.sweep(now), ("RM-016",)
            case GetReminder():
                state = oracle.reminders.get(command.reminder)
                return (None if state is None else expected_record(state)), ("RM-013",)
            case ListReminders():
                return oracle.list(command.status), ("RM-013",)
            case ListRemindersByDefault():
                return oracle.list(ReminderStatus.PENDING), ("RM-019", "RM-013")
            case AdvanceTime():
                return None, ("RM-007", *self._held())
            case ReminderStoreFault():
                inner_answer, inner = self._expect(command.command)
                if command.fault.kind is FaultKind.FAIL:
                    return inner_answer, (*inner, "RM-014")
                self.carried |= {alias for alias, r in oracle.reminders.items()
                                 if r.status.value in ("pending", "firing")}
                return inner_answer, (*inner, "RM-012", "RM-014")
        raise ValueError(f"not a reminders command: {command!r}")

    def _held(self) -> tuple[str, ...]:
        """RM-015 while the agent's autonomy is off: a dispatch then breaks the hold."""
        return () if self.oracle.autonomy else ("RM-015",)

    # -- the backend's side --------------------------------------------------------------

    def _apply(self, command: ReminderCommand) -> object:
        runtime = self.runtime
        match command:
            case CreateReminder():
                return self._create(command)
            case CancelReminder():
                reminder_id = self._id(command.reminder)
                try:
                    return self._call("cancel", lambda: runtime.cancel(reminder_id))
                except ReminderNotFound:
                    return NOT_FOUND
                except ReminderConflict as conflict:
                    return f"{CONFLICT}:{conflict.status}"
            case DeliverReminder():
                delivery = self._in_flight(command.reminder)
                if delivery is not None:
                    delivery.decide(command.outcome)
            case RestartReminders():
                self._call("crash", runtime.crash)
                self._live_from = len(self.target.made())
                self.clock.advance(command.down_seconds)  # nothing runs meanwhile
                # A dispatch during the boot comes before the harness holds the new
                # runtime: it is counted, not read.
                self.target.states.read = None
                self.runtime = self._call("reopen", runtime.reopen)
                self._read_at_dispatch()
            case SetAutonomy():
                self._call("set_autonomy", lambda: runtime.set_autonomy(command.enabled))
            case SweepReminders():
                return self._call("sweep", runtime.sweep)
            case GetReminder():
                reminder_id = self._id(command.reminder)
                view = self._call("get", lambda: runtime.get(reminder_id))
                if view is None:
                    return None
                record = freeze(view)
                self.held[f"get:{command.reminder}"] = (view, record)
                return record
            case ListReminders():
                status = None if command.status is None else command.status.value
                views = self._call("list_reminders", lambda: runtime.list_reminders(status))
                return [self.aliases.get(view.reminder_id, view.reminder_id) for view in views]
            case ListRemindersByDefault():
                # No argument at all: what the runtime lists by itself (RM-019).
                views = self._call("list_reminders", lambda: runtime.list_reminders())
                return [self.aliases.get(view.reminder_id, view.reminder_id) for view in views]
            case AdvanceTime():
                self.clock.advance(command.seconds)
            case ReminderStoreFault():
                self._under_fault(command.fault, command.command)
        return None

    def _under_fault(self, fault: StoreFault, command: AdvanceTime | DeliverReminder) -> None:
        """Run `command` with `fault` armed until the runtime has settled, or died at the
        planned write (RM-014); `run` restarts a crashed runtime once it has read what the
        crash left."""
        inject = self._faulted(self.runtime).inject_store_fault
        self._call("inject_store_fault", lambda: inject(fault))
        try:
            self._apply(command)
            try:
                self._call("settle", self.runtime.settle)
            except ProcessCrashed:
                if fault.kind is not FaultKind.CRASH:
                    raise AdapterError(
                        f"adapter {self.backend.name!r} crashed under a planned write"
                        f" failure ({fault.describe()})") from None
        finally:
            self._call("inject_store_fault", lambda: inject(None))

    def _restart_after_crash(self) -> None:
        self._call("crash", self.runtime.crash)
        self._live_from = len(self.target.made())
        self.runtime = self._call("reopen", self.runtime.reopen)

    def _check_crash_left(self, requirements: tuple[str, ...]) -> None:
        """Before the restart, the store holds exactly what the writes before the crash
        made, every reminder legal, and no dispatch came after the crash (RM-014). Read
        before `crash()`: what the dead process left, not what a new one recovers."""
        blamed = (*requirements, "RM-014")
        views = list(self._call("list_reminders", lambda: self.runtime.list_reminders(None)))
        aliases = self._listed(v.reminder_id for v in views)
        self._check_legal(aliases, views, requirements, set(aliases))
        if aliases != self.oracle.list():
            raise self._fail(blamed, "the held reminders the crash left", self.oracle.list(),
                             aliases, "RM-014")
        for alias, view in zip(aliases, views, strict=True):
            wanted = expected_record(self.oracle.reminders[alias])
            if freeze(view) != wanted:
                raise self._fail(blamed, f"reminder {alias!r} as the crash left it", wanted,
                                 freeze(view), "RM-014")
        # A dispatch made before its reminder was marked firing is one the crash meets
        # out of order: the dispatch rule's (RM-007), with or without the crash (issue 33).
        self._check_states_seen(requirements)
        self._compare_dispatches(blamed, "dispatches made before the crash", "RM-014")

    def _create(self, command: CreateReminder) -> str:
        c = command
        # The key is passed only when the check gives one, so a runtime written before
        # RM-017 still takes every other creation.
        keyed = {} if c.idempotency_key is None else {"idempotency_key": c.idempotency_key}
        try:
            reminder_id = self._call("create", lambda: self.runtime.create(
                c.message, fire_at=c.fire_at, delay_seconds=c.delay_seconds, **keyed))
        except ReminderRejected as rejection:
            return rejected(rejection.code)
        if reminder_id in self.aliases:
            # The reminder the key names, given (RM-017) or derived (RM-018); the oracle
            # says whether there is one.
            return f"{REPLAYED}:{self.aliases[reminder_id]}"
        self._remember(c.reminder, reminder_id)
        return CREATED

    def _in_flight(self, alias: str) -> Delivery | None:
        """The reminder's latest dispatch since the last restart, if still undecided."""
        reminder_id = self.ids.get(alias)
        live = self.target.made()[self._live_from:]
        for delivery in reversed(live):
            if delivery.reminder_id == reminder_id:
                return None if delivery.decided() else delivery
        return None

    # -- comparing -----------------------------------------------------------------------

    def _compare_answer(self, command: ReminderCommand, expected: object, actual: object,
                        requirements: tuple[str, ...]) -> None:
        if same_answer(expected, actual):
            return
        blamed = requirements
        primary = None
        # A refusal on one side: the rule of that refusal's code is what was broken; the
        # oracle's own refusal first, as the rule the runtime did not apply.
        refused = next((answer for answer in (expected, actual)
                        if isinstance(answer, str) and answer.startswith("rejected:")), None)
        codes = [answer.split(":", 1)[1] for answer in (expected, actual)
                 if isinstance(answer, str) and answer.startswith("rejected:")]
        if len(codes) == 2 and all(code in REJECTIONS for code in codes):
            # Both refused, for different reasons: the check that comes first was misjudged
            # (a runtime refusing for the pending cap where the oracle's count is under it
            # broke the cap, not the daily limit checked after it).
            refused = "rejected:" + min(codes, key=list(REJECTIONS).index)
        if any(isinstance(answer, str) and answer.startswith(f"{REPLAYED}:")
               for answer in (expected, actual)) and isinstance(command, CreateReminder):
            # One side answered a reminder the key names: the rule of the key given, or of
            # the key derived for a creation without one, decided it.
            (primary,) = key_requirement(command)
            blamed = (primary, *(r for r in blamed if r != primary))
        elif refused is not None:
            primary = REJECTIONS.get(refused.split(":", 1)[1], "RM-006")
            blamed += (primary,)
        raise self._fail(blamed, f"the answer to {describe_reminder_command(command)}",
                         expected, actual, primary)

    def observe(self, requirements: tuple[str, ...] = ()) -> None:
        """Settle the runtime, then compare every reminder, the dispatches and the
        snapshots handed out earlier with the oracle."""
        read_ahead.plan_reads([(self.runtime, "settle", {}),
                               (self.runtime, "list_reminders", {"status": None})])
        self._call("settle", self.runtime.settle)
        for key, (view, record) in self.held.items():
            if still_shows(view, record):
                continue
            now = freeze(view)
            if now != record:
                raise self._fail(("RM-013",), f"a reminder read earlier ({key}) changed after"
                                 " it was returned", record, now)
        views = list(self._call("list_reminders", lambda: self.runtime.list_reminders(None)))
        actual_aliases = self._listed(v.reminder_id for v in views)
        if self.fault_writes:
            self._check_legal(actual_aliases, views, requirements, self.fault_writes)
        expected_aliases = self.oracle.list()
        if actual_aliases != expected_aliases:
            raise self._fail((*requirements, "RM-013"), "the held reminders, in order",
                             expected_aliases, actual_aliases)
        for alias, view in zip(actual_aliases, views, strict=True):
            wanted = self._expected_record(alias)
            actual = freeze(view)
            if actual != wanted:  # the fields one by one, to name the first that differs
                carried = ("RM-012",) if alias in self.carried else ()
                for name, field_requirements in FIELD_REQUIREMENTS.items():
                    if getattr(actual, name) != getattr(wanted, name):
                        primary = None
                        if name == "status":
                            # The transition that explains the wrong state, the one the
                            # command also names if any (an unknown outcome: RM-010).
                            transitions = status_requirements(wanted.status, actual.status)
                            field_requirements += transitions
                            primary = next((rid for rid in requirements if rid in transitions),
                                           transitions[0] if transitions else None)
                            restarted = self._restarted()
                            early = (wanted.status, actual.status) == ("pending", "firing")
                            if carried and (restarted or (primary == "RM-007" and not early)):
                                # A reminder that outlived a restart: what the restart kept of
                                # it, or the timer it had to arm again, is the restart's rule.
                                # One fired before its time is the dispatch's (RM-007), as any
                                # reminder would be (issue 33).
                                primary = "RM-012"
                            elif self.commands and isinstance(self.commands[-1], RestartReminders):
                                # A final reminder the restart changed: the restart's own rule
                                # (final reminders stay final), the command before the field.
                                primary = "RM-012"
                            if ("RM-015" in requirements
                                    and {wanted.status, actual.status} == {"pending", "firing"}):
                                field_requirements += ("RM-015",)
                                if actual.status == "firing" or not carried:
                                    # Dispatched while held, or not dispatched on resuming: the
                                    # hold's rule. A reminder that outlived a restart and is not
                                    # dispatched keeps the restart's rule (its timer was lost).
                                    primary = "RM-015"
                        raise self._fail(requirements + field_requirements + carried,
                                         f"reminder {alias!r} {name}", getattr(wanted, name),
                                         getattr(actual, name), primary)
            self._check_utc(alias, actual)
            self.held[f"list:{alias}"] = (view, actual)
        self._check_dispatch_states(requirements)

    def _check_dispatch_states(self, requirements: tuple[str, ...]) -> None:
        """Each read dispatch found its reminder firing with that dispatch's attempt
        counted already (RM-007): the n-th dispatch of a reminder sees attempts n."""
        self._check_states_seen(requirements)
        self._compare_dispatches(requirements, "dispatches made, by reminder")
        self._check_labels(requirements)

    def _check_states_seen(self, requirements: tuple[str, ...]) -> None:
        """The status and attempts each read dispatch found its reminder in (RM-007)."""
        made: Counter[str] = Counter()
        for reminder_id, status, attempts in self.target.states.seen():
            alias = self.aliases.get(reminder_id, reminder_id)
            made[alias] += 1
            if status is NOT_READ:
                continue
            wanted = (ReminderStatus.FIRING.value, made[alias])
            if (status, attempts) != wanted:
                carried = ("RM-012",) if alias in self.carried else ()
                raise self._fail((*requirements, "RM-007", *carried),
                                 f"reminder {alias!r} (status, attempts) as its dispatch"
                                 f" number {made[alias]} was made", wanted,
                                 (status, attempts), "RM-007")

    def _check_labels(self, requirements: tuple[str, ...]) -> None:
        """Every dispatch says a reminder triggered it (RM-021); it names its reminder by
        the id it carries, which the dispatch counts compare (RM-007)."""
        if not self.labels_claimed:
            return
        made = self.target.made()
        for number, delivery in enumerate(made, 1):
            if delivery.triggered_by != REMINDER_TRIGGER:
                alias = self.aliases.get(delivery.reminder_id, delivery.reminder_id)
                raise self._fail((*requirements, "RM-021"), f"dispatch number {number}"
                                 f" (of reminder {alias!r}): what triggered its execution",
                                 REMINDER_TRIGGER, delivery.triggered_by, "RM-021")
        if made:
            self.exercised.add("RM-021")

    def _compare_dispatches(self, requirements: tuple[str, ...], what: str,
                            primary: str | None = None) -> None:
        made = Counter(self.aliases.get(d.reminder_id, d.reminder_id)
                       for d in self.target.made())
        expected_dispatches = {alias: n for alias, n in self.oracle.dispatches.items() if n}
        if dict(made) == expected_dispatches:
            return
        differing = {a for a in made.keys() | expected_dispatches.keys()
                     if made.get(a) != expected_dispatches.get(a)}
        carried = ("RM-012",) if differing & self.carried else ()
        if primary is None:
            primary = (carried or ("RM-007",))[0]
            if any(made.get(alias, 0) > expected_dispatches.get(alias, 0)
                   for alias in differing & self.fault_writes):
                primary = "RM-014"  # a dispatch guarded by a failed write was made anyway
        raise self._fail((*requirements, "RM-007", *carried), what, expected_dispatches,
                         dict(made), primary)

    def _restarted(self) -> bool:
        last = self.commands[-1] if self.commands else None
        return isinstance(last, RestartReminders) or (
            isinstance(last, ReminderStoreFault) and last.fault.kind is FaultKind.CRASH)

    def _check_legal(self, aliases: list[str], views: list[ReminderView],
                     requirements: tuple[str, ...], among: set[str]) -> None:
        """After a store fault, every reminder `among` those it touched must have fields
        possible together: a write torn in two leaves them impossible (RM-014)."""
        for alias, view in zip(aliases, views, strict=True):
            if alias not in among:
                continue
            record = freeze(view)
            problem = illegal_combination(str(record.status), record.due_at, record.attempts,
                                          record.fired_at)
            if problem is not None:
                raise self._fail((*requirements, "RM-006", "RM-014"),
                                 f"reminder {alias!r} after the store fault: {problem}",
                                 "a legal reminder", record, "RM-014")

    def _expected_record(self, alias: str) -> ReminderRecord:
        """The oracle's record of `alias`, built again only when its state changed."""
        state = self.oracle.reminders[alias]
        known = self._expected.get(alias)
        if known is not None and known[0] is state:
            return known[1]
        record = expected_record(state)
        self._expected[alias] = (state, record)
        return record

    def _check_utc(self, alias: str, record: ReminderRecord) -> None:
        checked = self._in_utc.get(alias)
        if checked is not None and (
                record.created_at is checked.created_at and record.fire_at is checked.fire_at
                and record.due_at is checked.due_at and record.fired_at is checked.fired_at):
            return  # the very instants found in UTC before
        off = off_utc_field(record, INSTANT_FIELDS)
        if off is not None:
            name, value = off
            raise self._fail(("RM-001",), f"reminder {alias!r} {name} must be a"
                             " timezone-aware UTC datetime", "tz-aware UTC", value)
        self._in_utc[alias] = record
