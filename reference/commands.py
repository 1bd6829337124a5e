"""Commands and answers: the plain data every front-end speaks.

A conformance check is a sequence of commands applied to a backend and to the oracle.
Commands name jobs by an alias chosen by the harness ("a", "j1"); each backend's own ids
are mapped to aliases by the harness. Commands serialise to JSON so that a failing
sequence can be saved and replayed anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields, replace
from typing import TYPE_CHECKING, Any, TypeAlias

from jobconform.reference.backoff import Jitter, RetryPolicy, policy_from_json
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.lifecycle import JsonValue

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


@dataclass(frozen=True)
class Succeed:
    """The body returns this result."""

    result: JsonValue = None


@dataclass(frozen=True)
class Raise:
    """The body raises an exception of this type name with this message."""

    error_type: str
    message: str
    retry_after_ms: float | None = None  # a server's retry-after carried by the error


Outcome: TypeAlias = Succeed | Raise


@dataclass(frozen=True)
class Submit:
    job: str
    ignores_cancel: bool = False  # the body never checks its cancellation token
    retry: RetryPolicy | None = None  # only for backends claiming the retry area
    module: str | None = None  # the module id the submission names (LC-027), if any
    # Who the job runs for and what started it (LC-033), and its execution options
    # (LC-035): sent only to a runtime claiming execution-queries, execution-options.
    owner: str | None = None
    trigger: str | None = None
    options: JsonValue = None
    # The job's arguments, a JSON value (LC-036); None is null, as for a job given none.
    # Only for backends claiming `job-arguments`.
    arguments: JsonValue = None
    # The body's outcome, decided before the call: a runtime with queued execution
    # switched off runs the body inside submit (LC-037), so it must be decided by then.
    outcome: Outcome | None = None


# Submissions made at once by a concurrent submit: enough for real contention, few
# enough that a check stays quick (as TS-010's savers).
MAX_CONCURRENT_SUBMITTERS = 8


@dataclass(frozen=True)
class SubmitConcurrently:
    """Submit one job per alias, each from a thread of its own, the threads released
    together (LC-030). Each alias is new; the runtime may take the submissions in any
    order, so the batch's jobs may be listed in any order after the jobs held before."""

    jobs: tuple[str, ...]

    def __post_init__(self) -> None:
        if not 2 <= len(self.jobs) <= MAX_CONCURRENT_SUBMITTERS:
            raise ValueError(f"a concurrent submit has 2 to {MAX_CONCURRENT_SUBMITTERS} jobs,"
                             f" not {len(self.jobs)}")
        if len(set(self.jobs)) != len(self.jobs):
            raise ValueError(f"a concurrent submit names each job once, not {list(self.jobs)}")


@dataclass(frozen=True)
class ComputeDelay:
    """Ask the runtime's own delay function for one value (RT-002, RT-009, RT-010)."""

    policy: RetryPolicy
    attempt: int
    jitter: Jitter = Jitter.NONE
    draw: float = 0.0
    previous_ms: float | None = None
    retry_after_ms: float | None = None


@dataclass(frozen=True)
class Dispatch:
    """A dispatch point: the runtime starts queued jobs into its free slots."""


@dataclass(frozen=True)
class Finish:
    """The harness decides how the job's body ends (now, or as soon as it starts)."""

    job: str
    outcome: Outcome


@dataclass(frozen=True)
class Cancel:
    job: str


@dataclass(frozen=True)
class Heartbeat:
    """The job's body reports progress (ST-001)."""

    job: str


@dataclass(frozen=True)
class DetectStuck:
    """A stuck-detection pass with this timeout (ST-002..ST-004)."""

    job_timeout_seconds: float


@dataclass(frozen=True)
class StartReaper:
    """Start the background reaper (RP-002); a value left None is the runtime's default.
    `old_names`: through seed 004's deprecated keywords, `interval_seconds` (the interval
    in seconds) and `max_age_seconds` (the TTL), which must do the same and warn (RP-010).
    """

    ttl_seconds: float | None = None
    sweep_interval_ms: float | None = None
    old_names: bool = False


