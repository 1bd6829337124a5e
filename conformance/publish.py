"""The published compatibility page: every validated library side by side, kept in the
repository (docs/compatibility/) and checked against the libraries' current reports.

A library's validation is a run made with a deviation list of its own
(`jobconform run ... --expected-failures FILE`, which the report records as
`expected_failures_file`). `jobconform publish REPORTS` takes every such report under the
folder REPORTS, one folder per library (`reports/huey/report.json` is the library "huey"),
so a new example is picked up by its tox environment alone. A library checked in further
runs of its own (another adapter module, other areas) keeps each in a subfolder of its
folder (`reports/rq/abandoned/report.json`, with a deviation list of its own): its column joins
them, each requirement with the verdicts of the runs that checked it. It writes:

- `index.html`, `README.md` and `badges/`: the compare page of those reports
  (conformance/compare.py), one column per library;
- `findings/<library>-<ID>.md`: for each listed deviation, what the spec says, what the
  library does (the deviation list's reason and its reference), the divergence and the
  shortest sequence of commands in the report that shows it, ready to be filed upstream;
- `verdicts.json`: the verdicts alone (library x requirement, the runs' verdicts, the
  listed deviations and their reasons), which `--check` compares.

Nothing written depends on when or where the runs were made (no timings, no dates, no
absolute paths), so the same reports publish the same bytes. `--check DIR` publishes into
a temporary folder and fails, saying how to refresh, when the verdicts there differ from
the committed DIR's; it ignores what may change without a verdict changing (messages).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import click

from jobconform.conformance.compare import (
    MARKS,
    Matrix,
    listed_reason,
    markdown_cell,
    matrix_of,
    overall_verdict,
    to_html,
    to_markdown,
    trace_on_disk,
    write_badges,
)
from jobconform.conformance.report import EXPECTED_FAILURE, FAIL, NOT_RUN, ReportError, read_report
from jobconform.spec import Registry, load_registry

VERDICTS_FILE = "verdicts.json"
TITLE = "jobconform: job libraries side by side"
REFRESH = ("run the examples' tox environments (tox -e example-NAME, each writes"
           " reports/NAME/report.json), then `jobconform publish reports --output-dir"
           " docs/compatibility` and commit docs/compatibility")
# A divergence in a report's case message: its primary requirement, what differed, and
# the commands that led there (harness.py writes them in this layout).
_DIVERGENCE = re.compile(r"^backend diverges from the spec after step \d+", re.MULTILINE)
_PRIMARY = re.compile(r"^\s*requirement\(s\): ([A-Z]{2,4}-\d{3})\b", re.MULTILINE)
_FIELD = re.compile(r"^\s*(what|expected|actual):\s*(.*)$", re.MULTILINE)
_COMMAND = re.compile(r"^\s+\d+\. (.*)$")


class PublishError(ValueError):
    """The reports cannot make a compatibility page (none found, or two of one name)."""


@dataclass(frozen=True)
class Library:
    """One run of a library's validation: its report, made with its own deviation list."""

    name: str  # the library's folder under REPORTS (the run's report may be in a subfolder)
    report: Path
    document: Mapping[str, Any]
    deviations_file: Path


@dataclass(frozen=True)
class Reproducer:
    """The shortest divergence in a report that shows one listed deviation."""

    case: str  # "behave: <scenario>"
    what: str
    expected: str
    actual: str
    commands: tuple[str, ...]
    traces: tuple[Path, ...]  # trace files the case wrote (a machine that shrank), if any


@dataclass(frozen=True)
class Finding:
    library: Library
    requirement: str
    reason: str
    link: str | None
    reproducer: Reproducer | None

    @property
    def file_name(self) -> str:
        return f"{self.library.name}-{self.requirement}.md"


