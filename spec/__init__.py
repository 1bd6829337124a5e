"""The versioned spec: requirement registry, profiles and the lock of normative text.

The YAML files beside this module are the normative data. This module loads them,
validates them against the JSON Schemas kept here, and turns them into frozen values.
A malformed file is reported with the file, the place inside it and what to fix.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

import jsonschema
import yaml

from jobconform.spec.areas import BUILTIN_AREAS, Area, areas

# libyaml's loader parses the spec files about ten times faster than the pure-Python one and
# builds the same values; PyYAML is built without it on some platforms, so fall back.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# The kit's own areas' files: lifecycle first, the others in the order of their
# requirement-id prefixes (the order requirements appear in the registry and reports).
AREA_FILES = tuple(area.spec_file for area in sorted(
    BUILTIN_AREAS, key=lambda area: (area.name != "lifecycle", area.prefix)))
PROFILES_FILE = "profiles.yaml"
LOCK_FILE = "requirements.lock"
PARAMETER_VALUE = float | int | str | bool | None
# The precision time is kept and compared to (LC-005), unless a profile relaxes it.
MICROSECOND = 1e-6


class SpecError(ValueError):
    """The spec data is malformed or inconsistent; the message says where and how to fix it."""


@dataclass(frozen=True)
class Source:
    seed: str
    section: str


@dataclass(frozen=True)
class Requirement:
    id: str
    area: str
    level: str
    title: str
    statement: str
    sources: tuple[Source, ...]
    profiles: frozenset[str]
    parameters: Mapping[str, PARAMETER_VALUE] = field(default_factory=dict)
    # Capabilities a backend must claim, besides the area, for the requirement to be
    # checked on it (`store-faults:reminders`); without them it is "not claimed".
    needs: frozenset[str] = frozenset()

    def normative_hash(self) -> str:
        """Hash of the normative text: what may change only with a version bump."""
        normative = {
            "id": self.id,
            "level": self.level,
            "title": self.title,
            "statement": self.statement,
            "parameters": dict(self.parameters),
        }
        encoded = json.dumps(normative, sort_keys=True, ensure_ascii=True).encode()
        return hashlib.sha256(encoded).hexdigest()


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    vocabulary: Mapping[str, str]
    max_concurrent: int
    max_tasks: int | None
    cleanup_max_age_seconds: float
    max_retry_delay_ms: float
    jitter: str
    areas: frozenset[str]
    # The precision time is kept and compared to (LC-005): a microsecond, unless the profile
    # declares a coarser one (a store that keeps milliseconds); reported with every run.
    time_precision_seconds: float = MICROSECOND
    # Defaults of the areas beyond the job lifecycle, by area: {"breaker": {"threshold": 3}}.
    area_parameters: Mapping[str, Mapping[str, PARAMETER_VALUE]] = field(default_factory=dict)

    def parameter(self, area: str, name: str) -> PARAMETER_VALUE:
        """One default of an area, as this profile sets it.

        Raises:
            SpecError: the profile sets no such parameter.
        """
        try:
            return self.area_parameters[area][name]
        except KeyError:
            raise SpecError(
                f"profile {self.name!r} sets no parameter {name!r} for area {area!r};"
                f" add it under area_parameters.{area} in {PROFILES_FILE}"
            ) from None

    def to_canonical(self, native_status: str) -> str:
        """Translate a runtime's own status name into the canonical one.

        Raises:
            SpecError: the name is not in this profile's vocabulary.
        """
        for canonical, native in self.vocabulary.items():
            if native == native_status:
                return canonical
        known = ", ".join(sorted(self.vocabulary.values()))
        raise SpecError(
            f"status {native_status!r} is not in profile {self.name!r}'s vocabulary ({known})"
        )


@dataclass(frozen=True)
class Registry:
    version: str
    requirements: tuple[Requirement, ...]
    profiles: Mapping[str, Profile]

    def requirement(self, requirement_id: str) -> Requirement:
        for requirement in self.requirements:
            if requirement.id == requirement_id:
                return requirement
        raise SpecError(f"unknown requirement id {requirement_id!r}")

    def ids(self) -> tuple[str, ...]:
        return tuple(requirement.id for requirement in self.requirements)

    def profile(self, name: str) -> Profile:
        try:
            return self.profiles[name]
        except KeyError:
            known = ", ".join(sorted(self.profiles))
            raise SpecError(f"unknown profile {name!r}; known profiles: {known}") from None

    def lock_text(self) -> str:
        """The content requirements.lock must have for the current normative text."""
        lines = [f"version {self.version}"]
        lines += [f"{req.id} {req.normative_hash()}" for req in self.requirements]
        return "\n".join(lines) + "\n"


def spec_files() -> Traversable:
    """The folder holding the spec data (inside the installed package)."""
    return resources.files(__name__)


def _read(folder: Traversable, name: str) -> str:
    try:
        return folder.joinpath(name).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"spec file {name} is missing from {folder}") from None


def _load_yaml(folder: Traversable, name: str) -> Any:
    text = _read(folder, name)
    try:
        return yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as error:
        raise SpecError(f"spec file {name} is not valid YAML: {error}") from None


def _validate(document: Any, schema_name: str, file_name: str, folder: Traversable) -> None:
    schema = json.loads(_read(folder, schema_name))
    errors = sorted(
        jsonschema.Draft202012Validator(schema).iter_errors(document),
        key=lambda error: list(error.absolute_path),
    )
    if errors:
        first = errors[0]
        where = "/".join(str(part) for part in first.absolute_path) or "(top level)"
        raise SpecError(
            f"spec file {file_name} does not match {schema_name} at {where}: {first.message}"
            f" ({len(errors)} problem(s) in all; fix the file and load again)"
        )


def _profiles(document: Mapping[str, Any]) -> dict[str, Profile]:
    profiles = {}
    for name, body in document["profiles"].items():
        parameters = body["parameters"]
        natives = list(body["vocabulary"].values())
        shared = sorted({native for native in natives if natives.count(native) > 1})
        if shared:
            raise SpecError(
                f"profile {name!r} gives several states the same name {shared}; each"
                f" canonical state needs its own name in {PROFILES_FILE}"
            )
        profiles[name] = Profile(
            name=name,
            description=body["description"].strip(),
            vocabulary=dict(body["vocabulary"]),
            max_concurrent=parameters["max_concurrent"],
            max_tasks=parameters["max_tasks"],
            cleanup_max_age_seconds=float(parameters["cleanup_max_age_seconds"]),
            max_retry_delay_ms=float(parameters["max_retry_delay_ms"]),
            jitter=parameters["jitter"],
            areas=frozenset(body["areas"]),
            time_precision_seconds=float(
                parameters.get("time_precision_seconds", MICROSECOND)),
            area_parameters={area: dict(values)
                             for area, values in body.get("area_parameters", {}).items()},
        )
    return profiles


def _requirements(document: Mapping[str, Any]) -> list[Requirement]:
    return [
        Requirement(
            id=entry["id"],
            area=document["area"],
            level=entry["level"],
            title=entry["title"],
            statement=" ".join(entry["statement"].split()),
            sources=tuple(Source(s["seed"], s["section"]) for s in entry["sources"]),
            profiles=frozenset(entry["profiles"]),
            parameters=dict(entry.get("parameters", {})),
            needs=frozenset(entry.get("needs", ())),
        )
        for entry in document["requirements"]
    ]


def load_registry(folder: Traversable | None = None) -> Registry:
    """Load, validate and cross-check the whole spec.

    The installed spec (no `folder`) is read once per process: it is package data, which
    does not change while the process runs, and the suites ask for it in every Robot test
    and Behave scenario. A registry is frozen, so every caller can share the one value. A
    given `folder` (a copy being edited, an older checkout) is read anew on every call.

    Args:
        folder: where the spec files are; the installed package data by default.

    Raises:
        SpecError: a file is missing, not YAML, off-schema, or the files disagree
            (duplicate id, unknown profile).
    """
    if folder is None:
        return _installed_registry()
    return _read_registry(folder)


@functools.cache
def _installed_registry() -> Registry:
    # A SpecError is not cached: functools.cache keeps only returned values.
    return _read_registry(spec_files())


def _read_registry(folder: Traversable) -> Registry:
    profiles_document = _load_yaml(folder, PROFILES_FILE)
    _validate(profiles_document, "profiles.schema.json", PROFILES_FILE, folder)
    profiles = _profiles(profiles_document)

    requirements: list[Requirement] = []
    for file_name in AREA_FILES:
        document = _load_yaml(folder, file_name)
        _validate(document, "registry.schema.json", file_name, folder)
        requirements += _requirements(document)
    for area in _third_party_areas():
        area_folder = resources.files(area.spec_package)
        document = _load_yaml(area_folder, area.spec_file)
        _validate(document, "registry.schema.json", area.spec_file, spec_files())
        requirements += _requirements(document)
        profiles = _with_area(profiles, area)

    seen: set[str] = set()
    for requirement in requirements:
        if requirement.id in seen:
            raise SpecError(f"requirement id {requirement.id} is defined twice; ids are unique")
        seen.add(requirement.id)
        unknown = requirement.profiles - profiles.keys()
        if unknown:
            raise SpecError(
                f"requirement {requirement.id} names unknown profile(s) {sorted(unknown)};"
                f" define them in {PROFILES_FILE} or fix the name"
            )
    version = _read(folder, "VERSION").strip()
    return Registry(version=version, requirements=tuple(requirements), profiles=profiles)


def _third_party_areas() -> list[Area]:
    """Areas registered through the `jobconform.areas` entry point group."""
    return [area for area in areas() if area not in BUILTIN_AREAS]


def _with_area(profiles: dict[str, Profile], area: Area) -> dict[str, Profile]:
    """The profiles, with a third-party area added to those it declares (all by default)."""
    unknown = area.profiles - profiles.keys()
    if unknown:
        raise SpecError(f"area {area.name!r} names unknown profile(s) {sorted(unknown)}")
    return {name: (replace(profile, areas=profile.areas | {area.name})
                   if not area.profiles or name in area.profiles else profile)
            for name, profile in profiles.items()}


def lock_problems(registry: Registry, folder: Traversable | None = None) -> list[str]:
    """Differences between requirements.lock and the normative text, as readable lines."""
    folder = folder if folder is not None else spec_files()
    try:
        recorded = _read(folder, LOCK_FILE).splitlines()
    except SpecError as error:
        return [f"{error}: run `jobconform spec lock` to create it"]
    expected = registry.lock_text().splitlines()
    problems = []
    recorded_hashes = dict(line.split(" ", 1) for line in recorded if " " in line)
    expected_hashes = dict(line.split(" ", 1) for line in expected)
    if recorded_hashes.get("version") == expected_hashes["version"]:
        for key in sorted(expected_hashes.keys() | recorded_hashes.keys()):
            if recorded_hashes.get(key) != expected_hashes.get(key):
                change = "removed" if key not in expected_hashes else "changed (or is new)"
                problems.append(
                    f"{key}: normative text {change} without a VERSION bump; bump"
                    " spec/VERSION, add a CHANGELOG line, then run `jobconform spec lock`"
                )
    elif recorded != expected:
        problems.append(
            f"requirements.lock records version {recorded_hashes.get('version')} but the spec"
            f" is {expected_hashes['version']}: run `jobconform spec lock` to record the new text"
        )
    return problems
