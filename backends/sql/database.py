"""Opening a database for the SQL job store: the URL, the engine, the schema.

The URL selects the database: `sqlite:///jobs.db` (or `sqlite://` in memory),
`postgresql+psycopg://user@host/db`, `mysql+pymysql://user@host/db` (MariaDB 10.6+, for
SKIP LOCKED). Errors name the URL with its password hidden and say how to fix it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, event, make_url, text
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError
from sqlalchemy.pool import NullPool, StaticPool

from jobconform.backends.faults import CrashedInStatement, ProcessCrashed

SQL_URL_ENV = "JOBCONFORM_SQL_URL"
SUPPORTED_DATABASES = ("sqlite", "postgresql", "mysql", "mariadb")
MIGRATIONS = Path(__file__).with_name("migrations")
URL_EXAMPLES = ("sqlite:///jobs.db, postgresql+psycopg://user:password@host:5432/database"
                " or mysql+pymysql://user:password@host:3306/database")
# The execution option a store sets on transactions that only read (see
# _take_sqlite_write_lock_at_begin).
READ_ONLY = "jobconform_read_only"
# How long a SQLite writer waits for another process's write lock before giving up.
SQLITE_LOCK_TIMEOUT_SECONDS = 30


class SqlStoreError(Exception):
    """Root of the SQL job store's own errors."""


class DatabaseUrlError(SqlStoreError, ValueError):
    """The URL is malformed, names an unsupported database, or a driver is missing."""


class DatabaseUnavailable(SqlStoreError, ConnectionError):
    """The database server cannot be reached or refuses the connection."""


def redacted(url: str | URL) -> str:
    """The URL as it may be shown: the password replaced by ***."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<not a database URL>"


def is_in_memory_sqlite(url: str) -> bool:
    parsed = make_url(url)
    return parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:")


def parse_url(url: str) -> URL:
    """Check that the URL names a database the store supports.

    Raises:
        DatabaseUrlError: not a URL, or not SQLite, PostgreSQL or MariaDB/MySQL.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as error:
        raise DatabaseUrlError(
            f"{redacted(url)} is not a database URL; write one such as {URL_EXAMPLES}"
            f" (in {SQL_URL_ENV} for the sql backend)"
        ) from error
    if parsed.get_backend_name() not in SUPPORTED_DATABASES:
        raise DatabaseUrlError(
            f"{redacted(parsed)}: the SQL job store supports SQLite, PostgreSQL and"
            f" MariaDB/MySQL, not {parsed.get_backend_name()!r}; use {URL_EXAMPLES}"
        )
    return parsed


def create_store_engine(url: str) -> Engine:
    """An engine set up for the job store on the URL's database, checked by connecting.

    Raises:
        DatabaseUrlError: see `parse_url`; or the URL's driver is not installed.
        DatabaseUnavailable: the server cannot be reached or refuses the credentials.
    """
    parsed = parse_url(url)
    backend = parsed.get_backend_name()
    options: dict[str, Any] = {}
    if backend == "sqlite":
        if is_in_memory_sqlite(url):
            # One connection for the engine's lifetime: an in-memory database lives and
            # dies with its connection.
            options = {"poolclass": StaticPool, "connect_args": {"check_same_thread": False}}
        else:
            options = {"connect_args": {"timeout": SQLITE_LOCK_TIMEOUT_SECONDS}}
    else:
        # Each statement sees the latest committed rows: a submission that waited for the
        # counter lock then counts the rows its predecessor inserted.
        options = {"isolation_level": "READ COMMITTED"}
        if backend == "postgresql":
            # Timestamps come back in UTC whatever the server's zone is. The store runs
            # lone statements in autocommit mode, where the server's default isolation
            # applies instead of the engine's: make that READ COMMITTED too.
            # Server options the URL gives itself (`?options=-c synchronous_commit=off`)
            # come after these, so they are kept rather than silently replaced.
            server_options = r"-c timezone=UTC -c default_transaction_isolation=read\ committed"
            from_url = parsed.query.get("options")
            for extra in (from_url,) if isinstance(from_url, str) else from_url or ():
                server_options += f" {extra}"
            parsed = parsed.difference_update_query(["options"])
            options["connect_args"] = {"options": server_options}
    try:
        engine = create_engine(parsed, **options)
    except (ArgumentError, NoSuchModuleError, ImportError) as error:
        raise DatabaseUrlError(
            f"{redacted(parsed)}: cannot load the database driver ({error}); install it"
            f" (pip install 'psycopg[binary]' or pymysql) or use one of {URL_EXAMPLES}"
        ) from error
    if backend == "sqlite":
        _take_sqlite_write_lock_at_begin(engine, in_memory=is_in_memory_sqlite(url))
    try:
        with engine.connect():
            pass
    except DBAPIError as error:
        engine.dispose()
        reason = " ".join(str(error.orig).split())
        if parsed.password:
            reason = reason.replace(str(parsed.password), "***")
        raise DatabaseUnavailable(
            f"cannot connect to the job store database at {redacted(parsed)}: {reason}."
            " Start the database server, check the host, port, user and database name,"
            f" or point {SQL_URL_ENV} at a reachable database ({URL_EXAMPLES})"
        ) from error
    return engine


