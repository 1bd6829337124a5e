"""The self-test: every gallery backend must be caught by every suite.

A broken backend counts as caught by a suite when that suite fails on it; the
requirement(s) named are those whose verdict in that suite is "fail", which are the
primary requirements of its failed cases (conformance/blame.py). The self-test passes only
when each entry is caught by each suite and its expected requirement is the primary of
one of them; the project's test (tests/test_selftest.py) asks too that no case names a
primary the entry does not break (its expected requirement, or one it declares in
`also_breaks`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from jobconform.backends.loading import load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import Backend
from jobconform.backends.sql import SqlBackend
from jobconform.conformance.defaults import SELFTEST_EXAMPLES as SELFTEST_EXAMPLES
from jobconform.conformance.defaults import SELFTEST_SEED as SELFTEST_SEED
from jobconform.conformance.gallery import GalleryEntry
from jobconform.conformance.report import FAIL, RunSummary
from jobconform.conformance.runner import SUITES, RunConfig, run_suites
from jobconform.conformance.shrinking import without_shrinking
from jobconform.spec import Registry
from jobconform.spec.areas import areas, load_attribute

# The galleries of the kit's own runtimes (broken SQL stores, threaded workers, process
# children); each area's own gallery comes from its `Area` declaration.
RUNTIME_GALLERIES = (
    "jobconform.conformance.gallery.sql:SQL_GALLERY",
    "jobconform.conformance.gallery.threaded:THREADED_GALLERY",
    "jobconform.conformance.gallery.process:PROCESS_GALLERY",
)


@functools.cache
def gallery() -> tuple[GalleryEntry, ...]:
    """Every broken backend, one known bug class each: the areas' galleries in the order
    the areas are registered, then the runtimes' galleries."""
    paths = [area.gallery for area in areas() if area.gallery is not None]
    entries: list[GalleryEntry] = []
    for path in (*paths, *RUNTIME_GALLERIES):
        entries += cast(tuple[GalleryEntry, ...], load_attribute(path))
    return tuple(entries)


@dataclass(frozen=True)
class Catch:
    entry: GalleryEntry
    suite: str
    named: tuple[str, ...]  # requirements failed in this suite
    primaries: tuple[str, ...] = ()  # the primary requirements of its failed cases
    # Failed cases that name no requirement: the suite itself stopped (a step module that
    # does not import, a hang); a miss then says why instead of a bare "MISSED".
    stopped: tuple[str, ...] = ()

    @property
    def caught(self) -> bool:
        return bool(self.named)

    @property
    def named_expected(self) -> bool:
        return self.entry.catches in self.primaries

    @property
    def primaries_are_its_bug(self) -> bool:
        """The expected requirement is among the primaries, and every other primary is one
        the entry declares it also breaks (`GalleryEntry.also_breaks`): a reader sees the
        bug's causes and no other (issue 33)."""
        return self.named_expected and self.entry.breaks.issuperset(self.primaries)

    @property
    def report_fails_its_bug_only(self) -> bool:
        """The report fails no requirement the entry does not break: a failed case that
        blamed nothing fails every requirement it is tagged with (how Robot's cut messages
        once named TS-010 failed beside TS-001)."""
        return self.entry.breaks.issuperset(self.named)


def runs_in_process(backend: Backend) -> bool:
    """Whether Behave may check this backend in the self-test's own process.

    The step-runtime backends (memory, and SQL on its default SQLite file) run every job
    in the caller's thread, so nothing of theirs outlives a scenario. The threaded and
    process backends keep their child process: real threads and child processes are
    where a hang would come from, and a hang in a child stops only that child.
    """
    return isinstance(backend, MemoryBackend | SqlBackend)


def check_entry(entry: GalleryEntry, registry: Registry, work_dir: Path,
                suites: tuple[str, ...] = SUITES, seed: int = SELFTEST_SEED,
                examples: int = SELFTEST_EXAMPLES, primary_only: bool = False,
                every_area: bool = False) -> list[Catch]:
    """How each suite catches `entry`.

    Only the cases and machines of the area the bug breaks: with a dozen areas, running
    every area's checks on every broken backend would cost most of the self-test's time,
    and only the bug's own area is asked to name its requirement.

    With `primary_only` (the project's tests, tests/test_selftest.py), Behave and Robot
    first run only the cases tagged with the entry's primary requirement, and the whole
    area only where those catch no case of that primary: a case tagged otherwise may be
    the one whose divergence it is (a queued job failed as stuck shows first in a case of
    ST-002, as a broken ST-004). The proof is the same, a failed case whose primary the
    entry's requirement is; the other requirements the bug breaks may go unnamed. The
    machines run whole either way, at the default run's examples.

    With `every_area` (benchmarks/blame_accuracy.py --every-area), every area's cases and
    machines run, as a user's `jobconform run` does: a bug whose consequence another
    area's case blames on a requirement of its own shows there.
    """
    area = registry.requirement(entry.catches).area
    in_area = frozenset(r.id for r in registry.requirements
                        if every_area or r.area == area)
    backend = load_backend(entry.target)

    def catches(selected: frozenset[str], suites: tuple[str, ...], folder: Path) -> list[Catch]:
        config = RunConfig(backend=entry.target, profile=entry.profile, suites=suites,
                           seed=seed, examples=examples, work_dir=folder, selected=selected,
                           machine_areas=None if every_area else frozenset({area}),
                           behave_in_process=runs_in_process(backend))
        with without_shrinking():
            runs = run_suites(config, registry)
        capabilities = frozenset(backend.capabilities)
        summary = RunSummary(entry.target, entry.profile, capabilities, registry.version,
                             seed, runs)
        verdicts = summary.verdicts(registry)
        return [
            Catch(entry, run.suite,
                  tuple(rid for rid, row in verdicts.items() if row[run.suite] == FAIL),
                  tuple(dict.fromkeys(rid for case in run.cases if not case.passed
                                      for rid in case.primaries)),
                  tuple(case.message for case in run.cases
                        if not case.passed and not case.requirements))
            for run in runs
        ]

    if not primary_only:
        return catches(in_area, suites, work_dir / entry.name)
    first = catches(frozenset({entry.catches}), suites, work_dir / entry.name)
    # The machines do not run by requirement: a second run of theirs would be the first.
    again = tuple(catch.suite for catch in first
                  if not catch.named_expected and catch.suite != "hypothesis")
    if not again:
        return first
    area_wide = {catch.suite: catch
                 for catch in catches(in_area, again, work_dir / entry.name / "area")}
    return [area_wide.get(catch.suite, catch) for catch in first]


def _last_line(message: str) -> str:
    """The last non-blank line of a message: where a log's tail names the error."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no message)"


def format_catches(catches: list[Catch]) -> str:
    lines = []
    for catch in catches:
        if not catch.caught:
            verdict = "MISSED"
            if catch.stopped:
                verdict += f": the suite stopped: {_last_line(catch.stopped[0])}"
        elif catch.named_expected:
            verdict = f"caught by {catch.entry.catches} (primary)"
            others = [rid for rid in catch.named if rid != catch.entry.catches]
            if others:
                verdict += f" (also named: {', '.join(others)})"
        else:
            verdict = (f"caught, but the primary is {', '.join(catch.primaries) or 'none'},"
                       f" not {catch.entry.catches}")
        lines.append(f"  {catch.suite:<11} {verdict}")
    return "\n".join(lines)
