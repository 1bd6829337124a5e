"""Running the three front-ends against one backend and collecting per-case results.

Behave runs in a child process, so that a hung adapter stops only the child; the self-test
runs it in process for its single-threaded gallery backends (`RunConfig.behave_in_process`).
Robot Framework and Hypothesis run in process.
Each case records the requirement IDs it covers (its tags, or what the oracle exercised)
and, when it fails, the IDs its divergence named. A machine's shrunk divergence is also
written as a portable trace and a Gherkin scenario (conformance/trace.py), and traces in
a regression folder join the Behave run as scenarios.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import io
import json
import logging
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO, cast

from jobconform.backends.loading import load_backend
from jobconform.backends.protocol import Backend
from jobconform.conformance import tolerance
from jobconform.conformance.area_steps import load_step_libraries
from jobconform.conformance.area_trace import (
    REPLAY_HOOK,
    AreaTrace,
    AreaTraceError,
    area_gherkin,
    replay_hook,
    write_area_trace,
)
from jobconform.conformance.defaults import RUN_EXAMPLES
from jobconform.conformance.defaults import SUITES as SUITES  # re-exported for callers
from jobconform.conformance.harness import AdapterError, Divergence
from jobconform.conformance.machine_runner import (
    Behaviour,
    HungExample,
    MachineHung,
    MachineRun,
    Nondeterminism,
    shared_prefix,
)
from jobconform.conformance.machines import MachineEntry, machines
from jobconform.conformance.progress import CountingBackend, Meter
from jobconform.conformance.regressions import write_regression_features
from jobconform.conformance.requirement_tags import files_mentioning
from jobconform.conformance.tolerance import (
    DEVIATIONS_FILE_VARIABLE,
    RAN_TO_END,
    RobotDeviationListener,
    case_message,
    read_case_deviations,
    tolerating,
)
from jobconform.conformance.trace import (
    Trace,
    replay,
    to_gherkin,
    trace_from_divergence,
    write_trace,
)
from jobconform.conformance.watchdog import (
    HUNG_MARK,
    adapter_interrupted,
    forget_hangs,
    forget_interrupts,
)
from jobconform.reference.commands import describe
from jobconform.spec import Profile, Registry
from jobconform.spec.areas import areas

REQUIREMENT_ID = re.compile(r"\b[A-Z]{2,4}-\d{3}\b")
NAMED_LINE = re.compile(r"requirement\(s\): (.*)")
# A Robot check outside the harness (a keyword comparing a read) names the test's own
# requirements this way: they are its blame when no divergence names one.
CHECKED_SUFFIX = re.compile(r"\[test checks ([^\]]*)\]")
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
    # The requirements its divergence named, the primary first (see conformance/blame.py).
    blamed: tuple[str, ...] = ()
    artifacts: tuple[str, ...] = ()  # reproducers written for this case (trace, .feature)
    # It failed only on listed deviations, tolerated as it went, and ran to its end: what
    # it covers was checked, and every requirement it blamed is a primary.
    completed: bool = False
    # A machine's shrunk trace replayed past its primary: requirements it shows broken too.
    also_broken: tuple[str, ...] = ()
    # A machine whose replay of an example behaved differently from its first run: the
    # verdict is the backend's ("nondeterministic backend"), and it blames no requirement.
    nondeterministic: bool = False
    # The adapter hung in this case (or an earlier call of the same area had hung, so this
    # one was not tried): the verdict is the adapter's ("adapter hung"), no requirement's.
    hung: bool = False

    @property
    def backend_verdict(self) -> bool:
        """The case ended on a verdict of the backend's own, which blames no requirement
        and which no deviation file can list."""
        return self.nondeterministic or self.hung

    @property
    def primaries(self) -> tuple[str, ...]:
        """The requirements this case shows broken: its divergence's primary (and what its
        shrunk trace shows broken on its own), or each tolerated deviation's."""
        if not self.blamed:
            return ()
        if self.completed:
            return self.blamed
        return tuple(dict.fromkeys((self.blamed[0], *self.also_broken)))


Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunConfig:
    backend: str
    profile: str
    suites: tuple[str, ...] = SUITES
    seed: int = 0
    examples: int = RUN_EXAMPLES
    work_dir: Path = Path("reports")
    # Run only the cases tagged with these requirements (a rerun); None runs everything.
    # The Hypothesis machines run whole: they are not split by requirement.
    selected: frozenset[str] | None = None
    # Trace files (*.json) in this folder run as extra Behave scenarios, besides the
    # ones shipped in features/regressions.
    regressions: Path | None = None
    # Run only the machines covering one of these areas; None runs every machine that
    # applies. The self-test uses it: a broken backend is proven caught in the area of its
    # bug, and running every other area's machine on it would only cost time.
    machine_areas: frozenset[str] | None = None
    # A campaign (run --seeds A-B, maybe one --shard of it): every machine runs once per
    # seed, and its trace files carry the seed. Empty: one run at `seed`.
    seeds: tuple[int, ...] = ()
    # Run Behave in this process instead of a child. Only for single-threaded,
    # deterministic backends (the self-test's step-runtime entries): it saves the child's
    # interpreter start and imports, but a hung adapter would then stop this process too.
    behave_in_process: bool = False
    # Listed deviations (--expected-failures): their divergences are recorded as each
    # case goes on, instead of stopping it (conformance/tolerance.py).
    tolerate: frozenset[str] = frozenset()
    # The listed deviations that apply to some suites only (an entry's `suites`): in the
    # other suites they are not tolerated.
    tolerate_only_in: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # Print the Python traceback of an error that stops a suite (`run --debug`).
    debug: bool = False


