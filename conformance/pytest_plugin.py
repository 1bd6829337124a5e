"""A pytest plugin: an SDK's own test suite runs the conformance run and fails on its verdict.

    pytest --jobconform-backend mypkg.adapter:Backend \
        --jobconform-expected-failures expected-failures.yaml

adds one test item, `jobconform[mypkg.adapter:Backend]`, to whatever else pytest collects.
It runs `jobconform run` with those options in a child interpreter, so the run is the same
as on the command line (Hypothesis settings, imports and the clock bridges of the test
session cannot reach it), and passes or fails with the run's verdict. The report lands in
the usual place, `reports/` under the folder pytest was started from, or
`--jobconform-report-dir`. Without `--jobconform-backend` the plugin adds nothing.

pytest loads it through the `pytest11` entry point of the installed kit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jobconform", "jobconform: the conformance run of a job runtime")
    group.addoption("--jobconform-backend", metavar="MODULE:ATTR", default=None,
                    help="Run the conformance suites against this backend as one test"
                         " (an entry-point name or module:attr).")
    group.addoption("--jobconform-profile", default=None,
                    help="The profile to judge it under (default: the backend's).")
    group.addoption("--jobconform-expected-failures", metavar="FILE", default=None,
                    help="Its known deviations (expected-failures YAML).")
    group.addoption("--jobconform-report-dir", metavar="DIR", default="reports",
                    help="Where report.json and junit.xml go (default: reports).")
    group.addoption("--jobconform-area", action="append", default=[], metavar="AREA",
                    help="Run only this area (repeatable); the rest is reported 'not run'.")
    group.addoption("--jobconform-suite", action="append", default=[],
                    choices=("behave", "robot", "hypothesis"),
                    help="Run only this suite (repeatable; default: all three).")
    group.addoption("--jobconform-examples", type=int, default=None, metavar="N",
                    help="Hypothesis examples per machine (default: jobconform's).")
    group.addoption("--jobconform-seed", type=int, default=None, metavar="SEED",
                    help="Hypothesis seed (default: 0).")


def run_arguments(config: pytest.Config, report_dir: Path) -> list[str]:
    """`jobconform run` arguments from the plugin's options."""
    option = config.option
    arguments = ["--backend", option.jobconform_backend, "--report-dir", str(report_dir)]
    for flag, value in (("--profile", option.jobconform_profile),
                        ("--expected-failures", option.jobconform_expected_failures),
                        ("--examples", option.jobconform_examples),
                        ("--seed", option.jobconform_seed)):
        if value is not None:
            arguments += [flag, str(value)]
    for area in option.jobconform_area:
        arguments += ["--area", area]
    for suite in option.jobconform_suite:
        arguments += ["--suite", suite]
    return arguments


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect, so they apply to it too
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    backend = config.option.jobconform_backend
    if backend is None:
        return
    start = config.invocation_params.dir
    report_dir = start / config.option.jobconform_report_dir
    name = f"jobconform[{backend}]"
    items.append(ConformanceItem.from_parent(
        session, name=name, nodeid=name, arguments=run_arguments(config, report_dir),
        report_dir=report_dir))


class ConformanceFailed(Exception):
    """The run's verdict was fail (or it could not run): what to show for it."""


def _child_path() -> str:
    """PYTHONPATH for the run: the adapter must import there as it does here, where
    pytest's rootdir, its `pythonpath` setting and conftest folders are on sys.path."""
    default = (Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve())
    extra = [entry for entry in sys.path if entry
             and not any(Path(entry).resolve().is_relative_to(root) for root in default)]
    inherited = os.environ.get("PYTHONPATH", "")
    return os.pathsep.join([*extra, *([inherited] if inherited else [])])


def _failure_text(report: Path, output: str) -> str:
    """The failing requirements and problems of the report, then the run's last lines."""
    # Imported here: pytest loads this plugin in every session of an environment that has
    # the kit, and most of them never run it.
    from jobconform.conformance.report import FAILING

    lines = []
    try:
        document: dict[str, Any] = json.loads(report.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        document = {}
    for rid, body in document.get("requirements", {}).items():
        bad = {suite: verdict for suite, verdict in body["suites"].items()
               if verdict in FAILING}
        if bad:
            shown = ", ".join(f"{suite} {verdict}" for suite, verdict in bad.items())
            lines.append(f"{rid} {body['title']}: {shown}")
    lines += [f"problem: {problem}" for problem in document.get("expectation_problems", [])]
    # The console table lists every requirement; its tail has the failed cases and counts.
    tail = output.strip().splitlines()[-40:]
    return "\n".join([*lines, "", *tail, "", f"report: {report}"])


class ConformanceItem(pytest.Item):
    """The conformance run of one backend, as one test."""

    def __init__(self, *, arguments: list[str], report_dir: Path, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.arguments = arguments
        self.report_dir = report_dir

    def runtest(self) -> None:
        report = self.report_dir / "report.json"
        report.unlink(missing_ok=True)  # a verdict read below is this run's, never an old one
        command = [sys.executable, "-m", "jobconform.conformance.cli", "run", *self.arguments]
        done = subprocess.run(command, capture_output=True, text=True, check=False,
                              cwd=self.config.invocation_params.dir,
                              env={**os.environ, "PYTHONPATH": _child_path()})
        if done.returncode != 0:
            raise ConformanceFailed(f"`jobconform run {' '.join(self.arguments)}` exited"
                                    f" {done.returncode}:\n"
                                    + _failure_text(report, done.stdout + done.stderr))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.name
