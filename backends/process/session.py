"""One conversation with a child process: start it, shake hands, ask and wait for answers.

The child reads one request per line on stdin and writes one answer per line on stdout,
in order. The kit waits for each answer with `select` and a real-time limit; that limit
is a safety net against a hung child, never a way to let time pass (virtual time travels
in the requests). A daemon thread keeps the child's last lines on stderr for error
messages, so a chatty child never blocks on a full pipe.

A session is shared by every backend object with the same command in one kit process
(Robot Framework loads the backend once per test); each check opens its own runtime in
it. Sessions end when the kit's process exits.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import itertools
import os
import select
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from jobconform.backends.process.errors import (
    ChildExited,
    ChildHung,
    ChildInternalError,
    ChildRejectedRequest,
    ChildStartError,
    MalformedMessage,
    ProcessBackendError,
    ProtocolVersionMismatch,
)
from jobconform.backends.process.schemas import (
    request_problem,
    response_problem,
    v2_envelope_problem,
    v2_problem,
)
from jobconform.backends.process.wire import (
    ALLOWED_ERRORS,
    SUPPORTED_VERSIONS,
    WireError,
    answer_problem,
    decode_line,
    encode_line,
)

STDERR_LINES_KEPT = 20
# How long a child gets to exit after `goodbye` or a closed stdin before it is killed.
EXIT_GRACE_SECONDS = 5.0
READ_CHUNK_BYTES = 1 << 16
# How long a child sent SIGTERM has, in real time, to exit before it gets SIGKILL. A
# safety limit, not the grace period (RS-004's grace period is virtual time). The process
# backend asks it only of a child that has stopped answering (one still answering at the
# grace period's end is killed at once), so it only covers the exit itself, which on a
# loaded machine (two cores, a Python teardown) can take a second or two.
SIGNAL_EXIT_LIMIT_SECONDS = 5.0
# The exit status of a child that exits after a stop signal with the handlers it installed
# for SIGINT and SIGTERM still in place of the ones it found (RS-008); 0 when it put them
# back.
HANDLERS_LEFT_EXIT_CODE = 3


@dataclass(frozen=True)
class Claims:
    """What the child said about itself in the handshake."""

    name: str
    profile: str
    capabilities: frozenset[str]
    # The libraries the child wraps, with their versions (none said: empty).
    libraries: Mapping[str, str] = field(default_factory=dict)
    # The child answers `batch`, several requests in one exchange (version 2).
    batches: bool = False


@dataclass(frozen=True)
class Answer:
    """A child's answer: a result, or one of the structured errors of the operation."""

    result: Any
    error_type: str | None
    error_message: str
    error_status: str | None
    next_attempt: tuple[str, ...]


@dataclass(frozen=True)
class SignalStopReport:
    """How a child sent SIGTERM ended (RS-004): on the signal, or by the SIGKILL that
    followed when it had not exited in time."""

    requests: int  # requests the child had answered before the signal (not the hello)
    escalated: bool
    exit_code: int  # negative: the signal that ended it

    @property
    def handlers_restored(self) -> bool | None:
        """Whether the child put back the handlers it found for SIGINT and SIGTERM before
        it exited, as its exit status says (RS-008); None after a kill."""
        if self.escalated:
            return None
        return self.exit_code != HANDLERS_LEFT_EXIT_CODE

    @property
    def message(self) -> str:
        if not self.escalated:
            return "exited on SIGTERM"
        return (f"stopped by SIGTERM after {self.requests} commands; escalated to SIGKILL"
                " after the grace period")


