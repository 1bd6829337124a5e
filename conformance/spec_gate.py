"""The spec gate for CI: coverage both ways, the oracle on every suite, and change impact.

`check` answers "may this spec and these suites be merged?": the registry validates and
its lock is current, the CHANGELOG has an entry for the VERSION, every MUST and SHOULD
requirement is checked by at least one Behave scenario and one Robot test (and by a
Hypothesis machine where one covers its area), at least one of which, in each suite, is
its plain case (not tagged `edge`), every requirement tag names a real
requirement, the seed coverage table accounts for every seed section and every
requirement a row counts as covering it is checked by a test, and the oracle's own
backend (memory) passes every suite under every profile.

`impact` answers "what does this spec change touch?": the requirements whose normative
text differs from a git revision, the tests that cover them, and their results on every
shipped backend.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from jobconform.conformance.defaults import RUN_EXAMPLES
from jobconform.conformance.report import FAILING, RunSummary
from jobconform.conformance.runner import (
    REQUIREMENT_ID,
    SUITES,
    RunConfig,
    run_suites,
    suite_folder,
)
from jobconform.spec import AREA_FILES, Registry, Requirement, lock_problems, spec_files

COVERED_LEVELS = ("MUST", "SHOULD")
ORACLE_BACKEND = "memory"
# The tag of a scenario or test that checks only an edge of the requirements it names: a
# boundary, an extreme or invalid value, an empty input, a fault or an unusual combination.
# Every other case is a plain case: the requirement doing its ordinary work on ordinary
# values. A requirement whose cases in a suite are all edges is reported, since a runtime
# that handles only the edges would pass that suite (issue 33).
EDGE_TAG = "edge"


@dataclass(frozen=True)
class TaggedTest:
    suite: str
    name: str
    requirements: tuple[str, ...]
    edge: bool = False


@dataclass
class Coverage:
    """Which tests name which requirement, read from the suites without running them."""

    tests: list[TaggedTest] = field(default_factory=list)

    def covering(self, requirement_id: str, suite: str | None = None) -> list[TaggedTest]:
        return [t for t in self.tests if requirement_id in t.requirements
                and (suite is None or t.suite == suite)]


def _requirement_tags(tags: Iterable[object]) -> tuple[str, ...]:
    return tuple(sorted({str(t).lstrip("@") for t in tags
                         if REQUIREMENT_ID.fullmatch(str(t).lstrip("@"))}))


def static_coverage() -> Coverage:
    """Parse the packaged Behave features and Robot suites for their requirement tags."""
    from behave.parser import parse_file
    from robot.api import TestSuiteBuilder

    coverage = Coverage()
    features = suite_folder("jobconform.features")
    for path in sorted(features.glob("*.feature")):
        feature = parse_file(str(path))
        for scenario in feature.walk_scenarios():
            coverage.tests.append(TaggedTest(
                "behave", f"{path.name}: {scenario.name}",
                _requirement_tags(scenario.effective_tags),
                edge=EDGE_TAG in scenario.effective_tags))
    robot_suite = TestSuiteBuilder().build(str(suite_folder("jobconform.robot")))
    for test in robot_suite.all_tests:
        coverage.tests.append(TaggedTest("robot", str(test.full_name),
                                         _requirement_tags(test.tags),
                                         edge=EDGE_TAG in test.tags))
    return coverage


def changelog_problems(registry: Registry) -> list[str]:
    """The CHANGELOG must describe the current VERSION (a heading `## <version>`)."""
    try:
        text = spec_files().joinpath("CHANGELOG.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        return ["spec/CHANGELOG.md is missing; every VERSION needs an entry there"]
    headings = {line[3:].strip() for line in text.splitlines() if line.startswith("## ")}
    if registry.version not in headings:
        return [f"spec/VERSION is {registry.version} but spec/CHANGELOG.md has no"
                f" '## {registry.version}' entry: describe what changed in the normative text"]
    return []


# -- the seed coverage table ------------------------------------------------------------------

SEED_COVERAGE_FILE = "seed-coverage.yaml"
SEED_COVERAGE_SCHEMA = "seed-coverage.schema.json"
# A folder holding the seed files the table names; when set, the gate also reads the seeds
# and checks that every section the table lists is there and, for a seed with a heading
# pattern, that every heading there is listed. The seeds are not shipped with the kit.
SEEDS_DIR_ENV = "JOBCONFORM_SEEDS_DIR"
_SECTION_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)\.?\s")


def section_key(title: str) -> str:
    """What a section title and a requirement's citation of it are matched by: the section
    number when there is one, else the title before a qualifier (" (...)" or ", ...")."""
    numbered = _SECTION_NUMBER.match(title)
    if numbered:
        return numbered.group(1)
    return re.split(r" \(|, ", title, maxsplit=1)[0].strip()


def load_seed_coverage() -> Any:
    """The parsed seed coverage table, or None when the spec has none."""
    try:
        text = spec_files().joinpath(SEED_COVERAGE_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return yaml.safe_load(text)


def _seeds_of_the_registry() -> list[str]:
    """The seeds a requirement may cite: the registry schema's list, without `anchors`."""
    schema = json.loads(spec_files().joinpath("registry.schema.json").read_text(encoding="utf-8"))
    sources = schema["properties"]["requirements"]["items"]["properties"]["sources"]
    return [seed for seed in sources["items"]["properties"]["seed"]["enum"] if seed != "anchors"]


