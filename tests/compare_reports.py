"""Report documents for the comparison tests, made through the real report writer.

Each report comes from a RunSummary over the real registry, so it is valid against the
published schema and its verdicts are the ones `jobconform run` would give.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

from jobconform.conformance.expectations import ExpectedFailure
from jobconform.conformance.report import NOT_RUN, RunSummary, write_json
from jobconform.conformance.runner import CaseResult, SuiteRun
from jobconform.spec import Registry


def write_report(folder: Path, registry: Registry, backend: str, *,
                 capabilities: Iterable[str] | None = None,
                 failing: Mapping[str, str] | None = None,
                 expected: Mapping[str, str] | None = None,
                 untested: Iterable[str] = (), unreached: Iterable[str] = (),
                 seed: int = 0, areas: Iterable[str] | None = None,
                 expected_file: Path | None = None) -> Path:
    """A report where every claimed requirement has a passing Behave case and one machine
    case, except: `failing` (ID -> divergence message, blamed by a failed machine case
    with a trace written beside the report), `expected` (ID -> reason, failed and listed),
    `untested` (no case at all) and `unreached` (Behave passes them, the machine never
    reached them: blocked in its column when a machine case fails). `areas` is a run's
    `--area` selection: the cases of the other areas did not run. `expected_file` is the
    deviation list the run was given (--expected-failures)."""
    failing = dict(failing or {})
    expected = dict(expected or {})
    # By default the backend claims every area and every capability a requirement needs.
    claims = frozenset(capabilities if capabilities is not None
                       else {r.area for r in registry.requirements}.union(
                           *(r.needs for r in registry.requirements)))
    skip = set(untested) | set(failing) | set(expected)
    selected = (None if areas is None else
                frozenset(r.id for r in registry.requirements if r.area in set(areas)))
    claimed = [r.id for r in registry.requirements if r.area in claims
               and (selected is None or r.id in selected)]
    behave = [CaseResult("behave", f"scenario {rid}", (rid,), True)
              for rid in claimed if rid not in skip]
    machine_cases = [CaseResult("hypothesis", "all machines", tuple(
        rid for rid in claimed if rid not in skip | set(unreached)), True)]
    folder.mkdir(parents=True, exist_ok=True)
    for rid, message in {**failing, **expected}.items():
        trace = folder / "traces" / f"machine-{rid.lower()}.json"
        trace.parent.mkdir(parents=True, exist_ok=True)
        trace.write_text(json.dumps({"requirement": rid}), encoding="utf-8")
        text = message if rid in failing else f"divergence on {rid}"
        full = f"{text}\nrequirement(s): {rid}\nexpected 'x', got 'y'"
        behave.append(CaseResult("behave", f"scenario {rid}", (rid,), False, full, (rid,)))
        machine_cases.append(CaseResult("hypothesis", f"machine {rid}", (rid,), False, full,
                                        (rid,), (str(trace),)))
    summary = RunSummary(
        backend, registry.profile("canonical").name, claims, registry.version, seed,
        [SuiteRun("behave", 0.1, behave), SuiteRun("hypothesis", 0.2, machine_cases)],
        {rid: ExpectedFailure(rid, reason, None) for rid, reason in expected.items()},
        selected, unselected=NOT_RUN,
        expected_file=None if expected_file is None else str(expected_file))
    path = folder / "report.json"
    write_json(path, summary, registry)
    return path
