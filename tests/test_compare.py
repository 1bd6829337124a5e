"""`jobconform compare`: the matrix, its Markdown, HTML page and badges, and the command."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from compare_reports import write_report

from jobconform.conformance.cli import main
from jobconform.conformance.compare import (
    Matrix,
    badge,
    build_matrix,
    overall_verdict,
    to_html,
    to_markdown,
)
from jobconform.conformance.report import ReportError
from jobconform.spec import Registry


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory, registry: Registry) -> list[Path]:
    """Three backends: one passing all, one failing LC-003 with a trace and listing
    RT-002, one claiming lifecycle only with LC-005 uncovered."""
    tmp_path = tmp_path_factory.mktemp("reports")
    return [
        write_report(tmp_path / "memory", registry, "memory"),
        write_report(tmp_path / "broken", registry, "broken",
                     failing={"LC-003": "a late completion overwrote cancelled"},
                     expected={"RT-002": "backoff counted from attempt 1"}),
        write_report(tmp_path / "partial", registry, "partial",
                     capabilities={"lifecycle"}, untested=["LC-005"]),
    ]


def matrix_of(paths: list[Path]) -> Matrix:
    return build_matrix([str(path) for path in paths])


def test_overall_verdict_folds_suites_failure_first() -> None:
    assert overall_verdict({"behave": "pass", "hypothesis": "fail"}) == "fail"
    assert overall_verdict({"behave": "blocked", "hypothesis": "pass"}) == "pass"
    assert overall_verdict({"behave": "expected failure", "robot": "pass"}) == "expected failure"
    assert overall_verdict({"behave": "not claimed", "robot": "not claimed"}) == "not claimed"
    assert overall_verdict({"behave": "n/a", "robot": "n/a"}) == "n/a"


def test_matrix_lines_up_requirements_by_backend(reports: list[Path],
                                                 registry: Registry) -> None:
    matrix = matrix_of(reports)
    assert [c.label for c in matrix.columns] == ["memory", "broken", "partial"]
    assert [row.requirement for row in matrix.rows] == list(registry.ids())
    row = {r.requirement: r for r in matrix.rows}
    assert [c.verdict for c in row["LC-003"].cells] == ["pass", "fail", "pass"]
    assert [c.verdict for c in row["RT-002"].cells] == ["pass", "expected failure",
                                                         "not claimed"]
    assert [c.verdict for c in row["LC-005"].cells] == ["pass", "pass", "untested"]
    failing = row["LC-003"].cells[1]
    assert "a late completion overwrote cancelled" in failing.message
    assert [t.name for t in failing.traces] == ["machine-lc-003.json"]
    assert row["RT-002"].cells[1].reason == "backoff counted from attempt 1"


def test_cells_agree_with_each_reports_own_counts(reports: list[Path]) -> None:
    # The fold per cell is the report's own: counting the cells gives the report's counts.
    matrix = matrix_of(reports)
    for index, path in enumerate(reports):
        counts = json.loads(path.read_text())["counts"]
        assert matrix.counts(index) == counts


def test_pass_rates_count_only_checked_requirements(reports: list[Path],
                                                    registry: Registry) -> None:
    matrix = matrix_of(reports)
    # The reports are written under the canonical profile, which lacks the lifecycle
    # requirements of task-manager and draining-worker (LC-026..LC-028).
    lifecycle = len([r for r in registry.requirements
                     if r.area == "lifecycle" and "canonical" in r.profiles])
    assert matrix.rate("lifecycle", 0).passed == lifecycle
    assert matrix.rate("lifecycle", 1).passed == lifecycle - 1
    # The third claims `lifecycle` alone: LC-029 needs the health report too.
    assert matrix.rate("lifecycle", 2).checked == lifecycle - len(
        [r for r in registry.requirements
         if r.area == "lifecycle" and "canonical" in r.profiles and r.needs])
    assert matrix.rate("retry", 2).checked == 0 and matrix.rate("retry", 2).percent is None


def test_two_reports_of_one_backend_are_told_apart_by_folder(
        tmp_path: Path, registry: Registry) -> None:
    postgres = write_report(tmp_path / "postgres", registry, "sql")
    mariadb = write_report(tmp_path / "mariadb", registry, "sql")
    assert [c.label for c in matrix_of([postgres, mariadb]).columns] == [
        "sql (postgres)", "sql (mariadb)"]
    named = build_matrix([f"pg={postgres}", f"maria={mariadb}"])
    assert [c.label for c in named.columns] == ["pg", "maria"]


def test_a_folder_stands_for_every_report_under_it(reports: list[Path]) -> None:
    matrix = build_matrix([str(reports[0].parent.parent)])
    assert sorted(c.label for c in matrix.columns) == ["broken", "memory", "partial"]


def test_an_off_schema_report_is_refused_with_its_path(tmp_path: Path) -> None:
    bad = tmp_path / "report.json"
    bad.write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ReportError, match=re.escape(str(bad))):
        build_matrix([str(bad)])


def test_markdown_lists_backends_rates_and_differences(reports: list[Path]) -> None:
    markdown = to_markdown(matrix_of(reports))
    assert "| memory | — | canonical | 0 | ✅ pass |" in markdown  # no library wrapped
    assert "| broken | — | canonical | 0 | ❌ fail |" in markdown
    lifecycle_line = next(line for line in markdown.splitlines()
                          if line.startswith("| lifecycle |"))
    assert re.fullmatch(r"\| lifecycle \| (\d+)/\1 \| \d+/\d+ \| \d+/\d+ \|", lifecycle_line)
    assert "| retry | 11/11 | 10/11 | not claimed |" in markdown
    differing = markdown.split("### Requirements that do not pass everywhere")[1]
    assert "| LC-003 | lifecycle | MUST |" in differing
    assert "❌ fail" in differing and "⚠️ expected failure" in differing
    assert "| LC-001 |" not in differing  # passes wherever claimed


def test_badges_colour_by_verdict(reports: list[Path]) -> None:
    matrix = matrix_of(reports)
    good, broken, partial = (badge(matrix, i) for i in range(3))
    assert good["schemaVersion"] == 1 and good["color"] == "brightgreen"
    assert good["label"] == "jobconform memory"
    assert re.fullmatch(r"(\d+)/\1 passed", str(good["message"]))
    assert broken["color"] == "red" and "1 deviations" in str(broken["message"])
    assert partial["color"] == "red"


class _Page(HTMLParser):
    """Collects what the tests look at: elements by tag with attributes, and text."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(page: str) -> _Page:
    parser = _Page()
    parser.feed(page)
    return parser


