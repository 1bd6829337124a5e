"""The SQL backend's governor store: accepted re-deliveries, counted failures, the pause.

Each governor decision is one transaction that first locks the single `governor_pause`
row (`SELECT ... FOR UPDATE`; SQLite's BEGIN IMMEDIATE serialises writers anyway), so the
processes sharing the database take decisions one at a time: no cap is overshot by a race
and a result is counted once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from typing import cast

from sqlalchemy import Connection, Engine, Table, delete, func, insert, select, update
from sqlalchemy.exc import DBAPIError

from jobconform.backends.governor.runtime import GovernorStoreUnavailable
from jobconform.backends.sql.database import OutageSwitch, redacted
from jobconform.backends.sql.engine_store import EngineStore
from jobconform.backends.sql.models import (
    GovernorDeliveryRow,
    GovernorFailureRow,
    GovernorPauseRow,
    GovernorResultRow,
)

DELIVERIES = cast(Table, GovernorDeliveryRow.__table__)
RESULTS = cast(Table, GovernorResultRow.__table__)
FAILURES = cast(Table, GovernorFailureRow.__table__)
PAUSE = cast(Table, GovernorPauseRow.__table__)


class SqlGovernorSession:
    """The governor's reads and writes inside one locked transaction."""

    def __init__(self, connection: Connection, paused_until: datetime | None) -> None:
        self._connection = connection
        self._paused_until = paused_until

    def accepted_since(self, since: datetime, target: str | None) -> list[datetime]:
        query = select(DELIVERIES.c.accepted_at).where(DELIVERIES.c.accepted_at > since)
        if target is not None:
            query = query.where(DELIVERIES.c.target == target)
        return list(self._connection.scalars(query.order_by(DELIVERIES.c.accepted_at,
                                                            DELIVERIES.c.id)))

    def accept(self, target: str, at: datetime) -> None:
        self._connection.execute(insert(DELIVERIES).values(target=target, accepted_at=at))

    def first_sight(self, result_id: str) -> bool:
        seen = self._connection.scalar(select(func.count()).select_from(RESULTS)
                                       .where(RESULTS.c.result_id == result_id))
        if seen:
            return False
        self._connection.execute(insert(RESULTS).values(result_id=result_id))
        return True

    def count_failure(self, failure_class: str, target: str, at: datetime) -> None:
        moved = self._connection.execute(update(FAILURES).where(
            FAILURES.c.failure_class == failure_class, FAILURES.c.target == target,
        ).values(counted_at=at))
        if moved.rowcount == 0:
            self._connection.execute(insert(FAILURES).values(
                failure_class=failure_class, target=target, counted_at=at))

    def failing_targets_since(self, failure_class: str, since: datetime) -> int:
        return int(self._connection.scalar(select(func.count()).select_from(FAILURES).where(
            FAILURES.c.failure_class == failure_class, FAILURES.c.counted_at > since)) or 0)

    def paused_until(self) -> datetime | None:
        return self._paused_until

    def pause(self, until: datetime) -> None:
        self._connection.execute(update(PAUSE).where(PAUSE.c.id == 1)
                                 .values(paused_until=until))
        self._paused_until = until


class SqlGovernorStore(EngineStore):
    """The governor's rows on one engine, already migrated. Arguments as
    `EngineStore`'s."""

    def __init__(self, engine: Engine, owns_engine: bool = False,
                 turns: AbstractContextManager[object] | None = None) -> None:
        super().__init__(engine, owns_engine=owns_engine, turns=turns)
        # The engine decisions use: the store's, or one that cannot connect (RG-011).
        self._outage = OutageSwitch(engine)

    @contextmanager
    def session(self) -> Iterator[SqlGovernorSession]:
        with self._turns:
            try:
                connection = self._outage.engine.connect()
            except DBAPIError as error:
                raise GovernorStoreUnavailable(
                    f"governor store at {redacted(self._outage.engine.url)}:"
                    f" {type(error.orig).__name__}") from error
            with connection, connection.begin():
                paused = connection.execute(select(PAUSE.c.paused_until)
                                            .where(PAUSE.c.id == 1)
                                            .with_for_update()).scalar_one()
                yield SqlGovernorSession(connection, paused)

    def set_available(self, available: bool) -> None:
        self._outage.set_reachable(available)

    def peer(self) -> SqlGovernorStore:
        return SqlGovernorStore(self._engine, turns=self._turns)

    def clear(self) -> None:
        """Forget every delivery, result, failure and the pause."""
        with self._turns, self._engine.begin() as connection:
            for table in (DELIVERIES, RESULTS, FAILURES):
                connection.execute(delete(table))
            connection.execute(update(PAUSE).where(PAUSE.c.id == 1).values(paused_until=None))

    def close(self) -> None:
        self._outage.close()
        super().close()
