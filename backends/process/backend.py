"""The `process` backend: the kit's side of the process protocol.

It drives any executable that speaks the protocol (docs/process-protocol.md) over its
stdin and stdout, so a job runtime written in another language can be checked without
a Python adapter. The command comes from JOBCONFORM_PROCESS_COMMAND (split like a shell
would); by default it is the reference child, `python -m jobconform.backends.process.child`,
which serves the memory backend.

The child claims its name, profile and areas in the handshake, which also agrees on the
protocol's version. Each check opens its own runtime in the child, and every request
carries the virtual clock's reading.

- Version 2 carries every area: the backend's openers and the runtimes they open are
  `RemoteObject`s (remote.py), and the kit's objects (task bodies, agents, targets) stay
  here and are called back by the child.
- Version 1 carries lifecycle, retry and stuck only (`ProcessRuntime` below): the task
  outcomes the harness decided travel with the next request, and the child answers which
  bodies ended in a retry, so that the next attempt waits for a new decision here too.
  A version-1 child's other claims are dropped, so the report shows them not claimed.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from jobconform.backends.capabilities import ACROSS, CAPABILITIES, NOT_CARRIED, WITH_AREA
from jobconform.backends.process import interfaces
from jobconform.backends.process.errors import ChildExited, ChildStartError, MalformedMessage
from jobconform.backends.process.remote import KitObjects, RemoteObject
from jobconform.backends.process.session import (
    SIGNAL_EXIT_LIMIT_SECONDS,
    Answer,
    ChildSession,
    replace_shared_session,
    shared_session,
)
from jobconform.backends.process.wire import (
    PROTOCOL_AREAS,
    V1,
    JobRecord,
    WireError,
    decode_health,
    decode_job,
    encode_jitter,
    encode_outcome,
    encode_policy,
    encode_settings,
    encode_timestamp,
)
from jobconform.backends.protocol import (
    IDEMPOTENCY,
    REAPER,
    REDELIVERY,
    REMINDERS,
    RETRY,
    STUCK,
    CapacityExceeded,
    Clock,
    JobNotCompleted,
    JobNotFound,
    RuntimeSettings,
    RuntimeShutDown,
    TaskScript,
    store_faults,
)
from jobconform.backends.restart import RESTART, SignalPlan, SignalStop
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.model import Health
from jobconform.spec.areas import BUILTIN_AREAS

# The opener of each area checked through a service of its own, and its area.
# The Backend message that opens a job runtime in a restarted child (RS-001..RS-004).
RESTART_OPENER = "open_restarted"
_OPENERS = {area.opener: area.name for area in BUILTIN_AREAS if area.opener is not None}

COMMAND_VARIABLE = "JOBCONFORM_PROCESS_COMMAND"
TIMEOUT_VARIABLE = "JOBCONFORM_PROCESS_TIMEOUT"
# Set to 1 to check every message against the protocol's JSON Schemas, on both sides (the
# reference child reads it too). It costs about a millisecond per message, so it is off
# unless asked for; the tests switch it on.
VALIDATE_VARIABLE = "JOBCONFORM_PROCESS_VALIDATE"
# Below the harness's own 60 s guard, so a hung child is reported as one, with its stderr.
DEFAULT_TIMEOUT_SECONDS = 30.0
REFERENCE_CHILD = "jobconform.backends.process.child"


def reference_child_command() -> list[str]:
    return [sys.executable, "-m", REFERENCE_CHILD]


def configured_command() -> list[str]:
    """The child's argv from JOBCONFORM_PROCESS_COMMAND, else the reference child.

    Raises:
        ChildStartError: the variable is set but cannot be split into a command.
    """
    text = os.environ.get(COMMAND_VARIABLE, "").strip()
    if not text:
        return reference_child_command()
    try:
        return shlex.split(text)
    except ValueError as error:
        raise ChildStartError(f"{COMMAND_VARIABLE}={text!r} is not a valid command line"
                              f" ({error}); quote it as you would in a shell") from None


def configured_timeout() -> float:
    """The real-time limit per answer, from JOBCONFORM_PROCESS_TIMEOUT (seconds).

    Raises:
        ValueError: the variable is not a positive number.
    """
    text = os.environ.get(TIMEOUT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{TIMEOUT_VARIABLE}={text!r}: give a positive number of seconds")
    return seconds


def validation_requested() -> bool:
    return os.environ.get(VALIDATE_VARIABLE, "").strip().lower() in ("1", "true", "yes")


def carried_areas(version: int) -> frozenset[str]:
    """The areas a protocol version carries: version 2 every area whose opener its
    `Backend` interface declares (an area added to the kit without one is not carried,
    so a child's claim of it shows as not claimed)."""
    if version == V1:
        return PROTOCOL_AREAS
    openers = interfaces.methods(interfaces.Backend)
    # A restart over the same store (RS-001..RS-004) is carried by `open_restarted`, which
    # opens a job runtime in a new child over the store the old one left.
    return frozenset(area.name for area in BUILTIN_AREAS
                     if (area.opener or "open") in openers and (
                         area.name != RESTART or RESTART_OPENER in openers))


def carried_capabilities(version: int) -> frozenset[str]:
    """What a child may claim through a protocol version: the areas it carries and each
    capability whose declaration (jobconform.backends.capabilities) says the protocol
    carries it: with its area, on every version (a partial claim only narrows what the kit
    asks, and the kit sends SIGTERM itself for `stop-signal`); or by an interface member,
    from version 2 on, when version 2's interfaces have it (`breaker-seams` by the breaker
    runtime's seams, `operator-queue` by the job runtime's `park_request`, ...); and
    `store-faults:<area>` where the area's runtime interface carries inject_store_fault.
    The other capabilities need what no message carries (see the notes below)."""
    carried = carried_areas(version)
    # Store faults, where the area's runtime interface carries inject_store_fault (RD-007,
    # RP-008, IK-015, RM-014); ProcessCrashed and StoreWriteFailed cross as errors.
    faults = {store_faults(area) for area, runtime_interface in (
        (REDELIVERY, interfaces.JobRuntime), (REAPER, interfaces.JobRuntime),
        (IDEMPOTENCY, interfaces.IdempotencyRuntime), (REMINDERS, interfaces.ReminderRuntime))
        if area in carried and version != V1
        and "inject_store_fault" in interfaces.methods(runtime_interface)}
    return carried | faults | {name for name, capability in CAPABILITIES.items()
                               if (capability.area in carried or capability.area == ACROSS)
                               and _carries(capability.process, version)}


def _carries(process: str, version: int) -> bool:
    """True if a protocol version carries what a capability's process column names."""
    if process == WITH_AREA:
        return True
    if process == NOT_CARRIED or version == V1:
        return False
    member, _, parameter = process.rstrip(")").partition("(")
    interface, _, method = member.partition(".")
    found = interfaces.methods(interfaces.interface_named(interface)).get(method)
    return found is not None and (not parameter or parameter in dict(found.parameters))


NO_DEPRECATED_ALIASES_NOTE = (
    "Deprecated aliases (deprecated-aliases) are not claimed through the process protocol:"
    " the aliases the spec names are one SDK's Python names (a store's put, a record's"
    " attempt_number, start_reaper's interval_seconds and max_age_seconds), whose warning is"
    " Python's DeprecationWarning, which no message carries; TS-013, RT-011 and RP-010 are"
    " reported not claimed.")


SERIAL_STORE_NOTE = (
    "TS-010 (saves from several threads at once) reaches the child through one pipe that"
    " carries one request at a time: the kit's threads send their saves together, but the"
    " child's store is never called from two threads, so a pass shows the saves arrive and"
    " are kept, not that the child's store is thread-safe.")


class ProcessBackend:
    """Entry point `process`: a child process speaking the protocol, found by command.

    Args:
        command: the child's argv; default JOBCONFORM_PROCESS_COMMAND or the reference child.
        timeout_seconds: the real-time limit per answer; default JOBCONFORM_PROCESS_TIMEOUT
            or 30 s.
        (JOBCONFORM_PROCESS_VALIDATE=1 checks every message against the schemas.)
        session: a session to use instead of the shared one for the command (tests).
        signal_limit_seconds: how long a child sent a stop signal that has stopped
            answering has to exit, in real time, before SIGKILL (a safety limit; the
            grace period is virtual time).

    Raises:
        ProcessBackendError: the child cannot be started or fails the handshake.
    """

    def __init__(self, command: Sequence[str] | None = None,
                 timeout_seconds: float | None = None,
                 session: ChildSession | None = None,
                 signal_limit_seconds: float = SIGNAL_EXIT_LIMIT_SECONDS) -> None:
        # How long, in real time, a child sent SIGTERM has to exit before SIGKILL (RS-004).
        self.signal_limit_seconds = signal_limit_seconds
        # How to start the shared session again once a child has broken it (None: a
        # session given by a test is never replaced).
        self._restart: tuple[list[str], float, bool] | None = None
        if session is None:
            argv = list(command) if command is not None else configured_command()
            timeout = configured_timeout() if timeout_seconds is None else timeout_seconds
            self._restart = (argv, timeout, validation_requested())
            session = shared_session(*self._restart)
        self._attach(session)
        claims = session.claims
        self.name = f"process:{claims.name}"
        self.profile = claims.profile
        # The libraries the child says it wraps, with their versions: the kit cannot ask
        # pip about a child's (npm's, a JVM's) packages, so the report carries the child's.
        self.libraries: Mapping[str, str] = claims.libraries
        # A child's claims beyond what its version carries are dropped. Its
        # `store-faults:<area>` claims are kept in version 2: each area's runtime carries
        # inject_store_fault and store_fault_struck, and the child arms its own store.
        self.capabilities = claims.capabilities & carried_capabilities(session.version)
        self.version = session.version
        self.report_notes = (NO_DEPRECATED_ALIASES_NOTE,
                             SERIAL_STORE_NOTE)

    def _attach(self, session: ChildSession) -> None:
        """Talk to the child through `session`; version 2 needs the kit's objects on it."""
        self.session = session
        self._remote: RemoteObject | None = None
        if session.version >= 2:
            if session.kit_objects is None:
                kit = KitObjects(session)
                session.kit_objects = kit
                session.on_callback = kit.serve
            assert isinstance(session.kit_objects, KitObjects)
            self._remote = RemoteObject(session.kit_objects, "backend", interfaces.Backend,
                                        None)

    def _live_session(self) -> None:
        if not self.session.alive and self._restart is not None:
            # A child that wrote a bad line or exited broke only the check it was in:
            # every later check gets a fresh child, as it gets a fresh runtime.
            self._attach(shared_session(*self._restart))

    def open(self, settings: RuntimeSettings, clock: Clock) -> Any:
        """A fresh runtime in the child: a `RemoteObject` (version 2) or a
        `ProcessRuntime` (version 1)."""
        self._live_session()
        if self._remote is not None:
            return self._remote.open(settings, clock)
        answer = self.session.request("open", {"settings": encode_settings(settings)},
                                      now=encode_timestamp(clock.now()))
        return ProcessRuntime(self.session, str(answer.result["runtime"]), clock,
                              with_retry=RETRY in self.capabilities,
                              with_stuck=STUCK in self.capabilities)

    def restart(self, runtime: Any, settings: RuntimeSettings, clock: Clock,
                bodies: Mapping[str, TaskScript]) -> Any:
        """A crash and a new child (RS-001..RS-003): the child is killed (SIGKILL: it
        writes nothing more), a new one started with the same command, and a job runtime
        opened in it over the store the old one left."""
        self.session.kill()
        return self._open_restarted(settings, clock, bodies)

    def stop_by_signal(self, runtime: Any, settings: RuntimeSettings, clock: Clock,
                       bodies: Mapping[str, TaskScript], plan: SignalPlan) -> SignalStop:
        """A real SIGTERM or SIGINT to the child (RS-004..RS-008); then the grace period's
        steps, each followed by a settle while the child is there (its bodies are called
        back within a request, and the time travels with it), so a body that ends in the
        grace period ends in the child; a child with no work left exits by itself. At the
        grace period's end a child still answering is killed (SIGKILL), and one that is
        not gets the real-time safety limit to exit first; its exit status says whether
        it put the host's handlers back. Then a new child over the same store."""
        self.session.send_stop_signal(plan.signal)
        for step in plan.steps:
            step()
            if self.session.alive:
                with contextlib.suppress(ChildExited):  # it exited once its work was done
                    runtime.settle()
        # A child exits after the answer with which its last job ended, before it reads
        # another line: one that answers a read now has chosen to stay, so it is killed
        # at once; one that does not is given the safety limit to finish exiting.
        stayed = False
        if self.session.alive:
            with contextlib.suppress(ChildExited):
                runtime.health()
                stayed = True
        report = self.session.await_exit(0.0 if stayed else self.signal_limit_seconds)
        return SignalStop(self._open_restarted(settings, clock, bodies), report.escalated,
                          report.handlers_restored)

    def _open_restarted(self, settings: RuntimeSettings, clock: Clock,
                        bodies: Mapping[str, TaskScript]) -> Any:
        old = self.session
        # A session a test gave is replaced by one of its own, never by the shared one.
        self._attach(replace_shared_session(*self._restart) if self._restart is not None
                     else ChildSession(old.command, old.timeout_seconds, old.validate))
        assert self._remote is not None, "restart is carried by version 2 only"
        return self._remote.open_restarted(settings, clock, dict(bodies))

    def __getattr__(self, name: str) -> Any:
        """The opener of each service area the child claims (`open_breaker`, ...), as the
        harness looks them up; an area not claimed has none."""
        if (self.__dict__.get("_remote") is not None and name in _OPENERS
                and _OPENERS[name] in self.capabilities):
            self._live_session()
            return getattr(self._remote, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class ProcessRuntime:
    """One runtime inside a version-1 child, driven request by request."""

    def __init__(self, session: ChildSession, handle: str, clock: Clock, with_retry: bool,
                 with_stuck: bool) -> None:
        self._session = session
        self._handle = handle
        self._clock = clock
        self._with_retry = with_retry
        self._with_stuck = with_stuck
        self._scripts: dict[str, TaskScript] = {}
        # Scripts whose current attempt's outcome the child has not been sent yet.
        self._undelivered: dict[str, TaskScript] = {}

    # -- the one way to talk to the child ----------------------------------------------------

    def _ask(self, operation: str, **args: Any) -> Answer:
        answer = self._session.request(operation, args,
                                       now=encode_timestamp(self._clock.now()),
                                       runtime=self._handle, decisions=self._new_decisions())
        for job_id in answer.next_attempt:
            script = self._scripts.get(job_id)
            if script is None:
                raise MalformedMessage(f"the child `{self._session.display}` reported a next"
                                       f" attempt of job {job_id!r}, which it never created")
            # The harness's next decision for this job is for the new attempt.
            script.next_attempt()
            self._undelivered[job_id] = script
        return answer

    def _result(self, operation: str, **args: Any) -> Any:
        return self._ask(operation, **args).result

    def _new_decisions(self) -> list[dict[str, Any]]:
        decisions = []
        for job_id, script in list(self._undelivered.items()):
            outcome = script.decision()
            if outcome is not None:
                del self._undelivered[job_id]
                decisions.append({"job_id": job_id, "outcome": encode_outcome(outcome)})
        return decisions

    def _job(self, document: Any) -> JobRecord:
        try:
            return decode_job(document, self._with_retry, self._with_stuck)
        except WireError as error:
            raise MalformedMessage(f"the child `{self._session.display}` sent a job record"
                                   f" the kit cannot read: {error}") from None

    # -- the runtime protocol -----------------------------------------------------------------

    def submit(self, script: TaskScript, retry: RetryPolicy | None = None) -> str:
        answer = self._ask("submit", honours_cancellation=script.honours_cancellation,
                           retry=None if retry is None else encode_policy(retry))
        if answer.error_type == "CapacityExceeded":
            raise CapacityExceeded(answer.error_message)
        if answer.error_type == "RuntimeShutDown":
            raise RuntimeShutDown(answer.error_message)
        job_id = str(answer.result["job_id"])
        self._scripts[job_id] = script
        self._undelivered[job_id] = script
        return job_id

    def dispatch(self) -> None:
        self._ask("dispatch")

    def settle(self) -> None:
        self._ask("settle")

    def cancel(self, job_id: str) -> bool:
        return bool(self._result("cancel", job_id=job_id))

    def get(self, job_id: str) -> JobRecord | None:
        document = self._result("get", job_id=job_id)
        return None if document is None else self._job(document)

    def get_result(self, job_id: str) -> object:
        answer = self._ask("get_result", job_id=job_id)
        if answer.error_type == "JobNotFound":
            raise JobNotFound(job_id)
        if answer.error_type == "JobNotCompleted":
            raise JobNotCompleted(job_id, str(answer.error_status))
        return answer.result

    def list_jobs(self, status: str | None = None) -> list[JobRecord]:
        return [self._job(document) for document in self._result("list_jobs", status=status)]

    def cleanup(self, max_age_seconds: float) -> int:
        return int(self._result("cleanup", max_age_seconds=max_age_seconds))

    def shutdown(self) -> None:
        self._ask("shutdown")

    def health(self) -> Health:
        return decode_health(self._result("health"))

    def close(self) -> None:
        if self._session.alive:
            self._ask("close")
        self._scripts.clear()
        self._undelivered.clear()

    # -- retry and stuck detection, for a child claiming those areas ------------------------

    def compute_delay_ms(self, policy: RetryPolicy, attempt: int,
                         jitter: Jitter = Jitter.NONE, draw: float = 0.0,
                         previous_ms: float | None = None,
                         retry_after_ms: float | None = None) -> float:
        return float(self._result("compute_delay_ms", policy=encode_policy(policy),
                                  attempt=attempt, jitter=encode_jitter(jitter), draw=draw,
                                  previous_ms=previous_ms, retry_after_ms=retry_after_ms))

    def heartbeat(self, job_id: str) -> None:
        self._ask("heartbeat", job_id=job_id)

    def detect_stuck(self, job_timeout_seconds: float) -> int:
        return int(self._result("detect_stuck", job_timeout_seconds=job_timeout_seconds))
