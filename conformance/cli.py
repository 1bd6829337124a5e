"""The `jobconform` command line."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from jobconform.conformance.aim import precision_notes
from jobconform.conformance.campaign import markdown_option, merge_command
from jobconform.conformance.compare import compare_command
from jobconform.conformance.defaults import (
    RUN_EXAMPLES,
    RUN_SEED,
    SELFTEST_EXAMPLES,
    SELFTEST_SEED,
    SUITES,
)
from jobconform.conformance.publish import publish_command

# The runner, the suites, the self-test gallery and the backends (Hypothesis, Robot
# Framework, SQLAlchemy) are imported inside the commands that use them, so that
# `jobconform --help` and `jobconform list requirements` start in a fraction of a second.
# A run stopped by Ctrl-C (or an adapter raising KeyboardInterrupt) still writes its report
# of what ran, then exits as a shell reports an interrupted command.
EXIT_INTERRUPTED = 130

if TYPE_CHECKING:
    from collections.abc import Callable

    from jobconform.backends.protocol import Backend
    from jobconform.conformance.area_trace import AreaTrace
    from jobconform.conformance.expectations import ExpectedFailure
    from jobconform.conformance.trace import Replay, Trace
    from jobconform.spec import Profile, Registry


def _registry() -> Registry:
    from jobconform.spec import SpecError, load_registry

    try:
        return load_registry()
    except SpecError as error:
        raise click.ClickException(f"the spec does not load: {error}") from error


@click.group()
@click.version_option(package_name="jobconform")
def main() -> None:
    """A conformance kit for background-job runtimes: spec, oracle, suites, reports."""


def _backend(name: str) -> Backend:
    from jobconform.backends.loading import BackendLoadError, load_backend

    try:
        return load_backend(name)
    except BackendLoadError as error:
        raise click.ClickException(str(error)) from error


def _progress(line: str) -> None:
    click.echo(line, err=True)


def failed_in_report(path: Path) -> tuple[dict[str, object], frozenset[str]]:
    """An earlier report, and the requirements that failed in it (listed ones included).

    Raises:
        click.ClickException: the report is unreadable or off-schema.
    """
    from jobconform.conformance.report import EXPECTED_FAILURE, FAIL, ReportError, read_report

    try:
        report = read_report(path)
    except ReportError as error:
        raise click.ClickException(f"{error}; --rerun-failed takes the report.json that"
                                   " `jobconform run` wrote") from error
    requirements = report["requirements"]
    assert isinstance(requirements, dict)
    failed = frozenset(rid for rid, body in requirements.items()
                       if {FAIL, EXPECTED_FAILURE} & set(body["suites"].values()))
    return report, failed


@main.command()
@click.option("--backend", "backend_name", default=None,
              help="An installed backend name (see `jobconform list backends`) or module:attr."
                   "  [default: memory, or the backend of the --rerun-failed report]")
@click.option("--profile", "profile_name", default=None,
              help="Profile whose defaults apply (default: the one the backend declares).")
@click.option("--suite", "suites", multiple=True, type=click.Choice(SUITES),
              help="Run only these suites (repeatable). Default: all three.")
@click.option("--seed", default=RUN_SEED, show_default=True, type=click.IntRange(min=0),
              help="Hypothesis seed: the same seed gives the same sequences.")
@click.option("--examples", default=RUN_EXAMPLES, show_default=True, type=click.IntRange(min=1),
              help="Hypothesis examples (command sequences) to try.")
@click.option("--seeds", "seed_range", default=None, metavar="A-B",
              help="A Hypothesis campaign: every machine runs once per seed from A to B.")
@click.option("--shard", "shard_text", default=None, metavar="K/N",
              help="Run shard K of N of the --seeds campaign (every N-th seed from the K-th;"
                   " Behave and Robot run in shard 1 only); join the shards' reports with"
                   " `jobconform merge`.")
@click.option("--report-dir", default=Path("reports"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Where report.json, junit.xml, traces and suite logs are written.")
@click.option("--expected-failures", "expected_file", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="YAML file of known deviations: requirement ID -> {reason, link}.")
@markdown_option
@click.option("--rerun-failed", "rerun_report", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Rerun only the requirements that failed in this earlier report.json.")
@click.option("--regressions", "regressions", default=None,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A folder of trace files (*.json) to run as extra Behave scenarios.")
@click.option("--area", "only_areas", multiple=True,
              help="Run only this area's cases and machines (repeatable); the rest of the"
                   " requirements are reported as \"not run\".")
@click.option("--requirement", "only_requirements", multiple=True,
              help="Run only the cases of this requirement ID (repeatable), and the machines"
                   " of its area; the rest are reported as \"not run\".")
@click.option("--debug", is_flag=True,
              help="Show Python tracebacks of errors that stop the run.")
def run(backend_name: str | None, profile_name: str | None, suites: tuple[str, ...],
        seed: int, examples: int, seed_range: str | None, shard_text: str | None,
        report_dir: Path, expected_file: Path | None,
        markdown_path: Path | None, rerun_report: Path | None,
        regressions: Path | None, only_areas: tuple[str, ...],
        only_requirements: tuple[str, ...], debug: bool) -> None:
    """Run the conformance suites against a backend and print a per-requirement table."""
    from jobconform.conformance.campaign import CampaignError, plan_campaign
    from jobconform.conformance.expectations import (
        ExpectationsError,
        load_expectations,
        stale_entries,
    )
    from jobconform.conformance.report import (
        NOT_RERUN,
        NOT_RUN,
        RunSummary,
        console_table,
        library_versions,
        write_reports,
    )
    from jobconform.conformance.runner import RunConfig, run_suites
    from jobconform.spec import SpecError

    registry = _registry()
    try:
        plan = plan_campaign(seed_range, shard_text, seed, suites or SUITES)
    except CampaignError as error:
        raise click.BadParameter(str(error), param_hint="--seeds/--shard") from error
    seed = plan.seeds[0] if plan.seeds else seed
    selected: frozenset[str] | None = None
    unselected = NOT_RERUN
    machine_areas: frozenset[str] | None = None
    if only_areas or only_requirements:
        selected, machine_areas = _selection(registry, only_areas, only_requirements)
        unselected = NOT_RUN
    if rerun_report is not None:
        earlier, selected = failed_in_report(rerun_report)
        backend_name = backend_name or str(earlier["backend"])
        profile_name = profile_name or str(earlier["profile"])
        if not selected:
            click.echo(f"nothing to rerun: no requirement failed in {rerun_report}")
            return
        _progress(f"rerunning {len(selected)} failed requirement(s): {', '.join(sorted(selected))}")
    backend_name = backend_name or "memory"
    backend = _backend(backend_name)
    profile = profile_name or backend.profile
    try:
        registry.profile(profile)
    except SpecError as error:
        if profile_name:
            raise click.BadParameter(str(error), param_hint="--profile") from error
        # The user gave no --profile: the adapter's declaration is what is wrong.
        raise click.ClickException(
            f"backend {backend_name!r} declares `profile = {profile!r}`, which the spec does"
            f" not define ({error}); fix the adapter's `profile` attribute, or run with"
            " --profile NAME") from error
    try:
        libraries = library_versions(backend)
    except ValueError as error:
        raise click.ClickException(f"{error}; fix the adapter's `libraries` attribute") from error
    expected: dict[str, ExpectedFailure] = {}
    if expected_file is not None:
        try:
            expected = load_expectations(expected_file)
        except ExpectationsError as error:
            raise click.BadParameter(str(error), param_hint="--expected-failures") from error
        stale = stale_entries(expected, set(registry.ids()), registry.version)
        if stale:
            raise click.BadParameter(f"{expected_file}: " + "; ".join(stale),
                                     param_hint="--expected-failures")
    config = RunConfig(backend=backend_name, profile=profile, suites=plan.suites,
                       seed=seed, examples=examples, work_dir=report_dir, selected=selected,
                       regressions=regressions, seeds=plan.seeds, machine_areas=machine_areas,
                       tolerate=frozenset(expected), debug=debug,
                       tolerate_only_in={rid: entry.suites for rid, entry in expected.items()
                                         if entry.suites is not None})
    started = time.perf_counter()
    runs = run_suites(config, registry, _progress)
    summary = RunSummary(backend_name, profile, frozenset(backend.capabilities),
                         registry.version, seed, runs, expected, selected,
                         campaign=plan.report_entry(examples),
                         notes=(tuple(getattr(backend, "report_notes", ()))
                                + precision_notes(registry.profile(profile))),
                         unselected=unselected,
                         expected_file=(None if expected_file is None
                                        else str(expected_file.resolve())),
                         libraries=libraries)
    written = write_reports(report_dir, summary, registry, markdown_path)
    click.echo(console_table(summary, registry))
    click.echo(f"reports: {', '.join(map(str, written))}"
               f" ({time.perf_counter() - started:.1f} s)")
    if any(run.interrupted for run in runs):
        sys.exit(EXIT_INTERRUPTED)
    if summary.failed(registry):
        sys.exit(1)


def _selection(registry: Registry, only_areas: tuple[str, ...],
               only_requirements: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The requirements and the machine areas that --area and --requirement choose."""
    known_areas = {r.area for r in registry.requirements}
    unknown = sorted(set(only_areas) - known_areas)
    if unknown:
        raise click.BadParameter(f"unknown area(s) {unknown}; known:"
                                 f" {', '.join(sorted(known_areas))}", param_hint="--area")
    unknown = sorted(set(only_requirements) - set(registry.ids()))
    if unknown:
        raise click.BadParameter(f"unknown requirement(s) {unknown}; see `jobconform list"
                                 " requirements`", param_hint="--requirement")
    selected = frozenset(r.id for r in registry.requirements if r.area in only_areas)
    selected |= frozenset(only_requirements)
    machine_areas = frozenset(registry.requirement(rid).area for rid in selected)
    return selected, machine_areas


