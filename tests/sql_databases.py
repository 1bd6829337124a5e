"""Scratch databases on the PostgreSQL and MariaDB servers, for the SQL store's tests.

Each test module that needs a server gets a database of its own, created empty and
dropped afterwards, so the tests never touch the databases a conformance run uses.
Outside CI a missing server skips those tests with the reason; with CI=true it fails
them, so that a CI run cannot pass by skipping its databases.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, make_url, text
from sqlalchemy.exc import DBAPIError

from jobconform.backends.scheduling.sql import SqlScheduleStore
from jobconform.backends.sql import SqlJobStore
from jobconform.backends.sql.database import MIGRATIONS, create_store_engine, migrate
from jobconform.backends.store import InMemoryJobStore, JobStore

SERVER_URLS = {
    "postgresql": os.environ.get("JOBCONFORM_TEST_POSTGRES_URL",
                                 "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"),
    "mariadb": os.environ.get("JOBCONFORM_TEST_MARIADB_URL",
                              "mysql+pymysql://root@127.0.0.1:3306/test"),
}
SERVERS = tuple(SERVER_URLS)
DATABASES = ("sqlite", *SERVERS)
# The job stores a store test runs on: the one kept in memory and the SQL one on each database.
JOB_STORE_KINDS = ("memory", *DATABASES)


# A schedule row as the releases before the schedule's later columns wrote it.
OLD_SCHEDULE = ("INSERT INTO schedules (schedule_id, kind, message, pre_check, created_at)"
                " VALUES ('s', 'once', 'm', false, '2026-01-01 00:00:00')")


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def server_missing(kind: str, reason: str) -> NoReturn:
    message = (f"{kind} is not reachable at {make_url(SERVER_URLS[kind])}: {reason}"
               " (start it, or set JOBCONFORM_TEST_POSTGRES_URL/JOBCONFORM_TEST_MARIADB_URL)")
    if in_ci():
        pytest.fail(f"CI=true requires every database: {message}")
    pytest.skip(message)


@contextmanager
def scratch_database(kind: str) -> Iterator[str]:
    """Create an empty database on the `kind` server; yield its URL; drop it."""
    server_url = make_url(SERVER_URLS[kind])
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    name = f"jobconform_test_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as connection:
            connection.execute(text(f"CREATE DATABASE {name}"))
    except DBAPIError as error:
        admin.dispose()
        server_missing(kind, " ".join(str(error.orig).split()))
    try:
        yield server_url.set(database=name).render_as_string(hide_password=False)
    finally:
        force = " WITH (FORCE)" if kind == "postgresql" else ""
        with admin.connect() as connection:
            connection.execute(text(f"DROP DATABASE {name}{force}"))
        admin.dispose()


@contextmanager
def database(kind: str, folder: Path) -> Iterator[str]:
    """A fresh database of `kind` (SQLite as a file in `folder`); yields its URL."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'jobs.db'}"
        return
    with scratch_database(kind) as url:
        yield url


@contextmanager
def migrated_database(kind: str, folder: Path) -> Iterator[str]:
    """A fresh database of `kind` with the store's schema migrated in; yields its URL."""
    with database(kind, folder) as url:
        engine = create_store_engine(url)
        migrate(engine)
        engine.dispose()
        yield url


@contextmanager
def job_store(kind: str, folder: Path) -> Iterator[JobStore]:
    """A fresh job store of a kind in JOB_STORE_KINDS: in memory, or the SQL store on a fresh
    database of `kind`; a SQL store is closed afterwards."""
    if kind == "memory":
        yield InMemoryJobStore()
        return
    with database(kind, folder) as url:
        sql_store = SqlJobStore.connect(url)
        yield sql_store
        sql_store.close()


@contextmanager
def schedule_store_on_a_new_engine(url: str) -> Iterator[SqlScheduleStore]:
    """The SQL schedule store on `url` through an engine of its own, disposed afterwards:
    what a restarted process reads of what a closed scheduler wrote."""
    engine = create_store_engine(url)
    try:
        yield SqlScheduleStore(engine)
    finally:
        engine.dispose()


def migrations_on(connection: Connection) -> Config:
    """The store's Alembic migrations, run on `connection` (inside its transaction), for a
    test that steps through the revisions itself."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


@contextmanager
def upgraded_over_rows(kind: str, folder: Path, revision: str, *rows: str) -> Iterator[Engine]:
    """A fresh database of `kind` migrated to `revision`, with `rows` (INSERT statements)
    written as a release on that schema would have, then migrated to the newest schema;
    yields an engine on it, for a test that a migration keeps existing rows."""
    with database(kind, folder) as url:
        engine = create_store_engine(url)
        try:
            with engine.begin() as connection:
                config = migrations_on(connection)
                command.upgrade(config, revision)
                for row in rows:
                    connection.execute(text(row))
                command.upgrade(config, "heads")
            yield engine
        finally:
            engine.dispose()


def assert_a_check_refuses(engine: Engine, statement: str) -> None:
    """`statement` fails on a constraint of the schema. The drivers raise different error
    classes with different wording, all naming a check or a constraint."""
    with pytest.raises(Exception, match=r"(?i)check|constraint"), engine.begin() as connection:
        connection.execute(text(statement))
