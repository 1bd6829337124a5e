"""The child's side of protocol version 2: serve a backend's objects, call the kit's back.

`ObjectServer` answers requests of the form `Interface.method` on an object named by
its handle ("backend", or one a previous answer gave). Arguments and results are
encoded by the method's annotations (`codec`). While it handles a request, the
runtime may call an object of the kit's (a task body, an agent, a delivery target):
the proxy for it writes a callback line and reads the kit's reply before it returns,
so the kit's answer to the request comes only after every callback it caused.

Every object opened by a `Backend.open*` request gets a clock of its own, which is the
`now` of the latest request to it or to an object derived from it (a peer, a reopened
runtime). The child never reads another clock.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TextIO

from jobconform.backends.faults import ProcessCrashed
from jobconform.backends.log_records import LOG_RECORDS, LoggerCapture
from jobconform.backends.process.codec import CodecError, decode, encode, encode_json
from jobconform.backends.process.interfaces import (
    ERROR_KINDS,
    Backend,
    Method,
    ScriptedError,
    error_name,
    interface_named,
    methods,
    view_fields,
)
from jobconform.backends.process.wire import WireError, decode_line, encode_line
from jobconform.backends.protocol import CONCURRENT_SUBMIT, ConcurrentSubmission
from jobconform.backends.threaded.clock import SteppedClock

# How long, in real time, one submit of a batch made at once may take (LC-030): below the
# kit's own limit per answer, so a hung submit is named here, with its thread.
SUBMIT_LIMIT_SECONDS = 10.0


class ProtocolError(ValueError):
    """The kit's request cannot be understood; answered as a `ProtocolError`."""


class KitFailed(RuntimeError):
    """The kit's reply to a callback was not one the child can use."""


class PushedClock(SteppedClock):
    """An opened object's only clock: the kit's reading, as sent with the latest request.

    A runtime that runs its own clockwork (self-running) sleeps on it between its passes:
    `wait_until` returns when a request has pushed the clock to the deadline, so a
    runtime's threads act on the time each request carries before the request is served.
    """

    def set(self, now: datetime) -> None:
        with self._lock:
            moved = now != self._now
            self._now = now
            sleepers = self._sleeping() if moved else []
        self._wake(sleepers)


@dataclass
class Served:
    """One of the child's objects: what it is, and the clock of the opened object it is or
    derives from."""

    value: Any
    interface: type
    clock: PushedClock


class KitObject:
    """A proxy for one of the kit's objects: each method call is a callback.

    Properties of its interface (`honours_cancellation`, a delivery's `reminder_id`) come
    with its handle and are plain attributes here.
    """

    def __init__(self, server: ObjectServer, handle: str, interface: type,
                 properties: dict[str, Any]) -> None:
        self._server = server
        self._handle = handle
        self._interface = interface
        for name, value in properties.items():
            setattr(self, name, value)

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = methods(self._interface).get(name)
        if method is None:
            # wait_for_decision and wake take or serve a callable, which cannot cross: a
            # runtime whose own threads wait on the kit's objects speaks version 1.
            raise AttributeError(
                f"the kit's {self._interface.__name__} has no method {name} over protocol"
                " version 2, whose callbacks are made within a request; serve a backend"
                " whose threads wait on task bodies (threaded) with --protocol 1")
        return lambda *args, **kwargs: self._server.call_kit(self._handle, method, args,
                                                             kwargs)