@dataclass(frozen=True)
class StopReaper:
    """Stop the reaper, waiting for a sweep in flight (RP-007)."""


@dataclass(frozen=True)
class StoreOutage:
    """The next `sweeps` reaper sweeps find the job store unavailable (RP-005)."""

    sweeps: int


@dataclass(frozen=True)
class ReaperStatus:
    """Read the reaper's status: running, sweeps, failed_sweeps, deleted (RP-005)."""


@dataclass(frozen=True)
class ListExpired:
    """Ask the store's list_expired(now - older_than_seconds) (RP-003)."""

    older_than_seconds: float


@dataclass(frozen=True)
class ExpireLeases:
    """One pass of the lease reaper: re-queue or park jobs silent past the lease (RD-001)."""

    lease_seconds: float


# What the previous owner of a re-delivered job may try to write late (RD-006).
STALE_WRITES = ("outcome", "failure", "heartbeat")


@dataclass(frozen=True)
class StaleOwnerWrite:
    """The owner of the delivery that the job's latest lease expiry took away, a worker
    that never learnt it lost the job, writes now: its body's outcome, a failure, or a
    heartbeat (RD-006). The answer is whether the runtime's store accepted the write."""

    job: str
    write: str = "outcome"


@dataclass(frozen=True)
class OperatorAlerts:
    """Read the operator alerts raised by parking, in the order raised (RD-003)."""


@dataclass(frozen=True)
class ParkRequest:
    """Agent `agent` parks its request `request` for a human operator (RD-008). The
    answer names the request it lands on as the harness labels the runtime's ids: "request
    n" for the n-th request the runtime answered with."""

    agent: str
    request: str


@dataclass(frozen=True)
class OperatorRequests:
    """Read the operator queue: each request as [its label, agent, request id], in the
    order first parked (RD-008)."""


@dataclass(frozen=True)
class AdvanceTime:
    seconds: float


@dataclass(frozen=True)
class JobStoreFault:
    """Run `command` with `fault` planned for the job store's writes during it: a lease
    pass (RD-007: a write fails, or the process crashes at it and a restarted rescuer
    passes again at once) or a clock step whose reaper sweeps meet a failing write
    (RP-008; a write failure only)."""

    fault: StoreFault
    command: ExpireLeases | AdvanceTime


@dataclass(frozen=True)
class Cleanup:
    max_age_seconds: float


@dataclass(frozen=True)
class Shutdown:
    pass


@dataclass(frozen=True)
class Restart:
    """The runtime's process stops without a shutdown and a new one opens over the same
    store (RS-001..RS-003): every record stays; a running job's body is gone with the
    process, so the job waits for a lease pass."""


@dataclass(frozen=True)
class StopBySignal:
    """The runtime's process is sent SIGTERM or SIGINT (`signal`); the steps `during` the
    grace period follow (bodies ending, time passing); when the grace period ends, the
    clock stands `grace_seconds` after the signal and a process that has not exited is
    sent SIGKILL; then a new one opens over the same store (RS-004..RS-008). The answer
    is how it stopped: `EXITED_ON_SIGTERM` or `ESCALATED_TO_SIGKILL`."""

    grace_seconds: float = 10.0
    signal: str = "SIGTERM"
    during: tuple[Finish | AdvanceTime, ...] = ()


# The signals that stop a runtime (seed 000 Startup: SIGINT and SIGTERM, RS-007).
STOP_SIGNALS = ("SIGTERM", "SIGINT")

# The two answers of StopBySignal (RS-004).
def exited_on(signal: str) -> str:
    """StopBySignal's answer for a process that exited on its signal by itself."""
    return f"exited on {signal}"


EXITED_ON_SIGTERM = exited_on("SIGTERM")
ESCALATED_TO_SIGKILL = "escalated to SIGKILL after the grace period"


@dataclass(frozen=True)
class GetResult:
    job: str


@dataclass(frozen=True)
class Get:
    job: str


@dataclass(frozen=True)
class ListJobs:
    status: str | None = None


