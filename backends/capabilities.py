"""Every capability beyond the areas, declared once.

A backend claims areas (`lifecycle`, `breaker`, ...; spec/areas.py) and, besides them,
capabilities. Each capability is one line of the table below: its name, the area it
qualifies (a backend claiming it must claim that area too; `ACROSS` for one that adds to
every claimed area with requirements needing it), whether it adds to the area (`ADDS`:
requirements need it, and are "not claimed" elsewhere) or narrows it (`NARROWS`: a partial
claim, whose left-out requirements jobconform.conformance.applicability.PARTIAL_CLAIMS
names), how the process protocol carries it, whether every shipped backend claims it, the
spec version that brought it, and what it adds, in words that follow "the <area> area".

Everything else is derived from the table: the constants adapters and the kit use (also
importable from jobconform.backends.protocol), what the backend loader accepts, what the
shipped backends claim in common, what a process child may claim, and the `needs` pattern
of spec/registry.schema.json (`python -m jobconform.backends.capabilities` rewrites it; a
test checks it). Adding a capability is one line here, kept in name order, plus the
backends' real support of it (and its protocol notes in jobconform.backends.protocol).

The process column is one of: `NOT_CARRIED` (no message carries what it needs; the kit
drops a child's claim), `WITH_AREA` (it only narrows, or the kit does it itself: carried
whenever its area is), or `Interface.method` / `Interface.method(parameter)`: carried
from protocol version 2 on, when version 2's interfaces have that method (and parameter).
"""

# ruff: noqa: E501  (the table keeps one capability a line)

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ACROSS = ""  # the area column of a capability across areas
ADDS = "adds"
NARROWS = "narrows"
NOT_CARRIED = ""
WITH_AREA = "with its area"
EVERY = True  # every shipped backend (memory, sql, threaded, threaded+sql) claims it
OWN = False  # a backend that has it claims it on its own
UNTRACKED = ""  # the since column where no spec version brought it (a kit-side claim)

# A backend whose runtime of an area takes planned store faults claims `store_faults(area)`
# besides the area (jobconform.backends.faults); requirements that need it are "not
# claimed" elsewhere.
STORE_FAULTS = "store-faults"


@dataclass(frozen=True)
class Capability:
    name: str
    area: str
    kind: str
    process: str
    shipped: bool
    since: str
    what: str


CAPABILITIES: dict[str, Capability] = {}


def _declare(name: str, area: str, kind: str, process: str,
             shipped: bool, since: str, what: str) -> str:
    assert name not in CAPABILITIES, f"capability {name!r} declared twice"
    CAPABILITIES[name] = Capability(name, area, kind, process, shipped, since, what)
    return name


