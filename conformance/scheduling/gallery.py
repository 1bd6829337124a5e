"""The scheduling gallery: backends whose scheduler breaks one rule of seed 002 §10.1,
§10.2, §10.6, §10.6.1 or §10.9.

Each entry is a shipped backend with one method of its scheduler (or store) changed the
way a scheduler could get it wrong. `GALLERY` joins the self-test: every suite
must catch each entry and name the requirement in `catches`.
"""

from __future__ import annotations

import builtins
import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from cronsim import CronSim
from sqlalchemy import insert, select, update

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import Clock
from jobconform.backends.scheduling.memory import InMemoryScheduleStore
from jobconform.backends.scheduling.protocol import SchedulingConfig, SchedulingTarget
from jobconform.backends.scheduling.runtime import (
    ScheduleStore,
    StepSchedulingRuntime,
    StoredExecution,
    StoredSchedule,
    StoredValidationRun,
    first_fire_after,
)
from jobconform.backends.scheduling.sql import (
    EXECUTIONS,
    VALIDATION_RUNS,
    SqlScheduleStore,
    run_values,
    to_execution,
)
from jobconform.backends.scheduling.threaded import ThreadedSchedulingRuntime
from jobconform.backends.sql import SqlBackend
from jobconform.backends.threaded import ThreadedBackend
from jobconform.conformance.gallery import (
    GalleryEntry,
    declares,
    opener_entry,
    over_new_store,
    with_swapped_store,
)
from jobconform.reference.scheduling.oracle import (
    CRON,
    BusinessStatus,
    ExecutionStatus,
    PreCheckAnswer,
    Trigger,
)

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []
memory_entry = over_new_store(GALLERY, MemoryBackend, "open_scheduling", InMemoryScheduleStore)
threaded_entry = over_new_store(GALLERY, ThreadedBackend, "open_scheduling", "new_schedule_store")
sql_entry = with_swapped_store(GALLERY, SqlBackend, "empty_schedule_store")


@declares(GALLERY)
def memory_store_entry(name: str, broken: type[InMemoryScheduleStore], catches: str,
                       source: str) -> GalleryEntry:
    """A broken store under the shipped step scheduler."""
    return opener_entry(__name__, name, MemoryBackend, "open_scheduling",
                        lambda _, *opened: StepSchedulingRuntime(broken(), *opened), broken,
                        catches, source)


SEED = "seed 002"


# -- broken step schedulers (on the memory backend) -----------------------------------------


@memory_entry("scheduling_fires_twice", "SC-008",
              f"{SEED} §10.3 (no parallel execution of one schedule)")
class OwnTimetableRuntime(StepSchedulingRuntime):
    """Each scheduler keeps its own timetable of next fire times in memory, loaded when it
    starts, as two processes with an in-memory job store do: a second scheduler fires
    every fire the first one already executed."""

    def __init__(self, store: ScheduleStore, clock: Clock, config: SchedulingConfig,
                 target: SchedulingTarget) -> None:
        super().__init__(store, clock, config, target)  # the boot catch-up comes first
        self._timetable = {s.schedule_id: s.next_fire_at for s in store.list()}
        self._autonomy_seen = store.autonomy()

    def _add(self, kind: str, message: str, expression: str | None, timezone: str | None,
             pre_check: bool, now: datetime, first: datetime) -> str:
        schedule_id = super()._add(kind, message, expression, timezone, pre_check, now, first)
        self._timetable[schedule_id] = first
        return schedule_id

    def _fire_due(self, now: datetime) -> None:
        autonomy = self._store.autonomy()
        if autonomy and not self._autonomy_seen:
            # The switch came back on, in whichever process: the fires held meanwhile are
            # dropped, as the store's next fire times say (this bug is the timetable kept
            # from the start, not a burst on resume, SC-011's).
            self._timetable = {s.schedule_id: s.next_fire_at for s in self._store.list()}
        self._autonomy_seen = autonomy
        if not autonomy:
            return
        for schedule in self._store.list():
            fire = self._timetable.get(schedule.schedule_id)
            while fire is not None and fire <= now:
                following = self._following(schedule, fire)
                self._store.claim(schedule.schedule_id, schedule.next_fire_at, following)
                schedule = self._store.get(schedule.schedule_id) or schedule
                self._execute(schedule, fire, Trigger.SCHEDULE, now)
                self._timetable[schedule.schedule_id] = fire = following

    def set_autonomy(self, enabled: bool) -> None:
        super().set_autonomy(enabled)
        self._timetable = {s.schedule_id: s.next_fire_at for s in self._store.list()}

    def edit(self, schedule_id: str, message: str | None = None,
             expression: str | None = None, timezone: str | None = None) -> None:
        # The editing scheduler moves its own timer (its bug is the other's timetable, not
        # an edit that keeps the old one, SC-017's gallery entry).
        super().edit(schedule_id, message, expression, timezone)
        stored = self._store.get(schedule_id)
        if stored is not None:
            self._timetable[schedule_id] = stored.next_fire_at


