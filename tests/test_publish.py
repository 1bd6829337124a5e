"""`jobconform publish`: the compatibility page of the validated libraries, its findings,
and the staleness check that CI runs after the examples."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from compare_reports import write_report

from jobconform.conformance.cli import main
from jobconform.conformance.publish import VERDICTS_FILE, shortest_reproducer
from jobconform.spec import Registry

# A case message as the harness writes it: two divergences, each with its commands.
MESSAGE = """listed deviation(s) RT-002, RT-009: the case ran to its end past these deviations
  requirement(s): RT-002, RT-009
backend diverges from the spec after step 3 (ComputeDelay(attempt=2))
  requirement(s): RT-002 (Exponential delay, zero-indexed, capped); also involved: RT-009
  what: the answer to ComputeDelay(attempt=2)
  expected: 4000.0
  actual:   8000.0
  commands so far:
    1. Submit(job='a')
    2. Dispatch()
    3. ComputeDelay(attempt=2)
backend diverges from the spec after step 1 (ComputeDelay(attempt=10000))
  requirement(s): RT-002 (Exponential delay, zero-indexed, capped)
  what: the answer to ComputeDelay(attempt=10000)
  expected: 0.0
  actual:   60000.0
  commands so far:
    1. ComputeDelay(attempt=10000)
"""


def library_report(folder: Path, registry: Registry, name: str, **options: object) -> Path:
    """A library's report: made with a deviation list of its own, in examples/<name>."""
    deviations = folder.parent / "examples" / name / "expected-failures.yaml"
    deviations.parent.mkdir(parents=True, exist_ok=True)
    deviations.write_text("{}\n", encoding="utf-8")
    return write_report(folder / name, registry, name, expected_file=deviations,
                        **options)  # type: ignore[arg-type]


@pytest.fixture
def reports(tmp_path: Path, registry: Registry) -> Path:
    """reports/ holding two libraries (one with a listed deviation) and a kit run."""
    folder = tmp_path / "repo" / "reports"
    library_report(folder, registry, "fastq", capabilities={"lifecycle"})
    path = library_report(folder, registry, "slowq", capabilities={"lifecycle", "retry"},
                          expected={"RT-002": "its backoff overflows at a high attempt"})
    document = json.loads(path.read_text())
    for suite in document["suites"]:
        for case in suite["cases"]:
            if case["name"] == "machine RT-002":
                case["message"] = MESSAGE
    path.write_text(json.dumps(document))
    write_report(folder / "memory", registry, "memory")  # no deviation list: not a library
    return folder


def publish(*arguments: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["publish", *arguments])
    return result.exit_code, result.output


def test_the_page_holds_every_library_and_none_of_the_kits_runs(reports: Path) -> None:
    page = reports.parent / "docs" / "compatibility"
    code, output = publish(str(reports), "--output-dir", str(page))
    assert code == 0, output
    assert "published 2 libraries (fastq, slowq)" in output
    verdicts = json.loads((page / VERDICTS_FILE).read_text())
    assert sorted(verdicts["libraries"]) == ["fastq", "slowq"]
    slowq = verdicts["libraries"]["slowq"]
    assert slowq["requirements"]["RT-002"] == "expected failure"
    assert slowq["deviations"] == {"RT-002": "its backoff overflows at a high attempt"}
    assert verdicts["libraries"]["fastq"]["requirements"]["RT-002"] == "not claimed"
    assert sorted(p.name for p in (page / "badges").iterdir()) == ["fastq.json", "slowq.json"]
    html = (page / "index.html").read_text()
    assert '<th class="backend" data-backend="slowq">' in html
    assert 'href="findings/slowq-RT-002.md">finding and reproducer' in html
    # Each column links its deviation list in the repository, not the (ignored) report.
    assert 'href="../../examples/slowq/expected-failures.yaml">deviation list' in html
    readme = (page / "README.md").read_text()
    assert ("- **slowq**, [RT-002](findings/slowq-RT-002.md): its backoff overflows at a"
            " high attempt") in readme
    assert "| retry | not claimed | 9/10 |" in readme
    # The whole matrix of the claimed areas, for readers on the repository's web view.
    claimed = readme.split("## Every requirement of the areas the libraries claim")[1]
    assert "### lifecycle" in claimed and "### retry" in claimed
    assert "### breaker" not in claimed  # no library claims it
    assert "| RT-002 | MUST | Exponential delay, zero-indexed, capped | ⬜ not claimed |" \
        " ⚠️ expected failure |" in claimed