def _take_sqlite_write_lock_at_begin(engine: Engine, in_memory: bool) -> None:
    """Make every SQLite transaction that may write take the write lock when it begins.

    SQLite locks the whole database for writing. By default Python's driver begins a
    transaction only at its first write, so the reads before it (the cap count before an
    insert) would run before the transaction holds the lock, and two transactions
    upgrading from read to write would fail with "database is locked". BEGIN IMMEDIATE
    makes a writing transaction wait for the lock first: writers are then serialised,
    which is what makes the cap check atomic across processes. Transactions run with the
    READ_ONLY execution option only read, and begin without the lock.
    """

    @event.listens_for(engine, "connect")
    def hand_transactions_to_sqlalchemy(dbapi_connection: Any, record: Any) -> None:
        dbapi_connection.isolation_level = None  # the driver stops issuing its own BEGIN
        if not in_memory:
            # Readers then do not wait for the writer, nor the writer for readers.
            dbapi_connection.execute("PRAGMA journal_mode=WAL")

    @event.listens_for(engine, "begin")
    def begin(connection: Connection) -> None:
        read_only = connection.get_execution_options().get(READ_ONLY, False)
        connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def connection_turns(engine: Engine) -> AbstractContextManager[object]:
    """What a store holds around each transaction on `engine`: an in-memory SQLite
    database is one connection, so the threads sharing it take turns (re-entrant, so a
    store may read inside its own write); any other engine hands each its own."""
    return threading.RLock() if isinstance(engine.pool, StaticPool) else nullcontext()


@contextmanager
def transaction(engine: Engine, turns: AbstractContextManager[object],
                read_only: bool = False) -> Iterator[Connection]:
    """One transaction of a store on `engine`, taken in `turns` (`connection_turns`);
    `read_only` lets the engine set up a read (READ_ONLY)."""
    try:
        with turns, engine.connect() as connection:
            connection.execution_options(**{READ_ONLY: read_only})
            with connection.begin():
                yield connection
    except CrashedInStatement as crash:
        raise ProcessCrashed(str(crash)) from None  # rolled back: the write never happened


def migrate(engine: Engine) -> None:
    """Bring the database's schema to the newest migration (a no-op when it is there)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    # The lock is released only after the migration's transaction has committed, so the
    # next process to take it sees the new schema version.
    with engine.connect() as connection, _migration_lock(connection), connection.begin():
        config.attributes["connection"] = connection
        command.upgrade(config, "heads")  # one branch per area


# Two processes opening a fresh database would both create its tables: each takes this
# session lock before migrating. (SQLite needs none: its write lock, taken at BEGIN,
# already serialises them.) PostgreSQL names locks by integer: "jobconf" in ASCII.
MIGRATION_LOCK_NAME = "jobconform_migrations"
MIGRATION_LOCK_KEY = 29958815897054822
MIGRATION_LOCK_TIMEOUT_SECONDS = 300


@contextmanager
def _migration_lock(connection: Connection) -> Iterator[None]:
    name = connection.dialect.name
    if name == "postgresql":
        connection.execute(text(f"SELECT pg_advisory_lock({MIGRATION_LOCK_KEY})"))
        release = f"SELECT pg_advisory_unlock({MIGRATION_LOCK_KEY})"
    elif name in ("mysql", "mariadb"):
        acquired = connection.scalar(text(
            f"SELECT GET_LOCK('{MIGRATION_LOCK_NAME}', {MIGRATION_LOCK_TIMEOUT_SECONDS})"))
        if acquired != 1:
            raise SqlStoreError(
                f"{redacted(connection.engine.url)}: another process has been migrating the"
                f" database for {MIGRATION_LOCK_TIMEOUT_SECONDS} s; check it or retry"
            )
        release = f"SELECT RELEASE_LOCK('{MIGRATION_LOCK_NAME}')"
    else:
        yield
        return
    connection.commit()
    try:
        yield
    finally:
        connection.execute(text(release))
        connection.commit()


# A store made unreachable on purpose (a breaker, governor or task store told its database
# is down):
UNREACHABLE_PORT = 1  # nothing listens on port 1 of the local host
UNREACHABLE_SQLITE = "sqlite:////nonexistent-jobconform-folder/unreachable.db"


def unreachable_engine(engine: Engine) -> Engine:
    """An engine for the same kind of database as `engine` that cannot connect."""
    url = engine.url
    if url.get_backend_name() == "sqlite":
        return create_engine(UNREACHABLE_SQLITE, poolclass=NullPool)
    return create_engine(url.set(host="127.0.0.1", port=UNREACHABLE_PORT), poolclass=NullPool,
                         connect_args={"connect_timeout": 2})


class OutageSwitch:
    """The engine a store's statements go to: its own, or, while the store is told its
    database is down (a breaker's, a governor's or a task store's fault seam), one that
    cannot connect, so the outage is a real failed connection.

    Args:
        engine: the store's own engine; `close` leaves it to its owner.
    """

    def __init__(self, engine: Engine) -> None:
        self._own = engine
        self._unreachable: Engine | None = None  # made at the first outage, kept to `close`
        self.engine = engine

    def set_reachable(self, reachable: bool) -> None:
        """Point the store at its own engine again, or at one that cannot connect."""
        if reachable:
            self.engine = self._own
            return
        if self._unreachable is None:
            self._unreachable = unreachable_engine(self._own)
        self.engine = self._unreachable

    def close(self) -> None:
        """Back to the store's own engine; the unreachable one, if made, is disposed of."""
        self.engine = self._own
        if self._unreachable is not None:
            self._unreachable.dispose()
            self._unreachable = None