def _row_problems(where: str, row: Mapping[str, Any], known: set[str]) -> list[str]:
    problems = []
    statements = row["statements"]
    covered = row.get("covered", 0)
    partly = row.get("partly", 0)
    out_of_scope = row.get("out_of_scope", 0)
    requirements = row.get("requirements", [])
    unknown = [rid for rid in requirements if rid not in known]
    if unknown:
        problems.append(f"{where} names {', '.join(unknown)}, which the spec does not define")
    if covered + partly + out_of_scope > statements:
        problems.append(f"{where} counts {covered} covered, {partly} partly covered and"
                        f" {out_of_scope} out of scope of only {statements} statements")
    if (covered or partly) and not requirements:
        problems.append(f"{where} counts {covered + partly} (partly) covered statements but"
                        " names no requirement")
    if requirements and not (covered or partly):
        problems.append(f"{where} names requirements but counts no covered statement")
    if (out_of_scope or not statements) and "out_of_scope_reason" not in row:
        problems.append(f"{where} has statements out of scope (or none at all) without an"
                        " out_of_scope_reason")
    if statements - covered - out_of_scope > 0 and "gap" not in row:
        problems.append(f"{where} leaves {statements - covered - out_of_scope} statement(s)"
                        " partly or not covered: say what is missing under `gap`")
    return problems


def _seed_file_problems(seed: Mapping[str, Any], folder: Path) -> list[str]:
    path = folder / seed["file"]
    try:
        lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    except FileNotFoundError:
        return [f"seed {seed['seed']}: {path} does not exist ({SEEDS_DIR_ENV}={folder})"]
    listed = {section_key(row["section"]) for row in seed["sections"]}
    problems = [f"seed {seed['seed']}: the table lists {row['section']!r}, which is no line of"
                f" {seed['file']}" for row in seed["sections"]
                if not any(line.startswith(row["section"]) for line in lines)]
    pattern = seed.get("heading_pattern")
    if pattern is not None:
        problems += [f"seed {seed['seed']}: section {line!r} of {seed['file']} is missing from"
                     f" {SEED_COVERAGE_FILE}" for line in lines
                     if re.match(pattern, line) and section_key(line) not in listed]
    return problems


def seed_coverage_problems(registry: Registry, document: Any,
                           seeds_dir: Path | None = None) -> list[str]:
    """What keeps the seed coverage table from accounting for every seed section.

    Every seed the registry may cite has an entry; every section a requirement cites is a
    row, which names that requirement; every requirement named exists; each row's counts
    add up, with a reason for what is out of scope and a note on what is missing. With
    `seeds_dir`, the seed files themselves are read as well.
    """
    if document is None:
        return [f"spec/{SEED_COVERAGE_FILE} is missing: list every seed section with the"
                " requirements covering it or why it is out of scope"]
    schema = json.loads(spec_files().joinpath(SEED_COVERAGE_SCHEMA).read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(document),
                    key=lambda error: list(error.absolute_path))
    if errors:
        where = "/".join(str(part) for part in errors[0].absolute_path) or "(top level)"
        return [f"spec/{SEED_COVERAGE_FILE} does not match {SEED_COVERAGE_SCHEMA} at {where}:"
                f" {errors[0].message}"]
    known = set(registry.ids())
    seeds = {seed["seed"]: seed for seed in document["seeds"]}
    problems = [f"seed {name} has no entry in spec/{SEED_COVERAGE_FILE}"
                for name in _seeds_of_the_registry() if name not in seeds]
    rows: dict[tuple[str, str], Mapping[str, Any]] = {}
    for seed in document["seeds"]:
        for row in seed["sections"]:
            key = (seed["seed"], section_key(row["section"]))
            where = f"seed {seed['seed']} {row['section']!r}"
            if key in rows:
                problems.append(f"{where} is listed twice")
            rows[key] = row
            problems += _row_problems(where, row, known)
        if seeds_dir is not None:
            problems += _seed_file_problems(seed, seeds_dir)
    for requirement in registry.requirements:
        for source in requirement.sources:
            if source.seed == "anchors":
                continue
            row = rows.get((source.seed, section_key(source.section)))
            if row is None:
                problems.append(f"{requirement.id} cites seed {source.seed} {source.section!r},"
                                f" which has no row in spec/{SEED_COVERAGE_FILE}")
            elif requirement.id not in row.get("requirements", []):
                problems.append(f"{requirement.id} cites seed {source.seed}"
                                f" {source.section!r}, but that row does not name it")
    return problems


