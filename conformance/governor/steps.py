"""Behave steps of the governor area (features/governor.feature).

Every When-step sends one command through `GovernorHarness.run` (backend and oracle, then
compared); Then-steps check what the BACKEND answered or shows. Steps name the governor's
nouns (re-delivery, failure result, pause) so that they cannot clash with other areas'.
Governor time passes only with "the governor clock moves N seconds".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from jobconform.conformance.clock import EPOCH
from jobconform.conformance.governor.harness import GovernorHarness, governor_settings
from jobconform.conformance.lifecycle import steps as core
from jobconform.conformance.lifecycle.steps import RunConfig, action_step, check_step, setup_step
from jobconform.reference.governor import commands as gc

__all__: list[str] = []


@dataclass
class GovernorScenario:
    """One scenario's governor harness, opened on first use with its parameters."""

    config: RunConfig
    overrides: dict[str, object] = field(default_factory=dict)
    last_offer: object = None
    last_wait: object = None
    _harness: GovernorHarness | None = None

    @property
    def harness(self) -> GovernorHarness:
        if self._harness is None:
            settings = governor_settings(self.config.profile, **self.overrides)
            self._harness = GovernorHarness(self.config.backend, self.config.profile,
                                            self.config.registry, settings)
        return self._harness

    def configure(self, **overrides: object) -> None:
        if self._harness is not None:
            raise RuntimeError("governor parameters are fixed before the first governor step")
        self.overrides.update(overrides)

    def run(self, command: gc.GovernorCommand) -> object:
        return self.harness.run(command)

    def close(self) -> None:
        if self._harness is not None:
            self._harness.close()


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


@action_step("the re-delivery wait is asked after {previous:g} ms with draw {draw:g}")
def ask_wait(context: Any, previous: float, draw: float) -> None:
    _governor(context).last_wait = _governor(context).run(gc.AskWait(previous, draw))


@action_step("the first re-delivery wait is asked with draw {draw:g}")
def ask_first_wait(context: Any, draw: float) -> None:
    _governor(context).last_wait = _governor(context).run(gc.AskWait(None, draw))


@action_step("the re-delivery wait is asked after {previous:g} ms with draw {draw:g} and a"
             " retry-after of {floor:g} ms")
def ask_wait_floor(context: Any, previous: float, draw: float, floor: float) -> None:
    _governor(context).last_wait = _governor(context).run(gc.AskWait(previous, draw, floor))


@action_step('a re-delivery for target "{target}" is offered')
def offer(context: Any, target: str) -> None:
    _governor(context).last_offer = _governor(context).run(gc.Offer(target))


@action_step('a re-delivery for target "{target}" is offered at governor {number:d}')
def offer_at(context: Any, target: str, number: int) -> None:
    _governor(context).last_offer = _governor(context).run(gc.Offer(target, number - 1))


@action_step('{count:d} re-deliveries for target "{target}" are offered')
def offers(context: Any, count: int, target: str) -> None:
    for _ in range(count):
        _governor(context).last_offer = _governor(context).run(gc.Offer(target))


@action_step('target "{target}" records failure result "{result}" of class {failure_class:w}')
def record(context: Any, target: str, result: str, failure_class: str) -> None:
    _governor(context).run(gc.RecordFailure(target, failure_class, result))


@action_step('targets "{targets}" each record a failure result of class {failure_class:w}')
def record_many(context: Any, targets: str, failure_class: str) -> None:
    scenario = _governor(context)
    for target in (name.strip() for name in targets.split(",") if name.strip()):
        result = f"{target}-{failure_class}-{len(scenario.harness.commands)}"
        scenario.run(gc.RecordFailure(target, failure_class, result))


@setup_step("a governor whose restart jitter is at most {seconds:g} s")
def restart_jitter(context: Any, seconds: float) -> None:
    _governor(context).configure(initial_jitter_max_seconds=seconds)


@action_step("governor {number:d} restarts with draw {draw:g}")
def restarts(context: Any, number: int, draw: float) -> None:
    _governor(context).run(gc.Restart(draw, number - 1))


@action_step("the governor clock moves {seconds:g} seconds")
def clock_moves(context: Any, seconds: float) -> None:
    _governor(context).run(gc.Elapse(seconds))


@check_step("the re-delivery wait is {ms:g} ms")
def wait_is(context: Any, ms: float) -> None:
    actual = _governor(context).last_wait
    ok = isinstance(actual, float) and abs(actual - ms) <= 1.0
    _check(context, ok, "the re-delivery wait", ms, actual)


@check_step("the re-delivery is accepted")
def accepted(context: Any) -> None:
    actual = _governor(context).last_offer
    _check(context, actual == (True, None), "the last offer's answer", (True, None), actual)


@check_step("the re-delivery is refused, to retry after {seconds:g} seconds")
def refused(context: Any, seconds: float) -> None:
    actual = _governor(context).last_offer
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


@check_step("re-delivery is not paused")
def not_paused(context: Any) -> None:
    actual = _governor(context).harness.workers[0].paused_until()
    _check(context, actual is None, "the pause", None, actual)