def find_libraries(folder: Path) -> list[Library]:
    """Every report under `folder` made with a deviation list, named by its library's
    folder (the first under `folder`): the library's own report first, then its further
    runs in their subfolders' order.

    Raises:
        ReportError: a report is unreadable or off-schema.
        PublishError: none was made with a deviation list, or two share a name.
    """
    libraries = []
    for path in sorted(folder.rglob("report.json")):
        document = read_report(path)
        listed = document.get("expected_failures_file")
        if not isinstance(listed, str):
            continue  # one of the kit's own runs, or a run without a deviation list
        name = path.parent.relative_to(folder).parts[0]
        libraries.append(Library(name, path, document, Path(listed)))
    if not libraries:
        raise PublishError(f"no report under {folder} was made with --expected-failures:"
                           f" {REFRESH}")
    # The library's own report first, wherever a subfolder's name sorts.
    return sorted(libraries, key=lambda run: (run.name, run.report.parent != folder / run.name))


def _stronger(kept: str | None, other: str) -> str:
    """One suite's verdict of a requirement over two runs: a run that left it out (--area)
    yields to the other, otherwise the stronger verdict wins (a failure over a pass)."""
    if kept is None or kept == NOT_RUN:
        return other
    if other == NOT_RUN:
        return kept
    return overall_verdict({"kept": kept, "other": other})


def joined(runs: Sequence[Library]) -> dict[str, Any]:
    """One report document for a library checked in several runs: the first run's, with
    every requirement's verdicts joined suite by suite, every run's cases (their traces
    where they are now) and listed deviations, and failed when one run failed.

    Raises:
        PublishError: two runs list the same requirement (one finding per deviation).
    """
    document = dict(runs[0].document)
    requirements = {rid: dict(body) for rid, body in document["requirements"].items()}
    suites: list[dict[str, Any]] = []
    listed: dict[str, Any] = {}
    for run in runs:
        for rid, body in run.document["requirements"].items():
            mine = requirements.setdefault(rid, dict(body))
            verdicts = dict(mine["suites"])
            for suite, verdict in body["suites"].items():
                verdicts[suite] = _stronger(verdicts.get(suite), verdict)
            mine["suites"] = verdicts
        suites += [{**suite, "cases": [
            {**case, "artifacts": [trace_on_disk(artifact, run.report).as_posix()
                                   for artifact in case["artifacts"]]}
            for case in suite["cases"]]} for suite in run.document["suites"]]
        twice = sorted(listed.keys() & run.document["expected_failures"].keys())
        if twice:
            raise PublishError(f"{run.name}: {twice[0]} is listed in two of its runs'"
                               " deviation lists; list each deviation in one")
        listed.update(run.document["expected_failures"])
    failed = any(run.document["verdict"] == FAIL for run in runs)
    document.update(requirements=requirements, suites=suites, expected_failures=listed,
                    verdict=FAIL if failed else document["verdict"])
    return document


def _divergences(message: str) -> list[tuple[str, str, str, str, tuple[str, ...]]]:
    """(primary, what, expected, actual, commands) of each divergence in a case message."""
    found = []
    bounds = [match.start() for match in _DIVERGENCE.finditer(message)] + [len(message)]
    for start, end in itertools.pairwise(bounds):
        block = message[start:end]
        primary = _PRIMARY.search(block)
        if primary is None:
            continue
        fields = dict(_FIELD.findall(block))
        _, _, listing = block.partition("commands so far:")
        commands = tuple(match.group(1) for line in listing.splitlines()
                         if (match := _COMMAND.match(line)))
        found.append((primary.group(1), fields.get("what", ""), fields.get("expected", ""),
                      fields.get("actual", ""), commands))
    return found


def shortest_reproducer(document: Mapping[str, Any], report: Path,
                        requirement: str) -> Reproducer | None:
    """The divergence with the fewest commands whose primary is `requirement`, over every
    case of every suite (first in the report's order on a tie): Behave and Robot cases are
    short by design, and a machine's is shrunk when it stopped there."""
    best: Reproducer | None = None
    for suite in document["suites"]:
        for case in suite["cases"]:
            if case["passed"]:
                continue
            for primary, what, expected, actual, commands in _divergences(case["message"]):
                if primary != requirement or not commands:
                    continue
                if best is None or len(commands) < len(best.commands):
                    traces = tuple(report.parent / "traces" / Path(artifact).name
                                   for artifact in case["artifacts"]
                                   if artifact.endswith(".json"))
                    best = Reproducer(f"{suite['suite']}: {case['name']}", what, expected,
                                      actual, commands,
                                      tuple(path for path in traces if path.exists()))
    return best


