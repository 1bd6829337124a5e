"""The shape of each lifecycle answer, checked as it arrives (issue 34).

An adapter that hands back something of the wrong kind (`get` returning a string, a
`list_jobs` of dicts, `open` returning None) would otherwise surface later as a bare
Python error ("'str' object has no attribute 'status'") that names neither the method
nor what was expected. `shape_problem` names both, so the case's message says what the
adapter must return. Only the kind is checked here; the values are the suites' business.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

JOB_FIELDS = ("job_id", "status", "submitted_at", "started_at", "finished_at", "result",
              "error")
HEALTH_COUNTS = ("queued", "running", "total", "processed", "failed", "cancelled")
RUNTIME_METHODS = ("submit", "dispatch", "settle", "cancel", "get", "get_result",
                   "list_jobs", "cleanup", "shutdown", "health", "close")


def _has(answer: object, names: tuple[str, ...]) -> bool:
    return all(hasattr(answer, name) for name in names)


# The types every instance of which has the job fields (the health counts): frozen
# dataclasses whose __init__ sets each of them, with no property or slot in the way.
# Asked once per type, as list_jobs and health answer after every command.
_JOB_TYPES: set[type] = set()
_HEALTH_TYPES: set[type] = set()


def _is_job(answer: object) -> bool:
    return _has_always(answer, JOB_FIELDS, _JOB_TYPES)


def _is_health(answer: object) -> bool:
    return _has_always(answer, HEALTH_COUNTS, _HEALTH_TYPES)


def _has_always(answer: object, names: tuple[str, ...], known: set[type]) -> bool:
    """Whether `answer` has `names`; its type joins `known` if every instance has them."""
    kind = type(answer)
    if kind in known:
        return True
    if not _has(answer, names):
        return False
    if _always_has(kind, names):
        known.add(kind)
    return True


def _always_has(kind: type, names: tuple[str, ...]) -> bool:
    params = getattr(kind, "__dataclass_params__", None)
    if params is None or not params.frozen or not dataclasses.is_dataclass(kind):
        return False
    if (getattr(kind, "__getattribute__", None) is not object.__getattribute__
            or hasattr(kind, "__getattr__")):
        return False
    fields = {field.name: field for field in dataclasses.fields(kind)}
    return all(name in fields and fields[name].init
               and not hasattr(type(getattr(kind, name, None)), "__get__")
               for name in names)


# action -> (does the answer fit, what was expected), for the lifecycle calls whose answer
# the harness reads.
SHAPES: dict[str, tuple[Callable[[object], bool], str]] = {
    "open": (lambda answer: _has(answer, RUNTIME_METHODS),
             "a runtime with " + ", ".join(RUNTIME_METHODS)),
    "submit": (lambda answer: isinstance(answer, str) and answer != "",
               "the new job's id, a non-empty str"),
    "get": (lambda answer: answer is None or _is_job(answer),
            "a job record (with " + ", ".join(JOB_FIELDS) + ") or None"),
    "list_jobs": (lambda answer: isinstance(answer, list | tuple)
                  and all(map(_is_job, answer)),
                  "a list of job records (each with " + ", ".join(JOB_FIELDS) + ")"),
    "health": (_is_health,
               "a health snapshot (with " + ", ".join(HEALTH_COUNTS) + ")"),
    "park_request": (lambda answer: isinstance(answer, str) and answer != "",
                     "the parked request's id, a non-empty str"),
    "operator_requests": (lambda answer: isinstance(answer, list | tuple) and all(
        isinstance(entry, list | tuple) and len(entry) == 3 for entry in answer),
        "a list of (request's id, agent, request id)"),
}


def shape_problem(action: str, answer: object) -> str | None:
    """What is wrong with the kind of `answer` to `action`, or None if it fits (or the
    action's answer has no fixed kind)."""
    if action == "open" and answer is not None:
        missing = [name for name in RUNTIME_METHODS if not callable(getattr(answer, name, None))]
        if missing:
            return (f"`open` returned a {type(answer).__name__} without "
                    + ", ".join(missing) + "; a runtime has all of "
                    + ", ".join(RUNTIME_METHODS) + " (jobconform.backends.protocol.Runtime)")
        return None
    shape = SHAPES.get(action)
    if shape is None or shape[0](answer):
        return None
    shown = repr(answer)
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return (f"`{action}` returned {type(answer).__name__} {shown}, expected {shape[1]}")
