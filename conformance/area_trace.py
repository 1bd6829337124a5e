"""Portable reproducers for every area's machine: a shrunk counterexample as JSON and Gherkin.

The lifecycle machine's traces (trace.py) hold lifecycle commands under the lifecycle
harness's limits. The other areas' machines run their own commands through their own
harnesses, so their traces carry, besides the commands, the machine that found them and
the setup its harness ran with (the parameters an example drew, if any). An area's
machine module makes its counterexamples replayable by defining

    replay_harness(backend, profile, registry, setup) -> a harness with run() and close()

which opens the harness the machine used. A trace replays on any backend (`replay`) and
converts to a Gherkin scenario that Behave runs through area_trace_steps.py, failing
where the trace diverges.

Commands are frozen dataclasses of the kit's own modules; their JSON form tags what JSON
lacks (datetimes, tuples, enums, non-finite floats, nested dataclasses), and a trace can
only name classes inside `jobconform`.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, cast

from jobconform.backends.protocol import Backend
from jobconform.conformance.harness import AdapterError, Divergence
from jobconform.conformance.trace import (
    Replay,
    TraceError,
    read_trace_document,
    regression_header,
    write_trace,
)
from jobconform.spec import Profile, Registry
from jobconform.spec.areas import areas, load_attribute

AREA_TRACE_FORMAT = "jobconform-area-trace/1"
REPLAY_HOOK = "replay_harness"
TRUSTED_PACKAGE = "jobconform."


class AreaTraceError(TraceError):
    """An area trace cannot be read, names an unknown class, or its machine has no hook
    (a TraceError, so the commands that read traces report it as they report theirs)."""


class ReplayHarness(Protocol):
    def run(self, command: Any) -> object: ...

    def close(self) -> None: ...


# -- the JSON form of commands ----------------------------------------------------------------


def encode(value: object) -> Any:
    """`value` as JSON data; what JSON lacks is tagged with a "$" key.

    Raises:
        AreaTraceError: a value of a type with no JSON form here.
    """
    # Before the plain types: a StrEnum or IntEnum is also a str or an int, and written as
    # one it would come back as that plain value, which the oracle cannot read.
    if isinstance(value, enum.Enum):
        return {"$enum": _class_name(type(value)), "value": encode(value.value)}
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, tuple):
        return {"$tuple": [encode(item) for item in value]}
    if isinstance(value, list):
        return [encode(item) for item in value]
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise AreaTraceError(f"only string keys have a JSON form, not in {value!r}")
        return {"$dict": {key: encode(item) for key, item in value.items()}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"$type": _class_name(type(value)),
                "fields": {f.name: encode(getattr(value, f.name))
                           for f in dataclasses.fields(value)}}
    raise AreaTraceError(f"{type(value).__name__} has no JSON form in a trace: {value!r}")


def decode(document: Any) -> Any:
    """The value `encode` gave `document` for.

    Raises:
        AreaTraceError: an unknown tag or a class outside the kit.
    """
    if isinstance(document, list):
        return [decode(item) for item in document]
    if not isinstance(document, dict):
        return document
    if "$type" in document:
        cls = _class(document["$type"])
        try:
            return cls(**{name: decode(item)
                          for name, item in dict(document.get("fields", {})).items()})
        except TypeError as error:
            raise AreaTraceError(f"{document['$type']} does not take {document!r}: {error}"
                                 ) from None
    if "$enum" in document:
        return _class(document["$enum"])(decode(document["value"]))
    if "$float" in document:
        return float(document["$float"])
    if "$datetime" in document:
        return datetime.fromisoformat(document["$datetime"])
    if "$tuple" in document:
        return tuple(decode(item) for item in document["$tuple"])
    if "$dict" in document:
        return {key: decode(item) for key, item in dict(document["$dict"]).items()}
    raise AreaTraceError(f"an untagged object in a trace: {document!r}")


def _class_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _class(name: object) -> Callable[..., Any]:
    text = str(name)
    module, _, attribute = text.partition(":")
    if not module.startswith(TRUSTED_PACKAGE) or not attribute or "." in attribute:
        raise AreaTraceError(f"a trace names only the kit's own classes, not {text!r}")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as error:
        raise AreaTraceError(f"{text} cannot be loaded: {error}") from None
    if not isinstance(found, type) or not (dataclasses.is_dataclass(found)
                                           or issubclass(found, enum.Enum)):
        raise AreaTraceError(f"{text} is not a command or value class")
    return cast(Callable[..., Any], found)


# -- the trace --------------------------------------------------------------------------------


@dataclass(frozen=True)
class AreaTrace:
    backend: str
    profile: str
    spec_version: str
    machine: str
    seed: int
    requirements: tuple[str, ...]
    what: str
    expected: str
    actual: str
    setup: dict[str, Any] = field(default_factory=dict)
    commands: tuple[object, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "format": AREA_TRACE_FORMAT, "spec_version": self.spec_version,
            "backend": self.backend, "profile": self.profile, "machine": self.machine,
            "seed": self.seed, "setup": encode(self.setup),
            "divergence": {"requirements": list(self.requirements), "what": self.what,
                           "expected": self.expected, "actual": self.actual},
            "commands": [encode(command) for command in self.commands],
        }


def parse_area_trace(document: object, source: str) -> AreaTrace:
    """Rebuild a trace from its JSON form.

    Raises:
        AreaTraceError: not an area trace, or a command that does not rebuild.
    """
    if not isinstance(document, dict) or document.get("format") != AREA_TRACE_FORMAT:
        raise AreaTraceError(f"{source} is not a {AREA_TRACE_FORMAT} trace")
    try:
        divergence = document["divergence"]
        setup = decode(document.get("setup", {"$dict": {}}))
        return AreaTrace(str(document["backend"]), str(document["profile"]),
                         str(document["spec_version"]), str(document["machine"]),
                         int(document["seed"]), tuple(divergence["requirements"]),
                         str(divergence["what"]), str(divergence["expected"]),
                         str(divergence["actual"]), dict(setup),
                         tuple(decode(command) for command in document["commands"]))
    except (KeyError, TypeError, ValueError) as error:
        raise AreaTraceError(f"{source}: {type(error).__name__}: {error}") from None


def read_area_trace(path: Path) -> AreaTrace:
    return parse_area_trace(read_trace_document(path, AreaTraceError), str(path))


def write_area_trace(trace: AreaTrace, path: Path) -> None:
    write_trace(trace, path)


# -- replay -----------------------------------------------------------------------------------


def replay_hook(machine: str) -> Callable[..., ReplayHarness] | None:
    """The machine's `replay_harness`, found beside its run function, or None."""
    for area in areas():
        if area.machine is not None and area.machine.title == machine:
            module = area.machine.run.partition(":")[0]
            try:
                return cast(Callable[..., ReplayHarness],
                            load_attribute(f"{module}:{REPLAY_HOOK}"))
            except Exception:
                return None
    return None


