"""What the kit's SQL area stores share: an engine, whether the store disposes of it, the
turns its transactions take on it, and, for stores that take planned write faults, those
faults.

Each area's store (idempotency keys, reminders, schedules, task records, loops, breakers,
the governor) adds its own tables and statements on top.
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from sqlalchemy import Connection, Engine

from jobconform.backends.faults import SqlWriteFaults
from jobconform.backends.sql.database import connection_turns, migrate, transaction
from jobconform.reference.faults import StoreFault


class EngineStore:
    """A store's hold on its engine.

    Args:
        engine: from `create_store_engine`.
        migrate_schema: bring the schema to the newest migrations first.
        owns_engine: dispose of the engine on `close` (an in-memory copy per store).
        turns: what each transaction holds; by default `connection_turns(engine)`. A store
            sharing a database with another object of its own passes that one's turns.
    """

    def __init__(self, engine: Engine, *, migrate_schema: bool = False,
                 owns_engine: bool = False,
                 turns: AbstractContextManager[object] | None = None) -> None:
        if migrate_schema:
            migrate(engine)
        self._engine = engine
        self._owns_engine = owns_engine
        self._turns = connection_turns(engine) if turns is None else turns

    def _transaction(self, read_only: bool = False) -> AbstractContextManager[Connection]:
        return transaction(self._engine, self._turns, read_only)

    def _hand_over_engine(self) -> bool:
        """Whether this store owned its engine, which from now on it does not: a reopened
        store (as a restarted process opens it) takes the engine over, and for in-memory
        SQLite the database with it."""
        owns, self._owns_engine = self._owns_engine, False
        return owns

    def close(self) -> None:
        if self._owns_engine:
            self._engine.dispose()


class FaultableEngineStore(EngineStore):
    """A store whose writes planned store faults strike (`jobconform.backends.faults`).

    Args:
        faults: the faults to keep arming; by default new ones on `engine` (a reopened
            store keeps its predecessor's).
    """

    def __init__(self, engine: Engine, *, migrate_schema: bool = False,
                 owns_engine: bool = False,
                 turns: AbstractContextManager[object] | None = None,
                 faults: SqlWriteFaults | None = None) -> None:
        super().__init__(engine, migrate_schema=migrate_schema, owns_engine=owns_engine,
                         turns=turns)
        self._faults = faults if faults is not None else SqlWriteFaults(engine)

    def inject_fault(self, fault: StoreFault | None) -> None:
        self._faults.arm(fault)

    def fault_struck(self) -> bool:
        return self._faults.struck()

    def close(self) -> None:
        self._faults.arm(None)
        super().close()
