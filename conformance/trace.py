"""Portable reproducers: a shrunk counterexample as a versioned JSON trace and as Gherkin.

When a Hypothesis machine finds a divergence, Hypothesis shrinks the command sequence and
the runner writes it here as a trace: the commands (reference/commands.py's JSON form),
the limits the machine's harness used, and where it came from (backend, profile, spec
version, machine, seed). A trace replays on any backend (`jobconform replay`), and it
converts to a Gherkin scenario that the Behave suite runs like any other, so a bug found
once stays checked as a regression.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobconform.backends.protocol import Backend
from jobconform.conformance.harness import AdapterError, Divergence, Harness
from jobconform.conformance.job_draws import (
    MACHINE_PAGE_SIZE,
    MACHINE_SLOTS,
    MACHINE_TASK_CAP,
)
from jobconform.conformance.schema_files import first_problem
from jobconform.reference import commands as cmd
from jobconform.reference.commands import Command, command_from_json, command_to_json
from jobconform.spec import Profile, Registry

if TYPE_CHECKING:
    # Its traces share the regression header; it imports this module at run time.
    from jobconform.conformance.area_trace import AreaTrace

TRACE_FORMAT = "jobconform-trace/1"
TRACE_SCHEMA = "trace.schema.json"

# The limits each machine's harness runs with, by machine name: a trace must replay under
# the same ones. A machine missing here yields no trace (its report says so).
MACHINE_LIMITS: dict[str, tuple[int, int | None]] = {
    "lifecycle machine": (MACHINE_SLOTS, MACHINE_TASK_CAP),
}
# The executions query's page size a machine's harness sets (LC-032), where it sets one.
MACHINE_PAGE_SIZES: dict[str, int] = {"lifecycle machine": MACHINE_PAGE_SIZE}


class TraceError(ValueError):
    """A trace file cannot be read, does not match its schema, or holds a bad command."""


@dataclass(frozen=True)
class Trace:
    backend: str
    profile: str
    spec_version: str
    machine: str
    seed: int
    max_concurrent: int
    max_tasks: int | None
    requirements: tuple[str, ...]
    what: str
    expected: str
    actual: str
    commands: tuple[Command, ...] = field(default_factory=tuple)
    page_size: int | None = None  # the executions query's (LC-032); None: the profile's
    # Found on a runtime opened with queued execution off (LC-037): replayed on one too.
    queued_execution: bool = True

    def to_json(self) -> dict[str, Any]:
        limits: dict[str, Any] = {"max_concurrent": self.max_concurrent,
                                  "max_tasks": self.max_tasks}
        if self.page_size is not None:
            limits["page_size"] = self.page_size
        if not self.queued_execution:
            limits["queued_execution"] = False
        return {
            "format": TRACE_FORMAT,
            "spec_version": self.spec_version,
            "backend": self.backend,
            "profile": self.profile,
            "machine": self.machine,
            "seed": self.seed,
            "limits": limits,
            "divergence": {"requirements": list(self.requirements), "what": self.what,
                           "expected": self.expected, "actual": self.actual},
            "commands": [command_to_json(command) for command in self.commands],
        }


def trace_from_divergence(divergence: Divergence, *, backend: str, profile: str,
                          spec_version: str, machine: str, seed: int) -> Trace | None:
    """The trace of a machine's shrunk divergence, or None for a machine without limits."""
    if machine not in MACHINE_LIMITS:
        return None
    slots, cap = MACHINE_LIMITS[machine]
    return Trace(backend, profile, spec_version, machine, seed, slots, cap,
                 divergence.requirements, divergence.what, repr(divergence.expected),
                 repr(divergence.actual), tuple(divergence.commands),
                 MACHINE_PAGE_SIZES.get(machine))


