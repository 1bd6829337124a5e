"""Every broken backend in the gallery is caught by every suite, by the requirement it breaks."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest

from jobconform.conformance.gallery import GalleryEntry
from jobconform.conformance.requirement_tags import files_mentioning
from jobconform.conformance.runner import SUITES, suite_folder
from jobconform.conformance.selftest import Catch, check_entry, format_catches, gallery
from jobconform.spec import load_registry


@pytest.mark.parametrize("entry", gallery(), ids=[entry.name for entry in gallery()])
def test_gallery_entry_is_caught_by_every_suite(entry: GalleryEntry, tmp_path: Path) -> None:
    catches = check_entry(entry, load_registry(), tmp_path, primary_only=True)
    assert [catch.suite for catch in catches] == list(SUITES)
    for catch in catches:
        assert catch.caught, f"{catch.suite} missed {entry.name}: {entry.bug}"
        assert catch.named_expected, (
            f"{catch.suite} caught {entry.name} but its primary is {catch.primaries},"
            f" not {entry.catches}"
        )
        # Exactly the expected one (issue 33): no case the suite failed names a primary the
        # entry does not break (its expected one, or one it declares in `also_breaks`), or
        # a reader sees a second cause that is not one.
        assert catch.primaries_are_its_bug, (
            f"{catch.suite} caught {entry.name} at {entry.catches} but also named"
            f" {', '.join(p for p in catch.primaries if p not in entry.breaks)} as a primary"
        )
        # Nor does its report fail another requirement beside those: a failed case that
        # blamed nothing fails every requirement it is tagged with (how Robot's cut
        # messages once named TS-010 failed beside TS-001).
        assert catch.report_fails_its_bug_only, (
            f"{catch.suite} caught {entry.name} at {entry.catches} but its report also"
            f" failed {', '.join(r for r in catch.named if r not in entry.breaks)}"
        )

def test_a_suite_that_stopped_is_a_miss_that_says_why() -> None:
    # A step module that does not import stops Behave before any scenario: the self-test
    # must say so, not print a bare "MISSED" that reads like a check too weak to catch it.
    entry = gallery()[0]
    stopped = Catch(entry, "behave", (), (), (
        "behave produced no complete results (see behave.log):\n"
        "USING RUNNER: behave.runner:Runner\n"
        "ModuleNotFoundError: No module named 'no_such_module'",))
    text = format_catches([stopped])
    assert "MISSED: the suite stopped: ModuleNotFoundError: No module named" in text


def test_the_self_test_runs_the_machines_as_the_default_run_does() -> None:
    # What the self-test proves, the user's `jobconform run` must find (issue 33): the
    # machines draw the same sequences only at the same examples and seed, so the gallery
    # test above (check_entry's defaults) and `jobconform selftest` use the run's defaults,
    # and the command line shows them.
    import inspect

    import click
    from click.testing import CliRunner
    from hypothesis import Phase

    from jobconform.conformance.cli import main
    from jobconform.conformance.cli import run as run_command
    from jobconform.conformance.cli import selftest as selftest_command
    from jobconform.conformance.defaults import RUN_EXAMPLES, RUN_SEED
    from jobconform.conformance.shrinking import machine_phases, without_shrinking

    def defaults(command: click.Command) -> dict[str, object]:
        return {param.name: param.default for param in command.params
                if param.name in ("examples", "seed")}

    assert defaults(run_command) == {"examples": RUN_EXAMPLES, "seed": RUN_SEED}
    assert (RUN_EXAMPLES, RUN_SEED) == (100, 0)
    assert defaults(selftest_command) == defaults(run_command)
    check = inspect.signature(check_entry).parameters
    assert {name: check[name].default for name in ("examples", "seed")} == defaults(run_command)
    # The self-test does not shrink what it finds; the run's other phases, which draw the
    # sequences, are the same.
    shrinking = machine_phases()
    with without_shrinking():
        assert machine_phases() == [phase for phase in shrinking if phase != Phase.shrink]
    shown = " ".join(CliRunner().invoke(main, ["run", "--help"]).output.split())
    assert f"[default: {RUN_EXAMPLES};" in shown
    assert f"[default: {RUN_SEED};" in shown


def test_a_selection_hands_behave_and_robot_only_the_files_that_name_it() -> None:
    # Both parse every file they are given before a tag filter skips a case: the gallery's
    # test selects one requirement per entry and parses one file a suite, not all of them.
    files = [*sorted(suite_folder("jobconform.features").rglob("*.feature")),
             *sorted(suite_folder("jobconform.robot").rglob("*.robot"))]
    assert [path.name for path in files_mentioning(files, ["ST-004"])] == [
        "stuck.feature", "stuck.robot"]
    assert files_mentioning(files, ["ST-00"]) == files_mentioning(files, []) == []


def test_every_entry_point_takes_the_one_default_example_count() -> None:
    # The default dropped from 200 to 100 (issue 33) while the machines, RunConfig, the
    # seed coverage measure and the spec gate each kept a 200 of their own: a caller that
    # leaves the count out gets the default run's, from conformance/defaults.py.
    import inspect
    from dataclasses import fields

    from jobconform.conformance import seed_coverage, spec_gate
    from jobconform.conformance.defaults import RUN_EXAMPLES
    from jobconform.conformance.machine_runner import run_machine
    from jobconform.conformance.machines import load_attribute, machines
    from jobconform.conformance.runner import RunConfig

    functions = [run_machine, seed_coverage.measure, spec_gate.check,
                 *(load_attribute(entry.function) for entry in machines())]
    defaults = {function.__qualname__: inspect.signature(function).parameters["examples"].default
                for function in functions}
    assert defaults == dict.fromkeys(defaults, RUN_EXAMPLES)
    [examples] = [item.default for item in fields(RunConfig) if item.name == "examples"]
    assert examples == RUN_EXAMPLES


def _blame_benchmark() -> ModuleType:
    import importlib.util

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "blame_accuracy.py"
    spec = importlib.util.spec_from_file_location("blame_accuracy", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_blame_benchmark_sorts_a_failure_beyond_the_primary_apart() -> None:
    # A report that fails a second requirement beside an exact primary (a failed case that
    # blamed nothing, as Robot's cut messages once did for TS-010) is not exact (issue 33).
    module = _blame_benchmark()
    entry = gallery()[0]
    primary = entry.catches
    exact = Catch(entry, "robot", (primary,), (primary,))
    beyond = Catch(entry, "robot", (primary, "TS-010"), (primary,))
    among = Catch(entry, "robot", (primary, "TS-010"), (primary, "TS-010"))
    assert [module.classify(catch) for catch in (exact, beyond, among)] == [
        "exact", "beyond", "among"]
    assert module.miss_lines([exact, beyond]) == [
        f"  {entry.name} [robot] beyond: expected {primary}, primaries {primary};"
        " also failed: TS-010"]
    summary = module.summary_lines([exact, beyond], ("robot",))
    assert summary[0].split() == ["suite", "exact", "beyond", "among", "other", "missed"]
    assert summary[1].split() == ["robot", "1/2", "50%", "1", "0", "0", "0"]


def test_a_requirement_an_entry_also_breaks_is_named_beside_its_primary_never_instead() -> None:
    # A store write without the expected status lets a late outcome into an ended job
    # (LC-003) and a superseded owner's write into a re-queued one (RD-006): one bug, two
    # rules broken, each suite may name both; the primary must be among them, and a
    # requirement the entry does not declare is a second cause as before (issue 33).
    module = _blame_benchmark()
    entry = replace(gallery()[0], catches="LC-003", also_breaks=("RD-006",))
    both = Catch(entry, "behave", ("LC-003", "RD-006"), ("LC-003", "RD-006"))
    instead = Catch(entry, "behave", ("RD-006",), ("RD-006",))
    third = Catch(entry, "behave", ("LC-003", "RD-006", "RD-001"),
                  ("LC-003", "RD-006", "RD-001"))
    beyond = Catch(entry, "behave", ("LC-003", "RD-001"), ("LC-003",))
    assert both.primaries_are_its_bug and both.report_fails_its_bug_only
    assert not instead.primaries_are_its_bug
    assert not third.primaries_are_its_bug
    assert beyond.primaries_are_its_bug and not beyond.report_fails_its_bug_only
    assert [module.classify(catch) for catch in (both, instead, third, beyond)] == [
        "exact", "other", "among", "beyond"]
    assert module.miss_lines([third]) == [
        f"  {entry.name} [behave] among: expected LC-003 (also breaks RD-006),"
        " primaries LC-003, RD-006, RD-001"]


def test_what_an_entry_also_breaks_is_another_requirement_of_the_spec() -> None:
    # Named here one by one: `also_breaks` is for a bug the spec's own words say breaks a
    # second rule, never a way to let a misblame pass, so each one is a decision to read.
    registry = load_registry()
    declared = {entry.name: entry.also_breaks for entry in gallery() if entry.also_breaks}
    assert declared == {"sql_unconditioned_write": ("RD-006",),
                        "threaded_retry_without_backoff": ("RT-010",)}
    for entry in gallery():
        for rid in entry.also_breaks:
            assert rid != entry.catches
            registry.requirement(rid)  # raises for an unknown id
