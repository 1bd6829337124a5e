"""Running the three front-ends against one backend and collecting per-case results.

Behave runs in a child process (its step registry is process-global, so a second run in
one process would see every step twice); Robot Framework and Hypothesis run in process.
Each case records the requirement IDs it covers (its tags, or what the oracle exercised)
and, when it fails, the IDs its divergence named.
"""

from __future__ import annotations

import importlib.util
import io
import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jobconform.backends.loading import load_backend
from jobconform.backends.protocol import Backend
from jobconform.conformance.harness import AdapterError
from jobconform.conformance.machines import MACHINES, MachineEntry
from jobconform.spec import Profile, Registry

SUITES = ("behave", "robot", "hypothesis")
REQUIREMENT_ID = re.compile(r"\b[A-Z]{2,4}-\d{3}\b")
NAMED_LINE = re.compile(r"requirement\(s\): (.*)")
# A real-time limit on the Behave child process: generous, and only a guard against a
# hung adapter (the faulthandler guard inside the harness normally fires first).
BEHAVE_TIMEOUT_SECONDS = 600


@dataclass(frozen=True)
class CaseResult:
    suite: str
    name: str
    requirements: tuple[str, ...]
    passed: bool
    message: str = ""
    blamed: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunConfig:
    backend: str
    profile: str
    suites: tuple[str, ...] = SUITES
    seed: int = 0
    examples: int = 200
    work_dir: Path = Path("reports")


@dataclass
class SuiteRun:
    suite: str
    seconds: float
    cases: list[CaseResult] = field(default_factory=list)
    steps: int = 0  # Hypothesis only: commands executed


def blamed_requirements(message: str) -> tuple[str, ...]:
    """The requirement IDs a divergence message names (first `requirement(s):` line)."""
    match = NAMED_LINE.search(message)
    return tuple(REQUIREMENT_ID.findall(match.group(1))) if match else ()


def _tags(raw: list[str]) -> tuple[str, ...]:
    return tuple(tag.lstrip("@") for tag in raw if REQUIREMENT_ID.fullmatch(tag.lstrip("@")))


def suite_folder(package: str) -> Path:
    """The directory of a packaged suite (`jobconform.features`, `jobconform.robot`).

    These folders are namespace packages on purpose: a `robot/__init__.py` would shadow
    Robot Framework itself whenever Python runs from the repository root. Namespace
    packages have no resource reader, so they are located through their import spec.
    """
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    if not locations:
        raise FileNotFoundError(f"the suite folder {package} is not installed; reinstall"
                                " jobconform (pip install .) so its data files are present")
    return Path(locations[0])


def run_behave(config: RunConfig) -> SuiteRun:
    started = time.perf_counter()
    config.work_dir.mkdir(parents=True, exist_ok=True)
    json_path = config.work_dir / "behave.json"
    json_path.unlink(missing_ok=True)
    command = [
        sys.executable, "-m", "behave", str(suite_folder("jobconform.features")),
        "-D", f"backend={config.backend}", "-D", f"profile={config.profile}",
        "--format", "json", "--outfile", str(json_path),
        "--no-capture", "--no-color", "--no-summary", "--no-snippets",
    ]
    try:
        finished = subprocess.run(command, capture_output=True, text=True,
                                  timeout=BEHAVE_TIMEOUT_SECONDS, check=False)
        output = finished.stdout + finished.stderr
    except subprocess.TimeoutExpired as error:
        output = f"behave did not finish within {BEHAVE_TIMEOUT_SECONDS} s: {error}"
    (config.work_dir / "behave.log").write_text(output, encoding="utf-8")
    run = SuiteRun("behave", 0.0)
    produced = json_path.exists() and json_path.stat().st_size > 0
    if produced:
        run.cases = list(_behave_cases(json.loads(json_path.read_text(encoding="utf-8"))))
    if not produced:
        tail = "\n".join(output.strip().splitlines()[-15:])
        run.cases = [CaseResult("behave", "behave run", (), False,
                                f"behave produced no results:\n{tail}")]
    run.seconds = time.perf_counter() - started
    return run