@memory_entry("scheduling_fires_early", "SC-006", f"{SEED} §10.1 (cron-based automation)")
class FiresEarlyRuntime(StepSchedulingRuntime):
    """The scheduler runs its cron timetable a minute ahead, to save a wake-up: a cron
    execution starts before its fire time (one-shot jobs keep theirs)."""

    def _fire_due(self, now: datetime) -> None:
        super()._fire_due(now)
        if not self._store.autonomy():
            return
        ahead = now + timedelta(minutes=1)
        for schedule in self._store.due(ahead):
            fire = schedule.next_fire_at
            while schedule.kind == CRON and fire is not None and fire <= ahead:
                following = self._following(schedule, fire)
                if not self._store.claim(schedule.schedule_id, fire, following):
                    break
                self._execute(schedule, fire, Trigger.SCHEDULE, ahead)
                fire = following


@memory_entry("scheduling_dst_gap_naive", "SC-004", f"{SEED} §10.1 (timezone support)")
class NaiveWallClockRuntime(StepSchedulingRuntime):
    """A local fire time inside a DST gap (02:30 on the night clocks jump from 02:00 to
    03:00) is read with the offset from before the gap, as a zone attached to a naive
    wall time reads it, and fires an hour after the gap ends, not at its end. Times that
    exist are right (a wall clock attached naively would also lose a fold's repeat,
    SC-005's bug of its own)."""

    def _first_fire(self, expression: str, timezone: str, now: datetime) -> datetime:
        return self._gap_read_late(expression, timezone, now,
                                   super()._first_fire(expression, timezone, now))

    def _following(self, schedule: StoredSchedule, fire: datetime) -> datetime | None:
        following = super()._following(schedule, fire)
        if following is None or schedule.expression is None or schedule.timezone is None:
            return following
        return self._gap_read_late(schedule.expression, schedule.timezone, fire, following)

    @staticmethod
    def _gap_read_late(expression: str, timezone: str, after: datetime,
                       right: datetime) -> datetime:
        """`right`, unless the first matching wall time after `after` does not exist:
        then that wall time read with the offset from before the gap."""
        zone = ZoneInfo(timezone)
        for wall in CronSim(expression, after.astimezone(zone).replace(tzinfo=None)):
            instant = wall.replace(tzinfo=zone).astimezone(UTC)
            if instant <= after:
                continue
            exists = instant.astimezone(zone).replace(tzinfo=None) == wall
            return right if exists else instant
        raise AssertionError("unreachable: cron fire times never end")


