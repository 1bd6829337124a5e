"""Verdicts: a requirement passes only when covered and never failed or blamed."""

from __future__ import annotations

import pytest

from jobconform.conformance.report import RunSummary, console_table
from jobconform.conformance.runner import CaseResult, SuiteRun, blamed_requirements
from jobconform.spec import Registry, load_registry


@pytest.fixture(scope="module")
def registry() -> Registry:
    return load_registry()


def summary(cases: list[CaseResult], capabilities: frozenset[str] = frozenset({"lifecycle"})
            ) -> RunSummary:
    return RunSummary("b", "canonical", capabilities, "0.1.0", 0, [SuiteRun("behave", 0.1,
                                                                           cases)])


def covering_all(registry: Registry) -> list[CaseResult]:
    return [CaseResult("behave", rid, (rid,), True) for rid in registry.ids()]


def test_all_covered_and_passing_passes(registry: Registry) -> None:
    run = summary(covering_all(registry))
    assert not run.failed(registry)
    assert set(run.verdicts(registry)["LC-001"].values()) == {"pass"}


def test_uncovered_requirement_is_untested_and_fails_the_run(registry: Registry) -> None:
    run = summary([case for case in covering_all(registry) if case.name != "LC-001"])
    assert run.verdicts(registry)["LC-001"]["behave"] == "untested"
    assert run.failed(registry)


def test_blamed_requirement_fails_even_when_its_own_cases_pass(registry: Registry) -> None:
    failing = CaseResult("behave", "x", ("LC-002",), False, "boom", ("LC-003",))
    cases = [*covering_all(registry), failing]
    verdicts = summary(cases).verdicts(registry)
    assert verdicts["LC-002"]["behave"] == "fail"
    assert verdicts["LC-003"]["behave"] == "fail"
    assert verdicts["LC-004"]["behave"] == "pass"


def test_unclaimed_area_is_never_a_pass(registry: Registry) -> None:
    run = summary(covering_all(registry), capabilities=frozenset())
    assert set(run.verdicts(registry)["LC-001"].values()) == {"not claimed"}
    assert "0 passed" in console_table(run, registry)


def test_a_tag_naming_no_requirement_fails_the_run(registry: Registry) -> None:
    run = summary([*covering_all(registry), CaseResult("behave", "old", ("LC-999",), True)])
    assert run.unknown_tags(registry) == ["behave: old names unknown LC-999"]
    assert run.failed(registry)
    assert "STALE TAG" in console_table(run, registry)


def test_blamed_requirements_are_read_from_the_divergence_line() -> None:
    message = "diverges\n  requirement(s): LC-013 (Cancel ...), LC-025 (Outcome counters)\n LC-001"
    assert blamed_requirements(message) == ("LC-013", "LC-025")
    assert blamed_requirements("no such line LC-001") == ()