@dataclass
class SuiteRun:
    suite: str
    seconds: float
    cases: list[CaseResult] = field(default_factory=list)
    steps: int = 0  # Hypothesis only: commands executed
    # The suite was stopped by KeyboardInterrupt (Ctrl-C, or an adapter raising it): the
    # suites after it did not run, and the report says so.
    interrupted: bool = False


def blamed_requirements(message: str) -> tuple[str, ...]:
    """The requirement IDs a divergence message names (first `requirement(s):` line), the
    primary first."""
    match = NAMED_LINE.search(message) or CHECKED_SUFFIX.search(message)
    return tuple(REQUIREMENT_ID.findall(match.group(1))) if match else ()


def _blamed(message: str) -> tuple[str, ...]:
    """What a failed case blames: nothing when the adapter hung (that is its own verdict,
    whatever the message goes on to name)."""
    return () if HUNG_MARK in message else blamed_requirements(message)


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


def _area_folder(location: str) -> Path:
    """A third-party area's suite folder: an importable package's folder, or a path."""
    if "/" not in location and importlib.util.find_spec(location.split(".")[0]) is not None:
        return suite_folder(location)
    return Path(location)


def area_suite_folders(kind: str) -> list[Path]:
    """The suite folders of third-party areas, `features` or `robot`; the kit's own areas
    keep their suites in the kit's folders."""
    locations = [getattr(area, kind) for area in areas()]
    return [_area_folder(location) for location in locations if location is not None]


def run_behave(config: RunConfig) -> SuiteRun:
    started = time.perf_counter()
    config.work_dir.mkdir(parents=True, exist_ok=True)
    json_path = config.work_dir / "behave.json"
    json_path.unlink(missing_ok=True)
    paths = [suite_folder("jobconform.features"),
             *reversed(area_suite_folders("features"))]
    # Traces shipped in features/regressions and those of --regressions become scenarios.
    folders = [suite_folder("jobconform.features") / "regressions", config.regressions]
    traces = [trace for folder in folders if folder is not None and folder.is_dir()
              for trace in sorted(folder.glob("*.json"))]
    if write_regression_features(traces, config.work_dir / "regressions"):
        paths.append(config.work_dir / "regressions")
    options = []
    if config.selected is not None:
        paths = _selected_feature_files(paths, config.selected)
        # Tag expressions: `@LC-001 or @RT-002`; an empty selection matches nothing.
        wanted = " or ".join(f"@{rid}" for rid in sorted(config.selected)) or "@none-selected"
        options = ["--tags", wanted]
    command = [
        sys.executable, "-m", "behave", *map(str, paths),
        "-D", f"backend={config.backend}", "-D", f"profile={config.profile}",
        "--format", "json", "--outfile", str(json_path),
        "--no-capture", "--no-color", "--no-summary", "--no-snippets", *options,
    ]
    deviations_file = config.work_dir / "behave-deviations.jsonl"
    deviations_file.unlink(missing_ok=True)
    log = config.work_dir / "behave.log"
    if config.behave_in_process:
        with _environment(DEVIATIONS_FILE_VARIABLE, str(deviations_file)):
            output = _behave_here(command[3:])
    elif _can_fork():
        with _environment(DEVIATIONS_FILE_VARIABLE, str(deviations_file)):
            output = _behave_forked(command[3:], log)
    else:
        environment = {**os.environ, DEVIATIONS_FILE_VARIABLE: str(deviations_file)}
        try:
            finished = subprocess.run(command, capture_output=True, text=True, env=environment,
                                      timeout=BEHAVE_TIMEOUT_SECONDS, check=False)
            output = finished.stdout + finished.stderr
        except subprocess.TimeoutExpired as error:
            output = f"behave did not finish within {BEHAVE_TIMEOUT_SECONDS} s: {error}"
    log.write_text(output, encoding="utf-8")
    run = SuiteRun("behave", 0.0)
    results = _read_behave_results(json_path)
    if results is not None:
        run.cases = list(_behave_cases(results, read_case_deviations(str(deviations_file)),
                                       read_case_deviations(str(deviations_file), "error")))
    else:
        # No results, or a file cut off mid-write because the hang watchdog ended behave:
        # the log's end says why (for a hang: the stack of every thread).
        tail = "\n".join(output.strip().splitlines()[-15:])
        run.cases = [CaseResult("behave", "behave run", (), False,
                                f"behave produced no complete results (see"
                                f" {config.work_dir / 'behave.log'}):\n{tail}")]
    run.seconds = time.perf_counter() - started
    return run


