"""The adapter protocol: what a job runtime implements to be checked by the kit.

An adapter is two small objects. A `Backend` says what it claims (capabilities, profile)
and opens a fresh `Runtime` for each check, with the harness's clock and settings. The
`Runtime` wraps the job system under test. Task bodies are not the runtime's own: the
harness passes a `TaskScript` with each submission, and the runtime runs it as the job's
body. Nothing here needs inheriting; any object with these attributes fits.

Statuses cross the boundary in the canonical vocabulary (queued, running, succeeded,
failed, cancelled); `jobconform.spec.Profile.to_canonical` translates a runtime's own names.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

# Every capability beyond the areas is declared in jobconform.backends.capabilities; its
# constants (OPERATOR_QUEUE, ...) and `store_faults(area)` are importable from here too.
from jobconform.backends.capabilities import *  # noqa: F403
from jobconform.backends.capabilities import STORE_FAULTS, store_faults  # noqa: F401
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import Outcome, Raise
from jobconform.reference.lifecycle import JsonValue

# Re-exported: an adapter takes the settings it is opened with from this module.
from jobconform.spec.runtime_settings import RuntimeSettings as RuntimeSettings

LIFECYCLE = "lifecycle"
RETRY = "retry"
STUCK = "stuck"
REAPER = "reaper"
REDELIVERY = "redelivery"
IDEMPOTENCY = "idempotency"
REMINDERS = "reminders"
ADMISSION = "admission"

# What each capability beyond the areas asks of a runtime (the capabilities are declared,
# one a line, in jobconform.backends.capabilities):
#
# A backend whose runtime's health snapshot also names its worker, the worker's status and
# its last heartbeat (LC-029, ST-005) claims `health-report`; elsewhere those requirements
# are "not claimed", and the harness reads none of the three fields.
#
# A backend whose runtime takes submissions from several threads at the same time (LC-030)
# claims `concurrent-submit`; elsewhere LC-030 is "not claimed", and the harness never calls
# submit from two threads at once (an asyncio runtime driven through one event loop, say).
#
# A backend whose idempotency runtime reports every replay to a kit-owned audit sink
# (IK-017) claims `audit-events`; its `open_idempotency` then takes the sink as a third
# argument. Elsewhere IK-017 is "not claimed" and the runtime is opened with two.
#
# A backend whose loop runtime reports every finished run and every loop's end to a
# kit-owned event sink (LP-019) claims `loop-events`; its `open_loops` then takes the sink
# as a third argument. Elsewhere LP-019 is "not claimed" and the runtime is opened with two.
#
# A backend whose loop runtime labels each run's execution with what triggered it and the
# loop it belongs to, `agent.execute(run_number, message, "loop", loop_id)` (LP-020),
# claims `loop-labels`; elsewhere LP-020 is "not claimed" and the labels are not read.
#
# A backend whose reminders runtime labels each dispatch with what triggered it,
# `target.dispatch(reminder_id, message, "reminder")` (RM-021), claims `reminder-labels`;
# elsewhere RM-021 is "not claimed" and the label is not read.
#
# A backend whose breaker runtime also has seed 002's dispatch seams, `backstop()`,
# `record_missed_heartbeat(target)` and `set_drain_lost(lost)` (CB-014, CB-015), claims
# `breaker-seams`; elsewhere those requirements are "not claimed", and the harness never
# calls the three methods.
#
# A backend whose scheduler's history learns how each dispatched execution ended, through
# `end_execution(schedule_id, scheduled_for, outcome, cost)`, and whose executions show
# `outcome` (SC-019), claims `scheduling-ends`; elsewhere SC-019 is "not claimed", and the
# harness never calls the method nor reads the field.
#
# A backend whose runtime answers the executions query and its statistics
# (`query_executions`, `execution_stats`) and takes each job's owner and trigger at
# submission (LC-032..LC-034) claims `execution-queries`; elsewhere those requirements
# are "not claimed", and the harness never calls the two methods nor passes the names.
#
# A backend whose runtime takes a job's execution options at submission, shows them on
# its record and hands them to its body (LC-035) claims `execution-options`; elsewhere
# LC-035 is "not claimed", and the harness never passes options.
#
# A backend whose admission runtime opens a second runtime over its own store, as another
# worker of the fleet does, through `open_peer()` (AD-027) claims `admission-peers`;
# elsewhere AD-027 is "not claimed", and the harness never opens one. No message of the
# process protocol carries a second runtime, so a child's claim is dropped.
#
# A backend whose job runtime keeps an operator queue of the requests jobs park for a human,
# keyed by agent and request id, through `park_request(agent, request_id)` and
# `operator_requests()` (RD-008), claims `operator-queue`; elsewhere RD-008 is "not
# claimed", and the harness never calls the two methods.
#
# A backend whose runtime keeps each job's arguments and hands them to its body (LC-036)
# claims `job-arguments`: its `submit` then takes the keyword `arguments=` (a JSON value),
# its records show them as `arguments`, and its bodies are run as
# `script.run(arguments, options)` (options: the job's execution options, LC-035, or None).
# Elsewhere LC-036 is "not claimed", and the harness never passes arguments.
#
# A backend whose runtime can be opened with queued execution switched off
# (`RuntimeSettings.queued_execution` false; seed 000's async.enabled) claims
# `queued-execution-switch` (LC-037); elsewhere LC-037 is "not claimed", and every runtime
# is opened with queued execution on.
#
# A backend whose scheduler also validates the business outcome of a technically ended
# execution (seed 002 §10.9: SC-020..SC-024) claims `scheduling-validation` beside
# `scheduling-ends`: its scheduler has `set_validation`, `end_validation`,
# `validation_run` and `operator_alerts`, its schedules show `validation` and
# `validation_timeout`, and its executions `execution_id`, `business_status` and
# `validation_run`. Elsewhere those requirements are "not claimed", and the harness never
# calls the methods nor reads the fields.
#
# Capabilities across areas: each adds to every area the backend claims that has
# requirements needing it; such a requirement is "not claimed" elsewhere.
#
# A backend whose runtimes show the log records they emit (jobconform.backends.log_records:
# the loggers it names in `log_loggers`, or a runtime's `log_records()`) claims
# `log-records`: AD-025, AD-026, RP-009 and LC-040 check a record's level and facts.
#
# A backend whose runtimes keep an SDK's deprecated names beside the current ones (a
# store's `put` beside `save`, ...; spec/store.md and the other areas say which) claims
# `deprecated-aliases`: the kit calls each alias as it is and checks it gives the answer
# of the name it replaces, and warns as deprecated where the seed says it does.
#
# Partial claims: a backend that implements only part of an area claims the area and
# declares the part it leaves out; the requirements of that part are "not claimed"
# (jobconform.conformance.applicability.PARTIAL_CLAIMS) and never asked, the rest of the
# area is checked. A retry runtime with no jitter modes declares `retry-without-jitter`
# (RT-009). One whose retries wait out a list of intervals given to it, with no delay
# formula, no jitter and no server retry-after of its own, declares `retry-intervals`
# (RT-002, RT-009, RT-010): the kit then never calls its `compute_delay_ms` (it need
# not have one) and never raises with a retry-after; the adapter turns each job's policy
# into its list with `jobconform.bridges.translate.retry_intervals_ms`.
#
# A scheduler whose cron schedules have no time zone (every timetable read in UTC, as
# huey's crontab and procrastinate's periodic tasks are) declares `scheduling-utc-only`:
# the daylight-saving rules (SC-004, SC-005) are "not claimed", the kit creates and edits
# cron schedules in UTC only (or in a zone name no database knows, which the runtime must
# still refuse with `timezone`), and the Behave and Robot cases tagged `zones` (they name
# a zone other than UTC) are skipped as not applicable.

# The worker statuses a health report names (LC-029).
WORKER_RUNNING = "running"
WORKER_STOPPING = "stopping"
WORKER_STOPPED = "stopped"


class JobNotFound(KeyError):
    """get_result was asked for an id the runtime does not hold."""


class JobNotCompleted(RuntimeError):
    """get_result was asked for a job that has not succeeded."""

    def __init__(self, job_id: str, status: str) -> None:
        super().__init__(f"job {job_id} is not completed (status={status})")
        self.status = status


class CapacityExceeded(RuntimeError):
    """A submission was refused because the task cap is reached."""


class RuntimeShutDown(RuntimeError):
    """A submission was refused because the runtime has been shut down."""


class InvalidModuleId(ValueError):
    """A submission named a malformed module id (LC-027); no record was created."""


class ModuleNotFound(LookupError):
    """A submission named a well-formed module id the runtime has no module for (LC-027);
    no record was created."""


class ReaperAlreadyRunning(RuntimeError):
    """start_reaper was called while the runtime's reaper is running (RP-006)."""


