"""Verdicts per requirement and suite, and the reports: console table, JSON, JUnit XML.

A requirement's verdict in one suite:
- "pass": at least one case covers it and none of them failed, and no divergence named it;
- "fail": a case covering it failed, or a divergence named it;
- "untested": the backend claims its area but no case in the suite covers it (a gap in
  the kit, so the run fails);
- "not claimed": the backend does not claim the requirement's area; never a pass;
- "n/a": the requirement does not apply to the run's profile (and no case failed on it).
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from jobconform.conformance.runner import SuiteRun
from jobconform.spec import Registry

PASS, FAIL, UNTESTED, NOT_CLAIMED, NOT_APPLICABLE = (
    "pass", "fail", "untested", "not claimed", "n/a")
FAILING = frozenset({FAIL, UNTESTED})


@dataclass(frozen=True)
class RunSummary:
    backend: str
    profile: str
    capabilities: frozenset[str]
    spec_version: str
    seed: int
    suites: Sequence[SuiteRun]

    def verdicts(self, registry: Registry) -> dict[str, dict[str, str]]:
        table: dict[str, dict[str, str]] = {}
        for requirement in registry.requirements:
            row = {}
            for run in self.suites:
                if requirement.area not in self.capabilities:
                    row[run.suite] = NOT_CLAIMED
                    continue
                covering = [c for c in run.cases if requirement.id in c.requirements]
                blamed = any(requirement.id in c.blamed for c in run.cases)
                if blamed or any(not c.passed for c in covering):
                    row[run.suite] = FAIL
                elif self.profile not in requirement.profiles:
                    row[run.suite] = NOT_APPLICABLE
                elif covering:
                    row[run.suite] = PASS
                else:
                    row[run.suite] = UNTESTED
            table[requirement.id] = row
        return table

    def unknown_tags(self, registry: Registry) -> list[str]:
        """Cases tagged with a requirement ID the spec does not define (a stale test)."""
        known = set(registry.ids())
        return [f"{run.suite}: {case.name} names unknown {rid}"
                for run in self.suites for case in run.cases
                for rid in case.requirements if rid not in known]

    def failed(self, registry: Registry) -> bool:
        if self.unknown_tags(registry):
            return True
        broken_cases = any(not c.passed for run in self.suites for c in run.cases)
        bad_verdicts = any(v in FAILING for row in self.verdicts(registry).values()
                           for v in row.values())
        return broken_cases or bad_verdicts


def _counts(verdicts: dict[str, dict[str, str]]) -> dict[str, int]:
    counts = {PASS: 0, FAIL: 0, UNTESTED: 0, NOT_CLAIMED: 0, NOT_APPLICABLE: 0}
    for row in verdicts.values():
        values = set(row.values())
        if FAIL in values:
            counts[FAIL] += 1
        elif UNTESTED in values:
            counts[UNTESTED] += 1
        elif values == {NOT_CLAIMED}:
            counts[NOT_CLAIMED] += 1
        elif values == {NOT_APPLICABLE}:
            counts[NOT_APPLICABLE] += 1
        else:
            counts[PASS] += 1
    return counts


def console_table(summary: RunSummary, registry: Registry) -> str:
    verdicts = summary.verdicts(registry)
    suites = [run.suite for run in summary.suites]
    title_width = 46
    header = f"{'requirement':<12}{'level':<7}{'title':<{title_width}}" + "".join(
        f"{s:<13}" for s in suites)
    lines = [
        f"jobconform {registry.version}: backend {summary.backend!r}, profile"
        f" {summary.profile!r}, seed {summary.seed}",
        header,
        "-" * len(header),
    ]
    for requirement in registry.requirements:
        title = requirement.title[: title_width - 2]
        cells = "".join(f"{verdicts[requirement.id][s]:<13}" for s in suites)
        lines.append(f"{requirement.id:<12}{requirement.level:<7}{title:<{title_width}}{cells}")
    lines.append("")
    for run in summary.suites:
        failed = [c for c in run.cases if not c.passed]
        steps = f", {run.steps} steps" if run.steps else ""
        lines.append(f"{run.suite}: {len(run.cases)} cases, {len(failed)} failed,"
                     f" {run.seconds:.1f} s{steps}")
        for case in failed[:5]:
            lines.append(f"  FAILED {case.name}")
            lines += [f"    {line}" for line in case.message.strip().splitlines()[:25]]
    for problem in summary.unknown_tags(registry):
        lines.append(f"  STALE TAG {problem}")
    counts = _counts(verdicts)
    lines.append("")
    lines.append(f"requirements: {counts[PASS]} passed, {counts[FAIL]} failed,"
                 f" {counts[UNTESTED]} untested, {counts[NOT_CLAIMED]} not claimed,"
                 f" {counts[NOT_APPLICABLE]} not applicable")
    return "\n".join(lines)


def to_json(summary: RunSummary, registry: Registry) -> dict[str, object]:
    verdicts = summary.verdicts(registry)
    return {
        "spec_version": registry.version,
        "backend": summary.backend,
        "profile": summary.profile,
        "capabilities": sorted(summary.capabilities),
        "seed": summary.seed,
        "verdict": "fail" if summary.failed(registry) else "pass",
        "counts": _counts(verdicts),
        "unknown_tags": summary.unknown_tags(registry),
        "requirements": {
            r.id: {"level": r.level, "title": r.title, "area": r.area,
                   "suites": verdicts[r.id]}
            for r in registry.requirements
        },
        "suites": [
            {"suite": run.suite, "seconds": round(run.seconds, 3), "steps": run.steps,
             "cases": [asdict(case) for case in run.cases]}
            for run in summary.suites
        ],
    }


def write_json(path: Path, summary: RunSummary, registry: Registry) -> None:
    path.write_text(json.dumps(to_json(summary, registry), indent=2) + "\n", encoding="utf-8")


def write_junit(path: Path, runs: Iterable[SuiteRun]) -> None:
    root = ET.Element("testsuites", name="jobconform")
    for run in runs:
        failures = sum(not case.passed for case in run.cases)
        suite = ET.SubElement(root, "testsuite", name=run.suite, tests=str(len(run.cases)),
                              failures=str(failures), time=f"{run.seconds:.3f}")
        for case in run.cases:
            element = ET.SubElement(suite, "testcase", classname=f"jobconform.{run.suite}",
                                    name=case.name)
            properties = ET.SubElement(element, "properties")
            for requirement_id in case.requirements:
                ET.SubElement(properties, "property", name="requirement", value=requirement_id)
            if not case.passed:
                failure = ET.SubElement(element, "failure",
                                        message=case.message.strip().splitlines()[0]
                                        if case.message.strip() else "failed")
                failure.text = case.message
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
