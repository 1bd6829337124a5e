"""The registry of areas: one declaration per area names its pieces in every layer.

An area (lifecycle, breaker, idempotency, ...) is the unit a reader looks for. Its pieces
live in one folder per layer (`reference/<area>/`, `backends/<area>/`,
`conformance/<area>/`, `spec/<area>.{md,yaml}`, `features/<area>.feature`,
`robot/<area>.robot`), and one `Area` value names them. The runner, the machine list, the
report, the spec loader, the backend loader and the self-test read this registry; none of
them lists areas by hand.

Pieces are named by import path (`"module:attribute"` or `"module"`) and loaded only when
used, so reading the registry imports nothing heavy, and the spec layer, which everything
else builds on, stays free of imports from the layers above it.

A third party adds an area through the `jobconform.areas` entry point group, whose entry
points load an `Area`:

    [project.entry-points."jobconform.areas"]
    quota = "quota_area:AREA"
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import import_module, metadata
from typing import Any

ENTRY_POINT_GROUP = "jobconform.areas"


class AreaError(ValueError):
    """An area declaration is malformed, or two areas claim one name or prefix."""


@dataclass(frozen=True)
class AreaMachine:
    """A Hypothesis machine. It runs when the backend claims one of the areas it covers and
    the profile has it; a machine covering several areas is declared by the first of them.

    `run` is `module:function` with the signature
    `(backend, profile, registry, seed, examples) -> MachineRun`.
    """

    title: str
    run: str
    covers: frozenset[str]


@dataclass(frozen=True)
class Area:
    """One area's pieces, by import path.

    Args:
        name: the capability a backend claims (`breaker`); also the spec file's stem.
        prefix: its requirement IDs' prefix (`CB` for CB-001).
        oracle: the module of its pure reference model.
        protocol: the module that documents what an adapter implements for it.
        opener: the adapter method that opens the area's service (`open_breaker`), or None
            when the area is checked through the job `Runtime` itself.
        machine: its Hypothesis machine, if it declares one.
        steps: its Behave step library (imported by `features/steps/`).
        keywords: its Robot Framework library (`module.Class`, as the suites import it).
        gallery: `module:attribute` of its broken backends (a tuple of GalleryEntry).
        spec_package: the package holding `<name>.yaml` and `<name>.md` (the kit's spec
            by default; a third-party area ships its own).
        features: a package or folder of `.feature` files outside the kit's own suites.
        robot: a package or folder of `.robot` suites outside the kit's own.
        profiles: the profiles the area belongs to, for a third-party area (the kit's own
            areas are listed per profile in `spec/profiles.yaml`); empty means every one.
        vocabulary: `module:attribute` of its declared `Vocabulary`
            (conformance/vocabulary.py), whose Behave steps are derived rather than
            imported from `steps`.
    """

    name: str
    prefix: str
    oracle: str
    protocol: str
    opener: str | None = None
    machine: AreaMachine | None = None
    steps: str | None = None
    keywords: str | None = None
    gallery: str | None = None
    spec_package: str = "jobconform.spec"
    features: str | None = None
    robot: str | None = None
    profiles: frozenset[str] = frozenset()
    vocabulary: str | None = None

    @property
    def spec_file(self) -> str:
        return f"{self.name}.yaml"


def load_attribute(path: str) -> Any:
    """The object at `module:attribute` (or the module itself, with no colon)."""
    module_name, _, attribute = path.partition(":")
    module = import_module(module_name)
    return getattr(module, attribute) if attribute else module


_C = "jobconform.conformance"
_B = "jobconform.backends"
_R = "jobconform.reference"


def _machine(title: str, module: str, function: str, *covers: str) -> AreaMachine:
    return AreaMachine(title, f"{module}:{function}", frozenset(covers))


def _service_area(name: str, prefix: str, oracle: str, keywords: str,
                  machine: AreaMachine, declared: bool = False) -> Area:
    """An area with a service of its own, opened by `open_<name>` on the backend; its
    Behave steps are `declared` in its vocabulary (`declarations.VOCABULARY`), or
    written in its `steps` module."""
    return Area(
        name=name, prefix=prefix, oracle=oracle, protocol=f"{_B}.{name}.protocol",
        opener=f"open_{name}", machine=machine,
        steps=None if declared else f"{_C}.{name}.steps",
        vocabulary=f"{_C}.{name}.declarations:VOCABULARY" if declared else None,
        keywords=f"{_C}.{name}.keywords.{keywords}", gallery=f"{_C}.{name}.gallery:GALLERY",
    )


# The kit's own areas, in the order their machines run and the self-test lists them.
BUILTIN_AREAS: tuple[Area, ...] = (
    Area("lifecycle", "LC", oracle=f"{_R}.lifecycle", protocol=f"{_B}.protocol",
         machine=_machine("lifecycle machine", f"{_C}.lifecycle.machine",
                          "run_lifecycle_machine", "lifecycle", "retry", "stuck"),
         steps=f"{_C}.lifecycle.steps", keywords=f"{_C}.lifecycle.keywords.JobconformLibrary",
         gallery=f"{_C}.lifecycle.gallery:GALLERY"),
    Area("retry", "RT", oracle=f"{_R}.backoff", protocol=f"{_B}.protocol"),
    Area("stuck", "ST", oracle=f"{_R}.lifecycle", protocol=f"{_B}.protocol"),
    Area("reaper", "RP", oracle=f"{_R}.reaper", protocol=f"{_B}.protocol",
         machine=_machine("reaper and re-delivery machine", f"{_C}.reaper.machine",
                          "run_reaper_machine", "reaper", "redelivery"),
         vocabulary=f"{_C}.reaper.declarations:VOCABULARY",
         gallery=f"{_C}.reaper.gallery:GALLERY"),
    Area("redelivery", "RD", oracle=f"{_R}.reaper", protocol=f"{_B}.protocol",
         steps=f"{_C}.redelivery.steps",
         vocabulary=f"{_C}.redelivery.declarations:VOCABULARY"),
    _service_area("idempotency", "IK", f"{_R}.idempotency.oracle", "IdempotencyLibrary",
                  _machine("idempotency machine", f"{_C}.idempotency.machine",
                           "run_idempotency_machine", "idempotency"), declared=True),
    _service_area("breaker", "CB", f"{_R}.breaker.oracle", "BreakerLibrary",
                  _machine("breaker machine", f"{_C}.breaker.machine", "run_breaker_machine",
                           "breaker"), declared=True),
    _service_area("governor", "RG", f"{_R}.governor.oracle", "GovernorLibrary",
                  _machine("governor machine", f"{_C}.governor.machine",
                           "run_governor_machine", "governor"), declared=True),
    _service_area("reminders", "RM", f"{_R}.reminders.oracle", "ReminderLibrary",
                  _machine("reminders machine", f"{_C}.reminders.machine",
                           "run_reminder_machine", "reminders"), declared=True),
    _service_area("admission", "AD", f"{_R}.admission", "AdmissionLibrary",
                  _machine("admission machine", f"{_C}.admission.machine",
                           "run_admission_machine", "admission"), declared=True),
    _service_area("loops", "LP", f"{_R}.loops.oracle", "LoopsLibrary",
                  _machine("loops machine", f"{_C}.loops.machine", "run_loops_machine",
                           "loops"), declared=True),
    _service_area("scheduling", "SC", f"{_R}.scheduling.oracle", "SchedulingLibrary",
                  _machine("scheduling machine", f"{_C}.scheduling.machine",
                           "run_scheduling_machine", "scheduling"), declared=True),
    # Its backends live in `task_store`: `jobconform.backends.store` is the job store.
    Area("store", "TS", oracle=f"{_R}.store.oracle", protocol=f"{_B}.task_store.protocol",
         opener="open_store",
         machine=_machine("task store machine", f"{_C}.store.machine", "run_store_machine",
                          "store"),
         vocabulary=f"{_C}.store.declarations:VOCABULARY",
         keywords=f"{_C}.store.keywords.StoreLibrary",
         gallery=f"{_C}.store.gallery:GALLERY"),
    # A runtime's own clockwork: the harness only lets time pass (issue 32). Its backends
    # have `open_self_running`; the oracle gives each action's window.
    Area("self-running", "SR", oracle=f"{_R}.self_running",
         protocol=f"{_B}.self_running", opener="open_self_running",
         machine=_machine("self-running machine", f"{_C}.self_running.machine",
                          "run_self_running_machine", "self-running"),
         vocabulary=f"{_C}.self_running.declarations:VOCABULARY",
         keywords=f"{_C}.self_running.keywords.SelfRunningLibrary",
         gallery=f"{_C}.self_running.gallery:GALLERY"),
    # Restart over the same store (issue 32): checked through the job `Runtime`, which the
    # backend's `restart(runtime, settings, clock, bodies)` replaces by a new one over the
    # same store; the oracle is the lifecycle model's `Restart` command.
    Area("restart", "RS", oracle=f"{_R}.model", protocol=f"{_B}.restart",
         machine=_machine("restart machine", f"{_C}.restart.machine", "run_restart_machine",
                          "restart"),
         vocabulary=f"{_C}.restart.declarations:VOCABULARY",
         keywords=f"{_C}.restart.keywords.RestartLibrary",
         gallery=f"{_C}.restart.gallery:GALLERY"),
    # Loops, reminders, jobs, the breaker and the governor through one admission; its
    # oracle composes theirs.
    _service_area("composite", "CX", f"{_R}.composite.oracle", "CompositeLibrary",
                  _machine("composite machine", f"{_C}.composite.machine",
                           "run_composite_machine", "composite"), declared=True),
)


def _entry_point_areas() -> list[Area]:
    found: list[Area] = []
    for entry_point in metadata.entry_points(group=ENTRY_POINT_GROUP):
        try:
            area = entry_point.load()
        except Exception as error:
            raise AreaError(f"the area entry point {entry_point.name!r} ({entry_point.value})"
                            f" failed to load: {type(error).__name__}: {error}") from error
        if not isinstance(area, Area):
            raise AreaError(f"the area entry point {entry_point.name!r} ({entry_point.value})"
                            f" gave a {type(area).__name__}, not a jobconform.spec.areas.Area")
        found.append(area)
    return sorted(found, key=lambda area: area.name)


@functools.cache
def areas() -> tuple[Area, ...]:
    """Every area: the kit's own, then those registered through entry points, by name.

    Raises:
        AreaError: an entry point does not load an Area, or two areas share a name or a
            requirement-ID prefix.
    """
    every = (*BUILTIN_AREAS, *_entry_point_areas())
    names: dict[str, Area] = {}
    prefixes: dict[str, Area] = {}
    for area in every:
        if area.name in names:
            raise AreaError(f"two areas are named {area.name!r}; rename the third-party one")
        if area.prefix in prefixes:
            raise AreaError(f"areas {prefixes[area.prefix].name!r} and {area.name!r} share"
                            f" the requirement prefix {area.prefix!r}")
        names[area.name] = area
        prefixes[area.prefix] = area
    return every


def area(name: str) -> Area:
    """The area called `name`.

    Raises:
        AreaError: no area has that name.
    """
    for candidate in areas():
        if candidate.name == name:
            return candidate
    known = ", ".join(sorted(candidate.name for candidate in areas()))
    raise AreaError(f"no area is named {name!r}; the areas are: {known}")