FIGURES = ("statements", "covered", "partly", "missing", "out_of_scope")


def seed_coverage_figures(document: Any) -> dict[str, dict[str, int]]:
    """Statements, covered, partly covered, missing and out of scope per seed, and for all
    seeds ("all"); `missing` is what a row counts neither covered, partly nor out of scope."""
    figures: dict[str, dict[str, int]] = {}
    for seed in document["seeds"]:
        totals = dict.fromkeys(FIGURES, 0)
        for row in seed["sections"]:
            for name in ("statements", "covered", "partly", "out_of_scope"):
                totals[name] += row.get(name, 0)
        totals["missing"] = (totals["statements"] - totals["covered"] - totals["partly"]
                             - totals["out_of_scope"])
        figures[seed["seed"]] = totals
    figures["all"] = {name: sum(seed[name] for seed in figures.values()) for name in FIGURES}
    return figures


def seed_coverage_line(document: Any) -> str:
    """The table's figures in one line, as `spec check` prints them and the README quotes."""
    every = seed_coverage_figures(document)["all"]
    return (f"seed coverage: {every['statements']} statements, {every['covered']} covered,"
            f" {every['partly']} partly, {every['missing']} missing,"
            f" {every['out_of_scope']} out of scope")


def requirement_checks(registry: Registry, coverage: Coverage) -> dict[str, list[str]]:
    """requirement -> the tests that check it, derived from what the suites already say:
    the Behave scenarios and Robot tests tagged with its ID, and the Hypothesis machine of
    its area. A machine counts for every requirement of the areas it covers because the
    oracle run fails a requirement of those areas that the machine never exercised
    ("untested"), and `spec check --seeds` fails one that some seed leaves unreached."""
    machine_of = {area: name for name, areas in _machine_areas().items() for area in areas}
    checks: dict[str, list[str]] = {}
    for requirement in registry.requirements:
        found = [f"{test.suite}: {test.name}" for test in coverage.covering(requirement.id)]
        if requirement.area in machine_of:
            found.append(f"hypothesis: {machine_of[requirement.area]}")
        checks[requirement.id] = found
    return checks


def seed_test_problems(registry: Registry, document: Any, coverage: Coverage) -> list[str]:
    """A row that counts (partly) covered statements must back them with tests: every
    requirement it names is checked by some test (tagged with its ID, or its area's machine),
    and every test it names under `tests` exists and carries one of the row's requirements
    (a Behave scenario as `file.feature: Scenario name`, a Robot test by its full name, a
    machine as its title)."""
    checks = requirement_checks(registry, coverage)
    by_name = {f"{test.suite}: {test.name}": test for test in coverage.tests}
    machine_areas = _machine_areas()
    area_of = {requirement.id: requirement.area for requirement in registry.requirements}
    problems = []
    for seed in document["seeds"]:
        for row in seed["sections"]:
            if not (row.get("covered", 0) or row.get("partly", 0)):
                continue
            where = f"seed {seed['seed']} {row['section']!r}"
            named = row.get("requirements", [])
            problems += [f"{where} counts {rid} as covering it, but no test checks {rid}: tag a"
                         f" scenario and a Robot test @{rid}, or count the statement missing"
                         for rid in named if rid in checks and not checks[rid]]
            for name in row.get("tests", []):
                suite, _, title = name.partition(": ")
                if suite == "hypothesis":
                    areas = machine_areas.get(title)
                    if areas is None:
                        problems.append(f"{where} names {name!r}: no such machine")
                    elif not any(area_of.get(rid) in areas for rid in named):
                        problems.append(f"{where} names {name!r}, which covers none of the"
                                        " row's requirements")
                    continue
                test = by_name.get(name)
                if test is None:
                    problems.append(f"{where} names {name!r}, which is no test of the suites")
                elif not set(test.requirements) & set(named):
                    problems.append(f"{where} names {name!r}, which carries none of the row's"
                                    " requirements")
    return problems