def parse_trace(document: object, source: str) -> Trace:
    """Validate a trace document and rebuild its commands.

    Raises:
        TraceError: off-schema, a newer format, or a command that does not rebuild.
    """
    problem = first_problem(document, TRACE_SCHEMA)
    if problem is not None:
        raise TraceError(f"{source} is not a {TRACE_FORMAT} trace ({TRACE_SCHEMA}) {problem}")
    assert isinstance(document, dict)
    commands = []
    for number, body in enumerate(document["commands"], 1):
        try:
            commands.append(command_from_json(body))
        except ValueError as error:
            raise TraceError(f"{source}: command {number} does not rebuild: {error}") from None
    divergence, limits = document["divergence"], document["limits"]
    return Trace(document["backend"], document["profile"], document["spec_version"],
                 document["machine"], document["seed"], limits["max_concurrent"],
                 limits["max_tasks"], tuple(divergence["requirements"]), divergence["what"],
                 divergence["expected"], divergence["actual"], tuple(commands),
                 limits.get("page_size"), limits.get("queued_execution", True))


def read_trace(path: Path) -> Trace:
    """Load a trace file.

    Raises:
        TraceError: unreadable, not JSON, or not a valid trace.
    """
    return parse_trace(read_trace_document(path), str(path))


def read_trace_document(path: Path, error: type[TraceError] = TraceError) -> Any:
    """A trace file's JSON document (of any machine's trace).

    Raises:
        error: the file is unreadable or not JSON.
    """
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as problem:
        raise error(f"cannot read the trace {path}: {problem}") from problem


def write_trace(trace: Any, path: Path) -> None:
    """Write a trace (any machine's: what has `to_json()`) as an indented JSON file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(trace.to_json(), indent=2) + "\n", encoding="utf-8")


# -- replay -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Replay:
    """How a trace went on one backend: every command agreed, or where it diverged."""

    commands_run: int
    divergence: Divergence | None = None
    adapter_error: AdapterError | None = None
    # Why the trace cannot be checked on this backend (an area it does not claim).
    not_checkable: str | None = None

    @property
    def agreed(self) -> bool:
        return (self.divergence is None and self.adapter_error is None
                and self.not_checkable is None)


def replay(trace: Trace, backend: Backend, profile: Profile, registry: Registry) -> Replay:
    """Apply the trace's commands to `backend` and the oracle under the trace's limits."""
    harness = Harness(backend, profile, registry, max_concurrent=trace.max_concurrent,
                      max_tasks=trace.max_tasks, unlimited_tasks=trace.max_tasks is None,
                      page_size=trace.page_size, queued_execution=trace.queued_execution)
    try:
        for command in trace.commands:
            harness.run(command)
    except Divergence as divergence:
        return Replay(len(harness.commands), divergence=divergence)
    except AdapterError as error:
        return Replay(len(harness.commands), adapter_error=error)
    except ValueError as error:  # the harness refuses a command this backend cannot take
        return Replay(len(harness.commands), not_checkable=str(error))
    finally:
        harness.close()
    return Replay(len(harness.commands))


# -- Gherkin ----------------------------------------------------------------------------------

# Texts the step patterns read back unambiguously: no quotes, no line breaks.
_PLAIN = re.compile(r"[^\"\n\r]*")


def _plain(text: str) -> bool:
    return bool(_PLAIN.fullmatch(text))


def _seconds(value: float) -> str:
    return f"{value:g}"


def gherkin_step(command: Command) -> str:
    """The step sentence for a command: the suite's own steps where one fits exactly,
    otherwise the trace step, which carries the command's JSON (trace_steps.py)."""
    match command:
        case cmd.Submit(job=job, ignores_cancel=ignores, retry=None, module=None, owner=None,
                        trigger=None, options=None, arguments=None,
                        outcome=None) if _plain(job):
            ending = " with a body that ignores cancellation" if ignores else ""
            return f'job "{job}" is submitted{ending}'
        case cmd.Dispatch():
            return "the runtime dispatches"
        case cmd.Finish(job=job, outcome=cmd.Succeed(result=result)) if _plain(job):
            return f'job "{job}" returns {json.dumps(result)}'
        case cmd.Finish(job=job, outcome=cmd.Raise(error_type=kind, message=message,
                                                   retry_after_ms=after)) if (
                _plain(job) and re.fullmatch(r"\w+", kind) and _plain(message)):
            ending = "" if after is None else f" with a retry-after of {after:g} ms"
            return f'job "{job}" raises {kind} "{message}"{ending}'
        case cmd.Cancel(job=job) if _plain(job):
            return f'job "{job}" is cancelled'
        case cmd.AdvanceTime(seconds=seconds) if seconds >= 0:
            return f"{_seconds(seconds)} seconds pass"
        case cmd.Cleanup(max_age_seconds=age) if age >= 0:
            return f"cleanup runs with a max age of {_seconds(age)} seconds"
        case cmd.Shutdown():
            return "the runtime shuts down"
        case cmd.GetResult(job=job) if _plain(job):
            return f'the result of job "{job}" is read'
        case cmd.Get(job=job) if _plain(job):
            return f'job "{job}" is read'
        case cmd.ListJobs(status=None):
            return "the jobs are listed"
        case cmd.ListJobs(status=status) if status is not None and _plain(status):
            return f'the jobs are listed with status "{status}"'
        case cmd.Heartbeat(job=job) if _plain(job):
            return f'job "{job}" sends a heartbeat'
        case cmd.DetectStuck(job_timeout_seconds=timeout) if timeout >= 0:
            return f"stuck jobs are detected with a timeout of {_seconds(timeout)} seconds"
    recorded = json.dumps(command_to_json(command), sort_keys=True)
    return f"the recorded command {recorded} is replayed"


