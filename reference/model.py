"""The composite oracle: many jobs, worker slots and the virtual clock, one command at a time.

It answers the same commands a backend does and records, for each command, the
requirement IDs that decided its answer, so a divergence can name them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from jobconform.reference import backoff, executions, lifecycle, reaper
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import (
    ACCEPTED,
    ESCALATED_TO_SIGKILL,
    NOT_FOUND,
    REAPER_STARTED,
    REFUSED_CAPACITY,
    REFUSED_INVALID_MODULE,
    REFUSED_REAPER_RUNNING,
    REFUSED_SHUT_DOWN,
    REFUSED_UNKNOWN_MODULE,
    AdvanceTime,
    Cancel,
    Cleanup,
    Command,
    ComputeDelay,
    DetectStuck,
    Dispatch,
    ExecutionStats,
    ExpireLeases,
    Finish,
    Get,
    GetResult,
    Heartbeat,
    JobStoreFault,
    ListExpired,
    ListJobs,
    OperatorAlerts,
    OperatorRequests,
    Outcome,
    ParkRequest,
    QueryExecutions,
    Raise,
    ReaperStatus,
    Restart,
    Shutdown,
    StaleOwnerWrite,
    StartReaper,
    StopBySignal,
    StopReaper,
    StoreOutage,
    Submit,
    SubmitConcurrently,
    Succeed,
    exited_on,
    not_completed,
)
from jobconform.reference.faults import FaultKind
from jobconform.reference.lifecycle import (
    INVALID_MODULE_ID,
    Event,
    EventKind,
    JobState,
    JsonValue,
    Status,
    module_id_problem,
)
from jobconform.reference.log_records import DEBUG, ExpectedLog
from jobconform.spec.runtime_settings import RuntimeSettings

Answer = JsonValue | JobState


# Shutdown modes (the profile parameter shutdown_mode).
SHUTDOWN_CANCEL = "cancel"
SHUTDOWN_DRAIN = "drain"
SHUTDOWN_MODES = (SHUTDOWN_CANCEL, SHUTDOWN_DRAIN)


@dataclass(frozen=True)
class Health:
    queued: int
    running: int
    total: int
    processed: int
    failed: int
    cancelled: int


def request_label(index: int) -> str:
    """How the suites name the operator queue's requests (RD-008): by the order the
    runtime first answered with each one's id, "request 1" first, as its ids are its own."""
    return f"request {index + 1}"


# The worker statuses of the health report (LC-029).
WORKER_RUNNING = "running"
WORKER_STOPPING = "stopping"
WORKER_STOPPED = "stopped"


@dataclass(frozen=True)
class WorkerReport:
    """What a health report says of its worker beyond the counts (LC-029, ST-005); the
    worker's id is the runtime's own, so the harness checks it apart."""

    status: str
    last_heartbeat: datetime | None


@dataclass(frozen=True)
class StepResult:
    answer: Answer
    requirements: tuple[str, ...]


@dataclass
class _Script:
    """What the harness has said about one job's body."""

    ignores_cancel: bool
    policy: RetryPolicy | None = None
    outcome: Outcome | None = None
    cancel_requested: bool = False
    # How often the job started: its body may have run at most this often (LC-012,
    # LC-022, RT-006), once per start.
    starts: int = 0
    # When the waiting attempt would be due without the server's retry-after, if one
    # set a later time: a start in between ignored the retry-after (RT-010).
    due_without_retry_after: datetime | None = None
    # Starts whose invocation a cancel interrupted before it was decided (LC-026): the
    # body of such a start never runs.
    interrupted: int = 0
    # The job's place in the queue: dispatch starts waiting jobs lowest place first. It is
    # the submission order, unless the harness adopted a runtime's other order.
    place: float = 0.0
    # When the latest retry of the job was scheduled, and the retry-after it carried: the
    # harness asks a runtime's own delay function when it adopts that runtime's schedule.
    retried_at: datetime | None = None
    retry_after_ms: float | None = None
    # The arguments the job was submitted with (LC-036): its record keeps them and its
    # body receives them, each exactly as given (lifecycle.arguments_text compares).
    arguments: JsonValue = None


# A job's script as it was before a command: its decided outcome, start count, cancel
# request, and when and with what retry-after its latest retry was scheduled.
ScriptBefore = tuple[Outcome | None, int, bool, datetime | None, float | None]
NO_SCRIPT_BEFORE: ScriptBefore = (None, 0, False, None, None)


def script_state(script: _Script) -> ScriptBefore:
    return (script.outcome, script.starts, script.cancel_requested, script.retried_at,
            script.retry_after_ms)


