"""The SQL backend's breaker store: the `breaker_states` and `breaker_work` tables.

Every worker process on the database shares one breaker per target. A change is one
conditional statement: the UPDATE matches only the version the writer read, and a
target's first row is an INSERT that the primary key lets only one writer win. So when
many callers race for the half-open probe, exactly one statement succeeds (CB-007), on
SQLite, PostgreSQL and MariaDB alike.

An unreachable store is real here: `set_available(False)` points the breaker's state
access at an engine for the same kind of database that cannot be reached (a closed port,
or a file in a missing folder), and the driver's error becomes `StoreUnavailable`. The
work queue stays on the job database.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import cast

from sqlalchemy import (
    Connection,
    Engine,
    Table,
    delete,
    insert,
    select,
    update,
)
from sqlalchemy.exc import DBAPIError, IntegrityError

from jobconform.backends.breaker.runtime import BreakerRow, StoreUnavailable
from jobconform.backends.sql.database import OutageSwitch, redacted
from jobconform.backends.sql.engine_store import EngineStore
from jobconform.backends.sql.models import BreakerStateRow, BreakerWorkRow

STATES = cast(Table, BreakerStateRow.__table__)
WORK = cast(Table, BreakerWorkRow.__table__)
class SqlBreakerStore(EngineStore):
    """Breaker rows and work on one engine, already migrated (the job store's); see the
    module docstring. Arguments as `EngineStore`'s."""

    def __init__(self, engine: Engine, owns_engine: bool = False,
                 turns: AbstractContextManager[object] | None = None) -> None:
        super().__init__(engine, owns_engine=owns_engine, turns=turns)
        self._outage = OutageSwitch(engine)

    def peer(self) -> SqlBreakerStore:
        """Another worker's store on the same database (and the same turns)."""
        return SqlBreakerStore(self._engine, turns=self._turns)

    @contextmanager
    def _state(self) -> Iterator[Connection]:
        """A transaction on the breaker's state store; unreachable -> StoreUnavailable."""
        try:
            with self._turns, self._outage.engine.begin() as connection:
                yield connection
        except IntegrityError:
            raise
        except DBAPIError as error:
            raise StoreUnavailable(f"breaker store at {redacted(self._outage.engine.url)}:"
                                   f" {' '.join(str(error.orig).split())}") from error

    @contextmanager
    def _jobs(self) -> Iterator[Connection]:
        with self._turns, self._engine.begin() as connection:
            yield connection

    def load(self, target: str) -> BreakerRow | None:
        with self._state() as connection:
            row = connection.execute(select(STATES).where(STATES.c.target == target)).first()
        if row is None:
            return None
        return BreakerRow(row.target, row.failures, row.cooldown_seconds, row.open_until,
                          row.probe, row.probe_until, row.version)

    def swap(self, expected: BreakerRow | None, new: BreakerRow) -> bool:
        values = {"failures": new.failures, "cooldown_seconds": new.cooldown_seconds,
                  "open_until": new.open_until, "probe": new.probe,
                  "probe_until": new.probe_until, "version": new.version}
        if expected is None:
            try:
                with self._state() as connection:
                    connection.execute(insert(STATES).values(target=new.target, **values))
            except IntegrityError:
                return False  # another worker wrote the target's first row
            return True
        with self._state() as connection:
            moved = connection.execute(update(STATES).where(
                STATES.c.target == new.target, STATES.c.version == expected.version,
            ).values(**values))
            return moved.rowcount == 1

    def enqueue(self, target: str, work: str) -> None:
        with self._jobs() as connection:
            connection.execute(insert(WORK).values(target=target, work=work, status="queued"))

    def _works(self, target: str, status: str) -> list[str]:
        with self._jobs() as connection:
            return list(connection.scalars(select(WORK.c.work).where(
                WORK.c.target == target, WORK.c.status == status).order_by(WORK.c.id)))

    def queued(self, target: str) -> list[str]:
        return self._works(target, "queued")

    def queued_targets(self) -> list[str]:
        with self._jobs() as connection:
            return list(connection.scalars(select(WORK.c.target).where(
                WORK.c.status == "queued").distinct().order_by(WORK.c.target)))

    def fail_queued(self, target: str) -> int:
        with self._jobs() as connection:
            moved = connection.execute(update(WORK).where(WORK.c.target == target,
                                                          WORK.c.status == "queued")
                                       .values(status="failed"))
            return int(moved.rowcount)

    def failed(self, target: str) -> list[str]:
        return self._works(target, "failed")

    def set_available(self, available: bool) -> None:
        self._outage.set_reachable(available)

    def clear(self) -> None:
        """Delete every breaker and every piece of work."""
        with self._jobs() as connection:
            connection.execute(delete(WORK))
            connection.execute(delete(STATES))

    def close(self) -> None:
        self._outage.close()
        super().close()
