"""The scheduling area's commands, declared once (conformance/vocabulary.py).

Each declaration names the Robot keyword that sends a command, builds the command from
the keyword's arguments, and lists the Gherkin wordings that send it. The Behave steps
(conformance/scheduling/steps.py) and the Robot keywords
(conformance/scheduling/keywords.py) are derived from this list; the wordings are the
feature file's and the Robot suite's own.

The keywords take instants and pre-check answers as text (ISO 8601 with an offset; skip,
prompt, error, timeout); the steps get them parsed already (the `Instant` and `PreCheck`
types steps.py registers), so a phrase builds its command directly.
"""

from __future__ import annotations

from datetime import datetime

from jobconform.conformance.vocabulary import Declaration, Phrase
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling import commands as sc
from jobconform.reference.scheduling.oracle import ExecutionOutcome, PreCheckAnswer, Verdict


def parse_instant(text: str | None) -> datetime | None:
    """An ISO 8601 instant with its offset, as the suites write it; None for none."""
    return None if text is None else datetime.fromisoformat(text)


def pre_check_answer(text: str | None) -> PreCheckAnswer | None:
    """A pre-check's answer as the suites write it; None for a schedule without a hook."""
    return None if text is None else PreCheckAnswer(text)


def _created(command: sc.CreateOnce | sc.CreateCron) -> str:
    return command.schedule


def schedule_one_shot_job(alias: str, message: str = "run", delay: float | None = None,
                          run_at: str | None = None,
                          pre_check: str | None = None) -> sc.CreateOnce:
    """Schedule a one-shot job by ``delay`` seconds or ``run_at``; returns the answer."""
    return sc.CreateOnce(alias, message, parse_instant(run_at), delay, pre_check_answer(pre_check))


def create_cron_schedule(alias: str, expression: str, timezone: str = "UTC",
                         message: str = "run", pre_check: str | None = None) -> sc.CreateCron:
    """A cron schedule; ``pre_check`` is its hook's first answer (skip, prompt, error,
    timeout), none for a schedule without a hook."""
    return sc.CreateCron(alias, message, expression, timezone, pre_check_answer(pre_check))


def pre_check_answers(alias: str, answer: str) -> sc.ScriptPreCheck:
    return sc.ScriptPreCheck(alias, PreCheckAnswer(answer))


def trigger_schedule(alias: str) -> sc.TriggerSchedule:
    return sc.TriggerSchedule(alias)


def end_execution(alias: str, scheduled_for: str, outcome: str,
                  cost: float | None = None) -> sc.EndExecution:
    """The runtime learns how the execution it dispatched for ``scheduled_for`` ended:
    ``outcome`` succeeded, failed or cancelled, ``cost`` none when unknown (SC-019);
    returns the answer (ended, refused or not_found)."""
    instant = parse_instant(scheduled_for)
    assert instant is not None
    return sc.EndExecution(alias, instant, ExecutionOutcome(outcome), cost)


def set_validation(alias: str, enabled: bool, timeout: float = 600.0) -> sc.SetValidation:
    """Switch the schedule's business validation on or off, with its timeout in seconds
    (SC-020); returns the answer (validation_set, not_found or rejected:validation)."""
    return sc.SetValidation(alias, enabled, timeout)


def end_validation(alias: str, scheduled_for: str, verdict: str) -> sc.EndValidation:
    """The validation run of the execution dispatched for ``scheduled_for`` answers
    ``verdict``: pass, fail, prose (free text saying it passed) or odd_json (a member
    passed that is no boolean) (SC-022, SC-023); returns the answer (decided, refused or
    not_found)."""
    instant = parse_instant(scheduled_for)
    assert instant is not None
    return sc.EndValidation(alias, instant, Verdict(verdict))


def edit_schedule(alias: str, message: str | None = None, expression: str | None = None,
                  timezone: str | None = None) -> sc.EditSchedule:
    """Change the fields given (SC-017); returns the answer (edited, not_found or
    rejected:<code>)."""
    return sc.EditSchedule(alias, message, expression, timezone)


def delete_schedule(alias: str) -> sc.DeleteSchedule:
    """Delete the schedule (SC-018); returns the answer (deleted or not_found)."""
    return sc.DeleteSchedule(alias)


def turn_autonomy(state: str) -> sc.SetAutonomy:
    """Turn autonomy ``off`` (no schedule fires) or ``on``."""
    if state not in ("on", "off"):
        raise ValueError(f"autonomy is turned on or off, not {state!r}")
    return sc.SetAutonomy(state == "on")


def start_second_scheduler() -> sc.StartSecondScheduler:
    return sc.StartSecondScheduler()


def advance_scheduling_clock(seconds: float) -> AdvanceTime:
    return AdvanceTime(seconds)


def restart_schedulers(down: float = 0.0) -> sc.RestartScheduling:
    """Crash every scheduler, let ``down`` seconds pass, start one over the store."""
    return sc.RestartScheduling(down)


