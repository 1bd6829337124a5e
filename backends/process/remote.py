"""The kit's side of protocol version 2: proxies for the child's objects, and the kit's
objects that the child calls back.

A `RemoteObject` stands for one of the child's objects (its backend, a runtime it
opened). Calling one of its methods sends the request `Interface.method` with the
arguments encoded by the method's annotations, and decodes the result the same way.
Objects it hands the child (a task body, an agent, a target) are kept in `KitObjects`
under a handle; the child calls them back by that handle while it handles a request.

Each proxy has the clock of the check that opened it: every request carries its
reading as `now`, and objects derived from a proxy (a peer, a reopened runtime) share
it.
"""

from __future__ import annotations

import collections
import functools
import inspect
import itertools
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from jobconform.backends.process.codec import CodecError, decode, encode, encode_json
from jobconform.backends.process.errors import MalformedMessage
from jobconform.backends.process.interfaces import (
    CHILD_INTERFACES,
    ERROR_KINDS,
    KIT_INTERFACES,
    Method,
    ScriptedError,
    error_name,
    interface_named,
    methods,
)
from jobconform.backends.process.session import ChildSession
from jobconform.backends.process.wire import encode_timestamp
from jobconform.backends.protocol import Clock


@dataclass(frozen=True)
class Request:
    """One call of a child's object, encoded: what travels, and the context its answer is
    decoded in (the context is not part of what the request is)."""

    op: str
    handle: str
    now: str
    args: dict[str, Any]
    context: Context = field(compare=False)

    @property
    def line(self) -> tuple[str, str, str, dict[str, Any]]:
        return self.op, self.handle, self.now, self.args

    def same_call(self, other: Request) -> bool:
        """The same method of the same object with the same arguments, at any time."""
        return (self.op == other.op and self.handle == other.handle
                and self.args == other.args)


@dataclass(frozen=True)
class ReadPlan:
    """The calls the harness said it makes next on one object (`RemoteObject.plan_reads`)."""

    handle: str  # the object whose next call comes first, with `with_next_call`
    reads: list[Request]
    with_next_call: bool


class KitObjects:
    """The kit's objects the child holds handles to, and the proxies for the child's.

    It also sends their requests: one by one, or, for a child announcing `batch`, a
    planned group in one exchange, whose answers wait here until the harness makes the
    same calls in the same order (any other request drops what is left of them).
    """

    def __init__(self, session: ChildSession) -> None:
        self.session = session
        self._objects: dict[str, tuple[Any, type]] = {}
        self._handles: dict[int, str] = {}
        self._numbers = itertools.count(1)
        self._plan: ReadPlan | None = None
        # Answers a batch brought ahead of the calls they answer, in the calls' order.
        self._brought: collections.deque[tuple[Request, dict[str, Any]]] = (
            collections.deque())
        # Several of the kit's threads may call (TS-010's savers); re-entrant, since a
        # callback served within a request may read the child back (LP-019's sink).
        self._order = threading.RLock()

    def plan(self, handle: str, reads: list[Request], with_next_call: bool) -> None:
        """Send `reads` with the next request to `handle` (`with_next_call`) or from the
        first of them (see `RemoteObject.plan_reads`); a plan replaces the one before, and
        none is kept for a child without `batch`, nor while answers of the last batch
        wait (the calls planned are those, brought with the command)."""
        self._plan = ReadPlan(handle, reads, with_next_call) if (
            reads and self.session.claims.batches and not self._brought) else None

    def exchange(self, request: Request) -> dict[str, Any]:
        """The child's answer to `request`: one a batch brought already, or one sent now,
        in a batch when a plan says what follows it."""
        with self._order:
            if self._brought:
                expected, answer = self._brought.popleft()
                if expected == request:
                    return answer
                self._brought.clear()  # the harness went another way: those are stale
            plan = self._plan
            first = plan is not None and plan.reads[0].same_call(request)
            if plan is None or not (first or (plan.with_next_call
                                              and plan.handle == request.handle)):
                return self.session.call(*request.line)
            self._plan = None
            # The reads follow at once, so at the request's time (the clock only moves in
            # a command, and the objects of one check share its clock: a read made at
            # another time is not the one planned).
            reads = [replace(read, now=request.now) for read in plan.reads]
            batch = reads if reads[0] == request else [request, *reads]
            answers = self.session.call_together([call.line for call in batch])
            self._brought.extend(zip(batch[1:], answers[1:], strict=True))
            return answers[0]

    def register(self, value: Any, interface: type) -> str:
        known = self._handles.get(id(value))
        if known is not None:
            return known
        handle = f"kit-{interface.__name__.lower()}-{next(self._numbers)}"
        self._objects[handle] = (value, interface)
        self._handles[id(value)] = handle
        return handle

    def serve(self, callback: dict[str, Any]) -> dict[str, Any]:
        """The kit's reply to one callback line from the child."""
        number = callback.get("callback")
        handle, op = callback.get("object"), callback.get("op")
        entry = self._objects.get(handle) if isinstance(handle, str) else None
        if entry is None:
            return self._failed(number, f"no kit object {handle!r}")
        value, interface = entry
        name = op.partition(".")[2] if isinstance(op, str) else ""
        method = methods(interface).get(name)
        if method is None or op != method.op:
            return self._failed(number, f"{op!r} is not a method of {handle!r}, a"
                                f" {interface.__name__}")
        context = Context(self, None)
        args = callback.get("args", {})
        try:
            if not isinstance(args, dict):
                raise CodecError("args must be an object")
            values = {n: decode(args[n], a, context, f"args.{n}")
                      for n, a in method.parameters if n in args}
        except CodecError as error:
            return self._failed(number, f"a malformed callback {op}: {error}")
        try:
            result = getattr(value, name)(**values)
        except Exception as error:
            return {"callback": number, "ok": False, "error": raised_error(error)}
        return {"callback": number, "ok": True,
                "result": encode(result, method.returns, context)}

    @staticmethod
    def _failed(number: Any, message: str) -> dict[str, Any]:
        return {"callback": number, "ok": False,
                "error": {"type": "ProtocolError", "message": message}}


