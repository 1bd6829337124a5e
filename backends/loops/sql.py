"""Loops in the SQL store: the agent_loops and agent_loop_runs tables of seed 002 §38.1.

A loop row holds its parameters, status, stop reason, counters, the previous response
the next run will see and a pending stop request; one row per run holds its message,
status, response, counted cost and error. Everything the spec says survives a restart
lives here. What the seed keeps only in the running process (the spend accumulator,
the no-progress fingerprint, the failure streak) stays in the runtime's memory, so a
restart loses it, and start-up recovery interrupts the loops that were running.
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Connection,
    Double,
    ForeignKey,
    Integer,
    String,
    Table,
    Text,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.orm import Mapped, mapped_column

from jobconform.backends.loops.protocol import LoopParameters
from jobconform.backends.loops.runner import StoredLoop, StoredRun
from jobconform.backends.sql.engine_store import EngineStore
from jobconform.backends.sql.models import Base, UtcDateTime, one_of

LOOP_STATUSES = ("running", "completed", "completed_with_errors", "stopped", "failed",
                 "interrupted")
STOP_REASONS = ("max_runs_reached", "stop_signal_matched", "user_stopped",
                "deadline_exceeded", "budget_exhausted", "no_progress", "error",
                "max_consecutive_failures", "interrupted")
RUN_STATUSES = ("running", "succeeded", "failed", "interrupted")


class LoopRow(Base):
    __tablename__ = "agent_loops"

    loop_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    start_order: Mapped[int] = mapped_column(BigInteger, unique=True)
    message_template: Mapped[str] = mapped_column(Text)
    max_runs: Mapped[int] = mapped_column(Integer)
    stop_signal: Mapped[str | None] = mapped_column(Text)
    delay_seconds: Mapped[float] = mapped_column(Double)
    timeout_per_run: Mapped[float] = mapped_column(Double)
    # What the caller gave (None: the default), kept apart from the effective timeout.
    timeout_per_run_given: Mapped[float | None] = mapped_column(Double)
    max_duration_seconds: Mapped[int | None] = mapped_column(Integer)
    max_cost_usd: Mapped[float | None] = mapped_column(Double)
    no_progress_threshold: Mapped[int] = mapped_column(Integer)
    on_failure: Mapped[str] = mapped_column(String(10))
    max_consecutive_failures: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(30))
    stop_reason: Mapped[str | None] = mapped_column(String(30))
    runs_completed: Mapped[int] = mapped_column(Integer)
    failed_runs: Mapped[int] = mapped_column(Integer)
    previous_response: Mapped[str] = mapped_column(Text)
    last_response: Mapped[str | None] = mapped_column(Text)
    stop_requested: Mapped[bool] = mapped_column()
    next_run_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    cost_warnings: Mapped[Any] = mapped_column(JSON)
    started_at: Mapped[datetime] = mapped_column(UtcDateTime)
    completed_at: Mapped[datetime | None] = mapped_column(UtcDateTime)

    __table_args__ = (
        CheckConstraint(one_of("status", LOOP_STATUSES), name="status"),
        CheckConstraint(f"stop_reason IS NULL OR {one_of('stop_reason', STOP_REASONS)}",
                        name="stop_reason"),
        CheckConstraint("max_runs BETWEEN 1 AND 100", name="max_runs"),
        CheckConstraint("on_failure IN ('abort', 'continue')", name="on_failure"),
    )


class LoopRunRow(Base):
    __tablename__ = "agent_loop_runs"

    loop_id: Mapped[str] = mapped_column(
        String(36), ForeignKey("agent_loops.loop_id", ondelete="CASCADE"), primary_key=True)
    run_number: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    message: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(20))
    started_at: Mapped[datetime] = mapped_column(UtcDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UtcDateTime)
    response: Mapped[str | None] = mapped_column(Text)
    cost: Mapped[float | None] = mapped_column(Double)
    error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (CheckConstraint(one_of("status", RUN_STATUSES), name="status"),)


LOOPS_TABLE = cast(Table, LoopRow.__table__)
RUNS_TABLE = cast(Table, LoopRunRow.__table__)


def _loop_values(loop: StoredLoop) -> dict[str, Any]:
    params = loop.params
    return {
        "message_template": params.message, "max_runs": params.max_runs,
        "stop_signal": params.stop_signal, "delay_seconds": float(params.delay_seconds),
        "timeout_per_run": loop.timeout_per_run_seconds,
        "timeout_per_run_given": params.timeout_per_run_seconds,
        "max_duration_seconds": params.max_duration_seconds,
        "max_cost_usd": params.max_cost_usd,
        "no_progress_threshold": params.no_progress_threshold,
        "on_failure": params.on_failure,
        "max_consecutive_failures": params.max_consecutive_failures,
        "status": loop.status, "stop_reason": loop.stop_reason,
        "runs_completed": loop.runs_completed, "failed_runs": loop.failed_runs,
        "previous_response": loop.previous_response, "last_response": loop.last_response,
        "stop_requested": loop.stop_requested, "next_run_at": loop.next_run_at,
        "cost_warnings": list(loop.cost_warnings), "started_at": loop.started_at,
        "completed_at": loop.completed_at,
    }


def _run_values(loop_id: str, run: StoredRun) -> dict[str, Any]:
    return {"loop_id": loop_id, "run_number": run.run_number, "message": run.message,
            "status": run.status, "started_at": run.started_at,
            "finished_at": run.finished_at, "response": run.response, "cost": run.cost,
            "error": run.error}


def _to_stored(row: Any, runs: list[Any]) -> StoredLoop:
    params = LoopParameters(
        message=row.message_template, max_runs=row.max_runs, stop_signal=row.stop_signal,
        delay_seconds=row.delay_seconds, timeout_per_run_seconds=row.timeout_per_run_given,
        max_duration_seconds=row.max_duration_seconds, max_cost_usd=row.max_cost_usd,
        no_progress_threshold=row.no_progress_threshold, on_failure=row.on_failure,
        max_consecutive_failures=row.max_consecutive_failures)
    return StoredLoop(
        loop_id=row.loop_id, params=params, timeout_per_run_seconds=row.timeout_per_run,
        status=row.status, started_at=row.started_at, stop_reason=row.stop_reason,
        completed_at=row.completed_at, runs_completed=row.runs_completed,
        failed_runs=row.failed_runs, previous_response=row.previous_response,
        last_response=row.last_response, stop_requested=bool(row.stop_requested),
        next_run_at=row.next_run_at, cost_warnings=[int(n) for n in row.cost_warnings],
        runs=[StoredRun(run.run_number, run.message, run.status, run.started_at,
                        run.finished_at, run.response, run.cost, run.error) for run in runs],
    )


class SqlLoopStore(EngineStore):
    """The loop store of `jobconform.backends.loops.memory.LoopStore` on SQL tables, on
    an engine already migrated; the loop runtime, not the store, disposes of it."""

    def next_id(self) -> str:
        return str(uuid.uuid4())

    def save(self, loop: StoredLoop) -> None:
        """Write the loop row and its run rows in one transaction."""
        values = _loop_values(loop)
        with self._transaction() as connection:
            changed = connection.execute(
                update(LOOPS_TABLE).where(LOOPS_TABLE.c.loop_id == loop.loop_id)
                .values(**values)).rowcount
            if not changed:
                order = connection.scalar(select(func.coalesce(
                    func.max(LOOPS_TABLE.c.start_order), 0) + 1))
                connection.execute(insert(LOOPS_TABLE).values(
                    loop_id=loop.loop_id, start_order=order, **values))
            stored = {number for (number,) in connection.execute(
                select(RUNS_TABLE.c.run_number).where(RUNS_TABLE.c.loop_id == loop.loop_id))}
            for run in loop.runs:
                row = _run_values(loop.loop_id, run)
                if run.run_number in stored:
                    connection.execute(update(RUNS_TABLE).where(
                        RUNS_TABLE.c.loop_id == loop.loop_id,
                        RUNS_TABLE.c.run_number == run.run_number).values(**row))
                else:
                    connection.execute(insert(RUNS_TABLE).values(**row))

    def _read(self, connection: Connection, loop_ids: list[str] | None) -> list[StoredLoop]:
        query = select(LOOPS_TABLE).order_by(LOOPS_TABLE.c.start_order)
        runs_query = select(RUNS_TABLE).order_by(RUNS_TABLE.c.loop_id,
                                                 RUNS_TABLE.c.run_number)
        if loop_ids is not None:
            query = query.where(LOOPS_TABLE.c.loop_id.in_(loop_ids))
            runs_query = runs_query.where(RUNS_TABLE.c.loop_id.in_(loop_ids))
        rows = list(connection.execute(query))
        runs: dict[str, list[Any]] = {}
        for run in connection.execute(runs_query):
            runs.setdefault(run.loop_id, []).append(run)
        return [_to_stored(row, runs.get(row.loop_id, [])) for row in rows]

    def load(self, loop_id: str) -> StoredLoop | None:
        with self._transaction(read_only=True) as connection:
            found = self._read(connection, [loop_id])
        return found[0] if found else None

    def all(self) -> list[StoredLoop]:
        with self._transaction(read_only=True) as connection:
            return self._read(connection, None)

    def clear(self) -> None:
        with self._transaction() as connection:
            connection.execute(delete(RUNS_TABLE))
            connection.execute(delete(LOOPS_TABLE))
