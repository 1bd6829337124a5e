"""Verdicts per requirement and suite, and the reports: console table, JSON, JUnit XML and
a Markdown summary for CI.

A requirement's verdict in one suite:
- "pass": at least one case covers it and none of them failed, and no divergence named it;
- "fail": a case covering it failed, or a divergence named it;
- "expected failure": it fails, and the run's expected-failures file lists it (with a
  reason); it does not fail the run;
- "blocked": every case covering it stopped at a listed deviation of another requirement
  (or, for a Hypothesis machine, the search stopped there before reaching it), so it was
  not checked; not a pass, and not a failure of the run;
- "not rerun": a rerun of failed requirements left it out (and nothing failed on it);
- "untested": the backend claims its area but no case in the suite covers it (a gap in
  the kit, so the run fails);
- "not claimed": the backend does not claim the requirement's area; never a pass;
- "n/a": the requirement does not apply to the run's profile (and no case failed on it).

A machine can also end with a verdict of the backend's own, "nondeterministic backend":
Hypothesis replayed an example and the backend answered the same commands differently
(a race). The case blames no requirement (what it covers is "blocked" in its column unless
another case checked it), carries both runs in its message and in a trace file, is marked
`"nondeterministic": true` in the JSON report, is listed under the Markdown's problems and
shown as NONDETERMINISTIC BACKEND in the console, and fails the run: no deviation file can
list it. A case in which the adapter hung (or was not tried because an earlier call of the
same area hung) is the adapter's verdict in the same way: "hung": true, ADAPTER HUNG.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

from jobconform.conformance.applicability import unclaimed
from jobconform.conformance.expectations import ExpectedFailure
from jobconform.conformance.runner import CaseResult, SuiteRun
from jobconform.conformance.schema_files import first_problem
from jobconform.spec import Registry

PASS, FAIL, UNTESTED, NOT_CLAIMED, NOT_APPLICABLE = (
    "pass", "fail", "untested", "not claimed", "n/a")
EXPECTED_FAILURE, BLOCKED, NOT_RERUN = "expected failure", "blocked", "not rerun"
NOT_RUN = "not run"
VERDICTS = (PASS, FAIL, EXPECTED_FAILURE, BLOCKED, UNTESTED, NOT_CLAIMED, NOT_APPLICABLE,
            NOT_RERUN, NOT_RUN)
FAILING = frozenset({FAIL, UNTESTED})
REPORT_SCHEMA = "report.schema.json"
REPORT_FORMAT = "jobconform-report/1"


@dataclass(frozen=True)
class RunSummary:
    backend: str
    profile: str
    capabilities: frozenset[str]
    spec_version: str
    seed: int
    suites: Sequence[SuiteRun]
    # Known deviations of this runtime, by requirement ID (--expected-failures).
    expected: Mapping[str, ExpectedFailure] = field(default_factory=dict)
    # A rerun checks only these requirements (--rerun-failed); None: all of them.
    selected: frozenset[str] | None = None
    # A campaign over several seeds (run --seeds, --shard; merge): {"seeds": [...],
    # "shards": ["1/4", ...]}, written to the report as "campaign".
    campaign: Mapping[str, object] | None = None
    # What the backend says the reader must know, such as health counters the kit derived
    # for a runtime that keeps none (its `report_notes`, jobconform.bridges).
    notes: tuple[str, ...] = ()
    # The verdict of a requirement left out of `selected`: "not rerun" for a rerun of
    # failed requirements, "not run" for --area / --requirement.
    unselected: str = "not rerun"
    # The expected-failures file the run was given, as given (--expected-failures): a run
    # with a deviation list of its own is a runtime's validation, which the published
    # compatibility page collects (jobconform publish), and the page links its reasons there.
    expected_file: str | None = None
    # The third-party libraries the backend wraps, by distribution name, with the version
    # installed for the run (`library_versions`): the compatibility page says what was
    # validated, not only that something was.
    libraries: Mapping[str, str] = field(default_factory=dict)

    def verdicts(self, registry: Registry) -> dict[str, dict[str, str]]:
        profile_areas = (registry.profile(self.profile).areas
                         if self.profile in registry.profiles else frozenset())
        table: dict[str, dict[str, str]] = {}
        for requirement in registry.requirements:
            row = {}
            for run in self.suites:
                rid = requirement.id
                if (requirement.area not in profile_areas
                        or self.profile not in requirement.profiles):
                    row[run.suite] = NOT_APPLICABLE  # the profile does not have it
                    continue
                if unclaimed(requirement, self.capabilities) is not None:
                    row[run.suite] = NOT_CLAIMED
                    continue
                failed = [c for c in run.cases if not c.passed]
                # It failed itself: it is a divergence's primary, or a case covering it
                # failed without naming anything. Requirements only "also involved" in a
                # divergence are not failed by it, nor those of a machine whose backend
                # answered a replay differently (that verdict is the backend's).
                direct = (any(rid in c.primaries for c in failed)
                          or any(not c.blamed and not c.backend_verdict
                                 and rid in c.requirements for c in failed))
                # Cases that checked it to their end: passed, ran past listed deviations
                # only, or (a machine) exercised it with passing observations that repeat.
                checked = [c for c in run.cases if rid in c.requirements
                           and not c.backend_verdict
                           and (c.passed or c.completed or c.suite == "hypothesis")]
                if direct:
                    listed = rid in self.expected and self.expected[rid].applies_to(run.suite)
                    row[run.suite] = EXPECTED_FAILURE if listed else FAIL
                elif self.selected is not None and rid not in self.selected:
                    row[run.suite] = self.unselected
                elif checked:
                    row[run.suite] = PASS
                elif any(rid in c.requirements for c in failed) or (
                        run.suite == "hypothesis" and failed):
                    # Every case covering it stopped at another requirement's divergence
                    # before reaching it (a machine: before exercising it).
                    row[run.suite] = BLOCKED
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

    def expectation_problems(self, registry: Registry) -> list[str]:
        """Entries of the expected-failures file that no longer tell the truth."""
        known = set(registry.ids())
        verdicts = self.verdicts(registry)
        problems = []
        for rid, entry in sorted(self.expected.items()):
            if rid not in known:
                problems.append(f"{rid}: stale entry, the spec {registry.version} has no such"
                                f" requirement (reason given: {entry.reason!r}); fix the ID"
                                " or remove the entry")
            elif self.selected is not None and rid not in self.selected:
                continue  # not rerun, so not checked this time
            elif not any(entry.applies_to(run.suite) for run in self.suites):
                continue  # none of the suites it names ran
            elif EXPECTED_FAILURE not in verdicts[rid].values():
                shown = ", ".join(f"{suite} {v}" for suite, v in verdicts[rid].items())
                problems.append(f"{rid}: unexpected pass, listed as an expected failure but no"
                                f" suite fails it ({shown}); remove the entry")
        return problems

    def excused(self, case: CaseResult) -> bool:
        """A failed case explained by the listed deviations alone: what it blamed (or, when
        it blamed nothing, what it covers) is all in the expected-failures file."""
        if case.backend_verdict:
            return False  # no deviation file can list a backend's nondeterminism or hang
        named = set(case.primaries or case.requirements)
        listed = {rid for rid, entry in self.expected.items() if entry.applies_to(case.suite)}
        return bool(named) and named <= listed

    def unexcused_cases(self) -> list[CaseResult]:
        """Failed cases not explained by the expected failures alone."""
        return [c for run in self.suites for c in run.cases
                if not c.passed and not self.excused(c)]

    def nondeterministic_cases(self) -> list[CaseResult]:
        """Machines whose backend answered a replayed example differently."""
        return [c for run in self.suites for c in run.cases if c.nondeterministic]

    def hung_cases(self) -> list[CaseResult]:
        """Cases in which the adapter hung, or that were not tried after it had."""
        return [c for run in self.suites for c in run.cases if c.hung]

    def nothing_checked(self) -> bool:
        """No case ran at all (a backend that claims nothing): a run that cannot fail."""
        return not any(run.cases for run in self.suites)

    def failed(self, registry: Registry) -> bool:
        if self.unknown_tags(registry) or self.expectation_problems(registry):
            return True
        if self.nothing_checked():
            return True
        bad_verdicts = any(v in FAILING for row in self.verdicts(registry).values()
                           for v in row.values())
        return bool(self.unexcused_cases()) or bad_verdicts


def _counts(verdicts: dict[str, dict[str, str]]) -> dict[str, int]:
    """One overall verdict per requirement, counted: a failure in any suite wins; a pass
    in one suite outweighs "blocked" (not checked) in another."""
    counts = dict.fromkeys(VERDICTS, 0)
    for row in verdicts.values():
        values = set(row.values())
        for verdict in (FAIL, UNTESTED, EXPECTED_FAILURE, PASS, BLOCKED):
            if verdict in values:
                counts[verdict] += 1
                break
        else:
            for verdict in (NOT_CLAIMED, NOT_APPLICABLE, NOT_RERUN, NOT_RUN):
                if values == {verdict}:
                    counts[verdict] += 1
                    break
            else:
                counts[PASS] += 1
    return counts


# Verdicts that the fold over suites can hide: a requirement blocked or untested in one
# suite but passed in another counts once, as a pass. Each suite's own count of them is
# shown beside the totals, so a machine that stopped early cannot pass unseen.
PER_SUITE = (BLOCKED, UNTESTED)


def suite_counts(verdicts: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, int]]:
    """How many requirements are blocked and untested in each suite's own column."""
    counts: dict[str, dict[str, int]] = {}
    for row in verdicts.values():
        for suite, verdict in row.items():
            per_verdict = counts.setdefault(suite, dict.fromkeys(PER_SUITE, 0))
            if verdict in per_verdict:
                per_verdict[verdict] += 1
    return counts


