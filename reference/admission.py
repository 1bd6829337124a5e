"""The admission oracle: parallel caps under a fleet ceiling, backlogs, call limits, timeouts.

Commands are plain data. `AdmissionModel.apply` answers each one and records the
requirement IDs (spec/admission.yaml) that decided the answer, so a divergence can name
them. Time is a field of the model, moved only by `PassTime`; nothing here reads a clock.

Refusals are answers too: a dict whose "error" key names the refusal, with the values the
spec says it carries. An adapter raises `AdmissionRefused` subclasses carrying the same
dict (backends/admission/protocol.py), so both sides compare as data.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta
from typing import TypeAlias

from jobconform.reference.commands import written
from jobconform.reference.lifecycle import JsonValue
from jobconform.reference.log_records import DEBUG, WARNING, ExpectedLog
from jobconform.reference.numbers import is_whole_number

# Ranges the spec fixes (AD-002, AD-005, AD-012); defaults come from the profile.
CEILING_RANGE = (1, 32)
BACKLOG_DEPTH_RANGE = (1, 200)
TIMEOUT_RANGE = (60, 7200)

# Execution states.
QUEUED = "queued"
RUNNING = "running"
FINISHED = "finished"
CANCELLED = "cancelled"
EXPIRED = "expired"
BUDGET_EXHAUSTED = "budget_exhausted"
TIMED_OUT = "timed_out"  # stopped by its runtime on reaching its timeout (AD-015)
LEASE_EXPIRED = "lease_expired"  # an orphan's slot reclaimed when its lease lapsed (AD-017)
ENDED_STATES = frozenset({FINISHED, CANCELLED, EXPIRED, BUDGET_EXHAUSTED, TIMED_OUT,
                          LEASE_EXPIRED})

# A slot's lease outlasts its holder's timeout by this much (seed 002 §10.7: timeout + 5
# min), so a body that is still ending is never overbooked by a reclaim (AD-017).
LEASE_BUFFER_SECONDS = 300

# Call states.
CALL_IN_FLIGHT = "in_flight"
CALL_WAITING = "waiting"
CALL_ENDED = "ended"
CALL_WITHDRAWN = "withdrawn"  # its caller ended, or its target was deleted, while it waited
CALL_REFUSED = "budget_exhausted"

OK = "ok"


@dataclass(frozen=True)
class AdmissionConfig:
    """Defaults for one runtime; the profile's `area_parameters.admission` by default."""

    parallel_cap: int = 3
    fleet_ceiling: int = 10
    backlog_depth: int = 50
    backlog_max_age_seconds: float = 86_400.0
    call_limit: int = 8
    call_acquire_timeout_seconds: float = 3600.0  # 0 waits for ever
    execution_timeout_seconds: int = 900

    def __post_init__(self) -> None:
        for name in ("parallel_cap", "fleet_ceiling", "backlog_depth", "call_limit"):
            value = getattr(self, name)
            if not is_whole_number(value) or value < 1:
                raise ValueError(f"admission config {name} must be a whole number >= 1,"
                                 f" not {value!r}")
        for name in ("backlog_max_age_seconds", "call_acquire_timeout_seconds"):
            value = getattr(self, name)
            if not 0 <= value < float("inf"):
                raise ValueError(f"admission config {name} must be finite and >= 0,"
                                 f" not {value!r}")
        low, high = TIMEOUT_RANGE
        if not low <= self.execution_timeout_seconds <= high:
            raise ValueError(f"admission config execution_timeout_seconds must be within"
                             f" {low}..{high}, not {self.execution_timeout_seconds!r}")

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


# -- commands -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SetCeiling:
    """The admin writes the fleet ceiling through its validated route; `by` names the
    admin, recorded with the change (AD-022)."""

    value: int
    by: str | None = None


@dataclass(frozen=True)
class ReadCeilingChanges:
    """The record of the ceiling's accepted writes, oldest first (AD-022)."""


@dataclass(frozen=True)
class StoreRawCeiling:
    """A value reaches the settings store around the validation (a hand edit, an old
    release): the runtime must clamp it on read and never rewrite it (AD-003)."""

    value: int