@main.command(name="replay")
@click.argument("trace_path", metavar="TRACE",
                type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--backend", "backend_name", default="memory", show_default=True,
              help="The backend to replay on (name or module:attr).")
@click.option("--profile", "profile_name", default=None,
              help="Profile to replay under (default: the trace's).")
@click.option("--gherkin", "gherkin_path", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the trace as a Behave .feature here.")
def replay_command(trace_path: Path, backend_name: str, profile_name: str | None,
                   gherkin_path: Path | None) -> None:
    """Replay a trace on a backend: exit 0 if it agrees with the oracle, 1 if it diverges
    (or the adapter fails), 2 if the backend does not claim what the trace needs."""
    from jobconform.conformance.area_trace import AREA_TRACE_FORMAT
    from jobconform.conformance.trace import (
        TraceError,
        read_trace,
        replay,
        to_gherkin,
        trace_format,
        trace_name,
    )

    registry = _registry()
    try:
        if trace_format(trace_path) == AREA_TRACE_FORMAT:
            _replay_area_trace(trace_path, backend_name, profile_name, gherkin_path, registry)
            return
        trace = read_trace(trace_path)
    except TraceError as error:
        raise click.ClickException(str(error)) from error
    backend = _backend(backend_name)
    profile = _replay_profile(registry, profile_name, trace.profile)
    if gherkin_path is not None:
        try:
            gherkin_path.write_text(to_gherkin(trace, trace_name(trace_path)), encoding="utf-8")
        except TraceError as error:
            raise click.ClickException(str(error)) from error
    if trace.spec_version != registry.version:
        click.echo(f"note: the trace was recorded under spec {trace.spec_version}; this is"
                   f" spec {registry.version}", err=True)
    _replayed(trace_path, trace, backend_name, profile,
              lambda: replay(trace, backend, profile, registry))


def _replay_profile(registry: Registry, named: str | None, recorded: str) -> Profile:
    """The profile a trace replays under: the one `named`, else the one it was
    `recorded` under."""
    from jobconform.spec import SpecError

    try:
        return registry.profile(named or recorded)
    except SpecError as error:
        raise click.BadParameter(str(error), param_hint="--profile") from error


def _replayed(trace_path: Path, trace: Trace | AreaTrace, backend_name: str, profile: Profile,
              replay: Callable[[], Replay]) -> None:
    """Replay a trace and say how it went; exits 1 where it diverges or the adapter
    fails, 2 where it cannot be checked on this backend."""
    click.echo(f"replaying {trace_path} ({len(trace.commands)} commands, found by the"
               f" {trace.machine} on {trace.backend}) on backend {backend_name!r},"
               f" profile {profile.name!r}")
    outcome = replay()
    if outcome.divergence is not None:
        click.echo(f"DIVERGES at command {outcome.commands_run}:\n{outcome.divergence}")
        sys.exit(1)
    if outcome.adapter_error is not None:
        click.echo(f"ADAPTER ERROR at command {outcome.commands_run}: {outcome.adapter_error}")
        sys.exit(1)
    if outcome.not_checkable is not None:
        click.echo(f"NOT CHECKABLE here: {outcome.not_checkable}")
        sys.exit(2)
    click.echo(f"AGREES: all {outcome.commands_run} commands match the oracle")


def _replay_area_trace(trace_path: Path, backend_name: str, profile_name: str | None,
                       gherkin_path: Path | None, registry: Registry) -> None:
    """`replay` for an area machine's trace (conformance/area_trace.py).

    Raises:
        TraceError: the trace cannot be read or its machine cannot replay it.
    """
    from jobconform.conformance.area_trace import (
        area_gherkin,
        read_area_trace,
        replay_area_trace,
    )
    from jobconform.conformance.machines import machines
    from jobconform.conformance.trace import trace_name

    trace = read_area_trace(trace_path)
    backend = _backend(backend_name)
    profile = _replay_profile(registry, profile_name, trace.profile)
    if gherkin_path is not None:
        gherkin_path.write_text(area_gherkin(trace, trace_name(trace_path)), encoding="utf-8")
    entry = next((m for m in machines() if m.name == trace.machine), None)
    if entry is not None and not entry.applies_to(backend, profile):
        click.echo(f"NOT CHECKABLE here: backend {backend_name!r} under profile"
                   f" {profile.name!r} does not run the {trace.machine}")
        sys.exit(2)
    _replayed(trace_path, trace, backend_name, profile,
              lambda: replay_area_trace(trace, backend, profile, registry))


def profile_lines(profile: Profile) -> list[str]:
    """A profile as `list profiles` shows it: its vocabulary, the areas it has and every
    default it sets (the lifecycle's, then each area's)."""
    own_names = "/".join(profile.vocabulary[status] for status in profile.vocabulary)
    defaults = {"max_concurrent": profile.max_concurrent, "max_tasks": profile.max_tasks,
                "cleanup_max_age_seconds": profile.cleanup_max_age_seconds,
                "max_retry_delay_ms": profile.max_retry_delay_ms, "jitter": profile.jitter}
    lines = [f"  {profile.name}: {own_names}",
             f"    areas: {', '.join(sorted(profile.areas))}",
             "    defaults: " + ", ".join(f"{name} {value}" for name, value in defaults.items())]
    for area, parameters in sorted(profile.area_parameters.items()):
        values = ", ".join(f"{name} {value}" for name, value in parameters.items())
        lines.append(f"    {area}: {values}")
    return lines


@main.command(name="list")
@click.argument("what", default="all",
                type=click.Choice(["all", "backends", "profiles", "requirements", "gallery"]))
def list_command(what: str) -> None:
    """Show installed backends, profiles, requirements and the self-test gallery."""
    from jobconform.backends.loading import BackendLoadError, backend_names, load_backend

    registry = _registry()
    if what in ("all", "backends"):
        click.echo("backends:")
        for name in backend_names():
            try:
                backend = load_backend(name)
                claims = ", ".join(sorted(backend.capabilities))
                click.echo(f"  {name:<12} profile {backend.profile}; claims {claims}")
            except BackendLoadError as error:
                click.echo(f"  {name:<12} BROKEN: {error}")
    if what in ("all", "profiles"):
        click.echo("profiles:")
        for profile in registry.profiles.values():
            click.echo("\n".join(profile_lines(profile)))
    if what in ("all", "requirements"):
        click.echo(f"requirements (spec {registry.version}):")
        for requirement in registry.requirements:
            click.echo(f"  {requirement.id}  {requirement.level:<6} {requirement.title}")
    if what in ("all", "gallery"):
        from jobconform.conformance.selftest import gallery

        click.echo("self-test gallery:")
        for entry in gallery():
            also = f" (also breaks {', '.join(entry.also_breaks)})" if entry.also_breaks else ""
            click.echo(f"  {entry.name:<28} expects {entry.catches}{also}: {entry.bug}")


@main.command()
@click.option("--suite", "suites", multiple=True, type=click.Choice(SUITES),
              help="Check with these suites only (repeatable). Default: all three.")
@click.option("--only", "only", multiple=True, help="Check only these gallery entries.")
@click.option("--seed", default=SELFTEST_SEED, show_default=True, type=click.IntRange(min=0))
@click.option("--examples", default=SELFTEST_EXAMPLES, show_default=True,
              type=click.IntRange(min=1))
@click.option("--work-dir", default=Path("reports/selftest"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path))
def selftest(suites: tuple[str, ...], only: tuple[str, ...], seed: int, examples: int,
             work_dir: Path) -> None:
    """Prove that every deliberately broken backend in the gallery is caught."""
    from jobconform.conformance.progress import Meter
    from jobconform.conformance.selftest import check_entry, format_catches, gallery

    registry = _registry()
    known = {entry.name for entry in gallery()}
    unknown = set(only) - known
    if unknown:
        raise click.BadParameter(f"unknown gallery entries {sorted(unknown)};"
                                 f" known: {', '.join(sorted(known))}", param_hint="--only")
    entries = [entry for entry in gallery() if not only or entry.name in only]
    missed = []
    # A line on stderr after every entry: how many are done, and about how long is left.
    meter = Meter("self-test", len(entries), "broken backends", _progress, interval=0.0)
    for entry in entries:
        catches = check_entry(entry, registry, work_dir, suites or SUITES, seed, examples)
        click.echo(f"{entry.name} ({entry.source}): {entry.bug}")
        click.echo(format_catches(catches))
        missed += [c for c in catches if not (c.caught and c.named_expected)]
        meter.advance()
    click.echo(f"\nself-test: {len(entries)} broken backends, {len(missed)} missed checks")
    if missed:
        sys.exit(1)


@main.group()
def spec() -> None:
    """Check or lock the spec's normative text."""


@spec.command(name="check")
@click.option("--no-run", "static_only", is_flag=True,
              help="Skip running the suites on the oracle (the static checks only).")
@click.option("--examples", default=RUN_EXAMPLES, show_default=True,
              type=click.IntRange(min=1), help="Hypothesis examples for the oracle run.")
@click.option("--work-dir", default=Path("reports/spec-check"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path))
@click.option("--seeds", "seed_range", default=None, metavar="A-B",
              help="Also run every machine on each of these seeds (e.g. 0-19) and fail when"
                   " a requirement goes unreached on one of them (minutes per seed).")
@click.option("--skip-profile", "skip_profiles", multiple=True, metavar="PROFILE",
              help="Leave this profile's oracle run out: one made apart (`jobconform run"
                   " --backend memory` at the same --examples fails on the same problems).")
def spec_check(static_only: bool, examples: int, work_dir: Path,
               seed_range: str | None, skip_profiles: tuple[str, ...]) -> None:
    """The CI gate: registry, lock and CHANGELOG, coverage both ways, the oracle passes.

    Every MUST and SHOULD requirement needs a Behave scenario and a Robot test; every
    requirement tag must name a real requirement; every requirement a seed table row counts
    as covering it must be checked by a test; the memory backend must pass every
    suite under every profile; with --seeds, every machine must reach each of its
    requirements on every one of those seeds. Non-zero exit on any problem, each on its
    own line.
    """
    from jobconform.conformance import spec_gate
    from jobconform.conformance.campaign import CampaignError, parse_seeds

    registry = _registry()
    try:
        seeds = parse_seeds(seed_range) if seed_range is not None else ()
    except CampaignError as error:
        raise click.BadParameter(str(error), param_hint="--seeds") from error
    unknown = sorted(set(skip_profiles) - set(registry.profiles))
    if unknown:
        raise click.BadParameter(f"no such profile: {', '.join(unknown)}",
                                 param_hint="--skip-profile")
    problems = spec_gate.check(registry, work_dir, run_oracle=not static_only,
                               examples=examples, progress=_progress, seeds=seeds,
                               skip_profiles=frozenset(skip_profiles))
    for problem in problems:
        click.echo(problem, err=True)
    if problems:
        click.echo(f"spec check: {len(problems)} problem(s)", err=True)
        sys.exit(1)
    ran = "" if static_only else ", the oracle passes every suite under every profile"
    if skip_profiles and not static_only:
        ran += f" but {', '.join(sorted(skip_profiles))} (run apart)"
    if seeds:
        ran += f", every machine reaches its requirements on seeds {seed_range}"
    click.echo(f"spec {registry.version}: {len(registry.requirements)} requirements,"
               f" {len(registry.profiles)} profiles; lock up to date, CHANGELOG entry"
               f" present, every MUST/SHOULD requirement has a Behave and a Robot test"
               f" (a plain case among each suite's){ran}")
    table = spec_gate.load_seed_coverage()
    if table is not None:
        click.echo(spec_gate.seed_coverage_line(table))


@spec.command(name="impact")
@click.option("--base", "base", required=True,
              help="The git revision to compare with (branch, tag or commit).")
@click.option("--repo", default=Path("."), show_default=True,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="The git checkout holding spec/.")
@click.option("--backend", "backends", multiple=True,
              help="Backends to run the changed requirements on (repeatable)."
                   "  [default: every shipped backend]")
@click.option("--no-results", is_flag=True, help="List the changes and tests only.")
@click.option("--examples", default=100, show_default=True, type=click.IntRange(min=1))
@click.option("--work-dir", default=Path("reports/spec-impact"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path))
def spec_impact(base: str, repo: Path, backends: tuple[str, ...], no_results: bool,
                examples: int, work_dir: Path) -> None:
    """The requirements whose normative text changed since BASE, their tests and results."""
    from jobconform.conformance import spec_gate
    from jobconform.conformance.report import FAILING

    registry = _registry()
    try:
        changes = spec_gate.changes_since(registry, spec_gate.base_hashes(repo, base))
    except spec_gate.ImpactError as error:
        raise click.ClickException(str(error)) from error
    if not changes:
        click.echo(f"no normative change since {base}: nothing to re-check")
        return
    coverage = spec_gate.static_coverage()
    click.echo(f"{len(changes)} requirement(s) changed since {base}:")
    for change in changes:
        title = (registry.requirement(change.requirement_id).title
                 if change.kind != "removed" else "(removed from the spec)")
        click.echo(f"  {change.requirement_id} {change.kind}: {title}")
        tests = coverage.covering(change.requirement_id)
        for test in tests:
            click.echo(f"    {test.suite:<10} {test.name}")
        if not tests:
            click.echo("    (no Behave or Robot test names it)")
    click.echo("  (the Hypothesis machines run whole; their column below shows whether they"
               " reach each requirement)")
    live = frozenset(c.requirement_id for c in changes if c.kind != "removed")
    if no_results or not live:
        return
    names = list(backends) or spec_gate.shipped_backends()
    for name in names:
        _backend(name)  # an unknown name stops here, before any suite runs
    results = spec_gate.impact_results(registry, live, names, work_dir, examples, _progress)
    # The backend column fits the longest name: a module:attr backend is long.
    width = max([len("backend"), *(len(name) for name in results)]) + 2
    header = f"{'requirement':<12}{'backend':<{width}}" + "".join(f"{s:<18}" for s in SUITES)
    click.echo("\nresults on the shipped backends:\n" + header + "\n" + "-" * len(header))
    failed = False
    for rid in sorted(live):
        for name, verdicts in results.items():
            row = verdicts.get(rid, {})
            failed |= any(v in FAILING for v in row.values())
            click.echo(f"{rid:<12}{name:<{width}}"
                       + "".join(f"{row.get(s, '-'):<18}" for s in SUITES))
    if failed:
        sys.exit(1)


@spec.command(name="lock")
def spec_lock() -> None:
    """Record the hashes of the current normative text in requirements.lock."""
    from jobconform.spec import spec_files

    registry = _registry()
    target = Path(str(spec_files())) / "requirements.lock"
    target.write_text(registry.lock_text(), encoding="utf-8")
    click.echo(f"wrote {target} for spec {registry.version}")


main.add_command(compare_command)
main.add_command(merge_command)
main.add_command(publish_command)

if __name__ == "__main__":
    main()
