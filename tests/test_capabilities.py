"""The capabilities beyond the areas, declared once (jobconform.backends.capabilities), and
what is derived from the declaration."""

from __future__ import annotations

import json
import pathlib
import re

from jobconform.backends import capabilities
from jobconform.backends.breaker.protocol import SEAM_METHODS
from jobconform.backends.capabilities import (
    ACROSS,
    CAPABILITIES,
    NARROWS,
    NOT_CARRIED,
    WITH_AREA,
    needs_pattern,
    schema_with_needs_pattern,
)
from jobconform.backends.loading import CROSS_AREA_CAPABILITIES, QUALIFYING_CAPABILITIES
from jobconform.backends.process import interfaces
from jobconform.backends.shipped import EVERY_SHIPPED_BACKEND
from jobconform.conformance.applicability import PARTIAL_CLAIMS
from jobconform.spec import spec_files
from jobconform.spec.areas import BUILTIN_AREAS

AREA_NAMES = {area.name for area in BUILTIN_AREAS}
SCHEMA = pathlib.Path(str(spec_files().joinpath("registry.schema.json")))


def test_the_table_is_in_name_order_one_line_a_capability() -> None:
    # Helpers add capabilities side by side: a sorted table merges line by line.
    assert list(CAPABILITIES) == sorted(CAPABILITIES)
    source = pathlib.Path(capabilities.__file__).read_text(encoding="utf-8")
    declared = re.findall(r'^[A-Z_]+ += _declare\("([a-z-]+)", .*\)$', source, re.MULTILINE)
    assert declared == list(CAPABILITIES)


def test_each_capability_names_a_kit_area_or_none_and_its_constant_matches_its_name() -> None:
    for name, capability in CAPABILITIES.items():
        assert capability.area in AREA_NAMES | {ACROSS}, name
        assert getattr(capabilities, name.upper().replace("-", "_")) == name
        assert capability.what and not capability.what.endswith("."), name
    assert not CAPABILITIES.keys() & AREA_NAMES


def test_the_partial_claims_are_those_the_applicability_leaves_out() -> None:
    assert {name for name, cap in CAPABILITIES.items() if cap.kind == NARROWS} == set(
        PARTIAL_CLAIMS)


def test_the_loader_and_the_shipped_backends_read_the_table() -> None:
    assert QUALIFYING_CAPABILITIES.keys() | CROSS_AREA_CAPABILITIES.keys() == CAPABILITIES.keys()
    assert {name for name, (area, _) in QUALIFYING_CAPABILITIES.items()} == {
        name for name, cap in CAPABILITIES.items() if cap.area != ACROSS}
    assert {name for name, cap in CAPABILITIES.items() if cap.shipped} <= EVERY_SHIPPED_BACKEND
    assert not {name for name, cap in CAPABILITIES.items() if not cap.shipped} & (
        EVERY_SHIPPED_BACKEND)


def test_every_shipped_backend_claims_the_areas_but_two_and_what_the_table_says() -> None:
    assert (
        AREA_NAMES - {"restart", "self-running"}
        | {"store-faults:reminders", "store-faults:idempotency"}
        | {name for name, cap in CAPABILITIES.items() if cap.shipped}) == EVERY_SHIPPED_BACKEND


def test_each_process_member_exists_in_version_2s_interfaces() -> None:
    # A misspelt member would silently drop the capability from what a child may claim.
    for name, capability in CAPABILITIES.items():
        if capability.process in (NOT_CARRIED, WITH_AREA):
            continue
        member, _, parameter = capability.process.rstrip(")").partition("(")
        interface, _, method = member.partition(".")
        found = interfaces.methods(interfaces.interface_named(interface))
        assert method in found, name
        assert not parameter or parameter in dict(found[method].parameters), name
    # breaker-seams names one of the seams; the breaker's interface carries all three.
    breaker = interfaces.methods(interfaces.interface_named("BreakerRuntime"))
    assert set(SEAM_METHODS) <= breaker.keys()


def test_each_tracked_capability_came_with_the_changelog_entry_of_its_version() -> None:
    changelog = spec_files().joinpath("CHANGELOG.md").read_text(encoding="utf-8")
    sections = {section.split("\n", 1)[0].strip(): section
                for section in re.split(r"^## ", changelog, flags=re.MULTILINE)[1:]}
    version = spec_files().joinpath("VERSION").read_text(encoding="utf-8").strip()
    for name, capability in CAPABILITIES.items():
        if capability.since:
            assert capability.since in sections, name
            assert f"`{name}" in sections[capability.since], name
            assert tuple(map(int, capability.since.split("."))) <= tuple(
                map(int, version.split(".")))


def test_the_registry_schema_needs_pattern_is_the_one_the_table_generates() -> None:
    # A stale pattern means a capability was added or renamed: regenerate it with
    # `python -m jobconform.backends.capabilities spec/registry.schema.json`.
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    requirement = schema["properties"]["requirements"]["items"]["properties"]
    assert requirement["needs"]["items"]["pattern"] == needs_pattern(AREA_NAMES)


def test_regenerating_the_schema_changes_only_its_needs_pattern() -> None:
    text = SCHEMA.read_text(encoding="utf-8")
    changed = schema_with_needs_pattern(text, "^(x)$")
    assert json.loads(changed) != json.loads(text)
    assert [line for line in changed.splitlines() if line not in text.splitlines()] == [
        line for line in changed.splitlines() if '"^(x)$"' in line]
    assert schema_with_needs_pattern(changed, needs_pattern(AREA_NAMES)) == text