def raised_error(error: Exception) -> dict[str, Any]:
    """An exception of the kit's object as the child receives it: a kind the areas
    declare, or the body's scripted exception (its type name is the script's)."""
    name = error_name(error)
    if name is not None:
        return {"type": name, "message": str(error),
                "data": encode_json(ERROR_KINDS[name].data(error))}
    retry_after = getattr(error, "retry_after_ms", None)
    return {"type": ScriptedError.__name__, "message": str(error),
            "data": {"error_type": type(error).__name__,
                     "retry_after_ms": None if retry_after is None else float(retry_after)}}


class Context:
    """Handles, as the codec sees them, for one request: objects the child hands back
    take the clock of the proxy the request went to."""

    def __init__(self, kit: KitObjects, clock: Clock | None) -> None:
        self.kit = kit
        self.clock = clock

    def handle_of(self, value: Any, interface: type) -> str:
        if isinstance(value, RemoteObject):
            return value.handle
        return self.kit.register(value, interface)

    def object_for(self, document: dict[str, Any], interface: type) -> Any:
        if interface in KIT_INTERFACES:
            entry = self.kit._objects.get(document["handle"])
            if entry is None:
                raise CodecError(f"no kit object {document['handle']!r}")
            return entry[0]
        if self.clock is None:
            raise CodecError(f"a callback cannot hand the kit a {interface.__name__}")
        return RemoteObject(self.kit, document["handle"], interface, self.clock)