def _selected_feature_files(folders: list[Path], selected: frozenset[str]) -> list[Path]:
    """The feature files in `folders` that name a selected requirement: Behave parses every
    file it is given before its tag filter skips a scenario (in the self-test, which
    selects one requirement, that was most of its Behave time). The kit's folder, the
    first, stays whole when none of its files names one: Behave finds its steps and
    environment beside the first path."""
    kept = [files_mentioning(sorted(folder.rglob("*.feature")), selected) for folder in folders]
    return [*(kept[0] or folders[:1]), *(path for files in kept[1:] for path in files)]


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """`name` set to `value` in this process's environment while the block runs."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _behave_here(arguments: list[str], console: TextIO | None = None) -> str:
    """Run Behave in this process; its console output, as the child would have printed it
    (in `console` where given, else returned).

    Behave's step registry is process-global, but the step libraries register their steps
    when their modules are first imported (features/steps only re-exports them), so a
    later run in the same process finds each step once, as the first did.
    """
    from behave.__main__ import main as behave_main

    # Behave (1.3) clears its registered parameter types at the start of every run, and a
    # step library compiles its patterns when first imported: one first imported during
    # a run, after the types were cleared, fails on `{x:Json}`. Every library imported
    # now compiles while the types its imports register are there.
    load_step_libraries()
    captured = io.StringIO()
    console = console or captured
    with contextlib.redirect_stdout(console), contextlib.redirect_stderr(console):
        try:
            with _fewer_collections():
                behave_main(arguments)
        except SystemExit as stop:  # behave exits on a bad option or a missing path
            console.write(f"behave stopped: {stop}\n")
    return captured.getvalue()


def _can_fork() -> bool:
    """Whether the Behave child can be a fork of this process: on Linux, while this
    process runs no other thread (a fork copies only the calling thread, so a lock another
    thread held would stay locked in the child). Elsewhere the child is a new interpreter."""
    return (sys.platform.startswith("linux") and threading.active_count() == 1
            and not _holds_sockets())


def _holds_sockets() -> bool:
    """Whether this process has a socket open: a database or broker connection an
    adapter keeps (a pool, a client) would be shared with a fork, and the child's use or
    close of it ends the parent's session (a PostgreSQL connection closed under the
    Robot suite that followed Behave's fork). Unknown (no /proc) counts as open."""
    try:
        descriptors = os.listdir("/proc/self/fd")
    except OSError:
        return True
    for descriptor in descriptors:
        try:
            if os.readlink(f"/proc/self/fd/{descriptor}").startswith("socket:"):
                return True
        except OSError:  # closed since the listing (the listing's own descriptor)
            continue
    return False