@memory_entry("scheduling_fold_repeat_skipped", "SC-005", f"{SEED} §10.1 (timezone support)")
class FoldRepeatSkippedRuntime(StepSchedulingRuntime):
    """The fire after a fire must fall at a later wall time, so a wildcard-hour schedule
    whose local time repeats in a DST fold (01:00 EDT, then 01:00 EST an hour later)
    skips the repeat, as a scheduler that remembers the last wall time it fired does."""

    def _following(self, schedule: StoredSchedule, fire: datetime) -> datetime | None:
        following = super()._following(schedule, fire)
        if following is None or schedule.timezone is None:
            return following
        zone = ZoneInfo(schedule.timezone)
        last_wall = fire.astimezone(zone).replace(tzinfo=None)
        while (following is not None
               and following.astimezone(zone).replace(tzinfo=None) <= last_wall):
            following = super()._following(schedule, following)
        return following


@memory_entry("scheduling_gap_wall_times_each_fire", "SC-004", f"{SEED} §10.1 (timezone support)")
class GapWallTimesEachFireRuntime(StepSchedulingRuntime):
    """A scheduler that walks the wall clock fires once per matching wall time: on the
    night clocks jump from 02:00 to 03:00, an hourly schedule's missing 02:00 and the
    03:00 after it both land on the gap's end, so the schedule runs twice there (a
    half-hourly one three times), where SC-004 makes them one fire."""

    def _execute(self, schedule: StoredSchedule, scheduled_for: datetime, trigger: Trigger,
                 now: datetime) -> None:
        super()._execute(schedule, scheduled_for, trigger, now)
        if trigger is not Trigger.SCHEDULE or schedule.expression is None:
            return
        for _ in range(_missing_wall_times(schedule.expression, schedule.timezone,
                                           scheduled_for)):
            super()._execute(schedule, scheduled_for, trigger, now)


def _missing_wall_times(expression: str, timezone: str | None, fire: datetime) -> int:
    """How many matching wall times the DST gap that ends at `fire` skipped (none when no
    gap ends there)."""
    if timezone is None:
        return 0
    zone = ZoneInfo(timezone)
    before = (fire - timedelta(microseconds=1)).astimezone(zone)
    after = fire.astimezone(zone)
    skipped = after.utcoffset() - before.utcoffset()  # type: ignore[operator]
    if skipped <= timedelta(0):
        return 0
    gap_end = after.replace(tzinfo=None)
    missing = 0
    for wall in CronSim(expression, gap_end - skipped - timedelta(microseconds=1)):
        if wall >= gap_end:
            return missing
        missing += 1
    return missing


@memory_entry("scheduling_catch_up_burst", "SC-007", f"{SEED} §10.1 (missed fires after downtime)")
class CatchUpBurstRuntime(StepSchedulingRuntime):
    """After downtime every missed fire runs, whatever missed_fires says: a scheduler down
    for a night floods the agent with a burst of catch-up runs."""

    def _missed_to_run(self, missed: list[datetime]) -> list[datetime]:
        return list(missed)


@memory_entry("scheduling_catch_up_as_ordinary_fire", "SC-007",
              f"{SEED} §10.1 (missed fires after downtime); celery beat runs a missed entry"
              " once at start as an ordinary run")
class CatchUpAsOrdinaryFireRuntime(StepSchedulingRuntime):
    """After downtime the missed fire the policy runs is recorded as an ordinary fire
    (trigger schedule) instead of a catch-up, so the history cannot tell a fire made on
    time from one made up for after a restart. With a pre-check, the record differs from
    the catch-up in its trigger alone, not in what the hook answered."""

    def _execute(self, schedule: StoredSchedule, scheduled_for: datetime, trigger: Trigger,
                 now: datetime) -> None:
        ordinary = Trigger.SCHEDULE if trigger is Trigger.CATCH_UP else trigger
        super()._execute(schedule, scheduled_for, ordinary, now)


@memory_entry("scheduling_ignores_switch_off", "SC-010",
              f"{SEED} §10.2 (the master toggle disables all schedules)")