def findings_of(library: Library) -> list[Finding]:
    """One finding per listed deviation that the run saw fail (an expected failure)."""
    document = library.document
    found = []
    for rid, entry in sorted(document["expected_failures"].items()):
        suites = document["requirements"].get(rid, {}).get("suites", {})
        if EXPECTED_FAILURE not in suites.values():
            continue  # the run did not see it: the report lists it as a problem
        found.append(Finding(library, rid, listed_reason(entry), entry["link"],
                             shortest_reproducer(document, library.report, rid)))
    return found


def _relative(target: Path, start: Path) -> str:
    return Path(os.path.relpath(target.resolve(), start.resolve())).as_posix()


def _finding_markdown(finding: Finding, registry: Registry, output_dir: Path,
                      trace_names: Sequence[str]) -> str:
    library = finding.library
    document = library.document
    folder = output_dir / "findings"
    requirement = registry.requirement(finding.requirement)
    lines = [f"# {library.name}: {requirement.id} {requirement.title}", "",
             f"Found by jobconform {document['spec_version']} running `{document['backend']}`"
             f" under the `{document['profile']}` profile, seed {document['seed']}; listed"
             f" in [its deviation list]({_relative(library.deviations_file, folder)}).", "",
             f"## What the spec says ({requirement.level}, area {requirement.area})", "",
             *[f"> {line}" for line in requirement.statement.strip().splitlines()], "",
             f"See `spec/{requirement.area}.md`, {requirement.id}.", "",
             f"## What {library.name} does", "", finding.reason, ""]
    if finding.link:
        lines += [f"Reference: <{finding.link}>", ""]
    reproducer = finding.reproducer
    lines += ["## How it shows", ""]
    if reproducer is None:
        lines += ["No case of the report shows it with its commands: see the report's"
                  " cases for this requirement.", ""]
    else:
        lines += [f"The shortest case in the report that shows it: {reproducer.case}.", ""]
        if reproducer.case.startswith("hypothesis:") and not reproducer.traces:
            lines += ["Its commands are the machine's sequence up to the divergence, not"
                      " shrunk: a machine runs on past a listed deviation. Run it (below)"
                      " with this entry taken out of the deviation list and the others kept,"
                      " and the machine stops there, shrinks the sequence and writes it as a"
                      " trace under `reports/traces/`.", ""]
        lines += [
                  f"- what: {reproducer.what}", f"- the spec's answer: {reproducer.expected}",
                  f"- {library.name}'s answer: {reproducer.actual}", "",
                  "Commands, from a fresh runtime:", "", "```",
                  *[f"{number}. {command}"
                    for number, command in enumerate(reproducer.commands, start=1)],
                  "```", ""]
    for name in trace_names:
        lines += [f"Shrunk trace: [{name}]({name}); `jobconform replay {name} --backend"
                  f" {document['backend']}` replays it, `--backend memory` gives the spec's"
                  " answer.", ""]
    example = _relative(library.deviations_file.parent, folder)
    lines += [f"To run it again, without the deviation listed, in the environment of"
              f" [the example]({example}) (as its tox environment sets it up):", "", "```",
              f"jobconform run --backend {document['backend']} --profile"
              f" {document['profile']} --requirement {requirement.id}", "```", ""]
    return "\n".join(lines)


def verdict_content(matrix: Matrix, libraries: Sequence[Library],
                    findings: Sequence[Finding]) -> dict[str, Any]:
    """What the staleness check compares: verdicts and listed reasons, nothing else."""
    content: dict[str, Any] = {"spec_versions": matrix.spec_versions, "libraries": {}}
    for index, (column, library) in enumerate(zip(matrix.columns, libraries, strict=True)):
        content["libraries"][library.name] = {
            "backend": column.backend, "profile": column.profile, "seed": column.seed,
            "libraries": dict(column.libraries), "verdict": column.verdict_text,
            "requirements": {row.requirement: row.cells[index].verdict for row in matrix.rows},
            "deviations": {finding.requirement: finding.reason for finding in findings
                           if finding.library.name == library.name},
        }
    return content


