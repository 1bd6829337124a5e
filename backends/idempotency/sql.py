"""Idempotency keys in SQL: the `KeyStore` of the idempotency runtime on SQLite,
PostgreSQL and MariaDB.

The table's primary key on (scope, idempotency_key) is the claim: of any number of
transactions inserting one key at once, in threads or processes, the database lets one
commit and fails the others with a unique violation, and those then read the winner's
row. Every later change is one conditional statement (`UPDATE ... WHERE claim_token = ?
AND state = ?`), so a caller that read an old row, or a holder that lost its claim, changes
nothing. Time comes from the caller.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from sqlalchemy import Engine, Row, Table, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from jobconform.backends.idempotency.service import KeyEntry
from jobconform.backends.sql.database import create_store_engine
from jobconform.backends.sql.engine_store import FaultableEngineStore
from jobconform.backends.sql.models import JSON_SCHEMA_VERSION, IdempotencyKeyRow
from jobconform.backends.sql.store import readable_columns, rows_matched
from jobconform.reference.commands import Outcome, Raise, Succeed

KEYS = cast(Table, IdempotencyKeyRow.__table__)
IN_FLIGHT, COMPLETED = "in_flight", "completed"


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    if isinstance(outcome, Raise):
        return {"error_type": outcome.error_type, "message": outcome.message}
    return {"result": outcome.result}


def outcome_of(document: Any) -> Outcome | None:
    if document is None:
        return None
    if "error_type" in document:
        return Raise(document["error_type"], document["message"])
    return Succeed(document["result"])


def to_entry(row: Row[Any]) -> KeyEntry:
    """The frozen entry of a row; the row itself never leaves the store."""
    values = readable_columns(
        row, lambda values: f"idempotency key {values['idempotency_key']!r}")
    return KeyEntry(scope=values["scope"], key=values["idempotency_key"],
                    fingerprint=values["fingerprint"], holder=values["claim_token"],
                    created_at=values["created_at"], claimed_at=values["claimed_at"],
                    outcome=outcome_of(values["outcome"]))


def entry_values(entry: KeyEntry) -> dict[str, Any]:
    return {
        "scope": entry.scope, "idempotency_key": entry.key, "fingerprint": entry.fingerprint,
        "claim_token": entry.holder, "state": IN_FLIGHT if entry.in_flight else COMPLETED,
        "created_at": entry.created_at, "claimed_at": entry.claimed_at,
        "outcome": None if entry.outcome is None else outcome_json(entry.outcome),
        "schema_version": JSON_SCHEMA_VERSION,
    }


class SqlKeyStore(FaultableEngineStore):
    """A `KeyStore` in the `idempotency_keys` table; store faults strike its INSERTs,
    UPDATEs and DELETEs. Arguments as `EngineStore`'s."""

    def __init__(self, engine: Engine, *, migrate_schema: bool = True,
                 owns_engine: bool = False) -> None:
        super().__init__(engine, migrate_schema=migrate_schema, owns_engine=owns_engine)

    @classmethod
    def connect(cls, url: str, *, migrate_schema: bool = True) -> SqlKeyStore:
        """A store on its own engine for `url` (errors as for `create_store_engine`)."""
        return cls(create_store_engine(url), migrate_schema=migrate_schema, owns_engine=True)

    def insert_if_absent(self, entry: KeyEntry) -> KeyEntry | None:
        # A key may vanish (released, purged) between a failed insert and the read of
        # the row that blocked it; the insert is then tried again.
        while True:
            try:
                with self._transaction() as connection:
                    connection.execute(insert(KEYS).values(**entry_values(entry)))
                return None
            except IntegrityError:
                pass  # the key exists: this claim lost the insert
            held = self.read(entry.scope, entry.key)
            if held is not None:
                return held

    def read(self, scope: str, key: str) -> KeyEntry | None:
        """The stored entry of (scope, key), if any."""
        with self._transaction(read_only=True) as connection:
            row = connection.execute(select(KEYS).where(
                KEYS.c.scope == scope, KEYS.c.idempotency_key == key)).first()
        return None if row is None else to_entry(row)

    def swap(self, expected: KeyEntry, new: KeyEntry) -> bool:
        state = IN_FLIGHT if expected.in_flight else COMPLETED
        with self._transaction() as connection:
            moved = connection.execute(
                update(KEYS).where(KEYS.c.scope == expected.scope,
                                   KEYS.c.idempotency_key == expected.key,
                                   KEYS.c.claim_token == expected.holder,
                                   KEYS.c.state == state)
                .values(**entry_values(new)))
            return rows_matched(moved) == 1

    def complete(self, holder: str, outcome: Outcome, created_after: datetime) -> bool:
        with self._transaction() as connection:
            moved = connection.execute(
                update(KEYS).where(KEYS.c.claim_token == holder, KEYS.c.state == IN_FLIGHT,
                                   KEYS.c.created_at > created_after)
                .values(state=COMPLETED, outcome=outcome_json(outcome)))
            return rows_matched(moved) == 1

    def release(self, holder: str, created_after: datetime) -> bool:
        with self._transaction() as connection:
            removed = connection.execute(
                delete(KEYS).where(KEYS.c.claim_token == holder, KEYS.c.state == IN_FLIGHT,
                                   KEYS.c.created_at > created_after))
            return rows_matched(removed) == 1

    def purge(self, created_at_or_before: datetime) -> int:
        with self._transaction() as connection:
            return rows_matched(connection.execute(
                delete(KEYS).where(KEYS.c.created_at <= created_at_or_before)))

    def clear(self) -> None:
        """Delete every key, leaving an empty table on the same schema."""
        with self._transaction() as connection:
            connection.execute(delete(KEYS))