def _behave_cases(features: list[dict[str, Any]]) -> Iterator[CaseResult]:
    for feature in features:
        feature_tags = list(feature.get("tags", []))
        for scenario in feature.get("elements", []):
            if scenario.get("type") == "background":
                continue
            errors = [
                "\n".join(step["result"].get("error_message") or [])
                if isinstance(step["result"].get("error_message"), list)
                else str(step["result"].get("error_message") or "")
                for step in scenario.get("steps", [])
                if step.get("result", {}).get("status") in ("failed", "error")
            ]
            status = scenario.get("status", "failed")
            if status == "skipped":
                continue  # not claimed or not applicable: the verdicts say so, not the case
            message = "\n".join(errors) or ("" if status == "passed" else f"status {status}")
            yield CaseResult(
                suite="behave",
                name=f"{feature.get('name', '?')}: {scenario.get('name', '?')}",
                requirements=_tags(feature_tags + list(scenario.get("tags", []))),
                passed=status == "passed",
                message=message,
                blamed=blamed_requirements(message),
            )


def run_robot(config: RunConfig) -> SuiteRun:
    from robot.api import ExecutionResult
    from robot.run import run as run_robot_suites

    started = time.perf_counter()
    out_dir = config.work_dir / "robot"
    out_dir.mkdir(parents=True, exist_ok=True)
    console = io.StringIO()
    run_robot_suites(
        str(suite_folder("jobconform.robot")), outputdir=str(out_dir), output="output.xml",
        log="NONE", report="NONE",
        variable=[f"BACKEND:{config.backend}", f"PROFILE:{config.profile}"],
        stdout=console, stderr=console, consolecolors="off",
    )
    (config.work_dir / "robot.log").write_text(console.getvalue(), encoding="utf-8")
    run = SuiteRun("robot", 0.0)
    output = out_dir / "output.xml"
    if output.exists():
        result = ExecutionResult(str(output))
        for test in result.suite.all_tests:
            if test.status == "SKIP":
                continue  # not claimed or not applicable: the verdicts say so
            run.cases.append(CaseResult(
                suite="robot", name=str(test.full_name), requirements=_tags(list(test.tags)),
                passed=test.status == "PASS", message=str(test.message),
                blamed=blamed_requirements(str(test.message)),
            ))
    if not output.exists():
        tail = "\n".join(console.getvalue().strip().splitlines()[-15:])
        run.cases = [CaseResult("robot", "robot run", (), False,
                                f"robot produced no results:\n{tail}")]
    run.seconds = time.perf_counter() - started
    return run


def run_hypothesis(config: RunConfig, registry: Registry) -> SuiteRun:
    """Every machine whose areas the backend claims, one case each."""
    started = time.perf_counter()
    backend = load_backend(config.backend)
    profile = registry.profile(config.profile)
    run = SuiteRun("hypothesis", 0.0)
    for entry in MACHINES:
        if entry.applies_to(backend, profile):
            case, steps = _run_machine(entry, backend, profile, registry, config)
            run.cases.append(case)
            run.steps += steps
    run.seconds = time.perf_counter() - started
    return run


def _run_machine(entry: MachineEntry, backend: Backend, profile: Profile, registry: Registry,
                 config: RunConfig) -> tuple[CaseResult, int]:
    name = f"{entry.name} (seed {config.seed}, {config.examples} examples)"
    try:
        machine = entry.run(backend, profile, registry, config.seed, config.examples)
    except AdapterError as error:
        return CaseResult("hypothesis", name, (), False, str(error)), 0
    divergence = machine.divergence
    message = str(divergence) if divergence else ""
    case = CaseResult("hypothesis", name, tuple(sorted(machine.exercised)), divergence is None,
                      message, divergence.requirements if divergence else ())
    return case, machine.steps


def run_suites(config: RunConfig, registry: Registry) -> list[SuiteRun]:
    """Run the chosen suites in order; every suite runs even when an earlier one failed."""
    runs = []
    for suite in config.suites:
        if suite == "behave":
            runs.append(run_behave(config))
        elif suite == "robot":
            runs.append(run_robot(config))
        elif suite == "hypothesis":
            runs.append(run_hypothesis(config, registry))
        else:
            raise ValueError(f"unknown suite {suite!r}; choose from {', '.join(SUITES)}")
    return runs