def per_suite_text(counts: Mapping[str, Mapping[str, int]], verdict: str) -> str:
    """`hypothesis 17, robot 2`: the suites with requirements of that verdict ("" if none)."""
    return ", ".join(f"{suite} {by_verdict[verdict]}" for suite, by_verdict in counts.items()
                     if by_verdict.get(verdict))


def counts_line(counts: Mapping[str, int],
                per_suite: Mapping[str, Mapping[str, int]] | None = None) -> str:
    parts = [f"{counts[PASS]} passed", f"{counts[FAIL]} failed"]
    if counts[EXPECTED_FAILURE]:
        parts.append(f"{counts[EXPECTED_FAILURE]} expected failures")
    if counts[BLOCKED]:
        parts.append(f"{counts[BLOCKED]} blocked")
    parts += [f"{counts[UNTESTED]} untested", f"{counts[NOT_CLAIMED]} not claimed",
              f"{counts[NOT_APPLICABLE]} not applicable"]
    if counts[NOT_RERUN]:
        parts.append(f"{counts[NOT_RERUN]} not rerun")
    if counts[NOT_RUN]:
        parts.append(f"{counts[NOT_RUN]} not run")
    line = "requirements: " + ", ".join(parts)
    in_suites = [f"{verdict} in {text}" for verdict in PER_SUITE
                 if (text := per_suite_text(per_suite or {}, verdict))]
    return line + ("; per suite: " + "; ".join(in_suites) if in_suites else "")