class ChildSession:
    """A running child that has completed the handshake.

    Args:
        command: the child's argv.
        timeout_seconds: the real-time limit on each answer.
        validate: check every request and answer against the protocol's JSON Schemas
            (the tests do, and child authors should). Without it, answers get a cheaper
            check of their envelope and result form; requests are right by construction.

    Raises:
        ChildStartError, ChildExited, ChildHung, MalformedMessage,
        ProtocolVersionMismatch: the child could not be started or failed the handshake.
    """

    def __init__(self, command: Sequence[str], timeout_seconds: float,
                 validate: bool = False) -> None:
        if not command:
            raise ChildStartError("the child's command is empty; set JOBCONFORM_PROCESS_COMMAND"
                                  " to the command line of an executable speaking the protocol")
        self.command = list(command)
        self.display = shlex.join(self.command)
        self.timeout_seconds = timeout_seconds
        self.validate = validate
        # Re-entrant: while the kit serves a callback, the kit's object may read the child
        # back (a loop event sink reads the loop, LP-019), a request within the request.
        self._lock = threading.RLock()
        # Request ids come from a counter whose next() is atomic, since several of the
        # kit's threads may send requests at once (TS-010's savers); the exchanges
        # themselves take turns under the lock.
        self._ids = itertools.count(1)
        self._unread = b""  # what the child wrote after the last complete line
        self._last_line = b""
        self._stderr: collections.deque[str] = collections.deque(maxlen=STDERR_LINES_KEPT)
        self._broken: str | None = None  # why the conversation cannot go on
        try:
            self._process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, bufsize=0,
            )
        except OSError as error:
            raise ChildStartError(
                f"cannot start the child `{self.display}`: {error}. Set"
                " JOBCONFORM_PROCESS_COMMAND to the command line of an executable that"
                " speaks the jobconform process protocol (docs/process-protocol.md)"
            ) from error
        assert self._process.stdout is not None and self._process.stderr is not None
        self._stdout_fd = self._process.stdout.fileno()
        self._keep_stderr(self._process.stderr)
        self.version = 0  # until the handshake agrees on one
        # Serves the child's callbacks (version 2); the backend sets it.
        self.on_callback: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self.kit_objects: object | None = None  # the kit's objects the child may call
        self._lines = 0  # lines read from the child's stdout, for error messages
        self.requests_answered = 0  # after the handshake, for a stop by signal's report
        self._signalled_after = 0  # the requests answered before the stop signal
        self.claims = self._handshake()

    def _keep_stderr(self, stream: IO[bytes]) -> None:
        def pump() -> None:
            for line in stream:
                self._stderr.append(line.decode("utf-8", errors="replace"))

        self._stderr_pump = threading.Thread(target=pump, name="jobconform-child-stderr",
                                             daemon=True)
        self._stderr_pump.start()

    # -- the handshake -------------------------------------------------------------------

    def _handshake(self) -> Claims:
        """Agree on a version: the kit offers its newest, and the child answers the version
        it will speak (the offered one or an older one the kit speaks too). A child that
        refuses the offer is offered the previous version, so a version-1 child keeps
        working for its areas."""
        for version in SUPPORTED_VERSIONS:
            message = self._exchange(self._envelope("hello", {"protocol": version}), "hello")
            if message.get("ok") is False and version != SUPPORTED_VERSIONS[-1]:
                continue  # it does not speak this one: offer the next
            return self._claims(message, version)
        raise AssertionError("unreachable: the last version's answer is returned")

    def _claims(self, message: dict[str, Any], offered: int) -> Claims:
        result = message.get("result")
        spoken = result.get("protocol") if isinstance(result, dict) else None
        versions = " or ".join(str(v) for v in SUPPORTED_VERSIONS)
        if message.get("ok") is False:
            error = message.get("error")
            reason = error.get("message", error) if isinstance(error, dict) else error
            self.stop()
            raise ProtocolVersionMismatch(
                f"the child `{self.display}` refused the handshake for protocol versions"
                f" {versions}: {reason}"
            )
        if not isinstance(spoken, int) or isinstance(spoken, bool):
            # Not another version: no version at all, so the answer itself is broken.
            raise self._malformed("hello", "a hello answer's result is an object whose"
                                  " `protocol` is the version the child speaks, an integer",
                                  message)
        if spoken not in SUPPORTED_VERSIONS or spoken > offered:
            self.stop()
            raise ProtocolVersionMismatch(
                f"the child `{self.display}` speaks protocol version {spoken!r}; this kit"
                f" speaks version {versions}. Use a child built for one of them"
                " (docs/process-protocol.md) or a kit matching the child"
            )
        self.version = spoken
        if spoken == 1:
            self._check_answer(message, "hello")
        else:
            problem = (v2_problem(message, "answer", "hello") if self.validate
                       else answer_problem(message, "hello"))
            if problem is not None:
                raise self._malformed("hello", problem, message)
        assert isinstance(result, dict)
        return Claims(result["name"], result["profile"], frozenset(result["capabilities"]),
                      dict(result.get("libraries", {})), result.get("batch") is True)

    # -- requests --------------------------------------------------------------------------

    def request(self, operation: str, args: dict[str, Any], now: str | None = None,
                runtime: str | None = None,
                decisions: list[dict[str, Any]] | None = None) -> Answer:
        """Send one version-1 request and return the child's answer to it.

        Raises:
            ChildExited, ChildHung, MalformedMessage: the child broke the conversation.
            ChildRejectedRequest: the child did not understand the request.
            ChildInternalError: the child failed handling it.
        """
        request = self._envelope(operation, args)
        if now is not None:
            request["now"] = now
        if runtime is not None:
            request["runtime"] = runtime
        if decisions:
            request["decisions"] = decisions
        request["args"] = request.pop("args")
        if self.validate:
            problem = request_problem(request)
            if problem is not None:
                raise ValueError(f"the kit built an invalid {operation} request: {problem}")
        message = self._exchange(request, operation)
        self.requests_answered += 1
        self._check_answer(message, operation)
        next_attempt = tuple(message.get("next_attempt", ()))
        if message["ok"]:
            return Answer(message["result"], None, "", None, next_attempt)
        error = message["error"]
        kind, text = error["type"], error["message"]
        self.raise_if_exchange_failed(operation, kind, text)
        if operation not in ALLOWED_ERRORS[kind]:
            raise self._malformed(operation, f"error {kind} is not an answer to {operation}"
                                  f" (only to {', '.join(sorted(ALLOWED_ERRORS[kind]))})",
                                  message)
        return Answer(None, kind, text, error.get("status"), next_attempt)

    def call(self, op: str, handle: str, now: str, args: dict[str, Any]) -> dict[str, Any]:
        """Send one version-2 request (`op` on the object `handle`) and return the child's
        answer, its envelope checked; the callbacks it makes meanwhile are served.

        Raises:
            ChildExited, ChildHung, MalformedMessage: the child broke the conversation.
        """
        request = self._envelope(op, args)
        request.update({"object": handle, "now": now})
        request["args"] = request.pop("args")
        if self.validate:
            problem = v2_problem(request, "request")
            if problem is not None:
                raise ValueError(f"the kit built an invalid {op} request: {problem}")
        message = self._exchange(request, op)
        self.requests_answered += 1
        problem = (v2_problem(message, "answer", op) if self.validate
                   else v2_envelope_problem(message))
        if problem is not None:
            raise self._malformed(op, problem, message)
        return message

    def call_together(self, calls: Sequence[tuple[str, str, str, dict[str, Any]]]
                      ) -> list[dict[str, Any]]:
        """Send several version-2 requests (`op`, `handle`, `now`, `args` each) in one
        `batch` exchange and return their answers in order, each envelope checked. The
        child handles them one after the other, as if sent one by one; only a child that
        announced `batch` in its hello is sent one.

        Raises:
            ChildExited, ChildHung, MalformedMessage: the child broke the conversation.
        """
        assert self.claims.batches, "only a child that announced batch answers one"
        requests = []
        for op, handle, now, args in calls:
            request = self._envelope(op, args)
            request.update({"object": handle, "now": now})
            request["args"] = request.pop("args")
            requests.append(request)
        batch = self._envelope("batch", {"requests": requests})
        ops = " + ".join(request["op"] for request in requests)
        if self.validate:
            problem = v2_problem(batch, "request")
            if problem is not None:
                raise ValueError(f"the kit built an invalid batch ({ops}): {problem}")
        message = self._exchange(batch, ops)
        self.requests_answered += len(requests)
        problem = (v2_problem(message, "answer", "batch") if self.validate
                   else v2_envelope_problem(message))
        if problem is None and message["ok"] is not True:
            problem = "a batch is answered ok, with the answer of each request"
        answers: Any = message.get("result")
        if problem is None and (not isinstance(answers, list) or len(answers) != len(requests)):
            problem = f"a batch of {len(requests)} requests is answered by as many answers"
        if problem is not None:
            raise self._malformed(ops, problem, message)
        for request, answer in zip(requests, answers, strict=True):
            problem = (v2_problem(answer, "answer", request["op"]) if self.validate
                       else None if not isinstance(answer, dict) else v2_envelope_problem(answer))
            if problem is None and (not isinstance(answer, dict)
                                    or answer.get("id") != request["id"]):
                problem = (f"the answer to request {request['id']} ({request['op']}) in the"
                           " batch is an answer object that repeats its id")
            if problem is not None:
                raise self._malformed(request["op"], problem, message)
        return list(answers)

    def raise_if_exchange_failed(self, operation: str, kind: str, text: str) -> None:
        """An error answer whose `kind` says the exchange failed, not the operation, is
        raised as the kit's own error (any version of the protocol).

        Raises:
            ChildRejectedRequest: a ProtocolError, the child did not understand the request.
            ChildInternalError: an InternalError, the child failed handling it.
        """
        if kind == "ProtocolError":
            raise ChildRejectedRequest(f"the child `{self.display}` did not understand the"
                                       f" kit's {operation} request: {text}")
        if kind == "InternalError":
            raise ChildInternalError(f"the child `{self.display}` failed during {operation}:"
                                     f" {text}")

    def malformed(self, operation: str, problem: str,
                  message: dict[str, Any] | None) -> MalformedMessage:
        """Report a child's answer the kit cannot use, and stop the child."""
        return self._malformed(operation, problem, message)

    def _envelope(self, operation: str, args: dict[str, Any]) -> dict[str, Any]:
        request: dict[str, Any] = {"id": next(self._ids), "op": operation, "args": args}
        return request

    def _exchange(self, request: dict[str, Any], operation: str) -> dict[str, Any]:
        """Write one request and read lines until its answer, serving callbacks between."""
        with self._lock:
            if self._broken is not None:
                raise ChildExited(f"the child `{self.display}` can no longer be used:"
                                  f" {self._broken}")
            self._send(encode_line(request), operation)
            while True:
                line = self._receive(operation)
                try:
                    message = decode_line(line)
                except WireError as error:
                    raise self._malformed(operation, str(error), None) from None
                if "callback" in message and "id" not in message:
                    self._send(encode_line(self._reply(message, operation)), operation)
                    continue
                if message.get("id") != request["id"]:
                    raise self._malformed(operation, f"the answer's id is"
                                          f" {message.get('id')!r}, the request's"
                                          f" {request['id']}", message)
                return message

    def _reply(self, callback: dict[str, Any], operation: str) -> dict[str, Any]:
        if self.on_callback is None or self.version < 2:
            raise self._malformed(operation, "a callback line, which protocol version"
                                  f" {self.version} does not have", callback)
        if self.validate:
            problem = v2_problem(callback, "callback")
            if problem is not None:
                raise self._malformed(operation, problem, callback)
        return self.on_callback(callback)

    def _send(self, line: str, operation: str) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode("utf-8"))
        except (BrokenPipeError, ValueError, OSError):
            raise self._exited(operation) from None

    def _receive(self, operation: str) -> str:
        # The real-time safety limit: an answer takes microseconds unless the child hangs.
        deadline = time.monotonic() + self.timeout_seconds
        while b"\n" not in self._unread:
            remaining = deadline - time.monotonic()
            readable = select.select([self._stdout_fd], [], [], max(remaining, 0))[0]
            if not readable:
                raise self._hung(operation)
            chunk = os.read(self._stdout_fd, READ_CHUNK_BYTES)
            if not chunk:
                raise self._exited(operation)
            self._unread += chunk
        line, _, self._unread = self._unread.partition(b"\n")
        self._lines += 1
        self._last_line = line
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self._malformed(operation, f"the line is not UTF-8 ({error})", None) from None

    def _hung(self, operation: str) -> ChildHung:
        self._broken = f"it did not answer {operation} in time and was stopped"
        self.stop(grace_seconds=0)
        return ChildHung(
            f"the child `{self.display}` did not answer {operation} within"
            f" {self.timeout_seconds:g} s of real time: it hangs, or waits for input it"
            " will never get (answers go to stdout, one line each, flushed). It was"
            " stopped. If it is only slow, raise JOBCONFORM_PROCESS_TIMEOUT."
            + self._stderr_tail()
        )

    def _check_answer(self, message: dict[str, Any], operation: str) -> None:
        problem = (response_problem(message, operation) if self.validate
                   else answer_problem(message, operation))
        if problem is not None:
            raise self._malformed(operation, problem, message)

    def _malformed(self, operation: str, problem: str,
                   message: dict[str, Any] | None) -> MalformedMessage:
        # After a bad line the two sides may be out of step: nothing later can be trusted.
        self._broken = f"it wrote a malformed answer to {operation}"
        self.stop(grace_seconds=0)
        text = self._last_line.decode("utf-8", errors="replace")
        shown = text if len(text) <= 300 else text[:300] + "…"
        return MalformedMessage(
            f"the child `{self.display}` wrote a malformed answer to {operation} (line"
            f" {self._lines} of its stdout): {problem}\n  the line: {shown}"
            f"\n  (the protocol's schemas are in jobconform/backends/process/schemas;"
            " docs/process-protocol.md describes every message)"
        )

    def _exited(self, operation: str) -> ChildExited:
        try:
            code: int | None = self._process.wait(timeout=EXIT_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            code = None
        self._broken = f"it exited (code {code})"
        how = "closed its stdout" if code is None else f"exited with code {code}"
        return ChildExited(f"the child `{self.display}` {how} while the kit waited for its"
                           f" answer to {operation}" + self._stderr_tail())

    def _stderr_tail(self) -> str:
        if self._process.poll() is not None:
            # The child is gone: let the pump take its last lines (bounded, in case a
            # grandchild still holds the pipe open).
            self._stderr_pump.join(timeout=EXIT_GRACE_SECONDS)
        lines = [line.rstrip("\n") for line in list(self._stderr)]
        if not lines:
            return ""
        return "\n  its last lines on stderr:\n" + "\n".join(f"    {line}" for line in lines)

    # -- ending ----------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self._broken is None and self._process.poll() is None

    def close(self) -> None:
        """Say goodbye and let the child exit; stop it if it does not."""
        if self.alive:
            with contextlib.suppress(ProcessBackendError):  # ending anyway
                self.request("goodbye", {})
        self.stop()

    def stop_by_signal(self, limit_seconds: float = SIGNAL_EXIT_LIMIT_SECONDS,
                       signal_name: str = "SIGTERM") -> SignalStopReport:
        """Send the child `signal_name` between two requests, wait `limit_seconds` of real
        time for it to exit, and SIGKILL it if it has not (RS-004). The session ends
        either way.

        Raises:
            ChildExited: the child had exited already, or the session was broken.
        """
        self.send_stop_signal(signal_name)
        return self.await_exit(limit_seconds)

    def send_stop_signal(self, signal_name: str = "SIGTERM") -> None:
        """Send the child SIGTERM or SIGINT between two requests (RS-004, RS-007); the
        session goes on, for the requests of the grace period, until the child exits.

        Raises:
            ChildExited: the child had exited already, or the session was broken.
        """
        with self._lock:  # never while a request waits for its answer
            process = self._process
            if self._broken is not None or process.poll() is not None:
                raise ChildExited(f"the child `{self.display}` cannot be sent {signal_name}:"
                                  f" it {self._broken or f'exited (code {process.returncode})'}")
            self._signalled_after = self.requests_answered
            process.send_signal(signal.Signals[signal_name])

    def await_exit(self, limit_seconds: float = SIGNAL_EXIT_LIMIT_SECONDS) -> SignalStopReport:
        """At the grace period's end: wait `limit_seconds` of real time (a safety limit,
        not the grace period) for the child sent a stop signal to exit, and SIGKILL it if
        it has not. The session ends either way."""
        with self._lock:
            process = self._process
            try:
                code = process.wait(timeout=limit_seconds)
                escalated = False
            except subprocess.TimeoutExpired:
                process.kill()
                code = process.wait()
                escalated = True
            self._broken = ("it was killed after its stop signal" if escalated
                            else "it exited on its stop signal")
            if process.stdin is not None and not process.stdin.closed:
                with contextlib.suppress(OSError):  # the child is gone
                    process.stdin.close()
        return SignalStopReport(self._signalled_after, escalated, code)

    def kill(self) -> None:
        """SIGKILL, between two requests: the child ends at once and writes nothing more
        (a restart without a shutdown, RS-001..RS-003)."""
        with self._lock:
            if self._broken is None:
                self._broken = "it was killed"
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()
            self._process.wait()
            if self._process.stdin is not None and not self._process.stdin.closed:
                with contextlib.suppress(OSError):
                    self._process.stdin.close()

    def stop(self, grace_seconds: float = EXIT_GRACE_SECONDS) -> None:
        """Close the child's stdin, give it `grace_seconds` to exit, then kill it."""
        if self._broken is None:
            self._broken = "the session was closed"
        process = self._process
        if process.stdin is not None and not process.stdin.closed:
            with contextlib.suppress(OSError):  # the child is gone already
                process.stdin.close()
        try:
            process.wait(timeout=grace_seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


# -- one session per command line, for the whole kit process ----------------------------------

_SESSIONS: dict[tuple[str, ...], ChildSession] = {}
_SESSIONS_LOCK = threading.Lock()


def shared_session(command: Sequence[str], timeout_seconds: float,
                   validate: bool = False) -> ChildSession:
    """The running session for this command, started (with its handshake) if needed."""
    key = tuple(command)
    with _SESSIONS_LOCK:
        session = _SESSIONS.get(key)
        if session is None or not session.alive:
            session = ChildSession(command, timeout_seconds, validate)
            _SESSIONS[key] = session
        return session


def replace_shared_session(command: Sequence[str], timeout_seconds: float,
                           validate: bool = False) -> ChildSession:
    """A new session for this command, started now (with its handshake), in place of the
    one stopped for a restart; the old one is closed."""
    key = tuple(command)
    session = ChildSession(command, timeout_seconds, validate)
    with _SESSIONS_LOCK:
        old = _SESSIONS.get(key)
        _SESSIONS[key] = session
    if old is not None and old is not session:
        old.stop(grace_seconds=0)
    return session


@atexit.register
def close_sessions() -> None:
    with _SESSIONS_LOCK:
        sessions = list(_SESSIONS.values())
        _SESSIONS.clear()
    for session in sessions:
        session.close()
