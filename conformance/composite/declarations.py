"""The composite area's commands (CX-001..CX-006), declared once (conformance/vocabulary.py).

The Behave steps (conformance/composite/steps.py) and the Robot keywords
(conformance/composite/keywords.py) are derived from this list; the wordings are the
feature file's and the Robot suite's own. A step names several owners, jobs or works as
one comma-separated argument, a keyword as one argument each. A submission's answer is
kept under its job's name, for the check that it was refused.
"""

from __future__ import annotations

from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.vocabulary import AfterCommands, Declaration, Phrase
from jobconform.reference.composite import commands as cc

# -- builders: each is a Robot keyword's signature and documentation ---------------------


def add_composite_owners(*owners: str) -> list[cc.AddOwner]:
    """New owners with the admission defaults; each one's breaker is engaged."""
    return [cc.AddOwner(owner) for owner in owners]


def start_composite_loop(owner: str, loop: str, runs: int) -> cc.StartLoop:
    """A fixed-mode loop of ``runs`` runs for ``owner``; its run 1 asks for a slot."""
    return cc.StartLoop(owner, loop, runs)


def submit_composite_jobs(owner: str, *jobs: str) -> list[cc.SubmitJob]:
    """New work for ``owner``, each job through its breaker and then its admission."""
    return [cc.SubmitJob(owner, job) for job in jobs]


def set_composite_reminder(owner: str, reminder: str,
                           delay_seconds: float) -> cc.CreateReminder:
    """A reminder of ``owner`` due in ``delay_seconds``; its fire asks for a slot."""
    return cc.CreateReminder(owner, reminder, delay_seconds)


def end_composite_work(*works: str, failed: bool = False) -> list[cc.FinishWork]:
    """Running work ends; ``failed`` ends it with an auth failure."""
    return [cc.FinishWork(work, failed) for work in works]


def _failure_result(owner: str, failure_class: str) -> AfterCommands:
    return AfterCommands(lambda count: cc.RecordFailure(
        owner, failure_class, f"{owner}-{failure_class}-{count}"))


def report_composite_failures(failure_class: str, *owners: str) -> list[AfterCommands]:
    """A failure result of ``failure_class`` for each owner reaches the governor; each
    result is named after the commands run before it, so that none repeats another."""
    return [_failure_result(owner, failure_class) for owner in owners]


def run_composite_maintenance() -> cc.Maintain:
    """One maintenance pass of the admission: stale backlog entries expire."""
    return cc.Maintain()


def restart_composite_admission() -> cc.Restart:
    """The admission's process restarts: running work becomes orphans (CX-005)."""
    return cc.Restart()


def composite_clock_moves(seconds: float) -> cc.PassTime:
    """Let ``seconds`` of virtual time pass for the composite runtime."""
    return cc.PassTime(seconds)


DECLARATIONS = (
    Declaration("Add Composite Owners", add_composite_owners, (
        Phrase('composite owners "{owners}" are added',
               lambda owners: add_composite_owners(*alias_list(owners))),
    )),
    Declaration("Start Composite Loop", start_composite_loop, (
        Phrase('owner "{owner}" starts composite loop "{loop}" of {runs:d} runs',
               start_composite_loop),
    )),
    Declaration("Submit Composite Jobs", submit_composite_jobs, (
        Phrase('owner "{owner}" submits composite jobs "{jobs}"',
               lambda owner, jobs: submit_composite_jobs(owner, *alias_list(jobs))),
    ), kept_as=lambda command: command.job),
    Declaration("Set Composite Reminder", set_composite_reminder, (
        Phrase('owner "{owner}" sets composite reminder "{reminder}" due in {seconds:g}'
               " seconds", lambda owner, reminder, seconds: set_composite_reminder(
                   owner, reminder, seconds)),
    )),
    Declaration("End Composite Work", end_composite_work, (
        Phrase('composite work "{works}" ends',
               lambda works: end_composite_work(*alias_list(works))),
        Phrase('composite work "{works}" ends with an auth failure',
               lambda works: end_composite_work(*alias_list(works), failed=True)),
    )),
    Declaration("Report Composite Failures", report_composite_failures, (
        Phrase('composite owners "{owners}" report {failure_class:w} failure results',
               lambda owners, failure_class: report_composite_failures(
                   failure_class, *alias_list(owners))),
    )),
    Declaration("Run Composite Maintenance", run_composite_maintenance, (
        Phrase("the composite maintenance runs", run_composite_maintenance),
    )),
    Declaration("Restart Composite Admission", restart_composite_admission, (
        Phrase("the composite admission restarts", restart_composite_admission),
    )),
    Declaration("Composite Clock Moves", composite_clock_moves, (
        Phrase("the composite clock moves {seconds:g} seconds", composite_clock_moves),
    )),
)