def console_table(summary: RunSummary, registry: Registry) -> str:
    verdicts = summary.verdicts(registry)
    suites = [run.suite for run in summary.suites]
    title_width = 46
    header = f"{'requirement':<12}{'level':<7}{'title':<{title_width}}" + "".join(
        f"{s:<18}" for s in suites)
    lines = [
        f"jobconform {registry.version}: backend {summary.backend!r}, profile"
        f" {summary.profile!r}, seed {summary.seed}",
        header,
        "-" * len(header),
    ]
    for requirement in registry.requirements:
        title = requirement.title[: title_width - 2]
        cells = "".join(f"{verdicts[requirement.id][s]:<18}" for s in suites)
        lines.append(f"{requirement.id:<12}{requirement.level:<7}{title:<{title_width}}{cells}")
    lines.append("")
    for run in summary.suites:
        failed = [c for c in run.cases if not c.passed]
        steps = f", {run.steps} steps" if run.steps else ""
        lines.append(f"{run.suite}: {len(run.cases)} cases, {len(failed)} failed,"
                     f" {run.seconds:.1f} s{steps}")
        for case in failed[:5]:
            primary = f" [{', '.join(case.primaries)}]" if case.primaries else ""
            status = ("NONDETERMINISTIC BACKEND" if case.nondeterministic
                      else "ADAPTER HUNG" if case.hung else "FAILED")
            lines.append(f"  {status}{primary} {case.name}")
            # Both runs of a nondeterministic backend are shown whole: they are its trace.
            shown = None if case.nondeterministic else 25
            lines += [f"    {line}" for line in case.message.strip().splitlines()[:shown]]
            lines += [f"    reproducer: {path}" for path in case.artifacts]
    for problem in summary.unknown_tags(registry):
        lines.append(f"  STALE TAG {problem}")
    lines += [f"  NOTE {note}" for note in summary.notes]
    for rid, entry in sorted(summary.expected.items()):
        if rid in verdicts and EXPECTED_FAILURE in verdicts[rid].values():
            link = f" ({entry.link})" if entry.link else ""
            scope = "" if entry.suites is None else f" [{', '.join(sorted(entry.suites))} only]"
            lines.append(f"  EXPECTED FAILURE {rid}{scope}: {entry.reason}{link}")
    for problem in summary.expectation_problems(registry):
        lines.append(f"  EXPECTATION WRONG {problem}")
    if summary.nothing_checked():
        lines.append("  NOTHING CHECKED: no case ran; claim an area in the backend's"
                     " `capabilities` (see `jobconform list requirements`)")
    lines.append("")
    lines.append(counts_line(_counts(verdicts), suite_counts(verdicts)))
    return "\n".join(lines)