class RemoteObject:
    """One of the child's objects; its interface's methods are requests."""

    def __init__(self, kit: KitObjects, handle: str, interface: type,
                 clock: Clock | None) -> None:
        assert interface in CHILD_INTERFACES
        self.kit = kit
        self.handle = handle
        self.interface = interface
        self.clock = clock

    def __repr__(self) -> str:
        return f"<{self.interface.__name__} {self.handle} in `{self.kit.session.display}`>"

    def __getattr__(self, name: str) -> Any:
        method = methods(self.interface).get(name)
        if method is None:
            raise AttributeError(f"{self.interface.__name__} has no method {name}")

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.call(method, args, kwargs)

        call.__name__ = name
        return call

    def plan_reads(self, reads: Sequence[tuple[Any, str, dict[str, Any]]],
                   with_next_call: bool = False) -> None:
        """Say which calls the harness makes next, `(object, method, arguments)` each (this
        object or others of the same child), so that a child announcing `batch` answers
        them in one exchange: from the first of them (a settle, as a rule) when it is
        called, or, `with_next_call`, from the next call of any method of this object
        (the command), which the harness knows is followed by them and nothing else. The
        calls after the first must be reads: one the harness does not make after all (it
        stopped at a difference) only cost the child a read. A plan naming an object that
        is not the child's is dropped."""
        planned = []
        for target, name, values in reads:
            if not isinstance(target, RemoteObject) or target.kit is not self.kit:
                self.kit.plan(self.handle, [], False)
                return
            # At any time: the plan is sent at the time of the call that sends it.
            planned.append(target._request(methods(target.interface)[name], (), values))
        self.kit.plan(self.handle, planned, with_next_call)

    def call(self, method: Method, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Send one request and return its decoded result, or raise its error."""
        request = self._request(method, args, kwargs)
        return self._answered(method, request, self.kit.exchange(request))

    def _request(self, method: Method, args: tuple[Any, ...], kwargs: dict[str, Any]
                 ) -> Request:
        """The request for one call: its op, object, time and encoded arguments."""
        values = _bound(method, args, kwargs)  # every argument travels, defaults too
        defaults = dict(method.defaults)
        for name in method.later:
            if values.get(name) == defaults[name]:
                del values[name]  # a later argument travels only when given
        clock = self.clock
        if method.takes_clock:
            clock = values.pop("clock")
        if clock is None:
            raise ValueError(f"{method.op} needs a clock")
        context = Context(self.kit, clock)
        encoded = {name: encode(values[name], annotation, context)
                   for name, annotation in method.parameters if name in values}
        return Request(method.op, self.handle, _request_time(clock.now()), encoded, context)

    def _answered(self, method: Method, request: Request, message: dict[str, Any]) -> Any:
        """The decoded result of one answer, or its error raised."""
        session, context = self.kit.session, request.context
        if message["ok"]:
            try:
                return decode(message.get("result"), method.returns, context,
                              f"the result of {method.op}")
            except CodecError as error:
                raise session.malformed(method.op, str(error), message) from None
        failure = message["error"]
        kind, text = failure["type"], str(failure["message"])
        session.raise_if_exchange_failed(method.op, kind, text)
        if kind not in ERROR_KINDS:
            raise MalformedMessage(f"the child `{session.display}` answered {method.op} with"
                                   f" an error of unknown type {kind!r}: {text}")
        try:
            exception = ERROR_KINDS[kind].build(text, failure.get("data") or {})
        except (KeyError, TypeError, IndexError) as problem:
            raise MalformedMessage(f"the child `{session.display}` answered {method.op} with"
                                   f" a {kind} lacking its data ({problem!r}): {failure!r}"
                                   ) from None
        raise exception


@functools.lru_cache(maxsize=64)
def _request_time(moment: datetime) -> str:
    """A request's `now`: the clock reads the same between two commands, and a step's
    requests (a command, its settle and reads) all carry it. Equal instants at other
    offsets share one UTC text, so a cached text is always the right one."""
    return encode_timestamp(moment)


@functools.cache
def _signature(interface: str, name: str) -> inspect.Signature:
    """A method's signature without `self`, as the harness calls a proxy's method."""
    signature = inspect.signature(getattr(interface_named(interface), name))
    parameters = list(signature.parameters.values())[1:]  # without self
    return signature.replace(parameters=parameters)


@functools.cache
def _parameters(interface: str, name: str) -> tuple[tuple[str, ...], dict[str, Any]] | None:
    """A method's parameter names in order, and the defaults of those that have one (a
    call that names them all binds without `inspect`, the commonest call by far); None
    for a method with *args or **kwargs, whose calls `inspect` binds."""
    parameters = _signature(interface, name).parameters.values()
    if any(p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) for p in parameters):
        return None
    return (tuple(p.name for p in parameters),
            {p.name: p.default for p in parameters if p.default is not p.empty})


def _bound(method: Method, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Every argument of one call by name, defaults applied; a call that does not fit
    the method raises the TypeError `inspect` raises."""
    plain = _parameters(method.interface, method.name)
    # A method without parameters (a snapshot, a listing: most reads) binds here too.
    names, defaults = plain if plain is not None else ((), {})
    if plain is not None and len(args) <= len(names) and all(name in names for name in kwargs):
        values = dict(zip(names, args, strict=False))
        if not any(name in values for name in kwargs):
            values.update(kwargs)
            for name in names:
                if name not in values:
                    if name not in defaults:
                        break
                    values[name] = defaults[name]
            else:
                return {name: values[name] for name in names}
    bound = _signature(method.interface, method.name).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)
