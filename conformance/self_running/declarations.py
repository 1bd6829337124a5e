"""What the self-running area's suites say (SR-001..SR-009), declared once
(conformance/vocabulary.py): the commands, checks and settings from which its Behave steps
and Robot keywords are derived, in the feature file's and the Robot suite's own words.

The runtime acts by itself, so a command here sends the backend nothing the oracle must
answer: it is what the test tells `SelfRunningHarness` to do (submit, end a body, send a
heartbeat, let time pass), one of its methods, and the harness checks every window on the
way. Commands are therefore built as calls on the harness (`Act`), which its `run` makes;
the harness records each as the job command it stands for. Checks read the BACKEND's own
records, after the harness has read at the current instant. Every step says
"self-running" so that none clashes with the lifecycle steps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jobconform.backends.protocol import Backend
from jobconform.conformance import vocabulary
from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.self_running.harness import REMOVED, Act, SelfRunningHarness
from jobconform.conformance.self_running.schedules import EndPlan
from jobconform.conformance.vocabulary import (
    Declaration,
    Phrase,
    Reading,
    check_worded,
    command_worded,
)
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.spec import Profile, Registry

# -- builders: each is a Robot keyword's signature and documentation ---------------------


def _retried(retries: int, delay_ms: float) -> RetryPolicy:
    return RetryPolicy(max_retries=retries, retry_delay_ms=delay_ms, backoff_multiplier=1,
                       max_retry_delay_ms=max(delay_ms, 60_000.0))


def submit(alias: str, retries: int = 0, delay_ms: float = 1000) -> Act:
    """Submit job ``alias``; with ``retries``, failures are retried ``delay_ms`` apart."""
    policy = _retried(retries, delay_ms) if retries else None
    return lambda harness: harness.submit(alias, policy)


def _plan(runs: str, ends: str) -> EndPlan | None:
    return None if runs.strip() == "" else EndPlan(float(runs), ends)


def schedule_once(alias: str, seconds: float, runs: str = "", ends: str = "succeeded") -> Act:
    """A one-shot job ``seconds`` from now on the backend's scheduler (SR-006); with
    ``runs``, its execution ends ``runs`` seconds after its dispatch as ``ends``, which
    the scheduler must learn by itself (SR-009)."""
    return lambda harness: harness.schedule_once(alias, seconds, _plan(runs, ends))


def schedule_cron(alias: str, expression: str, timezone: str = "UTC", runs: str = "",
                  ends: str = "succeeded") -> Act:
    """A cron schedule on the backend's scheduler; each fire must come by itself, and
    with ``runs`` each execution's end must be learned by itself (SR-009)."""
    return lambda harness: harness.schedule_cron(alias, expression, timezone,
                                                 _plan(runs, ends))


def trip_with_lost_drain(target: str, works: str) -> Act:
    """Queue ``works`` (comma-separated) for ``target`` and trip its breaker with the
    drain lost: the runtime's own backstop must fail them at its next sweep (SR-007)."""
    return lambda harness: harness.trip_breaker_with_lost_drain(target,
                                                                tuple(alias_list(works)))


def remind(alias: str, seconds: float, failures: int = 0) -> Act:
    """A reminder ``seconds`` from now on the backend's reminders, whose first
    ``failures`` dispatches fail cleanly: each dispatch must come by itself at its due
    time (SR-008)."""
    return lambda harness: harness.remind(alias, seconds, failures)


def pass_time(seconds: float) -> Act:
    """Let ``seconds`` pass, reading at every window's read points on the way."""
    return lambda harness: harness.pass_time(seconds)


def ttl_passes() -> Act:
    """Let the reaper's TTL (the profile's) pass: an ended job is due for removal."""
    return lambda harness: harness.pass_time(harness.reaper_ttl_seconds)


def windows_pass() -> Act:
    """Let time pass until every window open now has closed."""
    return SelfRunningHarness.pass_through_windows


def job_returns(alias: str) -> Act:
    return lambda harness: harness.finish(alias, cmd.Succeed("done"))


def job_raises(alias: str, error_type: str = "IOError") -> Act:
    return lambda harness: harness.finish(alias, cmd.Raise(error_type, "boom"))


def heartbeat(alias: str) -> Act:
    return lambda harness: harness.heartbeat(alias)


