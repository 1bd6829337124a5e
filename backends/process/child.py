"""The reference child: the other side of the process protocol, in a process of its own.

    python -m jobconform.backends.process.child [--backend NAME] [--protocol 1|2]

It serves an installed backend (default `memory`, which claims every area) over stdin
and stdout, one JSON request per line in, one answer per line out. It speaks version 2
(every area; `server.ObjectServer`) and version 1 (lifecycle, retry and stuck;
`ChildServer` below), whichever the kit's hello asks for. `--protocol 1` makes it a
version-1 child, which refuses version 2 as an old child would: serve a backend whose own
threads wait on task bodies (`--backend threaded`) that way, since version 2's callbacks
are made within a request only. With JOBCONFORM_PROCESS_VALIDATE=1 it checks every
request against the protocol's schemas.
It never reads a clock: each runtime's clock is the time the kit sent with the latest
request. On SIGTERM or SIGINT it shuts down every open job runtime as its settings say
(RS-004, RS-007) and exits; a drain that leaves work active keeps it serving the grace
period's requests until its last job ends (RS-006) or the kit's SIGKILL ends it. Before
it exits it puts back the signal handlers it found, and its exit status says so (RS-008).
Task bodies run here; their outcomes are the kit's (version 1: the decisions sent with
requests; version 2: the kit's task body, called back).

`ChildServer` and `ObjectServer` are importable, so a broken child for the self-test
gallery is one of them with one method changed.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from types import FrameType
from typing import Any, TextIO, cast

from jobconform.backends.loading import BackendLoadError, load_backend
from jobconform.backends.process.backend import validation_requested
from jobconform.backends.process.interfaces import JobRuntime
from jobconform.backends.process.schemas import request_problem, v2_problem
from jobconform.backends.process.server import ObjectServer, PushedClock, error_answer
from jobconform.backends.process.session import HANDLERS_LEFT_EXIT_CODE
from jobconform.backends.process.wire import (
    OPERATIONS,
    PROTOCOL_AREAS,
    PROTOCOL_VERSION,
    RUNTIME_OPERATIONS,
    V1,
    WireError,
    decode_jitter,
    decode_line,
    decode_outcome,
    decode_policy,
    decode_settings,
    decode_timestamp,
    encode_delay,
    encode_health,
    encode_job,
    encode_line,
)
from jobconform.backends.protocol import (
    RETRY,
    STUCK,
    Backend,
    CapacityExceeded,
    JobNotCompleted,
    JobNotFound,
    JobView,
    Runtime,
    RuntimeShutDown,
    TaskScript,
)
from jobconform.backends.restart import RESTART, STOP_SIGNAL
from jobconform.backends.self_running import WithOwnClockwork
from jobconform.reference.commands import Outcome


class ProtocolError(ValueError):
    """The kit's request cannot be understood; answered as a `ProtocolError`."""


class ChildScript(TaskScript):
    """A task body here whose retries are reported to the kit.

    The kit keeps the harness's script; when the runtime here starts a new attempt, the
    kit's script must forget its outcome too, or the harness's next decision is lost.
    """

    def __init__(self, honours_cancellation: bool, report: Callable[[str], None]) -> None:
        super().__init__(honours_cancellation)
        self.job_id = ""
        self._report = report

    def next_attempt(self) -> None:
        super().next_attempt()
        self._report(self.job_id)


@dataclass
class OpenRuntime:
    runtime: Runtime
    clock: PushedClock
    scripts: dict[str, ChildScript] = field(default_factory=dict)


