"""What the composite area's suites say (CX-001..CX-006), declared once
(conformance/vocabulary.py): the commands, checks and settings from which its Behave steps
and Robot keywords are derived, in the feature file's and the Robot suite's own words.

Every step says "composite" (or names an owner's loop, reminder or job in the composite)
so that none clashes with another area's. A step names several owners, jobs or works as
one comma-separated argument, a keyword as one argument each. A submission's answer is
kept under its job's name, for the check that it was refused; the other checks read the
BACKEND's snapshot.
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.composite.harness import CompositeHarness, composite_config
from jobconform.conformance.vocabulary import (
    AfterCommands,
    Check,
    Declaration,
    Phrase,
    Reading,
    Setting,
    Vocabulary,
    check_worded,
    command_worded,
)
from jobconform.reference.composite import commands as cc
from jobconform.spec import Profile, Registry

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
    command_worded("Start Composite Loop", cc.StartLoop,
                   'owner "{owner}" starts composite loop "{loop}" of {runs:d} runs'),
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
    command_worded("Run Composite Maintenance", cc.Maintain, "the composite maintenance runs"),
    command_worded("Restart Composite Admission", cc.Restart, "the composite admission restarts"),
    command_worded("Composite Clock Moves", cc.PassTime,
                   "the composite clock moves {seconds:g} seconds"),
)

# -- checks: what the backend's composite runtime shows -------------------------------------


def _snapshot(through: Any) -> Any:
    return through.harness.runtime.snapshot()


def work_should_be(state: str | None, *works: str) -> Reading:
    """Each of ``works`` is in admission state ``state`` (None: never admitted)."""
    wanted = None if state in (None, "None") else state
    return Reading(f"the admission state of {', '.join(map(repr, works))}", lambda through: (
        tuple(dict((work, shown) for work, _, shown in _snapshot(through).executions)
              .get(work) for work in works)), tuple(wanted for _ in works))


def job_should_be_refused(job: str) -> Reading:
    return Reading(f"the answer to job {job!r}", lambda through: through.answers.get(job),
                   "refused")


def loop_should_be(loop: str, status: str, runs: int) -> Reading:
    return Reading(f"loop {loop!r} (status, runs)", lambda through: {
        name: (shown, done) for name, shown, done in _snapshot(through).loops}.get(loop),
        (status, runs))


def reminder_should_be(reminder: str, status: str) -> Reading:
    return Reading(f"reminder {reminder!r}", lambda through: dict(
        _snapshot(through).reminders).get(reminder), status)


def breaker_should_be(owner: str, state: str) -> Reading:
    return Reading(f"the breaker of {owner!r}", lambda through: {
        name: shown for name, shown, _ in _snapshot(through).breakers}.get(owner), state)


def admission_paused() -> Reading:
    """The governor's pause holds: the backend reports when it ends."""
    return Reading("the governor's pause", lambda through: _snapshot(through).paused_until,
                   "an end", lambda actual, wanted: actual is not None)


CHECKS = (
    Check("Composite Work Should Be", work_should_be, (
        Phrase('composite work "{works}" is {state:w}',
               lambda works, state: work_should_be(state, *alias_list(works))),
        Phrase('composite work "{work}" was never admitted',
               lambda work: work_should_be(None, work)),
    )),
    check_worded("Composite Job Should Be Refused", job_should_be_refused,
                 'composite job "{job}" is refused'),
    check_worded("Composite Loop Should Be", loop_should_be,
                 'composite loop "{loop}" is {status:w} after {runs:d} runs'),
    check_worded("Composite Reminder Should Be", reminder_should_be,
                 'composite reminder "{reminder}" is {status:w}'),
    check_worded("Composite Breaker Should Be", breaker_should_be,
                 'the composite breaker of owner "{owner}" is {state:w}'),
    check_worded("Composite Admission Should Be Paused", admission_paused,
                 "the composite admission is paused"),
)

# -- settings: the parameters a feature fixes before its first command ----------------------

SETTINGS = (
    Setting("a composite admission of {cap:d} slots per owner",
            lambda cap: dict(parallel_cap=cap)),
    Setting("a composite breaker opening after {threshold:d} auth failures for {cooldown:g} s",
            lambda threshold, cooldown: dict(failure_threshold=threshold,
                                             cooldown_seconds=cooldown)),
    Setting("a composite governor pausing {ttl:g} s when {threshold:d} owners fail alike",
            lambda ttl, threshold: dict(pause_ttl_seconds=ttl, pause_threshold=threshold)),
    Setting("a composite backlog expiring work older than {seconds:g} s",
            lambda seconds: dict(backlog_max_age_seconds=seconds)),
)


def _number(value: object) -> object:
    """A Robot argument as the number it spells (parameters are numbers but for a few
    names like counted_classes, which stay text); a Behave step's value as it is."""
    if not isinstance(value, str):
        return value
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def open_composite(backend: Any, profile: Profile, registry: Registry,
                   overrides: dict[str, Any]) -> CompositeHarness:
    """The composite harness, any composed area's parameters overridden by name."""
    return CompositeHarness(backend, profile, registry, composite_config(profile, **{
        name: _number(value) for name, value in overrides.items()}))


VOCABULARY = Vocabulary(area="composite", noun="composite", start="Start Composite",
                        commands=DECLARATIONS, checks=CHECKS, settings=SETTINGS,
                        open=open_composite, start_sends=add_composite_owners)
