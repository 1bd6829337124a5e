"""The loops part of the self-test gallery: the memory backend with one loop rule broken.

Each entry is the memory backend whose loop runtime has one rule of
`jobconform.backends.loops.runner.LoopRules` changed the way a loop runner could get it
wrong; seed 002 §38 names several of these traps itself (one entry breaks the step runtime
itself, where it tells its event sink). The lifecycle stays correct, so only the loops
checks may catch them, and each must name the requirement in `catches`.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from jobconform.backends.loops.memory import StepLoopRuntime
from jobconform.backends.loops.protocol import (
    LoopAgent,
    LoopSnapshot,
    RunResult,
)
from jobconform.backends.loops.runner import (
    LOOP_TRIGGER,
    LoopRules,
    Progress,
    RunnerMemory,
    StoredLoop,
    StoredRun,
)
from jobconform.backends.memory import MemoryBackend
from jobconform.conformance.gallery import GalleryEntry, declares, opener_entry

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []


@declares(GALLERY)
def loops_entry(name: str, broken: type[LoopRules] | type[StepLoopRuntime], catches: str,
                source: str) -> GalleryEntry:
    """The memory backend with one loop rule, or the runtime's event order, broken:
    loadable as `<this module>:<name>`."""
    rules, runtime = ((broken, StepLoopRuntime) if issubclass(broken, LoopRules)
                      else (LoopRules, broken))
    return opener_entry(__name__, name, MemoryBackend, "open_loops",
                        lambda _, clock, config, events=None: runtime(
                            clock, config, rules=rules(), events=events),
                        broken, catches, source)


@loops_entry("loops_budget_before_deadline", "LP-004", "seed 002 §38.3 precedence")
class BudgetBeforeDeadline(LoopRules):
    """The gate before a next run checks the budget before the deadline, so a loop past
    its deadline that also spent its budget is reported as budget_exhausted."""

    def before_next_run(self, loop: StoredLoop, memory: RunnerMemory,
                        now: datetime) -> str | None:
        if loop.stop_requested:
            return "user_stopped"
        if self.budget_spent(loop, memory):
            return "budget_exhausted"
        if self.deadline_passed(loop, now):
            return "deadline_exceeded"
        return None


@loops_entry("loops_no_progress_relabels_user_stop", "LP-013", "seed 002 §38.4 precedence")
class NoProgressRelabelsUserStop(LoopRules):
    """A no-progress streak ends the loop as no_progress even when the operator asked it
    to stop or its deadline has passed (seed 002 §38.4 warns against exactly this)."""

    def no_progress_reason(self, loop: StoredLoop, now: datetime) -> str:
        return "no_progress"


@loops_entry("loops_failed_run_overwrites_previous", "LP-003", "seed 002 §38.5 FR-5")
class FailedRunOverwritesPrevious(LoopRules):
    """A failed run replaces {{previous_response}} with its empty response, so the next
    run loses the last good answer (seed 002 §38.5 FR-5)."""

    def record(self, loop: StoredLoop, memory: RunnerMemory, result: RunResult | Exception,
               now: datetime) -> None:
        super().record(loop, memory, result, now)
        if loop.runs[-1].status == "failed":
            self.keep_previous(loop, None)


@loops_entry("loops_nan_cost_counts", "LP-010", "seed 002 §38.3")
class NanCostCounts(LoopRules):
    """Every reported cost is added as it is, so one NaN cost poisons the spend and the
    total (seed 002 §38.3)."""

    def counted_cost(self, cost: float | None) -> float | None:
        return None if cost is None else float(cost)


@loops_entry("loops_delay_past_deadline", "LP-007", "seed 002 §38.2")
class DelayPastDeadline(LoopRules):
    """The delay between runs sleeps its full length even past the deadline."""

    def delay_until(self, loop: StoredLoop, now: datetime) -> datetime:
        return now + timedelta(seconds=loop.params.delay_seconds)


@loops_entry("loops_streak_never_resets", "LP-015", "seed 002 §38.5 FR-2")
class StreakNeverResets(LoopRules):
    """A successful run does not reset the failure streak, so scattered failures end a
    continue-mode loop as max_consecutive_failures."""

    def record(self, loop: StoredLoop, memory: RunnerMemory, result: RunResult | Exception,
               now: datetime) -> None:
        streak = memory.failures_in_a_row
        super().record(loop, memory, result, now)
        if loop.runs[-1].status == "succeeded":
            memory.failures_in_a_row = streak


# A zone two hours east of UTC, as a runtime that formats times for its operators' desk.
EAST_OF_UTC = timezone(timedelta(hours=2))


@loops_entry("loops_times_at_offset", "LP-018",
             "issue 18: UTC everywhere (times outside job records)")
class LoopTimesAtOffset(LoopRules):
    """A loop's started_at and completed_at are the right instants, shown at +02:00 (the
    operators' local time) rather than UTC; equal as instants, so only an offset check
    sees it."""

    def snapshot(self, loop: StoredLoop, now: datetime) -> LoopSnapshot:
        shown = super().snapshot(loop, now)
        ended = shown.completed_at
        return replace(shown, started_at=shown.started_at.astimezone(EAST_OF_UTC),
                       completed_at=None if ended is None else ended.astimezone(EAST_OF_UTC))


@loops_entry("loops_runs_unlabelled", "LP-020",
             "seed 002 §38.1: triggered_by=\"loop\" and loop_id on each iteration")
class RunsUnlabelled(LoopRules):
    """The agent is called with the run's number and message only, so the run's execution
    says neither that a loop triggered it nor which loop: the timeline shows it as an
    untagged execution of the agent (seed 002 §38.1)."""

    def execute(self, agent: LoopAgent, loop: StoredLoop, run: StoredRun) -> RunResult:
        return agent.execute(run.run_number, run.message)


@loops_entry("loops_run_names_its_execution", "LP-020",
             "seed 002 §38.1: triggered_by=\"loop\" and loop_id on each iteration")
class RunNamesItsExecution(LoopRules):
    """Each run's execution is tagged with the run's own execution id in place of the
    loop's id, so it never joins back to its loop."""

    def execute(self, agent: LoopAgent, loop: StoredLoop, run: StoredRun) -> RunResult:
        return agent.execute(run.run_number, run.message, LOOP_TRIGGER,
                             f"{loop.loop_id}-run-{run.run_number}")


@loops_entry("loops_run_event_before_record", "LP-019",
               "seed 002 §38.1: WebSocket events loop_run_completed and loop_completed")
class EventBeforeRecord(StepLoopRuntime):
    """The loop events are sent before the step that ended a run (or the loop) is saved,
    as a service that broadcasts on its websocket before it commits: a client that reads
    the loop on loop_run_completed still sees the run in flight."""

    def _commit(self, loop: StoredLoop, before: Progress) -> None:
        self.rules.announce(self.events, loop, before)
        self._store.save(loop)