def test_html_has_rows_cells_details_filters_and_chart(reports: list[Path],
                                                       registry: Registry) -> None:
    page_path = reports[0].parent.parent / "out" / "index.html"  # beside the reports
    matrix = matrix_of(reports)
    page = parse(to_html(matrix, page_path))
    rows = [a for tag, a in page.elements if tag == "tr" and a.get("class") == "req"]
    assert len(rows) == len(registry.requirements)
    lc3 = next(a for a in rows if a["id"] == "LC-003")
    assert lc3["data-area"] == "lifecycle" and lc3["data-verdicts"] == "fail pass"
    cells = [a for tag, a in page.elements if tag == "td" and "cell" in (a.get("class") or "")]
    assert len(cells) == 3 * len(registry.requirements)
    assert {a["class"] for a in cells} >= {"cell v-pass", "cell v-fail",
                                            "cell v-expected-failure", "cell v-untested",
                                            "cell v-not-claimed"}
    traces = [a["href"] for tag, a in page.elements if tag == "a" and a.get("class") == "trace"]
    assert "../broken/traces/machine-lc-003.json" in traces
    assert "a late completion overwrote cancelled" in "".join(page.text)
    selects = {a["id"] for tag, a in page.elements if tag == "select"}
    assert selects == {"filter-area", "filter-level", "filter-verdict"}
    bars = [a for tag, a in page.elements if tag == "rect" and a.get("class") == "bar"]
    assert len(bars) == 3 * len(matrix.areas)
    retry_partial = next(a for a in bars
                         if a["data-area"] == "retry" and a["data-backend"] == "partial")
    assert retry_partial["data-checked"] == "0" and retry_partial["width"] == "0.0"


def test_html_loads_nothing_from_outside(reports: list[Path], tmp_path: Path) -> None:
    page = to_html(matrix_of(reports), tmp_path / "index.html")
    assert "default-src 'none'" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