def _behave_forked(arguments: list[str], log: Path) -> str:
    """Run Behave in a fork of this process; what it printed (`log` holds it).

    A fork starts with this process's modules, the step libraries among them: a new
    interpreter spent a third of the Behave suite's CPU importing the kit and registering
    its steps again. A hung adapter still stops only the child, which the watchdog in it
    (conformance/watchdog.py) or the time limit here ends.
    """
    load_step_libraries()  # imported here once, for this run and the fork
    log.unlink(missing_ok=True)  # a child that dies before writing leaves no earlier run's
    child = multiprocessing.get_context("fork").Process(
        target=_behave_child, args=(arguments, str(log)), name="jobconform-behave")
    # The objects alive now are left out of the collector's scans in the child, so its
    # collections do not walk (and copy) every page it shares with this process.
    gc.freeze()
    try:
        child.start()
    finally:
        gc.unfreeze()
    try:
        child.join(BEHAVE_TIMEOUT_SECONDS)
    finally:
        if child.is_alive():  # past the time limit, or this process was interrupted
            child.kill()
            child.join()
    output = log.read_text(encoding="utf-8") if log.exists() else ""
    if child.exitcode == -signal.SIGKILL:
        output += f"\nbehave did not finish within {BEHAVE_TIMEOUT_SECONDS} s\n"
    return output


def _behave_child(arguments: list[str], log: str) -> None:
    """The forked child: Behave with every output (the hang watchdog's thread dump on
    file descriptor 2 too) written to `log`, as a new interpreter's would be captured;
    hangs and interrupts seen by this process before the fork are not its own.

    Behave logs each skipped scenario's reason, through a handler it adds only where the
    root logger has none: the handlers of the process forked (pytest's, a program that
    runs the kit) are not the child's, so they go, as they would be absent in a new
    interpreter."""
    forget_hangs()
    forget_interrupts()
    for handler in list(logging.root.handlers):
        logging.root.removeHandler(handler)
    console = open(log, "w", encoding="utf-8", buffering=1)  # noqa: SIM115 (the child's)
    os.dup2(console.fileno(), 1)
    os.dup2(console.fileno(), 2)
    sys.stdout = sys.stderr = console
    _behave_here(arguments, console)