# Constant              = _declare(name,                      area,          kind,    process (v2 carries it by),              shipped, since,     what it adds)
ADMISSION_PEERS         = _declare("admission-peers",         "admission",   ADDS,    NOT_CARRIED,                             EVERY, "0.21.0",  "whose runtime opens a second runtime over its store, as another worker")
AUDIT_EVENTS            = _declare("audit-events",            "idempotency", ADDS,    "Backend.open_idempotency(audit)",       OWN,   "0.8.0",   "whose replays it reports")
BREAKER_SEAMS           = _declare("breaker-seams",           "breaker",     ADDS,    "BreakerRuntime.backstop",               EVERY, "0.9.0",   "whose runtime has the seams")
CONCURRENT_SUBMIT       = _declare("concurrent-submit",       "lifecycle",   ADDS,    "JobRuntime.submit_concurrently",        OWN,   "0.8.0",   "whose submit it qualifies")
DEPRECATED_ALIASES      = _declare("deprecated-aliases",      ACROSS,        ADDS,    NOT_CARRIED,                             EVERY, "0.20.0",  "its runtimes keep an SDK's deprecated names beside the current ones")
EXECUTION_OPTIONS       = _declare("execution-options",       "lifecycle",   ADDS,    "JobRuntime.submit(options)",            EVERY, "0.20.0",  "whose jobs carry options to their bodies")
EXECUTION_QUERIES       = _declare("execution-queries",       "lifecycle",   ADDS,    "JobRuntime.query_executions",           EVERY, "0.20.0",  "whose jobs it pages, filters and counts")
HEALTH_REPORT           = _declare("health-report",           "lifecycle",   ADDS,    "JobRuntime.health",                     OWN,   "0.8.0",   "whose health snapshot it extends")
JOB_ARGUMENTS           = _declare("job-arguments",           "lifecycle",   ADDS,    "JobRuntime.submit(arguments)",          EVERY, "0.20.0",  "whose jobs it gives arguments")
LOG_RECORDS             = _declare("log-records",             ACROSS,        ADDS,    "JobRuntime.log_records",                EVERY, "0.20.0",  "its runtimes show the log records they emit")
LOOP_EVENTS             = _declare("loop-events",             "loops",       ADDS,    "Backend.open_loops(events)",            EVERY, "0.9.0",   "whose runs and loops it reports")
LOOP_LABELS             = _declare("loop-labels",             "loops",       ADDS,    "Agent.execute(loop_id)",                EVERY, "0.20.0",  "whose runs' executions it labels")
OPERATOR_QUEUE          = _declare("operator-queue",          "redelivery",  ADDS,    "JobRuntime.park_request",               EVERY, "0.20.0",  "whose operator queue it keys by agent and request id")
QUEUED_EXECUTION_SWITCH = _declare("queued-execution-switch", "lifecycle",   ADDS,    "Backend.open(settings)",                EVERY, "0.20.0",  "whose queued execution it can switch off")
REMINDER_LABELS         = _declare("reminder-labels",         "reminders",   ADDS,    "ReminderTarget.dispatch(triggered_by)", EVERY, "0.20.0",  "whose dispatches it labels")
RETRY_INTERVALS         = _declare("retry-intervals",         "retry",       NARROWS, WITH_AREA,                               OWN,   UNTRACKED, "that it claims as a list of intervals")
RETRY_WITHOUT_JITTER    = _declare("retry-without-jitter",    "retry",       NARROWS, WITH_AREA,                               OWN,   UNTRACKED, "that it claims without jitter modes")
SCHEDULING_ENDS         = _declare("scheduling-ends",         "scheduling",  ADDS,    "SchedulingRuntime.end_execution",       EVERY, "0.19.0",  "whose history learns how executions ended")
SCHEDULING_UTC_ONLY     = _declare("scheduling-utc-only",     "scheduling",  NARROWS, WITH_AREA,                               OWN,   UNTRACKED, "whose schedules it keeps in UTC only")
SCHEDULING_VALIDATION   = _declare("scheduling-validation",   "scheduling",  ADDS,    "SchedulingRuntime.set_validation",      EVERY, "0.20.0",  "whose ended executions are validated")
STOP_SIGNAL             = _declare("stop-signal",             "restart",     ADDS,    WITH_AREA,                               OWN,   "0.12.0",  "after whose stop by signal a new runtime opens")


def store_faults(area: str) -> str:
    """The capability of taking store faults in `area`: "store-faults:reminders"."""
    return f"{STORE_FAULTS}:{area}"


def qualifying() -> dict[str, Capability]:
    """The capabilities that qualify one area, which a backend claiming them claims too."""
    return {name: cap for name, cap in CAPABILITIES.items() if cap.area != ACROSS}


def across_areas() -> dict[str, Capability]:
    """The capabilities that add to whichever claimed areas have requirements needing them."""
    return {name: cap for name, cap in CAPABILITIES.items() if cap.area == ACROSS}


def every_shipped() -> frozenset[str]:
    """The capabilities every shipped backend claims."""
    return frozenset(name for name, cap in CAPABILITIES.items() if cap.shipped)


def needs_pattern(area_names: frozenset[str] | set[str]) -> str:
    """The pattern of a requirement's `needs` item in spec/registry.schema.json: store faults
    of an area, an area, or a capability that adds (a partial claim is never needed)."""
    names = sorted(set(area_names) | {name for name, cap in CAPABILITIES.items()
                                       if cap.kind == ADDS})
    return f"^({STORE_FAULTS}:[a-z][a-z-]*|{'|'.join(names)})$"


_NEEDS_PATTERN = re.compile(r'("needs": \{.*?"pattern": )("(?:[^"\\]|\\.)*")', re.DOTALL)


def schema_with_needs_pattern(schema_text: str, pattern: str) -> str:
    """The registry schema's text with its `needs` pattern replaced, the rest untouched."""
    text, count = _NEEDS_PATTERN.subn(
        lambda match: match.group(1) + json.dumps(pattern), schema_text, count=1)
    if count != 1:
        raise ValueError("the registry schema has no `needs` item pattern")
    return text


def main(argv: list[str]) -> int:
    """Rewrite the `needs` pattern of the registry schema at argv[0] (default:
    spec/registry.schema.json, from the checkout's root)."""
    from jobconform.spec.areas import BUILTIN_AREAS

    path = Path(argv[0] if argv else "spec/registry.schema.json")
    pattern = needs_pattern({area.name for area in BUILTIN_AREAS})
    path.write_text(schema_with_needs_pattern(path.read_text(encoding="utf-8"), pattern),
                    encoding="utf-8")
    print(f"{path}: needs pattern of {pattern.count('|') + 1} alternatives")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
