"""The self-test gallery: deliberately broken backends, one known bug class each.

Each area keeps its broken backends in its own `gallery` module (`conformance/<area>/
gallery.py`); the modules here hold the galleries of the shipped runtimes themselves (SQL,
threaded, process) and of known-deviation files. `jobconform selftest` runs the suites
against every entry and proves each is caught by the requirement named in `catches`. A
suite that catches none of these is worthless, whatever it counts.
"""

from __future__ import annotations

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