RUNTIME, SCHEDULER = "the self-running runtime", "the self-running scheduler"
JOB = 'job "{alias}" on the self-running runtime'
DECLARATIONS = (
    Declaration("Submit To Self-Running Runtime", submit, (
        Phrase(RUNTIME + ' takes job "{alias}"', submit),
        Phrase(RUNTIME + ' takes job "{alias}" with {retries:d} retries {delay_ms:g} ms apart',
               lambda alias, retries, delay_ms: lambda harness: harness.submit(
                   alias, _retried(retries, delay_ms))),
    )),
    command_worded("Let Time Pass On Self-Running Runtime", pass_time,
                   "{seconds:g} seconds pass on the self-running runtime"),
    command_worded("Let The Reaper's Time To Live Pass On Self-Running Runtime", ttl_passes,
                   "the reaper's time to live passes on the self-running runtime"),
    command_worded("Let Self-Running Windows Pass", windows_pass,
                   "the self-running runtime's windows pass"),
    command_worded("Self-Running Job Returns", job_returns, JOB + " returns"),
    command_worded("Self-Running Job Raises", job_raises, JOB + " raises {error_type}"),
    command_worded("Self-Running Job Sends A Heartbeat", heartbeat, JOB + " sends a heartbeat"),
    Declaration("Schedule One-Shot Job On Self-Running Scheduler", schedule_once, (
        Phrase(SCHEDULER + ' has a one-shot job "{alias}" in {seconds:g} seconds',
               schedule_once),
        Phrase(SCHEDULER + ' has a one-shot job "{alias}" in {seconds:g} seconds that runs'
               " {run:g} seconds and ends as {outcome}",
               lambda alias, seconds, run, outcome: schedule_once(alias, seconds, str(run),
                                                                  outcome)),
    )),
    Declaration("Schedule Cron On Self-Running Scheduler", schedule_cron, (
        Phrase(SCHEDULER + ' has a cron schedule "{alias}" at "{expression}"', schedule_cron),
        Phrase(SCHEDULER + ' has a cron schedule "{alias}" at "{expression}" whose executions'
               " run {run:g} seconds and end as {outcome}",
               lambda alias, expression, run, outcome: schedule_cron(
                   alias, expression, runs=str(run), ends=outcome)),
    )),
    command_worded("Trip Self-Running Breaker With Lost Drain", trip_with_lost_drain,
                   'the self-running breaker trips target "{target}" with work "{works}"'
                   " queued and its drain lost"),
    command_worded("Remind On Self-Running Runtime", remind,
                   RUNTIME + ' has a reminder "{alias}" in {seconds:g} seconds',
                   RUNTIME + ' has a reminder "{alias}" in {seconds:g} seconds whose first'
                   " {failures:d} dispatch(es) fail"),
)

# -- checks: what the backend's runtime, scheduler, breaker and reminders show -------------


def _shown(what: str, wanted: object, read: Callable[[SelfRunningHarness], object],
           reads_first: bool = True) -> Reading:
    """`read` on the test's harness; first, where `reads_first`, the harness reads every
    window at the current instant, so that what it shows has passed its checks."""
    def shown(through: Any) -> object:
        harness: SelfRunningHarness = through.harness
        if reads_first:
            harness.read()
        return read(harness)
    return Reading(what, shown, wanted)


def status_should_be(alias: str, status: str) -> Reading:
    return _shown(f"job {alias!r}'s status", status,
                  lambda harness: harness.view_of(alias).status)


def removed(alias: str) -> Reading:
    """Removed by the runtime's own reaper, within its window (SR-005)."""
    return _shown(f"job {alias!r}", REMOVED, lambda harness: harness.status_of(alias))


def redelivered(alias: str, times: int) -> Reading:
    return _shown(f"job {alias!r}'s redelivery_count", times,
                  lambda harness: getattr(harness.view_of(alias), "redelivery_count", None))


def should_have_learned(alias: str, count: int) -> Reading:
    """The scheduler learned by itself how ``count`` executions ended, each within one
    poll interval after its end, and its history shows each as it ended."""
    return _shown(f"schedule {alias!r}'s ends learned", count,
                  lambda harness: harness.schedules.check_ends(alias))


def should_have_fired(alias: str, count: int) -> Reading:
    """Fired ``count`` times by itself, each in its window, and shown in its history."""
    return _shown(f"schedule {alias!r}'s (fires, executions)", (count, count),
                  lambda harness: (harness.schedules.fired(alias),
                                   harness.schedules.check_history(alias)))


