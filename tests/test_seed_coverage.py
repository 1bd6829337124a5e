"""The seed coverage table (spec/seed-coverage.yaml): the spec gate fails when a seed, a
cited section or a row's accounting is missing, or a row names an unknown requirement;
with the seed files at hand it also finds sections the table leaves out."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import pytest

from jobconform.conformance import spec_gate
from jobconform.spec import Registry


@pytest.fixture
def table() -> Any:
    return copy.deepcopy(spec_gate.load_seed_coverage())


def _seed(table: Any, name: str) -> Any:
    return next(seed for seed in table["seeds"] if seed["seed"] == name)


def _row(table: Any, seed: str, key: str) -> Any:
    return next(row for row in _seed(table, seed)["sections"]
                if spec_gate.section_key(row["section"]) == key)


def test_the_shipped_table_accounts_for_every_seed_section(registry: Registry,
                                                            table: Any) -> None:
    assert spec_gate.seed_coverage_problems(registry, table) == []
    figures = spec_gate.seed_coverage_figures(table)
    assert set(figures) == {"000", "002", "004", "all"}
    every = figures["all"]
    assert every["statements"] == (every["covered"] + every["partly"] + every["missing"]
                                   + every["out_of_scope"])
    assert every["covered"] > every["out_of_scope"] + every["partly"] + every["missing"]


def test_every_covered_row_is_backed_by_tests(registry: Registry, table: Any) -> None:
    assert spec_gate.seed_test_problems(registry, table, spec_gate.static_coverage()) == []


def test_the_readme_quotes_the_tables_figures(table: Any) -> None:
    readme = Path(__file__).resolve().parents[1] / "README.md"
    assert spec_gate.seed_coverage_line(table) in " ".join(
        readme.read_text(encoding="utf-8").split())


def test_the_issue_35_overclaims_stay_counted_as_not_fully_covered(table: Any) -> None:
    # Each of these rows once counted every statement covered while the spec or the tests
    # said otherwise; a row that goes back to full coverage must come with the tests (as
    # seed 000's Stuck Job Detection did, with the self-running pass, SR-002, seed 004's
    # TaskStore get/list/delete/list_expired, with TS-011 and TS-012, and seed 002's
    # §10.11.1 governor, with its master switch, RG-013).
    for seed, key in (("002", "10.14"),):
        row = _row(table, seed, key)
        assert row.get("covered", 0) + row.get("out_of_scope", 0) < row["statements"], key
        assert "gap" in row, key


def _coverage_without(requirement_id: str) -> spec_gate.Coverage:
    """The suites' tags, with every test of one requirement gone."""
    coverage = spec_gate.static_coverage()
    return spec_gate.Coverage([test for test in coverage.tests
                               if requirement_id not in test.requirements])