def test_html_escapes_report_text(tmp_path: Path, registry: Registry) -> None:
    path = write_report(tmp_path / "x", registry, "<b>evil</b>",
                        failing={"LC-001": "<script>alert(1)</script>"})
    page = to_html(matrix_of([path]), tmp_path / "index.html")
    assert "<script>alert(1)" not in page and "&lt;script&gt;alert(1)" in page
    assert "<b>evil</b>" not in page


def test_compare_command_writes_page_summary_and_badges(reports: list[Path],
                                                        tmp_path: Path) -> None:
    out = tmp_path / "compare"
    result = CliRunner().invoke(main, ["compare", *map(str, reports), "--output-dir", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "index.html").read_text().startswith("<!DOCTYPE html>")
    assert "side by side" in (out / "summary.md").read_text()
    badges = sorted(p.name for p in (out / "badges").iterdir())
    assert badges == ["broken.json", "memory.json", "partial.json"]
    assert "broken" in result.output and "fail" in result.output


def test_compare_command_fails_clearly_on_a_missing_report(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["compare", str(tmp_path / "nope.json")])
    assert result.exit_code == 2  # bad input: the usage-error code
    assert "cannot read the report" in result.output


def test_reports_of_two_spec_versions_are_flagged(tmp_path: Path, registry: Registry) -> None:
    new = write_report(tmp_path / "new", registry, "new")
    old = write_report(tmp_path / "old", registry, "old")
    document = json.loads(old.read_text())
    document["spec_version"] = "0.3.0"  # before the registry's 0.10.0, by number
    del document["requirements"]["LC-025"]  # a requirement the older spec did not have
    old.write_text(json.dumps(document))
    matrix = matrix_of([new, old])
    assert matrix.spec_versions == ["0.3.0", registry.version]
    row = next(r for r in matrix.rows if r.requirement == "LC-025")
    assert [c.verdict for c in row.cells] == ["pass", "n/a"]
    assert "different spec versions" in to_markdown(matrix)
    assert 'class="warning"' in to_html(matrix, tmp_path / "index.html")


def test_blocked_in_one_suite_shows_beside_the_folded_total(tmp_path: Path,
                                                             registry: Registry) -> None:
    # Behave passes LC-004 and LC-005; the failed machine never reached them. The fold
    # counts them as passes, and the runs table still says that the machine did not check them.
    path = write_report(tmp_path / "stopped", registry, "stopped",
                        failing={"LC-003": "wrong"}, unreached=["LC-004", "LC-005"])
    matrix = matrix_of([path])
    assert matrix.counts(0)["blocked"] == 0
    assert matrix.columns[0].suite_counts["hypothesis"] == {"blocked": 2, "untested": 0}
    run_row = next(line for line in to_markdown(matrix).splitlines()
                   if line.startswith("| stopped |"))
    assert "| 0 (hypothesis 2) |" in run_row
    assert "<td>0 (hypothesis 2)</td>" in to_html(matrix, tmp_path / "index.html")


def test_an_area_left_out_by_area_shows_as_not_run(tmp_path: Path,
                                                   registry: Registry) -> None:
    # `jobconform run --area lifecycle` on a backend claiming every area: retry was
    # claimed but not run, which is not the same as not claimed.
    path = write_report(tmp_path / "lifecycle-only", registry, "lifecycle-only",
                        areas=["lifecycle"])
    partial = write_report(tmp_path / "partial", registry, "partial",
                           capabilities={"lifecycle"})
    matrix = matrix_of([path, partial])
    row = {r.requirement: r for r in matrix.rows}
    assert [c.verdict for c in row["RT-002"].cells] == ["not run", "not claimed"]
    assert row["LC-001"].cells[0].verdict == "pass"
    assert matrix.counts(0)["not run"] == len(
        [r for r in registry.requirements if r.area != "lifecycle"
         and "canonical" in r.profiles and registry.profile("canonical").areas >= {r.area}])
    assert matrix.rate("retry", 0).unchecked == "not run"
    assert matrix.rate("retry", 1).unchecked == "not claimed"
    markdown = to_markdown(matrix)
    assert "| retry | not run | not claimed |" in markdown
    differing = markdown.split("### Requirements that do not pass everywhere")[1]
    assert "| RT-002 |" not in differing  # neither a failure nor a gap
    page = to_html(matrix, tmp_path / "index.html")
    assert 'class="cell v-not-run" data-verdict="not run"' in page
    assert ">not run</text>" in page  # the chart's label for the retry bar
    assert "<th>not run</th>" in page