class ChildServer:
    """Answers the kit's version-1 requests for one backend."""

    def __init__(self, backend: Backend, validate: bool = False) -> None:
        self.backend = backend
        self.validate = validate
        self.with_retry = RETRY in backend.capabilities
        self.with_stuck = STUCK in backend.capabilities
        self.runtimes: dict[str, OpenRuntime] = {}
        self._opened = 0
        self._next_attempt: list[str] = []  # retries started during the current request
        self.finished = False  # the kit said goodbye

    # -- one line in, one line out --------------------------------------------------------------

    def answer(self, line: str) -> str:
        request_id: object = None
        self._next_attempt = []
        try:
            request = decode_line(line)
            request_id = request.get("id")
            problem = request_problem(request) if self.validate else self._envelope_problem(
                request)
            if problem is not None:
                raise ProtocolError(problem)
            answer: dict[str, Any] = {"id": request_id, "ok": True,
                                      "result": self.handle(request)}
        except (ProtocolError, WireError) as error:
            answer = self._error(request_id, "ProtocolError", str(error))
        except CapacityExceeded as error:
            answer = self._error(request_id, "CapacityExceeded", str(error))
        except RuntimeShutDown as error:
            answer = self._error(request_id, "RuntimeShutDown", str(error))
        except JobNotFound as error:
            answer = self._error(request_id, "JobNotFound", f"no job {error.args[0]!r}")
        except JobNotCompleted as error:
            answer = self._error(request_id, "JobNotCompleted", str(error))
            answer["error"]["status"] = error.status
        except Exception as error:
            traceback.print_exc(file=sys.stderr)
            answer = self._error(request_id, "InternalError", f"{type(error).__name__}: {error}")
        if self._next_attempt:
            answer["next_attempt"] = list(self._next_attempt)
        try:
            return encode_line(answer)
        except WireError as error:  # e.g. a result that JSON cannot carry
            return encode_line(self._error(request_id, "InternalError", str(error)))

    @staticmethod
    def _envelope_problem(request: dict[str, Any]) -> str | None:
        """The cheap check when the schemas are off: a known operation with its args."""
        if request.get("op") not in OPERATIONS:
            return f"op must be one of {', '.join(OPERATIONS)}, not {request.get('op')!r}"
        if not isinstance(request.get("args"), dict):
            return "args must be an object"
        if request["op"] not in ("hello", "goodbye") and not isinstance(request.get("now"), str):
            return f"{request['op']} needs the kit's time in 'now'"
        if request["op"] in RUNTIME_OPERATIONS and not isinstance(request.get("runtime"), str):
            return f"{request['op']} needs the 'runtime' handle that open answered"
        return None

    @staticmethod
    def _error(request_id: object, kind: str, message: str) -> dict[str, Any]:
        if not isinstance(request_id, int) or isinstance(request_id, bool):
            request_id = None
        return {"id": request_id, "ok": False, "error": {"type": kind, "message": message}}

    # -- requests ---------------------------------------------------------------------------------

    def handle(self, request: dict[str, Any]) -> Any:
        operation: str = request["op"]
        args: dict[str, Any] = request["args"]
        if operation == "hello":
            return self.hello(args["protocol"])
        if operation == "goodbye":
            self.finished = True
            return None
        now = decode_timestamp(request["now"])
        if operation == "open":
            return self.open(decode_settings(args["settings"]), now)
        opened = self.runtimes.get(request["runtime"])
        if opened is None:
            raise ProtocolError(f"no open runtime {request['runtime']!r}; open one first"
                                " (it may have been closed)")
        self.set_clock(opened, now)
        for decision in request.get("decisions", ()):
            script = opened.scripts.get(decision["job_id"])
            if script is None:
                raise ProtocolError(f"a decision for job {decision['job_id']!r}, which this"
                                    " runtime never created")
            script.decide(self.outcome(decision["outcome"]))
        answer = self.operate(opened, operation, args)
        if operation == "close":
            del self.runtimes[request["runtime"]]
        return answer

    def outcome(self, document: dict[str, Any]) -> Outcome:
        """The kit's decision as the body's outcome: returned value, or raised exception."""
        return decode_outcome(document)

    def hello(self, protocol: int) -> dict[str, Any]:
        if protocol != V1:
            raise ProtocolError(f"this child speaks protocol version {V1}, not {protocol}")
        return {"protocol": V1, "name": self.backend.name,
                "profile": self.backend.profile,
                "capabilities": sorted(set(self.backend.capabilities) & PROTOCOL_AREAS)}

    def open(self, settings: Any, now: datetime) -> dict[str, str]:
        clock = PushedClock(now)
        self._opened += 1
        handle = f"runtime-{self._opened}"
        self.runtimes[handle] = OpenRuntime(self.backend.open(settings, clock), clock)
        return {"runtime": handle}

    def set_clock(self, opened: OpenRuntime, now: datetime) -> None:
        """Time passes for the runtime only when the kit's clock has moved."""
        opened.clock.set(now)

    def operate(self, opened: OpenRuntime, operation: str, args: dict[str, Any]) -> Any:
        runtime = opened.runtime
        match operation:
            case "submit":
                return {"job_id": self.submit(opened, args)}
            case "dispatch":
                runtime.dispatch()
            case "settle":
                runtime.settle()
            case "cancel":
                return runtime.cancel(args["job_id"])
            case "get":
                view = runtime.get(args["job_id"])
                return None if view is None else self.job_document(view)
            case "get_result":
                return runtime.get_result(args["job_id"])
            case "list_jobs":
                return [self.job_document(view) for view in runtime.list_jobs(args["status"])]
            case "cleanup":
                return runtime.cleanup(args["max_age_seconds"])
            case "shutdown":
                runtime.shutdown()
            case "health":
                return encode_health(runtime.health())
            case "close":
                runtime.close()
            case "compute_delay_ms":
                compute = self._area_method(runtime, "compute_delay_ms", RETRY)
                return encode_delay(compute(
                    decode_policy(args["policy"]), args["attempt"],
                    decode_jitter(args["jitter"]), args["draw"], args["previous_ms"],
                    args["retry_after_ms"]))
            case "heartbeat":
                self._area_method(runtime, "heartbeat", STUCK)(args["job_id"])
            case "detect_stuck":
                return self._area_method(runtime, "detect_stuck", STUCK)(
                    args["job_timeout_seconds"])
        return None

    def submit(self, opened: OpenRuntime, args: dict[str, Any]) -> str:
        script = ChildScript(args["honours_cancellation"], self._note_next_attempt)
        if args["retry"] is None:
            job_id = opened.runtime.submit(script)
        else:
            if not self.with_retry:
                raise ProtocolError("a retry policy for a child that does not claim retry")
            job_id = opened.runtime.submit(script, decode_policy(args["retry"]))
        script.job_id = job_id
        opened.scripts[job_id] = script
        return job_id

    def _note_next_attempt(self, job_id: str) -> None:
        self._next_attempt.append(job_id)

    def job_document(self, view: JobView) -> dict[str, Any]:
        return encode_job(view, self.with_retry, self.with_stuck)

    def _area_method(self, runtime: Runtime, name: str, area: str) -> Callable[..., Any]:
        method = getattr(runtime, name, None)
        if area not in self.backend.capabilities or not callable(method):
            raise ProtocolError(f"{name} belongs to the {area} area, which this child does not"
                                " claim")
        return method  # type: ignore[no-any-return]

    # -- the loop ---------------------------------------------------------------------------------

    def serve(self, requests: TextIO, answers: TextIO) -> None:
        """Answer every line until goodbye or the end of input."""
        for line in requests:
            if not line.strip():
                continue
            answers.write(self.answer(line))
            answers.flush()
            if self.finished:
                return


