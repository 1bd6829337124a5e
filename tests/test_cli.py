"""The command line: the main job, clear errors for bad input, listings and the spec gate."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from click.testing import CliRunner

from jobconform.conformance.cli import main
from jobconform.spec import load_registry


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_run_reports_every_verdict_kind_in_the_summary_report_and_junit(tmp_path: Path) -> None:
    # The report's layout, on one area: every suite passes it, the areas memory does not
    # claim are "not claimed", the other profiles' requirements "n/a", the rest "not run".
    # A whole memory run is the tox environment `conformance` (100 examples, which fails on
    # any requirement failed or untested); whether 30 examples reach every requirement is
    # checked by conformance-postgres and conformance-mariadb, which run 30 and fail on an
    # untested one themselves. This test ran all of memory at 40 as well, about 70 CPU-s.
    code, output = invoke("run", "--backend", "memory", "--area", "store", "--examples", "30",
                          "--report-dir", str(tmp_path))
    registry = load_registry()
    assert code == 0, output
    # Requirements of other profiles only (TS-009: task-manager) are n/a under canonical.
    applicable = [r for r in registry.requirements if "canonical" in r.profiles]
    outside = len(registry.requirements) - len(applicable)
    # The memory backend keeps the commanded mode, and its jobs live in the process: the
    # self-running and restart areas are not claimed.
    unclaimed = [r for r in applicable if r.area in ("self-running", "restart")]
    checked = [r for r in applicable if r.area == "store"]
    not_run = [r for r in applicable if r not in unclaimed and r not in checked]
    assert checked and not_run
    assert (f"requirements: {len(checked)} passed, 0 failed, 0 untested,"
            f" {len(unclaimed)} not claimed, {outside} not applicable,"
            f" {len(not_run)} not run") in output
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["verdict"] == "pass"
    for requirement in unclaimed:
        verdicts = report["requirements"][requirement.id]["suites"]
        assert set(verdicts.values()) == {"not claimed"}
    for requirement in checked:
        verdicts = report["requirements"][requirement.id]["suites"]
        assert verdicts == {"behave": "pass", "robot": "pass", "hypothesis": "pass"}
    suites = ET.parse(tmp_path / "junit.xml").getroot().findall("testsuite")
    assert [suite.get("name") for suite in suites] == ["behave", "robot", "hypothesis"]
    assert all(suite.get("failures") == "0" for suite in suites)


def test_run_fails_and_names_the_requirement_for_a_broken_backend(tmp_path: Path) -> None:
    # The broken part is the lifecycle area's; the other machines would only add minutes.
    code, output = invoke("run", "--backend",
                          "jobconform.conformance.lifecycle.gallery:late_completion",
                          "--suite", "hypothesis", "--examples", "50", "--area", "lifecycle",
                          "--report-dir", str(tmp_path))
    assert code == 1
    assert "LC-003" in output
    assert "commands so far" in output


def test_unknown_backend_is_a_clear_error(tmp_path: Path) -> None:
    code, output = invoke("run", "--backend", "nosuch", "--report-dir", str(tmp_path))
    assert code != 0
    assert "unknown backend 'nosuch'; installed backends: memory" in output
    assert not (tmp_path / "report.json").exists()


def test_unknown_profile_is_a_clear_error(tmp_path: Path) -> None:
    code, output = invoke("run", "--profile", "nope", "--report-dir", str(tmp_path))
    assert code != 0
    assert "unknown profile 'nope'" in output


def test_a_profile_run_applies_the_profiles_requirements(tmp_path: Path) -> None:
    # `tox -e spec` runs the oracle under every profile at the full example count; here,
    # cheaply, that --profile reaches the run: TS-009 is n/a under canonical only.
    code, output = invoke("run", "--profile", "task-manager", "--area", "store",
                          "--examples", "10", "--report-dir", str(tmp_path))
    assert code == 0, output
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["profile"] == "task-manager"
    assert report["requirements"]["TS-009"]["suites"] == {
        "behave": "pass", "robot": "pass", "hypothesis": "pass"}


def test_list_shows_backends_profiles_requirements_and_gallery() -> None:
    code, output = invoke("list")
    assert code == 0
    for expected in ("memory", "task-manager", "pending/running/completed", "LC-025",
                     "late_completion"):
        assert expected in output


def test_list_profiles_shows_each_profiles_areas_and_defaults() -> None:
    code, output = invoke("list", "profiles")
    assert code == 0, output
    blocks: dict[str, str] = {}
    for line in output.splitlines()[1:]:
        if not line.startswith("    "):  # a profile's first line; its details are indented
            name = line.split(":", 1)[0].strip()
        blocks[name] = blocks.get(name, "") + line + "\n"
    registry = load_registry()
    assert blocks.keys() == registry.profiles.keys()
    manager = blocks["task-manager"]
    assert "pending/running/completed/failed/cancelled" in manager
    assert "areas: lifecycle, reaper, retry, store\n" in manager
    assert "max_concurrent 10, max_tasks 1000" in manager
    assert "lifecycle: cancel_running interrupt, shutdown_mode cancel" in manager
    assert "breaker: failure_threshold 5, counted_classes auth,timeout,agent_error" in (
        blocks["pybreaker"])
    for name, profile in registry.profiles.items():
        assert f"areas: {', '.join(sorted(profile.areas))}" in blocks[name]
        for area in profile.area_parameters:
            assert f"\n    {area}: " in blocks[name], (name, area)


def test_spec_check_passes_on_the_shipped_spec() -> None:
    # The oracle run of the gate is `tox -e spec`'s job; here the static checks.
    code, output = invoke("spec", "check", "--no-run")
    assert code == 0, output
    assert "lock up to date" in output
    assert "seed coverage: " in output and " partly, " in output


def test_behave_is_not_forked_while_the_process_holds_a_socket() -> None:
    # A database or broker connection an adapter keeps would be shared with the fork.
    import socket

    from jobconform.conformance.runner import _can_fork, _holds_sockets

    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert _holds_sockets() and not _can_fork()