def areas_needed(commands: tuple[Command, ...]) -> list[str]:
    """The areas beyond the lifecycle that a command sequence exercises."""
    needed = []
    if any(isinstance(c, cmd.ComputeDelay) or (isinstance(c, cmd.Submit) and c.retry)
           for c in commands):
        needed.append("retry")
    if any(isinstance(c, cmd.Heartbeat | cmd.DetectStuck) for c in commands):
        needed.append("stuck")
    return needed


def _runtime_step(trace: Trace) -> str:
    if trace.max_tasks is None:
        # The suite's steps set the slots or lift the cap, not both.
        raise TraceError("a trace without a task cap cannot become Gherkin yet; replay it"
                         " with `jobconform replay` instead")
    if not trace.queued_execution:
        # Slots do not matter there: no job waits for one (LC-037).
        return f"Given a runtime with queued execution off and a task cap of {trace.max_tasks}"
    slots = f"{trace.max_concurrent} worker slot{'s' if trace.max_concurrent != 1 else ''}"
    paged = ("" if trace.page_size is None
             else f" whose executions query pages {trace.page_size} jobs at most")
    return f"Given a runtime with {slots} and a task cap of {trace.max_tasks}{paged}"


def regression_header(trace: Trace | AreaTrace, name: str) -> list[str]:
    """The first lines of a trace's regression feature, up to its scenario's title: where
    it was found, tagged with the requirements the divergence named (which also skips it
    where they do not apply)."""
    tags = " ".join(f"@{rid}" for rid in trace.requirements)
    return [
        f"# Generated by jobconform from the trace {name}; regenerate rather than edit.",
        "@regression",
        f"Feature: Regression {name}",
        f"  Found by the {trace.machine} (seed {trace.seed}) on backend {trace.backend},",
        f"  profile {trace.profile}, spec {trace.spec_version}: {trace.what}.",
        "",
        f"  {tags}",
        f"  Scenario: Shrunk counterexample {name} ({len(trace.commands)} commands)",
    ]


def to_gherkin(trace: Trace, name: str) -> str:
    """A feature with one scenario: the trace's runtime, then its commands as When-steps.

    Every step goes through the harness, which compares backend and oracle after each
    command, so the scenario fails exactly where the trace diverges. It is tagged with the
    requirements the divergence named (which also skips it where they do not apply).
    """
    lines = regression_header(trace, name)
    areas = areas_needed(trace.commands)
    if areas:
        lines.append(f'    Given the backend claims the areas "{", ".join(areas)}"')
        lines.append(f"    And {_runtime_step(trace).removeprefix('Given ')}")
    else:
        lines.append(f"    {_runtime_step(trace)}")
    for number, command in enumerate(trace.commands):
        keyword = "When" if number == 0 else "And"
        lines.append(f"    {keyword} {gherkin_step(command)}")
    return "\n".join(lines) + "\n"


def trace_name(path: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem).strip("-") or "trace"



def trace_format(path: Path) -> object:
    """The `format` a trace file declares (None when it declares none).

    Raises:
        TraceError: unreadable, or not JSON.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise TraceError(f"cannot read the trace {path}: {error}") from error
    return document.get("format") if isinstance(document, dict) else None
