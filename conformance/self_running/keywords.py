"""Robot Framework keywords for a self-running runtime (robot/self_running.robot,
SR-001..SR-009).

`Open Self-Running Runtime` opens the backend's runtime with `open_self_running`; after
that, keywords only submit, end bodies, send heartbeats and let time pass, and the
`SelfRunningHarness` reads at every read point of an open window on the way: a runtime that
acts early, late or never fails the test with a `Divergence` naming the requirement.

Usage::

    *** Settings ***
    Resource    lifecycle.resource
    Library     jobconform.conformance.self_running.keywords.SelfRunningLibrary

The backend and profile come from ``${BACKEND}`` and ``${PROFILE}`` as for the lifecycle
library, whose listener also skips tests tagged with requirements the backend does not
claim or the profile does not have.
"""

from __future__ import annotations

from typing import Any

from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.loading import load_backend
from jobconform.conformance.area_keywords import DEFAULT_BACKEND, close_at_end_of_test
from jobconform.conformance.self_running.harness import REMOVED, SelfRunningHarness
from jobconform.conformance.self_running.schedules import EndPlan
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.spec import load_registry


@library(scope="TEST", auto_keywords=False)
class SelfRunningLibrary:
    """Drive one backend's self-running runtime per test."""

    def __init__(self) -> None:
        self._harness: SelfRunningHarness | None = None
        self.ROBOT_LIBRARY_LISTENER = self

    def end_test(self, data: Any, result: Any) -> None:
        """Close the test's runtime, whatever the outcome."""
        harness, self._harness = self._harness, None
        close_at_end_of_test(harness, result)

    def _variable(self, name: str) -> str | None:
        value = BuiltIn().get_variable_value(name)
        return None if value is None or value == "" else str(value)

    @property
    def harness(self) -> SelfRunningHarness:
        if self._harness is None:
            raise RuntimeError("call Open Self-Running Runtime first")
        return self._harness

    @keyword("Open Self-Running Runtime")
    def open_runtime(self, slots: int = 2, job_timeout: float = 60,
                     lease: float = 6000) -> None:
        """Open the runtime with ``slots`` slots, the job timeout and the lease (seconds);
        its poll interval is the profile's."""
        backend = load_backend(self._variable("${BACKEND}") or DEFAULT_BACKEND)
        registry = load_registry()
        profile = registry.profile(self._variable("${PROFILE}") or backend.profile)
        self._harness = SelfRunningHarness(backend, profile, registry,
                                           max_concurrent=int(slots),
                                           job_timeout_seconds=float(job_timeout),
                                           lease_seconds=float(lease))

    @keyword("Submit To Self-Running Runtime")
    def submit(self, alias: str, retries: int = 0, delay_ms: float = 1000) -> None:
        """Submit job ``alias``; with ``retries``, failures are retried ``delay_ms`` apart."""
        policy = None
        if int(retries):
            policy = RetryPolicy(max_retries=int(retries), retry_delay_ms=float(delay_ms),
                                 backoff_multiplier=1,
                                 max_retry_delay_ms=max(float(delay_ms), 60_000.0))
        self.harness.submit(alias, policy)

    @keyword("Schedule One-Shot Job On Self-Running Scheduler")
    def schedule_once(self, alias: str, seconds: float, runs: str = "",
                      ends: str = "succeeded") -> None:
        """A one-shot job ``seconds`` from now on the backend's scheduler (SR-006); with
        ``runs``, its execution ends ``runs`` seconds after its dispatch as ``ends``, which
        the scheduler must learn by itself (SR-009)."""
        self.harness.schedule_once(alias, float(seconds), _plan(runs, ends))

    @keyword("Schedule Cron On Self-Running Scheduler")
    def schedule_cron(self, alias: str, expression: str, timezone: str = "UTC",
                      runs: str = "", ends: str = "succeeded") -> None:
        """A cron schedule on the backend's scheduler; each fire must come by itself, and
        with ``runs`` each execution's end must be learned by itself (SR-009)."""
        self.harness.schedule_cron(alias, expression, timezone, _plan(runs, ends))

    @keyword("Self-Running Schedule Should Have Learned Ends")
    def should_have_learned(self, alias: str, count: int) -> None:
        """The scheduler learned by itself how ``count`` executions ended, each within one
        poll interval after its end, and its history shows each as it ended."""
        self.harness.read()
        learned = self.harness.schedules.check_ends(alias)
        if learned != int(count):
            raise AssertionError(f"schedule {alias!r}: expected {count} ends learned, the"
                                 f" runtime learned {learned}")

    @keyword("Self-Running Schedule Should Have Fired")
    def should_have_fired(self, alias: str, count: int) -> None:
        """Fired ``count`` times by itself, each in its window, and shown in its history."""
        self.harness.read()
        fired = self.harness.schedules.fired(alias)
        shown = self.harness.schedules.check_history(alias)
        if fired != int(count) or shown != int(count):
            raise AssertionError(f"schedule {alias!r}: expected {count} fires, the runtime"
                                 f" made {fired} and shows {shown}")

    @keyword("Trip Self-Running Breaker With Lost Drain")
    def trip_with_lost_drain(self, target: str, works: str) -> None:
        """Queue ``works`` (comma-separated) for ``target`` and trip its breaker with the
        drain lost: the runtime's own backstop must fail them at its next sweep (SR-007)."""
        self.harness.trip_breaker_with_lost_drain(target, _names(works))

    @keyword("Self-Running Breaker Should Queue")
    def breaker_should_queue(self, target: str, works: str = "") -> None:
        breaker = self.harness.backstop.breaker
        actual = tuple(breaker.queued(target)) if breaker is not None else None
        if actual != _names(works):
            raise AssertionError(f"the work queued for {target!r} is {actual}, not"
                                 f" {_names(works)}")

    @keyword("Self-Running Breaker Should Have Failed")
    def breaker_should_have_failed(self, target: str, works: str = "") -> None:
        breaker = self.harness.backstop.breaker
        actual = tuple(breaker.failed_work(target)) if breaker is not None else None
        if actual != _names(works):
            raise AssertionError(f"the failed work of {target!r} is {actual}, not"
                                 f" {_names(works)}")

    @keyword("Remind On Self-Running Runtime")
    def remind(self, alias: str, seconds: float, failures: int = 0) -> None:
        """A reminder ``seconds`` from now on the backend's reminders, whose first
        ``failures`` dispatches fail cleanly: each dispatch must come by itself at its due
        time (SR-008)."""
        self.harness.remind(alias, float(seconds), int(failures))

    @keyword("Self-Running Reminder Should Have Been Dispatched")
    def should_have_dispatched(self, alias: str, count: int) -> None:
        """Dispatched ``count`` times by itself, each at its due time."""
        self.harness.read()
        made = self.harness.reminders.delivered(alias)
        if made != int(count):
            raise AssertionError(f"reminder {alias!r}: expected {count} dispatches, the"
                                 f" runtime made {made}")

    @keyword("Self-Running Reminder Status Should Be")
    def reminder_status_should_be(self, alias: str, status: str) -> None:
        """The runtime's record of the reminder, read after its dispatches were matched."""
        self.harness.read()
        actual = self.harness.reminders.check(alias)
        if actual != status:
            raise AssertionError(f"reminder {alias!r}'s status: expected {status!r}, got"
                                 f" {actual!r}")

    @keyword("Let Time Pass On Self-Running Runtime")
    def pass_time(self, seconds: float) -> None:
        """Let ``seconds`` pass, reading at every window's read points on the way."""
        self.harness.pass_time(float(seconds))

    @keyword("Let The Reaper's Time To Live Pass On Self-Running Runtime")
    def ttl_passes(self) -> None:
        """Let the reaper's TTL (the profile's) pass: an ended job is due for removal."""
        self.harness.pass_time(self.harness.reaper_ttl_seconds)

    @keyword("Let Self-Running Windows Pass")
    def windows_pass(self) -> None:
        """Let time pass until every window open now has closed."""
        self.harness.pass_through_windows()

    @keyword("Self-Running Job Returns")
    def job_returns(self, alias: str) -> None:
        self.harness.finish(alias, cmd.Succeed("done"))

    @keyword("Self-Running Job Raises")
    def job_raises(self, alias: str, error_type: str = "IOError") -> None:
        self.harness.finish(alias, cmd.Raise(error_type, "boom"))

    @keyword("Self-Running Job Sends A Heartbeat")
    def heartbeat(self, alias: str) -> None:
        self.harness.heartbeat(alias)

    @keyword("Self-Running Job Status Should Be")
    def status_should_be(self, alias: str, status: str) -> None:
        self.harness.read()
        actual = self.harness.view_of(alias).status
        if actual != status:
            raise AssertionError(f"job {alias!r}'s status: expected {status!r}, got {actual!r}")

    @keyword("Self-Running Job Should Be Removed")
    def removed(self, alias: str) -> None:
        """Removed by the runtime's own reaper, within its window (SR-005)."""
        self.harness.read()
        actual = self.harness.status_of(alias)
        if actual != REMOVED:
            raise AssertionError(f"job {alias!r}: expected {REMOVED!r}, got {actual!r}")

    @keyword("Self-Running Job Should Be Re-Delivered")
    def redelivered(self, alias: str, times: int) -> None:
        self.harness.read()
        actual = getattr(self.harness.view_of(alias), "redelivery_count", None)
        if actual != int(times):
            raise AssertionError(f"job {alias!r}'s redelivery_count: expected {times},"
                                 f" got {actual!r}")


def _plan(runs: str, ends: str) -> EndPlan | None:
    return None if str(runs).strip() == "" else EndPlan(float(runs), str(ends))


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())
