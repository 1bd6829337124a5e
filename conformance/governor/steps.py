"""Behave steps of the governor area (features/governor.feature).

Every When-step sends one command through `GovernorHarness.run` (backend and oracle, then
compared); Then-steps check what the BACKEND answered or shows. Steps name the governor's
nouns (re-delivery, failure result, pause) so that they cannot clash with other areas'.
Governor time passes only with "the governor clock moves N seconds".
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from jobconform.conformance import scenario as core
from jobconform.conformance.area_steps import ConfiguredScenario
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.governor.declarations import DECLARATIONS, OFFER, RESEND, WAIT
from jobconform.conformance.governor.harness import GovernorHarness, governor_settings
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference.governor import commands as gc

__all__: list[str] = []


class GovernorScenario(ConfiguredScenario[GovernorHarness]):
    """One scenario's governor harness; its answers keep the last wait asked (WAIT) and the
    answer to the last offer (OFFER)."""

    NOUN = "governor"

    def open(self) -> GovernorHarness:
        settings = governor_settings(self.config.profile, **self.overrides)
        return GovernorHarness(self.config.backend, self.config.profile,
                               self.config.registry, settings)


def _governor(context: Any) -> GovernorScenario:
    return core.state_of(context).area_state("governor", GovernorScenario)


def _check(context: Any, ok: bool, what: str, expected: object, actual: object) -> None:
    core._check(context, ok, what, expected, actual)


@setup_step("a governor allowing {target_limit:d} re-deliveries per target and"
            " {fleet_limit:d} in all per {window:g} s")
def caps(context: Any, target_limit: int, fleet_limit: int, window: float) -> None:
    _governor(context).configure(target_limit=target_limit, fleet_limit=fleet_limit,
                                 target_window_seconds=window, fleet_window_seconds=window)


@setup_step("a governor pausing {ttl:g} s when {threshold:d} targets fail alike within"
            " {window:g} s")
def pause_rule(context: Any, ttl: float, threshold: int, window: float) -> None:
    _governor(context).configure(pause_ttl_seconds=ttl, pause_threshold=threshold,
                                 pause_window_seconds=window, pause_classes="auth,billing",
                                 pause_retry_after_seconds=30)


@setup_step("a governor waiting from {base:g} ms up to {cap:g} ms")
def wait_bounds(context: Any, base: float, cap: float) -> None:
    _governor(context).configure(base_ms=base, cap_ms=cap)


# -- Given/When: commands, derived from their declarations (declarations.py) ---------------

derive_steps(DECLARATIONS, _governor)


@action_step('targets "{targets}" each record a failure result of class {failure_class:w}')
def record_many(context: Any, targets: str, failure_class: str) -> None:
    """Not a command alone: each result is named after the commands run so far."""
    scenario = _governor(context)
    for target in (name.strip() for name in targets.split(",") if name.strip()):
        result = f"{target}-{failure_class}-{len(scenario.harness.commands)}"
        scenario.run(gc.RecordFailure(target, failure_class, result))


@action_step('targets "{targets}" each record a rate-limited result')
def rate_limit_many(context: Any, targets: str) -> None:
    """The agents of several targets answer HTTP 429 at one moment (RG-010); each result
    is named after the commands run so far."""
    scenario = _governor(context)
    for target in (name.strip() for name in targets.split(",") if name.strip()):
        result = f"{target}-429-{len(scenario.harness.commands)}"
        scenario.run(gc.RecordRateLimited(target, result))


@setup_step("a governor whose restart jitter is at most {seconds:g} s")
def restart_jitter(context: Any, seconds: float) -> None:
    _governor(context).configure(initial_jitter_max_seconds=seconds)


# -- Then: checks on what the backend answered or shows ----------------------------------


@check_step("the re-delivery wait is {ms:g} ms")
def wait_is(context: Any, ms: float) -> None:
    actual = _governor(context).answers.get(WAIT)
    ok = isinstance(actual, float) and abs(actual - ms) <= 1.0
    _check(context, ok, "the re-delivery wait", ms, actual)


@check_step("the re-delivery is accepted")
def accepted(context: Any) -> None:
    actual = _governor(context).answers.get(OFFER)
    _check(context, actual == (True, None), "the last offer's answer", (True, None), actual)


@check_step("the re-delivery is refused, to retry after {seconds:g} seconds")
def refused(context: Any, seconds: float) -> None:
    actual = _governor(context).answers.get(OFFER)
    ok = (isinstance(actual, tuple) and actual[0] is False
          and isinstance(actual[1], int | float) and abs(actual[1] - seconds) < 1e-6)
    _check(context, ok, "the last offer's answer", (False, seconds), actual)


@check_step("re-delivery is paused until second {second:g}")
def paused(context: Any, second: float) -> None:
    actual = _governor(context).harness.workers[1].paused_until()
    wanted = EPOCH + timedelta(seconds=second)
    _check(context, actual == wanted, "the end of the pause", wanted, actual)


@check_step("governor {number:d}'s first re-send sweep is due at second {second:g}")
def sweep_due(context: Any, number: int, second: float) -> None:
    actual = _governor(context).harness.workers[number - 1].resend_sweep_at()
    wanted = EPOCH + timedelta(seconds=second)
    _check(context, actual == wanted, f"when governor {number}'s re-send sweep is due",
           wanted, actual)


@check_step("governor {number:d} has no re-send sweep due")
def no_sweep(context: Any, number: int) -> None:
    actual = _governor(context).harness.workers[number - 1].resend_sweep_at()
    _check(context, actual is None, f"governor {number}'s re-send sweep", None, actual)


@check_step('the envelopes are re-sent at seconds "{seconds}"')
def envelopes_at(context: Any, seconds: str) -> None:
    actual = _governor(context).answers.get(RESEND)
    wanted = tuple(EPOCH + timedelta(seconds=float(s)) for s in seconds.split(",") if s.strip())
    ok = isinstance(actual, tuple) and len(actual) == len(wanted) and all(
        abs((got - want).total_seconds()) < 1e-6 for got, want in zip(actual, wanted, strict=True))
    _check(context, ok, "when the envelopes are re-sent", wanted, actual)


@check_step("no envelope is re-sent")
def no_envelopes(context: Any) -> None:
    actual = _governor(context).answers.get(RESEND, "nothing asked")
    _check(context, actual is None, "the envelopes' re-send times, before any restart",
           None, actual)


@check_step("governor {number:d} reads no pause")
def reads_no_pause(context: Any, number: int) -> None:
    actual = _governor(context).harness.workers[number - 1].paused_until()
    _check(context, actual is None, f"the pause governor {number} reads", None, actual)


@check_step("re-delivery is not paused")
def not_paused(context: Any) -> None:
    actual = _governor(context).harness.workers[0].paused_until()
    _check(context, actual is None, "the pause", None, actual)
