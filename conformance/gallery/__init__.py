"""The self-test gallery: deliberately broken backends, one known bug class each.

Each area keeps its broken backends in its own `gallery` module (`conformance/<area>/
gallery.py`); the modules here hold the galleries of the shipped runtimes themselves (SQL,
threaded, process) and of known-deviation files. `jobconform selftest` runs the suites
against every entry and proves each is caught by the requirement named in `catches`. A
suite that catches none of these is worthless, whatever it counts.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class GalleryEntry:
    """One broken backend: where it loads from, its bug, and the requirement that must
    name it."""

    name: str
    target: str  # `module:attr` of the broken backend
    bug: str
    catches: str
    source: str
    # The profile the self-test checks it under: a bug of a profile-scoped requirement
    # (LC-026 under task-manager) shows only under a profile that has it.
    profile: str = "canonical"


def bug_text(broken: type) -> str:
    """A broken class's docstring on one line: the bug its gallery entry shows."""
    return " ".join((broken.__doc__ or "").split())


def register(module: str, name: str, backend: type, bug: str, catches: str,
             source: str) -> GalleryEntry:
    """Name `backend` as the broken backend of entry `name` and put it in `module`, so
    that it loads as `module:name`; the entry that says so."""
    backend.name = f"gallery.{name}"  # type: ignore[attr-defined]
    backend.__name__ = backend.__qualname__ = name
    backend.__doc__ = bug
    setattr(sys.modules[module], name, backend)
    return GalleryEntry(name, f"{module}:{name}", bug, catches, source)
