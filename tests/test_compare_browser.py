"""The comparison page in a real browser: Debian's headless Chromium runs its script, the
test reads the DOM it leaves and keeps a screenshot with the test artefacts.

The filters live in the page's query string, so a URL such as `index.html?verdict=fail`
drives them without a browser-automation library: Chromium loads it, the script applies
the filter, and `--dump-dom` shows which rows it hid.

With CI=true a missing `chromium` fails the test (.ci/run installs it); elsewhere it skips.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from compare_reports import write_report

from jobconform.conformance.cli import main
from jobconform.spec import Registry

ROOT = Path(__file__).resolve().parents[1]
# Screenshots land here (a CI artefact folder); JOBCONFORM_TEST_ARTIFACTS moves them.
ARTIFACTS = Path(os.environ.get("JOBCONFORM_TEST_ARTIFACTS", ROOT / "reports" / "test-artifacts"))
# A real-time safety limit on one browser run; a page this size renders in seconds.
BROWSER_TIMEOUT_SECONDS = 120
HEADLESS_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--hide-scrollbars",
                  # Let the page's script finish before the DOM is dumped or drawn.
                  "--virtual-time-budget=5000")


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = ("Debian's `chromium` is not installed (apt-get install -y chromium;"
                   " .ci/run installs it)")
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def browse(url: str, profile: Path, *extra: str) -> str:
    command = [chromium(), *HEADLESS_FLAGS, f"--user-data-dir={profile}", *extra, url]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              timeout=BROWSER_TIMEOUT_SECONDS)
    except subprocess.TimeoutExpired as error:
        raise AssertionError(f"chromium did not finish within {BROWSER_TIMEOUT_SECONDS} s:"
                             f" {' '.join(command)}") from error
    assert done.returncode == 0, f"chromium exited {done.returncode}:\n{done.stderr[-3000:]}"
    return done.stdout


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.texts: dict[str, str] = {}
        self._open_id: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        self.elements.append((tag, attributes))
        self._open_id = attributes.get("id")

    def handle_endtag(self, tag: str) -> None:
        self._open_id = None

    def handle_data(self, data: str) -> None:
        if self._open_id is not None:
            self.texts[self._open_id] = self.texts.get(self._open_id, "") + data


def dom(text: str) -> _Dom:
    parser = _Dom()
    parser.feed(text)
    return parser


def requirement_rows(page: _Dom) -> list[dict[str, str | None]]:
    return [a for tag, a in page.elements if tag == "tr" and a.get("class") == "req"]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory, registry: Registry) -> Path:
    tmp_path = tmp_path_factory.mktemp("page")
    reports = [
        write_report(tmp_path / "memory", registry, "memory"),
        write_report(tmp_path / "broken", registry, "broken",
                     failing={"LC-003": "a late completion overwrote a cancelled job"},
                     expected={"RT-002": "backoff counted from attempt 1"}),
        write_report(tmp_path / "partial", registry, "partial",
                     capabilities={"lifecycle", "retry"}, untested=["LC-005"]),
    ]
    out = tmp_path / "compare"
    result = CliRunner().invoke(main, ["compare", *map(str, reports), "--output-dir", str(out)])
    assert result.exit_code == 0, result.output
    return out / "index.html"


def test_the_page_renders_every_row_and_the_chart(page: Path, tmp_path: Path,
                                                  registry: Registry) -> None:
    loaded = dom(browse(page.as_uri(), tmp_path / "profile", "--dump-dom"))
    rows = requirement_rows(loaded)
    assert len(rows) == len(registry.requirements)
    assert not [a["id"] for a in rows if "hidden" in a], "no filter chosen, yet rows hidden"
    assert loaded.texts["shown"] == str(len(registry.requirements))
    bars = [a for tag, a in loaded.elements if tag == "rect" and a.get("class") == "bar"]
    assert len(bars) == 3 * len({r.area for r in registry.requirements})
    trace_links = [a["href"] for tag, a in loaded.elements
                   if tag == "a" and a.get("class") == "trace"]
    assert "../broken/traces/machine-lc-003.json" in trace_links


def test_the_filters_hide_what_does_not_match(page: Path, tmp_path: Path) -> None:
    failing = dom(browse(page.as_uri() + "?verdict=fail", tmp_path / "p1", "--dump-dom"))
    shown = [a["id"] for a in requirement_rows(failing) if "hidden" not in a]
    assert shown == ["LC-003"]
    assert failing.texts["shown"] == "1"
    hidden_areas = {a["data-area"] for tag, a in failing.elements
                    if tag == "tbody" and "hidden" in a}
    assert "retry" in hidden_areas and "lifecycle" not in hidden_areas
    combined = dom(browse(page.as_uri() + "?area=retry&level=MUST", tmp_path / "p2",
                          "--dump-dom"))
    shown_rows = [a for a in requirement_rows(combined) if "hidden" not in a]
    assert shown_rows
    assert {(a["data-area"], a["data-level"]) for a in shown_rows} == {("retry", "MUST")}


def test_a_screenshot_is_kept_with_the_test_artefacts(page: Path, tmp_path: Path) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    picture = ARTIFACTS / "compare-page.png"
    picture.unlink(missing_ok=True)
    browse(page.as_uri(), tmp_path / "profile", f"--screenshot={picture}",
           "--window-size=1400,1600")
    data = picture.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 20_000, "the screenshot is nearly empty: the page did not render"


# The published compatibility page (jobconform publish; `tox -e compare` checks it is not
# stale against the examples' reports).
COMPATIBILITY = ROOT / "docs" / "compatibility"


def test_the_published_compatibility_page_renders(tmp_path: Path, registry: Registry) -> None:
    verdicts = json.loads((COMPATIBILITY / "verdicts.json").read_text(encoding="utf-8"))
    page = (COMPATIBILITY / "index.html").as_uri()
    loaded = dom(browse(page, tmp_path / "profile", "--dump-dom"))
    assert len(requirement_rows(loaded)) == len(registry.requirements)
    columns = [a["data-backend"] for tag, a in loaded.elements
               if tag == "th" and a.get("class") == "backend"]
    assert columns == sorted(verdicts["libraries"])
    findings = {a["href"] for tag, a in loaded.elements
                if tag == "a" and a.get("class") == "finding"}
    assert findings == {f"findings/{name}-{rid}.md"
                        for name, body in verdicts["libraries"].items()
                        for rid in body["deviations"]}
    listed = dom(browse(page + "?verdict=expected-failure", tmp_path / "p1", "--dump-dom"))
    shown = {a["id"] for a in requirement_rows(listed) if "hidden" not in a}
    assert shown == {rid for body in verdicts["libraries"].values()
                     for rid in body["deviations"]}