def _machine_areas() -> dict[str, frozenset[str]]:
    from jobconform.conformance.machines import machines

    return {entry.name: entry.areas for entry in machines()}


def coverage_problems(registry: Registry, coverage: Coverage) -> list[str]:
    problems = []
    for requirement in registry.requirements:
        if requirement.level not in COVERED_LEVELS:
            continue
        how = {"behave": f"tag a scenario @{requirement.id}",
               "robot": f"add {requirement.id} to a test's [Tags]"}
        for suite, fix in how.items():
            tests = coverage.covering(requirement.id, suite)
            if not tests:
                problems.append(f"{requirement.id} ({requirement.level}) has no {suite} test:"
                                f" {fix}")
            elif all(test.edge for test in tests):
                problems.append(f"{requirement.id} ({requirement.level}) has only edge cases"
                                f" in {suite} ({', '.join(test.name for test in tests)}):"
                                f" add its plain case, a test not tagged {EDGE_TAG}")
    known = set(registry.ids())
    for test in coverage.tests:
        for rid in test.requirements:
            if rid not in known:
                problems.append(f"{test.suite}: {test.name} is tagged {rid}, which the spec"
                                f" {registry.version} does not define")
    return problems


def oracle_problems(registry: Registry, work_dir: Path, examples: int,
                    progress: Callable[[str], None] | None = None,
                    skip_profiles: frozenset[str] = frozenset()) -> list[str]:
    """Run every suite on the oracle's backend under every profile but `skip_profiles`;
    each must pass.

    A requirement a machine covers must be exercised by it: the run's verdict is then
    "untested" otherwise, which fails it. A profile skipped is one whose oracle run the
    caller makes apart: `jobconform run --backend memory` at the same seed and examples
    fails on exactly what this reports (RunSummary.failed), as tox's `conformance` does.
    """
    from jobconform.backends.loading import load_backend

    backend = load_backend(ORACLE_BACKEND)
    problems = []
    for profile in registry.profiles:
        if profile in skip_profiles:
            continue
        config = RunConfig(backend=ORACLE_BACKEND, profile=profile, examples=examples,
                           work_dir=work_dir / profile)
        runs = run_suites(config, registry, progress)
        summary = RunSummary(ORACLE_BACKEND, profile, frozenset(backend.capabilities),
                             registry.version, 0, runs)
        if not summary.failed(registry):
            continue
        for rid, row in summary.verdicts(registry).items():
            bad = [f"{suite} {verdict}" for suite, verdict in row.items() if verdict in FAILING]
            if bad:
                problems.append(f"the oracle ({ORACLE_BACKEND}) under profile {profile}: {rid}"
                                f" is {', '.join(bad)} (logs in {config.work_dir})")
        for case in summary.unexcused_cases():
            problems.append(f"the oracle ({ORACLE_BACKEND}) under profile {profile}: case"
                            f" {case.suite}: {case.name} failed")
        problems += summary.unknown_tags(registry)
    return problems


def seed_problems(registry: Registry, seeds: tuple[int, ...], examples: int,
                  progress: Callable[[str], None] | None = None) -> list[str]:
    """Every requirement a machine leaves unreached on one of `seeds`, at `examples`
    examples on the oracle's backend (conformance/seed_coverage.py)."""
    from jobconform.conformance import seed_coverage

    results = seed_coverage.measure(registry, seeds, examples, ORACLE_BACKEND,
                                    progress=progress)
    return seed_coverage.problems(results)


def check(registry: Registry, work_dir: Path, run_oracle: bool = True, examples: int = RUN_EXAMPLES,
          progress: Callable[[str], None] | None = None,
          seeds: tuple[int, ...] = (),
          skip_profiles: frozenset[str] = frozenset()) -> list[str]:
    """Every problem that should keep this spec from being merged; empty when none.

    With `seeds`, also every requirement a machine leaves unreached on one of them: a
    minute or more per seed, so it is asked for apart (`spec check --seeds 0-19`).
    """
    problems = lock_problems(registry) + changelog_problems(registry)
    coverage = static_coverage()
    problems += coverage_problems(registry, coverage)
    seeds_dir = os.environ.get(SEEDS_DIR_ENV)
    table = load_seed_coverage()
    table_problems = seed_coverage_problems(registry, table,
                                            Path(seeds_dir) if seeds_dir else None)
    problems += table_problems or seed_test_problems(registry, table, coverage)
    # A machine's coverage is what it exercises, known only by running it: the oracle run
    # reports a requirement of a machine's area that the machine never reached as
    # "untested", which fails it.
    if run_oracle:
        problems += oracle_problems(registry, work_dir, examples, progress, skip_profiles)
    if seeds:
        problems += seed_problems(registry, seeds, examples, progress)
    return problems


