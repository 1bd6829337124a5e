"""The harness: every command goes to the backend and to the oracle, and they must agree.

After each command the harness compares the command's answer, every held job record and
the health snapshot. The first difference raises one `Divergence` that names the
requirement(s) involved, shows expected against actual, and lists the commands so far.
"""

from __future__ import annotations

import os
import re
import threading
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial
from typing import Any, TypeVar, cast

from jobconform.backends.protocol import (
    CONCURRENT_SUBMIT,
    DEPRECATED_ALIASES,
    EXECUTION_OPTIONS,
    EXECUTION_QUERIES,
    HEALTH_REPORT,
    JOB_ARGUMENTS,
    LIFECYCLE,
    LOG_RECORDS,
    OPERATOR_QUEUE,
    QUEUED_EXECUTION_SWITCH,
    REAPER,
    REDELIVERY,
    RETRY,
    RETRY_INTERVALS,
    STUCK,
    Backend,
    CapacityExceeded,
    ConcurrentSubmission,
    HealthView,
    InvalidModuleId,
    JobNotCompleted,
    JobNotFound,
    JobView,
    ModuleNotFound,
    ReaperAlreadyRunning,
    Runtime,
    RuntimeSettings,
    RuntimeShutDown,
    TaskScript,
    store_faults,
)
from jobconform.backends.restart import RESTART, STOP_SIGNAL, SignalPlan, SignalStop
from jobconform.conformance import blame, job_faults, log_records, read_ahead, tolerance, utc
from jobconform.conformance.answers import shape_problem
from jobconform.conformance.blame import DELAY_TOLERANCE_MS as DELAY_TOLERANCE_MS
from jobconform.conformance.blame import ranked
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.log_records import LogWatch
from jobconform.conformance.sealed_views import SealedView, is_sealed, same_text
from jobconform.conformance.sinks import OperatorQueue
from jobconform.conformance.standard_dates import with_standard_dates
from jobconform.conformance.watchdog import AdapterError as AdapterError
from jobconform.conformance.watchdog import (
    AdapterHung,
    call_adapter,
    guarded,
    run_at_once,
)
from jobconform.reference import backoff, executions
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import Command, describe, shown
from jobconform.reference.lifecycle import (
    CUT_FLOOR,
    LONG_TEXT,
    VOLUME,
    JobState,
    JsonValue,
    Status,
    arguments_text,
)
from jobconform.reference.model import (
    SHUTDOWN_CANCEL,
    SHUTDOWN_MODES,
    Health,
    ReferenceModel,
    request_label,
)
from jobconform.reference.reaper import check_reaper_settings
from jobconform.spec import Profile, Registry
from jobconform.spec.runtime_settings import PAGE_SIZE

T = TypeVar("T")

# A real-time limit per backend call. It only guards against a hung adapter: it never
# lets time pass for the runtime, and a healthy call takes microseconds.
# JOBCONFORM_SAFETY_TIMEOUT shortens it, for the tests of a hanging adapter.
SAFETY_TIMEOUT_SECONDS = float(os.environ.get("JOBCONFORM_SAFETY_TIMEOUT", "60"))

# The modules every runtime under check has (LC-027): a submission may name one of
# these, a well-formed id that is none of them, or a malformed one.
HARNESS_MODULES = frozenset({"data.process_batch", "mail.send_digest"})

# Submit and cancel have made their change when they return (LC-031): the harness reads
# the job straight after the call, before anything else reaches the runtime.
AT_ONCE_REQUIREMENT = "LC-031"

# Requirements every observation checks, whatever the command.
ATTEMPT_NUMBER_REQUIREMENT = "RT-011"
OLD_REAPER_KEYWORDS_REQUIREMENT = "RP-010"
# start_reaper's current keywords, each with seed 004's deprecated Python name for it.
OLD_REAPER_KEYWORDS = {"sweep_interval_ms": "interval_seconds", "ttl_seconds": "max_age_seconds"}
OBSERVED_ALWAYS = ("LC-001", "LC-002", "LC-004", "LC-005", "LC-024", "LC-025")


# Commands that make one call of the runtime, or none, and no other call before the
# harness observes the state they left, whatever their answer (a submit or cancel reads its
# job at once, LC-031; a wrong stuck count reads the jobs to blame; a fault arms, settles
# and disarms): their call travels with the observation's (read_ahead).
ONE_CALL_COMMANDS = (cmd.Dispatch | cmd.Finish | cmd.AdvanceTime | cmd.Cleanup | cmd.Shutdown
                     | cmd.GetResult | cmd.Get | cmd.ComputeDelay | cmd.Heartbeat
                     | cmd.StopReaper | cmd.StoreOutage | cmd.ReaperStatus | cmd.ListExpired
                     | cmd.ExpireLeases | cmd.StaleOwnerWrite | cmd.OperatorAlerts
                     | cmd.ParkRequest | cmd.ListJobs)


@dataclass(frozen=True)
class Record:
    """A job record reduced to what the spec fixes (ids are compared separately)."""

    status: str
    submitted_at: datetime | None
    started_at: datetime | None
    finished_at: datetime | None
    result: object
    error: str | None
    # Compared only for backends claiming retry; object, since a broken view may hold anything.
    retry_count: object = None
    max_retries: object = None
    last_heartbeat: object = None  # compared only for backends claiming stuck detection
    # Compared only for backends claiming re-delivery.
    redelivery_count: object = None
    alerted: object = None
    poisoned: object = None
    # Compared only for backends claiming execution-queries (owner, trigger) and
    # execution-options (options).
    owner: object = None
    trigger: object = None
    options: object = None


FIELD_REQUIREMENTS = {
    "status": ("LC-001", "LC-002"),
    "submitted_at": ("LC-004",),
    "started_at": ("LC-004",),
    "finished_at": ("LC-004",),
    "result": ("LC-006",),
    "error": ("LC-006", "LC-007"),
    "retry_count": ("RT-008", "RT-003"),
    "max_retries": ("RT-008", "RT-001"),
    "last_heartbeat": ("ST-001",),
    "redelivery_count": ("RD-004", "RD-001"),
    "alerted": ("RD-003",),
    "poisoned": ("RD-003",),
    "owner": ("LC-033",),
    "trigger": ("LC-033",),
    "options": ("LC-035",),
}


class Divergence(AssertionError):
    """The backend and the oracle disagree; the message is the whole explanation.

    `primary` is the one requirement the difference breaks (the most specific for the field
    and the command); the other requirements are only involved. `requirements` holds the
    primary first.
    """

    def __init__(self, requirements: tuple[str, ...], what: str, expected: object,
                 actual: object, commands: list[Command], titles: dict[str, str],
                 primary: str | None = None) -> None:
        self.requirements = ranked(requirements, primary)
        self.primary = self.requirements[0] if self.requirements else None
        self.what = what
        self.expected = with_standard_dates(expected)
        self.actual = with_standard_dates(actual)
        self.commands = list(commands)
        steps = "\n".join(f"    {i}. {describe(c)}" for i, c in enumerate(self.commands, 1))
        super().__init__(
            f"backend diverges from the spec after step {len(self.commands)}"
            f" ({describe(self.commands[-1]) if self.commands else 'start'})\n"
            f"  requirement(s): {named_requirements(self.requirements, titles)}\n"
            f"  what: {what}\n"
            f"  expected: {shown(self.expected)}\n"
            f"  actual:   {shown(self.actual)}\n"
            f"  commands so far:\n{steps}"
        )


def _cut_short(divergence: Divergence, command: cmd.StopBySignal) -> bool:
    """Whether a difference after a stop by signal under drain shows the work cut short
    at the signal: the process exited on it where the grace period had to run out, or a
    job cancelled where it ended by itself, or ended sooner than the drain let it."""
    expected, actual = divergence.expected, divergence.actual
    if divergence.what.startswith("the answer to "):
        return actual == cmd.exited_on(command.signal) and expected == cmd.ESCALATED_TO_SIGKILL
    if divergence.what.endswith(" status"):
        return actual == Status.CANCELLED.value and expected in (
            Status.SUCCEEDED.value, Status.FAILED.value)
    if divergence.what.endswith(" finished_at"):
        return (isinstance(expected, datetime) and isinstance(actual, datetime)
                and actual < expected)
    return False


def named_requirements(requirements: tuple[str, ...], titles: dict[str, str]) -> str:
    """`PRIMARY (title); also involved: X (title), ...`: the layout every report parses."""
    def named(rid: str) -> str:
        return f"{rid} ({titles[rid]})" if rid in titles else rid
    if not requirements:
        return ""
    text = named(requirements[0])
    if len(requirements) > 1:
        text += "; also involved: " + ", ".join(named(rid) for rid in requirements[1:])
    return text


@dataclass
class ListedDeviations:
    """How a harness goes past listed deviations (`--expected-failures`), the one way every
    area's harness shares (conformance/tolerance.py says why).

    `check` runs one command's two comparisons: its answer, then the state it left. A
    divergence whose primary requirement is listed is recorded instead of raised; one in
    the state after it, or after a tolerated wrong answer (that answer's doing), makes the
    oracle adopt what the backend shows, so that the deviation does not surface again at
    later steps under another requirement.
    """

    tolerated: frozenset[str] = field(default_factory=tolerance.tolerated)
    steps: dict[int, str] = field(default_factory=dict)  # step number -> tolerated primary

    def check(self, step: int, answer: Callable[[], None] | None = None,
              observe: Callable[[], None] | None = None,
              adopt: Callable[[], None] | None = None) -> None:
        """Compare step `step`'s answer and state; raise what is not listed.

        Args:
            answer: raises `Divergence` if the backend's answer differs; None for a step
                with no answer (time passing).
            observe: raises `Divergence` if the backend's state differs; None for an
                area whose answers are all a backend shows.
            adopt: replaces the oracle's view by what the backend shows.
        """
        tolerance.note_command(False)
        try:
            if answer is not None:
                answer()
        except Divergence as divergence:
            self.tolerate(step, divergence)
        if observe is None or adopt is None:
            return
        try:
            observe()
        except Divergence as divergence:
            self.tolerate(step, divergence, self.steps.get(step))
            adopt()
            tolerance.note_adopted()

    def tolerate(self, step: int, divergence: Divergence, cause: str | None = None) -> None:
        """Record a divergence whose primary is a listed deviation, or raise it.

        Args:
            cause: a listed deviation already tolerated at this step, which the
                divergence follows from.
        """
        primary = cause or divergence.primary
        if primary is None or primary not in self.tolerated:
            raise divergence
        tolerance.record(primary, str(divergence))
        self.steps[step] = primary
        tolerance.note_command(True)


_MISSING = "<missing>"
# Every attribute the harness reads from a job's view, but the deprecated attempt_number,
# which is read afresh (RT-011, see Harness._freeze): what a sealed view must hold still.
VIEW_NAMES = ("job_id", "arguments", *Record.__dataclass_fields__)


def freeze(view: JobView, with_retry: bool = False, with_stuck: bool = False,
           with_redelivery: bool = False, with_queries: bool = False,
           with_options: bool = False) -> Record:
    """The record of a backend's view, built in one call (observe runs this per job per step).

    A field of an area the backend does not claim stays None; a claimed field the view
    lacks reads "<missing>", so the comparison names it.
    """
    return Record(
        view.status, view.submitted_at, view.started_at, view.finished_at, view.result,
        view.error,
        getattr(view, "retry_count", _MISSING) if with_retry else None,
        getattr(view, "max_retries", _MISSING) if with_retry else None,
        getattr(view, "last_heartbeat", _MISSING) if with_stuck else None,
        getattr(view, "redelivery_count", _MISSING) if with_redelivery else None,
        getattr(view, "alerted", _MISSING) if with_redelivery else None,
        getattr(view, "poisoned", _MISSING) if with_redelivery else None,
        getattr(view, "owner", _MISSING) if with_queries else None,
        getattr(view, "trigger", _MISSING) if with_queries else None,
        getattr(view, "options", _MISSING) if with_options else None,
    )


