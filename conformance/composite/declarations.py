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


def submit_composite_jobs(owner: str, *jobs: str) -> list[cc.SubmitJob]:
    """New work for ``owner``, each job through its breaker and then its admission."""
    return [cc.SubmitJob(owner, job) for job in jobs]


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


DECLARATIONS = (
    Declaration("Add Composite Owners", add_composite_owners, (
        Phrase('composite owners "{owners}" are added',
               lambda owners: add_composite_owners(*alias_list(owners))),
    )),
    # A command whose fields are the keyword's arguments is its own builder.
    Declaration("Start Composite Loop", cc.StartLoop, (
        Phrase('owner "{owner}" starts composite loop "{loop}" of {runs:d} runs', cc.StartLoop),
    )),
    Declaration("Submit Composite Jobs", submit_composite_jobs, (
        Phrase('owner "{owner}" submits composite jobs "{jobs}"',
               lambda owner, jobs: submit_composite_jobs(owner, *alias_list(jobs))),
    ), kept_as=lambda command: command.job),
    Declaration("Set Composite Reminder", cc.CreateReminder, (
        Phrase('owner "{owner}" sets composite reminder "{reminder}" due in {seconds:g}'
               " seconds", lambda owner, reminder, seconds: cc.CreateReminder(
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
    Declaration("Run Composite Maintenance", cc.Maintain, (
        Phrase("the composite maintenance runs", cc.Maintain),
    )),
    Declaration("Restart Composite Admission", cc.Restart, (
        Phrase("the composite admission restarts", cc.Restart),
    )),
    Declaration("Composite Clock Moves", cc.PassTime, (
        Phrase("the composite clock moves {seconds:g} seconds", cc.PassTime),
    )),
)