@dataclass
class ReferenceModel:
    """The oracle. Job aliases are its job ids."""

    limits: RuntimeSettings
    now: datetime
    jobs: dict[str, JobState] = field(default_factory=dict)
    scripts: dict[str, _Script] = field(default_factory=dict)
    processed: int = 0
    failed: int = 0
    cancelled: int = 0
    shut_down: bool = False
    # The reaper (RP-001..RP-007): its schedule while running, and its status counters.
    reaper: reaper.ReaperSchedule | None = None
    store_outage_sweeps: int = 0
    sweeps: int = 0
    failed_sweeps: int = 0
    reaper_deleted: int = 0
    # Operator alerts raised by poison parking, in order (RD-003).
    alerts: list[str] = field(default_factory=list)
    # The operator queue's requests by their key, (agent, request id), in parking order
    # (RD-008). They live in the store, so a restart keeps them.
    operator_requests: list[tuple[str, str]] = field(default_factory=list)
    # When a drain-mode shutdown cancels the jobs still active (LC-028); None when no
    # drain is under way.
    drain_deadline: datetime | None = None
    # Each alert with the job's status at the moment it is raised: before the job changes.
    alert_states: list[tuple[str, str]] = field(default_factory=list)
    # What a crash in a lease pass left (RD-007), before the restarted rescuer's pass: the
    # jobs, and the alerts raised; None when the latest command did not crash.
    crash_left: dict[str, JobState] | None = None
    crash_alert_states: list[tuple[str, str]] | None = None
    # The latest heartbeat recorded for any job, held or not (ST-005).
    last_heartbeat: datetime | None = None
    # The place the next submitted job takes in the queue (_Script.place).
    next_place: float = 0.0
    # Jobs running at the latest restart whose body went with the old process: they stay
    # running, no body of theirs ends, until a lease pass re-queues them (RS-003).
    orphans: set[str] = field(default_factory=set)
    # Jobs queued at the latest restart and not started since: they start first (RS-002).
    carried_over: set[str] = field(default_factory=set)
    # Each record's last heartbeat at the latest restart: the old process's, which the new
    # worker's report does not show (ST-005).
    heartbeats_at_restart: dict[str, datetime | None] = field(default_factory=dict)
    # Whether the latest stop by signal had to be escalated to a kill (RS-005's drain).
    stop_escalated: bool = False
    # The log records the latest command made due (RP-009), for a runtime claiming
    # log-records; `apply` starts each command with none.
    logs: list[ExpectedLog] = field(default_factory=list)
    # What each script the latest command created or changed was before it (`script_before`
    # answers for the others): noted at the first change, so that no command copies every
    # script, which the harness asks of a few only (adoption and blame). `apply` starts
    # each command with none.
    scripts_before: dict[str, ScriptBefore] = field(default_factory=dict)

    def apply(self, command: Command) -> StepResult:
        """Apply one command; return the answer and the requirements that decided it."""
        self.logs = []
        self.scripts_before = {}
        result = self._apply(command)
        # Every heartbeat a job's record got during the command is the worker's latest
        # (ST-005): a job's last_heartbeat only moves forward while the job is held, and
        # no command both sets it and removes the job. A heartbeat a record carried into a
        # restart is the old process's, not this one's.
        for alias, job in self.jobs.items():
            carried = self.heartbeats_at_restart.get(alias)
            if job.last_heartbeat is not None and job.last_heartbeat != carried and (
                    self.last_heartbeat is None or job.last_heartbeat > self.last_heartbeat):
                self.last_heartbeat = job.last_heartbeat
        self.orphans = {alias for alias in self.orphans if alias in self.jobs
                        and self.jobs[alias].status is Status.RUNNING}
        self.carried_over = {alias for alias in self.carried_over if alias in self.jobs
                             and self.jobs[alias].status is Status.QUEUED}
        return result

    def note_script(self, alias: str) -> None:
        """Keep what job `alias`'s script is now, unless already kept since the latest
        command began: call before changing any field `script_state` reads."""
        if alias not in self.scripts_before:
            script = self.scripts.get(alias)
            self.scripts_before[alias] = (NO_SCRIPT_BEFORE if script is None
                                          else script_state(script))

    def script_before(self, alias: str) -> ScriptBefore:
        """Job `alias`'s script as it was before the latest command (none: the defaults)."""
        kept = self.scripts_before.get(alias)
        if kept is not None:
            return kept
        script = self.scripts.get(alias)
        return NO_SCRIPT_BEFORE if script is None else script_state(script)

    def _apply(self, command: Command) -> StepResult:
        match command:
            case Submit():
                return self._submit(command)
            case SubmitConcurrently():
                return self._submit_concurrently(command)
            case Dispatch():
                return StepResult(None, self._dispatch())
            case Finish():
                return StepResult(None, self._finish(command.job, command.outcome))
            case Cancel():
                return self._cancel(command.job)
            case AdvanceTime():
                self.now += timedelta(seconds=command.seconds)
                return StepResult(None, self._end_drain_if_due() + self._run_due_sweeps())
            case Cleanup():
                return self._cleanup(command.max_age_seconds)
            case Shutdown():
                return StepResult(None, self._shutdown())
            case GetResult():
                return self._get_result(command.job)
            case Get():
                return StepResult(self.jobs.get(command.job), ("LC-016",))
            case ComputeDelay():
                answer = backoff.delay_ms(command.policy, command.attempt, command.jitter,
                                          command.draw, command.previous_ms,
                                          command.retry_after_ms)
                return StepResult(answer, ("RT-002", "RT-009", "RT-010"))
            case Heartbeat():
                job = self.jobs.get(command.job)
                if job is not None and job.status is Status.RUNNING:
                    self.jobs[command.job] = replace(job, last_heartbeat=self.now)
                if job is not None and job.redelivery_count:
                    # Progress after a re-delivery must not reset its count (RD-004).
                    return StepResult(None, ("ST-001", "RD-004", "RD-005"))
                return StepResult(None, ("ST-001",))
            case DetectStuck():
                return self._detect_stuck(command.job_timeout_seconds)
            case StartReaper():
                return self._start_reaper(command)
            case StopReaper():
                stopped = self.reaper is not None
                self.reaper = None
                return StepResult(stopped, ("RP-007", "RP-001"))
            case StoreOutage():
                self.store_outage_sweeps += command.sweeps
                return StepResult(None, ("RP-005",))
            case ReaperStatus():
                return StepResult(self.reaper_status(), ("RP-005", "RP-002"))
            case ListExpired():
                before = self.now - timedelta(seconds=command.older_than_seconds)
                expired: list[JsonValue] = [alias for alias, job in self.jobs.items()
                                            if reaper.is_expired(job, before)]
                return StepResult(expired, ("RP-003",))
            case ExpireLeases():
                return self._expire_leases(command.lease_seconds)
            case OperatorAlerts():
                return StepResult(list[JsonValue](self.alerts), ("RD-003",))
            case ParkRequest():
                return self._park_request(command.agent, command.request)
            case OperatorRequests():
                listed: list[JsonValue] = [
                    [request_label(index), agent, request]
                    for index, (agent, request) in enumerate(self.operator_requests)]
                return StepResult(listed, ("RD-008",))
            case StaleOwnerWrite():
                # A superseded delivery writes nothing, whatever the job's state (RD-006).
                return StepResult(False, ("RD-006",))
            case JobStoreFault():
                return self._under_fault(command)
            case Restart():
                return self._restart()
            case StopBySignal():
                return self._stop_by_signal(command)
            case ListJobs():
                names: list[JsonValue] = [a for a, job in self.jobs.items()
                         if command.status is None or job.status.value == command.status]
                # At volume a listing answers for LC-038 first: a wrong answer there
                # is one cut at a page or a limit, or another job's record taken.
                return StepResult(names, ("LC-038", "LC-018") if len(names) >= lifecycle.CUT_FLOOR
                                  else ("LC-018",))
            case QueryExecutions():
                return self._query_executions(command)
            case ExecutionStats():
                counts = executions.stats(self.jobs.values(), self.now, command.hours,
                                          command.owners)
                return StepResult(dict[str, JsonValue](counts), ("LC-034",))

    def _query_executions(self, query: QueryExecutions) -> StepResult:
        """One page (LC-032) of the jobs passing the query's filters (LC-033): the
        filters' requirement first when one is given, the paging's otherwise."""
        keys: list[JsonValue] = list(executions.page(
            self.jobs, self.now, self.limits.page_size, offset=query.offset,
            limit=query.limit, status=query.status, trigger=query.trigger,
            owners=query.owners, hours=query.hours, search=query.search))
        filtered = any(value is not None for value in (
            query.status, query.trigger, query.owners, query.hours, query.search))
        return StepResult(keys, ("LC-033", "LC-032") if filtered else ("LC-032", "LC-033"))

    def health(self) -> Health:
        statuses = [job.status for job in self.jobs.values()]
        return Health(
            queued=statuses.count(Status.QUEUED),
            running=statuses.count(Status.RUNNING),
            total=len(statuses),
            processed=self.processed,
            failed=self.failed,
            cancelled=self.cancelled,
        )

    def worker_report(self) -> WorkerReport:
        """The worker's status and last heartbeat as the health report must show them."""
        if not self.shut_down:
            status = WORKER_RUNNING
        elif self.drain_deadline is not None:
            status = WORKER_STOPPING  # a drain waiting for its timeout (LC-028)
        else:
            status = WORKER_STOPPED
        return WorkerReport(status, self.last_heartbeat)

    def reaper_status(self) -> dict[str, JsonValue]:
        return {"running": self.reaper is not None, "sweeps": self.sweeps,
                "failed_sweeps": self.failed_sweeps, "deleted": self.reaper_deleted}

    def _move(self, alias: str, kind: EventKind, result: JsonValue = None,
              error: str | None = None, retry_at: datetime | None = None,
              at: datetime | None = None) -> None:
        when = self.now if at is None else at
        job = lifecycle.step(self.jobs[alias], Event(kind, when, result, error, retry_at))
        self.jobs[alias] = job
        if job.status is Status.QUEUED:
            return  # a retried attempt is not an outcome (RT-007)
        if job.status is Status.CANCELLED:
            self.cancelled += 1
        elif job.status is Status.FAILED:
            self.failed += 1
            self.processed += 1
        elif job.status is Status.SUCCEEDED:
            self.processed += 1

    def _submit(self, command: Submit) -> StepResult:
        if self.shut_down:
            return StepResult(REFUSED_SHUT_DOWN, ("LC-023",))
        if command.module is not None:
            problem = module_id_problem(command.module, self.limits.modules)
            if problem is not None:
                return StepResult(REFUSED_INVALID_MODULE if problem == INVALID_MODULE_ID
                                  else REFUSED_UNKNOWN_MODULE, ("LC-027",))
        if self.limits.max_tasks is not None and len(self.jobs) >= self.limits.max_tasks:
            return StepResult(REFUSED_CAPACITY, ("LC-009",))
        policy = command.retry
        self.jobs[command.job] = self._new_job(command, self.now)
        self.note_script(command.job)
        script = self._queued_script(command.ignores_cancel, policy)
        script.arguments = command.arguments
        script.outcome = command.outcome  # a body decided before the call, if any
        self.scripts[command.job] = script
        accepted = ("LC-008", "LC-009", "RT-001", "RT-008") if policy else ("LC-008", "LC-009")
        if command.module is not None:
            accepted = ("LC-027", *accepted)
        if command.options is not None:
            accepted = ("LC-035", *accepted)
        if command.owner is not None or command.trigger is not None:
            accepted = ("LC-033", *accepted)
        if command.arguments is not None:
            accepted = ("LC-036", *accepted)
        if not self.limits.queued_execution:
            accepted = ("LC-037", *accepted, *self._run_in_submit(command.job))
        return StepResult(ACCEPTED, accepted)

    def _run_in_submit(self, alias: str) -> tuple[str, ...]:
        """Queued execution switched off (LC-037): the job starts and its body ends inside
        the submit call, at the call's instant, as a job started at a dispatch point and
        ended there would; it is never queued for a dispatch.

        Raises:
            ValueError: the body was not decided before the call (it would block submit),
                or the submission carries a retry policy (not a combination checked).
        """
        self.note_script(alias)
        script = self.scripts[alias]
        if script.outcome is None:
            raise ValueError("with queued execution off, submit runs the body: decide it in"
                             " the Submit command (outcome=...)")
        if script.policy is not None:
            raise ValueError("with queued execution off, a submission carries no retry policy")
        self._move(alias, EventKind.START)
        script.starts += 1
        return self._run_body(alias)

    def _submit_concurrently(self, command: SubmitConcurrently) -> StepResult:
        """Submissions made at once from several threads (LC-030) end as if made one after
        another in some order: each is accepted, with an id of its own, and the runtime
        holds every one. The order among them is the runtime's: the harness adopts the
        order it lists them in. A shut-down runtime refuses them all (LC-023).

        Raises:
            ValueError: the batch does not fit under the task cap (which submissions a
                full cap refuses depends on the threads' order, so no check asks it).
        """
        if not self.limits.queued_execution:
            raise ValueError("submissions at once are not checked with queued execution off")
        if self.shut_down:
            return StepResult([REFUSED_SHUT_DOWN] * len(command.jobs), ("LC-023", "LC-030"))
        cap = self.limits.max_tasks
        if cap is not None and len(self.jobs) + len(command.jobs) > cap:
            raise ValueError(f"a concurrent submit of {len(command.jobs)} jobs must fit under"
                             f" the task cap ({len(self.jobs)} of {cap} held): which of them"
                             " a full cap refuses depends on the threads' order")
        for alias in command.jobs:
            self.jobs[alias] = lifecycle.new_job(self.now)
            self.note_script(alias)
            self.scripts[alias] = self._queued_script(False)
        return StepResult([ACCEPTED] * len(command.jobs), ("LC-030", "LC-008", "LC-009"))

    def _queued_script(self, ignores_cancel: bool,
                       policy: RetryPolicy | None = None) -> _Script:
        """A new job's script, its place at the tail of the queue."""
        script = _Script(ignores_cancel, policy, place=self.next_place)
        self.next_place += 1
        return script

    def adopt_submission(self, command: Submit, submitted_at: datetime) -> None:
        """Hold the job of a submission the spec refuses and a runtime accepted (over the
        task cap, after shutdown, with an unknown module): the harness adopts it, so that
        later commands judge the runtime with it."""
        self.jobs[command.job] = self._new_job(command, submitted_at)
        self.note_script(command.job)
        self.scripts[command.job] = self._queued_script(command.ignores_cancel, command.retry)

    @staticmethod
    def _new_job(command: Submit, submitted_at: datetime) -> JobState:
        """The record a submission creates, with what it names (LC-033, LC-035)."""
        policy = command.retry
        return lifecycle.new_job(submitted_at, policy.max_retries if policy else 0,
                                 command.owner, command.trigger, command.options)

    def requeue_at_tail(self, waiting: list[str]) -> None:
        """Put the `waiting` jobs, in their order, at the tail of the queue: a runtime
        started other jobs ahead of them (a retried job re-queued at the tail)."""
        for alias in sorted(waiting, key=lambda a: self.scripts[a].place):
            self.scripts[alias].place = self.next_place
            self.next_place += 1

    def adopt_listing(self, aliases: list[str]) -> None:
        """List the jobs of `aliases` in this order, in the places they hold in the listing
        (their queue places stay: a runtime may list in one order and start in another)."""
        batch = set(aliases)
        if len(batch) != len(aliases) or not batch <= self.jobs.keys():
            raise ValueError(f"not a held batch of distinct jobs: {aliases}")
        order = iter(aliases)
        self.jobs = {(picked := next(order) if alias in batch else alias): self.jobs[picked]
                     for alias in self.jobs}

    def adopt_order(self, aliases: list[str]) -> None:
        """Hold the jobs of `aliases` (a concurrent batch, LC-030) in this order, in the
        places the batch holds: the runtime decided the order of submissions made at once."""
        self.adopt_listing(aliases)
        # The batch's queue places follow the same order.
        places = sorted(self.scripts[alias].place for alias in aliases)
        for alias, place in zip(aliases, places, strict=True):
            self.scripts[alias].place = place

    def _dispatch(self) -> tuple[str, ...]:
        running = sum(job.status is Status.RUNNING for job in self.jobs.values())
        # While a drain is under way, queued jobs still start (LC-028).
        requirements = ["LC-028"] if self.drain_deadline is not None else []
        requirements += ["LC-010", "LC-012"]
        if self.carried_over:
            requirements.insert(0, "RS-002")  # the jobs queued at the restart go first
        if any(job.redelivery_count for job in self.jobs.values()):
            requirements.append("RD-004")  # a new delivery is no reason to reset the count
        for alias, job in sorted(self.jobs.items(), key=lambda item: self.scripts[item[0]].place):
            if job.retry_count and job.status in (Status.QUEUED, Status.CANCELLED):
                # A dispatch decides about a job in (or cancelled in) backoff.
                # Whether it may start now depends on the delay (RT-002) and on backoff
                # being a queued state (RT-003).
                requirements += ["RT-006"] if job.status is Status.CANCELLED else ["RT-003",
                                                                                   "RT-002"]
            if running >= self.limits.max_concurrent:
                continue
            waiting = job.next_attempt_at is not None and job.next_attempt_at > self.now
            if job.status is Status.QUEUED and not waiting:
                self._move(alias, EventKind.START)
                self.note_script(alias)
                self.scripts[alias].starts += 1
                running += 1
                requirements += self._run_body(alias)
        return tuple(dict.fromkeys(requirements))

    def _run_body(self, alias: str) -> tuple[str, ...]:
        """Let a running job's body end if the harness has already decided how.

        Returns:
            The requirements that decided how it ended (none if it did not end).
        """
        script = self.scripts[alias]
        job = self.jobs.get(alias)
        if job is None or job.status is not Status.RUNNING or alias in self.orphans:
            return ()  # an orphan's body went with the process that ran it (RS-003)
        if script.cancel_requested and (not script.ignores_cancel or script.outcome is not None):
            self._move(alias, EventKind.CANCEL)
            return ("LC-013", "LC-014")
        if isinstance(script.outcome, Succeed):
            self._move(alias, EventKind.SUCCEED, result=script.outcome.result)
            return ("LC-006",)
        if not isinstance(script.outcome, Raise):
            return ()
        raised = script.outcome
        policy = script.policy
        if policy is not None and policy.retries(raised.error_type, job.retry_count):
            delay = backoff.delay_ms(policy, job.retry_count, retry_after_ms=raised.retry_after_ms)
            plain = backoff.delay_ms(policy, job.retry_count)
            script.due_without_retry_after = (self.now + timedelta(milliseconds=plain)
                                              if plain < delay else None)
            self.note_script(alias)
            script.retried_at, script.retry_after_ms = self.now, raised.retry_after_ms
            self._move(alias, EventKind.RETRY, retry_at=self.now + timedelta(milliseconds=delay))
            script.outcome = None  # the next attempt waits for its own decision
            return ("RT-003", "RT-002", "RT-010", "RT-007")
        self._move(alias, EventKind.FAIL,
                   error=lifecycle.error_message(raised.error_type, raised.message))
        if policy is not None:
            return ("RT-004", "RT-005", "RT-007", "LC-007")
        return ("LC-007", "LC-006")

    def _finish(self, alias: str, outcome: Outcome) -> tuple[str, ...]:
        script = self.scripts.get(alias)
        if script is None or script.outcome is not None:
            return ("LC-003",)
        self.note_script(alias)
        script.outcome = outcome
        ended = self._run_body(alias)
        if script.cancel_requested:
            return ("LC-014", "LC-003")
        return (*ended, "LC-003", "LC-006", "LC-007", "LC-025")

    def _cancel(self, alias: str) -> StepResult:
        job = self.jobs.get(alias)
        if job is None or job.status.is_terminal:
            return StepResult(False, ("LC-015",))
        script = self.scripts[alias]
        if job.status is Status.QUEUED:
            self._move(alias, EventKind.CANCEL)
            if job.retry_count:
                return StepResult(True, ("RT-006", "LC-011", "LC-025"))
            return StepResult(True, ("LC-011", "LC-025"))
        if script.cancel_requested:
            return StepResult(False, ("LC-015",))
        self.note_script(alias)
        script.cancel_requested = True
        if self.limits.cancel_interrupts:
            # The invocation in flight is interrupted, whatever the body does (LC-026).
            script.interrupted += 1
            self._move(alias, EventKind.CANCEL)
            return StepResult(True, ("LC-026", "LC-025"))
        self._run_body(alias)
        return StepResult(True, ("LC-013", "LC-025"))

    def _detect_stuck(self, job_timeout_seconds: float) -> StepResult:
        timeout = timedelta(seconds=job_timeout_seconds)
        stuck = [alias for alias, job in self.jobs.items()
                 if job.status is Status.RUNNING and job.last_heartbeat is not None
                 and self.now - job.last_heartbeat > timeout]
        for alias in stuck:
            self._move(alias, EventKind.FAIL, error=lifecycle.STUCK_ERROR)
        return StepResult(len(stuck), ("ST-002", "ST-003", "ST-004"))

    # -- the reaper (RP-001..RP-007) -------------------------------------------------------

    def _start_reaper(self, command: StartReaper) -> StepResult:
        if self.reaper is not None:
            return StepResult(REFUSED_REAPER_RUNNING, ("RP-006", "RP-010") if command.old_names
                              else ("RP-006",))
        ttl = (self.limits.reaper_ttl_seconds if command.ttl_seconds is None
               else command.ttl_seconds)
        interval = (self.limits.reaper_sweep_interval_ms if command.sweep_interval_ms is None
                    else command.sweep_interval_ms)
        self.reaper = reaper.ReaperSchedule.started(self.now, ttl, interval)
        if command.old_names:
            return StepResult(REAPER_STARTED, ("RP-010", "RP-006", "RP-002"))
        return StepResult(REAPER_STARTED, ("RP-006", "RP-002"))

    def _run_due_sweeps(self, fail_at: int | None = None) -> tuple[str, ...]:
        """Sweep at every boundary the clock has reached, each with its own cutoff.

        `fail_at`: the store write (from 1, counted over every sweep of the step, one per
        job deleted) that fails (RP-008): its sweep stops there and counts as failed; the
        jobs it deleted before stay deleted and counted, the rest wait for the next sweep.
        """
        writes = 0
        schedule = self.reaper
        if schedule is None:
            holds_terminal = any(job.status.is_terminal for job in self.jobs.values())
            return ("RP-001",) if holds_terminal else ()
        requirements: list[str] = []
        for boundary in reaper.due_sweeps(schedule, self.now):
            requirements += ["RP-002", "RP-003", "RP-004"]
            if self.store_outage_sweeps:
                self.store_outage_sweeps -= 1
                self.failed_sweeps += 1
                requirements.append("RP-005")
                continue
            if self.failed_sweeps:
                requirements.append("RP-005")  # this sweep retries what a failed one left
            expired = [alias for alias, job in self.jobs.items()
                       if reaper.is_expired(job, boundary - schedule.ttl)]
            if fail_at is not None and writes < fail_at <= writes + len(expired):
                kept = fail_at - writes - 1  # the deletes before the failed one stand
                for alias in expired[:kept]:
                    del self.jobs[alias]
                self.reaper_deleted += kept
                self.failed_sweeps += 1
                writes += kept + 1
                requirements += ["RP-008", "RP-005"]
                continue
            writes += len(expired)
            for alias in expired:
                del self.jobs[alias]
            self.sweeps += 1
            self.reaper_deleted += len(expired)
            if expired:
                self.logs.append(ExpectedLog("RP-009", DEBUG, (("count", len(expired)),)))
        self.reaper = replace(schedule, next_sweep=reaper.next_after(schedule, self.now))
        return tuple(dict.fromkeys(requirements))

    # -- re-delivery (RD-001..RD-005) -------------------------------------------------------

    def _expire_leases(self, lease_seconds: float,
                       crash_at: int | None = None) -> StepResult:
        """One lease pass. `crash_at`: the store write (from 1) at which the process dies
        (RD-007): the writes before it stand, it and everything after never happen, and
        the answer is None. A re-queue is one write; a park is two, the job first marked
        alerted, then the alert raised, then the job failed as poison; a job already marked
        (by a pass that died before failing it) is only failed, never alerted again."""
        lease = timedelta(seconds=lease_seconds)
        lapsed = [alias for alias, job in self.jobs.items()
                  if job.status is Status.RUNNING and job.last_heartbeat is not None
                  and self.now - job.last_heartbeat > lease]
        requeued = parked = writes = 0
        for alias in lapsed:
            job = self.jobs[alias]
            if job.redelivery_count < self.limits.max_redelivery:
                writes += 1
                if writes == crash_at:
                    return StepResult(None, ("RD-007", "RD-001"))
                self.jobs[alias] = lifecycle.step(job, Event(EventKind.REDELIVER, self.now))
                self.scripts[alias].outcome = None  # the next delivery waits for its own
                requeued += 1
                continue
            if not job.alerted:
                writes += 1
                if writes == crash_at:
                    return StepResult(None, ("RD-007", "RD-003"))
                self.jobs[alias] = job = replace(job, alerted=True)
            if alias not in self.alerts:  # the alert comes first, once per job id
                self.alerts.append(alias)
                self.alert_states.append((alias, job.status.value))
            writes += 1
            if writes == crash_at:
                return StepResult(None, ("RD-007", "RD-003"))
            self._move(alias, EventKind.FAIL, error=lifecycle.POISON_ERROR)
            self.jobs[alias] = replace(self.jobs[alias], poisoned=True)
            parked += 1
        answer: dict[str, JsonValue] = {"requeued": requeued, "parked": parked}
        orphaned = ("RS-003",) if self.orphans & set(lapsed) else ()
        return StepResult(answer, ("RD-001", "RD-002", "RD-003", "RD-005", *orphaned))

    def lease_pass_writes(self, lease_seconds: float) -> int:
        """How many store writes a lease pass makes now (RD-007): for a fault's draw."""
        lease = timedelta(seconds=lease_seconds)
        writes = 0
        for job in self.jobs.values():
            if (job.status is Status.RUNNING and job.last_heartbeat is not None
                    and self.now - job.last_heartbeat > lease):
                below = job.redelivery_count < self.limits.max_redelivery
                writes += 1 if below or job.alerted else 2
        return writes

    def _under_fault(self, command: JobStoreFault) -> StepResult:
        """A lease pass or a clock step with a store fault planned (RD-007, RP-008)."""
        self.crash_left = self.crash_alert_states = None
        inner, fault = command.command, command.fault
        if isinstance(inner, AdvanceTime):
            if fault.kind is not FaultKind.FAIL:
                raise ValueError("the reaper's store faults are write failures only")
            self.now += timedelta(seconds=inner.seconds)
            requirements = self._end_drain_if_due() + self._run_due_sweeps(fault.write)
            return StepResult(None, (*requirements, "RP-008"))
        if fault.kind is FaultKind.FAIL:
            # The failed write is made again at once: the pass ends as without the fault.
            result = self._expire_leases(inner.lease_seconds)
            return StepResult(result.answer, (*result.requirements, "RD-007"))
        crashed = self._expire_leases(inner.lease_seconds, crash_at=fault.write)
        if crashed.answer is not None:  # the pass made fewer writes: the crash never came
            return StepResult(crashed.answer, (*crashed.requirements, "RD-007"))
        self.crash_left = dict(self.jobs)
        self.crash_alert_states = list(self.alert_states)
        # The restarted rescuer passes again at once, knowing only what the store holds.
        recovery = self._expire_leases(inner.lease_seconds)
        # The fault's rule comes last: a difference the fault does not explain is blamed
        # on the pass's own rules first (conformance/job_faults.py holds the fault's back).
        return StepResult(recovery.answer, (*recovery.requirements, *crashed.requirements,
                                            "RD-007"))

    def _park_request(self, agent: str, request: str) -> StepResult:
        """The request the agent holds under this id, else a new one (RD-008)."""
        key = (agent, request)
        if key not in self.operator_requests:
            self.operator_requests.append(key)
        return StepResult(request_label(self.operator_requests.index(key)), ("RD-008",))

    def _restart(self) -> StepResult:
        """The process stops without a shutdown and a new one opens over the same store
        (RS-001..RS-003). Every record stays as it is. What was the process's own starts
        afresh: its outcome counters, its reaper and the alerts it answered, its last
        heartbeat, a shutdown or drain it was under. Running jobs lose their bodies."""
        self.orphans = {alias for alias, job in self.jobs.items()
                        if job.status is Status.RUNNING}
        self.carried_over = {alias for alias, job in self.jobs.items()
                             if job.status is Status.QUEUED}
        self.processed = self.failed = self.cancelled = 0
        self.shut_down = False
        self.drain_deadline = None
        self.reaper = None
        self.store_outage_sweeps = self.sweeps = self.failed_sweeps = self.reaper_deleted = 0
        self.alerts, self.alert_states = [], []
        self.crash_left = self.crash_alert_states = None
        self.last_heartbeat = None
        self.heartbeats_at_restart = {alias: job.last_heartbeat
                                      for alias, job in self.jobs.items()}
        return StepResult(None, ("RS-001", "RS-003") if self.orphans else ("RS-001",))

    def _stop_by_signal(self, command: StopBySignal) -> StepResult:
        """SIGTERM or SIGINT (the same stop, RS-007), the grace period, then a new process
        over the same store (RS-004..RS-006).

        The signal starts the profile's shutdown: with shutdown_mode cancel it ends every
        active job at once (LC-022), so the process exits on the signal (RS-004); with
        drain it ends nothing (LC-028). The steps during the grace period come next, each
        as it would come at any time: a body that ends, ends as it ends (its record says
        so), and time that passes may reach the drain's timeout, which cancels what is
        left (RS-006). When the grace period is over the clock stands `grace_seconds`
        after the signal; a process with work still queued or running is killed then,
        changing no record, and its restart finds the running jobs running (RS-003) and
        the queued ones queued (RS-002); one with none has exited by itself (RS-005).
        """
        self.stop_escalated = False
        at_signal = self.now
        mode: tuple[str, ...] = (
            ("RS-004",) if self.limits.shutdown_mode == SHUTDOWN_CANCEL else ("RS-005",))
        if mode == ("RS-005",) and (command.during or command.grace_seconds
                                    >= self.limits.drain_timeout_seconds):
            mode = ("RS-006", "RS-005")  # time passes in the drain before the kill
        sigint = ("RS-007",) if command.signal == "SIGINT" else ()
        shutdown = self._shutdown()
        in_grace: list[str] = []
        for step in command.during:
            in_grace += self._apply(step).requirements
        rest = at_signal + timedelta(seconds=command.grace_seconds) - self.now
        in_grace += self._apply(AdvanceTime(max(rest.total_seconds(), 0.0))).requirements
        active = any(not job.status.is_terminal for job in self.jobs.values())
        restart = self._restart()
        self.stop_escalated = active
        answer = ESCALATED_TO_SIGKILL if active else exited_on(command.signal)
        # RS-008 (the host's handlers back after the stop) is the harness's own check.
        return StepResult(answer, (*sigint, *mode, *shutdown, *dict.fromkeys(in_grace),
                                   *restart.requirements))

    def _cleanup(self, max_age_seconds: float) -> StepResult:
        limit = timedelta(seconds=max_age_seconds)
        expired = [
            alias for alias, job in self.jobs.items()
            if job.status.is_terminal and self.now - (job.finished_at or job.submitted_at) >= limit
        ]
        for alias in expired:
            del self.jobs[alias]
        return StepResult(len(expired), ("LC-019", "LC-020", "LC-021"))

    def _shutdown(self) -> tuple[str, ...]:
        if self.limits.shutdown_mode == SHUTDOWN_DRAIN:
            if not self.shut_down:  # a second shutdown does not restart the timeout
                self.shut_down = True
                self.drain_deadline = self.now + timedelta(
                    seconds=self.limits.drain_timeout_seconds)
                self._end_drain_if_due()
            return ("LC-028", "LC-023", "LC-025")
        self._cancel_active(self.now)
        self.shut_down = True
        return ("LC-022", "LC-023", "LC-025")

    def _cancel_active(self, at: datetime) -> None:
        """Cancel every queued and running job at `at` (LC-022, LC-028)."""
        for alias, job in self.jobs.items():
            if job.status.is_terminal:
                continue
            self.note_script(alias)
            self.scripts[alias].cancel_requested = True
            self._move(alias, EventKind.CANCEL, at=at)

    def _end_drain_if_due(self) -> tuple[str, ...]:
        """At the drain's deadline, cancel what is still active (LC-028)."""
        deadline = self.drain_deadline
        if deadline is None or self.now < deadline:
            return ("LC-028",) if deadline is not None else ()
        self.drain_deadline = None
        self._cancel_active(deadline)
        return ("LC-028", "LC-025")

    def _get_result(self, alias: str) -> StepResult:
        job = self.jobs.get(alias)
        if job is None:
            return StepResult(NOT_FOUND, ("LC-017",))
        if job.status is not Status.SUCCEEDED:
            return StepResult(not_completed(job.status.value), ("LC-017",))
        return StepResult(job.result, ("LC-017", "LC-006"))