@dataclass(frozen=True)
class ReadCeiling:
    pass


@dataclass(frozen=True)
class FailSettingsReads:
    """From now on every read of the settings store fails (`failing`), or succeeds again:
    the runtime must take the default ceiling meanwhile, not crash (AD-020)."""

    failing: bool


@dataclass(frozen=True)
class AddOwner:
    owner: str


@dataclass(frozen=True)
class SetParallelCap:
    owner: str
    value: int


@dataclass(frozen=True)
class SetBacklogDepth:
    owner: str
    value: int


@dataclass(frozen=True)
class SetExecutionTimeout:
    owner: str
    seconds: int


@dataclass(frozen=True)
class ReadOwner:
    owner: str


@dataclass(frozen=True)
class DeleteOwner:
    owner: str


@dataclass(frozen=True)
class Admit:
    """New work for an owner, known from now on by the alias `execution`.

    `timeout_seconds` is the work's own timeout, overriding its owner's (AD-016);
    `identity` is whom the work acts for, captured now and used when it starts (AD-019);
    `schedule` names the owner's schedule that dispatched the work, which then runs under
    that schedule's timeout clamped to its owner's (AD-021). A work names at most one of
    `timeout_seconds` and `schedule`.
    """

    execution: str
    owner: str
    timeout_seconds: int | None = None
    identity: str | None = None
    schedule: str | None = None
    peer: bool = False  # arrives through the second runtime over the same store (AD-027)

    def __post_init__(self) -> None:
        if self.timeout_seconds is not None and self.schedule is not None:
            raise ValueError("work names its own timeout or its schedule, not both")


@dataclass(frozen=True)
class FinishExecution:
    """The execution ends; `peer`: through the second runtime over the same store
    (AD-027), whichever runtime started it."""

    execution: str
    peer: bool = False


@dataclass(frozen=True)
class CancelExecution:
    """`peer`: through the second runtime over the same store (AD-027)."""

    execution: str
    peer: bool = False


@dataclass(frozen=True)
class Maintain:
    """One maintenance pass: expire stale backlog entries, then drain into free slots."""


@dataclass(frozen=True)
class PassTime:
    seconds: float


@dataclass(frozen=True)
class Restart:
    """The runtime's process restarts over the same store: what only the process held
    (the bodies it runs, their timeout watch) is gone; everything stored stays (AD-018)."""


@dataclass(frozen=True)
class StartCall:
    """The running `execution` calls the owner `target`; the call is known as `call`."""

    call: str
    execution: str
    target: str


@dataclass(frozen=True)
class EndCall:
    call: str


@dataclass(frozen=True)
class AddSchedule:
    owner: str
    schedule: str
    timeout_seconds: int


@dataclass(frozen=True)
class ChangeSchedule:
    owner: str
    schedule: str
    timeout_seconds: int


@dataclass(frozen=True)
class RemoveSchedule:
    owner: str
    schedule: str


@dataclass(frozen=True)
class StoreRawSchedule:
    """A schedule row reaches the store around the checks of AD-013 (written before the
    owner's timeout became its ceiling): the runtime keeps it as stored and clamps the
    work it dispatches to the owner's timeout (AD-021). The owner must exist and the
    timeout be within the schedule range (60 to 7200): the store's own constraint."""

    owner: str
    schedule: str
    timeout_seconds: int

    def __post_init__(self) -> None:
        low, high = TIMEOUT_RANGE
        if not low <= self.timeout_seconds <= high:
            raise ValueError(f"a stored schedule timeout is within {low}..{high},"
                             f" not {self.timeout_seconds!r}")


AdmissionCommand: TypeAlias = (
    SetCeiling | ReadCeilingChanges | StoreRawCeiling | ReadCeiling | FailSettingsReads
    | AddOwner | SetParallelCap | SetBacklogDepth | SetExecutionTimeout | ReadOwner
    | DeleteOwner | Admit | FinishExecution
    | CancelExecution | Maintain | PassTime | Restart | StartCall | EndCall | AddSchedule
    | ChangeSchedule | RemoveSchedule | StoreRawSchedule
)


