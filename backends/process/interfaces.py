"""What protocol version 2 carries: every area's adapter protocol, as typed interfaces.

Version 2 is generic. An object on either side of the pipe has an interface, and each
method of that interface is one message: its arguments are the method's parameters, its
result is the method's return value, each encoded by its annotation
(`jobconform.backends.process.codec`). The interfaces are the areas' own protocol classes
(`jobconform.backends.<area>.protocol`), so the pipe carries exactly what an in-process
adapter implements, and an area that gains a method gains its message with it.

Two kinds of object cross the pipe:
- the child's objects, which the kit calls: the backend itself (`Backend`, handle
  "backend") and every runtime it opens (`JobRuntime`, `BreakerRuntime`, ...);
- the kit's objects, which the child calls back while it handles a request: a job's
  task body (`TaskBody`), a loop's agent (`Agent`), a reminder's delivery target and each
  delivery it starts, a scheduler's target. The harness decides how they end, so they
  stay in the kit and the child holds only their handles.

A few interfaces are declared here rather than in the areas' modules: the job runtime's
retry and stuck methods (the harness calls them by name, no protocol class names them),
the job record with the fields of every job area, the backend's openers, and the kit's
objects without the methods that take a callable (`wait_for_decision` cannot cross a pipe).
"""

from __future__ import annotations

import functools
import inspect
import operator
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from jobconform.backends.admission.protocol import (
    AdmissionRefused,
    BacklogFull,
    InvalidSetting,
    ScheduleTimeoutExceedsCap,
    TimeoutBelowSchedules,
    UnknownOwner,
)
from jobconform.backends.admission.protocol import AdmissionRuntime as AreaAdmissionRuntime
from jobconform.backends.breaker.protocol import BreakerRuntime
from jobconform.backends.composite.protocol import CompositeRuntime
from jobconform.backends.faults import ProcessCrashed, StoreWriteFailed
from jobconform.backends.governor.protocol import GovernorRuntime
from jobconform.backends.idempotency.protocol import IdempotencyAudit
from jobconform.backends.idempotency.protocol import (
    IdempotencyRuntime as AreaIdempotencyRuntime,
)
from jobconform.backends.log_records import LogRecordView
from jobconform.backends.loops.protocol import (
    InvalidLoopParameters,
    LoopAgent,
    LoopEvents,
    LoopNotFound,
    LoopRuntime,
    LoopsConfig,
    RunResult,
)
from jobconform.backends.protocol import (
    CapacityExceeded,
    Clock,
    ConcurrentSubmission,
    ExecutionQueries,
    HealthView,
    InvalidModuleId,
    JobNotCompleted,
    JobNotFound,
    JobView,
    ModuleNotFound,
    OperatorQueueRuntime,
    ReaperAlreadyRunning,
    ReaperRuntime,
    RedeliveryRuntime,
    Runtime,
    RuntimeSettings,
    RuntimeShutDown,
    StoreUnavailable,
    TaskScript,
)
from jobconform.backends.reminders.protocol import (
    Delivery,
    DeliveryFailed,
    DeliveryOutcomeUnknown,
    DeliveryTarget,
    ReminderConfig,
    ReminderConflict,
    ReminderNotFound,
    ReminderRejected,
)
from jobconform.backends.reminders.protocol import ReminderRuntime as AreaReminderRuntime
from jobconform.backends.scheduling.protocol import (
    PreCheckFailed,
    PreCheckTimedOut,
    ScheduleNotFound,
    ScheduleRejected,
    SchedulingConfig,
    SchedulingRuntime,
    SchedulingTarget,
)
from jobconform.backends.self_running import Clockwork
from jobconform.backends.task_store.protocol import TaskStore
from jobconform.reference.admission import AdmissionConfig
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.breaker.oracle import BreakerSettings
from jobconform.reference.composite.oracle import CompositeConfig
from jobconform.reference.faults import StoreFault
from jobconform.reference.governor.oracle import GovernorSettings
from jobconform.reference.idempotency.oracle import IdempotencyConfig
from jobconform.reference.lifecycle import JsonValue