def shown_arguments(value: object) -> str:
    """A runtime's arguments as the oracle's text, or what makes them no JSON value."""
    if value is _MISSING:
        return _MISSING
    try:
        return arguments_text(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return f"<not a JSON value: {value!r}>"


def expected_record(job: JobState, with_retry: bool = False,
                    with_stuck: bool = False, with_redelivery: bool = False,
                    with_queries: bool = False, with_options: bool = False) -> Record:
    """The record the oracle's job must read as, built in one call like `freeze`."""
    return Record(
        job.status.value, job.submitted_at, job.started_at, job.finished_at, job.result,
        job.error,
        job.retry_count if with_retry else None,
        job.max_retries if with_retry else None,
        job.last_heartbeat if with_stuck else None,
        job.redelivery_count if with_redelivery else None,
        job.alerted if with_redelivery else None,
        job.poisoned if with_redelivery else None,
        job.owner if with_queries else None,
        job.trigger if with_queries else None,
        job.options if with_options else None,
    )


def health_of(view: HealthView) -> Health:
    return Health(view.queued, view.running, view.total, view.processed, view.failed,
                  view.cancelled)


@dataclass(frozen=True)
class GracePeriodOpened:
    """A front-end's way to write a stop by signal step by step (RS-006): the signal is
    sent, and the bodies ending (`Finish`) and time passing (`AdvanceTime`) the harness
    is given next are the steps during the grace period, until `GracePeriodEnds` runs the
    whole stop as one `StopBySignal`. Nothing is read in between: the process may have
    exited."""

    signal: str
    grace_seconds: float


@dataclass(frozen=True)
class GracePeriodEnds:
    """The end of the grace period `GracePeriodOpened` began: the stop runs now."""


@dataclass
class Harness:
    """Differential execution of commands on one backend runtime and the oracle.

    Args:
        backend: the adapter under test.
        profile: the profile whose defaults apply.
        registry: the spec, for requirement titles in messages.
        max_concurrent, max_tasks: override the profile's limits for this check.
    """

    backend: Backend
    profile: Profile
    registry: Registry | None = None
    max_concurrent: int | None = None
    max_tasks: int | None = None
    unlimited_tasks: bool = False
    max_redelivery: int | None = None
    # The executions query's page size (LC-032), instead of the profile's.
    page_size: int | None = None
    # The reaper defaults the runtime is configured with, instead of the profile's.
    reaper_ttl_seconds: float | None = None
    reaper_sweep_interval_ms: float | None = None
    safety_timeout: float = SAFETY_TIMEOUT_SECONDS
    # Queued execution switched off (LC-037): only for a backend claiming the switch.
    queued_execution: bool = True
    clock: VirtualClock = field(default_factory=lambda: VirtualClock(EPOCH))
    commands: list[Command] = field(default_factory=list)
    exercised: set[str] = field(default_factory=set)
    # Listed deviations (--expected-failures): recorded and passed over, not raised.
    tolerated: frozenset[str] = field(default_factory=tolerance.tolerated)

    def __post_init__(self) -> None:
        if self.unlimited_tasks:
            max_tasks = None
        else:
            max_tasks = self.profile.max_tasks if self.max_tasks is None else self.max_tasks
        max_concurrent = (self.profile.max_concurrent if self.max_concurrent is None
                          else self.max_concurrent)
        if max_concurrent < 1 or (max_tasks is not None and max_tasks < 1):
            raise ValueError(f"limits must be at least 1: max_concurrent={max_concurrent},"
                             f" max_tasks={max_tasks}")
        # Retry is checked only where the backend claims it and the profile has the area.
        self.claims_retry = RETRY in self.backend.capabilities and RETRY in self.profile.areas
        # A `retry-intervals` claim: its retries wait out the intervals the kit gives it.
        self.delays_given = self.claims_retry and RETRY_INTERVALS in self.backend.capabilities
        self.claims_stuck = STUCK in self.backend.capabilities and STUCK in self.profile.areas
        self.claims_reaper = (REAPER in self.backend.capabilities
                              and REAPER in self.profile.areas)
        self.claims_redelivery = (REDELIVERY in self.backend.capabilities
                                  and REDELIVERY in self.profile.areas)
        # The operator queue keyed by agent and request id (RD-008): only where claimed.
        self.claims_operator_queue = (self.claims_redelivery
                                      and OPERATOR_QUEUE in self.backend.capabilities)
        # Store faults in a lease pass (RD-007) and in the reaper's sweeps (RP-008).
        self.faults_redelivery = (self.claims_redelivery
                                  and store_faults(REDELIVERY) in self.backend.capabilities)
        self.faults_reaper = (self.claims_reaper
                              and store_faults(REAPER) in self.backend.capabilities)
        # The health report's worker fields (LC-029; ST-005 where stuck is claimed too):
        # read only where the backend claims them, so an older adapter is "not claimed".
        self.claims_health_report = HEALTH_REPORT in self.backend.capabilities
        self._report_requirements: tuple[str, ...] = (
            ("LC-029",) if self.claims_health_report else ()) + (
            ("ST-005",) if self.claims_health_report and self.claims_stuck else ())
        self.worker_id: str | None = None  # as the first snapshot named it
        self.claims_restart = RESTART in self.backend.capabilities
        # A stop by signal (RS-004) needs a restart too: the new runtime opens after it.
        self.claims_stop_signal = (self.claims_restart
                                   and STOP_SIGNAL in self.backend.capabilities)
        self._orphans_before: set[str] = set()  # the oracle's orphans before the command
        self._handlers_read = False  # a stop by signal reported the host's handlers (RS-008)
        # A stop written step by step (GracePeriodOpened): the signal, and its steps so far.
        self._grace_period: tuple[GracePeriodOpened, list[cmd.Finish | cmd.AdvanceTime]] | None
        self._grace_period = None
        # Submissions from several threads at once (LC-030): only where claimed, so an
        # adapter driving one event loop is "not claimed", never called from two threads.
        self.claims_concurrent_submit = CONCURRENT_SUBMIT in self.backend.capabilities
        # The executions query (LC-032..LC-034) and a job's execution options (LC-035):
        # the names and options are passed, and the records' fields read, only where claimed.
        self.claims_queries = EXECUTION_QUERIES in self.backend.capabilities
        self.claims_options = EXECUTION_OPTIONS in self.backend.capabilities
        # Jobs' arguments (LC-036): passed and read only where claimed.
        self.claims_arguments = JOB_ARGUMENTS in self.backend.capabilities
        if not self.queued_execution and (
                QUEUED_EXECUTION_SWITCH not in self.backend.capabilities):
            raise ValueError(f"backend {self.backend.name!r} does not claim"
                             f" {QUEUED_EXECUTION_SWITCH}: it cannot be opened with queued"
                             " execution off (LC-037 is not claimed)")
        # Seed 004's deprecated names (RT-011 attempt_number, RP-010 start_reaper's old
        # keywords): called and read only where the backend keeps them.
        self.keeps_aliases = DEPRECATED_ALIASES in self.backend.capabilities
        # Whether the running reaper was started through the deprecated keywords: a sweep
        # it then makes at the wrong time is first RP-010's (`_restart_blamed`).
        self.reaper_by_old_names = False
        self.settings = RuntimeSettings(max_concurrent=max_concurrent, max_tasks=max_tasks,
                                        queued_execution=self.queued_execution,
                                        **self._area_defaults(), **self._lifecycle_defaults())
        self.model = ReferenceModel(self.settings, self.clock.now())
        self._titles = (
            {r.id: r.title for r in self.registry.requirements} if self.registry else {}
        )
        self.ids: dict[str, str] = {}  # alias -> backend id
        self.aliases: dict[str, str] = {}  # backend id -> alias
        # The operator queue's ids as the runtime minted them -> "request n" (RD-008).
        self.request_labels: dict[str, str] = {}
        self.scripts: dict[str, TaskScript] = {}
        self.held: dict[str, tuple[JobView, Record]] = {}
        # The views that cannot change (sealed_views), by id, with what was read from them;
        # after a full observation, only those still held.
        self._sealed: dict[int, SealedView[Record]] = {}
        self._sealed_added = False  # a view was sealed since `_sealed` was last rebuilt
        # Each job's expected record, for the oracle's record it was built from.
        self._expected_records: dict[str, tuple[JobState, Record]] = {}
        # The jobs whose latest expected record holds an error or result of LONG_TEXT
        # characters or more (LC-039), noted as the record is built.
        self._long_texts: set[str] = set()
        # Each job's expected and actual records that agreed at the latest observation.
        self._agreed: dict[str, tuple[Record, Record]] = {}
        self.last_answer: object = None
        self._before: dict[str, JobState] = {}
        self._command_requirements: tuple[str, ...] = ()
        self._fault_divergence: Divergence | None = None  # see defer_fault
        self._changes_only = False  # see comparing_changes_only
        # The job the latest command's record was read straight after it returned, and
        # compared with the oracle's record after the command (_read_at_once).
        self._read_at_once_job: str | None = None
        self.listed = ListedDeviations(self.tolerated)
        # Once a call of this backend's runtime hangs, the later ones are not tried.
        self.hang_scope = f"{self.backend.name!r} runtime"
        with guarded(self.safety_timeout, f"opening backend {self.backend.name!r}",
                     self.hang_scope):
            self.runtime: Runtime = self._call("open", lambda: self.backend.open(
                self.settings, self.clock))
        self.operator_queue = self._attach_operator_queue()
        # The runtime's log records (AD-025.., RP-009, LC-040): read only where claimed.
        self.log_watch = (LogWatch(self.backend, self.runtime)
                          if LOG_RECORDS in self.backend.capabilities else None)

    def _attach_operator_queue(self) -> OperatorQueue | None:
        """The harness's operator sink, where the runtime accepts one (OperatorSinkRuntime);
        otherwise alerts are only pulled, with `operator_alerts()`."""
        attach: object = getattr(self.runtime, "attach_operator_sink", None)
        if not self.claims_redelivery or not callable(attach):
            return None
        runtime = self.runtime
        queue = OperatorQueue(lambda job_id: runtime.get(job_id))
        self._call("attach_operator_sink", lambda: attach(queue))
        return queue

    def _lifecycle_defaults(self) -> dict[str, Any]:
        """The profile's lifecycle parameters: how cancel treats a running body (LC-013,
        LC-026) and how shutdown ends active jobs (LC-022, LC-028). A profile that sets
        none has the cooperative cancel and the cancel-mode shutdown."""
        values = self.profile.area_parameters.get(LIFECYCLE, {})
        mode = str(values.get("shutdown_mode", SHUTDOWN_CANCEL))
        if mode not in SHUTDOWN_MODES:
            raise ValueError(f"profile {self.profile.name!r}: shutdown_mode is one of"
                             f" {', '.join(SHUTDOWN_MODES)}, not {mode!r}")
        timeout = float(values.get("drain_timeout_seconds", 30.0))  # type: ignore[arg-type]
        if not 0 <= timeout < float("inf"):
            raise ValueError(f"profile {self.profile.name!r}: drain_timeout_seconds is a"
                             f" finite number >= 0, not {timeout!r}")
        page_size = (int(values.get("page_size", PAGE_SIZE))  # type: ignore[arg-type]
                     if self.page_size is None else self.page_size)
        if page_size < 1:
            raise ValueError(f"a page holds at least one job, not page_size={page_size}")
        return {"cancel_interrupts": values.get("cancel_running") == "interrupt",
                "shutdown_mode": mode, "drain_timeout_seconds": timeout,
                "modules": HARNESS_MODULES, "page_size": page_size}

    def _area_defaults(self) -> dict[str, Any]:
        """The runtime's configured defaults: the profile's, for the areas it has."""
        defaults: dict[str, Any] = {}
        if REAPER in self.profile.areas:
            defaults["reaper_ttl_seconds"] = float(
                self.profile.parameter(REAPER, "ttl_seconds"))  # type: ignore[arg-type]
            defaults["reaper_sweep_interval_ms"] = float(
                self.profile.parameter(REAPER, "sweep_interval_ms"))  # type: ignore[arg-type]
        if REDELIVERY in self.profile.areas:
            defaults["max_redelivery"] = int(
                self.profile.parameter(REDELIVERY, "max_redelivery"))  # type: ignore[arg-type]
        if self.reaper_ttl_seconds is not None or self.reaper_sweep_interval_ms is not None:
            defaults["reaper_ttl_seconds"] = (
                self.reaper_ttl_seconds if self.reaper_ttl_seconds is not None
                else defaults.get("reaper_ttl_seconds", 3600.0))
            defaults["reaper_sweep_interval_ms"] = (
                self.reaper_sweep_interval_ms if self.reaper_sweep_interval_ms is not None
                else defaults.get("reaper_sweep_interval_ms", 300_000.0))
            check_reaper_settings(defaults["reaper_ttl_seconds"],
                                  defaults["reaper_sweep_interval_ms"])
        if self.max_redelivery is not None:
            if self.max_redelivery < 0:
                raise ValueError(f"a re-delivery cap is at least 0, not {self.max_redelivery}")
            defaults["max_redelivery"] = self.max_redelivery
        return defaults

    # -- the one operation -------------------------------------------------------------

    def run(self, command: Command | GracePeriodOpened | GracePeriodEnds) -> object:
        """Apply `command` to both sides, compare everything, return the backend's answer.
        Between `GracePeriodOpened` and `GracePeriodEnds` the steps are kept for the
        stop they build (answered None), which runs at the end.

        Raises:
            Divergence: the backend's answer or state differs from the oracle's.
            AdapterError: the adapter raised outside its contract or hung.
            ValueError: the command itself is malformed (e.g. an alias used twice).
        """
        if isinstance(command, GracePeriodOpened | GracePeriodEnds) or (
                self._grace_period is not None):
            return self._grace_period_step(command)
        self._check_command(command)
        self.commands.append(command)
        self._fault_divergence = None
        self._handlers_read = False
        self._read_at_once_job = None
        tolerance.note_command(False)
        # The oracle's records before the command: blame ranking asks what a job was.
        self._before = dict(self.model.jobs)
        self._orphans_before = set(self.model.orphans)
        # The scripts as they were: the oracle keeps each that the command changes
        # (`ReferenceModel.script_before`), rather than every script copied here.
        if self.log_watch is not None:
            self.log_watch.discard()  # a command is checked on the records it made
        if isinstance(command, cmd.StartReaper) and self.model.reaper is None:
            self.reaper_by_old_names = command.old_names  # the reaper this start runs
        expected = self.model.apply(command)
        self._command_requirements = expected.requirements
        tolerance.note_command(False, self.last_command_named)
        actual: object = None
        read_at_once: str | None = None
        with guarded(self.safety_timeout, partial(describe, command), self.hang_scope):
            try:
                if isinstance(command, ONE_CALL_COMMANDS):
                    self._plan_observation(with_command=True)
                actual = self._apply(command)
                self.last_answer = actual
                read_at_once = self._read_at_once(command)
                self.listed.check(
                    len(self.commands),
                    partial(self._restart_blamed, partial(
                        self._compare_answer, command, expected.answer, actual,
                        expected.requirements)),
                    partial(self._restart_blamed, partial(self._observe_command,
                                                          expected.requirements)),
                    self._adopt_backend_state)
            except (Divergence, ValueError, AdapterHung):
                raise  # a hang is the adapter's verdict, never a requirement's
            except AdapterError as error:
                primary = self._raised_primary(command, expected.requirements)
                if primary not in self.tolerated:
                    # Chained to what the adapter raised, as the error itself is.
                    raise self._adapter_error(command, ranked(expected.requirements, primary),
                                              error) from error.__cause__ or error
                self._tolerate_raise(command, expected.requirements, error, primary)
            except Exception as error:
                # The backend handed back something the harness cannot read (a dict for a
                # record, a string for a count): an error of the command, not of the kit.
                raise self._adapter_error(command, expected.requirements, AdapterError(
                    f"adapter {self.backend.name!r}: {type(error).__name__}: {error}")) from error
        # Only requirements whose observations passed count as exercised.
        self.exercised.update(expected.requirements)
        if read_at_once is not None:
            self.exercised.add(read_at_once)
        if self._handlers_read:
            self.exercised.add("RS-008")  # the stop's report said where the handlers were
        self.exercised.update(OBSERVED_ALWAYS)
        self.exercised.update(self._report_requirements)
        return actual

    def run_oracle(self, command: Command | GracePeriodOpened | GracePeriodEnds) -> object:
        """The command applied to the oracle alone, the clock moved as `_apply` moves it:
        the oracle's answer (the cost floor, see machine_runner.oracle_alone)."""
        if isinstance(command, GracePeriodOpened | GracePeriodEnds) or (
                self._grace_period is not None):
            return self._grace_period_step(command, self.run_oracle)
        self._check_command(command)
        self.commands.append(command)
        answer = self.model.apply(command).answer
        if isinstance(command, cmd.AdvanceTime):
            self.clock.advance(command.seconds)
        return answer

    def _grace_period_step(self, step: Command | GracePeriodOpened | GracePeriodEnds,
                           run: Callable[[Command], object] | None = None) -> object:
        """Keep a step of a stop written step by step, or run the stop at its end (through
        `run`, the harness's own by default)."""
        if isinstance(step, GracePeriodOpened):
            if self._grace_period is not None:
                raise ValueError("a grace period is under way already; end it first")
            self._grace_period = (step, [])
            return None
        if self._grace_period is None:
            raise ValueError("the grace period ends only after a signal opened it")
        opened, steps = self._grace_period
        if isinstance(step, GracePeriodEnds):
            self._grace_period = None
            return (run or self.run)(cmd.StopBySignal(opened.grace_seconds, opened.signal,
                                                      tuple(steps)))
        if not isinstance(step, cmd.Finish | cmd.AdvanceTime):
            raise ValueError(f"between the signal and the grace period's end only bodies end"
                             f" and time passes; {describe(step)} cannot come there (and"
                             " nothing is read: the process may have exited)")
        steps.append(step)
        return None

    def _raised_primary(self, command: Command, requirements: tuple[str, ...]) -> str | None:
        """The requirement a command the adapter raised on breaks: the part of the delay
        that raises for a delay question, else the command's primary."""
        if isinstance(command, cmd.ComputeDelay):
            return self._delay_primary(command)
        return ranked(requirements)[0] if requirements else None

    def _tolerate_raise(self, command: Command, requirements: tuple[str, ...],
                        error: AdapterError, primary: str) -> None:
        """A listed deviation that raises is recorded like one that answers wrong; the
        command has no answer, and the oracle adopts the state the runtime shows."""
        requirements = ranked(requirements, primary)
        self._command_requirements = requirements
        message = str(self._adapter_error(command, requirements, error))
        step = len(self.commands)
        self.listed.tolerate(step, Divergence(requirements, "the adapter raised", "an answer",
                                              message, self.commands, self._titles, primary))
        self.listed.check(step, None, partial(self._observe_command, requirements),
                          self._adopt_backend_state)
        tolerance.note_command(True)

    def last_command_ranked(self) -> tuple[str, ...]:
        """The latest command's requirements, primary first."""
        return ranked(self._command_requirements)

    def last_command_named(self) -> str:
        """The latest command's requirements, primary first, with titles."""
        return named_requirements(ranked(self._command_requirements), self._titles)

    def _adopt_backend_state(self) -> None:
        """Take the runtime's whole observable state into the oracle after a listed
        deviation, so that its consequences are never judged again under another
        requirement: every record the runtime holds (a submission the spec refuses that it
        accepted included), in its listing order, with the runtime's start counts, retry
        schedules and queue order as far as they show, and its outcome counters. A record
        with a sixth status is left as the oracle has it."""
        views = list(self._call("list_jobs", lambda: self.runtime.list_jobs(None)))
        held = {self.aliases[view.job_id]: view for view in views
                if view.job_id in self.aliases}
        for gone in [alias for alias in self.model.jobs if alias not in held]:
            del self.model.jobs[gone]  # removed by the backend
        started: list[str] = []  # jobs the runtime started in this command
        waiting: list[str] = []  # jobs it left waiting where the oracle started them
        for alias, view in held.items():
            record = self._freeze(view)
            try:
                status = Status(record.status)
            except ValueError:
                continue
            if alias not in self.model.jobs:
                self._adopt_submission(alias, record)
            self._adopt_record(alias, status, record, started, waiting)
        self.model.adopt_listing([alias for alias in held if alias in self.model.jobs])
        if started and waiting:
            # A runtime that queues a due retry behind the jobs it started queues every
            # due retry it left there alike (a scheduler moving due retries to the tail,
            # in their order), not only the ones the oracle would have started now.
            now = self.clock.now()
            self.model.requeue_at_tail(waiting + [
                alias for alias, job in self.model.jobs.items()
                if alias not in waiting and alias not in started
                and job.status is Status.QUEUED and job.retry_count > 0
                and job.next_attempt_at is not None and job.next_attempt_at <= now])
        if self.claims_redelivery:  # the alerts it raised, or did not (RD-003)
            alerts = self._call("operator_alerts", self._area_method("operator_alerts"))
            self.model.alerts = [self.aliases[job_id] for job_id in alerts
                                 if job_id in self.aliases]
        if self.claims_operator_queue:  # the requests it holds, as it keys them (RD-008)
            self.model.operator_requests = [(agent, request) for _, agent, request
                                            in self._operator_requests()]
        health_view = self._call("health", self.runtime.health)
        health = health_of(health_view)
        self.model.processed, self.model.failed, self.model.cancelled = (
            health.processed, health.failed, health.cancelled)
        heartbeat = getattr(health_view, "last_heartbeat", None)
        if self.claims_health_report and isinstance(heartbeat, datetime):
            self.model.last_heartbeat = heartbeat
        if self.operator_queue is not None:
            self.model.alert_states = [(self.aliases.get(job_id, job_id), str(status))
                                       for job_id, status in self.operator_queue.raised()]

    def _adopt_submission(self, alias: str, record: Record) -> None:
        """A job the runtime holds that the oracle refused: the oracle holds it too."""
        # A job of a concurrent batch was submitted with the defaults.
        submit = next((command for command in reversed(self.commands)
                       if isinstance(command, cmd.Submit) and command.job == alias),
                      cmd.Submit(alias))
        submitted_at = (record.submitted_at if isinstance(record.submitted_at, datetime)
                        else self.clock.now())
        self.model.adopt_submission(submit, submitted_at)

    def _adopt_record(self, alias: str, status: Status, record: Record,
                      started: list[str], waiting: list[str]) -> None:
        """One job's record, with what the runtime's record says of its attempts."""
        job = self.model.jobs[alias]
        script = self.model.scripts[alias]
        before = self._before.get(alias)
        outcome, starts, cancel_requested, _, _ = self.model.script_before(alias)
        self.model.note_script(alias)  # changed below: its state before stays kept
        if job.status is Status.CANCELLED and status is not Status.CANCELLED:
            script.cancel_requested = cancel_requested  # the runtime did not cancel it
        if (before is not None and status is before.status is Status.QUEUED
                and record.started_at == before.started_at
                and (not self.claims_retry or record.retry_count == before.retry_count)
                and (not self.claims_redelivery
                     or record.redelivery_count == before.redelivery_count)):
            # The runtime left the job as it was: so does the oracle, with its decided
            # outcome and its starts. A job that was due waits at the tail of the queue
            # when the runtime started others instead, or until the runtime's own delay
            # has passed. The oracle may have started it and seen it fail back into the
            # queue at once (a retry with no delay): queued again, but not as it was.
            if job != before or script.starts != starts:
                script.outcome, script.starts = outcome, starts
                kept = self._adopted_schedule(alias, before)
                if kept.next_attempt_at == before.next_attempt_at:
                    waiting.append(alias)  # it was due: the runtime queued others ahead
                self.model.jobs[alias] = kept
            return
        adopted = replace(job, status=status, started_at=record.started_at,
                          finished_at=record.finished_at,
                          result=cast(JsonValue, record.result), error=record.error)
        if self._runtime_started(before, status, record):
            # The attempt the runtime started is the one start of this command (the
            # clock may not have moved, so started_at alone cannot tell).
            script.starts = starts + 1
            started.append(alias)
        elif before is not None:
            script.starts = starts
        harness_script = self.scripts.get(alias)
        if harness_script is not None:
            script.starts = max(script.starts, harness_script.invocations)
        if self.claims_stuck and isinstance(record.last_heartbeat, datetime | None):
            adopted = replace(adopted, last_heartbeat=record.last_heartbeat)
        if self.claims_retry and isinstance(record.retry_count, int):
            if status is Status.QUEUED and record.retry_count > job.retry_count:
                # A retry the oracle did not make: the next attempt waits for its own
                # decision, at the time the runtime's own delay function gives.
                script.outcome = None
                script.retried_at, script.retry_after_ms = self.clock.now(), None
                adopted = replace(adopted, next_attempt_at=self._runtime_due(
                    script.policy, record.retry_count - 1, self.clock.now(), None))
            adopted = replace(adopted, retry_count=record.retry_count)
        if self.claims_redelivery and isinstance(record.redelivery_count, int):
            # A lease pass the oracle did not make, or made differently (RD-001..RD-005).
            adopted = replace(adopted, redelivery_count=record.redelivery_count,
                              alerted=record.alerted is True, poisoned=record.poisoned is True)
        self.model.jobs[alias] = adopted

    def _runtime_started(self, before: JobState | None, status: Status,
                         record: Record) -> bool:
        """Whether the runtime started an attempt of a job during the latest command: it
        was queued before, and now runs, has ended after a start, or was retried."""
        if before is None or before.status is not Status.QUEUED:
            return before is None and record.started_at is not None
        retried = (self.claims_retry and isinstance(record.retry_count, int)
                   and record.retry_count > before.retry_count)
        return status is Status.RUNNING or retried or (
            status in (Status.SUCCEEDED, Status.FAILED) and record.started_at is not None)

    def _adopted_schedule(self, alias: str, before: JobState) -> JobState:
        """A job in backoff the runtime did not start: due when its own delay ends."""
        script = self.model.scripts[alias]
        if not before.retry_count or script.retried_at is None:
            return before
        due = self._runtime_due(script.policy, before.retry_count - 1, script.retried_at,
                                script.retry_after_ms)
        if due is None or due <= self.clock.now():
            return before
        return replace(before, next_attempt_at=due)

    def _runtime_due(self, policy: RetryPolicy | None, attempt: int, retried_at: datetime,
                     retry_after_ms: float | None) -> datetime | None:
        """When the runtime's own delay function says a retry scheduled at `retried_at`
        is due; None where it gives no answer (no policy, no function, or it raises)."""
        backend_delay = self._backend_delay()
        if policy is None or backend_delay is None:
            return None
        try:
            delay = backend_delay(cmd.ComputeDelay(policy, attempt,
                                                   retry_after_ms=retry_after_ms))
        except Exception:  # a raising delay function is that deviation's own report
            return None
        return retried_at + timedelta(milliseconds=delay) if delay >= 0 else None

    def _adapter_error(self, command: Command, requirements: tuple[str, ...],
                       error: AdapterError) -> AdapterError:
        """The error with the command that raised and its requirement (primary first)."""
        if "\n  requirement(s): " in str(error):
            return error
        # A delay function that raised is blamed like one that answered wrong.
        named = named_requirements(
            ranked(requirements, self._raised_primary(command, requirements)), self._titles)
        return AdapterError(f"{error}\n  during: {describe(command)} (step"
                            f" {len(self.commands)})\n  requirement(s): {named}")

    def run_all(self, commands: list[Command]) -> None:
        for command in commands:
            self.run(command)

    def close(self) -> None:
        with guarded(self.safety_timeout, "close", self.hang_scope):
            self._call("close", self.runtime.close)
        if self.log_watch is not None:
            self.log_watch.close()

    # -- applying a command to the backend ---------------------------------------------

    def _check_command(self, command: Command) -> None:
        uses_retry = isinstance(command, cmd.ComputeDelay) or (
            isinstance(command, cmd.Submit) and command.retry is not None)
        if uses_retry and not self.claims_retry:
            raise ValueError(f"backend {self.backend.name!r} does not claim the retry area;"
                             f" {describe(command)} cannot be checked on it")
        reaper_commands = (cmd.StartReaper | cmd.StopReaper | cmd.StoreOutage | cmd.ReaperStatus
                           | cmd.ListExpired)
        if isinstance(command, reaper_commands) and not self.claims_reaper:
            raise ValueError(f"backend {self.backend.name!r} does not claim the reaper area;"
                             f" {describe(command)} cannot be checked on it")
        if isinstance(command, cmd.StartReaper) and command.old_names:
            if not self.keeps_aliases:
                raise ValueError(f"backend {self.backend.name!r} does not claim"
                                 f" {DEPRECATED_ALIASES}; {describe(command)} cannot be"
                                 " checked on it")
            if command.ttl_seconds is None and command.sweep_interval_ms is None:
                raise ValueError("a start through the deprecated keywords names at least one"
                                 " of them")
        if isinstance(command, cmd.ExpireLeases | cmd.OperatorAlerts | cmd.StaleOwnerWrite) and (
                not self.claims_redelivery):
            raise ValueError(f"backend {self.backend.name!r} does not claim the redelivery"
                             f" area; {describe(command)} cannot be checked on it")
        if isinstance(command, cmd.ParkRequest | cmd.OperatorRequests) and (
                not self.claims_operator_queue):
            raise ValueError(f"backend {self.backend.name!r} does not claim the redelivery"
                             f" area with {OPERATOR_QUEUE}; {describe(command)} cannot be"
                             " checked on it")
        self._check_values(command)
        if isinstance(command, cmd.Heartbeat) and not (self.claims_stuck
                                                       or self.claims_redelivery):
            raise ValueError(f"backend {self.backend.name!r} claims neither the stuck nor the"
                             f" redelivery area; {describe(command)} cannot be checked on it")
        if isinstance(command, cmd.DetectStuck) and not self.claims_stuck:
            raise ValueError(f"backend {self.backend.name!r} does not claim the stuck area;"
                             f" {describe(command)} cannot be checked on it")
        if isinstance(command, cmd.DetectStuck) and not (
                0 <= command.job_timeout_seconds < float("inf")):
            raise ValueError("stuck detection needs a finite timeout >= 0, not"
                             f" {command.job_timeout_seconds!r}")
        if isinstance(command, cmd.JobStoreFault):
            self._check_command(command.command)
            job_faults.check_fault_command(self, command)
        if isinstance(command, cmd.Submit) and (
                command.owner is not None or command.trigger is not None) and (
                not self.claims_queries):
            raise ValueError(f"backend {self.backend.name!r} does not claim"
                             f" {EXECUTION_QUERIES}; {describe(command)} cannot be checked on"
                             " it")
        if isinstance(command, cmd.QueryExecutions | cmd.ExecutionStats) and (
                not self.claims_queries):
            raise ValueError(f"backend {self.backend.name!r} does not claim"
                             f" {EXECUTION_QUERIES}; {describe(command)} cannot be checked on"
                             " it")
        if isinstance(command, cmd.Submit) and command.options is not None and (
                not self.claims_options):
            raise ValueError(f"backend {self.backend.name!r} does not claim"
                             f" {EXECUTION_OPTIONS}; {describe(command)} cannot be checked on"
                             " it")
        if isinstance(command, cmd.Submit) and command.job in self.ids:
            raise ValueError(f"job alias {command.job!r} is already used; pick a new one")
        if isinstance(command, cmd.SubmitConcurrently):
            self._check_concurrent_submit(command)
        if isinstance(command, cmd.AdvanceTime) and not 0 <= command.seconds < float("inf"):
            raise ValueError(f"time advances by a finite amount >= 0, not {command.seconds!r}")
        if isinstance(command, cmd.Cleanup) and not 0 <= command.max_age_seconds < float("inf"):
            raise ValueError(f"cleanup needs a finite age >= 0, not {command.max_age_seconds!r}")
        self._check_restart_command(command)

    def _check_restart_command(self, command: Command) -> None:
        """A restart needs the claim; the body of a job running at a restart went with the
        old process, so nothing may decide, cancel or beat for it, and what a shutdown does
        to work no process runs is not specified, until a lease pass re-queues it."""
        if isinstance(command, cmd.Restart) and not self.claims_restart:
            raise ValueError(f"backend {self.backend.name!r} does not claim {RESTART};"
                             f" {describe(command)} cannot be checked on it")
        if isinstance(command, cmd.StopBySignal):
            if not self.claims_stop_signal:
                raise ValueError(f"backend {self.backend.name!r} does not claim {RESTART} and"
                                 f" {STOP_SIGNAL}; {describe(command)} cannot be checked on it")
            self._check_grace_period(command)
        orphans = self.model.orphans
        if isinstance(command, cmd.Finish | cmd.Heartbeat | cmd.Cancel) and (
                command.job in orphans):
            raise ValueError(f"job {command.job!r} was running at the restart: its body is"
                             f" gone, so {describe(command)} has nothing to act on until a"
                             " lease pass re-queues it")
        if isinstance(command, cmd.Shutdown | cmd.StopBySignal) and orphans:
            raise ValueError(f"jobs {sorted(orphans)} were running at the restart and no"
                             " process runs them: re-queue them (a lease pass) before a"
                             " shutdown")

    def _check_grace_period(self, command: cmd.StopBySignal) -> None:
        """The signal is one of the two, and the steps in the grace period are bodies
        ending and time passing that fit in it (each step checked as on its own)."""
        if command.signal not in cmd.STOP_SIGNALS:
            raise ValueError(f"a stop signal is one of {', '.join(cmd.STOP_SIGNALS)}, not"
                             f" {command.signal!r}")
        if not 0 <= command.grace_seconds < float("inf"):
            raise ValueError("a grace period is a finite number of seconds >= 0, not"
                             f" {command.grace_seconds!r}")
        passed = 0.0
        for step in command.during:
            if not isinstance(step, cmd.Finish | cmd.AdvanceTime):
                raise ValueError("the steps during a grace period are bodies ending (Finish)"
                                 f" and time passing (AdvanceTime), not {describe(step)}")
            self._check_command(step)
            passed += step.seconds if isinstance(step, cmd.AdvanceTime) else 0.0
        if passed > command.grace_seconds:
            raise ValueError(f"the steps during the grace period let {passed:g} s pass, more"
                             f" than the grace period ({command.grace_seconds:g} s)")

    def _check_concurrent_submit(self, command: cmd.SubmitConcurrently) -> None:
        """A concurrent submit (LC-030) needs the claim, new aliases, and room for all."""
        if not self.claims_concurrent_submit:
            raise ValueError(f"backend {self.backend.name!r} does not claim"
                             f" {CONCURRENT_SUBMIT}; {describe(command)} cannot be checked"
                             " on it")
        used = [alias for alias in command.jobs if alias in self.ids or alias in self.model.jobs]
        if used:
            raise ValueError(f"job aliases {used} are already used; pick new ones")
        cap = self.settings.max_tasks
        if cap is not None and not self.model.shut_down and (
                len(self.model.jobs) + len(command.jobs) > cap):
            raise ValueError(f"{describe(command)} must fit under the task cap"
                             f" ({len(self.model.jobs)} of {cap} held): which of them a full"
                             " cap refuses depends on the threads' order")

    @staticmethod
    def _check_values(command: Command) -> None:
        """Values of the reaper and re-delivery commands, with what to write instead."""
        if isinstance(command, cmd.StartReaper):
            check_reaper_settings(3600.0 if command.ttl_seconds is None else command.ttl_seconds,
                                  1.0 if command.sweep_interval_ms is None
                                  else command.sweep_interval_ms)
        if isinstance(command, cmd.StoreOutage) and command.sweeps < 1:
            raise ValueError(f"a store outage lasts at least 1 sweep, not {command.sweeps!r}")
        if isinstance(command, cmd.ListExpired) and not (
                0 <= command.older_than_seconds < float("inf")):
            raise ValueError("list_expired needs a finite age >= 0, not"
                             f" {command.older_than_seconds!r}")
        if isinstance(command, cmd.ExpireLeases) and not (
                0 <= command.lease_seconds < float("inf")):
            raise ValueError(f"a lease is a finite number of seconds >= 0, not"
                             f" {command.lease_seconds!r}")
        if isinstance(command, cmd.StaleOwnerWrite) and command.write not in cmd.STALE_WRITES:
            raise ValueError(f"a stale owner writes one of {', '.join(cmd.STALE_WRITES)},"
                             f" not {command.write!r}")

    def _call(self, action: str, function: Callable[[], T]) -> T:
        answer = call_adapter(
            function, action, backend=self.backend.name, protocol="the protocol",
            allowed=(Divergence, AdapterError, JobNotFound, JobNotCompleted, CapacityExceeded,
                     RuntimeShutDown, ReaperAlreadyRunning, InvalidModuleId, ModuleNotFound),
            hang_scope=self.hang_scope)
        problem = shape_problem(action, answer)
        if problem is not None:
            raise AdapterError(f"adapter {self.backend.name!r}: {problem}")
        return answer

    def _area_method(self, name: str) -> Callable[..., Any]:
        """A runtime method that only the areas beyond the lifecycle need."""
        method: object = getattr(self.runtime, name, None)
        if not callable(method):
            raise AdapterError(f"adapter {self.backend.name!r} claims the area that needs"
                               f" Runtime.{name}, but its runtime has no such method")
        return method

    def _backend_id(self, alias: str) -> str:
        # A job the harness never managed to submit gets an id no backend holds.
        return self.ids.get(alias, f"unknown-{alias}")

    def _apply(self, command: Command) -> object:
        runtime = self.runtime
        match command:
            case cmd.Submit():
                return self._submit(command)
            case cmd.SubmitConcurrently():
                return self._submit_concurrently(command)
            case cmd.Dispatch():
                self._call("dispatch", runtime.dispatch)
            case cmd.Finish():
                script = self.scripts.get(command.job)
                if script is not None:
                    script.decide(command.outcome)
            case cmd.Cancel():
                job_id = self._backend_id(command.job)
                return self._call("cancel", lambda: runtime.cancel(job_id))
            case cmd.AdvanceTime():
                self.clock.advance(command.seconds)
            case cmd.Cleanup():
                age = command.max_age_seconds
                return self._call("cleanup", lambda: runtime.cleanup(age))
            case cmd.Shutdown():
                self._call("shutdown", runtime.shutdown)
            case cmd.GetResult():
                return self._get_result(command.job)
            case cmd.Get():
                job_id = self._backend_id(command.job)
                view = self._call("get", lambda: runtime.get(job_id))
                if view is not None:
                    self.held[f"get:{command.job}"] = (view, self._freeze(view))
                return view
            case cmd.ComputeDelay():
                compute = self._area_method("compute_delay_ms")
                c = command
                return self._call("compute_delay_ms", lambda: float(compute(
                    c.policy, c.attempt, c.jitter, c.draw, c.previous_ms, c.retry_after_ms)))
            case cmd.Heartbeat():
                job_id = self._backend_id(command.job)
                heartbeat = self._area_method("heartbeat")
                self._call("heartbeat", lambda: heartbeat(job_id))
            case cmd.DetectStuck():
                timeout = command.job_timeout_seconds
                detect = self._area_method("detect_stuck")
                return self._call("detect_stuck", lambda: detect(timeout))
            case cmd.StartReaper():
                return self._start_reaper(command)
            case cmd.StopReaper():
                stop = self._area_method("stop_reaper")
                return self._call("stop_reaper", stop)
            case cmd.StoreOutage():
                inject = self._area_method("inject_store_outage")
                sweeps = command.sweeps
                self._call("inject_store_outage", lambda: inject(sweeps))
            case cmd.ReaperStatus():
                status_of = self._area_method("reaper_status")
                return dict(self._call("reaper_status", status_of))
            case cmd.ListExpired():
                before = self.clock.now() - timedelta(seconds=command.older_than_seconds)
                list_expired = self._area_method("list_expired")
                expired = self._call("list_expired", lambda: list_expired(before))
                return [self.aliases.get(view.job_id, view.job_id) for view in expired]
            case cmd.ExpireLeases():
                lease = command.lease_seconds
                expire = self._area_method("expire_leases")
                return dict(self._call("expire_leases", lambda: expire(lease)))
            case cmd.StaleOwnerWrite():
                job_id = self._backend_id(command.job)
                write = command.write
                stale_write = self._area_method("stale_owner_write")
                return bool(self._call("stale_owner_write", lambda: stale_write(job_id, write)))
            case cmd.OperatorAlerts():
                alerts = self._area_method("operator_alerts")
                return [self.aliases.get(job_id, job_id)
                        for job_id in self._call("operator_alerts", alerts)]
            case cmd.ParkRequest():
                park = self._area_method("park_request")
                agent, request = command.agent, command.request
                return self._request_label(str(self._call("park_request",
                                                          lambda: park(agent, request))))
            case cmd.OperatorRequests():
                return self._operator_requests()
            case cmd.ListJobs():
                status = command.status
                views = self._call("list_jobs", lambda: runtime.list_jobs(status))
                return [self.aliases.get(view.job_id, view.job_id) for view in views]
            case cmd.QueryExecutions():
                return self._query_executions(command)
            case cmd.ExecutionStats():
                stats_of = self._area_method("execution_stats")
                hours, owners = command.hours, command.owners
                counts = self._call("execution_stats", lambda: stats_of(
                    hours, None if owners is None else list(owners)))
                return {name: counts.get(name, _MISSING) for name in cmd.STATS_FIELDS}
            case cmd.JobStoreFault():
                return job_faults.run_under_fault(self, command)
            case cmd.Restart():
                self._restart()
            case cmd.StopBySignal():
                return self._stop_by_signal(command)
        return None

    def _query_executions(self, query: cmd.QueryExecutions) -> list[str]:
        """The aliases of the page the runtime answers (LC-032, LC-033)."""
        ask = self._area_method("query_executions")
        views = self._call("query_executions", lambda: ask(
            status=query.status, trigger=query.trigger,
            owners=None if query.owners is None else list(query.owners), hours=query.hours,
            search=query.search, offset=query.offset, limit=query.limit))
        return [self.aliases.get(view.job_id, view.job_id) for view in views]

    def _query_primary(self, query: cmd.QueryExecutions) -> str:
        """Whether a wrong page broke the filters (LC-033) or the paging (LC-032): the
        runtime's first page of the same filters is asked again, and the filters hold if
        it holds the oracle's first page and nothing the filters keep out."""
        if all(value is None for value in (query.status, query.trigger, query.owners,
                                           query.hours, query.search)):
            return "LC-032"
        first = set(self._query_executions(replace(query, offset=0, limit=None)))
        matching = executions.page(self.model.jobs, self.model.now, len(self.model.jobs) + 1,
                                   status=query.status, trigger=query.trigger,
                                   owners=query.owners, hours=query.hours, search=query.search)
        wanted_first = set(matching[:self.settings.page_size])
        return "LC-032" if wanted_first <= first <= set(matching) else "LC-033"
    def _request_label(self, minted: str) -> str:
        """The suites' name of an operator request: "request n" for the n-th id the
        runtime answered with (RD-008)."""
        return self.request_labels.setdefault(minted, request_label(len(self.request_labels)))

    def _operator_requests(self) -> list[list[str]]:
        """The operator queue as [label, agent, request id] per request (RD-008)."""
        listed = self._call("operator_requests", self._area_method("operator_requests"))
        return [[self._request_label(str(minted)), str(agent), str(request)]
                for minted, agent, request in listed]

    def _restart(self) -> None:
        """The backend stops its runtime and opens a new one over the same store (RS-001);
        the new process names a new worker and takes the operator sink afresh."""
        restart: Any = getattr(self.backend, "restart", None)
        if not callable(restart):
            raise AdapterError(f"adapter {self.backend.name!r} claims {RESTART} but has no"
                               " restart(runtime, settings, clock, bodies)")
        bodies = {self.ids[alias]: script for alias, script in self.scripts.items()
                  if alias in self.ids}
        old = self.runtime
        self.runtime = self._call("restart", lambda: restart(old, self.settings, self.clock,
                                                             bodies))
        self._runtime_replaced()
        self.worker_id = None
        self.operator_queue = self._attach_operator_queue()

    def _runtime_replaced(self) -> None:
        """A new runtime took over: its log records are the ones read from now on."""
        if self.log_watch is not None:
            self.log_watch.reopen(self.runtime)

    def _stop_by_signal(self, command: cmd.StopBySignal) -> str:
        """The signal to the runtime's process, the steps in the grace period (each
        applied here as on its own: a body's end decided, the clock advanced), the clock
        brought to the grace period's end, SIGKILL if the process has not exited, and a
        new runtime over the same store (RS-004..RS-007). The answer says how it stopped,
        as the case's message shows it: the oracle's is `cmd.exited_on(signal)` but for a
        drain still under way when the grace period ends (`cmd.ESCALATED_TO_SIGKILL`), so
        an unexpected escalation is a difference that names both. Handlers the runtime
        left in the host's place fail RS-008 here."""
        stop: Any = getattr(self.backend, "stop_by_signal", None)
        if not callable(stop):
            raise AdapterError(f"adapter {self.backend.name!r} claims {STOP_SIGNAL} but has no"
                               " stop_by_signal(runtime, settings, clock, bodies, plan)")
        bodies = {self.ids[alias]: script for alias, script in self.scripts.items()
                  if alias in self.ids}
        grace_end = self.clock.now() + timedelta(seconds=command.grace_seconds)
        steps: list[Callable[[], object]] = [partial(self._apply, step)
                                             for step in command.during]
        steps.append(lambda: self.clock.advance(
            max((grace_end - self.clock.now()).total_seconds(), 0.0)))
        plan = SignalPlan(command.signal, command.grace_seconds, tuple(steps))
        old = self.runtime
        stopped = self._call("stop_by_signal", lambda: stop(old, self.settings, self.clock,
                                                            bodies, plan))
        if not isinstance(stopped, SignalStop):
            raise AdapterError(f"adapter {self.backend.name!r}: stop_by_signal returned"
                               f" {type(stopped).__name__}, not a SignalStop")
        self.runtime = stopped.runtime
        self._runtime_replaced()
        self.worker_id = None
        self.operator_queue = self._attach_operator_queue()
        if stopped.handlers_restored is False:
            # Held back until the stop's answer and records have passed (as a store
            # fault's difference is): a stop wrong in those is blamed on their rules.
            self._fault_divergence = self._fail(("RS-008", *self._command_requirements),
                             f"the handlers for SIGINT and SIGTERM after the runtime stopped"
                             f" on {command.signal}", "the host's, as before the runtime"
                             " installed its own", "the runtime's, left installed", "RS-008")
        self._handlers_read = stopped.handlers_restored is not None
        if not stopped.escalated:
            return cmd.exited_on(command.signal)
        if self.model.stop_escalated:
            return cmd.ESCALATED_TO_SIGKILL  # a drain still under way when the grace ended
        before = len(self.commands) - 1  # the commands before the signal
        return (f"stopped by {command.signal} after {before} commands;"
                f" {cmd.ESCALATED_TO_SIGKILL} ({command.grace_seconds:g} s)")

    def _restart_blamed(self, check: Callable[[], None]) -> None:
        """Run `check`; a difference it finds that a restart explains names the restart's
        requirement as its primary (`_restart_primary`), and one of a reaper started
        through the deprecated keywords, RP-010 (`_old_names_primary`)."""
        try:
            check()
        except Divergence as divergence:
            primary = self._restart_primary(divergence) or self._old_names_primary(divergence)
            if primary is None or primary == divergence.primary:
                raise
            raise self._fail((*divergence.requirements, primary), divergence.what,
                             divergence.expected, divergence.actual, primary) from None

    def _old_names_primary(self, divergence: Divergence) -> str | None:
        """RP-010 for a sweep's timing (RP-002) while the running reaper was started
        through the deprecated keywords, where the timing shows their translation: sweeps
        made early (more of them, or jobs deleted sooner), as an interval left in the old
        unit gives. Sweeps missed at their boundaries are the sweep's own timing (RP-002)
        whatever keywords started it (issue 33: the command's rule first), and so is a
        sweep made before the clock moved from the start: no interval, in whichever unit,
        reaches a boundary at the start itself."""
        schedule = self.model.reaper
        if not (self.reaper_by_old_names and schedule is not None
                and divergence.primary == "RP-002"):
            return None
        expected, actual = divergence.expected, divergence.actual
        if isinstance(expected, dict) and isinstance(actual, dict):
            made = blame.sweeps_made
            at_start = made(expected) == 0 and (
                self.model.now == schedule.next_sweep - schedule.interval)
            early = made(actual) > made(expected) and not at_start
            return OLD_REAPER_KEYWORDS_REQUIREMENT if early else None
        if isinstance(expected, list) and isinstance(actual, list):
            deleted_early = any(alias not in actual for alias in expected)
            return OLD_REAPER_KEYWORDS_REQUIREMENT if deleted_early else None
        return OLD_REAPER_KEYWORDS_REQUIREMENT

    def _restart_primary(self, divergence: Divergence) -> str | None:
        """RS-003 for a job running at the restart (the restart itself, or the lease pass
        or dispatch that should bring it back); RS-001 for anything else the restart
        changed; RS-002 for a dispatch that should have started the jobs queued at the
        restart in their order. None when no restart is involved."""
        if divergence.primary == "RS-008":
            return None  # the handlers a stop left: no record or answer of the restart's
        command = self._last_command()
        named = re.match(r"job '([^']+)'", divergence.what)
        alias = named.group(1) if named else None
        # The jobs running at this restart, or at the one before this lease pass or dispatch.
        orphans = self.model.orphans if isinstance(command, cmd.Restart) else (
            self._orphans_before)
        if alias is not None and alias in orphans and (
                isinstance(command, cmd.Restart | cmd.ExpireLeases | cmd.Dispatch)):
            return "RS-003"
        if isinstance(command, cmd.StopBySignal):
            # The stop itself, and every record it left: RS-007 for SIGINT, else RS-004
            # where it cancels, RS-006 where time passes in a drain, RS-005 otherwise.
            stop_rules = [rule for rule in self._command_requirements
                          if rule in ("RS-004", "RS-005", "RS-006", "RS-007")]
            exited = (not self.model.stop_escalated
                      and self.last_answer == cmd.exited_on(command.signal))
            field_name = divergence.what.rsplit(" ", 1)[-1] if alias is not None else ""
            if blame.rewritten_after_stop(field_name, divergence.expected, divergence.actual,
                                          exited):
                return "LC-003"  # the stop ended the job; a later write moved its end
            if "RS-005" in stop_rules and _cut_short(divergence, command):
                # Work cut short at the signal, not left to run on: no drain at all
                # (RS-005), before how what ends in the grace period ends (RS-006).
                return "RS-005"
            return stop_rules[0]
        if isinstance(command, cmd.Restart):
            return "RS-001"
        if "RS-003" in self._command_requirements and alias is None:
            return "RS-003"  # a lease pass's answer, with a job running at the restart
        if "RS-002" in self._command_requirements and (
                alias is None or divergence.what.endswith((" status", " started_at"))):
            return "RS-002"
        return None

    # -- what `job_faults` needs of the harness ----------------------------------------

    def call(self, action: str, function: Callable[[], T]) -> T:
        return self._call(action, function)

    def apply_plain(self, command: Command) -> object:
        """Apply one command to the backend only (the oracle has applied it already)."""
        return self._apply(command)

    def area_method(self, name: str) -> Callable[..., Any]:
        return self._area_method(name)

    def adapter_fault(self, message: str) -> AdapterError:
        return AdapterError(message)

    def defer_fault(self, what: str, expected: object, actual: object,
                    primary: str | None = None) -> None:
        """Hold a difference only the latest command's store fault shows (RD-007, RP-008):
        it is raised once the command's end state has passed, so a runtime whose end state
        is wrong anyway is blamed on the rule for that state, not on the fault's. The
        primary is the fault's rule unless told."""
        last = self._last_command()
        if self._fault_divergence is None and isinstance(last, cmd.JobStoreFault):
            fault_rule = job_faults.fault_requirement(last)
            primary = primary or fault_rule
            self._fault_divergence = self._fail(
                (*self._command_requirements, fault_rule, primary), what, expected, actual,
                primary)

    def _read_at_once(self, command: Command) -> str | None:
        """Read the job an accepted submit created, or a queued job a cancel cancelled,
        straight after the call returned and before any other call reaches the runtime
        (no settle, no dispatch): the record must already be the oracle's (LC-031). Under
        cancel_running interrupt, a cancel that returned true for a running job is read
        so too, with the health snapshot: the job is cancelled, finished and counted by
        the time cancel returns (LC-026). A difference is held back until the command's
        end state has passed, as a store fault's is, so a runtime whose end state is wrong
        anyway is blamed on the rule for that state; one that shows the change only once
        settled is LC-031's, or LC-026's for the running job.

        Returns:
            The requirement the read checked, or None if no read was made.
        """
        health_too = False
        if isinstance(command, cmd.Submit):
            alias = command.job
            if alias not in self.ids or self.last_answer != cmd.ACCEPTED:
                return None
            primary, also = AT_ONCE_REQUIREMENT, "LC-008"
            if not self.settings.queued_execution:
                # The body ran inside the call: ended and counted by its return (LC-037).
                primary, also, health_too = "LC-037", "LC-031", True
        elif isinstance(command, cmd.Cancel):
            alias = command.job
            before = self._before.get(alias)
            if before is None or self.last_answer is not True or alias not in self.ids:
                return None
            if before.status is Status.QUEUED:
                primary, also = AT_ONCE_REQUIREMENT, "LC-011"
            elif before.status is Status.RUNNING and self.settings.cancel_interrupts:
                primary, also, health_too = "LC-026", "LC-025", True
            else:
                return None  # a cooperative cancel leaves the job to its owner (LC-013)
        else:
            return None
        job = self.model.jobs.get(alias)
        if job is None:
            return None
        job_id = self.ids[alias]
        if not health_too:
            self._plan_observation(first=("get", {"job_id": job_id}))
        view = self._call("get", lambda: self.runtime.get(job_id))
        self._read_at_once_job = alias
        wanted = self._expected(job)
        shown = None if view is None else self._freeze(view)
        if view is not None and self._fault_divergence is None:
            try:
                self._check_read_identity(alias, view, (primary, also))
                # An instant at another offset is the UTC rule's (LC-005) whichever read
                # shows it: this job is not read again where only changes are observed.
                self._check_timestamps(view)
            except Divergence as divergence:
                self._fault_divergence = divergence
        if shown != wanted and self._fault_divergence is None:
            self._fault_divergence = self._fail(
                (primary, also), f"job {alias!r} read {_straight_after(command)}", wanted,
                shown, primary)
        if health_too:
            health = health_of(self._call("health", self.runtime.health))
            wanted_health = self.model.health()
            if health != wanted_health and self._fault_divergence is None:
                self._fault_divergence = self._fail(
                    (primary, also), f"the health snapshot read {_straight_after(command)}",
                    wanted_health, health, primary)
        return primary

    @contextmanager
    def comparing_changes_only(self) -> Iterator[None]:
        """Within it, the state after each command is compared only where the command
        changed the oracle's (`observe_changes`); the next command run outside it is
        observed in full, which compares the rest.

        For many commands in a row at volume (LC-038): comparing all 300 records and the
        whole listing after each of 300 submissions makes a check quadratic in the jobs
        held, a read of every row per command on a SQL store.
        """
        self._changes_only = True
        try:
            yield
        finally:
            self._changes_only = False

    def _plan_observation(self, first: tuple[str, dict[str, Any]] | None = None,
                          with_command: bool = False) -> None:
        """Announce the settle and reads of `observe` (read_ahead), and the next command's
        discard of log records, which no call comes between: from a read at once
        (`first`), or with the command itself, one that makes one call (or none) and
        no other before the harness observes."""
        if self._changes_only or not callable(getattr(self.runtime, "plan_reads", None)):
            # observe_changes reads other calls: a plan of these would be dropped; and a
            # runtime without plan_reads (every one in process) takes no plan.
            return
        calls = [] if first is None else [first]
        calls += [("settle", {}), ("list_jobs", {"status": None}), ("health", {})]
        if self.log_watch is not None and callable(getattr(self.runtime, "log_records",
                                                           None)):
            calls += [("log_records", {}), ("log_records", {})]
        read_ahead.plan_reads([(self.runtime, name, args) for name, args in calls],
                              with_command)

    def _observe_command(self, requirements: tuple[str, ...]) -> None:
        """`observe` (or `observe_changes`), then what a store fault held back
        (`defer_fault`)."""
        if self._changes_only:
            self.observe_changes(requirements)
        else:
            self.observe(requirements)
        held, self._fault_divergence = self._fault_divergence, None
        if held is not None:
            raise held

    def expected_of(self, job: JobState) -> Record:
        return self._expected(job)

    def frozen(self, view: JobView) -> Record:
        return self._freeze(view)

    def _submit(self, command: cmd.Submit) -> object:
        script = TaskScript(honours_cancellation=not command.ignores_cancel)
        if command.outcome is not None:
            script.decide(command.outcome)  # before the call: it may run the body (LC-037)
        retry = command.retry
        # Only a check of LC-027 names a module, only one of LC-033 an owner or trigger,
        # only one of LC-035 options, and only a runtime claiming job-arguments is given
        # arguments (LC-036): other runtimes keep the old call.
        keywords: dict[str, Any] = {
            name: value for name, value in (
                ("module_id", command.module), ("owner", command.owner),
                ("trigger", command.trigger), ("options", command.options))
            if value is not None}
        if command.arguments is not None:
            if not self.claims_arguments:
                raise ValueError(f"backend {self.backend.name!r} does not claim"
                                 f" {JOB_ARGUMENTS}: submit it no arguments")
            keywords["arguments"] = command.arguments
        try:
            if keywords:
                job_id = self._call("submit", lambda: self.runtime.submit(
                    script, retry, **keywords))
            elif retry is None:
                job_id = self._call("submit", lambda: self.runtime.submit(script))
            else:
                job_id = self._call("submit", lambda: self.runtime.submit(script, retry))
        except CapacityExceeded:
            return self._refused(script, cmd.REFUSED_CAPACITY)
        except RuntimeShutDown:
            return self._refused(script, cmd.REFUSED_SHUT_DOWN)
        except InvalidModuleId:
            return self._refused(script, cmd.REFUSED_INVALID_MODULE)
        except ModuleNotFound:
            return self._refused(script, cmd.REFUSED_UNKNOWN_MODULE)
        self.scripts[command.job] = script
        if job_id in self.aliases:
            raise Divergence(("LC-008",), "submit returned an id already in use",
                             "a new unique id", job_id, self.commands, self._titles)
        self.ids[command.job] = job_id
        self.aliases[job_id] = command.job
        return cmd.ACCEPTED

    def _refused(self, script: TaskScript, answer: str) -> str:
        """A refused submission's answer, once its body is seen not to have run: a refusal
        comes before the body, with queued execution off too (LC-037)."""
        if script.invocations:
            raise Divergence(("LC-037", "LC-009", "LC-023"),
                             f"how often the body of the submission refused as {answer!r}"
                             " ran", 0, script.invocations, self.commands, self._titles)
        return answer

    def _submit_concurrently(self, command: cmd.SubmitConcurrently) -> list[str]:
        """Call submit once per alias, each on a thread of its own, the threads released
        together by a barrier (LC-030), or hand the batch to the runtime's own
        `submit_concurrently` where it has one (a runtime behind the process pipe, whose
        child makes the submissions at once; `ConcurrentSubmission`); then check that
        every id is new and held once, and take the order the runtime lists the batch in
        into the oracle. Each thread's answer is "accepted", a refusal, or what it raised.

        Raises:
            Divergence: two submissions returned one id, or an id is not held exactly once.
            AdapterError: a submitter did not finish within the real-time safety limit.
        """
        count = len(command.jobs)
        # Half the watchdog's limit for each wait, so that a hung submit is reported here,
        # naming its thread, before the watchdog ends the command.
        limit = self.safety_timeout / 2
        start_together = threading.Barrier(count)
        scripts = [TaskScript() for _ in command.jobs]
        returned: list[object] = [None] * count
        answers: list[str] = ["<no answer>"] * count
        runtime = self.runtime

        def submitter(index: int) -> None:
            try:
                start_together.wait(timeout=limit)
                returned[index] = runtime.submit(scripts[index])
                answers[index] = cmd.ACCEPTED
            except CapacityExceeded:
                answers[index] = cmd.REFUSED_CAPACITY
            except RuntimeShutDown:
                answers[index] = cmd.REFUSED_SHUT_DOWN
            except Exception as error:  # a submit that fails beside another: LC-030's
                answers[index] = f"raised {type(error).__name__}: {error}"

        together = getattr(runtime, "submit_concurrently", None)
        if callable(together):
            # A runtime behind a pipe (the process backend's) makes the submissions at once
            # itself: the kit's threads would only queue on its one pipe.
            self._submitted_together(together, scripts, returned, answers)
        else:
            run_at_once(submitter, [f"jobconform-submitter-{index + 1}"
                                    for index in range(count)],
                        limit, "a submit", "submitted")
        accepted: list[tuple[str, str, TaskScript]] = []
        for alias, job_id, script, answer in zip(command.jobs, returned, scripts, answers,
                                                 strict=True):
            if answer != cmd.ACCEPTED:
                continue
            if not isinstance(job_id, str):
                raise AdapterError(f"adapter {self.backend.name!r}: submit returned"
                                   f" {job_id!r} for job {alias!r}, not a job id (str)")
            accepted.append((alias, job_id, script))
        ids = [job_id for _, job_id, _ in accepted]
        for alias, job_id, _ in accepted:
            if ids.count(job_id) > 1 or job_id in self.aliases:
                others = [a for a, i, _ in accepted if i == job_id and a != alias]
                raise self._fail(("LC-030", "LC-008"), "the ids of submissions made at once"
                                 " (each a new id of its own)", "a new id for each job",
                                 f"{job_id!r} for job {alias!r} and for"
                                 f" {others or [self.aliases[job_id]]}", "LC-030")
        for alias, job_id, script in accepted:
            self.scripts[alias] = script
            self.ids[alias] = job_id
            self.aliases[job_id] = alias
        if len(accepted) == count:
            self._adopt_concurrent_order(command, ids)
        return answers

    def _submitted_together(self, together: Any, scripts: list[TaskScript],
                            returned: list[object], answers: list[str]) -> None:
        """LC-030 through a runtime's own `submit_concurrently` (`ConcurrentSubmission`):
        its answers, in the order of `scripts`, read as the harness's threads read theirs.

        Raises:
            AdapterError: it did not answer one `ConcurrentSubmission` per script.
        """
        try:
            results = list(together(scripts))
        except Exception as error:
            answers[:] = [f"raised {type(error).__name__}: {error}"] * len(scripts)
            return
        if len(results) != len(scripts) or not all(
                isinstance(result, ConcurrentSubmission) for result in results):
            raise AdapterError(f"adapter {self.backend.name!r}: submit_concurrently answered"
                               f" {results!r} for {len(scripts)} submissions, not one"
                               " ConcurrentSubmission each")
        for index, result in enumerate(results):
            if result.error_type is None:
                returned[index] = result.job_id
                answers[index] = cmd.ACCEPTED
            elif result.error_type == CapacityExceeded.__name__:
                answers[index] = cmd.REFUSED_CAPACITY
            elif result.error_type == RuntimeShutDown.__name__:
                answers[index] = cmd.REFUSED_SHUT_DOWN
            else:
                answers[index] = f"raised {result.error_type}: {result.message}"

    def _adopt_concurrent_order(self, command: cmd.SubmitConcurrently,
                                ids: list[str]) -> None:
        """Every job of the batch is held exactly once (LC-030); the oracle then holds
        them in the order the runtime lists them, which is the runtime's to decide."""
        views = list(self._call("list_jobs", lambda: self.runtime.list_jobs(None)))
        listed = [view.job_id for view in views]
        for alias, job_id in zip(command.jobs, ids, strict=True):
            if listed.count(job_id) != 1:
                raise self._fail(("LC-030", "LC-018"), f"how often job {alias!r}, submitted"
                                 " at once with others, is held (listed)", 1,
                                 listed.count(job_id), "LC-030")
        self.model.adopt_order([self.aliases[job_id] for job_id in listed
                                if job_id in set(ids)])

    def _start_reaper(self, command: cmd.StartReaper) -> object:
        start = self._area_method("start_reaper")
        # Only the values the command gives are passed: the rest are the runtime's defaults.
        given = {name: value for name, value in (("ttl_seconds", command.ttl_seconds),
                                                 ("sweep_interval_ms", command.sweep_interval_ms))
                 if value is not None}
        if command.old_names:
            return self._start_reaper_by_old_names(start, given)
        try:
            self._call("start_reaper", lambda: start(**given))
        except ReaperAlreadyRunning:
            return cmd.REFUSED_REAPER_RUNNING
        return cmd.REAPER_STARTED

    def _start_reaper_by_old_names(self, start: Callable[..., Any],
                                   given: dict[str, float]) -> object:
        """start_reaper through seed 004's deprecated keywords, as a caller still on them
        writes it: the interval in seconds, the TTL as max_age_seconds. Each must warn as
        deprecated (RP-010); what the reaper then does is compared as for the current
        names."""
        old = {OLD_REAPER_KEYWORDS[name]: (value / 1000 if name == "sweep_interval_ms"
                                           else value) for name, value in given.items()}
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always")
            try:
                self._call("start_reaper", lambda: start(**old))
            except ReaperAlreadyRunning:
                return cmd.REFUSED_REAPER_RUNNING
        deprecations = [w for w in heard if issubclass(w.category, DeprecationWarning)]
        if len(deprecations) < len(old):
            raise self._fail((OLD_REAPER_KEYWORDS_REQUIREMENT,),
                             f"the warnings of start_reaper({', '.join(old)})",
                             f"a DeprecationWarning for each of {', '.join(old)}",
                             [f"{w.category.__name__}: {w.message}" for w in heard] or "none",
                             OLD_REAPER_KEYWORDS_REQUIREMENT)
        return cmd.REAPER_STARTED

    def _get_result(self, alias: str) -> object:
        job_id = self._backend_id(alias)
        try:
            return self._call("get_result", lambda: self.runtime.get_result(job_id))
        except JobNotFound:
            return cmd.NOT_FOUND
        except JobNotCompleted as error:
            return cmd.not_completed(error.status)

    # -- comparing -----------------------------------------------------------------------

    def _fail(self, requirements: tuple[str, ...], what: str, expected: object,
              actual: object, primary: str | None = None) -> Divergence:
        return Divergence(requirements, what, expected, actual, self.commands, self._titles,
                          primary)

    def _last_command(self) -> Command | None:
        return self.commands[-1] if self.commands else None

    def _compare_answer(self, command: Command, expected: object, actual: object,
                        requirements: tuple[str, ...]) -> None:
        if isinstance(command, cmd.Get):
            expected_view = (None if expected is None
                             else self._expected(expected))  # type: ignore[arg-type]
            actual_view = (None if actual is None
                           else self._freeze(actual))  # type: ignore[arg-type]
            if expected_view is None or actual_view is None:
                if expected_view != actual_view:
                    raise self._fail(requirements, f"get({command.job!r})", expected_view,
                                     actual_view)
                return
            self._check_read_identity(command.job, actual, requirements)  # type: ignore[arg-type]
            # A read's own requirement (LC-016) says nothing about which field is wrong.
            self._compare_record(f"get({command.job!r})", expected_view, actual_view, (),
                                 command.job)
            return
        if isinstance(command, cmd.ComputeDelay):
            assert isinstance(expected, float) and isinstance(actual, float)
            if abs(expected - actual) > DELAY_TOLERANCE_MS:
                raise self._fail(requirements, f"the answer to {describe(command)}", expected,
                                 actual, self._delay_primary(command))
            return
        if isinstance(command, cmd.QueryExecutions | cmd.ExecutionStats) and (
                expected != actual):
            # A record or count that differs already is its own rule's, not the query's.
            self.observe(requirements)
            query_primary = (self._query_primary(command)
                             if isinstance(command, cmd.QueryExecutions) else "LC-034")
            raise self._fail(requirements, f"the answer to {describe(command)}", expected,
                             actual, query_primary)
        if isinstance(command, cmd.SubmitConcurrently) and expected != actual:
            raise self._fail(requirements, f"the answers to {describe(command)}, in job"
                             " order", expected, actual, "LC-030")
        if expected != actual or type(expected) is not type(actual):
            if isinstance(command, cmd.Cleanup):
                # Which jobs went tells the boundary (LC-020) from an active job (LC-019).
                self.observe(requirements)
            primary = blame.answer_primary(command, expected, actual, self._before,
                                           self.clock.now(), self.model.failed_sweeps)
            if (isinstance(command, cmd.JobStoreFault)
                    and isinstance(command.command, cmd.ExpireLeases)
                    and self.operator_queue is not None):
                raised = [(self.aliases.get(job_id, job_id), status)
                          for job_id, status in self.operator_queue.raised()]
                primary = blame.faulted_alerts_primary(
                    list(self.model.alert_states), raised,
                    self._failed_now({alias for alias, _ in self.model.alert_states})
                ) or primary
            if isinstance(command, cmd.DetectStuck) and self._failed_a_queued_job():
                # Which jobs failed tells a queued job taken (ST-004) from a count that an
                # inclusive boundary (ST-003) would give as well.
                primary = "ST-004"
            raise self._fail(requirements, f"the answer to {describe(command)}", expected,
                             actual, primary)

    def _failed_now(self, aliases: set[str]) -> frozenset[str]:
        """Those of `aliases` whose record the runtime shows failed now."""
        failed = set()
        for alias in sorted(aliases & set(self.ids)):
            view = self._call("get", partial(self.runtime.get, self.ids[alias]))
            if view is not None and self._freeze(view).status == Status.FAILED.value:
                failed.add(alias)
        return frozenset(failed)

    def _failed_a_queued_job(self) -> bool:
        """Whether a job the oracle held queued before the command now reads failed."""
        for alias, job in self._before.items():
            if job.status is Status.QUEUED and alias in self.ids:
                view = self._call("get", partial(self.runtime.get, self.ids[alias]))
                if view is not None and self._freeze(view).status == Status.FAILED.value:
                    return True
        return False

    def _delay_primary(self, question: cmd.ComputeDelay) -> str:
        """Which part of the delay is wrong (or raised), asked of the backend's own
        function (blame.delay_primary)."""
        return blame.delay_primary(question, partial(_ask_delay,
                                                     self._area_method("compute_delay_ms")))

    def _backend_delay(self) -> blame.DelayFunction | None:
        if self.delays_given:
            # Its retries wait out the list its adapter made from each policy
            # (retry_intervals_ms), and it need have no delay function: the list's entry.
            return _listed_interval
        compute: object = getattr(self.runtime, "compute_delay_ms", None)
        return partial(_ask_delay, compute) if self.claims_retry and callable(compute) else None

    def observe(self, requirements: tuple[str, ...] = ()) -> None:
        """Compare every held job and the health snapshot with the oracle."""
        self._plan_observation()
        self._call("settle", self.runtime.settle)
        self._check_held_views()
        views = list(self._call("list_jobs", lambda: self.runtime.list_jobs(None)))
        for view in views:
            self._check_timestamps(view)
        actual_aliases = [self.aliases.get(view.job_id, f"<unknown id {view.job_id}>")
                          for view in views]
        expected_aliases = list(self.model.jobs)
        if actual_aliases != expected_aliases:
            listing = ("LC-019", "LC-020", "LC-021") if isinstance(
                self._last_command(), cmd.Cleanup) else ()
            raise self._fail(requirements + listing + ("LC-018",), "the held jobs, in order",
                             expected_aliases, actual_aliases, blame.listing_primary(
                                 self._last_command(), expected_aliases, actual_aliases,
                                 self._before, requirements, self.model.failed_sweeps))
        for alias, view in zip(actual_aliases, views, strict=True):
            actual_record = self._freeze(view)
            sealed = self._sealed.get(id(view))
            if sealed is not None and sealed.view is view:
                sealed.in_utc = True  # every listed view's instants were checked above
            wanted = self._expected_held(alias)
            agreed = self._agreed.get(alias)
            # Two records that agreed before agree again (both are immutable: the actual
            # one comes from a sealed view, read once).
            if agreed is None or agreed[0] is not wanted or agreed[1] is not actual_record:
                self._compare_record(f"job {alias!r}", wanted, actual_record, requirements,
                                     alias)
                self._agreed[alias] = (wanted, actual_record)
            self.held[f"list:{alias}"] = (view, actual_record)
        if self._sealed_added:
            # Rebuilt only when a view was sealed since: an entry of a view no longer held
            # lingers until then, and says of it what it said (the view cannot change).
            self._sealed = {id(view): self._sealed[id(view)] for view, _ in self.held.values()
                            if id(view) in self._sealed}
            self._sealed_added = False
        self._check_bodies(requirements)
        self._check_arguments(list(zip(actual_aliases, views, strict=True)), requirements)
        self._check_alert_order(requirements)
        self._check_health(requirements)
        self._check_log_records(requirements)
        if len(expected_aliases) >= VOLUME:
            # Every held job, the whole listing and the counts were right at volume.
            self.exercised.add("LC-038")
        # Every held job's record was built above (`_expected_held`), which noted its texts.
        if not self._long_texts.isdisjoint(self.model.jobs):
            self.exercised.add("LC-039")  # a long error or result read back whole

    def observe_changes(self, requirements: tuple[str, ...] = ()) -> None:
        """Compare what the latest command changed in the oracle: each job it submitted
        or changed, read by id, then, if any, the health snapshot; the log records as
        after every command. A read changes nothing, so its answer is all that is
        compared. The job read straight after the command returned was compared with
        its record then (`_read_at_once`) and is not read again. The listing, the other
        records, the views read earlier and the bodies wait for the next full `observe`;
        a command that removed a job is observed in full, since only the listing shows a
        removal. On a SQL store each read is a statement, the cost counted here."""
        if self._before.keys() - self.model.jobs.keys():
            self.observe(requirements)
            return
        changed = [alias for alias, job in self.model.jobs.items()
                   if job is not self._before.get(alias)]
        if changed:
            self._call("settle", self.runtime.settle)
        read: list[tuple[str, JobView]] = []
        for alias in changed:
            if alias == self._read_at_once_job:
                continue
            view = self._call("get", partial(self.runtime.get, self.ids[alias]))
            wanted = self._expected(self.model.jobs[alias])
            if view is None:
                raise self._fail((*requirements, "LC-016"), f"get({alias!r})", wanted, None)
            self._check_read_identity(alias, view, requirements)
            self._check_timestamps(view)
            self._compare_record(f"job {alias!r}", wanted, self._freeze(view), requirements,
                                 alias)
            read.append((alias, view))
        self._check_arguments(read, requirements)
        if changed:
            self._check_health(requirements)
        self._check_log_records(requirements)

    def _check_read_identity(self, alias: str, view: JobView,
                             requirements: tuple[str, ...]) -> None:
        """A read by id answers the record of the job asked, not another's: a lookup
        that takes a neighbour's row (LC-038 once CUT_FLOOR jobs are held, where such a
        lookup goes wrong; LC-016 before)."""
        if view.job_id == self.ids.get(alias):
            return
        primary = "LC-038" if len(self.model.jobs) >= CUT_FLOOR else "LC-016"
        shown_job = self.aliases.get(view.job_id, f"<unknown id {view.job_id}>")
        raise self._fail((*requirements, primary, "LC-016"),
                         f"the job get({alias!r}) answered the record of", alias, shown_job,
                         primary)

    def _check_health(self, requirements: tuple[str, ...]) -> None:
        """The health snapshot is the oracle's: its counts (LC-024) and the rest (LC-025),
        then the worker's report where claimed."""
        health_view = self._call("health", self.runtime.health)
        health = health_of(health_view)
        wanted_health = self.model.health()
        if health != wanted_health:
            counts = ("LC-024",) if (health.queued, health.running, health.total) != (
                wanted_health.queued, wanted_health.running, wanted_health.total) else ()
            raise self._fail(requirements + counts + ("LC-025",), "the health snapshot",
                             wanted_health, health,
                             blame.health_primary(
                                 requirements, bool(counts),
                                 self.commands[-1] if self.commands else None,
                                 health.cancelled - wanted_health.cancelled,
                                 health.failed - wanted_health.failed))
        self._check_worker_report(health_view, requirements)

    def _check_log_records(self, requirements: tuple[str, ...]) -> None:
        """The records the command made due, each among those the runtime emitted during
        it, at its level with its facts (log-records)."""
        if self.log_watch is None:
            return
        expected, self.model.logs = self.model.logs, []
        missing = self._call("log_records", lambda: self.log_watch.unmatched(expected)
                             if self.log_watch is not None else None)
        if missing is not None:
            wanted, emitted = missing
            raise self._fail((*requirements, wanted.requirement), "the log records emitted",
                             wanted.describe(), log_records.shown(emitted), wanted.requirement)
        self.exercised.update(wanted.requirement for wanted in expected)

    def _check_worker_report(self, view: HealthView, requirements: tuple[str, ...]) -> None:
        """The health report's worker fields, where claimed: a non-empty id that stays the
        same, the oracle's status (LC-029) and last heartbeat in UTC (ST-005)."""
        if not self.claims_health_report:
            return
        worker_id = getattr(view, "worker_id", _MISSING)
        wanted_id = self.worker_id if self.worker_id is not None else "a non-empty string"
        if (not isinstance(worker_id, str) or not worker_id or worker_id == _MISSING
                or (self.worker_id is not None and worker_id != self.worker_id)):
            raise self._fail((*requirements, "LC-029"), "the health report's worker_id",
                             wanted_id, worker_id, "LC-029")
        self.worker_id = worker_id
        wanted = self.model.worker_report()
        status = getattr(view, "status", _MISSING)
        if status != wanted.status:
            raise self._fail((*requirements, "LC-029"), "the health report's worker status",
                             wanted.status, status,
                             blame.worker_status_primary(wanted.status, status, requirements))
        if not self.claims_stuck:
            return
        heartbeat = getattr(view, "last_heartbeat", _MISSING)
        in_utc = heartbeat is None or (isinstance(heartbeat, datetime)
                                       and heartbeat.utcoffset() == timedelta(0))
        if not in_utc or heartbeat != wanted.last_heartbeat:
            raise self._fail((*requirements, "ST-005"), "the health report's last_heartbeat"
                             " (timezone-aware UTC)", wanted.last_heartbeat, heartbeat,
                             "ST-005")

    def check_worker_id_unique(self) -> None:
        """Open a second runtime of the backend and compare the two worker ids (LC-029).

        Raises:
            Divergence: the second runtime names its worker as this one does.
        """
        if not self.claims_health_report:
            return
        own = getattr(self._call("health", self.runtime.health), "worker_id", _MISSING)
        with guarded(self.safety_timeout, "opening a second runtime", self.hang_scope):
            other_runtime = self._call("open", lambda: self.backend.open(self.settings,
                                                                         self.clock))
        try:
            other = getattr(self._call("health", other_runtime.health), "worker_id", _MISSING)
        finally:
            with guarded(self.safety_timeout, "closing the second runtime", self.hang_scope):
                self._call("close", other_runtime.close)
        if other == own:
            raise self._fail(("LC-029",), "the worker_id of a second runtime of the backend",
                             f"an id other than {own!r}", other, "LC-029")
        self.exercised.add("LC-029")

    def _check_alert_order(self, requirements: tuple[str, ...]) -> None:
        """Every alert the runtime raised into the harness's sink, with the job's status
        at that moment: the alert comes before the job is failed as poison (RD-003)."""
        if self.operator_queue is None:
            return
        actual = [(self.aliases.get(job_id, job_id), status)
                  for job_id, status in self.operator_queue.raised()]
        if actual != self.model.alert_states:
            raise self._fail((*requirements, "RD-003"), "operator alerts as raised, each with"
                             " its job's status at that moment", self.model.alert_states,
                             actual, "RD-003")

    def _check_bodies(self, requirements: tuple[str, ...]) -> None:
        """Every body ran at most once per start of its job, and never for a job that
        did not start (records cannot show a body that ran and was then discarded); a
        body whose invocation a cancel interrupted shows it, and never ran (LC-026)."""
        for alias, script in self.scripts.items():
            model_script = self.model.scripts[alias]
            if not model_script.interrupted:
                if not script.invocations:
                    continue  # never run (and so handed no options): nothing to compare
            elif not script.interrupted:
                raise self._fail((*requirements, "LC-026"),
                                 f"whether the body of job {alias!r} was interrupted"
                                 " (TaskScript.interrupt)", True, False, "LC-026")
            if model_script.interrupted and script.invocations > (
                    model_script.starts - model_script.interrupted):
                raise self._fail((*requirements, "LC-026"),
                                 f"how often the body of job {alias!r} ran (never after"
                                 " its invocation was interrupted)",
                                 model_script.starts - model_script.interrupted,
                                 script.invocations, "LC-026")
            if self.claims_options:
                self._check_options_handed(alias, script, requirements)
            starts = model_script.starts
            if script.invocations > starts:
                job = self.model.jobs.get(alias)
                primary = blame.body_primary(self._last_command(), job, starts)
                raise self._fail((*requirements, primary),
                                 f"how often the body of job {alias!r} ran (at most once per"
                                 " start)", starts, script.invocations, primary)

    def _check_options_handed(self, alias: str, script: TaskScript,
                              requirements: tuple[str, ...]) -> None:
        """Each run of the body was handed the job's execution options (LC-035)."""
        job = self.model.jobs.get(alias)
        if job is None:
            return  # removed: its runs were checked while it was held
        for handed in script.options_handed:
            if handed != job.options:
                raise self._fail((*requirements, "LC-035"),
                                 f"the execution options the body of job {alias!r} was"
                                 " handed", job.options, handed, "LC-035")

    def _check_arguments(self, listed: list[tuple[str, JobView]],
                         requirements: tuple[str, ...]) -> None:
        """Where claimed (LC-036): each listed record shows the arguments its job was
        submitted with, and every invocation of each body received them, the same JSON
        value (`arguments_text`: types apart, keys in any order)."""
        if not self.claims_arguments:
            return
        for alias, view in listed:
            given = self.model.scripts[alias].arguments
            held = getattr(view, "arguments", _MISSING)
            if same_text(held, given):
                continue  # one scalar (mostly None): the same text, not built here
            wanted = arguments_text(given)
            shown = shown_arguments(held)
            if shown != wanted:
                raise self._fail((*requirements, "LC-036"), f"job {alias!r} arguments",
                                 wanted, shown, "LC-036")
        for alias, script in self.scripts.items():
            if not script.received_arguments:
                continue  # never ran: nothing to compare, and no JSON text to build
            given = self.model.scripts[alias].arguments
            if all(same_text(received, given) for received in script.received_arguments):
                continue
            wanted = arguments_text(given)
            for received in script.received_arguments:
                shown = shown_arguments(received)
                if shown != wanted:
                    raise self._fail((*requirements, "LC-036"),
                                     f"the arguments the body of job {alias!r} received",
                                     wanted, shown, "LC-036")

    def _freeze(self, view: JobView) -> Record:
        """The record of `view`: read from it, or, for a sealed view read before, what was
        read then. The deprecated alias is read afresh: from a sealed view once per
        command (the held views and the listing are mostly the same objects, and nothing
        of the view changes between their reads), from any other every time."""
        sealed = self._sealed.get(id(view))
        checks_alias = self.keeps_aliases and self.claims_retry
        if sealed is not None and sealed.view is view:
            if checks_alias and sealed.read_afresh_at != len(self.commands):
                self._check_attempt_number(view, sealed.record)
                sealed.read_afresh_at = len(self.commands)
            return sealed.record
        record = freeze(view, self.claims_retry, self.claims_stuck, self.claims_redelivery,
                        self.claims_queries, self.claims_options)
        sealed = None
        if is_sealed(view, VIEW_NAMES):
            # The entry keeps the view alive, so its id is no other view's meanwhile.
            sealed = self._sealed[id(view)] = SealedView(view, record)
            self._sealed_added = True
        if checks_alias:
            self._check_attempt_number(view, record)
            if sealed is not None:
                sealed.read_afresh_at = len(self.commands)
        return record

    def _check_attempt_number(self, view: JobView, record: Record) -> None:
        """Seed 004's deprecated `attempt_number` reads as the record's retry count, in
        every view the runtime hands out (RT-011)."""
        alias = getattr(view, "attempt_number", _MISSING)
        if alias != record.retry_count or type(alias) is not type(record.retry_count):
            alias_name = self.aliases.get(view.job_id, view.job_id)
            raise self._fail((ATTEMPT_NUMBER_REQUIREMENT, "RT-008"),
                             f"job {alias_name!r} attempt_number, the alias of retry_count",
                             record.retry_count, alias, ATTEMPT_NUMBER_REQUIREMENT)
        self.exercised.add(ATTEMPT_NUMBER_REQUIREMENT)

    def _expected(self, job: JobState) -> Record:
        return expected_record(job, self.claims_retry, self.claims_stuck,
                               self.claims_redelivery, self.claims_queries,
                               self.claims_options)

    def _expected_held(self, alias: str) -> Record:
        """The record the oracle's job `alias` reads as, built once per state of the job
        (the oracle replaces a job's state whenever it changes)."""
        job = self.model.jobs[alias]
        built = self._expected_records.get(alias)
        if built is not None and built[0] is job:
            return built[1]
        record = self._expected(job)
        self._expected_records[alias] = (job, record)
        if any(isinstance(text, str) and len(text) >= LONG_TEXT
               for text in (job.error, job.result)):
            self._long_texts.add(alias)
        else:
            self._long_texts.discard(alias)
        return record

    def _compare_record(self, what: str, wanted: Record, actual: Record,
                        requirements: tuple[str, ...], alias: str | None = None) -> None:
        if wanted == actual:
            return  # every field equal: the usual case, told in one comparison
        for name, field_requirements in FIELD_REQUIREMENTS.items():
            if getattr(actual, name) != getattr(wanted, name):
                primary = blame.record_primary(
                    self._last_command(), name, getattr(wanted, name), getattr(actual, name),
                    self._before.get(alias) if alias is not None else None, requirements,
                    field_requirements, self._retry_after_holds(alias),
                    self._retry_delay_holds(alias), self.clock.now(), self.delays_given,
                    actual.status, self._due_for_runtime(alias), actual.started_at)
                if (name == "status" and wanted.status == Status.CANCELLED.value
                        and actual.status in (Status.SUCCEEDED.value, Status.FAILED.value)
                        and self._counted_as_the_oracle()):
                    # The runtime counted the job cancelled, as it should, and then wrote
                    # the body's outcome over it: a late completion, not a cancel ignored.
                    primary = "LC-003"
                raise self._fail(requirements + field_requirements, f"{what} {name}",
                                 getattr(wanted, name), getattr(actual, name), primary)

    def _counted_as_the_oracle(self) -> bool:
        """Whether the runtime's outcome counters agree with the oracle's."""
        health = health_of(self._call("health", self.runtime.health))
        wanted = self.model.health()
        return (health.processed, health.failed, health.cancelled) == (
            wanted.processed, wanted.failed, wanted.cancelled)

    def _retry_after_holds(self, alias: str | None) -> bool:
        """Whether job `alias` still waits only because of a server's retry-after."""
        script = self.model.scripts.get(alias) if alias is not None else None
        due = script.due_without_retry_after if script is not None else None
        return due is not None and due <= self.clock.now()

    def _due_for_runtime(self, alias: str | None) -> bool:
        """Whether job `alias`, in backoff before the latest command, was due by then by
        the runtime's own delay function (right or wrong against the spec)."""
        if alias is None:
            return False
        before, script = self._before.get(alias), self.model.scripts.get(alias)
        if before is None or script is None or before.retry_count == 0:
            return False
        _, _, _, retried_at, retry_after_ms = self.model.script_before(alias)
        if retried_at is None:
            return False
        due = self._runtime_due(script.policy, before.retry_count - 1, retried_at,
                                retry_after_ms)
        return due is not None and due <= self.clock.now()

    def _retry_delay_holds(self, alias: str | None) -> bool:
        """Whether the backend's own delay function gives the spec's delay for the retry
        job `alias` waits out (blame.retry_delay_holds)."""
        if alias is None or alias not in self.model.scripts:
            return False
        return blame.retry_delay_holds(self._before.get(alias),
                                       self.model.scripts[alias].policy, self._backend_delay())

    def _check_held_views(self) -> None:
        """Every record handed out earlier must still read as it did (LC-016).

        Views are kept until a newer read of the same job replaces them, so a live
        reference is caught by whichever later command changes its job.
        """
        for key, (view, record) in self.held.items():
            now = self._freeze(view)
            if now is not record and now != record:
                raise self._fail(("LC-016",), f"a record read earlier ({key}) changed after"
                                 " it was returned", record, now)

    def _check_timestamps(self, view: JobView) -> None:
        sealed = self._sealed.get(id(view))
        if sealed is not None and sealed.view is view and sealed.in_utc:
            return  # a sealed view whose instants were at UTC when read
        for name in ("submitted_at", "started_at", "finished_at"):
            value = getattr(view, name)
            if value is not None and (
                not isinstance(value, datetime) or value.utcoffset() != timedelta(0)
            ):
                alias = self.aliases.get(view.job_id, view.job_id)
                raise self._fail(("LC-005",), f"job {alias!r} {name} must be a timezone-aware"
                                 " UTC datetime", "tz-aware UTC datetime", value)
        # Every other instant field too (last_heartbeat, next_attempt_at, …): the record
        # comparison reads them as instants, which ignores the offset (issue 33).
        off = utc.field_off_utc(view)
        if off is not None:
            alias = self.aliases.get(view.job_id, view.job_id)
            raise self._fail(("LC-005",), f"job {alias!r} {off[0]} must be a timezone-aware"
                             " UTC datetime", utc.WANTED, utc.describe_offset(off[1]))


def _straight_after(command: Command) -> str:
    """When `_read_at_once` read, as its message says (built only for a message)."""
    return f"straight after {describe(command)} returned (before any other call)"


def _listed_interval(question: cmd.ComputeDelay) -> float:
    return backoff.delay_ms(question.policy, question.attempt)


def _ask_delay(compute: Callable[..., Any], question: cmd.ComputeDelay) -> float:
    return float(compute(question.policy, question.attempt, question.jitter, question.draw,
                         question.previous_ms, question.retry_after_ms))


def open_harness(backend: Backend, profile: Profile, registry: Registry | None = None,
                 **overrides: Any) -> Harness:
    """A harness on a fresh runtime; `overrides` are Harness fields (max_concurrent, …)."""
    return Harness(backend, profile, registry, **overrides)