def test_a_finding_says_what_the_spec_and_the_library_do_with_the_shortest_case(
        reports: Path, registry: Registry) -> None:
    page = reports.parent / "docs" / "compatibility"
    assert publish(str(reports), "--output-dir", str(page))[0] == 0
    finding = (page / "findings" / "slowq-RT-002.md").read_text()
    statement = registry.requirement("RT-002").statement.strip().splitlines()[0]
    assert finding.startswith("# slowq: RT-002 Exponential delay, zero-indexed, capped")
    assert f"> {statement}" in finding
    assert "its backoff overflows at a high attempt" in finding
    # Of the two divergences on RT-002, the one-command case (the other has three).
    assert "1. ComputeDelay(attempt=10000)\n```" in finding
    assert "- the spec's answer: 0.0" in finding and "- slowq's answer: 60000.0" in finding
    assert "Submit(job='a')" not in finding
    assert "](../../../examples/slowq/expected-failures.yaml)" in finding
    assert "--requirement RT-002" in finding


def test_the_shortest_reproducer_picks_the_requirements_own_divergence(
        reports: Path) -> None:
    path = reports / "slowq" / "report.json"
    document = json.loads(path.read_text())
    found = shortest_reproducer(document, path, "RT-002")
    assert found is not None and found.commands == ("ComputeDelay(attempt=10000)",)
    assert found.case == "hypothesis: machine RT-002"
    assert shortest_reproducer(document, path, "RT-009") is None  # never a primary here


def test_the_same_reports_publish_the_same_bytes_with_no_absolute_path(
        reports: Path) -> None:
    page = reports.parent / "docs" / "compatibility"
    assert publish(str(reports), "--output-dir", str(page))[0] == 0
    first = {p.relative_to(page): p.read_bytes() for p in page.rglob("*") if p.is_file()}
    assert publish(str(reports), "--output-dir", str(page))[0] == 0
    second = {p.relative_to(page): p.read_bytes() for p in page.rglob("*") if p.is_file()}
    assert first == second
    root = str(reports.parent.resolve()).encode()
    assert not [name for name, data in first.items() if root in data]


def test_the_check_passes_on_a_fresh_page_and_fails_on_a_changed_verdict(
        reports: Path, registry: Registry) -> None:
    page = reports.parent / "docs" / "compatibility"
    assert publish(str(reports), "--output-dir", str(page))[0] == 0
    code, output = publish(str(reports), "--check", str(page))
    assert code == 0, output
    assert "agrees with the reports (fastq, slowq)" in output
    # fastq now fails LC-003, and a third library has a report but no place on the page.
    library_report(reports, registry, "fastq", capabilities={"lifecycle"},
                   failing={"LC-003": "a late completion overwrote cancelled"})
    library_report(reports, registry, "newq", capabilities={"lifecycle"})
    code, output = publish(str(reports), "--check", str(page))
    assert code == 1
    assert "fastq LC-003: 'pass' on the page, now 'fail'" in output
    assert "newq: reported, but not on the page" in output
    assert "To refresh it:" in output and "jobconform publish reports" in output
    assert json.loads((page / VERDICTS_FILE).read_text())["libraries"].keys() == {
        "fastq", "slowq"}, "the check wrote to the committed page"


def test_the_check_ignores_what_changes_without_a_verdict(reports: Path) -> None:
    page = reports.parent / "docs" / "compatibility"
    assert publish(str(reports), "--output-dir", str(page))[0] == 0
    path = reports / "slowq" / "report.json"
    document = json.loads(path.read_text())
    for suite in document["suites"]:
        suite["seconds"] += 12.5  # another machine, another load
    path.write_text(json.dumps(document))
    assert publish(str(reports), "--check", str(page))[0] == 0


def test_a_library_missing_its_report_is_named(reports: Path, tmp_path: Path) -> None:
    page = reports.parent / "docs" / "compatibility"
    assert publish(str(reports), "--output-dir", str(page))[0] == 0
    (reports / "fastq" / "report.json").unlink()
    code, output = publish(str(reports), "--check", str(page))
    assert code == 1
    assert "fastq: on the page, but no report of it (run its tox environment)" in output


def test_reports_without_a_deviation_list_make_no_page(tmp_path: Path,
                                                         registry: Registry) -> None:
    write_report(tmp_path / "reports" / "memory", registry, "memory")
    code, output = publish(str(tmp_path / "reports"), "--output-dir", str(tmp_path / "out"))
    assert code == 2
    assert "no report under" in output and "--expected-failures" in output