# -- interfaces the areas' modules do not declare -------------------------------------------


class RetryMethods(Protocol):
    """The retry area's method on the job runtime (RT-002, RT-009, RT-010)."""

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int, jitter: Jitter,
                         draw: float, previous_ms: float | None,
                         retry_after_ms: float | None) -> float: ...


class StuckMethods(Protocol):
    """The stuck area's methods on the job runtime (ST-001..ST-004)."""

    def heartbeat(self, job_id: str) -> None: ...

    def detect_stuck(self, job_timeout_seconds: float) -> int: ...


class LogRecordsMethods(Protocol):
    """The records a runtime emitted since the previous call, oldest first, where the
    child claims `log-records` (jobconform.backends.log_records): the level, the logger,
    the message and the facts given with each."""

    def log_records(self) -> Sequence[LogRecordView]: ...


class ConcurrentSubmitMethods(Protocol):
    """Submissions made at once (LC-030), asked only of a child claiming
    `concurrent-submit`. The kit's threads cannot reach the child at once through one
    pipe, so it sends the batch in one message and the child makes every submission at
    the same time: the reference child calls its runtime's `submit` from one thread per
    script, the threads released together (`ObjectServer.submit_concurrently`); a child
    in a single-threaded language starts them all before it awaits any. Each answer, in
    the order of `scripts`, is the job's id or what its submit raised."""

    def submit_concurrently(self, scripts: Sequence[TaskScript]
                            ) -> Sequence[ConcurrentSubmission]: ...


class StoreFaultMethods(Protocol):
    """A runtime's store faults (`jobconform.backends.faults`), asked only of a child
    claiming `store-faults:<area>` for the runtime's area: the job runtime's for
    redelivery and the reaper (RD-007, RP-008), the idempotency runtime's (IK-015), the
    reminders runtime's (RM-014). The kit arms a plan before one command and disarms it
    (None) after; only the child sees its store's writes, so it says whether the plan
    struck. A planned write failure answers `StoreWriteFailed`; a planned crash answers
    `ProcessCrashed` from the planned write on, and the child lives on with the runtime
    acting as a dead process until the kit restarts it as the area does."""

    def inject_store_fault(self, fault: StoreFault | None) -> None: ...

    def store_fault_struck(self) -> bool: ...


class IdempotencyRuntime(AreaIdempotencyRuntime, StoreFaultMethods, Protocol):
    """The idempotency area's runtime with its store faults (IK-015), asked only of a
    child claiming `store-faults:idempotency`. It keeps the area's name, so its messages
    do."""


class ReminderRuntime(AreaReminderRuntime, StoreFaultMethods, Protocol):
    """The reminders area's runtime with its store faults (RM-014), asked only of a child
    claiming `store-faults:reminders`. It keeps the area's name, so its messages do."""


class JobRuntime(Runtime, RetryMethods, StuckMethods, ReaperRuntime, RedeliveryRuntime,
                 ExecutionQueries, OperatorQueueRuntime, LogRecordsMethods,
                 ConcurrentSubmitMethods, StoreFaultMethods, Protocol):
    """The job runtime with the methods of every area checked through it; the kit calls
    only those of the areas the child claims."""

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None,
               module_id: str | None = None, arguments: JsonValue = None,
               owner: str | None = None, trigger: str | None = None,
               options: JsonValue = None) -> str:
        """`Runtime.submit` with the module id a check of LC-027 names (task-manager), the
        job's arguments (LC-036, `job-arguments`), the owner and trigger a check of LC-033
        names and the options one of LC-035 gives: each travels only when given
        (`LATER_ARGUMENTS`), so a child that never meets such a check never receives it."""
        ...


class AdmissionRuntime(AreaAdmissionRuntime, LogRecordsMethods, Protocol):
    """The admission area's runtime with its log records (AD-025, AD-026), asked only of
    a child claiming `log-records`. It keeps the area's name, so its messages do."""