def check_window(hours: float | None) -> None:
    """The window of hours the executions query and statistics take (LC-032, LC-034).

    Raises:
        ValueError: a window that is not a positive number of hours (None: no window).
    """
    if hours is not None and not hours > 0:
        raise ValueError(f"a window is a positive number of hours, not {hours}")


@dataclass(frozen=True)
class QueryExecutions:
    """One page of the executions query (LC-032, LC-033): the answer is the aliases of
    the page's jobs, in its order. A filter left None keeps every job; `owners` is the
    set of owners (LC-033) as a tuple; `limit` None is the runtime's page size."""

    status: str | None = None
    trigger: str | None = None
    owners: tuple[str, ...] | None = None
    hours: float | None = None
    search: str | None = None
    offset: int = 0
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.offset < 0 or (self.limit is not None and self.limit < 1):
            raise ValueError(f"a page has an offset of at least 0 and a limit of at least 1,"
                             f" not offset={self.offset}, limit={self.limit}")
        check_window(self.hours)


@dataclass(frozen=True)
class ExecutionStats:
    """The execution statistics (LC-034) over a window of hours (None: every held job),
    for a set of owners (None: every job). The answer is STATS_FIELDS' counts."""

    hours: float | None = None
    owners: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        check_window(self.hours)


# The counts of the execution statistics (LC-034), in the order they are shown.
STATS_FIELDS = ("total", "succeeded", "failed", "running", "queued")


Command: TypeAlias = (
    Submit | Dispatch | Finish | Cancel | AdvanceTime | Cleanup | Shutdown | GetResult | Get
    | ListJobs | ComputeDelay | Heartbeat | DetectStuck | StartReaper | StopReaper | StoreOutage
    | ReaperStatus | ListExpired | ExpireLeases | OperatorAlerts | StaleOwnerWrite
    | ParkRequest | OperatorRequests | JobStoreFault | SubmitConcurrently | Restart | StopBySignal
    | QueryExecutions | ExecutionStats
)

COMMAND_TYPES: dict[str, type[Command]] = {
    cls.__name__: cls
    for cls in (Submit, Dispatch, Finish, Cancel, AdvanceTime, Cleanup, Shutdown, GetResult,
                Get, ListJobs, ComputeDelay, Heartbeat, DetectStuck, StartReaper, StopReaper,
                StoreOutage, ReaperStatus, ListExpired, ExpireLeases, OperatorAlerts,
                StaleOwnerWrite, ParkRequest, OperatorRequests, JobStoreFault,
                SubmitConcurrently, Restart, StopBySignal, QueryExecutions, ExecutionStats)
}

# Answers, as plain comparable values.
ACCEPTED = "accepted"
REFUSED_CAPACITY = "refused: capacity"
REFUSED_SHUT_DOWN = "refused: shut down"
REFUSED_INVALID_MODULE = "refused: invalid module id"
REFUSED_UNKNOWN_MODULE = "refused: module not found"
NOT_FOUND = "error: not found"
REAPER_STARTED = "started"
REFUSED_REAPER_RUNNING = "refused: reaper already running"


def not_completed(status: str) -> str:
    return f"error: not completed (status={status})"


def command_to_json(command: Command) -> dict[str, Any]:
    if isinstance(command, JobStoreFault):
        return {"command": "JobStoreFault",
                "fault": {"kind": command.fault.kind.value, "write": command.fault.write},
                "inner": command_to_json(command.command)}
    body = asdict(command)
    if isinstance(command, Finish | Submit) and command.outcome is not None:
        body["outcome"] = {"kind": type(command.outcome).__name__, **asdict(command.outcome)}
    if isinstance(command, StopBySignal):
        body["during"] = [command_to_json(step) for step in command.during]
    return {"command": type(command).__name__, **body}