def _claimed_tables(matrix: Matrix) -> list[str]:
    """Every requirement of each area some library checks, one table per area: the
    Markdown is what a reader browsing the repository sees (index.html shows as source)."""
    labels = [markdown_cell(column.label) for column in matrix.columns]
    lines = ["## Every requirement of the areas the libraries claim", ""]
    for area in matrix.areas:
        if not any(matrix.rate(area, index).checked for index in range(len(labels))):
            continue
        lines += [f"### {area}", "", "| requirement | level | title | " + " | ".join(labels)
                  + " |", "|" + "---|" * (len(labels) + 3)]
        for row in matrix.rows:
            if row.area == area:
                marks = [MARKS[cell.verdict] for cell in row.cells]
                lines.append(f"| {row.requirement} | {row.level} | {markdown_cell(row.title)} | "
                             + " | ".join(marks) + " |")
        lines.append("")
    return lines


def _markdown(matrix: Matrix, findings: Sequence[Finding]) -> str:
    lines = ["# Compatibility", "",
             "Each library below is validated by its example in `examples/` against the"
             " oracle, in the areas it claims, under the virtual clock. This folder is"
             " generated by `jobconform publish reports --output-dir docs/compatibility`"
             " from the examples' reports; `tox -e compare` fails when it is stale."
             " [index.html](index.html) shows every requirement, with filters.", "",
             to_markdown(matrix, TITLE).rstrip(), "", "## Findings", ""]
    if not findings:
        lines.append("No listed deviation.")
    lines += [f"- **{finding.library.name}**, [{finding.requirement}]"
              f"(findings/{finding.file_name}): {finding.reason.replace(chr(10), ' ')}"
              for finding in findings]
    lines += ["", *_claimed_tables(matrix)]
    return "\n".join(lines).rstrip() + "\n"


def publish(reports: Path, output_dir: Path, registry: Registry) -> dict[str, Any]:
    """Write the compatibility page for the libraries under `reports` into `output_dir`,
    replacing what was there; return its verdict content.

    Raises:
        ReportError: a report is unreadable or off-schema.
        PublishError: no library's report is there.
    """
    runs = find_libraries(reports)
    by_name: dict[str, list[Library]] = {}
    for run in runs:
        by_name.setdefault(run.name, []).append(run)
    libraries = [named[0] for named in by_name.values()]  # a column each, its own report's
    matrix = matrix_of([(name, named[0].report, joined(named))
                        for name, named in by_name.items()])
    findings = [finding for run in runs for finding in findings_of(run)]
    if output_dir.exists():
        shutil.rmtree(output_dir)
    (output_dir / "findings").mkdir(parents=True)
    by_cell = {(finding.library.name, finding.requirement): finding for finding in findings}
    traces: dict[tuple[str, str], list[str]] = {}
    for finding in findings:
        reproducer = finding.reproducer
        for number, trace in enumerate(reproducer.traces if reproducer else (), start=1):
            name = f"{finding.library.name}-{finding.requirement}-{number}.trace.json"
            shutil.copyfile(trace, output_dir / "findings" / name)
            traces.setdefault((finding.library.name, finding.requirement), []).append(name)
        text = _finding_markdown(finding, registry, output_dir,
                                 traces.get((finding.library.name, finding.requirement), []))
        (output_dir / "findings" / finding.file_name).write_text(text, encoding="utf-8")
    # The page links each column to its deviation list and each listed deviation to its
    # finding; the reports themselves stay out of the repository.
    columns = tuple(replace(column, source=library.deviations_file)
                    for column, library in zip(matrix.columns, libraries, strict=True))
    rows = tuple(replace(row, cells=tuple(
        replace(cell, traces=(), finding=(output_dir / "findings" / by_cell[key].file_name))
        if (key := (column.label, row.requirement)) in by_cell else cell
        for cell, column in zip(row.cells, columns, strict=True))) for row in matrix.rows)
    published = Matrix(columns, rows)
    page = output_dir / "index.html"
    page.write_text(to_html(published, page, title=TITLE, source_text="deviation list"),
                    encoding="utf-8")
    (output_dir / "README.md").write_text(_markdown(published, findings), encoding="utf-8")
    write_badges(published, output_dir / "badges")
    content = verdict_content(published, libraries, findings)
    (output_dir / VERDICTS_FILE).write_text(json.dumps(content, indent=2, sort_keys=True)
                                            + "\n", encoding="utf-8")
    return content


