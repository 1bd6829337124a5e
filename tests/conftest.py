"""Fixtures many test modules share: the spec's registry and its canonical profile.

A module that needs its own (a registry it edits, another profile) defines a fixture of
the same name, which takes precedence over these.
"""

from __future__ import annotations

import pytest

from jobconform.spec import Profile, Registry, load_registry


@pytest.fixture(scope="module")
def registry() -> Registry:
    """The shipped spec's registry, loaded once per module as the modules did each."""
    return load_registry()


@pytest.fixture(scope="module")
def canonical(registry: Registry) -> Profile:
    return registry.profile("canonical")