class Child:
    """The whole conversation: the handshake picks the version, then its server answers.

    Args:
        backend: the backend served.
        highest: the newest version this child speaks (2, or 1 to act as an old child).
        server_type, object_server_type: the servers of versions 1 and 2 (the gallery's
            broken children replace one).
    """

    def __init__(self, backend: Backend, highest: int = PROTOCOL_VERSION,
                 server_type: type[ChildServer] = ChildServer,
                 object_server_type: type[ObjectServer] = ObjectServer) -> None:
        self.backend = backend
        self.highest = highest
        self.validate = validation_requested()
        self.server_type = server_type
        self.object_server_type = object_server_type
        self.version = 0
        self.stop_signalled = False  # SIGTERM or SIGINT came (RS-004, RS-007)
        self.v1: ChildServer | None = None  # the servers of the conversation under way
        self.v2: ObjectServer | None = None

    def serve(self, requests: TextIO, answers: TextIO) -> None:
        """Answer every line until goodbye or the end of input."""
        v1 = self.v1 = self.server_type(self.backend, validate=self.validate)
        v2: ObjectServer | None = None
        number = 0
        while line := requests.readline():
            number += 1
            if not line.strip():
                continue
            request, problem = self._read(line, number)
            if request is not None and request.get("op") == "hello":
                answer, version = self.hello(request)
                if version == 2:
                    v2 = self.v2 = self.object_server_type(self.backend, self.claims(2),
                                                           requests, answers)
                self.version = version or self.version
            elif self.version == V1 or (self.version == 0 and problem is None):
                answers.write(v1.answer(line))  # version 1's own checks and answers
                answers.flush()
                if v1.finished or self.drained:
                    return
                continue
            elif problem is not None or request is None:
                answer = error_answer(request.get("id") if request else None,
                                      "ProtocolError", problem or "")
            elif request.get("op") == "goodbye":
                answer = {"id": request.get("id"), "ok": True, "result": None}
            elif request.get("op") == "batch":
                assert v2 is not None
                answer = self.batch(v2, request)
                number += v2.replies_read()
            else:
                assert v2 is not None
                answer = v2.answer(request)
                number += v2.replies_read()
            answers.write(encode_line(answer))
            answers.flush()
            if (request is not None and request.get("op") == "goodbye") or self.drained:
                return

    def batch(self, v2: ObjectServer, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to a `batch`: each request in it answered in order, as if it had come
        on a line of its own (its callbacks made as it is handled)."""
        args = request.get("args")
        requests = args.get("requests") if isinstance(args, dict) else None
        if not isinstance(requests, list) or not requests or not all(
                isinstance(inner, dict) and isinstance(inner.get("op"), str)
                and inner["op"] not in ("hello", "goodbye", "batch")
                and isinstance(inner.get("id"), int) for inner in requests):
            return error_answer(request.get("id"), "ProtocolError",
                                "a batch's args.requests is a list of requests, each with an"
                                " integer 'id' and the 'op' of an object's method")
        return {"id": request.get("id"), "ok": True,
                "result": [v2.answer(inner) for inner in requests]}

    def on_stop_signal(self) -> bool:
        """What SIGTERM or SIGINT does (RS-004, RS-007): every open job runtime shuts down
        as its settings say (cancel ends its active jobs at once; drain lets them run on).
        Returns True when no job is left active, so the process may exit; a drain with
        work still active keeps the process serving the kit's requests of the grace
        period (its bodies are the kit's, which calls them back only within a request),
        and it exits after the answer with which its last job ended (`drained`), or the
        kit kills it when the grace period is over."""
        self.stop_signalled = True
        runtimes = self._job_runtimes()
        for runtime in runtimes:
            runtime.shutdown()
        active = self._active_jobs()
        print(f"jobconform child: stop signal: {len(runtimes)} job runtime(s) shut down,"
              f" {active} job(s) still active", file=sys.stderr, flush=True)
        return active == 0

    @property
    def drained(self) -> bool:
        """A stop signal came and no job is left active: time to exit (RS-006)."""
        return self.stop_signalled and self._active_jobs() == 0

    def _job_runtimes(self) -> list[Runtime]:
        runtimes: list[Runtime] = []
        if self.v1 is not None:
            runtimes += [opened.runtime for opened in self.v1.runtimes.values()]
        if self.v2 is not None:
            runtimes += [served.value for served in self.v2.objects.values()
                         if served.interface is JobRuntime]
        return runtimes

    def _active_jobs(self) -> int:
        return sum(health.queued + health.running
                   for health in (runtime.health() for runtime in self._job_runtimes()))

    def _read(self, line: str, number: int) -> tuple[dict[str, Any] | None, str | None]:
        """The request on one line, or why it is not one (naming the line)."""
        try:
            request = decode_line(line)
        except WireError as error:
            return None, f"line {number} from the kit is not a request: {error}"
        if self.version >= 2:
            problem = v2_problem(request, "request") if self.validate else (
                None if isinstance(request.get("op"), str) and isinstance(request.get("id"), int)
                else "a request has an integer 'id' and a string 'op'")
            if problem is not None:
                return request, f"line {number} from the kit is not a valid request: {problem}"
        return request, None

    def claims(self, version: int) -> frozenset[str]:
        """What the child claims: the backend's capabilities the version carries, without
        restart and stop-signal unless its store outlives this process (a database file
        or a server, not memory that ends with the process)."""
        from jobconform.backends.process.backend import carried_capabilities

        claims = frozenset(self.backend.capabilities) & carried_capabilities(version)
        if not getattr(self.backend, "store_outlives_process", False):
            claims -= {RESTART, STOP_SIGNAL}
        return claims

    def hello(self, request: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """The answer to hello, and the version agreed (0: none)."""
        args = request.get("args")
        protocol = args.get("protocol") if isinstance(args, dict) else None
        if not isinstance(protocol, int) or not V1 <= protocol <= self.highest:
            return error_answer(request.get("id"), "ProtocolError",
                                f"this child speaks protocol versions 1 to {self.highest},"
                                f" not {protocol!r}"), 0
        return {"id": request.get("id"), "ok": True, "result": {
            "protocol": protocol, "name": self.backend.name, "profile": self.backend.profile,
            "capabilities": sorted(self.claims(protocol)),
            **({"batch": True} if protocol >= 2 else {})}}, protocol


class ExitOnStopSignal(SystemExit):
    """Raised by the stop-signal handler when nothing is left active: it ends `serve`,
    and `main` exits with the status that says where the handlers are (RS-008)."""


def install_stop_signal_handlers(child: Child) -> Callable[[], int]:
    """SIGTERM and SIGINT shut the child's runtimes down and end the process (RS-004,
    RS-007). The kit signals only between two requests, so the handler interrupts a wait
    for the next line, never an answer half written.

    Returns:
        What puts back the handlers the process had before these (RS-008) and gives the
        exit status that says so: 0, or HANDLERS_LEFT_EXIT_CODE if they are not back.
    """
    found = {signum: signal.getsignal(signum) for signum in (signal.SIGTERM, signal.SIGINT)}

    def restore() -> int:
        for signum, handler in found.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        back = all(signal.getsignal(signum) is handler for signum, handler in found.items())
        return 0 if back else HANDLERS_LEFT_EXIT_CODE

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if child.on_stop_signal():
            raise ExitOnStopSignal()  # main puts the handlers back, and exits

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return restore


def main(argv: list[str] | None = None, server_type: type[ChildServer] = ChildServer,
         object_server_type: type[ObjectServer] = ObjectServer) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m jobconform.backends.process.child",
        description="Serve a jobconform backend over the process protocol (stdin/stdout).")
    parser.add_argument("--backend", default="memory",
                        help="installed backend name or module:attr to serve (default: memory)")
    # A caller that replaces only the version-1 server (a broken child of the gallery)
    # wants it spoken: such a child offers version 1 alone.
    newest = V1 if server_type is not ChildServer and object_server_type is ObjectServer \
        else PROTOCOL_VERSION
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=newest,
                        help="the newest protocol version to speak (1: act as a version-1"
                             f" child; default: {newest})")
    parser.add_argument("--self-running", action="store_true",
                        help="give the served backend's job runtimes a clockwork of their"
                             " own and claim self-running (SR-001..SR-005): each settle"
                             " runs the poll due by the request's time")
    options = parser.parse_args(argv)
    try:
        backend: Backend = load_backend(options.backend)
    except BackendLoadError as error:
        print(f"jobconform child: {error}", file=sys.stderr)
        return 2
    if options.self_running:
        backend = cast(Backend, WithOwnClockwork(backend))
    # Answers own the real stdout; anything else the backend prints goes to stderr.
    answers = sys.stdout
    sys.stdout = sys.stderr
    child = Child(backend, options.protocol, server_type, object_server_type)
    restore_handlers = install_stop_signal_handlers(child)
    with contextlib.suppress(ExitOnStopSignal):
        child.serve(sys.stdin, answers)
    # After a stop signal the host's handlers come back before the exit, which says so.
    return restore_handlers() if child.stop_signalled else 0


if __name__ == "__main__":
    sys.exit(main())