class StoreUnavailable(ConnectionError):
    """The job store cannot be reached; a reaper sweep that meets it retries later (RP-005)."""


class Clock(Protocol):
    def now(self) -> datetime:
        """The current virtual time, timezone-aware UTC."""
        ...


class TaskScript:
    """A job's body, controlled by the harness.

    The runtime calls `run()` once the script is decided; it returns the scripted result
    or raises the scripted exception, as a real body would. A body that honours
    cancellation ends as soon as its cancellation is requested; one that ignores it keeps
    running until it is decided.

    A runtime that runs bodies in threads blocks the body's thread in `wait_for_decision`,
    as a real body is busy until it ends; the harness's `decide` wakes it, and the
    runtime's cancellation path wakes it with `wake`.

    A runtime that interrupts the in-flight invocation (seed 004 D-18, LC-026) calls
    `interrupt`, as asyncio's `Task.cancel` would: the body stops at its suspension point,
    its wait, whether or not it honours cancellation, and no further statement of it runs.
    The script records it (`interrupted`), so the harness sees the body was interrupted,
    not merely flagged.
    """

    def __init__(self, honours_cancellation: bool = True) -> None:
        self.honours_cancellation = honours_cancellation
        self._outcome: Outcome | None = None
        self._decision = threading.Condition()
        # Each call of `run()`: the harness checks that a body runs at most once per start
        # of its job, and never for a job cancelled before it started.
        self.invocations = 0
        self.interrupted = False
        # The execution options each run was handed, in order (LC-035).
        self.options_handed: list[JsonValue] = []
        # The arguments each invocation received (LC-036), in order.
        self.received_arguments: list[JsonValue] = []

    def interrupt(self) -> None:
        """Interrupt the invocation in flight: a thread in `wait_for_decision` returns
        False at once, and the body must not be run any more (LC-026)."""
        with self._decision:
            self.interrupted = True
            self._decision.notify_all()

    def decide(self, outcome: Outcome) -> None:
        """Fix how the body ends; only the first decision counts."""
        with self._decision:
            if self._outcome is None:
                self._outcome = outcome
            self._decision.notify_all()

    def wait_for_decision(self, released: Callable[[], bool]) -> bool:
        """Block the calling thread until the script is decided or `released()` is true.

        `released` is re-checked whenever `decide` or `wake` is called, so whoever makes
        it true (a cancellation token, a shutdown) must call `wake` afterwards.

        Returns:
            True if the script is decided (its body can run), False if it was released
            undecided.
        """
        with self._decision:
            self._decision.wait_for(lambda: self._outcome is not None or self.interrupted
                                    or released())
            return self._outcome is not None and not self.interrupted

    def wake(self) -> None:
        """Make threads in `wait_for_decision` re-check their `released` condition."""
        with self._decision:
            self._decision.notify_all()

    def decided(self) -> bool:
        return self._outcome is not None

    def run(self, arguments: JsonValue = None, options: JsonValue = None) -> JsonValue:
        """Execute the body.

        Args:
            arguments: the job's arguments, as a runtime claiming `job-arguments` hands
                them to its body (LC-036); recorded, so the harness sees what it received.
            options: the job's execution options, which a runtime claiming
                execution-options hands to each run (LC-035); None when it has none.

        Returns:
            The scripted result.

        Raises:
            Exception: an exception whose type name and message are the scripted ones.
            RuntimeError: the body has not been decided yet (a runtime bug).
        """
        with self._decision:
            self.invocations += 1
            self.received_arguments.append(copy.deepcopy(arguments))
            self.options_handed.append(options)
            outcome = self._outcome
        if outcome is None:
            raise RuntimeError("the runtime ran a task body the harness has not decided yet")
        if isinstance(outcome, Raise):
            error_type = type(outcome.error_type, (Exception,), {})
            error = error_type(outcome.message)
            # A server's retry-after travels on the exception, as HTTP clients do (RT-010).
            error.retry_after_ms = outcome.retry_after_ms
            raise error
        return outcome.result

    def decision(self) -> Outcome | None:
        """The decided outcome, for a transport that carries it to where the body runs
        (the process protocol's parent side): reading it is not a run of the body."""
        with self._decision:
            return self._outcome

    def next_attempt(self) -> None:
        """Forget the ended attempt's outcome: a retried job's next attempt waits for a new
        decision from the harness (RT-003)."""
        with self._decision:
            self._outcome = None