def differences(committed: Mapping[str, Any], current: Mapping[str, Any]) -> list[str]:
    """Where the committed page's verdicts and the current reports' disagree."""
    found = []
    if committed.get("spec_versions") != current["spec_versions"]:
        found.append(f"spec: the page has {committed.get('spec_versions')}, the reports"
                     f" {current['spec_versions']}")
    old: Mapping[str, Any] = committed.get("libraries", {})
    new: Mapping[str, Any] = current["libraries"]
    for name in sorted(old.keys() - new.keys()):
        found.append(f"{name}: on the page, but no report of it (run its tox environment)")
    for name in sorted(new.keys() - old.keys()):
        found.append(f"{name}: reported, but not on the page")
    for name in sorted(old.keys() & new.keys()):
        before, after = old[name], new[name]
        for key in ("backend", "profile", "seed", "verdict"):
            if before.get(key) != after[key]:
                found.append(f"{name}: {key} {before.get(key)!r} on the page, now"
                             f" {after[key]!r}")
        verdicts_before = before.get("requirements", {})
        for rid, verdict in after["requirements"].items():
            if verdicts_before.get(rid) != verdict:
                found.append(f"{name} {rid}: {verdicts_before.get(rid)!r} on the page, now"
                             f" {verdict!r}")
        deviations_before = before.get("deviations", {})
        for rid in sorted(deviations_before.keys() | after["deviations"].keys()):
            if deviations_before.get(rid) != after["deviations"].get(rid):
                found.append(f"{name} {rid}: the listed reason changed")
    return found


@click.command(name="publish")
@click.argument("reports", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--output-dir", default=Path("docs/compatibility"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Where the page is written (its previous content is replaced).")
@click.option("--check", "check_dir", default=None,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="Write nothing: fail when this published page's verdicts differ from"
                   " the reports'.")
def publish_command(reports: Path, output_dir: Path, check_dir: Path | None) -> None:
    """Publish the compatibility page of the libraries validated under REPORTS.

    Every report.json under REPORTS made with --expected-failures is a library, named by
    its folder. Writes the compare page (index.html, README.md, badges/), a finding per
    listed deviation (findings/) and verdicts.json. With --check, exits 1 when the page
    in that folder is stale against the reports.
    """
    registry = load_registry()
    try:
        if check_dir is None:
            content = publish(reports, output_dir, registry)
        else:
            with tempfile.TemporaryDirectory() as scratch:
                content = publish(reports, Path(scratch) / "page", registry)
    except (ReportError, PublishError) as error:
        raise click.BadParameter(str(error), param_hint="REPORTS") from error
    names = ", ".join(content["libraries"])
    if check_dir is None:
        click.echo(f"published {len(content['libraries'])} libraries ({names}) in {output_dir}")
        return
    try:
        committed = json.loads((check_dir / VERDICTS_FILE).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise click.ClickException(f"cannot read the published verdicts: {error}; {REFRESH}"
                                   ) from error
    stale = differences(committed, content)
    if stale:
        shown = "\n  ".join(stale[:40]) + ("\n  ..." if len(stale) > 40 else "")
        click.echo(f"the compatibility page in {check_dir} is stale against the reports"
                   f" under {reports}:\n  {shown}\nTo refresh it: {REFRESH}.", err=True)
        raise SystemExit(1)
    click.echo(f"the compatibility page in {check_dir} agrees with the reports ({names})")