def test_the_committed_page_is_whole_and_portable() -> None:
    page = Path(__file__).resolve().parents[1] / "docs" / "compatibility"
    verdicts = json.loads((page / VERDICTS_FILE).read_text(encoding="utf-8"))
    assert verdicts["libraries"], "the published page lists no library"
    readme = (page / "README.md").read_text(encoding="utf-8")
    for name, body in verdicts["libraries"].items():
        assert (page / "badges" / f"{name}.json").is_file()
        for rid in body["deviations"]:
            assert (page / "findings" / f"{name}-{rid}.md").is_file()
            assert f"[{rid}](findings/{name}-{rid}.md)" in readme
    for path in page.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            assert 'href="/' not in text and "](/" not in text and "file://" not in text, (
                f"{path} links an absolute path: publish from the checkout")


def test_a_further_run_in_a_subfolder_joins_its_librarys_column(reports: Path,
                                                                registry: Registry) -> None:
    # fastq claims lifecycle; a second adapter module checks the stuck area in a run of
    # its own (--area stuck) with a deviation list of its own, in reports/fastq/stuck.
    stuck_list = reports.parent / "examples" / "fastq" / "expected-failures-stuck.yaml"
    stuck_list.write_text("{}\n", encoding="utf-8")
    write_report(reports / "fastq" / "stuck", registry, "fastq",
                 capabilities={"lifecycle", "stuck"}, areas={"stuck"},
                 expected={"ST-003": "its bound is inclusive"}, expected_file=stuck_list)
    page = reports.parent / "docs" / "compatibility"
    code, output = publish(str(reports), "--output-dir", str(page))
    assert code == 0, output
    assert "published 2 libraries (fastq, slowq)" in output  # one column for fastq's runs
    fastq = json.loads((page / VERDICTS_FILE).read_text())["libraries"]["fastq"]
    # Lifecycle from its own run (not run in the stuck run), stuck from the further run.
    assert fastq["requirements"]["LC-001"] == "pass"
    assert fastq["requirements"]["ST-002"] == "pass"
    assert fastq["requirements"]["ST-003"] == "expected failure"
    assert fastq["requirements"]["RT-002"] == "not claimed"
    assert fastq["deviations"] == {"ST-003": "its bound is inclusive"}
    finding = (page / "findings" / "fastq-ST-003.md").read_text()
    assert "(../../../examples/fastq/expected-failures-stuck.yaml)" in finding
    html = (page / "index.html").read_text()
    assert 'href="../../examples/fastq/expected-failures.yaml">deviation list' in html
    # The check sees the joined column as the page has it.
    assert publish(str(reports), "--check", str(page))[0] == 0


def test_a_deviation_listed_in_two_runs_of_one_library_is_refused(reports: Path,
                                                                 registry: Registry) -> None:
    write_report(reports / "slowq" / "again", registry, "slowq",
                 capabilities={"lifecycle", "retry"}, areas={"retry"},
                 expected={"RT-002": "listed again"},
                 expected_file=reports.parent / "examples" / "slowq" / "expected-failures.yaml")
    code, output = publish(str(reports), "--output-dir", str(reports.parent / "page"))
    assert code != 0 and "RT-002 is listed in two of its runs' deviation lists" in output


def test_an_entry_listed_for_some_suites_says_so_in_its_finding(reports: Path,
                                                               registry: Registry) -> None:
    # A further run whose entry is limited to the machine (`suites: [hypothesis]`).
    machine_list = reports.parent / "examples" / "fastq" / "expected-failures-stuck.yaml"
    machine_list.write_text("{}\n", encoding="utf-8")
    path = write_report(reports / "fastq" / "stuck", registry, "fastq",
                        capabilities={"lifecycle", "stuck"}, areas={"stuck"},
                        expected={"ST-003": "its bound is inclusive"},
                        expected_file=machine_list)
    document = json.loads(path.read_text())
    document["expected_failures"]["ST-003"]["suites"] = ["hypothesis"]
    path.write_text(json.dumps(document))
    page = reports.parent / "docs" / "compatibility"
    code, output = publish(str(reports), "--output-dir", str(page))
    assert code == 0, output
    fastq = json.loads((page / VERDICTS_FILE).read_text())["libraries"]["fastq"]
    reason = "its bound is inclusive (listed for hypothesis only)"
    assert fastq["deviations"] == {"ST-003": reason}
    assert reason in (page / "findings" / "fastq-ST-003.md").read_text()
    assert publish(str(reports), "--check", str(page))[0] == 0
