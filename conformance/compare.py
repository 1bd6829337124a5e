"""Runtimes side by side: a requirement x backend matrix built from `report.json` files.

`jobconform compare` reads the reports of several runs (one per backend, or per database
behind the same backend) and shows them as:

- Markdown for a CI job page: the verdict per backend, pass rates per area, and the
  requirements that do not pass everywhere;
- one self-contained HTML page: per-area rows, a coloured cell per backend, the divergence
  message and trace link of each failing cell, filters by area, level and verdict, and an
  SVG chart of pass rates per area and backend. It loads nothing from anywhere (its content
  security policy forbids it), so it can be kept as a CI artefact and opened offline;
- one shields.io "endpoint" badge (JSON) per backend.

A cell holds one verdict per requirement and backend, folded over the suites in the same
order as the report's counts: a failure in any suite wins, and a pass in one suite
outweighs "blocked" (not checked) in another. So that the fold hides nothing, a run's
blocked and untested totals also show each suite's own count ("0 (hypothesis 17)").
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from jobconform.conformance.report import (
    BLOCKED,
    EXPECTED_FAILURE,
    FAIL,
    NOT_APPLICABLE,
    NOT_CLAIMED,
    NOT_RERUN,
    NOT_RUN,
    PASS,
    UNTESTED,
    VERDICTS,
    ReportError,
    per_suite_text,
    read_report,
    suite_counts,
)

# The fold over suites, strongest first (as report._counts counts requirements).
_CHECKED_ORDER = (FAIL, UNTESTED, EXPECTED_FAILURE, PASS, BLOCKED)
_UNCHECKED_ORDER = (NOT_CLAIMED, NOT_APPLICABLE, NOT_RERUN, NOT_RUN)
# Verdicts that count towards a pass rate: the backend claims the area, the profile has
# the requirement, and the run meant to check it.
CHECKED = frozenset(_CHECKED_ORDER)
# A cell shows details (message, traces, reason) for these.
_EXPLAINED = frozenset({FAIL, UNTESTED, EXPECTED_FAILURE, BLOCKED})
# The counts a runs table shows, in its columns' order.
RUN_COUNTS = (PASS, FAIL, EXPECTED_FAILURE, BLOCKED, UNTESTED, NOT_CLAIMED, NOT_RUN)
# Longest divergence message carried into a page cell; the trace has the rest.
MESSAGE_LIMIT = 2000


def overall_verdict(suites: Mapping[str, str]) -> str:
    """One verdict for a requirement from its verdicts per suite."""
    values = set(suites.values())
    for verdict in _CHECKED_ORDER:
        if verdict in values:
            return verdict
    for verdict in _UNCHECKED_ORDER:
        if values == {verdict}:
            return verdict
    # A run left the requirement out (--area, --requirement) in some suites and found it
    # n/a or unclaimed in others: it was not run, which says more than n/a.
    if NOT_RUN in values:
        return NOT_RUN
    # A mix of unchecked verdicts (n/a in one suite, not rerun in another) or no suite.
    return NOT_APPLICABLE if values else NOT_CLAIMED


@dataclass(frozen=True)
class Column:
    """One report: a backend run under a profile."""

    label: str
    backend: str
    profile: str
    spec_version: str
    seed: int
    verdict: str  # the run's own verdict: "pass" or "fail"
    source: Path
    # Blocked and untested requirements in each suite's own column (report.suite_counts).
    suite_counts: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    # A machine's backend answered a replay of the same commands differently.
    nondeterministic: bool = False
    # The libraries the backend wraps, with their versions (report "libraries").
    libraries: Mapping[str, str] = field(default_factory=dict)

    @property
    def libraries_text(self) -> str:
        """`rq 3.0.0`, or `—` for a backend that names no library."""
        return ", ".join(f"{name} {version}" for name, version in self.libraries.items()) or "—"

    @property
    def verdict_text(self) -> str:
        return self.verdict + (" (nondeterministic backend)" if self.nondeterministic else "")

    def count_text(self, verdict: str, total: int) -> str:
        """`0 (hypothesis 17)`: the folded total, and each suite's own count if any."""
        in_suites = per_suite_text(self.suite_counts, verdict)
        return f"{total} ({in_suites})" if in_suites else str(total)


