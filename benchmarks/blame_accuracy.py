"""Blame accuracy: how often each suite's primary requirement is exactly the expected one.

Usage: python benchmarks/blame_accuracy.py [--filter TEXT] [--area AREA ...]
           [--suite behave --suite robot --suite hypothesis] [--examples N] [--seed 0]
           [--every-area] [--work-dir DIR]

Runs the self-test's gallery of broken backends (conformance/selftest.py; every entry, or
those whose name contains --filter and whose expected requirement is in one of the --area
areas) through each suite, with --examples examples per machine (by default the
self-test's: with fewer, a machine may miss a rare bug class, which says nothing of its
blame), and sorts each entry in each suite into one of five classes:

- exact: the suite's failed cases name the entry's expected requirement as a primary,
  and no primary and no failed requirement of the report is one the entry does not
  break (the expected one, or one it declares in `also_breaks`: a store write without
  the expected status breaks LC-003 and RD-006 alike); the goal: a reader sees the
  bug's causes and no other;
- beyond: the primaries are exact, but the report names another requirement failed
  beside them (a failed case that blamed nothing fails every requirement it is tagged
  with: how Robot's cut messages once named TS-010 beside TS-001);
- among: the expected requirement is one of several primaries (the self-test passes, but
  a reader also sees another cause that is not one);
- other: the suite failed, under other primaries only;
- missed: the suite did not fail at all.

By default only the cases and machines of the entry's own area run, as in the self-test;
with --every-area every area's run, as in a user's `jobconform run`, so that a consequence
another area's case fails under a requirement of its own shows as a second cause.

It prints per suite and overall how many entries are exact, and lists every entry that is
not, with the primaries named. Exit status 1 when any entry is not exact.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from jobconform.conformance.gallery import GalleryEntry
from jobconform.conformance.runner import SUITES
from jobconform.conformance.selftest import (
    SELFTEST_EXAMPLES,
    SELFTEST_SEED,
    Catch,
    check_entry,
    gallery,
)
from jobconform.spec import Registry, load_registry

CLASSES = ("exact", "beyond", "among", "other", "missed")


def classify(catch: Catch) -> str:
    if not catch.caught:
        return "missed"
    if catch.primaries_are_its_bug:
        return "exact" if catch.report_fails_its_bug_only else "beyond"
    return "among" if catch.named_expected else "other"


def selected(registry: Registry, name_part: str, areas: list[str]) -> list[GalleryEntry]:
    return [entry for entry in gallery() if name_part in entry.name and (
        not areas or registry.requirement(entry.catches).area in areas)]


def summary_lines(catches: list[Catch], suites: tuple[str, ...]) -> list[str]:
    lines = [f"{'suite':<11} {'exact':>9} " + " ".join(f"{name:>6}" for name in CLASSES[1:])]
    for suite in (*suites, "overall"):
        counts = Counter(classify(catch) for catch in catches
                         if suite == "overall" or catch.suite == suite)
        total = sum(counts.values())
        share = f"{counts['exact']}/{total}"
        percent = f"{100 * counts['exact'] / total:.0f}%" if total else "-"
        lines.append(f"{suite:<11} {share:>5} {percent:>4} "
                     + " ".join(f"{counts[name]:>6}" for name in CLASSES[1:]))
    return lines


def miss_lines(catches: list[Catch]) -> list[str]:
    lines = []
    for catch in catches:
        verdict = classify(catch)
        if verdict != "exact":
            primaries = ", ".join(catch.primaries) or "nothing"
            expected = catch.entry.catches
            if catch.entry.also_breaks:
                expected += f" (also breaks {', '.join(catch.entry.also_breaks)})"
            line = (f"  {catch.entry.name} [{catch.suite}] {verdict}: expected"
                    f" {expected}, primaries {primaries}")
            beyond = [rid for rid in catch.named if rid not in catch.primaries]
            if beyond:
                line += f"; also failed: {', '.join(beyond)}"
            lines.append(line)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--filter", default="", help="only entries whose name contains this")
    parser.add_argument("--area", action="append", default=[],
                        help="only entries whose expected requirement is of this area"
                        " (repeatable)")
    parser.add_argument("--suite", action="append", choices=SUITES, default=[])
    parser.add_argument("--examples", type=int, default=SELFTEST_EXAMPLES,
                        help=f"examples per Hypothesis machine (default {SELFTEST_EXAMPLES})")
    parser.add_argument("--seed", type=int, default=SELFTEST_SEED)
    parser.add_argument("--every-area", action="store_true",
                        help="run every area's cases and machines on each entry, not only"
                        " its own area's")
    parser.add_argument("--work-dir", type=Path, default=None,
                        help="where the suites write their reports (default: a temporary"
                        " folder, removed afterwards)")
    arguments = parser.parse_args()
    registry = load_registry()
    suites = tuple(arguments.suite) or SUITES
    entries = selected(registry, arguments.filter, arguments.area)
    if not entries:
        parser.error("no gallery entry matches --filter and --area")
    catches: list[Catch] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="blame-accuracy-") as scratch:
        work_dir = arguments.work_dir or Path(scratch)
        for number, entry in enumerate(entries, 1):
            found = check_entry(entry, registry, work_dir, suites, arguments.seed,
                                arguments.examples, every_area=arguments.every_area)
            catches += found
            verdicts = ", ".join(f"{catch.suite} {classify(catch)}" for catch in found)
            print(f"[{number}/{len(entries)} {time.perf_counter() - started:.0f} s]"
                  f" {entry.name} ({entry.catches}): {verdicts}", flush=True)
    print()
    scope = "every area" if arguments.every_area else "each entry's own area"
    print(f"blame accuracy over {len(entries)} gallery entries ({scope}),"
          f" {arguments.examples} examples, seed {arguments.seed}: the primary is exactly"
          " the expected one, and nothing else is failed")
    print("\n".join(summary_lines(catches, suites)))
    misses = miss_lines(catches)
    print("not exact:" if misses else "every entry exact in every suite")
    if misses:
        print("\n".join(misses))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