class ObjectServer:
    """Answers the kit's version-2 requests for one backend.

    Args:
        backend: the backend served; it must have the opener of each area it claims.
        capabilities: the areas claimed in the handshake.
        requests, answers: the pipe (callbacks read their replies from `requests`).
    """

    def __init__(self, backend: Any, capabilities: frozenset[str], requests: TextIO,
                 answers: TextIO) -> None:
        self.backend = backend
        self.capabilities = capabilities
        self._requests = requests
        self._answers = answers
        self.objects: dict[str, Served] = {}
        self._numbers = itertools.count(1)
        self._callbacks = itertools.count(1)
        self._handles: dict[int, str] = {}  # id(object) -> its handle
        self._context: Served | None = None  # the object the current request addresses
        self._replies = 0  # the kit's reply lines read since `replies_read` was asked
        self._loop = asyncio.new_event_loop()
        # One callback at a time on the pipe: a callback made from one of the threads of
        # `submit_concurrently` writes its line and reads the kit's reply under it.
        self._pipe = threading.RLock()
        # The records of a backend that logs with `logging` on the loggers it names, for
        # the kit's `log_records()` of a runtime that has none of its own (log-records).
        self._log_capture = (LoggerCapture(getattr(backend, "log_loggers", ()))
                             if LOG_RECORDS in capabilities else None)

    # -- handles (the codec's view of this side) ---------------------------------------------

    def handle_of(self, value: Any, interface: type) -> str:
        if isinstance(value, KitObject):
            return value._handle
        known = self._handles.get(id(value))
        if known is not None and known in self.objects:
            return known
        assert self._context is not None, "objects are only handed out inside a request"
        handle = f"{interface.__name__.lower()}-{next(self._numbers)}"
        self.objects[handle] = Served(value, interface, self._context.clock)
        self._handles[id(value)] = handle
        return handle

    def object_for(self, document: dict[str, Any], interface: type) -> Any:
        handle = document["handle"]
        served = self.objects.get(handle)
        if served is not None:
            return served.value
        properties = {name: decode(document.get(name), hint, self, f"{handle}.{name}")
                      for name, hint in view_fields(interface)}
        return KitObject(self, handle, interface, properties)

    # -- one request ---------------------------------------------------------------------------

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The answer to one decoded request (its envelope checked by the caller)."""
        request_id = request.get("id")
        try:
            result = self.handle(request)
            return {"id": request_id, "ok": True, "result": result}
        except (ProtocolError, CodecError, WireError) as error:
            return error_answer(request_id, "ProtocolError", str(error))
        except KitFailed as error:
            return error_answer(request_id, "InternalError", str(error))
        except ProcessCrashed as error:
            # A planned crash (a store fault): the runtime acts as a dead process from the
            # planned write on, and the child lives on to serve its restart.
            return error_answer(request_id, "ProcessCrashed", str(error))
        except Exception as error:
            name = error_name(error)
            if name is None:
                traceback.print_exc(file=sys.stderr)
                return error_answer(request_id, "InternalError",
                                    f"{type(error).__name__}: {error}")
            return error_answer(request_id, name, str(error), ERROR_KINDS[name].data(error))

    def handle(self, request: dict[str, Any]) -> Any:
        """The encoded result of one request, or the exception its method raised."""
        op = request["op"]
        interface_name, _, method_name = op.partition(".")
        handle = request.get("object")
        # "backend" is the served backend itself; every other handle one an answer gave.
        served = None if handle == "backend" else self.objects.get(str(handle))
        if handle != "backend" and served is None:
            raise ProtocolError(f"no object {handle!r} here; it was never handed out or has"
                                " been closed")
        interface = Backend if served is None else served.interface
        if interface.__name__ != interface_name:
            raise ProtocolError(f"{op} is not a method of {handle!r}, which is a"
                                f" {interface.__name__}")
        method = methods(interface).get(method_name)
        if method is None:
            raise ProtocolError(f"{interface.__name__} has no method {method_name!r}")
        now = decode(request.get("now"), datetime, self, "now")
        if not isinstance(now, datetime):
            raise ProtocolError(f"{op} needs the kit's time in 'now'")
        if served is None:
            served = Served(self.backend, Backend, PushedClock(now))
        else:
            self.set_clock(served.clock, now)
        args = request.get("args", {})
        if not isinstance(args, dict):
            raise ProtocolError("args must be an object")
        self._context = served
        try:
            result = self.invoke(served, method, args)
            encoded = self.result_document(method, result)
        finally:
            self._context = None
        if method.name == "close":
            self.forget(str(handle))
        return encoded

    def set_clock(self, clock: PushedClock, now: datetime) -> None:
        """Time passes for an opened object only when the kit's clock has moved."""
        clock.set(now)

    def result_document(self, method: Method, result: Any) -> Any:
        """The JSON form of a method's result."""
        return encode(result, method.returns, self)

    def replies_read(self) -> int:
        """How many reply lines callbacks have read since the last time this was asked."""
        count, self._replies = self._replies, 0
        return count

    def invoke(self, served: Served, method: Method, args: dict[str, Any]) -> Any:
        """Call the method on the served object with the decoded arguments."""
        unknown = set(args) - {name for name, _ in method.parameters}
        if unknown:
            raise ProtocolError(f"{method.op} takes no argument(s) {sorted(unknown)}")
        defaults = dict(method.defaults)
        values: dict[str, Any] = {}
        for name, annotation in method.parameters:
            if name not in args:
                if name not in defaults:
                    raise ProtocolError(f"{method.op} needs the argument {name!r}")
                continue
            values[name] = decode(args[name], annotation, self, f"args.{name}")
        if method.interface == Backend.__name__:
            return self.open(method, values, served.clock)
        target = served.value
        function = getattr(target, method.name, None)
        if method.name == "log_records" and not callable(function) and (
                self._log_capture is not None):
            function = self._log_capture.drain  # what the backend's loggers emitted
        if method.name == "submit_concurrently" and not callable(function) and (
                CONCURRENT_SUBMIT in self.capabilities):
            # A runtime that takes submits from several threads (concurrent-submit): the
            # server makes the batch's submissions at once on it.
            return self.submit_concurrently(target, **values)
        if not callable(function):
            raise ProtocolError(f"the served {method.interface} has no method {method.name}"
                                " (is its area claimed?)")
        result = function(**values)
        if inspect.isawaitable(result):
            # An asynchronous adapter (a task store with coroutines): the answer is what
            # the coroutine returns. Time does not pass meanwhile; the loop is the child's.
            result = self._loop.run_until_complete(result)
        return result

    def open(self, method: Method, values: dict[str, Any], clock: PushedClock) -> Any:
        """A `Backend.open*` request: the opened object gets a clock of its own."""
        opener = getattr(self.backend, method.name, None)
        if not callable(opener):
            raise ProtocolError(f"this child's backend has no {method.name}; it claims"
                                f" {', '.join(sorted(self.capabilities))}")
        own_clock = PushedClock(clock.now())
        self._context = Served(self.backend, Backend, own_clock)
        # By position up to the first argument not sent, as the kit calls an in-process
        # backend's opener (an audit sink is its third argument, IK-017), so the backend
        # may name its parameters as it likes.
        positional: list[Any] = []
        for name in _parameter_names(method):
            if name == "clock":
                positional.append(own_clock)
            elif name in values:
                positional.append(values.pop(name))
            else:
                break
        return opener(*positional, **values)

    def forget(self, handle: str) -> None:
        """A closed object's handle is gone (its peers are closed one by one)."""
        served = self.objects.pop(handle, None)
        if served is not None:
            self._handles.pop(id(served.value), None)

    def submit_concurrently(self, runtime: Any, scripts: Sequence[Any]
                            ) -> list[ConcurrentSubmission]:
        """Submit every script to `runtime` at the same time (LC-030): one thread each,
        released together by a barrier, as the kit's harness does in process. Each answer,
        in the order of `scripts`, is the new job's id or the exception its submit raised.

        Raises:
            KitFailed: a submit did not return within the real-time safety limit.
        """
        count = len(scripts)
        if count == 0:
            return []
        start_together = threading.Barrier(count)
        answers = [ConcurrentSubmission(error_type="InternalError",
                                        message="the submit did not return")] * count

        def submitter(index: int) -> None:
            try:
                start_together.wait(timeout=SUBMIT_LIMIT_SECONDS)
                answers[index] = ConcurrentSubmission(job_id=runtime.submit(scripts[index]))
            except Exception as error:
                answers[index] = ConcurrentSubmission(
                    error_type=error_name(error) or type(error).__name__, message=str(error))

        threads = [threading.Thread(target=submitter, args=(index,), daemon=True,
                                    name=f"jobconform-child-submitter-{index + 1}")
                   for index in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=SUBMIT_LIMIT_SECONDS)
            if thread.is_alive():
                raise KitFailed(f"a submit on {thread.name} did not return within"
                                f" {SUBMIT_LIMIT_SECONDS:g} s while others submitted too")
        return answers

    # -- calling the kit back ----------------------------------------------------------------

    def call_kit(self, handle: str, method: Method, args: tuple[Any, ...],
                 kwargs: dict[str, Any]) -> Any:
        """One callback: write it, read the kit's reply, return its result or raise."""
        names = [name for name, _ in method.parameters]
        values = dict(zip(names, args, strict=False))
        values.update(kwargs)
        arguments = {name: encode(values[name], dict(method.parameters)[name], self)
                     for name in names if name in values}
        with self._pipe:
            number = next(self._callbacks)
            callback = {"callback": number, "op": method.op, "object": handle,
                        "args": arguments}
            self._answers.write(encode_line(callback))
            self._answers.flush()
            while True:
                line = self._requests.readline()
                self._replies += 1
                if not line:
                    raise KitFailed(f"the kit closed the pipe before it replied to callback"
                                    f" {number}")
                try:
                    reply = decode_line(line)
                except WireError as error:
                    raise KitFailed(f"the kit's reply to callback {number} is not JSON:"
                                    f" {error}") from None
                if "op" not in reply or "callback" in reply:
                    break
                # A request within the callback: the kit's object reads back before it
                # replies (a loop event sink reads the loop, LP-019). Answer it first.
                self._answer_within(reply)
        if reply.get("callback") != number or not isinstance(reply.get("ok"), bool):
            raise KitFailed(f"expected the kit's reply to callback {number}, got"
                            f" {line.strip()[:200]}")
        if reply["ok"]:
            return decode(reply.get("result"), method.returns, self, f"{method.op} result")
        raise self.kit_error(reply.get("error"))

    def _answer_within(self, request: dict[str, Any]) -> None:
        """Answer a request the kit sent while it served a callback; the request the
        callback was made in goes on afterwards, addressing the object it did."""
        outer = self._context
        try:
            answer = self.answer(request)
        finally:
            self._context = outer
        self._answers.write(encode_line(answer))
        self._answers.flush()

    def kit_error(self, error: Any) -> Exception:
        """The exception a kit's object raised, rebuilt here."""
        return received_error(error)