@dataclass(frozen=True)
class Cell:
    verdict: str
    suites: Mapping[str, str]
    message: str = ""  # the first divergence or failure message of a case covering it
    traces: tuple[Path, ...] = ()  # reproducers of the failing cases, as found on disk
    reason: str = ""  # the expected-failures reason, for an expected failure
    finding: Path | None = None  # the published write-up of a listed deviation


@dataclass(frozen=True)
class Row:
    requirement: str
    area: str
    level: str
    title: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class AreaRate:
    passed: int
    checked: int  # requirements with a checked verdict (see CHECKED)
    # What the area is when nothing in it was checked: "not run" (the run left it out
    # with --area), "not claimed", or "n/a" (the profile does not have it).
    unchecked: str = NOT_CLAIMED

    @property
    def percent(self) -> float | None:
        return None if not self.checked else 100.0 * self.passed / self.checked


@dataclass(frozen=True)
class Matrix:
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]

    @property
    def areas(self) -> list[str]:
        """Areas in the order the spec lists them."""
        return list(dict.fromkeys(row.area for row in self.rows))

    @property
    def spec_versions(self) -> list[str]:
        """The reports' spec versions, oldest first (0.9.0 before 0.10.0, by number)."""
        return sorted({column.spec_version for column in self.columns}, key=_version_key)

    def rate(self, area: str | None, column: int) -> AreaRate:
        cells = [row.cells[column] for row in self.rows if area is None or row.area == area]
        checked = [cell for cell in cells if cell.verdict in CHECKED]
        verdicts = {cell.verdict for cell in cells}
        unchecked = next((verdict for verdict in (NOT_RUN, NOT_CLAIMED, NOT_RERUN)
                          if verdict in verdicts), NOT_APPLICABLE)
        return AreaRate(sum(cell.verdict == PASS for cell in checked), len(checked),
                        unchecked)

    def counts(self, column: int) -> dict[str, int]:
        counts = dict.fromkeys(VERDICTS, 0)
        for row in self.rows:
            counts[row.cells[column].verdict] += 1
        return counts

    def differing(self) -> list[Row]:
        """Rows that need a look: some backend does not pass (unclaimed areas aside)."""
        return [row for row in self.rows
                if any(cell.verdict in _EXPLAINED for cell in row.cells)]


# --- reading -------------------------------------------------------------------------

def report_paths(arguments: Iterable[str]) -> list[tuple[str | None, Path]]:
    """Expand the command's REPORT arguments: `report.json`, `LABEL=report.json`, or a
    folder, which stands for every report.json under it (sorted)."""
    found: list[tuple[str | None, Path]] = []
    for argument in arguments:
        label: str | None = None
        text = argument
        if "=" in argument and not Path(argument).exists():
            label, text = argument.split("=", 1)
        path = Path(text)
        if path.is_dir():
            inside = sorted(path.rglob("report.json"))
            if not inside:
                raise ReportError(f"no report.json under the folder {path}")
            found += [(None, report) for report in inside]
        else:
            found.append((label, path))
    return found


def _labels(entries: Sequence[tuple[str | None, Path, Mapping[str, Any]]]) -> list[str]:
    """A column label per report: the backend's name, told apart by the report's folder
    when two reports share a backend (sql on PostgreSQL and on MariaDB)."""
    backends = [str(document["backend"]) for _, _, document in entries]
    labels = []
    for (label, path, _), backend in zip(entries, backends, strict=True):
        if label:
            labels.append(label)
        elif backends.count(backend) > 1:
            labels.append(f"{backend} ({path.resolve().parent.name})")
        else:
            labels.append(backend)
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ReportError(f"two reports would share the column {repeated[0]!r}: name them"
                          " with LABEL=report.json")
    return labels


def _failing_cases(document: Mapping[str, Any], requirement: str) -> list[Mapping[str, Any]]:
    """Failed cases that fail this requirement: a divergence named it, or a case covering
    it failed without naming anything; else the ones that stopped on another
    requirement before reaching it (what makes it blocked or failed)."""
    cases = [case for suite in document["suites"] for case in suite["cases"]
             if not case["passed"]]
    direct = [case for case in cases
              if requirement in case["blamed"]
              or (not case["blamed"] and requirement in case["requirements"])]
    stopped = [case for case in cases
               if case["blamed"] and requirement not in case["blamed"]
               and requirement in case["requirements"]]
    return direct or stopped