def _read_behave_results(json_path: Path) -> list[dict[str, Any]] | None:
    """Behave's JSON results, or None when it wrote none or stopped mid-write."""
    if not json_path.exists() or json_path.stat().st_size == 0:
        return None
    try:
        results = json.loads(json_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None
    return results if isinstance(results, list) else None


def _behave_cases(features: list[dict[str, Any]], deviations: dict[str, str] | None = None,
                  step_errors: dict[str, str] | None = None) -> Iterator[CaseResult]:
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
            name = f"{feature.get('name', '?')}: {scenario.get('name', '?')}"
            tolerated = (deviations or {}).get(name)
            if status in ("error", "hook_error") and name in (step_errors or {}):
                # behave's JSON leaves an error's message out; after a failed step (a
                # divergence), a hook's error (closing the runtime) comes second.
                said = [error for error in errors if error] if status == "hook_error" else []
                message = "\n".join([*said, (step_errors or {})[name]])
            if status == "passed" and tolerated is not None:
                message = tolerated
            yield CaseResult(
                suite="behave",
                name=name,
                requirements=_tags(feature_tags + list(scenario.get("tags", []))),
                passed=status == "passed" and tolerated is None,
                message=message,
                blamed=_blamed(message),
                completed=RAN_TO_END in message,
                hung=HUNG_MARK in message,
            )


def run_robot(config: RunConfig) -> SuiteRun:
    from robot.run import run as run_robot_suites

    started = time.perf_counter()
    out_dir = config.work_dir / "robot"
    out_dir.mkdir(parents=True, exist_ok=True)
    console = io.StringIO()
    sources = [suite_folder("jobconform.robot"), *area_suite_folders("robot")]
    # A selection parses only the suite files that name one of its requirements (Robot,
    # like Behave, parses every file before its tag filter applies); the suites keep their
    # folder's structure, and so their full names. None names one: every file, none runs.
    parsed = [] if config.selected is None else files_mentioning(
        sorted(path for source in sources for path in source.rglob("*.robot")), config.selected)
    forget_interrupts()
    results = _RobotResults()
    with _fewer_collections():
        run_robot_suites(
            *(str(source) for source in sources), outputdir=str(out_dir), output="output.xml",
            log="NONE", report="NONE",
            variable=[f"BACKEND:{config.backend}", f"PROFILE:{config.profile}"],
            stdout=console, stderr=console, consolecolors="off",
            # Whole failure messages: Robot otherwise cuts a long one in the middle, and the
            # line naming the divergence's requirements (after a long command, such as eight
            # records saved at once) with it, so the test would blame nothing (issue 33).
            maxerrorlines="NONE",
            # A rerun includes only the failed requirements' tags (several includes: any).
            include=sorted(config.selected) if config.selected is not None else [],
            parseinclude=[str(path) for path in parsed],
            runemptysuite=True, listener=[RobotDeviationListener(), results],
        )
    (config.work_dir / "robot.log").write_text(console.getvalue(), encoding="utf-8")
    if adapter_interrupted():
        # Robot stopped at the adapter's KeyboardInterrupt and returned, its output cut
        # short: the run stops here as it does at one in the other suites.
        raise KeyboardInterrupt
    run = SuiteRun("robot", 0.0)
    if results.suite is not None:
        for test in results.suite.all_tests:
            if test.status == "SKIP":
                continue  # not claimed or not applicable: the verdicts say so
            run.cases.append(CaseResult(
                suite="robot", name=str(test.full_name), requirements=_tags(list(test.tags)),
                passed=test.status == "PASS", message=str(test.message),
                blamed=_blamed(str(test.message)),
                completed=RAN_TO_END in str(test.message),
                hung=HUNG_MARK in str(test.message),
            ))
    else:
        tail = "\n".join(console.getvalue().strip().splitlines()[-15:])
        run.cases = [CaseResult("robot", "robot run", (), False,
                                f"robot produced no results:\n{tail}")]
    run.seconds = time.perf_counter() - started
    return run


class _RobotResults:
    """A Robot Framework listener that keeps the run's results as Robot ends its top
    suite: the results output.xml is written from, every listener's change to a test's
    status or message included. Reading them back from output.xml cost a twentieth of
    the Robot suite's CPU."""

    ROBOT_LISTENER_API_VERSION = 3

    def __init__(self) -> None:
        self.suite: Any = None  # robot.result.TestSuite: the top suite, once it ended

    def end_suite(self, data: object, result: Any) -> None:
        if result.parent is None:
            self.suite = result


def run_hypothesis(config: RunConfig, registry: Registry,
                   progress: Progress | None = None) -> SuiteRun:
    """Every machine whose areas the backend claims and the profile has, one case each."""
    started = time.perf_counter()
    backend = load_backend(config.backend)
    profile = registry.profile(config.profile)
    run = SuiteRun("hypothesis", 0.0)
    for seed in config.seeds or (config.seed,):
        for entry in machines():
            wanted = config.machine_areas is None or bool(entry.areas & config.machine_areas)
            if wanted and entry.applies_to(backend, profile):
                if progress is None:
                    case, steps = _run_machine(entry, backend, profile, registry, config, seed)
                else:
                    # The examples are counted as the machine opens runtimes on the backend.
                    meter = Meter(f"hypothesis: {entry.name}, seed {seed}", config.examples,
                                  "examples", progress)
                    progress(meter.line())
                    counted = cast(Backend, CountingBackend(backend, meter))
                    case, steps = _run_machine(entry, counted, profile, registry, config, seed)
                    progress(f"{meter.line()}; {steps} steps, {_outcome_word(case)}")
                run.cases.append(case)
                run.steps += steps
    run.seconds = time.perf_counter() - started
    return run


def machine_file_stem(machine: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", machine.lower()).strip("-")


# Allocations between young-generation collections while a machine runs (Python's default
# is 700). Hypothesis makes many short-lived objects per step; measured on the lifecycle
# and loops machines, collecting less often saves about a tenth of their CPU time. The
# same holds for a Behave or Robot run (a tenth of the Robot suite's CPU was collections).
MACHINE_GC_THRESHOLD = 20_000


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """Collect garbage less often while a machine, or Behave or Robot, runs; nothing
    else changes.

    The objects alive before the run (modules, the registry, the suites' state) are frozen
    out of the collector's scans for its duration, and the thresholds are raised.
    """
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(MACHINE_GC_THRESHOLD, 20, 20)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _outcome_word(case: CaseResult) -> str:
    """How a machine's progress line ends: a hang or a backend that answered one example
    two ways is its own verdict, not a divergence from the spec."""
    if case.hung:
        return "ADAPTER HUNG"
    if case.nondeterministic:
        return "NONDETERMINISTIC BACKEND"
    return "passed" if case.passed else "DIVERGED"


def _run_machine(entry: MachineEntry, backend: Backend, profile: Profile, registry: Registry,
                 config: RunConfig, seed: int) -> tuple[CaseResult, int]:
    name = f"{entry.name} (seed {seed}, {config.examples} examples)"
    try:
        with _fewer_collections():
            machine = entry.run(backend, profile, registry, seed, config.examples)
    except MachineHung as hang:
        return _hung_case(name, entry, hang.run, hang.hung, config, seed), hang.run.steps
    except AdapterError as error:
        return CaseResult("hypothesis", name, (), False, str(error), _blamed(str(error)),
                          hung=HUNG_MARK in str(error)), 0
    except Exception as error:
        # An error the machine did not expect (a replay answered differently is not one:
        # run_machine records it as the backend's nondeterminism): the machine's verdict,
        # and the other machines run.
        message = tolerance.with_requirements(
            f"the machine stopped on {type(error).__name__}: {error}")
        return CaseResult("hypothesis", name, (), False, message,
                          blamed_requirements(message)), 0
    finally:
        stop_clock_bridges_left_on()  # by a runtime that did not close
    if machine.nondeterminism is not None:
        return _nondeterministic_case(name, entry, machine, machine.nondeterminism, config,
                                      seed), machine.steps
    divergence = machine.divergence
    if divergence is None and machine.deviations:
        message = case_message(machine.deviations)
        return CaseResult("hypothesis", name, tuple(sorted(machine.exercised)), False, message,
                          tuple(d.primary for d in machine.deviations),
                          completed=True), machine.steps
    message = str(divergence) if divergence else ""
    artifacts: tuple[str, ...] = ()
    also_broken: tuple[str, ...] = ()
    if divergence is not None:
        trace = trace_from_divergence(divergence, backend=config.backend,
                                      profile=config.profile, spec_version=registry.version,
                                      machine=entry.name, seed=seed)
        if trace is not None and machine.setup.get("queued_execution") is False:
            trace = replace(trace, queued_execution=False)  # the LC-037 sequences' runtime
        if trace is None:
            # Every other area's machine: a trace of its own commands and setup.
            artifacts, note = _area_reproducer(entry, machine, config, registry, seed)
            message += note
        else:
            # In a campaign each seed's trace is kept: the file names carry the seed.
            suffix = f"-seed-{seed}" if config.seeds else ""
            stem = config.work_dir / "traces" / (machine_file_stem(entry.name) + suffix)
            write_trace(trace, stem.with_suffix(".json"))
            stem.with_suffix(".feature").write_text(
                to_gherkin(trace, stem.name), encoding="utf-8")
            artifacts = (str(stem.with_suffix(".json")), str(stem.with_suffix(".feature")))
            also_broken = broken_on_their_own(trace, backend, profile, registry, divergence)
    case = CaseResult("hypothesis", name, tuple(sorted(machine.exercised)), divergence is None,
                      message, divergence.requirements if divergence else (), artifacts,
                      also_broken=also_broken)
    return case, machine.steps


NONDETERMINISTIC = "nondeterministic backend"


def _behaviour_lines(label: str, behaviour: Behaviour) -> list[str]:
    divergence = behaviour.divergence
    outcome = ("diverged" if divergence is not None
               else f"raised {behaviour.raised}" if behaviour.raised is not None else "passed")
    lines = [f"  {label} ({outcome}, {len(behaviour.commands)} commands):"]
    lines += [f"    {i}. {describe(c)}" for i, c in enumerate(behaviour.commands, 1)]
    if divergence is not None:
        # Said without the `requirement(s):` line: the verdict blames no requirement.
        lines += [f"    diverged on {divergence.primary or 'no requirement'}: {divergence.what}",
                  f"      expected: {divergence.expected!r}",
                  f"      actual:   {divergence.actual!r}"]
    return lines


def _nondeterministic_case(name: str, entry: MachineEntry, machine: MachineRun,
                           found: Nondeterminism, config: RunConfig,
                           seed: int) -> CaseResult:
    """The machine's verdict when the backend answered a replayed example differently:
    both behaviours in the message and in a trace file, and no requirement blamed."""
    lines = [f"{NONDETERMINISTIC}: Hypothesis replayed an example and the backend did not"
             f" behave as it did the first time ({found.hypothesis_says}). A race in the"
             " adapter or the runtime makes its verdicts depend on timing; no requirement"
             " is blamed. The two runs:",
             *_behaviour_lines("first run", found.first),
             *_behaviour_lines("replay", found.replay)]
    if found.first.commands and found.replay.commands != found.first.commands:
        # Two examples that made the same choices until the backend's state led them to
        # different rules (FlakyStrategyDefinition): where they part is the race.
        agreed = shared_prefix(found.first.commands, found.replay.commands)
        lines.append(f"  the two runs agree on their first {agreed} commands")
    suffix = f"-seed-{seed}" if config.seeds else ""
    path = (config.work_dir / "traces"
            / f"{machine_file_stem(entry.name)}{suffix}-nondeterministic.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"verdict": NONDETERMINISTIC, "backend": config.backend,
                "profile": config.profile, "machine": entry.name, "seed": seed,
                "hypothesis": found.hypothesis_says,
                "first": _behaviour_json(found.first), "replay": _behaviour_json(found.replay)}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return CaseResult("hypothesis", name, tuple(sorted(machine.exercised)), False,
                      "\n".join(lines), artifacts=(str(path),), nondeterministic=True)


def _hung_case(name: str, entry: MachineEntry, machine: MachineRun, hung: HungExample,
               config: RunConfig, seed: int) -> CaseResult:
    """The machine's verdict when the adapter hung in an example: the hang's first line,
    then the commands the example ran on its runtime before it (the reproducer: replayed in
    order on a fresh runtime they reach the call that hung) and the requirements they
    checked, also in a trace file, then the threads' stacks; no requirement is blamed."""
    first, _, stacks = hung.message.partition("\n")
    suffix = f"-seed-{seed}" if config.seeds else ""
    path = config.work_dir / "traces" / f"{machine_file_stem(entry.name)}{suffix}-hung.json"
    if hung.commands:
        lines = [first, f"  the example that hung ran {len(hung.commands)} commands on its"
                        f" runtime first (its reproducer, also in {path.name}):",
                 *[f"    {i}. {describe(c)}" for i, c in enumerate(hung.commands, 1)],
                 f"  the requirements they checked: {', '.join(hung.requirements)}"]
    else:
        lines = [first, "  the example hung before its first command: opening a runtime"
                        f" is its reproducer (also in {path.name})"]
    # The runtime did not close: the clock bridges it started would stay on until the
    # process exits, freezing the kit's own clock and every runtime opened after it.
    left_on = stop_clock_bridges_left_on()
    if left_on:
        lines.append(f"  its runtime left {' and '.join(left_on)} on: the kit stopped it")
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"verdict": "adapter hung", "backend": config.backend,
                "profile": config.profile, "machine": entry.name, "seed": seed,
                "hung": first.removeprefix(HUNG_MARK).strip(),
                "commands": [describe(c) for c in hung.commands],
                "requirements": list(hung.requirements)}
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return CaseResult("hypothesis", name, tuple(sorted(machine.exercised)), False,
                      "\n".join([*lines, stacks]), artifacts=(str(path),), hung=True)


def stop_clock_bridges_left_on() -> list[str]:
    """Stop the clock bridges (freezegun, the thread waits) a runtime that did not close
    left on (bridges.wallclock.stop_left_on); what it stopped. Nothing to do where no
    bridge was ever imported."""
    if "jobconform.bridges.wallclock" not in sys.modules:
        return []
    from jobconform.bridges.wallclock import stop_left_on  # a layer above, on purpose

    return stop_left_on()


def _behaviour_json(behaviour: Behaviour) -> dict[str, object]:
    divergence = behaviour.divergence
    return {"commands": [describe(c) for c in behaviour.commands], "raised": behaviour.raised,
            "divergence": None if divergence is None else {
                "primary": divergence.primary, "what": divergence.what,
                "expected": repr(divergence.expected), "actual": repr(divergence.actual)}}


def _area_reproducer(entry: MachineEntry, machine: MachineRun, config: RunConfig,
                     registry: Registry, seed: int) -> tuple[tuple[str, ...], str]:
    """Write an area machine's shrunk counterexample as a trace and a Behave feature
    (conformance/area_trace.py); (their paths, a note for the message when none)."""
    divergence = machine.divergence
    assert divergence is not None
    if replay_hook(entry.name) is None:
        return (), f"\n(no portable trace: the {entry.name} defines no {REPLAY_HOOK}())"
    trace = AreaTrace(config.backend, config.profile, registry.version, entry.name, seed,
                      divergence.requirements, divergence.what, repr(divergence.expected),
                      repr(divergence.actual), dict(machine.setup),
                      tuple(divergence.commands))
    suffix = f"-seed-{seed}" if config.seeds else ""
    stem = config.work_dir / "traces" / (machine_file_stem(entry.name) + suffix)
    try:
        feature = area_gherkin(trace, stem.name)
        write_area_trace(trace, stem.with_suffix(".json"))
    except AreaTraceError as error:
        return (), f"\n(no portable trace: {error})"
    stem.with_suffix(".feature").write_text(feature, encoding="utf-8")
    return (str(stem.with_suffix(".json")), str(stem.with_suffix(".feature"))), ""


# Replays of a shrunk trace, each past one more primary, before the search for others ends.
MAX_REPLAYS = 3


def broken_on_their_own(trace: Trace, backend: Backend, profile: Profile, registry: Registry,
                        divergence: Divergence) -> tuple[str, ...]:
    """Requirements the shrunk trace shows broken besides the primary: it is replayed with
    the primaries found so far tolerated, and a divergence it still meets names another."""
    if divergence.primary is None:
        return ()
    found = [divergence.primary]
    for _ in range(MAX_REPLAYS):
        with tolerating({*found, *tolerance.tolerated()}):
            outcome = replay(trace, backend, profile, registry)
        tolerance.take()
        primary = outcome.divergence.primary if outcome.divergence is not None else None
        if primary is None or primary in found:
            break
        found.append(primary)
    return tuple(found[1:])


def run_suites(config: RunConfig, registry: Registry,
               progress: Progress | None = None) -> list[SuiteRun]:
    """Run the chosen suites in order; every suite runs even when an earlier one failed.

    Args:
        progress: called with one line as each suite starts and ends (the CLI prints
            them on stderr, so long runs show where they are).
    """
    unknown = [suite for suite in config.suites if suite not in SUITES]
    if unknown:
        raise ValueError(f"unknown suite(s) {unknown}; choose from {', '.join(SUITES)}")
    forget_hangs()  # a hang of an earlier run in this process (the self-test) is not ours
    runs = []
    for number, suite in enumerate(config.suites, 1):
        tolerated = {rid for rid in config.tolerate
                     if suite in config.tolerate_only_in.get(rid, {suite})}
        with tolerating(tolerated):
            try:
                runs.append(_run_suite(config, registry, number, suite, progress))
            except KeyboardInterrupt:
                # Ctrl-C (or an adapter raising it) stops the run, but what ran so far is
                # reported: the caller writes the report, then exits with 130.
                message = (f"{suite} interrupted: KeyboardInterrupt (Ctrl-C, or raised by"
                           " the adapter); the suites after it did not run")
                if progress is not None:
                    progress(message)
                runs.append(SuiteRun(suite, 0.0, [CaseResult(suite, f"{suite} run", (), False,
                                                             message)], interrupted=True))
                break
            except Exception as error:
                # An error that stops a suite becomes its failed case, named once, so that
                # the other suites run and a report is written whatever happens.
                if config.debug:
                    traceback.print_exc()
                message = f"{suite} stopped: {type(error).__name__}: {error}"
                if progress is not None:
                    progress(message)
                runs.append(SuiteRun(suite, 0.0, [CaseResult(suite, f"{suite} run", (), False,
                                                             message)]))
            finally:
                stop_clock_bridges_left_on()  # by a runtime that hung in Robot's cases
    return runs


def _run_suite(config: RunConfig, registry: Registry, number: int, suite: str,
               progress: Progress | None) -> SuiteRun:
    if progress is not None:
        progress(f"[{number}/{len(config.suites)}] {suite}: running against"
                 f" {config.backend} ...")
    if suite == "behave":
        run = run_behave(config)
    elif suite == "robot":
        run = run_robot(config)
    else:
        run = run_hypothesis(config, registry, progress)
    if progress is not None:
        failed = sum(not case.passed for case in run.cases)
        progress(f"[{number}/{len(config.suites)}] {suite}: {len(run.cases)} cases,"
                 f" {failed} failed, {run.seconds:.1f} s")
    return run
