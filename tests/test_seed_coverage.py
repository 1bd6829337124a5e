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
from jobconform.spec import Registry, load_registry


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


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
    assert every["statements"] == every["covered"] + every["out_of_scope"] + every["gaps"]
    assert every["covered"] > every["out_of_scope"] + every["gaps"]


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
    problems = spec_gate.seed_coverage_problems(registry, table)
    assert any("'10.9 Business Task Validation' has statements out of scope" in p
               for p in problems)
    assert any("'1.2 Retry with Configurable Backoff' leaves 1 statement(s) neither" in p
               for p in problems)
    assert any("'Job States' counts 6 covered and 0 out of scope of only 5" in p
               for p in problems)


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