def describe(command: AdmissionCommand) -> str:
    """The command as written; `peer` only where it is set (AD-027)."""
    return written(command, ((f.name, getattr(command, f.name)) for f in fields(command)
                             if not (f.name == "peer" and not getattr(command, f.name))))


# -- answers --------------------------------------------------------------------------------


def invalid_setting(setting: str, value: int, low: int, high: int) -> dict[str, JsonValue]:
    return {"error": "invalid_setting", "setting": setting, "value": value, "min": low,
            "max": high}


def unknown_owner(owner: str) -> dict[str, JsonValue]:
    return {"error": "unknown_owner", "owner": owner}


def backlog_full(owner: str, depth: int) -> dict[str, JsonValue]:
    return {"error": "backlog_full", "owner": owner, "backlog_depth": depth,
            "retryable": True}


def schedule_exceeds_cap(cap: int, requested: int) -> dict[str, JsonValue]:
    return {"error": "schedule_timeout_exceeds_agent_cap", "agent_cap_seconds": cap,
            "requested_seconds": requested}


def timeout_below_schedules(requested: int,
                            schedules: list[tuple[str, int]]) -> dict[str, JsonValue]:
    listed: list[JsonValue] = [{"schedule": name, "timeout_seconds": timeout}
                               for name, timeout in schedules]
    return {"error": "agent_timeout_below_active_schedules", "requested_seconds": requested,
            "max_schedule_timeout_seconds": schedules[0][1], "schedules": listed}


def simple_refusal(kind: str, subject: str) -> dict[str, JsonValue]:
    """owner_exists, unknown_schedule, schedule_exists, caller_not_running, caller_busy."""
    return {"error": kind, "subject": subject}


def clamp_ceiling(stored: int) -> int:
    low, high = CEILING_RANGE
    return max(low, min(high, stored))


# -- state ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Owner:
    parallel_cap: int
    backlog_depth: int
    execution_timeout_seconds: int
    schedules: tuple[tuple[str, int], ...] = ()  # (name, timeout) in creation order


def with_schedule(schedules: tuple[tuple[str, int], ...], name: str,
                  timeout: int) -> tuple[tuple[str, int], ...]:
    """`schedules` with `name` now at `timeout`: changed in its place if it is there,
    added last if not, so the order stays the order of creation."""
    if name not in dict(schedules):
        return (*schedules, (name, timeout))
    return tuple((held, timeout if held == name else held_timeout)
                 for held, held_timeout in schedules)


@dataclass(frozen=True)
class Execution:
    owner: str
    state: str
    arrived_at: datetime
    started_at: datetime | None = None
    ended_at: datetime | None = None
    timeout_seconds: int = 900  # fixed on arrival (AD-015, AD-016)
    identity: str | None = None  # captured on arrival (AD-019)
    overridden: bool = False  # the work named its own timeout (AD-016)
    scheduled: bool = False  # a schedule dispatched the work: its timeout clamped (AD-021)
    orphaned: bool = False  # running when its runtime restarted: no timeout watch (AD-017)

    def deadline(self) -> datetime | None:
        """When a running execution's timeout is reached."""
        if self.started_at is None:
            return None
        return self.started_at + timedelta(seconds=self.timeout_seconds)

    def lease_end(self) -> datetime | None:
        """When a running execution's slot lease lapses: its timeout plus the buffer."""
        deadline = self.deadline()
        return None if deadline is None else deadline + timedelta(
            seconds=LEASE_BUFFER_SECONDS)


@dataclass(frozen=True)
class Call:
    execution: str
    target: str
    state: str
    arrived_at: datetime


@dataclass(frozen=True)
class Expected:
    """The oracle's answer to a command and the requirements that decided it (the composite
    oracle answers so too)."""

    answer: JsonValue
    requirements: tuple[str, ...]