def trace_on_disk(artifact: str, report_path: Path) -> Path:
    """Where a reproducer is now: as written (relative to where the run ran), or in the
    report's own traces/ folder (the report folder was moved, or is a CI artefact)."""
    written = Path(artifact)
    beside = report_path.parent / "traces" / written.name
    if written.is_absolute() and written.exists():
        return written
    if beside.exists():
        return beside
    return written if written.exists() else beside


def _cell(document: Mapping[str, Any], source: Path, requirement: str) -> Cell:
    body = document["requirements"].get(requirement)
    if body is None:
        return Cell(NOT_APPLICABLE, {}, "the report's spec has no such requirement")
    suites = dict(body["suites"])
    verdict = overall_verdict(suites)
    if verdict not in _EXPLAINED:
        return Cell(verdict, suites)
    cases = _failing_cases(document, requirement)
    message = ""
    if cases:
        first = cases[0]
        message = f"{first['suite']}: {first['name']}\n{first['message'].strip()}"
        if len(message) > MESSAGE_LIMIT:
            message = message[:MESSAGE_LIMIT] + "\n[... cut; see the report or the trace]"
    elif verdict == UNTESTED:
        message = "no case in the suite covers it"
    traces = tuple(dict.fromkeys(trace_on_disk(artifact, source) for case in cases
                                 for artifact in case["artifacts"]))
    expected = document["expected_failures"].get(requirement)
    reason = listed_reason(expected) if expected and verdict == EXPECTED_FAILURE else ""
    return Cell(verdict, suites, message, traces, reason)


def listed_reason(entry: Mapping[str, Any]) -> str:
    """An expected-failures entry's reason as a reader sees it, with the suites it is
    limited to (its `suites`), if any."""
    suites = entry.get("suites")
    scope = f" (listed for {', '.join(suites)} only)" if suites else ""
    return f"{entry['reason']}{scope}"


def build_matrix(arguments: Iterable[str]) -> Matrix:
    """Read and validate the reports and line them up by requirement.

    Raises:
        ReportError: a report is unreadable or off-schema, none was given, or two
            reports would share a column.
    """
    entries: list[tuple[str | None, Path, Mapping[str, Any]]] = [
        (label, path, read_report(path)) for label, path in report_paths(arguments)]
    if not entries:
        raise ReportError("no reports to compare")
    return matrix_of(entries)


def matrix_of(entries: Sequence[tuple[str | None, Path, Mapping[str, Any]]]) -> Matrix:
    """Line up reports read already (label or None, where the report is, its document).

    Raises:
        ReportError: two reports would share a column.
    """
    labels = _labels(entries)
    columns = tuple(
        Column(label, str(doc["backend"]), str(doc["profile"]), str(doc["spec_version"]),
               int(doc["seed"]), str(doc["verdict"]), path,
               suite_counts({rid: body["suites"] for rid, body in doc["requirements"].items()}),
               any(case.get("nondeterministic", False)
                   for suite in doc["suites"] for case in suite["cases"]),
               dict(doc.get("libraries", {})))
        for label, (_, path, doc) in zip(labels, entries, strict=True))
    # Every requirement of every report, in spec order (the reports list them so).
    requirements: dict[str, Mapping[str, Any]] = {}
    for _, _, document in entries:
        for rid, body in document["requirements"].items():
            requirements.setdefault(rid, body)
    by_area: dict[str, list[str]] = {}
    for rid, body in requirements.items():
        by_area.setdefault(str(body["area"]), []).append(rid)
    rows = tuple(
        Row(rid, area, str(requirements[rid]["level"]), str(requirements[rid]["title"]),
            tuple(_cell(doc, path, rid) for _, path, doc in entries))
        for area, ids in by_area.items() for rid in ids)
    return Matrix(columns, rows)


# --- Markdown --------------------------------------------------------------------------

MARKS = {PASS: "✅ pass", FAIL: "❌ fail", EXPECTED_FAILURE: "⚠️ expected failure",
         BLOCKED: "⏸️ blocked", UNTESTED: "❓ untested", NOT_CLAIMED: "⬜ not claimed",
         NOT_APPLICABLE: "n/a", NOT_RERUN: "not rerun", NOT_RUN: "not run"}


def markdown_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _rate_text(rate: AreaRate) -> str:
    return rate.unchecked if not rate.checked else f"{rate.passed}/{rate.checked}"