class IgnoresSwitchRuntime(StepSchedulingRuntime):
    """The scheduler never reads the autonomy switch: schedules keep firing while the
    operator has turned autonomy off."""

    def _autonomy_on(self) -> bool:
        return True


@memory_entry("scheduling_pause_drops_fires", "SC-010",
              f"{SEED} §10.2 (the master toggle disables all schedules)")
class PauseDropsFiresRuntime(StepSchedulingRuntime):
    """While autonomy is off, a cron schedule's due fire is taken and dropped instead of
    held: its timetable moves on with nothing run, so the next fire time it shows is no
    longer the first one missed (huey's revoked periodic task, queued at each fire time
    and discarded)."""

    def _fire_due(self, now: datetime) -> None:
        if self._autonomy_on():
            super()._fire_due(now)
            return
        for schedule in self._store.due(now):
            fire = schedule.next_fire_at
            while schedule.kind == CRON and fire is not None and fire <= now:
                following = self._following(schedule, fire)
                if not self._store.claim(schedule.schedule_id, fire, following):
                    break
                fire = following


@memory_entry("scheduling_failing_pre_check_blocks", "SC-014", f"{SEED} §10.6.1 (fail-open)")
class PreCheckFailureSkipsRuntime(StepSchedulingRuntime):
    """A pre-check that fails or times out is taken as "nothing to do", so a broken hook
    silently suppresses every scheduled run (fail-closed instead of fail-open)."""

    def _pre_check(self, schedule_id: str) -> PreCheckAnswer | str:
        verdict = super()._pre_check(schedule_id)
        if verdict in (PreCheckAnswer.ERROR, PreCheckAnswer.TIMEOUT):
            return PreCheckAnswer.SKIP
        return verdict


@memory_entry("scheduling_manual_runs_pre_check", "SC-009",
              f"{SEED} §10.6.1 (manual triggers bypass the pre-check)")
class ManualRunsPreCheckRuntime(StepSchedulingRuntime):
    """A manual trigger goes through the pre-check like a cron tick, so an operator's
    explicit run is skipped when the hook finds no work."""

    def _runs_pre_check(self, schedule: StoredSchedule, trigger: Trigger) -> bool:
        return schedule.pre_check


@memory_entry("scheduling_edit_keeps_timetable", "SC-017", f"{SEED} §10.1 (schedule CRUD: editing)")
class EditKeepsTimetableRuntime(StepSchedulingRuntime):
    """An edit writes the new expression and zone but keeps the next fire time worked out
    from the old ones, as a scheduler that arms its timer only at creation: the first fire
    after the edit comes at the old timetable's time."""

    def _retimed(self, schedule: StoredSchedule, timetable: tuple[str, str],
                 now: datetime) -> datetime | None:
        return schedule.next_fire_at


@memory_entry("scheduling_edit_fires_on_the_edit_instant", "SC-017",
              f"{SEED} §10.1 (schedule CRUD: editing)")
class EditFiresOnTheEditInstantRuntime(StepSchedulingRuntime):
    """An edit takes the new timetable's first fire time at or after the edit, the way a
    new job's first fire is found, so an edit made exactly on one of the new timetable's
    fire times fires at once (APScheduler's reschedule_job)."""

    def _retimed(self, schedule: StoredSchedule, timetable: tuple[str, str],
                 now: datetime) -> datetime | None:
        return super()._retimed(schedule, timetable, now - timedelta(microseconds=1))