class JobRecord(JobView, Protocol):
    """A job record: `JobView`'s fields (its result narrowed to what JSON carries), then
    those of each job area. A field of an area the child does not claim is null."""

    @property
    def result(self) -> JsonValue: ...
    @property
    def retry_count(self) -> int | None: ...
    @property
    def max_retries(self) -> int | None: ...
    @property
    def last_heartbeat(self) -> datetime | None: ...
    @property
    def redelivery_count(self) -> int | None: ...
    @property
    def alerted(self) -> bool | None: ...
    @property
    def poisoned(self) -> bool | None: ...
    @property
    def arguments(self) -> JsonValue: ...
    @property
    def owner(self) -> str | None: ...
    @property
    def trigger(self) -> str | None: ...
    @property
    def options(self) -> JsonValue: ...


class HealthRecord(HealthView, Protocol):
    """A health snapshot: `HealthView`'s six counts, then what a runtime claiming
    `health-report` says of its worker (LC-029, ST-005): its id, its status ("running",
    "stopping" or "stopped") and its last heartbeat. A child that does not claim it may
    leave the three out (null); the kit reads them only where it is claimed."""

    @property
    def worker_id(self) -> str | None: ...
    @property
    def status(self) -> str | None: ...
    @property
    def last_heartbeat(self) -> datetime | None: ...


# Fields a runtime's own view may lack (their area, or the capability that adds them, is not
# claimed: an execution's outcome is scheduling-ends', its business status
# scheduling-validation's): read as null.
AREA_FIELDS = frozenset({"retry_count", "max_retries", "last_heartbeat", "redelivery_count",
                         "alerted", "poisoned", "outcome", "arguments", "owner", "trigger",
                         "options", "execution_id", "business_status", "validation_run",
                         "validation", "validation_timeout"})


class TaskBody(Protocol):
    """A job's body (the kit's `TaskScript`), as the child's runtime uses it."""

    @property
    def honours_cancellation(self) -> bool: ...

    def decided(self) -> bool:
        """True once the harness has decided how the current attempt ends."""
        ...

    def run(self, arguments: JsonValue = None, options: JsonValue = None) -> JsonValue:
        """The attempt's result, or the scripted exception (type name, message and
        retry-after travel as a `ScriptedError`). `arguments`: the job's, which a runtime
        claiming `job-arguments` hands to its body (LC-036); `options`: the job's execution
        options, handed by a runtime claiming execution-options (LC-035)."""
        ...

    def next_attempt(self) -> None:
        """The runtime retries: the next attempt waits for a new decision (RT-003)."""
        ...

    def interrupt(self) -> None:
        """The runtime's cancel interrupts the invocation in flight (LC-026, under a
        profile whose cancel interrupts): the body must not be run any more. The kit
        records it, so the harness sees the body was interrupted, not merely flagged."""
        ...


class Agent(Protocol):
    """A loop's agent (the kit's `LoopAgent`), as the child's loop runtime uses it."""

    def decided(self, run_number: int) -> bool: ...

    def execute(self, run_number: int, message: str, triggered_by: str | None = None,
                loop_id: str | None = None) -> RunResult: ...


class DeliveryCall(Protocol):
    """One dispatch of a reminder (the kit's `Delivery`), as the child's runtime uses it."""

    @property
    def reminder_id(self) -> str: ...
    @property
    def message(self) -> str: ...

    def decided(self) -> bool: ...

    def result(self) -> None: ...


class ReminderTarget(Protocol):
    """Where the child's reminders runtime dispatches (the kit's `DeliveryTarget`)."""

    def dispatch(self, reminder_id: str, message: str,
                 triggered_by: str | None = None) -> DeliveryCall: ...


