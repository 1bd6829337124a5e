"""Finding a backend by entry point name or by `module:attr`."""

from __future__ import annotations

import functools
import importlib
from importlib.metadata import EntryPoint, entry_points
from typing import Any, cast

from jobconform.backends.capabilities import across_areas, qualifying, store_faults
from jobconform.backends.protocol import Backend
from jobconform.spec.areas import areas

ENTRY_POINT_GROUP = "jobconform.backends"
# Capabilities beyond the areas (declared in jobconform.backends.capabilities): each
# qualifying one area, which the backend must claim too, with the words that say what it
# adds to that area; and those across areas, which add to whichever claimed areas have
# requirements needing them.
QUALIFYING_CAPABILITIES = {name: (cap.area, cap.what) for name, cap in qualifying().items()}
CROSS_AREA_CAPABILITIES = {name: cap.what for name, cap in across_areas().items()}


class BackendLoadError(LookupError):
    """The backend could not be found or does not fit the adapter protocol."""


@functools.cache
def _installed_backends() -> tuple[EntryPoint, ...]:
    """The group's entry points, scanned once per process.

    Each scan reads the metadata of every installed distribution, and the suites load a
    backend for every Robot test and Behave scenario; what is installed does not change
    while a run goes on.
    """
    return tuple(entry_points(group=ENTRY_POINT_GROUP))


def backend_names() -> list[str]:
    """Names of the backends installed under the entry point group."""
    return sorted(point.name for point in _installed_backends())


def _import_target(target: str) -> Any:
    module_name, _, attribute = target.partition(":")
    if not module_name or not attribute:
        raise BackendLoadError(
            f"backend {target!r}: write `package.module:attribute`, both parts non-empty"
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise BackendLoadError(
            f"backend {target!r}: cannot import module {module_name!r} ({error});"
            " check the name and that its package is installed in this environment"
        ) from error
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise BackendLoadError(
            f"backend {target!r}: module {module_name!r} has no attribute {attribute!r}"
        ) from None


def load_backend(name: str) -> Backend:
    """Load a backend by entry point name (`memory`) or `module:attr`.

    The target may be a backend object or a class/factory called with no arguments.

    Raises:
        BackendLoadError: unknown name, import failure, or an object lacking the protocol.
    """
    if ":" in name:
        target = _import_target(name)
    else:
        matches = [point for point in _installed_backends() if point.name == name]
        if not matches:
            known = ", ".join(backend_names()) or "none installed"
            raise BackendLoadError(
                f"unknown backend {name!r}; installed backends: {known}."
                " Give an installed name or `module:attr` for your own adapter"
            )
        try:
            target = matches[0].load()
        except Exception as error:
            raise BackendLoadError(f"backend {name!r} failed to load: {error}") from error
    if isinstance(target, type) or (callable(target) and not hasattr(target, "capabilities")):
        try:
            target = target()
        except Exception as error:
            raise BackendLoadError(
                f"backend {name!r} could not be created: {type(error).__name__}: {error}"
            ) from error
    return check_backend(target, name)


def check_backend(backend: object, name: str) -> Backend:
    """Raise BackendLoadError naming what the object lacks to be a backend."""
    # `open` makes the job runtime; a backend claiming only service areas (a breaker
    # library) opens each of those with its `open_<area>` and needs none.
    known = {area.name: area for area in areas()}
    service_areas = {name for name, area in known.items() if area.opener is not None}
    claims = set(getattr(backend, "capabilities", ())) & known.keys()
    service_areas_only = bool(claims) and claims <= service_areas
    needed = ("name", "profile", "capabilities", *(() if service_areas_only else ("open",)))
    missing = [attr for attr in needed if not hasattr(backend, attr)]
    if missing:
        raise BackendLoadError(
            f"backend {name!r} ({type(backend).__name__}) lacks {', '.join(missing)};"
            " see jobconform.backends.protocol.Backend for what an adapter provides"
        )
    backend = cast(Backend, backend)
    fault_claims = {store_faults(area): area for area in known}
    unknown = (set(backend.capabilities) - known.keys() - fault_claims.keys()
               - QUALIFYING_CAPABILITIES.keys() - CROSS_AREA_CAPABILITIES.keys())
    if unknown:
        raise BackendLoadError(
            f"backend {name!r} claims unknown capabilities {sorted(unknown)};"
            f" known: {sorted(known)}, {', '.join(QUALIFYING_CAPABILITIES)},"
            f" {', '.join(CROSS_AREA_CAPABILITIES)}, and"
            " store-faults:<area> for each"
        )
    for claim, (area, what) in QUALIFYING_CAPABILITIES.items():
        if claim in backend.capabilities and area not in backend.capabilities:
            raise BackendLoadError(f"backend {name!r} claims {claim} but not the"
                                   f" {area} area {what}")
    for claim in sorted(set(backend.capabilities) & fault_claims.keys()):
        if fault_claims[claim] not in backend.capabilities:
            raise BackendLoadError(f"backend {name!r} claims {claim} but not the"
                                   f" {fault_claims[claim]} area itself")
    for area in sorted(set(backend.capabilities) & known.keys()):
        opener = known[area].opener
        if opener is not None and not callable(getattr(backend, opener, None)):
            raise BackendLoadError(
                f"backend {name!r} claims the {area} area but has no method {opener}(clock,"
                f" config, ...); add it (see {known[area].protocol}) or stop claiming {area!r}"
            )
    return backend