@dataclass
class AdmissionModel:
    """The oracle. Execution and call aliases are its ids; dicts keep arrival order."""

    config: AdmissionConfig
    now: datetime
    stored_ceiling: int = 0
    owners: dict[str, Owner] = field(default_factory=dict)
    executions: dict[str, Execution] = field(default_factory=dict)
    backlogs: dict[str, list[str]] = field(default_factory=dict)
    calls: dict[str, Call] = field(default_factory=dict)
    # While True no queued work starts: the composite area holds the drain during a
    # re-delivery governor's pause (spec/composite.yaml, CX-004); the admission area's
    # own checks never set it.
    drain_held: bool = False
    # While True no lapsed lease is reclaimed: an orphan keeps running and holds its slot.
    # The composite area holds the lease reaper during the pause too (CX-005); the
    # admission area's own checks never set it.
    lease_reclaim_held: bool = False
    settings_failing: bool = False  # reads of the settings store fail (AD-020)
    # Every accepted write of the ceiling: its value, who wrote it, when, as an ISO 8601
    # UTC instant (AD-022).
    ceiling_changes: list[JsonValue] = field(default_factory=list)
    # The log records the commands made due (AD-025, AD-026) for a runtime claiming
    # log-records, oldest first; the harness takes them after each command.
    logs: list[ExpectedLog] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stored_ceiling = self.config.fleet_ceiling

    # -- reads the harness compares after every command --------------------------------

    def ceiling_in_force(self) -> int:
        if self.settings_failing:
            return clamp_ceiling(self.config.fleet_ceiling)  # fail open (AD-020)
        return clamp_ceiling(self.stored_ceiling)

    def effective_cap(self, owner: str) -> int:
        return min(self.owners[owner].parallel_cap, self.ceiling_in_force())

    def running(self, owner: str) -> int:
        return sum(1 for e in self.executions.values()
                   if e.owner == owner and e.state == RUNNING)

    def owner_view(self, name: str) -> dict[str, JsonValue] | None:
        owner = self.owners.get(name)
        if owner is None:
            return None
        effective, running = self.effective_cap(name), self.running(name)
        return {"parallel_cap": owner.parallel_cap, "ceiling": self.ceiling_in_force(),
                "effective_cap": effective, "running": running,
                "available_slots": max(0, effective - running),
                "queued": len(self.backlogs[name]), "backlog_depth": owner.backlog_depth,
                "execution_timeout_seconds": owner.execution_timeout_seconds}

    def ceiling_view(self) -> dict[str, JsonValue]:
        """The stored ceiling (None while it cannot be read) and the one in force."""
        stored = None if self.settings_failing else self.stored_ceiling
        return {"stored": stored, "in_force": self.ceiling_in_force()}

    def calls_in_flight(self, target: str | None = None) -> int:
        return sum(1 for c in self.calls.values() if c.state == CALL_IN_FLIGHT
                   and (target is None or c.target == target))

    # -- commands ------------------------------------------------------------------------

    def apply(self, command: AdmissionCommand) -> Expected:
        """The expected answer and the requirements `command` exercises. The fleet's two
        runtimes share one store, so the oracle keeps one state: a command through the
        second runtime (`peer`) expects what it would through the first, and names
        AD-027 as well."""
        expected = self._apply(command)
        if getattr(command, "peer", False):
            return replace(expected, requirements=(*expected.requirements, "AD-027"))
        return expected

    def _apply(self, command: AdmissionCommand) -> Expected:
        match command:
            case SetCeiling():
                low, high = CEILING_RANGE
                if not low <= command.value <= high:
                    return Expected(invalid_setting("fleet_ceiling", command.value, low, high),
                                    ("AD-002",))
                self.stored_ceiling = command.value
                self.ceiling_changes.append({"value": command.value, "by": command.by,
                                             "at": self.now.isoformat()})
                return Expected(OK, ("AD-002", "AD-022"))
            case ReadCeilingChanges():
                return Expected(list(self.ceiling_changes), ("AD-022",))
            case StoreRawCeiling():
                self.stored_ceiling = command.value
                return Expected(None, ("AD-003",))
            case ReadCeiling():
                if self.settings_failing:
                    return Expected(self.ceiling_view(), ("AD-020",))
                return Expected(self.ceiling_view(), ("AD-002", "AD-003"))
            case FailSettingsReads():
                self.settings_failing = command.failing
                return Expected(None, ("AD-020",))
            case AddOwner():
                if command.owner in self.owners:
                    return Expected(simple_refusal("owner_exists", command.owner), ("AD-001",))
                self.owners[command.owner] = Owner(
                    self.config.parallel_cap, self.config.backlog_depth,
                    self.config.execution_timeout_seconds)
                self.backlogs[command.owner] = []
                return Expected(OK, ("AD-001", "AD-005", "AD-012"))
            case SetParallelCap():
                return self._set_cap(command)
            case SetBacklogDepth():
                return self._set_depth(command)
            case SetExecutionTimeout():
                return self._set_timeout(command)
            case ReadOwner():
                return Expected(self.owner_view(command.owner) or unknown_owner(command.owner),
                                ("AD-001", "AD-003", "AD-004"))
            case DeleteOwner():
                return self._delete_owner(command.owner)
            case Admit():
                return self._admit(command)
            case FinishExecution():
                return self._end(command.execution, FINISHED, ())
            case CancelExecution():
                return self._cancel(command.execution)
            case Maintain():
                return self._maintain()
            case PassTime():
                self.now += timedelta(seconds=command.seconds)
                found = self._time_out_calls() + self._time_out_executions()
                return Expected(None, tuple(dict.fromkeys(found)))
            case Restart():
                for alias, execution in self.executions.items():
                    if execution.state == RUNNING:
                        self.executions[alias] = replace(execution, orphaned=True)
                return Expected(None, ("AD-018",))
            case StartCall():
                return self._start_call(command)
            case EndCall():
                return self._end_call(command.call)
            case AddSchedule() | ChangeSchedule():
                return self._write_schedule(command)
            case RemoveSchedule():
                return self._remove_schedule(command)
            case StoreRawSchedule():
                return self._store_raw_schedule(command)
        raise ValueError(f"not an admission command: {command!r}")

    # -- settings ------------------------------------------------------------------------

    def _set_cap(self, command: SetParallelCap) -> Expected:
        if command.owner not in self.owners:
            return Expected(unknown_owner(command.owner), ("AD-001",))
        high = self.ceiling_in_force()
        if not 1 <= command.value <= high:
            return Expected(invalid_setting("parallel_cap", command.value, 1, high),
                            ("AD-001", "AD-003"))
        self.owners[command.owner] = replace(self.owners[command.owner],
                                             parallel_cap=command.value)
        return Expected(OK, ("AD-001",))

    def _set_depth(self, command: SetBacklogDepth) -> Expected:
        if command.owner not in self.owners:
            return Expected(unknown_owner(command.owner), ("AD-005",))
        low, high = BACKLOG_DEPTH_RANGE
        if not low <= command.value <= high:
            return Expected(invalid_setting("backlog_depth", command.value, low, high),
                            ("AD-005",))
        # A lower depth never drops queued work; it only refuses new arrivals sooner.
        self.owners[command.owner] = replace(self.owners[command.owner],
                                             backlog_depth=command.value)
        return Expected(OK, ("AD-005",))

    def _set_timeout(self, command: SetExecutionTimeout) -> Expected:
        if command.owner not in self.owners:
            return Expected(unknown_owner(command.owner), ("AD-012",))
        low, high = TIMEOUT_RANGE
        if not low <= command.seconds <= high:
            return Expected(invalid_setting("execution_timeout_seconds", command.seconds,
                                            low, high), ("AD-012",))
        owner = self.owners[command.owner]
        above = sorted(((name, timeout) for name, timeout in owner.schedules
                        if timeout > command.seconds), key=lambda s: (-s[1], s[0]))
        if above:
            return Expected(timeout_below_schedules(command.seconds, above), ("AD-014",))
        self.owners[command.owner] = replace(owner, execution_timeout_seconds=command.seconds)
        return Expected(OK, ("AD-012", "AD-014"))

    def _write_schedule(self, command: AddSchedule | ChangeSchedule) -> Expected:
        owner = self.owners.get(command.owner)
        if owner is None:
            return Expected(unknown_owner(command.owner), ("AD-013",))
        names = [name for name, _ in owner.schedules]
        if isinstance(command, AddSchedule) and command.schedule in names:
            return Expected(simple_refusal("schedule_exists", command.schedule), ("AD-013",))
        if isinstance(command, ChangeSchedule) and command.schedule not in names:
            return Expected(simple_refusal("unknown_schedule", command.schedule), ("AD-013",))
        low, high = TIMEOUT_RANGE
        if not low <= command.timeout_seconds <= high:
            return Expected(invalid_setting("schedule_timeout_seconds", command.timeout_seconds,
                                            low, high), ("AD-012",))
        if command.timeout_seconds > owner.execution_timeout_seconds:
            return Expected(schedule_exceeds_cap(owner.execution_timeout_seconds,
                                                 command.timeout_seconds), ("AD-013",))
        self.owners[command.owner] = replace(owner, schedules=with_schedule(
            owner.schedules, command.schedule, command.timeout_seconds))
        return Expected(OK, ("AD-013",))

    def _remove_schedule(self, command: RemoveSchedule) -> Expected:
        owner = self.owners.get(command.owner)
        if owner is None:
            return Expected(unknown_owner(command.owner), ("AD-014",))
        kept = tuple(s for s in owner.schedules if s[0] != command.schedule)
        if len(kept) == len(owner.schedules):
            return Expected(simple_refusal("unknown_schedule", command.schedule), ("AD-014",))
        self.owners[command.owner] = replace(owner, schedules=kept)
        return Expected(OK, ("AD-014",))

    def _store_raw_schedule(self, command: StoreRawSchedule) -> Expected:
        owner = self.owners.get(command.owner)
        if owner is None:
            raise ValueError(f"a stored schedule needs its owner {command.owner!r} first")
        self.owners[command.owner] = replace(owner, schedules=with_schedule(
            owner.schedules, command.schedule, command.timeout_seconds))
        return Expected(None, ("AD-021",))

    def over_cap(self, owner: str) -> bool:
        """Whether some schedule of the owner is stored above its timeout (AD-021)."""
        row = self.owners[owner]
        return any(timeout > row.execution_timeout_seconds for _, timeout in row.schedules)

    def _arrival_timeout(self, command: Admit) -> int | dict[str, JsonValue]:
        """The timeout work runs under, fixed on arrival, or the refusal of the work."""
        row = self.owners[command.owner]
        if command.schedule is not None:
            stored = dict(row.schedules).get(command.schedule)
            if stored is None:
                return simple_refusal("unknown_schedule", command.schedule)
            # Clamped at run time, never rewritten: a row from before the rule (AD-021).
            return min(stored, row.execution_timeout_seconds)
        if command.timeout_seconds is None:
            return row.execution_timeout_seconds
        if not TIMEOUT_RANGE[0] <= command.timeout_seconds <= row.execution_timeout_seconds:
            return invalid_setting("timeout_seconds", command.timeout_seconds,
                                   TIMEOUT_RANGE[0], row.execution_timeout_seconds)
        return command.timeout_seconds

    # -- admission and the backlog ---------------------------------------------------------

    def _clamping_matters(self, owner: str) -> bool:
        """Whether the ceiling in force, not the stored values, decides this owner's cap."""
        if self.settings_failing:
            return False  # the default decides (AD-020), whatever is stored
        return (self.stored_ceiling != self.ceiling_in_force()
                or self.owners[owner].parallel_cap > self.ceiling_in_force())

    def _start(self, execution: str) -> None:
        self.executions[execution] = replace(self.executions[execution], state=RUNNING,
                                             started_at=self.now)

    def _drain(self, owner: str) -> bool:
        """Start the oldest queued work into free slots; True if any started."""
        if owner not in self.owners or self.drain_held:
            return False
        backlog = self.backlogs[owner]
        started = False
        while backlog and self.running(owner) < self.effective_cap(owner):
            self._start(backlog.pop(0))
            started = True
        return started

    def _admit(self, command: Admit) -> Expected:
        if command.execution in self.executions:
            raise ValueError(f"execution alias {command.execution!r} is already used")
        owner = command.owner
        if owner not in self.owners:
            return Expected(unknown_owner(owner), ("AD-009",))
        timeout = self._arrival_timeout(command)
        if not isinstance(timeout, int):
            return Expected(timeout, ("AD-021",) if command.schedule else ("AD-016",))
        arriving = Execution(owner, QUEUED, self.now, timeout_seconds=timeout,
                             identity=command.identity,
                             overridden=command.timeout_seconds is not None,
                             scheduled=command.schedule is not None)
        requirements = ["AD-004"]
        if command.timeout_seconds is not None:
            requirements.append("AD-016")
        if command.schedule is not None:
            requirements.append("AD-021")
        if command.identity is not None:
            requirements.append("AD-019")
        if self._clamping_matters(owner):
            requirements.append("AD-003")
        if self._drain(owner):
            requirements.append("AD-006")
        backlog = self.backlogs[owner]
        if not backlog and self.running(owner) < self.effective_cap(owner):
            self.executions[command.execution] = arriving
            self._start(command.execution)
            return Expected(RUNNING, tuple(requirements))
        requirements.append("AD-005")
        depth = self.owners[owner].backlog_depth
        if len(backlog) >= depth:
            return Expected(backlog_full(owner, depth), tuple(requirements))
        self.executions[command.execution] = arriving
        backlog.append(command.execution)
        return Expected(QUEUED, tuple(requirements))

    def _end(self, alias: str, state: str, requirements: tuple[str, ...]) -> Expected:
        """End a running execution: its calls end, its slot frees, its backlog drains."""
        execution = self.executions.get(alias)
        if execution is None or execution.state != RUNNING:
            return Expected(False, requirements or ("AD-006",))
        self.executions[alias] = replace(execution, state=state, ended_at=self.now)
        for call_alias, call in self.calls.items():
            if call.execution == alias and call.state in (CALL_IN_FLIGHT, CALL_WAITING):
                ended = CALL_ENDED if call.state == CALL_IN_FLIGHT else CALL_WITHDRAWN
                self.calls[call_alias] = replace(call, state=ended)
        found = list(requirements)
        if self._drain(execution.owner):
            found.append("AD-006")
        if self._promote_calls():
            found.append("AD-010")
        return Expected(True, tuple(found) or ("AD-006",))

    def _cancel(self, alias: str) -> Expected:
        execution = self.executions.get(alias)
        if execution is not None and execution.state == QUEUED:
            self.backlogs[execution.owner].remove(alias)
            self.executions[alias] = replace(execution, state=CANCELLED, ended_at=self.now)
            return Expected(True, ("AD-007",))
        return self._end(alias, CANCELLED, ("AD-007",))

    def _maintain(self) -> Expected:
        expired = 0
        max_age = timedelta(seconds=self.config.backlog_max_age_seconds)
        for owner, backlog in self.backlogs.items():
            for alias in list(backlog):
                execution = self.executions[alias]
                if self.now - execution.arrived_at > max_age:
                    backlog.remove(alias)
                    self.executions[alias] = replace(execution, state=EXPIRED,
                                                     ended_at=self.now)
                    expired += 1
            del owner
        requirements = ["AD-008"]
        drained = [self._drain(owner) for owner in list(self.owners)]
        if any(drained):
            requirements.append("AD-006")
        if self._promote_calls():
            requirements.append("AD-010")
        return Expected(expired, tuple(requirements))

    def _delete_owner(self, owner: str) -> Expected:
        if owner not in self.owners:
            return Expected(unknown_owner(owner), ("AD-009",))
        cancelled = 0
        for alias in self.backlogs.pop(owner):
            self.executions[alias] = replace(self.executions[alias], state=CANCELLED,
                                             ended_at=self.now)
            cancelled += 1
        del self.owners[owner]
        for call_alias, call in self.calls.items():
            if call.target == owner and call.state == CALL_WAITING:
                self.calls[call_alias] = replace(call, state=CALL_WITHDRAWN)
        return Expected(cancelled, ("AD-009",))

    # -- calls ---------------------------------------------------------------------------

    def _call_fits(self, target: str) -> bool:
        return (self.calls_in_flight() < self.config.call_limit
                and self.calls_in_flight(target) < self.effective_cap(target))

    def _promote_calls(self) -> bool:
        """Start waiting calls in arrival order, each as soon as both limits allow."""
        promoted = False
        for alias, call in self.calls.items():
            if call.state == CALL_WAITING and self._call_fits(call.target):
                self.calls[alias] = replace(call, state=CALL_IN_FLIGHT)
                self._log_slot_acquired(call.target)
                promoted = True
        return promoted

    def _log_slot_acquired(self, target: str) -> None:
        self.logs.append(ExpectedLog("AD-025", DEBUG, (
            ("agent", target), ("agent_inflight", self.calls_in_flight(target)),
            ("global_inflight", self.calls_in_flight()))))

    def _start_call(self, command: StartCall) -> Expected:
        if command.call in self.calls:
            raise ValueError(f"call alias {command.call!r} is already used")
        caller = self.executions.get(command.execution)
        if caller is None or caller.state != RUNNING:
            return Expected(simple_refusal("caller_not_running", command.execution),
                            ("AD-010",))
        if any(c.execution == command.execution and c.state in (CALL_IN_FLIGHT, CALL_WAITING)
               for c in self.calls.values()):
            return Expected(simple_refusal("caller_busy", command.execution), ("AD-010",))
        if command.target not in self.owners:
            return Expected(unknown_owner(command.target), ("AD-010",))
        # Waiting calls keep their turn: a new call waits behind them whatever the limits.
        waiting = any(c.state == CALL_WAITING for c in self.calls.values())
        requirements = ("AD-010", "AD-003") if self._clamping_matters(command.target) else (
            "AD-010",)
        if not waiting and self._call_fits(command.target):
            self.calls[command.call] = Call(command.execution, command.target, CALL_IN_FLIGHT,
                                            self.now)
            self._log_slot_acquired(command.target)
            return Expected(CALL_IN_FLIGHT, requirements)
        self.calls[command.call] = Call(command.execution, command.target, CALL_WAITING,
                                        self.now)
        return Expected(CALL_WAITING, requirements)

    def _end_call(self, alias: str) -> Expected:
        call = self.calls.get(alias)
        if call is None or call.state != CALL_IN_FLIGHT:
            return Expected(False, ("AD-010",))
        self.calls[alias] = replace(call, state=CALL_ENDED)
        self._promote_calls()
        return Expected(True, ("AD-010",))

    def _time_out_calls(self) -> tuple[str, ...]:
        timeout = self.config.call_acquire_timeout_seconds
        if timeout == 0:
            return ()
        found: list[str] = []
        limit = timedelta(seconds=timeout)
        for alias, call in list(self.calls.items()):
            current = self.calls[alias]
            if current.state == CALL_WAITING and self.now - call.arrived_at >= limit:
                self.calls[alias] = replace(current, state=CALL_REFUSED)
                found.append("AD-011")
                wait_ms = (self.now - call.arrived_at) // timedelta(milliseconds=1)
                self.logs.append(ExpectedLog("AD-026", WARNING, (
                    ("agent", call.target), ("wait_ms", wait_ms))))
                # The caller's execution slot is released, so its work can be retried.
                ended = self._end(call.execution, BUDGET_EXHAUSTED, ("AD-011",))
                found += ended.requirements
        return tuple(dict.fromkeys(found))

    def _time_out_executions(self) -> tuple[str, ...]:
        """End, in arrival order, every running execution its runtime watches that has
        reached its timeout (AD-015), and every orphan whose slot lease has lapsed
        (AD-017), unless the lease reaper is held (`lease_reclaim_held`, CX-005). What one
        ending drains starts now, well short of its own timeout."""
        found: list[str] = []
        for alias in list(self.executions):
            execution = self.executions[alias]
            deadline, lease_end = execution.deadline(), execution.lease_end()
            if execution.state != RUNNING or deadline is None or lease_end is None:
                continue
            if not execution.orphaned and self.now >= deadline:
                found += self._end(alias, TIMED_OUT, ("AD-015",)).requirements
            elif self.now >= lease_end and not self.lease_reclaim_held:
                found += self._end(alias, LEASE_EXPIRED, ("AD-017",)).requirements
        return tuple(found)
