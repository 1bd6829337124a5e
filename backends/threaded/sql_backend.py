"""The `threaded+sql` backend: the threaded worker over the SQL job store.

The database comes from JOBCONFORM_SQL_URL (in-memory SQLite by default), exactly as for
the `sql` backend, and each runtime starts on an empty store the way that backend makes
one. Point the variable at a scratch database: the backend deletes its jobs.
"""

from __future__ import annotations

from jobconform.backends.loops_protocol import LOOPS, LoopsConfig
from jobconform.backends.protocol import LIFECYCLE, RETRY, Clock
from jobconform.backends.sql import SqlBackend
from jobconform.backends.sql.loops import SqlLoopStore
from jobconform.backends.store import JobStore
from jobconform.backends.threaded.backend import ThreadedBackend, waitable
from jobconform.backends.threaded.loops import ThreadedLoopRuntime


class ThreadedSqlBackend(ThreadedBackend):
    """Entry point `threaded+sql`: pool threads claim, beat and finish jobs in a database.

    Args:
        url: the database; None reads JOBCONFORM_SQL_URL, else in-memory SQLite.

    Raises:
        DatabaseUrlError, DatabaseUnavailable: as for the `sql` backend.
    """

    name = "threaded+sql"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE, RETRY, LOOPS})

    def __init__(self, url: str | None = None) -> None:
        self._sql = SqlBackend(url)

    def open_loops(self, clock: Clock, config: LoopsConfig) -> ThreadedLoopRuntime:
        """Loop threads over the SQL loop tables; a restart reads them back through a new
        store object on the same database."""
        engine, owned = self._sql.empty_loop_engine()
        return ThreadedLoopRuntime(waitable(clock), config, lambda: SqlLoopStore(engine),
                                   on_close=engine.dispose if owned else lambda: None)

    def new_store(self) -> JobStore:
        # The sql backend's own recipe: a fresh in-memory database, or one migrated engine
        # per server database with its jobs table emptied.
        return self._sql.empty_store()
