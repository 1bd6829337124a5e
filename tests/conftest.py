"""Fixtures many test modules share: the spec's registry and its canonical profile, and a
database of each kind for the SQL stores' tests.

A module that needs its own (a registry it edits, another profile) defines a fixture of
the same name, which takes precedence over these.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sql_databases import DATABASES, database, migrated_database

from jobconform.spec import Profile, Registry, load_registry


@pytest.fixture(scope="module")
def registry() -> Registry:
    """The shipped spec's registry, loaded once per module as the modules did each."""
    return load_registry()


@pytest.fixture(scope="module")
def canonical(registry: Registry) -> Profile:
    return registry.profile("canonical")


# A module's tests share one database of each kind: creating a server database per test
# would cost more than the tests. Each test empties the tables it uses.


@pytest.fixture(scope="module", params=DATABASES)
def database_url(request: pytest.FixtureRequest,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An empty database of each kind, for tests that migrate it themselves."""
    with database(request.param, tmp_path_factory.mktemp(request.param)) as url:
        yield url


@pytest.fixture(scope="module", params=DATABASES)
def migrated_database_url(request: pytest.FixtureRequest,
                          tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database of each kind with the stores' schema migrated in, before any thread or
    process of a test starts (two of them migrating at once would race)."""
    with migrated_database(request.param, tmp_path_factory.mktemp(request.param)) as url:
        yield url