def to_markdown(matrix: Matrix, title: str | None = None) -> str:
    """The comparison for a CI job page: overview, pass rates per area, differences."""
    labels = [markdown_cell(column.label) for column in matrix.columns]
    lines = [f"## {title or f'jobconform: {len(matrix.columns)} backends side by side'}",
             "", f"Spec {', '.join(matrix.spec_versions)}.", ""]
    if len(matrix.spec_versions) > 1:
        lines += ["**The reports were made under different spec versions**; a requirement"
                  " missing from one shows as n/a there.", ""]
    lines += ["| backend | library | profile | seed | verdict | passed | failed"
              " | expected failures | blocked | untested | not claimed | not run |",
              "|" + "---|" * 12]
    for index, column in enumerate(matrix.columns):
        counts = matrix.counts(index)
        verdict = ("✅ " if column.verdict == "pass" else "❌ ") + column.verdict_text
        lines.append(f"| {labels[index]} | {markdown_cell(column.libraries_text)}"
                     f" | {column.profile} | {column.seed} | {verdict} | "
                     + " | ".join(column.count_text(v, counts[v])
                                  for v in RUN_COUNTS)
                     + " |")
    lines += ["", "### Pass rate per area", "", "| area | " + " | ".join(labels) + " |",
              "|" + "---|" * (len(labels) + 1)]
    for area in matrix.areas:
        rates = [_rate_text(matrix.rate(area, i)) for i in range(len(labels))]
        lines.append(f"| {area} | " + " | ".join(rates) + " |")
    differing = matrix.differing()
    lines += ["", "### Requirements that do not pass everywhere", ""]
    if not differing:
        lines.append("None: every claimed requirement passes on every backend.")
    else:
        lines += ["| requirement | area | level | title | " + " | ".join(labels) + " |",
                  "|" + "---|" * (len(labels) + 4)]
        for row in differing:
            marks = [MARKS[cell.verdict] for cell in row.cells]
            lines.append(f"| {row.requirement} | {row.area} | {row.level}"
                         f" | {markdown_cell(row.title)} | " + " | ".join(marks) + " |")
    return "\n".join(lines) + "\n"


# --- badges ----------------------------------------------------------------------------

def badge(matrix: Matrix, column: int) -> dict[str, object]:
    """A shields.io endpoint document: passed out of checked requirements, coloured by the
    run's verdict (green: all pass; yellow: passes with listed deviations or blocked
    requirements; red: the run failed)."""
    counts = matrix.counts(column)
    rate = matrix.rate(None, column)
    if matrix.columns[column].verdict != "pass":
        color = "red"
    elif counts[EXPECTED_FAILURE] or counts[BLOCKED]:
        color = "yellow"
    else:
        color = "brightgreen"
    message = f"{rate.passed}/{rate.checked} passed"
    if counts[EXPECTED_FAILURE]:
        message += f", {counts[EXPECTED_FAILURE]} deviations"
    return {"schemaVersion": 1, "label": f"jobconform {matrix.columns[column].label}",
            "message": message, "color": color}


def badge_file_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-").lower() + ".json"