def open_replay_harness(machine: str, backend: Backend, profile: Profile,
                        registry: Registry | None, setup: dict[str, Any]) -> ReplayHarness:
    """The harness `machine` ran with, opened on `backend`.

    Raises:
        AreaTraceError: no such machine, or it defines no replay_harness.
    """
    hook = replay_hook(machine)
    if hook is None:
        raise AreaTraceError(f"the {machine} is unknown or defines no {REPLAY_HOOK}()")
    return hook(backend, profile, registry, setup)


def replay_area_trace(trace: AreaTrace, backend: Backend, profile: Profile,
                      registry: Registry | None) -> Replay:
    """Apply the trace's commands to `backend` and the oracle, as its machine did."""
    harness = open_replay_harness(trace.machine, backend, profile, registry, trace.setup)
    done = 0
    try:
        for command in trace.commands:
            harness.run(command)
            done += 1
    except Divergence as divergence:
        return Replay(done + 1, divergence=divergence)
    except AdapterError as error:
        return Replay(done + 1, adapter_error=error)
    finally:
        harness.close()
    return Replay(done)


# -- Gherkin ----------------------------------------------------------------------------------


def area_gherkin(trace: AreaTrace, name: str) -> str:
    """A feature with one scenario: the machine's harness, then each command as a step
    that replays its JSON (area_trace_steps.py); tagged with the divergence's
    requirements, so it is skipped where they do not apply."""
    setup = json.dumps(encode(trace.setup), sort_keys=True)
    lines = [*regression_header(trace, name),
             f'    Given the harness of the "{trace.machine}" with the setup {setup}']
    for number, command in enumerate(trace.commands):
        keyword = "When" if number == 0 else "And"
        recorded = json.dumps(encode(command), sort_keys=True)
        lines.append(f"    {keyword} the machine's recorded command {recorded} is replayed")
    return "\n".join(lines) + "\n"