def command_from_json(document: dict[str, Any]) -> Command:
    """Rebuild a command from its JSON form.

    Raises:
        ValueError: unknown command kind, or fields that do not fit it.
    """
    body = dict(document)
    kind = body.pop("command", None)
    cls = COMMAND_TYPES.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown command {kind!r}; expected one of {sorted(COMMAND_TYPES)}")
    names = ({"fault", "inner"} if cls is JobStoreFault
             else {field.name for field in fields(cls)})
    if set(body) - names:
        raise ValueError(f"{kind} has no field(s) {sorted(set(body) - names)}")
    try:
        if cls is JobStoreFault:
            inner = command_from_json(dict(body["inner"]))
            if not isinstance(inner, ExpireLeases | AdvanceTime):
                raise ValueError("a JobStoreFault runs an ExpireLeases or an AdvanceTime,"
                                 f" not {type(inner).__name__}")
            fault = dict(body["fault"])
            return JobStoreFault(StoreFault(FaultKind(fault["kind"]), fault["write"]), inner)
        if cls is Finish or (cls is Submit and body.get("outcome") is not None):
            outcome = dict(body["outcome"])
            outcome_kind = outcome.pop("kind", None)
            outcome_types: dict[str, type[Outcome]] = {"Succeed": Succeed, "Raise": Raise}
            if outcome_kind not in outcome_types:
                raise ValueError(f"Finish outcome kind must be Succeed or Raise, not"
                                 f" {outcome_kind!r}")
            body["outcome"] = outcome_types[outcome_kind](**outcome)
        for key in ("retry", "policy"):
            if key in body:
                body[key] = policy_from_json(body[key])
        if cls is StopBySignal:
            during = tuple(command_from_json(dict(step)) for step in body.get("during", ()))
            if not all(isinstance(step, Finish | AdvanceTime) for step in during):
                raise ValueError("the steps during a grace period are Finish and AdvanceTime")
            body["during"] = during
        if cls is SubmitConcurrently and isinstance(body.get("jobs"), list):
            body["jobs"] = tuple(body["jobs"])
        if isinstance(body.get("owners"), list):
            body["owners"] = tuple(body["owners"])
        if "jitter" in body:
            body["jitter"] = Jitter(body["jitter"])
        return cls(**body)
    except (TypeError, KeyError) as error:
        expected = ", ".join(f.name for f in fields(cls))
        raise ValueError(f"{kind} takes the fields ({expected}); got {sorted(body)}:"
                         f" {error}") from None


# A text longer than this is shown by its ends and its length (LC-039's are 70 000
# characters): a failure message stays readable, and a front-end that cuts long messages
# (Robot's) keeps the lines naming the requirement. An adapter's error, a few hundred
# characters with its own message in the middle, stays whole.
SHOWN_TEXT = 1000


def shown(value: object) -> str:
    """`repr(value)`, a long text shortened to its ends and its length."""
    if isinstance(value, str) and len(value) > SHOWN_TEXT:
        return f"{value[:60]!r} ... {value[-40:]!r} ({len(value)} characters)"
    return repr(value)


def fields_given(command: DataclassInstance,
                 always: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """The (name, value) of each field of `command` not at its default, and of those named
    in `always`, in field order: what a readable line shows of a command, so that
    reproducers stay short. Every area's `describe` shows its commands so."""
    return [(item.name, getattr(command, item.name)) for item in fields(command)
            if getattr(command, item.name) != item.default or item.name in always]


def written(command: object, values: Iterable[tuple[str, object]]) -> str:
    """`Name(field=value, ...)`: a command as a readable line writes it, each value by its
    repr. Every area's `describe` writes its commands so, choosing which fields to show."""
    shown_values = ", ".join(f"{name}={value!r}" for name, value in values)
    return f"{type(command).__name__}({shown_values})"


def describe(command: Command) -> str:
    """One readable line per command, for failure messages and reproducers."""
    if isinstance(command, JobStoreFault):
        return f"{describe(command.command)} while {command.fault.describe()}"
    if isinstance(command, Finish):
        if isinstance(command.outcome, Succeed):
            return f"Finish({command.job!r}, returns {shown(command.outcome.result)})"
        return (f"Finish({command.job!r}, raises {command.outcome.error_type}"
                f"({shown(command.outcome.message)}))")
    if isinstance(command, StopBySignal) and command.during:
        steps = "; ".join(describe(step) for step in command.during)
        return (f"{describe(replace(command, during=()))[:-1]}, during the grace period:"
                f" {steps})").replace("(, ", "(")
    return written(command, fields_given(command))