def write_badges(matrix: Matrix, folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for index, column in enumerate(matrix.columns):
        path = folder / badge_file_name(column.label)
        path.write_text(json.dumps(badge(matrix, index), indent=2) + "\n", encoding="utf-8")
        written.append(path)
    return written


# --- HTML ------------------------------------------------------------------------------

# Cell colours by verdict; the chart uses one colour per backend from _SERIES.
_VERDICT_CLASS = {verdict: "v-" + re.sub(r"[^a-z]+", "-", verdict).strip("-")
                  for verdict in VERDICTS}
_SERIES = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#d62728")

_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5rem;color:#222}
h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .45rem;vertical-align:top;text-align:left}
thead th{background:#f0f0f0;position:sticky;top:0}
tr.area th{background:#e4e8f0;font-size:.95rem}
td.rid{font-family:monospace;white-space:nowrap}
.v-pass{background:#c8e6c9}.v-fail{background:#ffcdd2}.v-expected-failure{background:#fff3bf}
.v-blocked{background:#e1d5f5}.v-untested{background:#ffe0b2}.v-not-claimed{background:#eee;color:#777}
.v-n-a,.v-not-rerun{background:#fafafa;color:#999}.v-not-run{background:#f4f4f4;color:#666;font-style:italic}
details pre{white-space:pre-wrap;max-width:38rem;max-height:18rem;overflow:auto;font-size:.75rem;
background:#fff;border:1px solid #ddd;padding:.3rem}
.filters{display:flex;gap:1rem;align-items:center;margin:1rem 0}
.warning{background:#fff3bf;padding:.5rem;border:1px solid #e0c060}
"""

# The page fetches nothing: no script, style, font or image from anywhere but itself.
_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline';"
           " img-src data:")

# Filters: a row is shown when it matches the chosen area, level and verdict (a row
# matches a verdict when any backend has it). The choice is kept in the page's query
# string, so a filtered view can be linked (and the browser test drives it so).
_SCRIPT = """
(function(){
  var names=['area','level','verdict'];
  function choice(){
    var c={};
    names.forEach(function(n){c[n]=document.getElementById('filter-'+n).value;});
    return c;
  }
  function apply(){
    var c=choice(),shown=0;
    document.querySelectorAll('tr.req').forEach(function(tr){
      var ok=(!c.area||tr.dataset.area===c.area)&&(!c.level||tr.dataset.level===c.level)
        &&(!c.verdict||(' '+tr.dataset.verdicts+' ').indexOf(' '+c.verdict+' ')>=0);
      tr.hidden=!ok;if(ok){shown++;}
    });
    document.querySelectorAll('tbody.area').forEach(function(body){
      body.hidden=!body.querySelector('tr.req:not([hidden])');
    });
    document.getElementById('shown').textContent=shown;
    var q=new URLSearchParams();names.forEach(function(n){if(c[n]){q.set(n,c[n]);}});
    var s=q.toString();history.replaceState(null,'',s?'?'+s:location.pathname);
  }
  var params=new URLSearchParams(location.search);
  names.forEach(function(n){
    var select=document.getElementById('filter-'+n),wanted=params.get(n);
    var known=Array.prototype.some.call(select.options,function(o){return o.value===wanted;});
    if(wanted!==null&&known){select.value=wanted;}
    select.addEventListener('change',apply);
  });
  apply();
})();
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _link(target: Path, page: Path) -> str:
    """A link from the page to a file: relative, so the folder can move as a whole."""
    try:
        return Path(os.path.relpath(target.resolve(), page.resolve().parent)).as_posix()
    except ValueError:  # another drive (Windows)
        return target.resolve().as_uri()


def _chart(matrix: Matrix) -> str:
    """Horizontal bars: per area, one bar per backend, as long as its pass rate."""
    label_width, bar_width, bar_height, gap = 110, 420, 14, 10
    areas = matrix.areas
    count = len(matrix.columns)
    group = count * bar_height + gap
    legend_height = 22 * ((count + 2) // 3)
    height = legend_height + len(areas) * group + 30
    width = label_width + bar_width + 70
    parts = [f'<svg id="chart" xmlns="http://www.w3.org/2000/svg" width="{width}"'
             f' height="{height}" role="img" aria-label="pass rate per area and backend"'
             f' font-family="system-ui,sans-serif" font-size="12">']
    for index, column in enumerate(matrix.columns):
        x = 10 + (index % 3) * 200
        y = 4 + (index // 3) * 22
        parts.append(f'<rect x="{x}" y="{y}" width="12" height="12"'
                     f' fill="{_SERIES[index % len(_SERIES)]}"/>'
                     f'<text x="{x + 16}" y="{y + 11}">{_e(column.label)}</text>')
    top = legend_height + 8
    for number, area in enumerate(areas):
        y0 = top + number * group
        parts.append(f'<text x="{label_width - 6}" y="{y0 + count * bar_height / 2 + 4}"'
                     f' text-anchor="end">{_e(area)}</text>')
        for index, column in enumerate(matrix.columns):
            rate = matrix.rate(area, index)
            y = y0 + index * bar_height
            percent = rate.percent
            length = 0.0 if percent is None else bar_width * percent / 100
            text = rate.unchecked if percent is None else f"{percent:.0f}%"
            parts.append(
                f'<rect class="bar" data-area="{_e(area)}" data-backend="{_e(column.label)}"'
                f' data-passed="{rate.passed}" data-checked="{rate.checked}"'
                f' x="{label_width}" y="{y + 1}" width="{length:.1f}"'
                f' height="{bar_height - 2}" fill="{_SERIES[index % len(_SERIES)]}">'
                f'<title>{_e(column.label)}, {_e(area)}: {_e(_rate_text(rate))}</title></rect>'
                f'<text x="{label_width + length + 4:.1f}" y="{y + bar_height - 3}"'
                f' font-size="10">{text}</text>')
    axis_y = top + len(areas) * group
    parts.append(f'<line x1="{label_width}" y1="{top - 4}" x2="{label_width}" y2="{axis_y}"'
                 ' stroke="#555"/>')
    for tick in (0, 50, 100):
        tick_x = label_width + bar_width * tick / 100
        parts.append(f'<text x="{tick_x}" y="{axis_y + 14}" text-anchor="middle"'
                     f' font-size="10">{tick}%</text>')
    parts.append("</svg>")
    return "".join(parts)


def _cell_html(cell: Cell, column: Column, page: Path) -> str:
    css = _VERDICT_CLASS[cell.verdict]
    suites = ", ".join(f"{suite}: {verdict}" for suite, verdict in cell.suites.items())
    attributes = f' class="cell {css}" data-verdict="{_e(cell.verdict)}" title="{_e(suites)}"'
    if cell.verdict not in _EXPLAINED:
        return f"<td{attributes}>{_e(cell.verdict)}</td>"
    inner = [f"<details><summary>{_e(cell.verdict)}</summary>"]
    if cell.reason:
        inner.append(f'<p class="reason">listed deviation: {_e(cell.reason)}</p>')
    if cell.finding is not None:
        inner.append(f'<a class="finding" href="{_e(_link(cell.finding, page))}">finding and'
                     " reproducer</a> ")
    if cell.message:
        inner.append(f'<pre class="message">{_e(cell.message)}</pre>')
    for trace in cell.traces:
        inner.append(f'<a class="trace" href="{_e(_link(trace, page))}">trace {_e(trace.name)}'
                     "</a> ")
    inner.append(f'<div class="suites">{_e(suites)} ({_e(column.label)})</div></details>')
    return f"<td{attributes}>{''.join(inner)}</td>"


def _select(name: str, options: Sequence[str]) -> str:
    items = "".join(f'<option value="{_e(o)}">{_e(o)}</option>' for o in options)
    return (f'<label>{name} <select id="filter-{name}"><option value="">all</option>{items}'
            "</select></label>")


def to_html(matrix: Matrix, page: Path, *, title: str | None = None,
            source_text: str = "report.json") -> str:
    """The comparison as one static page; `page` is where it will be written (links to
    the reports and traces are made relative to it). Each run links its column's
    `source`, shown as `source_text`."""
    columns = matrix.columns
    head = "".join(
        f'<th class="backend" data-backend="{_e(c.label)}">{_e(c.label)}<br>'
        f'<small>{_e(c.profile)}, seed {c.seed}, run {_e(c.verdict)}</small></th>'
        for c in columns)
    summary_rows = []
    for index, column in enumerate(columns):
        counts = matrix.counts(index)
        summary_rows.append(
            f'<tr class="run" data-backend="{_e(column.label)}"><td>{_e(column.label)}</td>'
            f"<td>{_e(column.backend)}</td><td>{_e(column.libraries_text)}</td>"
            f"<td>{_e(column.profile)}</td>"
            f"<td>{_e(column.spec_version)}</td><td>{column.seed}</td>"
            f'<td class="{_VERDICT_CLASS[PASS if column.verdict == "pass" else FAIL]}">'
            f"{_e(column.verdict_text)}</td>"
            + "".join(f"<td>{_e(column.count_text(v, counts[v]))}</td>"
                      for v in RUN_COUNTS)
            + f'<td><a href="{_e(_link(column.source, page))}">{_e(source_text)}</a></td></tr>')
    bodies = []
    for area in matrix.areas:
        rows = [row for row in matrix.rows if row.area == area]
        rates = ", ".join(f"{c.label} {_rate_text(matrix.rate(area, i))}"
                          for i, c in enumerate(columns))
        lines = [f'<tbody class="area" data-area="{_e(area)}"><tr class="area">'
                 f'<th colspan="{3 + len(columns)}">{_e(area)} — {len(rows)} requirements'
                 f' <small>({_e(rates)})</small></th></tr>']
        for row in rows:
            verdicts = " ".join(sorted({cell.verdict.replace(" ", "-") for cell in row.cells}))
            cells = "".join(_cell_html(cell, column, page)
                            for cell, column in zip(row.cells, columns, strict=True))
            lines.append(f'<tr class="req" id="{_e(row.requirement)}"'
                         f' data-area="{_e(area)}" data-level="{_e(row.level)}"'
                         f' data-verdicts="{_e(verdicts)}"><td class="rid">{_e(row.requirement)}'
                         f"</td><td>{_e(row.level)}</td><td>{_e(row.title)}</td>{cells}</tr>")
        lines.append("</tbody>")
        bodies.append("".join(lines))
    used = sorted({cell.verdict for row in matrix.rows for cell in row.cells},
                  key=VERDICTS.index)
    levels = sorted({row.level for row in matrix.rows}, key=["MUST", "SHOULD", "MAY"].index)
    # Verdict option values use '-' for spaces, as the rows' data-verdicts do.
    verdict_select = _select("verdict", [v.replace(" ", "-") for v in used])
    warning = ""
    if len(matrix.spec_versions) > 1:
        warning = ('<p class="warning">The reports were made under different spec versions'
                   f" ({_e(', '.join(matrix.spec_versions))}); a requirement missing from"
                   " one shows as n/a there.</p>")
    title = title or f"jobconform: {len(columns)} backends side by side"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_POLICY}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_e(title)}</title><style>{_STYLE}</style></head>
<body>
<h1>{_e(title)}</h1>
<p>Spec {_e(", ".join(matrix.spec_versions))}; {len(matrix.rows)} requirements in
{len(matrix.areas)} areas. A cell folds the suites' verdicts: a failure in any suite wins.
Open a coloured cell for its divergence message and trace.</p>
{warning}
<h2>Runs</h2>
<table id="runs"><thead><tr><th>column</th><th>backend</th><th>library</th><th>profile</th>
<th>spec</th><th>seed</th><th>verdict</th><th>passed</th><th>failed</th><th>expected failures</th>
<th>blocked</th><th>untested</th><th>not claimed</th><th>not run</th><th>{_e(source_text)}</th></tr>
</thead>
<tbody>{"".join(summary_rows)}</tbody></table>
<h2>Pass rate per area</h2>
{_chart(matrix)}
<h2>Requirements</h2>
<div class="filters">{_select("area", matrix.areas)}{_select("level", levels)}{verdict_select}
<span><span id="shown">{len(matrix.rows)}</span> of {len(matrix.rows)} shown</span></div>
<table id="matrix"><thead><tr><th>requirement</th><th>level</th><th>title</th>{head}</tr></thead>
{"".join(bodies)}
</table>
<script>{_SCRIPT}</script>
</body></html>
"""


# --- the command ----------------------------------------------------------------------

@click.command(name="compare")
@click.argument("reports", nargs=-1, required=True, metavar="REPORT...")
@click.option("--output-dir", default=Path("reports/compare"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Where index.html, summary.md and badges/*.json are written.")
def compare_command(reports: tuple[str, ...], output_dir: Path) -> None:
    """Put backends side by side: a requirement x backend matrix from report.json files.

    REPORT is a report.json written by `jobconform run`, LABEL=report.json to name its
    column, or a folder (every report.json under it). Writes a static HTML page, a Markdown
    summary (also appended to $GITHUB_STEP_SUMMARY when that is set) and a shields.io
    endpoint badge per backend. The exit code is 0 whenever the reports could be read:
    each run's own exit code is its gate.
    """
    try:
        matrix = build_matrix(reports)
    except ReportError as error:  # bad input: the usage-error code, as the run's options
        raise click.BadParameter(str(error), param_hint="REPORT") from error
    output_dir.mkdir(parents=True, exist_ok=True)
    page = output_dir / "index.html"
    page.write_text(to_html(matrix, page), encoding="utf-8")
    markdown = to_markdown(matrix)
    (output_dir / "summary.md").write_text(markdown, encoding="utf-8")
    badges = write_badges(matrix, output_dir / "badges")
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as stream:
            stream.write(markdown)
    for index, column in enumerate(matrix.columns):
        shown = badge(matrix, index)
        click.echo(f"{column.label:<28} {column.verdict:<5} {shown['message']}"
                   f"  ({column.source})")
    click.echo(f"wrote {page}, {output_dir / 'summary.md'} and {len(badges)} badges in"
               f" {output_dir / 'badges'}")


def _version_key(version: str) -> tuple[tuple[int, str], ...]:
    """A version's parts compared as numbers where they are numbers."""
    return tuple((int(part), "") if part.isdigit() else (-1, part)
                 for part in version.split("."))