@memory_entry("scheduling_delete_leaves_timer", "SC-018", f"{SEED} §10.1 (schedule CRUD: deleting)")
class DeleteLeavesTimerRuntime(StepSchedulingRuntime):
    """Deleting a schedule removes its row but not the timer armed for its next fire: the
    timer still goes off once, dispatching the message of a schedule that is gone."""

    def __init__(self, store: ScheduleStore, clock: Clock, config: SchedulingConfig,
                 target: SchedulingTarget) -> None:
        self._armed: dict[str, StoredSchedule] = {}  # deleted schedules whose timer stays
        super().__init__(store, clock, config, target)

    def delete(self, schedule_id: str) -> None:
        schedule = self._store.get(schedule_id)
        super().delete(schedule_id)
        if schedule is not None and schedule.next_fire_at is not None:
            self._armed[schedule_id] = schedule

    def _fire_due(self, now: datetime) -> None:
        super()._fire_due(now)
        if not self._autonomy_on():
            return
        for schedule_id, schedule in list(self._armed.items()):
            fire = schedule.next_fire_at
            if fire is not None and fire <= now:
                del self._armed[schedule_id]
                self._target.dispatch(schedule_id, fire, schedule.message)


# -- a broken threaded scheduler ------------------------------------------------------------


@threaded_entry("threaded_scheduling_resume_burst", "SC-011", f"{SEED} §10.2 (autonomy back on)")
class ResumeBurstRuntime(ThreadedSchedulingRuntime):
    """Turning autonomy back on only flips the switch: the scheduler thread then runs
    every fire that fell while it was off, in one burst."""

    def set_autonomy(self, enabled: bool) -> None:
        with self._state:
            self._store.set_autonomy(enabled)
            self._schedules_changed()


@memory_entry("scheduling_validation_skipped_on_success", "SC-021",
              f"{SEED} §10.9 (business_status after a technical success)")
class SwitchIgnoredAtEndRuntime(StepSchedulingRuntime):
    """The business status is set from the technical outcome alone: a success is marked
    skipped and no validation run starts, as a scheduler that stores the per-schedule
    switch but never reads it when the execution ends does."""

    def _business_start(self, schedule: StoredSchedule, outcome: str
                        ) -> tuple[str, StoredValidationRun | None]:
        return BusinessStatus.SKIPPED.value, None


@memory_entry("scheduling_unclear_verdict_validated", "SC-023",
              f"{SEED} §10.9 (fallback text inference when JSON parsing fails)")
class InferredVerdictRuntime(StepSchedulingRuntime):
    """An answer that is no JSON verdict is read for its wording, and a member passed of
    another type for its truth: "PASSED: looks complete" and {"passed": "yes"} validate
    the execution, the text inference the kit forbids (SC-023)."""

    def _passes(self, verdict: str) -> bool:
        try:
            answer = json.loads(verdict)
        except ValueError:
            return "pass" in verdict.lower() and "fail" not in verdict.lower()
        return isinstance(answer, dict) and bool(answer.get("passed"))


# -- broken in-memory stores ----------------------------------------------------------------


@memory_store_entry("scheduling_failed_validation_unnoticed", "SC-024",
                    f"{SEED} §10.9 (operator queue notification on validation failure)")
class SilentValidationFailureStore(InMemoryScheduleStore):
    """A failed validation changes the business status and nothing else: no operator alert
    is raised, so nobody learns that a run which ended well did not do its work."""

    def _alert(self, execution: StoredExecution) -> None:
        del execution


@memory_store_entry("scheduling_late_failure_overwrites_end", "SC-019",
                    f"{SEED} §10.6 (status overwrite guard)")
class LateFailureOverwritesStore(InMemoryScheduleStore):
    """Every end the scheduler is told is written, the latest last: a failure inferred after
    the execution completed (the connection to the backend dropped) overwrites the
    completion recorded before it, the false failure seed 002 §10.6's status guard stops."""

    def _takes_end(self, execution: StoredExecution) -> bool:
        return execution.status == ExecutionStatus.DISPATCHED


# -- broken SQL stores ----------------------------------------------------------------------