class Backend(Protocol):
    """The child's backend, handle "backend": one opener per area (spec/areas.py names
    them; `open` for the areas checked through the job runtime). The clock is not an
    argument on the wire: each request's `now` is the opened object's clock reading."""

    def open(self, settings: RuntimeSettings, clock: Clock) -> JobRuntime: ...

    def open_idempotency(self, clock: Clock, config: IdempotencyConfig,
                         audit: IdempotencyAudit | None = None) -> IdempotencyRuntime:
        """The idempotency runtime; `audit`, the kit's sink for replays (IK-017), is sent
        only to a child claiming `audit-events`, whose runtime calls it back once for
        every replay it answers, before it answers."""
        ...

    def open_breaker(self, clock: Clock, settings: BreakerSettings) -> BreakerRuntime: ...

    def open_governor(self, clock: Clock, settings: GovernorSettings) -> GovernorRuntime: ...

    def open_reminders(self, clock: Clock, config: ReminderConfig,
                       target: ReminderTarget) -> ReminderRuntime: ...

    def open_admission(self, clock: Clock, config: AdmissionConfig) -> AdmissionRuntime: ...

    def open_loops(self, clock: Clock, config: LoopsConfig,
                   events: LoopEvents | None = None) -> LoopRuntime:
        """The loop runtime; `events`, the kit's sink for loop events (LP-019), is sent
        only to a child claiming `loop-events`, whose runtime calls it back after each
        run's record and each loop's end are written. The sink may read the loop back
        (`get_loop`) before it replies: a request within the callback."""
        ...

    def open_scheduling(self, clock: Clock, config: SchedulingConfig,
                        target: SchedulingTarget) -> SchedulingRuntime: ...

    def open_store(self, clock: Clock) -> TaskStore:
        """The task store: the child's store may answer with coroutines (seed 004's
        default); the child awaits them, and the kit sees the answers."""
        ...

    def open_composite(self, clock: Clock, config: CompositeConfig) -> CompositeRuntime: ...

    def open_restarted(self, settings: RuntimeSettings, clock: Clock,
                       bodies: dict[str, TaskScript]) -> JobRuntime:
        """A job runtime over the store an earlier child's runtime left (RS-001..RS-004):
        the kit stopped that child (killed it, or sent it SIGTERM) and started this one,
        whose store is the same database, so it holds every job under the same id. It
        runs a job it claims with the body `bodies` gives for its id. Only a child whose
        store outlives its process claims `restart`."""
        ...

    def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                          clockwork: Clockwork) -> JobRuntime:
        """A job runtime that acts by itself as its clock passes (SR-001..SR-005): it runs
        every pass due by each request's `now` before answering it, and is never sent
        dispatch, detect_stuck or expire_leases."""
        ...


# The child's interfaces (the kit calls them) and the kit's (the child calls them back).
CHILD_INTERFACES: tuple[type, ...] = (
    Backend, JobRuntime, IdempotencyRuntime, BreakerRuntime, GovernorRuntime,
    ReminderRuntime, AdmissionRuntime, LoopRuntime, SchedulingRuntime, TaskStore,
    CompositeRuntime,
)
KIT_INTERFACES: tuple[type, ...] = (TaskBody, Agent, ReminderTarget, DeliveryCall,
                                    SchedulingTarget, IdempotencyAudit, LoopEvents)
# Arguments added to a method after its message was first carried: the kit sends each
# only when its value is not the default, so a child that predates it never receives it
# (the schema does not require it) and the version stays 2.
LATER_ARGUMENTS: dict[str, frozenset[str]] = {
    "JobRuntime.submit": frozenset({"module_id", "arguments", "owner", "trigger", "options"}),
    "TaskBody.run": frozenset({"arguments", "options"}),
    "Backend.open_idempotency": frozenset({"audit"}),  # IK-017, audit-events
    "Backend.open_loops": frozenset({"events"}),  # LP-019, loop-events
}
# Fields added to a view after it was first carried: a child that predates one need not
# send it (the schema does not require it) and the kit reads it as null, so the version
# stays 2. A job's arguments (LC-036) are only read where `job-arguments` is claimed, its
# owner, trigger and options (LC-033, LC-035) where the executions claims are.
LATER_FIELDS: dict[str, frozenset[str]] = {
    "JobRecord": frozenset({"arguments", "owner", "trigger", "options"}),
    # The worker's id, status and last heartbeat (LC-029, ST-005), read where the child
    # claims `health-report`; a runtime's own snapshot without them sends them as null.
    "HealthRecord": frozenset({"worker_id", "status", "last_heartbeat"})}