def _works(what: str, target: str, works: str,
           read: Callable[[Any, str], Any]) -> Reading:
    """The breaker's `read` of `target`'s work (None: no breaker opened), not read
    through the harness first: the breaker is read as it stands."""
    def shown(harness: SelfRunningHarness) -> object:
        breaker = harness.backstop.breaker
        return tuple(read(breaker, target)) if breaker is not None else None
    return _shown(f"{what} {target!r}", tuple(alias_list(works)), shown, reads_first=False)


def breaker_should_queue(target: str, works: str = "") -> Reading:
    return _works("the work queued for", target, works,
                  lambda breaker, target: breaker.queued(target))


def breaker_should_have_failed(target: str, works: str = "") -> Reading:
    return _works("the failed work of", target, works,
                  lambda breaker, target: breaker.failed_work(target))


def should_have_dispatched(alias: str, count: int) -> Reading:
    """Dispatched ``count`` times by itself, each at its due time."""
    return _shown(f"reminder {alias!r}'s dispatches", count,
                  lambda harness: harness.reminders.delivered(alias))


def reminder_status_should_be(alias: str, status: str) -> Reading:
    """The runtime's record of the reminder, read after its dispatches were matched."""
    return _shown(f"reminder {alias!r}'s status", status,
                  lambda harness: harness.reminders.check(alias))


CHECKS = (
    check_worded("Self-Running Job Status Should Be", status_should_be,
                 RUNTIME + ' shows job "{alias}" {status}'),
    check_worded("Self-Running Job Should Be Removed", removed,
                 RUNTIME + ' has removed job "{alias}"'),
    check_worded("Self-Running Job Should Be Re-Delivered", redelivered,
                 RUNTIME + ' has re-delivered job "{alias}" {times:d} time(s)'),
    check_worded("Self-Running Schedule Should Have Learned Ends", should_have_learned,
                 SCHEDULER + ' has learned how {count:d} execution(s) of schedule "{alias}"'
                 " ended"),
    check_worded("Self-Running Schedule Should Have Fired", should_have_fired,
                 SCHEDULER + ' has fired schedule "{alias}" {count:d} time(s)'),
    check_worded("Self-Running Breaker Should Queue", breaker_should_queue,
                 'the self-running breaker queues work "{works}" for target "{target}"',
                 'the self-running breaker queues no work for target "{target}"'),
    check_worded("Self-Running Breaker Should Have Failed", breaker_should_have_failed,
                 'the self-running breaker has failed work "{works}" of target "{target}"'),
    check_worded("Self-Running Reminder Should Have Been Dispatched", should_have_dispatched,
                 RUNTIME + ' has dispatched reminder "{alias}" {count:d} time(s)'),
    check_worded("Self-Running Reminder Status Should Be", reminder_status_should_be,
                 RUNTIME + ' shows reminder "{alias}" {status}'),
)

# The runtime's clockwork besides the profile's poll interval, as a scenario's Given-steps
# and the start keyword's ``name=value`` pairs set it: name -> (harness field, type).
PARAMETERS: dict[str, tuple[str, Callable[[Any], object]]] = {
    "slots": ("max_concurrent", int), "job_timeout": ("job_timeout_seconds", float),
    "lease": ("lease_seconds", float)}


def open_runtime(backend: Backend, profile: Profile, registry: Registry,
                 overrides: dict[str, Any]) -> SelfRunningHarness:
    """The test's runtime, its slots, job timeout and lease (seconds) where given."""
    unknown = sorted(set(overrides) - set(PARAMETERS))
    if unknown:
        raise ValueError(f"unknown self-running parameter(s) {unknown}; known:"
                         f" {', '.join(PARAMETERS)}")
    given: dict[str, Any] = {PARAMETERS[name][0]: PARAMETERS[name][1](value)
             for name, value in overrides.items()}
    return SelfRunningHarness(backend, profile, registry, **given)


VOCABULARY = vocabulary.Vocabulary(
    area="self-running", noun="self-running runtime", start="Open Self-Running Runtime",
    commands=DECLARATIONS, checks=CHECKS, settings=(
        vocabulary.Setting("a self-running runtime with {slots:d} slots", dict),
        vocabulary.Setting("a self-running runtime with a job timeout of {seconds:g} seconds",
                lambda seconds: {"job_timeout": seconds}),
        # The job timeout goes far beyond the lease, so a silent job is re-delivered.
        vocabulary.Setting("a self-running runtime with a lease of {seconds:g} seconds",
                lambda seconds: {"lease": seconds, "job_timeout": seconds * 100}),
    ), open=open_runtime)
