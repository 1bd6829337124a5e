"""The database's clock on the virtual clock, for pgqueuer's SQL as it is.

pgqueuer reads time in SQL only as an unqualified `NOW()`: `execute_after` (deferred jobs and
retries), heartbeats and their staleness, schedules' next runs, its columns' defaults. So
does the trigger that NOTIFYs. PostgreSQL looks an unqualified function up on the
search_path, and searches pg_catalog first only when the path does not name it. The
connection here lists the runtime's scratch schema before pg_catalog, and the schema holds
a `now()` that answers the session setting `jobconform.now`, which `VirtualNow` sets
before each query: the virtual instant (the wall-clock bridge's, which the `VirtualLoop`
moves to each timer's deadline) plus a microsecond for every query sent before on any
connection to the schema (a scheduler's peers and restarts have their own). A real
server's NOW() (its transaction's start) moves on between two statements; pgqueuer counts
on it: a job is due when `execute_after < NOW()`, strictly, so on a clock standing still
a job enqueued for now would wait for pgqueuer's next poll (0.1 s). The microseconds keep
that order for what pgqueuer writes (heartbeats, logs, schedules), one per query sent
(milliseconds ahead at most). When a job is due is exact: a query naming `execute_after`
reads the virtual instant, the dequeue (`execute_after < NOW()`) one microsecond after it,
so a job deferred by 60 s is taken at 60 s, not the milliseconds before. With `exact` set
every query reads the virtual instant: `pgqueuer_redelivery`'s beats and lease passes,
whose bound (`heartbeat < NOW() - timeout`) is the virtual clock's to the microsecond.

What it leaves real: `CURRENT_TIMESTAMP`, `clock_timestamp()` and `statement_timestamp()`
(SQL syntax or other names, bound to pg_catalog); pgqueuer 1.6's SQL uses none of them
(checked by `test_pgqueuer_reads_no_other_database_clock`).
"""

import itertools
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg  # type: ignore[import-untyped]
from pgqueuer import AsyncpgDriver, Queries
from pgqueuer.adapters.persistence import qb
from pgqueuer.domain.settings import DBSettings, Durability

from jobconform.bridges import InFlight, VirtualLoop

URL = "postgresql://postgres@127.0.0.1:5432/test"  # the local server (trust)

VIRTUAL_NOW = """CREATE FUNCTION {schema}.now() RETURNS timestamptz LANGUAGE sql STABLE
    AS $$ SELECT current_setting('jobconform.now')::timestamptz $$"""

# How the queries that say when a job is due are told apart from pgqueuer's others: they name
# its column, and the dequeue (its candidates, its stale re-picks) compares it strictly.
DUE_AT, DUE = "execute_after", "execute_after < NOW()"


class VirtualNow:
    """An asyncpg connection that tells the server the virtual instant before a query."""

    def __init__(self, connection: Any, queries: Iterator[int]) -> None:
        self.connection = connection
        self.queries = queries  # shared by the schema's connections: writes stay in order
        self.exact = False  # while set, NOW() is the virtual instant itself (a lease's bounds)

    async def _tell(self, query: str) -> None:
        later = (0 if self.exact or (DUE_AT in query and DUE not in query)  # a due time
                 else 1 if DUE in query else next(self.queries))  # after the write making it due
        now = datetime.now(UTC) + timedelta(microseconds=later)
        await self.connection.execute("SELECT set_config('jobconform.now', $1, false)",
                                      now.isoformat())

    async def fetch(self, query: str, *args: object) -> Any:
        await self._tell(query)
        return await self.connection.fetch(query, *args)

    async def execute(self, query: str, *args: object) -> Any:
        await self._tell(query)
        return await self.connection.execute(query, *args)

    def __getattr__(self, name: str) -> Any:  # add_listener, terminate: the connection's
        return getattr(self.connection, name)


async def connect(url: str, schema: str, create: bool = True,
                  queries: Iterator[int] | None = None) -> VirtualNow:
    """A connection whose NOW() is the virtual clock's, with `schema` made and holding it
    (create) or made already by another connection (a second process's), whose count of
    `queries` it shares."""
    settings = {"search_path": f"{schema}, pg_catalog, public",
                "jobconform.now": datetime.now(UTC).isoformat()}
    connection = await asyncpg.connect(url, server_settings=settings)
    if create:
        await connection.execute(f"CREATE SCHEMA {schema}; {VIRTUAL_NOW.format(schema=schema)}")
    return VirtualNow(connection, queries or itertools.count())


def any_busy(connections: list[InFlight]) -> Callable[[], bool]:
    """A loop's `busy`: a query in flight on any of the connections."""
    return lambda: any(connection.busy() for connection in connections)


def scratch_schema() -> str:
    return f"jobconform_pgq_{uuid.uuid4().hex[:16]}"


def open_queries(loop: VirtualLoop, schema: str, connections: list[InFlight],
                 create: bool = False) -> Queries:
    """pgqueuer's queries on a connection of their own to `schema` (made, with pgqueuer's
    tables, when `create`), on `loop`; the connection is added to `connections`, whose
    calls in flight the loop's `busy` counts."""
    connection = InFlight(None, ("fetch", "execute", "add_listener"))  # NOTIFYs in order
    queries = connections[0].client.queries if connections else None
    connection.client = loop.run(connect(URL, schema, create, queries), name="connect")
    connections.append(connection)
    db = DBSettings(db_schema=schema, channel=schema, durability=Durability.volatile)
    queries = Queries(AsyncpgDriver(connection), qbe=qb.QueryBuilderEnvironment(db),
                      qbq=qb.QueryQueueBuilder(db), qbs=qb.QuerySchedulerBuilder(db))
    if create:
        loop.run(queries.install(create_schema=False), name="install")
    return queries


def drop(loop: VirtualLoop, schema: str, connections: list[InFlight]) -> None:
    """Drop `schema` and end every connection: what pgqueuer sends from here on fails."""
    loop.run(connections[0].execute(f"DROP SCHEMA {schema} CASCADE"), name="drop")
    for connection in connections:
        connection.client.connection.terminate()