# Methods of the areas' protocols that cannot cross a pipe.
NOT_CARRIED = frozenset({"wait_for_decision", "wake", "decide"})
# The kit's classes in the areas' signatures, and the interfaces they cross as.
WIRE_TYPES: dict[Any, Any] = {TaskScript: TaskBody, JobView: JobRecord,
                              AreaReminderRuntime: ReminderRuntime,
                              AreaIdempotencyRuntime: IdempotencyRuntime,
                              HealthView: HealthRecord, LoopAgent: Agent,
                              DeliveryTarget: ReminderTarget, Delivery: DeliveryCall}


def wire_type(annotation: Any) -> Any:
    """`annotation` with the kit's classes replaced by the interfaces they cross as."""
    if annotation in WIRE_TYPES:
        return WIRE_TYPES[annotation]
    args = typing.get_args(annotation)
    if not args:
        return annotation
    mapped = tuple(wire_type(arg) for arg in args)
    if mapped == args:
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, mapped)
    return types.GenericAlias(origin, mapped)


# -- the errors a method may answer with ------------------------------------------------------


class ScriptedError(Exception):
    """A task body's or an agent's scripted exception: its type name is the script's, so
    it crosses the pipe as data ({"error_type", "message", "retry_after_ms"})."""


@dataclass(frozen=True)
class ErrorKind:
    """One exception that crosses the pipe, with its data besides the message.

    `data` reads the fields off an exception; `build` makes one from the message and the
    fields, so the receiving side raises the very class the area's protocol names.
    """

    cls: type[BaseException]
    data: Callable[[Any], dict[str, Any]]
    build: Callable[[str, dict[str, Any]], BaseException]


def _plain(cls: type[BaseException]) -> ErrorKind:
    return ErrorKind(cls, lambda error: {}, lambda message, data: cls(message))


def _refusal(cls: type[AdmissionRefused]) -> ErrorKind:
    return ErrorKind(cls, lambda error: {"detail": error.detail},
                     lambda message, data: cls(data["detail"]))


def _keyed(cls: type[KeyError]) -> ErrorKind:
    # A KeyError's message is its key: the id the runtime did not hold.
    return ErrorKind(cls, lambda error: {"key": error.args[0] if error.args else None},
                     lambda message, data: cls(data["key"]))


def _problems(error: InvalidLoopParameters) -> dict[str, Any]:
    return {"problems": [{"parameter": p.parameter, "value": p.value, "allowed": p.allowed}
                         for p in error.problems]}


def _invalid_loop(message: str, data: dict[str, Any]) -> BaseException:
    from jobconform.reference.loops.oracle import ParameterProblem

    return InvalidLoopParameters(tuple(
        ParameterProblem(p["parameter"], p["value"], p["allowed"]) for p in data["problems"]))


# By the name the wire carries; the most specific classes first (an answer names its
# exception's own class, and the receiver raises that class).
ERROR_KINDS: dict[str, ErrorKind] = {kind.cls.__name__: kind for kind in (
    _plain(CapacityExceeded), _plain(RuntimeShutDown), _plain(InvalidModuleId),
    # Store faults (RD-007, RP-008, IK-015, RM-014): a failed write, a dead process.
    _plain(StoreWriteFailed), _plain(StoreUnavailable), _plain(ProcessCrashed),
    _plain(ModuleNotFound), _keyed(JobNotFound),
    ErrorKind(JobNotCompleted, lambda error: {"status": error.status},
              lambda message, data: JobNotCompleted(message.split()[1], data["status"])),
    _plain(ReaperAlreadyRunning), _plain(ValueError),
    _refusal(InvalidSetting), _refusal(UnknownOwner), _refusal(BacklogFull),
    _refusal(ScheduleTimeoutExceedsCap), _refusal(TimeoutBelowSchedules),
    _refusal(AdmissionRefused),
    ErrorKind(InvalidLoopParameters, _problems, _invalid_loop), _keyed(LoopNotFound),
    ErrorKind(ReminderRejected, lambda error: {"code": error.code},
              lambda message, data: ReminderRejected(
                  data["code"], message.split(": ", 1)[-1])),
    _keyed(ReminderNotFound),
    ErrorKind(ReminderConflict,
              lambda error: {"reminder_id": str(error).split()[1], "status": error.status},
              lambda message, data: ReminderConflict(data["reminder_id"], data["status"])),
    _plain(DeliveryFailed), _plain(DeliveryOutcomeUnknown),
    ErrorKind(ScheduleRejected, lambda error: {"code": error.code},
              lambda message, data: ScheduleRejected(
                  data["code"], message.split(": ", 1)[-1])),
    _keyed(ScheduleNotFound), _plain(PreCheckFailed), _plain(PreCheckTimedOut),
)}


