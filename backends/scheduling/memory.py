"""The memory backend's scheduling: the step scheduler over an in-memory store.

A restart reopens the same in-memory data with a new store object and a new scheduler,
as a process would reopen its database; a second scheduler shares the data the same way.
"""

from __future__ import annotations

import builtins
import threading
from dataclasses import replace
from datetime import datetime
from operator import attrgetter

from jobconform.backends.protocol import Clock
from jobconform.backends.scheduling.protocol import SchedulingConfig, SchedulingTarget
from jobconform.backends.scheduling.runtime import (
    Judge,
    StepSchedulingRuntime,
    StoredExecution,
    StoredSchedule,
    StoredValidationRun,
)
from jobconform.reference.scheduling.oracle import BusinessStatus, ExecutionStatus


class _Shelf:
    """The durable data behind in-memory stores: it outlives any one store object."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.schedules: dict[str, StoredSchedule] = {}  # insertion order is creation order
        # Each schedule's executions, as recorded: a history reads its own schedule's alone.
        self.executions: dict[str, list[StoredExecution]] = {}
        self.validation_runs: dict[str, StoredValidationRun] = {}
        self.alerts: list[str] = []  # execution ids, in the order alerted (SC-024)
        self.autonomy = True


_HISTORY_ORDER = attrgetter("started_at", "scheduled_for")


def _in_history_order(executions: builtins.list[StoredExecution]) -> builtins.list[int]:
    """Indexes by start, then fire time; stable, so equal keys stay in the order recorded."""
    return sorted(range(len(executions)), key=lambda i: _HISTORY_ORDER(executions[i]))


class InMemoryScheduleStore:
    def __init__(self, shelf: _Shelf | None = None) -> None:
        self._shelf = shelf if shelf is not None else _Shelf()

    def add(self, schedule: StoredSchedule) -> None:
        with self._shelf.lock:
            if schedule.schedule_id in self._shelf.schedules:
                raise ValueError(f"schedule id {schedule.schedule_id} is already held")
            self._shelf.schedules[schedule.schedule_id] = schedule

    def get(self, schedule_id: str) -> StoredSchedule | None:
        with self._shelf.lock:
            return self._shelf.schedules.get(schedule_id)

    def list(self) -> builtins.list[StoredSchedule]:
        with self._shelf.lock:
            return list(self._shelf.schedules.values())

    def due(self, now: datetime) -> builtins.list[StoredSchedule]:
        due = [s for s in self.list() if s.next_fire_at is not None and s.next_fire_at <= now]
        return sorted(due, key=lambda s: s.next_fire_at or now)  # stable: creation order

    def next_due(self) -> datetime | None:
        return min((s.next_fire_at for s in self.list() if s.next_fire_at is not None),
                   default=None)

    def claim(self, schedule_id: str, expected: datetime | None,
              following: datetime | None) -> bool:
        with self._shelf.lock:
            current = self._shelf.schedules.get(schedule_id)
            if current is None or current.next_fire_at != expected:
                return False
            self._shelf.schedules[schedule_id] = replace(current, next_fire_at=following)
            return True

    def replace(self, schedule: StoredSchedule) -> bool:
        with self._shelf.lock:
            if schedule.schedule_id not in self._shelf.schedules:
                return False
            self._shelf.schedules[schedule.schedule_id] = schedule  # keeps its position
            return True

    def remove(self, schedule_id: str) -> bool:
        with self._shelf.lock:
            if self._shelf.schedules.pop(schedule_id, None) is None:
                return False
            self._shelf.executions.pop(schedule_id, None)
            self._shelf.validation_runs = {
                run_id: run for run_id, run in self._shelf.validation_runs.items()
                if run.schedule_id != schedule_id}
            return True

    def set_validation(self, schedule_id: str, enabled: bool, timeout_seconds: float) -> bool:
        with self._shelf.lock:
            schedule = self._shelf.schedules.get(schedule_id)
            if schedule is None:
                return False
            self._shelf.schedules[schedule_id] = replace(
                schedule, validation=enabled, validation_timeout=timeout_seconds)
            return True

    def record(self, execution: StoredExecution) -> None:
        with self._shelf.lock:
            self._shelf.executions.setdefault(execution.schedule_id, []).append(execution)

    def end(self, schedule_id: str, scheduled_for: datetime, outcome: str,
            cost: float | None, business_status: str | None = None,
            validation: StoredValidationRun | None = None) -> bool:
        with self._shelf.lock:
            executions = self._shelf.executions.get(schedule_id, [])
            for index in _in_history_order(executions):
                execution = executions[index]
                if execution.scheduled_for == scheduled_for and self._takes_end(execution):
                    run_id = None
                    if validation is not None:
                        assert execution.execution_id is not None
                        run_id = validation.run_id
                        self._shelf.validation_runs[run_id] = replace(
                            validation, validates=execution.execution_id)
                    executions[index] = replace(execution, outcome=outcome, cost=cost,
                                                business_status=business_status,
                                                validation_run=run_id)
                    return True
            return False

    def decide(self, schedule_id: str, scheduled_for: datetime, judge: Judge) -> bool:
        with self._shelf.lock:
            executions = self._shelf.executions.get(schedule_id, [])
            for index in _in_history_order(executions):
                execution = executions[index]
                if (execution.scheduled_for != scheduled_for
                        or execution.business_status != BusinessStatus.PENDING_VALIDATION):
                    continue
                assert execution.validation_run is not None
                status = judge(self._shelf.validation_runs[execution.validation_run])
                executions[index] = replace(execution, business_status=status.value)
                if status is BusinessStatus.FAILED_VALIDATION:
                    self._alert(execution)
                return True
            return False

    def _alert(self, execution: StoredExecution) -> None:
        """Notify the operator of a failed validation (SC-024); under the shelf's lock."""
        assert execution.execution_id is not None
        self._shelf.alerts.append(execution.execution_id)

    def validation_run(self, run_id: str) -> StoredValidationRun | None:
        with self._shelf.lock:
            return self._shelf.validation_runs.get(run_id)

    def alerts(self) -> builtins.list[str]:
        with self._shelf.lock:
            return list(self._shelf.alerts)

    def _takes_end(self, execution: StoredExecution) -> bool:
        """A dispatched execution not ended yet: the first end stays (SC-019)."""
        return execution.status == ExecutionStatus.DISPATCHED and execution.outcome is None

    def history(self, schedule_id: str) -> builtins.list[StoredExecution]:
        with self._shelf.lock:
            held = list(self._shelf.executions.get(schedule_id, ()))
        return sorted(held, key=_HISTORY_ORDER)  # stable: as recorded among equal keys

    def autonomy(self) -> bool:
        with self._shelf.lock:
            return self._shelf.autonomy

    def set_autonomy(self, enabled: bool) -> None:
        with self._shelf.lock:
            self._shelf.autonomy = enabled

    def reopen(self) -> InMemoryScheduleStore:
        return InMemoryScheduleStore(self._shelf)

    def share(self) -> InMemoryScheduleStore:
        return InMemoryScheduleStore(self._shelf)

    def close(self) -> None:
        pass


def open_memory_scheduling(clock: Clock, config: SchedulingConfig,
                           target: SchedulingTarget) -> StepSchedulingRuntime:
    return StepSchedulingRuntime(InMemoryScheduleStore(), clock, config, target)
