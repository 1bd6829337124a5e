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
import os
import select
import shlex
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
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
from jobconform.backends.process.schemas import request_problem, response_problem
from jobconform.backends.process.wire import (
    ALLOWED_ERRORS,
    PROTOCOL_VERSION,
    WireError,
    answer_problem,
    decode_line,
    encode_line,
)

STDERR_LINES_KEPT = 20
# How long a child gets to exit after `goodbye` or a closed stdin before it is killed.
EXIT_GRACE_SECONDS = 5.0
READ_CHUNK_BYTES = 1 << 16


@dataclass(frozen=True)
class Claims:
    """What the child said about itself in the handshake."""

    name: str
    profile: str
    capabilities: frozenset[str]


@dataclass(frozen=True)
class Answer:
    """A child's answer: a result, or one of the structured errors of the operation."""

    result: Any
    error_type: str | None
    error_message: str
    error_status: str | None
    next_attempt: tuple[str, ...]


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
        self._lock = threading.Lock()
        self._next_id = 1
        self._unread = b""  # what the child wrote after the last complete line
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
        message = self._exchange("hello", {"protocol": PROTOCOL_VERSION}, None, None, None)
        result = message.get("result")
        spoken = result.get("protocol") if isinstance(result, dict) else None
        if message.get("ok") is False:
            error = message.get("error")
            reason = error.get("message", error) if isinstance(error, dict) else error
            self.stop()
            raise ProtocolVersionMismatch(
                f"the child `{self.display}` refused the handshake for protocol version"
                f" {PROTOCOL_VERSION}: {reason}"
            )
        if spoken != PROTOCOL_VERSION:
            self.stop()
            raise ProtocolVersionMismatch(
                f"the child `{self.display}` speaks protocol version {spoken!r}; this kit"
                f" speaks version {PROTOCOL_VERSION}. Use a child built for version"
                f" {PROTOCOL_VERSION} (docs/process-protocol.md) or a kit matching the child"
            )
        self._check_answer(message, "hello")
        assert isinstance(result, dict)
        return Claims(result["name"], result["profile"], frozenset(result["capabilities"]))

    # -- requests --------------------------------------------------------------------------

    def request(self, operation: str, args: dict[str, Any], now: str | None = None,
                runtime: str | None = None,
                decisions: list[dict[str, Any]] | None = None) -> Answer:
        """Send one request and return the child's answer to it.

        Raises:
            ChildExited, ChildHung, MalformedMessage: the child broke the conversation.
            ChildRejectedRequest: the child did not understand the request.
            ChildInternalError: the child failed handling it.
        """
        message = self._exchange(operation, args, now, runtime, decisions)
        self._check_answer(message, operation)
        next_attempt = tuple(message.get("next_attempt", ()))
        if message["ok"]:
            return Answer(message["result"], None, "", None, next_attempt)
        error = message["error"]
        kind, text = error["type"], error["message"]
        if kind == "ProtocolError":
            raise ChildRejectedRequest(f"the child `{self.display}` did not understand the"
                                       f" kit's {operation} request: {text}")
        if kind == "InternalError":
            raise ChildInternalError(f"the child `{self.display}` failed during {operation}:"
                                     f" {text}")
        if operation not in ALLOWED_ERRORS[kind]:
            raise self._malformed(operation, f"error {kind} is not an answer to {operation}"
                                  f" (only to {', '.join(sorted(ALLOWED_ERRORS[kind]))})",
                                  message)
        return Answer(None, kind, text, error.get("status"), next_attempt)

    def _exchange(self, operation: str, args: dict[str, Any], now: str | None,
                  runtime: str | None, decisions: list[dict[str, Any]] | None
                  ) -> dict[str, Any]:
        with self._lock:
            if self._broken is not None:
                raise ChildExited(f"the child `{self.display}` can no longer be used:"
                                  f" {self._broken}")
            request: dict[str, Any] = {"id": self._next_id, "op": operation}
            if now is not None:
                request["now"] = now
            if runtime is not None:
                request["runtime"] = runtime
            if decisions:
                request["decisions"] = decisions
            request["args"] = args
            self._next_id += 1
            if self.validate:
                problem = request_problem(request)
                if problem is not None:
                    raise ValueError(f"the kit built an invalid {operation} request: {problem}")
            self._send(encode_line(request), operation)
            line = self._receive(operation)
            try:
                message = decode_line(line)
            except WireError as error:
                raise self._malformed(operation, str(error), None) from None
            if message.get("id") != request["id"]:
                raise self._malformed(operation, f"the answer's id is {message.get('id')!r},"
                                      f" the request's {request['id']}", message)
            return message

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
        shown = "" if message is None else f"\n  answer: {encode_line(message).strip()[:300]}"
        return MalformedMessage(
            f"the child `{self.display}` wrote a malformed answer to {operation}: {problem}"
            f"{shown}\n  (the protocol's schemas are in jobconform/backends/process/schemas)"
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


@atexit.register
def close_sessions() -> None:
    with _SESSIONS_LOCK:
        sessions = list(_SESSIONS.values())
        _SESSIONS.clear()
    for session in sessions:
        session.close()