def _parameter_names(method: Method) -> list[str]:
    """The method's parameters in the order its interface declares them, the clock's
    included (`Method.parameters` leaves it out)."""
    declared = inspect.signature(getattr(interface_named(method.interface), method.name))
    return list(declared.parameters)[1:]


def error_answer(request_id: Any, kind: str, message: str,
                 data: dict[str, Any] | None = None) -> dict[str, Any]:
    if not isinstance(request_id, int) or isinstance(request_id, bool):
        request_id = None
    error: dict[str, Any] = {"type": kind, "message": message}
    if data:
        error["data"] = encode_json(data)
    return {"id": request_id, "ok": False, "error": error}


def scripted_exception(error_type: str, message: str,
                       retry_after_ms: float | None) -> Exception:
    """A body's scripted exception, rebuilt with the script's type name (as
    `TaskScript.run` raises it in process), carrying the server's retry-after."""
    error: Exception = type(error_type, (Exception,), {})(message)
    # A server's retry-after travels on the exception, as HTTP clients do (RT-010).
    error.retry_after_ms = retry_after_ms  # type: ignore[attr-defined]
    return error


def received_error(error: Any) -> Exception:
    """The exception an error object from the other side stands for.

    Raises nothing itself; an error of no known kind becomes a `KitFailed`.
    """
    if not isinstance(error, dict) or not isinstance(error.get("type"), str):
        return KitFailed(f"the kit replied with an error the child cannot read: {error!r}")
    kind, message = error["type"], str(error.get("message", ""))
    data = error.get("data") or {}
    if kind == ScriptedError.__name__:
        return scripted_exception(str(data.get("error_type", "Exception")), message,
                                  data.get("retry_after_ms"))
    if kind in ERROR_KINDS:
        built = ERROR_KINDS[kind].build(message, data)
        assert isinstance(built, Exception)
        return built
    return KitFailed(f"the kit failed: {kind}: {message}")