def error_name(error: BaseException) -> str | None:
    """The wire name of an exception that may cross the pipe, or None."""
    for cls in type(error).__mro__:
        if cls.__name__ in ERROR_KINDS and ERROR_KINDS[cls.__name__].cls is cls:
            return cls.__name__
    return None


# -- methods, read off the interfaces ----------------------------------------------------------


@dataclass(frozen=True)
class Method:
    """One method of an interface: one request (or callback) shape and its result."""

    interface: str
    name: str
    parameters: tuple[tuple[str, Any], ...]  # (name, annotation), the clock left out
    returns: Any
    takes_clock: bool
    defaults: tuple[tuple[str, Any], ...]
    # Arguments sent only when given (`LATER_ARGUMENTS`); every other one always travels.
    later: frozenset[str] = frozenset()

    @property
    def op(self) -> str:
        """The message's `op`: `Interface.method`."""
        return f"{self.interface}.{self.name}"


def is_interface(annotation: Any) -> bool:
    """True for an interface whose objects stay on their side (they are called by handle)."""
    return annotation in CHILD_INTERFACES or annotation in KIT_INTERFACES


def is_view(annotation: Any) -> bool:
    """True for a protocol of properties only: its values cross as plain objects."""
    return (isinstance(annotation, type) and getattr(annotation, "_is_protocol", False)
            and not is_interface(annotation) and bool(view_fields(annotation)))


@functools.cache
def view_fields(view: type) -> tuple[tuple[str, Any], ...]:
    """The properties of a view protocol with their annotations, in declaration order."""
    fields = []
    for klass in reversed(view.__mro__):
        for name, member in vars(klass).items():
            if isinstance(member, property) and member.fget is not None:
                hints = typing.get_type_hints(member.fget)
                fields.append((name, hints["return"]))
    return tuple(dict(fields).items())


@functools.cache
def methods(interface: type) -> dict[str, Method]:
    """Every method of an interface that the pipe carries, by name."""
    found: dict[str, Method] = {}
    for name in sorted(dir(interface)):
        member = getattr(interface, name, None)
        if name.startswith("_") or name in NOT_CARRIED or not inspect.isfunction(member):
            continue
        hints = typing.get_type_hints(member)
        signature = inspect.signature(member)
        parameters = []
        defaults = []
        takes_clock = False
        for parameter in list(signature.parameters.values())[1:]:
            annotation = wire_type(hints[parameter.name])
            if annotation is Clock:
                takes_clock = True
                continue
            parameters.append((parameter.name, annotation))
            if parameter.default is not inspect.Parameter.empty:
                defaults.append((parameter.name, parameter.default))
        op = f"{interface.__name__}.{name}"
        later = LATER_ARGUMENTS.get(op, frozenset())
        assert later <= {n for n, _ in defaults}, f"{op}: a later argument needs a default"
        found[name] = Method(interface.__name__, name, tuple(parameters),
                             wire_type(hints.get("return", type(None))), takes_clock,
                             tuple(defaults), later)
    return found


@functools.cache
def interface_named(name: str) -> type:
    for interface in CHILD_INTERFACES + KIT_INTERFACES:
        if interface.__name__ == name:
            return interface
    raise KeyError(name)
