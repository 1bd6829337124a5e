"""Behave steps for a self-running runtime (features/self_running.feature, SR-001..SR-009).

The runtime is opened with `open_self_running` on first use, with the slots, job timeout
and lease the scenario's Given-steps set. After that, steps only submit, decide bodies,
send heartbeats and let time pass: `SelfRunningHarness` stops at every read point of an
open window on the way and fails the scenario with a `Divergence` naming the requirement
whose window was broken. Steps speak of "the self-running runtime" so that they cannot
clash with the lifecycle steps. Register them from features/steps/ (every area's library
is imported there):

    from jobconform.conformance.self_running.steps import *  # noqa: F403
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from jobconform.conformance.scenario import RunConfig, state_of
from jobconform.conformance.self_running.harness import REMOVED, SelfRunningHarness
from jobconform.conformance.self_running.schedules import EndPlan
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy

__all__: list[str] = []

AREA = "self-running"


@dataclass
class SelfRunningScenario:
    """One scenario's settings, then its harness once a command needs it."""

    config: RunConfig
    options: dict[str, float] = field(default_factory=dict)
    opened: SelfRunningHarness | None = None

    @property
    def harness(self) -> SelfRunningHarness:
        if self.opened is None:
            self.opened = SelfRunningHarness(
                self.config.backend, self.config.profile, self.config.registry,
                max_concurrent=int(self.options.get("slots", 2)),
                job_timeout_seconds=self.options.get("job_timeout", 60.0),
                lease_seconds=self.options.get("lease", 6000.0))
        return self.opened

    def close(self) -> None:
        if self.opened is not None:
            self.opened.close()


def _scenario(context: Any) -> SelfRunningScenario:
    scenario: SelfRunningScenario = state_of(context).area_state(AREA, SelfRunningScenario)
    return scenario


def _set(context: Any, name: str, value: float) -> None:
    scenario = _scenario(context)
    if scenario.opened is not None:
        raise ValueError("set the self-running runtime up before its first command")
    scenario.options[name] = value


def _check(what: str, expected: object, actual: object) -> None:
    if expected != actual:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


@setup_step("a self-running runtime with {slots:d} slots")
def step_slots(context: Any, slots: int) -> None:
    _set(context, "slots", slots)


@setup_step("a self-running runtime with a job timeout of {seconds:g} seconds")
def step_job_timeout(context: Any, seconds: float) -> None:
    _set(context, "job_timeout", seconds)


@setup_step("a self-running runtime with a lease of {seconds:g} seconds")
def step_lease(context: Any, seconds: float) -> None:
    """The lease; the job timeout goes far beyond it, so a silent job is re-delivered."""
    _set(context, "lease", seconds)
    _set(context, "job_timeout", seconds * 100)


@action_step('the self-running runtime takes job "{alias}"')
def step_submit(context: Any, alias: str) -> None:
    _scenario(context).harness.submit(alias)


@action_step('the self-running runtime takes job "{alias}" with {retries:d} retries'
             " {delay_ms:g} ms apart")
def step_submit_retried(context: Any, alias: str, retries: int, delay_ms: float) -> None:
    policy = RetryPolicy(max_retries=retries, retry_delay_ms=delay_ms, backoff_multiplier=1,
                         max_retry_delay_ms=max(delay_ms, 60_000.0))
    _scenario(context).harness.submit(alias, policy)


@action_step("{seconds:g} seconds pass on the self-running runtime")
def step_pass(context: Any, seconds: float) -> None:
    _scenario(context).harness.pass_time(seconds)


@action_step("the reaper's time to live passes on the self-running runtime")
def step_ttl_passes(context: Any) -> None:
    """As long as the reaper's TTL (the profile's): an ended job is due for removal now."""
    harness = _scenario(context).harness
    harness.pass_time(harness.reaper_ttl_seconds)


@action_step("the self-running runtime's windows pass")
def step_windows_pass(context: Any) -> None:
    _scenario(context).harness.pass_through_windows()


@action_step('job "{alias}" on the self-running runtime returns')
def step_returns(context: Any, alias: str) -> None:
    _scenario(context).harness.finish(alias, cmd.Succeed("done"))


@action_step('job "{alias}" on the self-running runtime raises {error_type}')
def step_raises(context: Any, alias: str, error_type: str) -> None:
    _scenario(context).harness.finish(alias, cmd.Raise(error_type, "boom"))


@action_step('job "{alias}" on the self-running runtime sends a heartbeat')
def step_heartbeat(context: Any, alias: str) -> None:
    _scenario(context).harness.heartbeat(alias)


@action_step('the self-running scheduler has a one-shot job "{alias}" in {seconds:g} seconds')
def step_once(context: Any, alias: str, seconds: float) -> None:
    """The backend's scheduler, opened on the same clock; it must fire by itself (SR-006)."""
    _scenario(context).harness.schedule_once(alias, seconds)


@action_step('the self-running scheduler has a cron schedule "{alias}" at "{expression}"')
def step_cron(context: Any, alias: str, expression: str) -> None:
    _scenario(context).harness.schedule_cron(alias, expression)


@action_step('the self-running scheduler has a one-shot job "{alias}" in {seconds:g} seconds'
             " that runs {run:g} seconds and ends as {outcome}")