class JobView(Protocol):
    """One job record as the runtime returns it; it must be a snapshot (LC-016). A
    runtime claiming `job-arguments` adds `arguments`, the job's arguments (null when it
    was given none, LC-036); the harness reads it with getattr."""

    @property
    def job_id(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def submitted_at(self) -> datetime: ...
    @property
    def started_at(self) -> datetime | None: ...
    @property
    def finished_at(self) -> datetime | None: ...
    @property
    def result(self) -> object: ...
    @property
    def error(self) -> str | None: ...


class HealthView(Protocol):
    """The health snapshot. A runtime claiming `health-report` adds `worker_id` (str),
    `status` ("running", "stopping" or "stopped") and `last_heartbeat` (an aware UTC
    datetime or None) to these six counts (LC-029, ST-005); the harness reads them with
    getattr, so a view without them still fits where the capability is not claimed."""

    @property
    def queued(self) -> int: ...
    @property
    def running(self) -> int: ...
    @property
    def total(self) -> int: ...
    @property
    def processed(self) -> int: ...
    @property
    def failed(self) -> int: ...
    @property
    def cancelled(self) -> int: ...


@dataclass(frozen=True)
class ConcurrentSubmission:
    """One submission's answer among several made at once (LC-030): the new job's id, or
    the name and message of the exception its submit raised (`CapacityExceeded`,
    `RuntimeShutDown`, or whatever a runtime that fails beside another raises).

    A runtime the kit cannot call from several threads of its own, because something
    between them serialises the calls (the process backend's pipe), may offer
    `submit_concurrently(scripts) -> Sequence[ConcurrentSubmission]`: it makes one
    submission per script at the same time itself (a thread each, in the process
    protocol's reference child) and answers each in the order given. The harness then
    uses it for LC-030 instead of its own threads."""

    job_id: str | None = None
    error_type: str | None = None
    message: str | None = None


class Runtime(Protocol):
    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        """Create a queued job whose body is `script`.

        `retry` is only ever passed to a runtime that claims the retry capability; None
        means the default policy (no retries). A check of submit validation (LC-027)
        also passes the keyword `module_id=`; a runtime that never meets such a check
        (one whose profile has no LC-027) need not accept it. A runtime whose backend
        claims `job-arguments` is passed the job's arguments as the keyword `arguments=`
        (LC-036), only when they are not null; it keeps them and runs the body with them.
        With queued execution off (`queued-execution-switch`, LC-037) the script is
        decided before the call, and submit runs it to its end before returning. A
        runtime whose backend claims `concurrent-submit` is called from several threads at
        once (LC-030): each call returns an id of its own and none is lost.

        Returns:
            The new job's id, unique within this runtime, at once.

        Raises:
            CapacityExceeded: the task cap is reached; no record was created.
            RuntimeShutDown: shutdown has been called; no record was created.
            InvalidModuleId: `module_id` is malformed; no record was created.
            ModuleNotFound: `module_id` names no module in `RuntimeSettings.modules`.
        """
        ...

    def dispatch(self) -> None:
        """A dispatch point: start queued jobs, oldest first, into free slots."""
        ...

    def settle(self) -> None:
        """Return once every body that can end now has ended and been recorded.

        Does not start queued jobs (only `dispatch` does).
        """
        ...

    def cancel(self, job_id: str) -> bool:
        """Cancel a queued job, or request cancellation of a running one.

        Returns:
            True if cancellation was applied or requested by this call, else False.
        """
        ...

    def get(self, job_id: str) -> JobView | None:
        """A snapshot of the job, or None for an unknown id."""
        ...

    def get_result(self, job_id: str) -> object:
        """The result of a succeeded job.

        Raises:
            JobNotFound: unknown id.
            JobNotCompleted: the job exists but has not succeeded.
        """
        ...

    def list_jobs(self, status: str | None = None) -> Sequence[JobView]:
        """Snapshots of held jobs in submission order, optionally of one status only."""
        ...

    # A runtime claiming execution-queries also has `query_executions` and
    # `execution_stats` (ExecutionQueries below), and its submit takes `owner=` and
    # `trigger=`; one claiming execution-options takes `options=` (LC-035), shows it as
    # the record's `options` and hands it to each run of the body as the second argument
    # of `script.run(arguments, options)`.

    def cleanup(self, max_age_seconds: float) -> int:
        """Remove terminal jobs at least this old; return how many were removed."""
        ...

    def shutdown(self) -> None:
        """Refuse submissions from now on, and cancel every queued and running job: at
        once (shutdown_mode cancel), or once the drain timeout has passed on the clock,
        those still active then (shutdown_mode drain)."""
        ...

    def health(self) -> HealthView:
        """Counts and counters taken in one atomic snapshot."""
        ...

    def close(self) -> None:
        """Release whatever the runtime holds (threads, connections)."""
        ...


class ExecutionQueries(Protocol):
    """What a runtime claiming `execution-queries` adds (LC-032..LC-034). Its records also
    carry `owner` and `trigger`, as submitted (None when not)."""

    def query_executions(self, *, status: str | None = None, trigger: str | None = None,
                         owners: Sequence[str] | None = None, hours: float | None = None,
                         search: str | None = None, offset: int = 0,
                         limit: int | None = None) -> Sequence[JobView]:
        """One page of the held jobs passing every filter given, newest submission first:
        from `offset`, at most `limit`, never more than `RuntimeSettings.page_size`.

        Args:
            status: only jobs in exactly this status.
            trigger: only jobs submitted with exactly this trigger.
            owners: only jobs submitted for one of these owners (none for an empty set).
            hours: only jobs submitted at or after the clock's reading less this many hours.
            search: only jobs whose error contains this text, the case of letters aside.
        """
        ...

    def execution_stats(self, hours: float | None = None,
                        owners: Sequence[str] | None = None) -> dict[str, int]:
        """{"total", "succeeded", "failed"} over the jobs submitted within the window of
        `hours` (every held job if None), {"running", "queued"} over the held jobs whatever
        their age; every count only of `owners`' jobs if given; one snapshot."""
        ...


class ReaperRuntime(Protocol):
    """What a runtime claiming the `reaper` capability adds (spec/reaper.md).

    Sweeps are driven by the runtime's clock: when the harness has moved the clock past
    one or more sweep boundaries, the runtime runs those sweeps before `settle` returns,
    each with its own boundary as "now".
    """

    def start_reaper(self, ttl_seconds: float | None = None,
                     sweep_interval_ms: float | None = None) -> None:
        """Start sweeping every `sweep_interval_ms`, deleting terminal jobs finished more
        than `ttl_seconds` before each sweep; None takes the configured default. A runtime
        claiming `deprecated-aliases` also takes seed 004's deprecated keywords
        `interval_seconds` and `max_age_seconds`, each with a DeprecationWarning (RP-010).

        Raises:
            ReaperAlreadyRunning: the reaper is running; nothing changed.
            ValueError: a negative TTL or an interval that is not positive.
        """
        ...

    def stop_reaper(self) -> bool:
        """Stop the reaper once a sweep in flight has finished.

        Returns:
            True if a running reaper was stopped, False if none was running.
        """
        ...

    def reaper_status(self) -> dict[str, object]:
        """{"running": bool, "sweeps": completed, "failed_sweeps": failed, "deleted": n}."""
        ...

    def list_expired(self, before: datetime) -> Sequence[JobView]:
        """Terminal jobs finished strictly before `before`, in submission order."""
        ...

    def inject_store_outage(self, sweeps: int) -> None:
        """Fault injection: the next `sweeps` sweeps find the store unavailable."""
        ...


class RedeliveryRuntime(Protocol):
    """What a runtime claiming the `redelivery` capability adds (spec/redelivery.md).

    Its job records also carry `redelivery_count`, `alerted` and `poisoned`, and the body's
    heartbeats renew the lease (`heartbeat(job_id)`, as for the stuck area).
    """

    def heartbeat(self, job_id: str) -> None:
        """The job's body reports progress; only a running job's heartbeat counts."""
        ...

    def expire_leases(self, lease_seconds: float) -> dict[str, int]:
        """Re-queue or park every running job silent for more than `lease_seconds`.

        Returns:
            {"requeued": n, "parked": m}.
        """
        ...

    def operator_alerts(self) -> Sequence[str]:
        """Ids of the jobs an operator alert was raised for, in the order raised."""
        ...

    def stale_owner_write(self, job_id: str, write: str) -> bool:
        """Fault injection (RD-006): the owner of the delivery that the job's latest lease
        expiry took away (a worker elsewhere that never learnt it) writes now, through the
        runtime's store, as that owner: "outcome" (its body returned), "failure" (it
        raised) or "heartbeat".

        Returns:
            True if the store accepted the write (a conforming runtime never does), False
            if it refused it or the job never lost a delivery to a lease expiry.
        """
        ...


class OperatorQueueRuntime(Protocol):
    """What a runtime claiming `operator-queue` adds to re-delivery (RD-008): the requests
    jobs park for a human operator (an approval before an irreversible step, say), one
    per agent and request id."""

    def park_request(self, agent: str, request_id: str) -> str:
        """Park `agent`'s request `request_id` for an operator.

        Returns:
            The id of the request it lands on: a new one the runtime mints, or the one
            `agent` already holds under `request_id`, unchanged (a re-park).
        """
        ...

    def operator_requests(self) -> Sequence[tuple[str, str, str]]:
        """Every parked request once, as (its id, agent, request id), in the order first
        parked."""
        ...


class OperatorSink(Protocol):
    """The harness's own operator queue: where a runtime that accepts it raises each
    operator alert, at the moment it raises it (RD-003)."""

    def alert(self, job_id: str) -> None:
        """Record an alert for `job_id`; never raises. It may read the job through the
        runtime's `get`, to see the order of the alert and the job's change."""
        ...


class OperatorSinkRuntime(Protocol):
    """An optional capability of a runtime claiming `redelivery`: the alerts go to a
    sink the harness owns, instead of only being read back afterwards.

    A runtime without `attach_operator_sink` keeps working: the harness then only pulls
    `operator_alerts()`, and the order of an alert and the job's change is not checked.
    """

    def attach_operator_sink(self, sink: OperatorSink) -> None:
        """From now on call `sink.alert(job_id)` for every alert raised, from any thread,
        holding no lock that `get` needs; `operator_alerts()` still answers them all."""
        ...


@runtime_checkable
class Backend(Protocol):
    """What the loader finds by entry point or `module:attr`."""

    name: str
    profile: str
    capabilities: frozenset[str]

    def open(self, settings: RuntimeSettings, clock: Clock) -> Runtime:
        """A fresh, empty runtime using `clock` for every timestamp."""
        ...