@sql_entry("sql_scheduling_history_newest_first", "SC-015", f"{SEED} §10.1 (execution history)")
class NewestFirstHistoryStore(SqlScheduleStore):
    """The history is read newest first, as a dashboard shows it, so a schedule's
    executions come back out of the order they were made."""

    def history(self, schedule_id: str) -> builtins.list[StoredExecution]:
        query = (select(EXECUTIONS).where(EXECUTIONS.c.schedule_id == schedule_id)
                 .order_by(EXECUTIONS.c.seq.desc()))
        with self._transaction(read_only=True) as connection:
            return [to_execution(row) for row in connection.execute(query)]


@sql_entry("sql_scheduling_end_on_latest_run", "SC-019",
           f"{SEED} §10.6 (polling until the execution ends)")
class EndOnLatestRunStore(SqlScheduleStore):
    """An end is written to the schedule's latest execution still open, as a scheduler
    that keeps one current run per schedule does: with two executions open, the end of
    the earlier fire lands on the later one."""

    def end(self, schedule_id: str, scheduled_for: datetime, outcome: str,
            cost: float | None, business_status: str | None = None,
            validation: StoredValidationRun | None = None) -> bool:
        latest = (select(EXECUTIONS.c.seq, EXECUTIONS.c.execution_id)
                  .where(EXECUTIONS.c.schedule_id == schedule_id,
                         EXECUTIONS.c.status == ExecutionStatus.DISPATCHED.value,
                         EXECUTIONS.c.outcome.is_(None))
                  .order_by(EXECUTIONS.c.seq.desc()).limit(1))
        with self._transaction() as connection:
            row = connection.execute(latest).first()
            if row is None:
                return False
            connection.execute(update(EXECUTIONS).where(EXECUTIONS.c.seq == row.seq).values(
                outcome=outcome, cost=cost, business_status=business_status,
                validation_run=None if validation is None else validation.run_id))
            if validation is not None:
                connection.execute(insert(VALIDATION_RUNS).values(
                    **run_values(replace(validation, validates=row.execution_id))))
            return True


# -- a fire made again by a command about another schedule -----------------------------------


@memory_entry("scheduling_tick_on_change_refires", "SC-006",
              f"{SEED} §10.1 (cron-based automation); huey's consumer tests its crontabs on"
              " a minute tick of its own")
class TickOnChangeRuntime(StepSchedulingRuntime):
    """Besides its timetable, the scheduler tests the other cron schedules against the
    current minute whenever a schedule is created, edited or deleted (as huey's consumer
    tests its crontabs on each minute tick, here run at once to pick the change up), and
    fires each one whose expression matches that minute without asking whether the
    minute's fire was taken: a fire already made at its time is made again when, within
    its minute, a command changes another schedule. Only that command's dispatches show
    it."""

    def _add(self, kind: str, message: str, expression: str | None, timezone: str | None,
             pre_check: bool, now: datetime, first: datetime) -> str:
        schedule_id = super()._add(kind, message, expression, timezone, pre_check, now, first)
        self._tick(schedule_id)
        return schedule_id

    def edit(self, schedule_id: str, message: str | None = None,
             expression: str | None = None, timezone: str | None = None) -> None:
        super().edit(schedule_id, message, expression, timezone)
        self._tick(schedule_id)

    def delete(self, schedule_id: str) -> None:
        super().delete(schedule_id)
        self._tick(schedule_id)

    def _tick(self, changed: str) -> None:
        """Fire every cron schedule but `changed` whose expression matches this minute."""
        if not self._autonomy_on():
            return
        now = self._clock.now()
        minute = now.replace(second=0, microsecond=0)
        for schedule in self._store.list():
            if (schedule.schedule_id == changed or schedule.kind != CRON
                    or schedule.expression is None or schedule.timezone is None
                    or schedule.created_at >= minute):
                continue  # a schedule created within this minute has no fire in it
            matches = first_fire_after(schedule.expression, schedule.timezone,
                                       minute - timedelta(microseconds=1)) == minute
            if matches:
                self._execute(schedule, minute, Trigger.SCHEDULE, now)