def _case_json(case: CaseResult) -> dict[str, object]:
    # JSON has arrays, not tuples: the document must be the same before and after a dump.
    document: dict[str, object] = {key: list(value) if isinstance(value, tuple) else value
                                   for key, value in asdict(case).items()}
    document["primary"] = list(case.primaries)
    return document


NOT_INSTALLED = "not installed"


def library_versions(backend: object) -> dict[str, str]:
    """The installed version of each distribution the backend names in its `libraries`
    attribute (a tuple of names, as pip knows them), "not installed" for a name pip does
    not know; or, when `libraries` maps names to versions, those as the backend says.
    Without the attribute, the backend's `name` where it is an installed distribution
    (an adapter named "rq" wraps RQ: the examples' adapters are), else none."""
    names = getattr(backend, "libraries", None)
    if isinstance(names, Mapping):
        # Versions the backend found itself (a process child's, from its handshake).
        if not all(isinstance(n, str) and isinstance(v, str) for n, v in names.items()):
            raise ValueError(f"backend {getattr(backend, 'name', backend)!r}: `libraries` as a"
                             f" mapping must map names to version strings, not {names!r}")
        return dict(names)
    if names is None:
        name = getattr(backend, "name", None)
        return {name: metadata.version(name)} if (
            isinstance(name, str) and name != "jobconform" and _installed(name)) else {}
    if isinstance(names, str) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"backend {getattr(backend, 'name', backend)!r}: `libraries` must be a"
                         f" tuple of distribution names, not {names!r}")
    versions: dict[str, str] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = NOT_INSTALLED
    return versions


def _installed(name: str) -> bool:
    try:
        metadata.version(name)
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return True


def to_json(summary: RunSummary, registry: Registry) -> dict[str, object]:
    """The report as data; it matches conformance/schemas/report.schema.json."""
    verdicts = summary.verdicts(registry)
    return {
        "format": REPORT_FORMAT,
        "spec_version": registry.version,
        "backend": summary.backend,
        "profile": summary.profile,
        "capabilities": sorted(summary.capabilities),
        "seed": summary.seed,
        "verdict": "fail" if summary.failed(registry) else "pass",
        "counts": _counts(verdicts),
        "suite_counts": suite_counts(verdicts),
        "unknown_tags": summary.unknown_tags(registry),
        "expected_failures": {rid: {"reason": e.reason, "link": e.link,
                                    **({} if e.suites is None else {"suites": sorted(e.suites)})}
                              for rid, e in sorted(summary.expected.items())},
        "expectation_problems": summary.expectation_problems(registry),
        "notes": list(summary.notes),
        "rerun_of": sorted(summary.selected) if summary.selected is not None else None,
        "requirements": {
            r.id: {"level": r.level, "title": r.title, "area": r.area,
                   "suites": verdicts[r.id]}
            for r in registry.requirements
        },
        "suites": [
            {"suite": run.suite, "seconds": round(run.seconds, 3), "steps": run.steps,
             "cases": [_case_json(case) for case in run.cases]}
            for run in summary.suites
        ],
        **({"campaign": dict(summary.campaign)} if summary.campaign is not None else {}),
        **({"expected_failures_file": summary.expected_file}
           if summary.expected_file is not None else {}),
        **({"libraries": dict(summary.libraries)} if summary.libraries else {}),
    }


