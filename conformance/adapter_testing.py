"""Helpers for an adapter's own pytest tests: the servers it needs, its folder on the import
path, and its conformance run in this process, read back as a report.

The worked examples in `examples/` each test a real library's adapter this way; an SDK's
tests can do the same. Each test still says what it expects of the report: these helpers
only run the kit and read what it wrote.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from jobconform.conformance.cli import main


def need_server(name: str, address: str, probe: Callable[[], object],
                errors: tuple[type[BaseException], ...] = (OSError,)) -> None:
    """Skip the test when a server the adapter needs does not answer; under CI=true fail it,
    as CI must have every server running.

    Args:
        name: the server, as the message names it ("Redis").
        address: where it should listen ("127.0.0.1:6379").
        probe: a call that reaches it, raising one of `errors` when it cannot.
        errors: what `probe` raises for a server that is not there.
    """
    try:
        probe()
    except errors as error:
        message = f"{name} is not running on {address}: {error}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


def adapter_importable(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """Put the adapter's folder on the import path of this process and of the children a
    run starts (Behave's), for the rest of the test."""
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", str(folder))


@dataclass(frozen=True)
class KitRun:
    """One `jobconform run`: its exit code, its console output and its report.json."""

    exit_code: int
    output: str
    report: dict[str, Any]

    def verdicts(self, suite: str) -> dict[str, str]:
        """Each requirement's verdict in one suite."""
        return {rid: body["suites"][suite] for rid, body in self.report["requirements"].items()}

    def requirements_with(self, verdict: str) -> set[str]:
        """The requirements that got `verdict` in at least one suite."""
        return {rid for rid, body in self.report["requirements"].items()
                if verdict in body["suites"].values()}


def run_kit(backend: str, report_dir: Path, *options: str) -> KitRun:
    """`jobconform run --backend BACKEND --report-dir REPORT_DIR OPTIONS...` in this process.

    Args:
        backend: the adapter, as `module:attr` or an entry-point name.
        report_dir: where the run writes report.json (a test's `tmp_path`).
        options: any other options of `jobconform run`.

    Returns:
        The run, with the report it wrote.
    """
    result = CliRunner().invoke(main, ["run", "--backend", backend, "--report-dir",
                                       str(report_dir), *options])
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    return KitRun(result.exit_code, result.output, report)