def step_once_ending(context: Any, alias: str, seconds: float, run: float, outcome: str) -> None:
    """Its execution ends `run` seconds after its dispatch, as `outcome` (succeeded, failed
    or cancelled): the scheduler must learn that by itself (SR-009)."""
    _scenario(context).harness.schedule_once(alias, seconds, EndPlan(run, outcome))


@action_step('the self-running scheduler has a cron schedule "{alias}" at "{expression}" whose'
             " executions run {run:g} seconds and end as {outcome}")
def step_cron_ending(context: Any, alias: str, expression: str, run: float,
                     outcome: str) -> None:
    _scenario(context).harness.schedule_cron(alias, expression, ends=EndPlan(run, outcome))


@check_step('the self-running scheduler has learned how {count:d} execution(s) of schedule'
            ' "{alias}" ended')
def check_learned(context: Any, alias: str, count: int) -> None:
    """Learned by itself, each in its window; its history shows each end as it was."""
    harness = _scenario(context).harness
    harness.read()
    _check(f"schedule {alias!r}'s ends learned", count, harness.schedules.check_ends(alias))


@check_step('the self-running scheduler has fired schedule "{alias}" {count:d} time(s)')
def check_fired(context: Any, alias: str, count: int) -> None:
    """Fired by itself, each fire in its window; its history shows the same executions."""
    harness = _scenario(context).harness
    harness.read()
    _check(f"schedule {alias!r}'s fires", count, harness.schedules.fired(alias))
    _check(f"schedule {alias!r}'s executions", count, harness.schedules.check_history(alias))


@action_step('the self-running breaker trips target "{target}" with work "{works}" queued and'
             ' its drain lost')
def trip_with_lost_drain(context: Any, target: str, works: str) -> None:
    """The runtime's own backstop must fail the work at its next sweep, not before (SR-007)."""
    _scenario(context).harness.trip_breaker_with_lost_drain(target, _names(works))


@check_step('the self-running breaker queues work "{works}" for target "{target}"')
def breaker_queues(context: Any, target: str, works: str) -> None:
    breaker = _scenario(context).harness.backstop.breaker
    actual = tuple(breaker.queued(target)) if breaker is not None else None
    _check(f"the work queued for {target!r}", _names(works), actual)


@check_step('the self-running breaker queues no work for target "{target}"')
def breaker_queues_nothing(context: Any, target: str) -> None:
    breaker_queues(context, target, "")


@check_step('the self-running breaker has failed work "{works}" of target "{target}"')
def breaker_failed(context: Any, target: str, works: str) -> None:
    breaker = _scenario(context).harness.backstop.breaker
    actual = tuple(breaker.failed_work(target)) if breaker is not None else None
    _check(f"the failed work of {target!r}", _names(works), actual)


@action_step('the self-running runtime has a reminder "{alias}" in {seconds:g} seconds')
def step_remind(context: Any, alias: str, seconds: float) -> None:
    """The backend's reminders, opened on the same clock; each dispatch must come by
    itself at the reminder's due time (SR-008). Every dispatch lands."""
    _scenario(context).harness.remind(alias, seconds)


@action_step('the self-running runtime has a reminder "{alias}" in {seconds:g} seconds whose'
             " first {failures:d} dispatch(es) fail")
def step_remind_failing(context: Any, alias: str, seconds: float, failures: int) -> None:
    """Its first dispatches fail cleanly: each is due again retry_delay_seconds later."""
    _scenario(context).harness.remind(alias, seconds, failures)


@check_step('the self-running runtime has dispatched reminder "{alias}" {count:d} time(s)')
def check_dispatched(context: Any, alias: str, count: int) -> None:
    """Dispatched by itself, each dispatch at its due time."""
    harness = _scenario(context).harness
    harness.read()
    _check(f"reminder {alias!r}'s dispatches", count, harness.reminders.delivered(alias))


@check_step('the self-running runtime shows reminder "{alias}" {status}')
def check_reminder(context: Any, alias: str, status: str) -> None:
    """The runtime's record of the reminder, read after its dispatches were matched."""
    harness = _scenario(context).harness
    harness.read()
    _check(f"reminder {alias!r}'s status", status, harness.reminders.check(alias))


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


@check_step('the self-running runtime shows job "{alias}" {status}')
def check_status(context: Any, alias: str, status: str) -> None:
    harness = _scenario(context).harness
    harness.read()
    _check(f"job {alias!r}'s status", status, harness.view_of(alias).status)


@check_step('the self-running runtime has removed job "{alias}"')
def check_removed(context: Any, alias: str) -> None:
    """Removed by the runtime's own reaper, within its window (SR-005)."""
    harness = _scenario(context).harness
    harness.read()
    _check(f"job {alias!r}", REMOVED, harness.status_of(alias))


@check_step('the self-running runtime has re-delivered job "{alias}" {count:d} time(s)')
def check_redelivered(context: Any, alias: str, count: int) -> None:
    harness = _scenario(context).harness
    harness.read()
    _check(f"job {alias!r}'s redelivery_count", count,
           getattr(harness.view_of(alias), "redelivery_count", None))