class ReportError(ValueError):
    """A JSON report cannot be read or does not match the published schema."""


def validate_report(document: object, source: str = "report") -> None:
    """Check a report against conformance/schemas/report.schema.json.

    Raises:
        ReportError: the first mismatch, with where it is.
    """
    problem = first_problem(document, REPORT_SCHEMA)
    if problem is not None:
        raise ReportError(f"{source} does not match {REPORT_SCHEMA} {problem}")


def read_report(path: Path) -> dict[str, object]:
    """Load and validate a JSON report written by `jobconform run`.

    Raises:
        ReportError: unreadable, not UTF-8, not JSON, or off-schema.
    """
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ReportError(f"cannot read the report {path}: {error}") from error
    except UnicodeDecodeError as error:  # a binary file: no report.json is anything but UTF-8
        raise ReportError(f"{path} is not a report.json: not UTF-8 text ({error.reason} at"
                          f" byte {error.start})") from error
    validate_report(document, str(path))
    assert isinstance(document, dict)
    return document


def write_json(path: Path, summary: RunSummary, registry: Registry) -> None:
    document = to_json(summary, registry)
    validate_report(document, "the report being written")  # the schema is a promise
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


_MARK = {PASS: "✅ pass", FAIL: "❌ fail", EXPECTED_FAILURE: "⚠️ expected failure",
         BLOCKED: "⏸️ blocked", UNTESTED: "❓ untested", NOT_CLAIMED: "⬜ not claimed",
         NOT_APPLICABLE: "n/a", NOT_RERUN: "not rerun", NOT_RUN: "not run"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def to_markdown(summary: RunSummary, registry: Registry) -> str:
    """A summary for a CI job page (GitHub's step summary): verdict, counts, failures first.

    Requirements that all pass are folded into one collapsed table, so the page shows
    what needs attention without scrolling.
    """
    verdicts = summary.verdicts(registry)
    suites = [run.suite for run in summary.suites]
    failed = summary.failed(registry)
    lines = [
        f"## jobconform: {'❌ FAIL' if failed else '✅ PASS'} — backend `{summary.backend}`,"
        f" profile `{summary.profile}`",
        "",
        f"Spec {registry.version}, seed {summary.seed}."
        f" {counts_line(_counts(verdicts), suite_counts(verdicts))}.",
        "",
        *[f"> Note: {_cell(note)}\n" for note in summary.notes],
    ]
    header = ["requirement", "level", "title", *suites]
    def table(requirement_ids: list[str]) -> list[str]:
        rows = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for rid in requirement_ids:
            r = registry.requirement(rid)
            cells = [rid, r.level, _cell(r.title), *(_MARK[verdicts[rid][s]] for s in suites)]
            rows.append("| " + " | ".join(cells) + " |")
        return rows
    attention = [rid for rid, row in verdicts.items() if set(row.values()) - {PASS}]
    fine = [rid for rid in verdicts if rid not in attention]
    if attention:
        lines += ["### Needs attention", "", *table(attention), ""]
    if fine:
        lines += ["<details><summary>" + f"{len(fine)} requirements pass in every suite"
                  + "</summary>", "", *table(fine), "", "</details>", ""]
    problems = (summary.unknown_tags(registry) + summary.expectation_problems(registry))
    problems += [f"nondeterministic backend: {case.suite}: {case.name} — a replay of the same"
                 " commands behaved differently (both runs below)"
                 for case in summary.nondeterministic_cases()]
    hung = summary.hung_cases()
    if hung:
        problems.append(f"adapter hung: {hung[0].suite}: {hung[0].name} — the first of"
                        f" {len(hung)} case(s) the adapter hung in or that were not tried"
                        " after it had (its message holds the stacks)")
    if summary.nothing_checked():
        problems.append("nothing checked: no case ran, the backend claims no area")
    if problems:
        lines += ["### Problems", "", *(f"- {_cell(p)}" for p in problems), ""]
    listed = [(rid, e) for rid, e in sorted(summary.expected.items())
              if rid in verdicts and EXPECTED_FAILURE in verdicts[rid].values()]
    if listed:
        lines += ["### Expected failures", ""]
        lines += [f"- **{rid}**"
                  + ("" if e.suites is None else f" ({', '.join(sorted(e.suites))} only)")
                  + f": {_cell(e.reason)}" + (f" ([link]({e.link}))" if e.link else "")
                  for rid, e in listed]
        lines.append("")
    broken = summary.unexcused_cases()
    if broken:
        lines += ["### Failed cases", ""]
        for case in broken[:10]:
            primary = f" — {', '.join(case.primaries)}" if case.primaries else ""
            if case.nondeterministic:
                primary = " — nondeterministic backend"
            elif case.hung:
                primary = " — adapter hung"
            lines += [f"<details><summary>{case.suite}: {_cell(case.name)}{primary}</summary>",
                      "",
                      "```", case.message.strip(), "```"]
            lines += [f"Reproducer: `{path}`" for path in case.artifacts]
            lines += ["", "</details>", ""]
    return "\n".join(lines) + "\n"


def write_junit(path: Path, summary: RunSummary) -> None:
    """JUnit XML, one test case per case, each carrying its requirement IDs as properties.

    A case that failed only on listed deviations is written as skipped, with the reasons:
    CI test views then agree with the run's verdict.
    """
    root = ET.Element("testsuites", name="jobconform")
    for run in summary.suites:
        excused = [case for case in run.cases if not case.passed and summary.excused(case)]
        failures = sum(not case.passed for case in run.cases) - len(excused)
        suite = ET.SubElement(root, "testsuite", name=run.suite, tests=str(len(run.cases)),
                              failures=str(failures), skipped=str(len(excused)),
                              time=f"{run.seconds:.3f}")
        for case in run.cases:
            element = ET.SubElement(suite, "testcase", classname=f"jobconform.{run.suite}",
                                    name=case.name)
            properties = ET.SubElement(element, "properties")
            for requirement_id in case.requirements:
                ET.SubElement(properties, "property", name="requirement", value=requirement_id)
            if case in excused:
                named = sorted(set(case.primaries or case.requirements))
                reasons = "; ".join(f"{rid}: {summary.expected[rid].reason}" for rid in named)
                skipped = ET.SubElement(element, "skipped", message=f"expected failure ({reasons})")
                skipped.text = case.message
            elif not case.passed:
                first = case.message.strip().splitlines()[0] if case.message.strip() else "failed"
                primary = f"{', '.join(case.primaries)}: " if case.primaries else ""
                failure = ET.SubElement(element, "failure", message=primary + first)
                failure.text = case.message
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


def write_reports(report_dir: Path, summary: RunSummary, registry: Registry,
                  markdown_path: Path | None = None) -> list[Path]:
    """report.json and junit.xml in `report_dir`, the Markdown summary at `markdown_path`
    if given and appended to $GITHUB_STEP_SUMMARY where that is set; the files written."""
    report_dir.mkdir(parents=True, exist_ok=True)
    write_json(report_dir / "report.json", summary, registry)
    write_junit(report_dir / "junit.xml", summary)
    markdown = to_markdown(summary, registry)
    written = [report_dir / "report.json", report_dir / "junit.xml"]
    if markdown_path is not None:
        markdown_path.parent.mkdir(parents=True, exist_ok=True)
        markdown_path.write_text(markdown, encoding="utf-8")
        written.append(markdown_path)
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as stream:
            stream.write(markdown)
    return written
