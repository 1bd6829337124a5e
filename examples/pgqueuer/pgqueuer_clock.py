"""The database's clock on the virtual clock, for pgqueuer's SQL as it is.

pgqueuer reads time in SQL only as an unqualified `NOW()`: `execute_after` (deferred jobs and
retries), heartbeats and their staleness, schedules' next runs, its columns' defaults. So
does the trigger that NOTIFYs. PostgreSQL looks an unqualified function up on the
search_path, and searches pg_catalog first only when the path does not name it. The
connection here lists the runtime's scratch schema before pg_catalog, and the schema holds
a `now()` that answers the session setting `jobconform.now`, which `VirtualNow` sets
before each query: the virtual instant (the wall-clock bridge's, which the `VirtualLoop`
moves to each timer's deadline) plus a microsecond for every query sent before. A real
server's NOW() (its transaction's start) moves on between two statements; pgqueuer counts
on it: a job is due when `execute_after < NOW()`, strictly, so on a clock standing still
a job enqueued for now would wait for pgqueuer's next poll (0.1 s). The microseconds keep
that order; they run ahead of the virtual clock by one per query the runtime has sent
(thousands in a runtime's life, so milliseconds at most, and never behind it).

What it leaves real: `CURRENT_TIMESTAMP`, `clock_timestamp()` and `statement_timestamp()`
(SQL syntax or other names, bound to pg_catalog); pgqueuer 1.6's SQL uses none of them
(checked by `test_pgqueuer_reads_no_other_database_clock`).
"""

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg  # type: ignore[import-untyped]

VIRTUAL_NOW = """CREATE FUNCTION {schema}.now() RETURNS timestamptz LANGUAGE sql STABLE
    AS $$ SELECT current_setting('jobconform.now')::timestamptz $$"""


class VirtualNow:
    """An asyncpg connection that tells the server the virtual instant before a query."""

    def __init__(self, connection: Any) -> None:
        self.connection = connection
        self.queries = 0

    async def _tell(self) -> None:
        now = datetime.now(UTC) + timedelta(microseconds=self.queries)
        self.queries += 1
        await self.connection.execute("SELECT set_config('jobconform.now', $1, false)",
                                      now.isoformat())

    async def fetch(self, query: str, *args: object) -> Any:
        await self._tell()
        return await self.connection.fetch(query, *args)

    async def execute(self, query: str, *args: object) -> Any:
        await self._tell()
        return await self.connection.execute(query, *args)

    def __getattr__(self, name: str) -> Any:  # add_listener, terminate: the connection's
        return getattr(self.connection, name)


async def connect(url: str, schema: str) -> VirtualNow:
    """A connection whose NOW() is the virtual clock's, with `schema` made and holding it."""
    settings = {"search_path": f"{schema}, pg_catalog, public",
                "jobconform.now": datetime.now(UTC).isoformat()}
    connection = await asyncpg.connect(url, server_settings=settings)
    await connection.execute(f"CREATE SCHEMA {schema}; {VIRTUAL_NOW.format(schema=schema)}")
    return VirtualNow(connection)