# -- impact -----------------------------------------------------------------------------------


class ImpactError(RuntimeError):
    """The base revision cannot be read (not a git checkout, unknown revision)."""


@dataclass(frozen=True)
class Change:
    requirement_id: str
    kind: str  # "added", "changed", "removed"


def _git_show(repo: Path, revision: str, path: str) -> str | None:
    """A file's text at a revision, or None when the file did not exist there."""
    found = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{revision}:{path}"],
                           capture_output=True, text=True, check=False)
    if found.returncode != 0:
        verify = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet",
                                 f"{revision}^{{commit}}"], capture_output=True, text=True,
                                check=False)
        if verify.returncode != 0:
            raise ImpactError(f"{revision!r} is not a commit in the git repository at {repo}"
                              " (give --repo the checkout and --base a branch, tag or hash)")
        return None
    shown = subprocess.run(["git", "-C", str(repo), "show", f"{revision}:{path}"],
                           capture_output=True, text=True, check=True)
    return shown.stdout


def base_hashes(repo: Path, revision: str, spec_dir: str = "spec") -> dict[str, str]:
    """Normative hashes of the requirements as they were at `revision`.

    Raises:
        ImpactError: not a git repository, or no such revision.
    """
    inside = subprocess.run(["git", "-C", str(repo), "rev-parse", "--is-inside-work-tree"],
                            capture_output=True, text=True, check=False)
    if inside.returncode != 0:
        raise ImpactError(f"{repo} is not a git checkout: {inside.stderr.strip()}; run from"
                          " the repository or pass --repo")
    hashes: dict[str, str] = {}
    for file_name in AREA_FILES:
        text = _git_show(repo, revision, f"{spec_dir}/{file_name}")
        if text is None:
            continue  # an area added since the base: all its requirements are new
        document: dict[str, Any] = yaml.safe_load(text)
        for entry in document.get("requirements", []):
            requirement = Requirement(
                id=entry["id"], area=document.get("area", ""), level=entry["level"],
                title=entry["title"], statement=" ".join(str(entry["statement"]).split()),
                sources=(), profiles=frozenset(),
                parameters=dict(entry.get("parameters", {})))
            hashes[requirement.id] = requirement.normative_hash()
    return hashes


def changes_since(registry: Registry, base: dict[str, str]) -> list[Change]:
    current = {r.id: r.normative_hash() for r in registry.requirements}
    changes = [Change(rid, "added") for rid in current if rid not in base]
    changes += [Change(rid, "changed") for rid in current
                if rid in base and base[rid] != current[rid]]
    changes += [Change(rid, "removed") for rid in base if rid not in current]
    return sorted(changes, key=lambda c: c.requirement_id)


def shipped_backends() -> list[str]:
    """The backends jobconform itself ships (its own entry points), in declared order."""
    entry_points = metadata.distribution("jobconform").entry_points
    return [ep.name for ep in entry_points if ep.group == "jobconform.backends"]


def impact_results(registry: Registry, changed: frozenset[str], backends: list[str],
                   work_dir: Path, examples: int,
                   progress: Callable[[str], None] | None = None
                   ) -> dict[str, dict[str, dict[str, str]]]:
    """backend -> requirement -> suite -> verdict, running only the changed requirements'
    Behave and Robot tests (and every machine, which cannot be split)."""
    from jobconform.backends.loading import load_backend

    results: dict[str, dict[str, dict[str, str]]] = {}
    for name in backends:
        backend = load_backend(name)
        config = RunConfig(backend=name, profile=backend.profile, suites=SUITES,
                           examples=examples, work_dir=work_dir / name.replace("+", "-"),
                           selected=changed)
        runs = run_suites(config, registry, progress)
        summary = RunSummary(name, backend.profile, frozenset(backend.capabilities),
                             registry.version, 0, runs, selected=changed)
        verdicts = summary.verdicts(registry)
        results[name] = {rid: verdicts[rid] for rid in sorted(changed) if rid in verdicts}
    return results
