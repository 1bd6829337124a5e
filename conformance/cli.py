"""The `jobconform` command line."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from jobconform.backends.loading import BackendLoadError, backend_names, load_backend
from jobconform.conformance.report import RunSummary, console_table, write_json, write_junit
from jobconform.conformance.runner import SUITES, RunConfig, run_suites
from jobconform.conformance.selftest import (
    GALLERY,
    SELFTEST_EXAMPLES,
    check_entry,
    format_catches,
)
from jobconform.spec import Registry, SpecError, load_registry, lock_problems, spec_files


def _registry() -> Registry:
    try:
        return load_registry()
    except SpecError as error:
        raise click.ClickException(f"the spec does not load: {error}") from error


@click.group()
@click.version_option(package_name="jobconform")
def main() -> None:
    """A conformance kit for background-job runtimes: spec, oracle, suites, reports."""


@main.command()
@click.option("--backend", "backend_name", default="memory", show_default=True,
              help="An installed backend name (see `jobconform list backends`) or module:attr.")
@click.option("--profile", "profile_name", default=None,
              help="Profile whose defaults apply (default: the one the backend declares).")
@click.option("--suite", "suites", multiple=True, type=click.Choice(SUITES),
              help="Run only these suites (repeatable). Default: all three.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0),
              help="Hypothesis seed: the same seed gives the same sequences.")
@click.option("--examples", default=200, show_default=True, type=click.IntRange(min=1),
              help="Hypothesis examples (command sequences) to try.")
@click.option("--report-dir", default=Path("reports"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path),
              help="Where report.json, junit.xml and suite logs are written.")
def run(backend_name: str, profile_name: str | None, suites: tuple[str, ...], seed: int,
        examples: int, report_dir: Path) -> None:
    """Run the conformance suites against a backend and print a per-requirement table."""
    registry = _registry()
    try:
        backend = load_backend(backend_name)
    except BackendLoadError as error:
        raise click.ClickException(str(error)) from error
    profile = profile_name or backend.profile
    try:
        registry.profile(profile)
    except SpecError as error:
        raise click.BadParameter(str(error), param_hint="--profile") from error
    config = RunConfig(backend=backend_name, profile=profile, suites=suites or SUITES,
                       seed=seed, examples=examples, work_dir=report_dir)
    started = time.perf_counter()
    runs = run_suites(config, registry)
    summary = RunSummary(backend_name, profile, frozenset(backend.capabilities),
                         registry.version, seed, runs)
    report_dir.mkdir(parents=True, exist_ok=True)
    write_json(report_dir / "report.json", summary, registry)
    write_junit(report_dir / "junit.xml", runs)
    click.echo(console_table(summary, registry))
    click.echo(f"reports: {report_dir / 'report.json'}, {report_dir / 'junit.xml'}"
               f" ({time.perf_counter() - started:.1f} s)")
    if summary.failed(registry):
        sys.exit(1)


@main.command(name="list")
@click.argument("what", default="all",
                type=click.Choice(["all", "backends", "profiles", "requirements", "gallery"]))
def list_command(what: str) -> None:
    """Show installed backends, profiles, requirements and the self-test gallery."""
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
            names = "/".join(profile.vocabulary[s] for s in ("queued", "succeeded"))
            click.echo(f"  {profile.name:<13} {names}, max_concurrent {profile.max_concurrent},"
                       f" max_tasks {profile.max_tasks}")
    if what in ("all", "requirements"):
        click.echo(f"requirements (spec {registry.version}):")
        for requirement in registry.requirements:
            click.echo(f"  {requirement.id}  {requirement.level:<6} {requirement.title}")
    if what in ("all", "gallery"):
        click.echo("self-test gallery:")
        for entry in GALLERY:
            click.echo(f"  {entry.name:<28} expects {entry.catches}: {entry.bug}")


@main.command()
@click.option("--suite", "suites", multiple=True, type=click.Choice(SUITES),
              help="Check with these suites only (repeatable). Default: all three.")
@click.option("--only", "only", multiple=True, help="Check only these gallery entries.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(min=0))
@click.option("--examples", default=SELFTEST_EXAMPLES, show_default=True,
              type=click.IntRange(min=1))
@click.option("--work-dir", default=Path("reports/selftest"), show_default=True,
              type=click.Path(file_okay=False, path_type=Path))
def selftest(suites: tuple[str, ...], only: tuple[str, ...], seed: int, examples: int,
             work_dir: Path) -> None:
    """Prove that every deliberately broken backend in the gallery is caught."""
    registry = _registry()
    known = {entry.name for entry in GALLERY}
    unknown = set(only) - known
    if unknown:
        raise click.BadParameter(f"unknown gallery entries {sorted(unknown)};"
                                 f" known: {', '.join(sorted(known))}", param_hint="--only")
    entries = [entry for entry in GALLERY if not only or entry.name in only]
    missed = []
    for entry in entries:
        catches = check_entry(entry, registry, work_dir, suites or SUITES, seed, examples)
        click.echo(f"{entry.name} ({entry.source}): {entry.bug}")
        click.echo(format_catches(catches))
        missed += [c for c in catches if not (c.caught and c.named_expected)]
    click.echo(f"\nself-test: {len(entries)} broken backends, {len(missed)} missed checks")
    if missed:
        sys.exit(1)


@main.group()
def spec() -> None:
    """Check or lock the spec's normative text."""


@spec.command(name="check")
def spec_check() -> None:
    """Validate the registry and check the lock; non-zero exit on any problem."""
    registry = _registry()
    problems = lock_problems(registry)
    for problem in problems:
        click.echo(problem, err=True)
    if problems:
        sys.exit(1)
    click.echo(f"spec {registry.version}: {len(registry.requirements)} requirements,"
               f" {len(registry.profiles)} profiles, lock up to date")


@spec.command(name="lock")
def spec_lock() -> None:
    """Record the hashes of the current normative text in requirements.lock."""
    registry = _registry()
    target = Path(str(spec_files())) / "requirements.lock"
    target.write_text(registry.lock_text(), encoding="utf-8")
    click.echo(f"wrote {target} for spec {registry.version}")


if __name__ == "__main__":
    main()
