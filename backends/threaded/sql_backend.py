"""The `threaded+sql` backend: the threaded worker over the SQL job store.

The database comes from JOBCONFORM_SQL_URL (in-memory SQLite by default), exactly as for
the `sql` backend, and each runtime starts on an empty store the way that backend makes
one. Point the variable at a scratch database: the backend deletes its jobs.
"""

from __future__ import annotations

from jobconform.backends.admission_runtime import AdmissionStore
from jobconform.backends.protocol import ADMISSION, LIFECYCLE
from jobconform.backends.sql import SqlBackend
from jobconform.backends.store import JobStore
from jobconform.backends.threaded.backend import ThreadedBackend


class ThreadedSqlBackend(ThreadedBackend):
    """Entry point `threaded+sql`: pool threads claim, beat and finish jobs in a database.

    Args:
        url: the database; None reads JOBCONFORM_SQL_URL, else in-memory SQLite.

    Raises:
        DatabaseUrlError, DatabaseUnavailable: as for the `sql` backend.
    """

    name = "threaded+sql"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE, ADMISSION})

    def __init__(self, url: str | None = None) -> None:
        self._sql = SqlBackend(url)

    def new_store(self) -> JobStore:
        # The sql backend's own recipe: a fresh in-memory database, or one migrated engine
        # per server database with its jobs table emptied.
        return self._sql.empty_store()

    def new_admission_store(self) -> AdmissionStore:
        return self._sql.empty_admission_store()