def test_a_covered_row_naming_a_requirement_no_test_checks_fails(
        registry: Registry, table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # TS-010 (the store's thread safety) is in an area with a machine; take the machine
    # away as well, so only the tags would have backed it.
    monkeypatch.setattr(spec_gate, "_machine_areas", lambda: {})
    problems = spec_gate.seed_test_problems(registry, table, _coverage_without("TS-010"))
    assert any(p.startswith("seed 004 'Contract: TaskStore.save' counts TS-010 as covering"
                            " it, but no test checks TS-010") for p in problems)


def test_a_requirement_is_backed_by_its_areas_machine(registry: Registry) -> None:
    checks = spec_gate.requirement_checks(registry, _coverage_without("RG-009"))
    assert checks["RG-009"] == ["hypothesis: governor machine"]
    assert "hypothesis: lifecycle machine" in spec_gate.requirement_checks(
        registry, spec_gate.static_coverage())["ST-002"]


def test_a_pinned_test_must_exist_and_carry_the_rows_requirement(registry: Registry,
                                                                  table: Any) -> None:
    row = _row(table, "000", "Stuck Job Detection")
    row["tests"] = ["behave: stuck.feature: A scenario nobody wrote",
                    "robot: Robot.Store.Saves Made At Once From Several Threads Lose Nothing",
                    "hypothesis: no such machine", "hypothesis: governor machine",
                    "hypothesis: lifecycle machine"]
    problems = spec_gate.seed_test_problems(registry, table, spec_gate.static_coverage())
    where = "seed 000 'Stuck Job Detection'"
    assert problems == [
        f"{where} names 'behave: stuck.feature: A scenario nobody wrote', which is no test"
        " of the suites",
        f"{where} names 'robot: Robot.Store.Saves Made At Once From Several Threads Lose"
        " Nothing', which carries none of the row's requirements",
        f"{where} names 'hypothesis: no such machine': no such machine",
        f"{where} names 'hypothesis: governor machine', which covers none of the row's"
        " requirements",
    ]


def test_the_gate_reports_a_covered_row_without_tests(registry: Registry, table: Any,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.delenv(spec_gate.SEEDS_DIR_ENV, raising=False)
    _row(table, "000", "Stuck Job Detection")["tests"] = ["robot: Robot.Stuck.Nothing Here"]
    monkeypatch.setattr(spec_gate, "load_seed_coverage", lambda: table)
    problems = spec_gate.check(registry, tmp_path, run_oracle=False)
    assert "seed 000 'Stuck Job Detection' names 'robot: Robot.Stuck.Nothing Here', which" \
        " is no test of the suites" in problems


def test_section_keys_match_citations_with_qualifiers() -> None:
    key = spec_gate.section_key
    assert key("10.11 Dispatch Circuit Breaker (AUTH-only counting)") == "10.11"
    assert key("10.11.1 Correlated-failure controls") == "10.11.1"
    assert key("10.14 Agent Self-Reminders, AC #3") == "10.14"
    assert key("Review Fixes Applied (B1)") == "Review Fixes Applied"
    assert key("Contract: AsyncTaskManager.get_status (D-23)") == \
        "Contract: AsyncTaskManager.get_status"
    assert key("1.1 Pluggable Task Storage") == "1.1"


def test_a_missing_seed_and_a_missing_cited_section_are_reported(registry: Registry,
                                                                 table: Any) -> None:
    table["seeds"] = [seed for seed in table["seeds"] if seed["seed"] != "000"]
    seed_002 = _seed(table, "002")
    seed_002["sections"] = [row for row in seed_002["sections"]
                            if spec_gate.section_key(row["section"]) != "10.13"]
    problems = spec_gate.seed_coverage_problems(registry, table)
    assert "seed 000 has no entry in spec/seed-coverage.yaml" in problems
    assert any(p.startswith("RD-001 cites seed 002 '10.13 Pull-Mode") and "has no row" in p
               for p in problems)


def test_an_unknown_id_and_a_citation_the_row_does_not_name_are_reported(
        registry: Registry, table: Any) -> None:
    row = _row(table, "004", "1.1")
    row["requirements"] = [rid for rid in row["requirements"] if rid != "TS-006"] + ["TS-099"]
    problems = spec_gate.seed_coverage_problems(registry, table)
    assert "seed 004 '1.1 Pluggable Task Storage' names TS-099, which the spec does not" \
        " define" in problems
    assert any(p.startswith("TS-006 cites seed 004 '1.1 Pluggable Task Storage', but that"
                            " row does not name it") for p in problems)


def test_a_row_must_add_up_and_explain_what_it_leaves_out(registry: Registry,
                                                         table: Any) -> None:
    row = _row(table, "002", "10.9")
    del row["out_of_scope_reason"]
    # One statement fewer covered, and no `gap` saying why (the row may have none today).
    gap_row = _row(table, "004", "1.2")
    gap_row["covered"] -= 1
    gap_row.pop("gap", None)
    over = _row(table, "000", "Job States")
    over["covered"] = 6
    partly = _row(table, "000", "Timestamps")
    partly["partly"] = 1
    problems = spec_gate.seed_coverage_problems(registry, table)
    assert any("'10.9 Business Task Validation' has statements out of scope" in p
               for p in problems)
    assert any("'1.2 Retry with Configurable Backoff' leaves 1 statement(s) partly or not"
               " covered" in p for p in problems)
    assert any("'Job States' counts 6 covered, 0 partly covered and 0 out of scope of only 5"
               in p for p in problems)
    assert any("'Timestamps' counts 1 covered, 1 partly covered and 0 out of scope of only 1"
               in p for p in problems)


def test_an_off_schema_table_is_reported(registry: Registry, table: Any) -> None:
    _row(table, "000", "Timestamps")["statements"] = "one"
    problems = spec_gate.seed_coverage_problems(registry, table)
    assert len(problems) == 1 and "does not match seed-coverage.schema.json" in problems[0]


def test_with_the_seed_files_a_section_the_table_lacks_is_found(
        registry: Registry, table: Any, tmp_path: Path) -> None:
    seed_002 = _seed(table, "002")
    lines = ["Requirements (a made-up seed)", "10. Scheduling & Autonomy"]
    lines += [row["section"] + " (#1)" for row in seed_002["sections"]]
    lines += ["10.99 A Section Nobody Listed (#2)", "  • a bullet"]
    (tmp_path / seed_002["file"]).write_text("\n".join(lines), encoding="utf-8")
    table["seeds"] = [seed_002]
    _seed(table, "002")["sections"].append(
        {"section": "10.98 Listed But Absent", "statements": 0,
         "out_of_scope_reason": "made up for this test"})
    problems = spec_gate.seed_coverage_problems(registry, table, tmp_path)
    assert ("seed 002: section '10.99 A Section Nobody Listed (#2)' of"
            f" {seed_002['file']} is missing from seed-coverage.yaml") in problems
    assert ("seed 002: the table lists '10.98 Listed But Absent', which is no line of"
            f" {seed_002['file']}") in problems


def test_the_gate_reports_table_problems(registry: Registry, table: Any,
                                         monkeypatch: pytest.MonkeyPatch,
                                         tmp_path: Path) -> None:
    monkeypatch.delenv(spec_gate.SEEDS_DIR_ENV, raising=False)
    table["seeds"] = [seed for seed in table["seeds"] if seed["seed"] != "004"]
    monkeypatch.setattr(spec_gate, "load_seed_coverage", lambda: table)
    problems = spec_gate.check(registry, tmp_path, run_oracle=False)
    assert "seed 004 has no entry in spec/seed-coverage.yaml" in problems


@pytest.mark.skipif(not os.environ.get(spec_gate.SEEDS_DIR_ENV),
                    reason=f"{spec_gate.SEEDS_DIR_ENV} does not point at the seed files")
def test_the_table_matches_the_seed_files(registry: Registry, table: Any) -> None:
    folder = Path(os.environ[spec_gate.SEEDS_DIR_ENV])
    assert spec_gate.seed_coverage_problems(registry, table, folder) == []


# -- coverage over seeds on another backend (issue 33) ----------------------------------------


def test_coverage_over_seeds_runs_a_machine_on_the_backend_given(registry: Registry) -> None:
    """The self-running machine applies only to a backend that claims its area (threaded),
    so measuring it needs --backend; one seed and few examples keep this cheap."""
    from jobconform.conformance.seed_coverage import measure, summary

    assert measure(registry, (0,), examples=5, profiles=("async-jobs",),
                   machine_names=("self-running machine",)) == []
    results = measure(registry, (0,), examples=5, backend_name="threaded",
                      profiles=("async-jobs",), machine_names=("self-running machine",))
    assert [(r.machine, r.profile, r.backend) for r in results] == [
        ("self-running machine", "async-jobs", "threaded")]
    assert results[0].diverged == {}
    assert summary(results).startswith("self-running machine (async-jobs) on threaded, seeds 0-0")


def test_the_coverage_script_passes_its_backend_option_on(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    import importlib.util
    import sys

    script = Path(__file__).resolve().parents[1] / "benchmarks" / "coverage_over_seeds.py"
    spec = importlib.util.spec_from_file_location("coverage_over_seeds", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    asked: dict[str, Any] = {}

    def measure(registry: Registry, seeds: tuple[int, ...], examples: int,
                **options: Any) -> list[Any]:
        asked.update(options, seeds=seeds, examples=examples)
        return []

    monkeypatch.setattr(module, "measure", measure)
    monkeypatch.setattr(sys, "argv", ["coverage_over_seeds.py", "--backend", "threaded",
                                      "--seeds", "0-1", "--examples", "3", "--quiet"])
    assert module.main() == 0
    assert asked["backend_name"] == "threaded"
    assert (asked["seeds"], asked["examples"]) == ((0, 1), 3)
    assert "every requirement reached on every seed 0-1" in capsys.readouterr().out