def list_schedules() -> sc.ListSchedules:
    return sc.ListSchedules()


def read_history(alias: str) -> sc.ReadHistory:
    return sc.ReadHistory(alias)


ONE_SHOT = 'one-shot job "{alias}" is scheduled with message "{message}"'
CRON = 'cron schedule "{alias}" runs "{message}" at "{expression}" in {timezone:S}'
ENDS = 'the execution of schedule "{alias}" for {scheduled_for:Instant} ends {outcome:w}'
DECLARATIONS = (
    Declaration("Schedule One-Shot Job", schedule_one_shot_job, (
        Phrase(ONE_SHOT + " and a delay of {seconds:g} seconds",
               lambda alias, message, seconds: sc.CreateOnce(alias, message,
                                                             delay_seconds=seconds)),
        Phrase(ONE_SHOT + " to run at {run_at:Instant}",
               lambda alias, message, run_at: sc.CreateOnce(alias, message, run_at=run_at)),
        Phrase(ONE_SHOT + ", a delay of {seconds:g} seconds and a run time of"
               " {run_at:Instant}",
               lambda alias, message, seconds, run_at: sc.CreateOnce(
                   alias, message, run_at=run_at, delay_seconds=seconds)),
        Phrase(ONE_SHOT + " and no time", lambda alias, message: sc.CreateOnce(alias, message)),
    ), kept_as=_created),
    Declaration("Create Cron Schedule", create_cron_schedule, (
        Phrase(CRON, lambda alias, message, expression, timezone: sc.CreateCron(
            alias, message, expression, timezone)),
        Phrase(CRON + " with a pre-check that answers {answer:PreCheck}",
               lambda alias, message, expression, timezone, answer: sc.CreateCron(
                   alias, message, expression, timezone, answer)),
    ), kept_as=_created),
    Declaration("Pre-Check Answers", pre_check_answers, (
        Phrase('the pre-check of schedule "{alias}" answers {answer:PreCheck}',
               lambda alias, answer: sc.ScriptPreCheck(alias, answer)),
    )),
    Declaration("Trigger Schedule", trigger_schedule, (
        Phrase('schedule "{alias}" is triggered by hand', trigger_schedule),
    )),
    Declaration("End Execution", end_execution, (
        Phrase(ENDS, lambda alias, scheduled_for, outcome: sc.EndExecution(
            alias, scheduled_for, ExecutionOutcome(outcome))),
        Phrase(ENDS + " at a cost of {cost:g}",
               lambda alias, scheduled_for, outcome, cost: sc.EndExecution(
                   alias, scheduled_for, ExecutionOutcome(outcome), cost)),
    )),
    Declaration("Set Validation", set_validation, (
        Phrase('schedule "{alias}" validates its successes within {seconds:g} seconds',
               lambda alias, seconds: sc.SetValidation(alias, True, seconds)),
        Phrase('schedule "{alias}" stops validating, with a timeout of {seconds:g} seconds',
               lambda alias, seconds: sc.SetValidation(alias, False, seconds)),
    )),
    Declaration("End Validation", end_validation, (
        Phrase('the validation of schedule "{alias}" for {scheduled_for:Instant} answers'
               ' {verdict:w}', lambda alias, scheduled_for, verdict: sc.EndValidation(
                   alias, scheduled_for, Verdict(verdict))),
    )),
    Declaration("Edit Schedule", edit_schedule, (
        Phrase('schedule "{alias}" is edited to run "{message}"', edit_schedule),
        Phrase('schedule "{alias}" is edited to run at "{expression}" in {timezone:S}',
               edit_schedule),
        Phrase('schedule "{alias}" is edited to run in {timezone:S}', edit_schedule),
    )),
    Declaration("Delete Schedule", delete_schedule, (
        Phrase('schedule "{alias}" is deleted', delete_schedule),
    )),
    Declaration("Turn Autonomy", turn_autonomy, (
        Phrase("autonomy is turned {state:w}", turn_autonomy),
    )),
    Declaration("Start Second Scheduler", start_second_scheduler, (
        Phrase("a second scheduler starts", start_second_scheduler),
    )),
    Declaration("Advance Scheduling Clock", advance_scheduling_clock, (
        Phrase("the scheduling clock advances {seconds:g} seconds", advance_scheduling_clock),
        Phrase("the scheduling clock advances {seconds:g} second", advance_scheduling_clock),
    )),
    Declaration("Restart Schedulers", restart_schedulers, (
        Phrase("the schedulers are down for {seconds:g} seconds and one restarts",
               lambda seconds: restart_schedulers(seconds)),
    )),
    Declaration("List Schedules", list_schedules, (
        Phrase("all schedules are listed", list_schedules),
    )),
    Declaration("Read History", read_history, (
        Phrase('the history of schedule "{alias}" is read', read_history),
    )),
)
