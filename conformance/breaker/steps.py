"""Behave steps of the breaker area (features/breaker.feature).

Every When-step sends one command through `BreakerHarness.run`, which applies it to the
backend's breaker and to the oracle and compares everything; every Then-step checks what
the BACKEND answered or shows. Steps name their nouns (breaker, target, call, work) so they
cannot clash with the lifecycle's steps. Breaker time passes only with "the breaker clock
moves N seconds"; seconds count from the virtual clock's start.

A scenario may fix breaker parameters before its first command ("a breaker tripping after
3 failures ..."); parameters it does not fix come from the active profile.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from jobconform.conformance.area_steps import ConfiguredScenario
from jobconform.conformance.breaker.harness import BreakerHarness, breaker_settings
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.lifecycle import steps as core
from jobconform.conformance.lifecycle.steps import action_step, check_step, setup_step
from jobconform.reference.breaker import commands as bc

__all__: list[str] = []


class BreakerScenario(ConfiguredScenario[BreakerHarness]):
    """One scenario's breaker harness; its answers are kept by call or work name."""

    NOUN = "breaker"

    def __init__(self, config: Any) -> None:
        super().__init__(config)
        self.concurrent: dict[str, int] = {}

    def open(self) -> BreakerHarness:
        settings = breaker_settings(self.config.profile, **self.overrides)
        return BreakerHarness(self.config.backend, self.config.profile,
                              self.config.registry, settings)


def _breaker(context: Any) -> BreakerScenario:
    return core.state_of(context).area_state("breaker", BreakerScenario)


def _check(context: Any, ok: bool, what: str, expected: object, actual: object) -> None:
    core._check(context, ok, what, expected, actual)


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


def _worker(number: int) -> int:
    if number not in (1, 2):
        raise ValueError(f"a check has workers 1 and 2, not {number}")
    return number - 1


# -- parameters ------------------------------------------------------------------------------


@setup_step("a breaker tripping after {threshold:d} failures with a {cooldown:g} s cooldown"
            " growing {multiplier:g}-fold up to {cap:g} s")
def breaker_parameters(context: Any, threshold: int, cooldown: float, multiplier: float,
                       cap: float) -> None:
    _breaker(context).configure(failure_threshold=threshold, cooldown_seconds=cooldown,
                                cooldown_multiplier=multiplier, cooldown_max_seconds=cap)


@setup_step('a breaker that counts only "{classes}" failures')
def counted_classes(context: Any, classes: str) -> None:
    _breaker(context).configure(counted_classes=",".join(_names(classes)))


@setup_step("a breaker whose probe lease is {lease:g} seconds")
def probe_lease(context: Any, lease: float) -> None:
    _breaker(context).configure(probe_lease_seconds=lease)


# -- actions --------------------------------------------------------------------------------


@action_step('the breaker is engaged for target "{target}"')
def engaged(context: Any, target: str) -> None:
    _breaker(context).run(bc.SwitchBreaker(True))
    _breaker(context).run(bc.OptIn(target, True))


@action_step("the global breaker switch is turned on")
def switch_on(context: Any) -> None:
    _breaker(context).run(bc.SwitchBreaker(True))


@action_step("the global breaker switch is turned off")
def switch_off(context: Any) -> None:
    _breaker(context).run(bc.SwitchBreaker(False))


@action_step('target "{target}" opts in to the breaker')
def opts_in(context: Any, target: str) -> None:
    _breaker(context).run(bc.OptIn(target, True))


@action_step('target "{target}" opts out of the breaker')
def opts_out(context: Any, target: str) -> None:
    _breaker(context).run(bc.OptIn(target, False))


@action_step('call "{call}" to target "{target}" arrives')
def call_arrives(context: Any, call: str, target: str) -> None:
    scenario = _breaker(context)
    scenario.answers[call] = scenario.run(bc.Call(target, call))


@action_step('call "{call}" to target "{target}" arrives at worker {number:d}')
def call_arrives_at(context: Any, call: str, target: str, number: int) -> None:
    scenario = _breaker(context)
    scenario.answers[call] = scenario.run(bc.Call(target, call, _worker(number)))


@action_step('calls "{calls}" to target "{target}" arrive at once')
def calls_at_once(context: Any, calls: str, target: str) -> None:
    scenario = _breaker(context)
    answer = scenario.run(bc.CallsAtOnce(target, _names(calls)))
    assert isinstance(answer, dict)
    scenario.concurrent = {str(key): int(value) for key, value in answer.items()}


@action_step('call "{call}" to target "{target}" succeeds')
def call_succeeds(context: Any, call: str, target: str) -> None:
    _breaker(context).run(bc.Report(target, call, "success"))


@action_step('call "{call}" to target "{target}" fails with {failure_class:w}')
def call_fails(context: Any, call: str, target: str, failure_class: str) -> None:
    _breaker(context).run(bc.Report(target, call, "failure", failure_class))


@action_step('call "{call}" to target "{target}" fails with {failure_class:w} at worker'
             ' {number:d}')
def call_fails_at(context: Any, call: str, target: str, failure_class: str,
                  number: int) -> None:
    _breaker(context).run(bc.Report(target, call, "failure", failure_class, _worker(number)))


@action_step('call "{call}" to target "{target}" is cancelled')
def call_cancelled(context: Any, call: str, target: str) -> None:
    _breaker(context).run(bc.Report(target, call, "cancelled"))


@action_step('target "{target}" fails {count:d} calls with {failure_class:w}')
def fails_calls(context: Any, target: str, count: int, failure_class: str) -> None:
    scenario = _breaker(context)
    for number in range(1, count + 1):
        call = f"{target}-{failure_class}-{len(scenario.harness.commands)}-{number}"
        scenario.answers[call] = scenario.run(bc.Call(target, call))
        scenario.run(bc.Report(target, call, "failure", failure_class))


@action_step('work "{work}" is queued for target "{target}"')
def work_queued(context: Any, work: str, target: str) -> None:
    scenario = _breaker(context)
    scenario.answers[work] = scenario.run(bc.AddWork(target, work))


@action_step('the breaker of target "{target}" is reset')
def reset(context: Any, target: str) -> None:
    _breaker(context).run(bc.ResetBreaker(target))


@action_step("the breaker store goes down")
def store_down(context: Any) -> None:
    _breaker(context).run(bc.StoreOutage(True))


@action_step("the breaker store comes back")
def store_back(context: Any) -> None:
    _breaker(context).run(bc.StoreOutage(False))


@action_step('target "{target}" misses a heartbeat')
def misses_heartbeat(context: Any, target: str) -> None:
    _breaker(context).run(bc.MissedHeartbeat(target))


@action_step("the breaker's trip drains are lost")
def drains_lost(context: Any) -> None:
    _breaker(context).run(bc.DrainLost(True))


@action_step("the breaker's trip drains work again")
def drains_work(context: Any) -> None:
    _breaker(context).run(bc.DrainLost(False))


@action_step("the backstop sweep runs")
def backstop_runs(context: Any) -> None:
    scenario = _breaker(context)
    scenario.answers["<backstop>"] = scenario.run(bc.BackstopSweep())


@action_step("the breaker clock moves {seconds:g} seconds")
def clock_moves(context: Any, seconds: float) -> None:
    _breaker(context).run(bc.PassTime(seconds))


# -- checks -----------------------------------------------------------------------------------


def _read(context: Any, target: str, number: int = 1) -> Any:
    scenario = _breaker(context)
    return scenario.harness.workers[_worker(number)].read(target)


@check_step('call "{call}" is {answer:w}')
def call_answer(context: Any, call: str, answer: str) -> None:
    actual = _breaker(context).answers.get(call, "<never sent>")
    _check(context, actual == answer, f"the breaker's answer to call {call!r}", answer, actual)


@check_step('work "{work}" is {answer:w}')
def work_answer(context: Any, work: str, answer: str) -> None:
    actual = _breaker(context).answers.get(work, "<never sent>")
    _check(context, actual == answer, f"the answer to work {work!r}", answer, actual)


@check_step("the backstop sweep failed {count:d} pieces of work")
def backstop_failed(context: Any, count: int) -> None:
    actual = _breaker(context).answers.get("<backstop>", "<never run>")
    _check(context, actual == count, "the work the backstop sweep failed", count, actual)


@check_step("the concurrent calls got {probes:d} probe and {refused:d} refused")
def concurrent_answers(context: Any, probes: int, refused: int) -> None:
    actual = _breaker(context).concurrent
    wanted = {key: value for key, value in (("probe", probes), ("refused", refused)) if value}
    _check(context, actual == wanted, "the concurrent callers' answers", wanted, actual)


@check_step('the breaker of target "{target}" is {state:w}')
def breaker_state(context: Any, target: str, state: str) -> None:
    readout = _read(context, target)
    actual = getattr(readout, "state", readout)
    _check(context, actual == state, f"the state of target {target!r}", state, actual)


@check_step('the breaker of target "{target}" is {state:w} at worker {number:d}')
def breaker_state_at(context: Any, target: str, state: str, number: int) -> None:
    readout = _read(context, target, number)
    actual = getattr(readout, "state", readout)
    _check(context, actual == state, f"worker {number}'s state of {target!r}", state, actual)


@check_step('the breaker of target "{target}" counts {failures:d} failures')
def breaker_failures(context: Any, target: str, failures: int) -> None:
    actual = getattr(_read(context, target), "failures", None)
    _check(context, actual == failures, f"the failure count of {target!r}", failures, actual)


@check_step('the breaker of target "{target}" has a cooldown of {seconds:g} seconds')
def breaker_cooldown(context: Any, target: str, seconds: float) -> None:
    actual = getattr(_read(context, target), "cooldown_seconds", None)
    _check(context, actual == seconds, f"the cooldown of {target!r}", seconds, actual)


@check_step('the breaker of target "{target}" is open until second {second:g}')
def breaker_open_until(context: Any, target: str, second: float) -> None:
    actual = getattr(_read(context, target), "open_until", None)
    wanted = EPOCH + timedelta(seconds=second)
    _check(context, actual == wanted, f"the end of {target!r}'s open period", wanted, actual)


@check_step('the probe of target "{target}" is call "{call}"')
def breaker_probe(context: Any, target: str, call: str) -> None:
    actual = getattr(_read(context, target), "probe", None)
    _check(context, actual == call, f"the probe of {target!r}", call, actual)


@check_step('target "{target}" has no probe in flight')
def no_probe(context: Any, target: str) -> None:
    actual = getattr(_read(context, target), "probe", "<unreadable>")
    _check(context, actual is None, f"the probe of {target!r}", None, actual)


@check_step('the breaker state of target "{target}" is unknown')
def state_unknown(context: Any, target: str) -> None:
    actual = _read(context, target)
    _check(context, actual is None, f"the read of {target!r} while the store is down", None,
           actual)


@check_step('the queue of target "{target}" holds "{works}"')
def queue_holds(context: Any, target: str, works: str) -> None:
    actual = tuple(_breaker(context).harness.workers[0].queued(target))
    _check(context, actual == _names(works), f"the queue of {target!r}", _names(works), actual)


@check_step('the queue of target "{target}" is empty')
def queue_empty(context: Any, target: str) -> None:
    actual = tuple(_breaker(context).harness.workers[0].queued(target))
    _check(context, actual == (), f"the queue of {target!r}", (), actual)


@check_step('the failed work of target "{target}" is "{works}"')
def failed_work(context: Any, target: str, works: str) -> None:
    actual = tuple(_breaker(context).harness.workers[0].failed_work(target))
    _check(context, actual == _names(works), f"the failed work of {target!r}", _names(works),
           actual)


@check_step("{count:d} breaker store outages are logged")
def outages_logged(context: Any, count: int) -> None:
    actual = sum(worker.logged_outages() for worker in _breaker(context).harness.workers)
    _check(context, actual == count, "operations logged as store outages", count, actual)


# -- the profile's own values ---------------------------------------------------------------


def _settings(context: Any) -> Any:
    return _breaker(context).harness.settings


@action_step('target "{target}" fails one call fewer than the profile\'s threshold')
def fails_below_threshold(context: Any, target: str) -> None:
    fails_calls(context, target, _settings(context).failure_threshold - 1, "auth")


@action_step('the breaker clock moves by the breaker of target "{target}"\'s cooldown')
def clock_moves_cooldown(context: Any, target: str) -> None:
    cooldown = getattr(_read(context, target), "cooldown_seconds", None)
    if not isinstance(cooldown, float):
        raise AssertionError(f"the backend reads no cooldown for {target!r}: {cooldown!r}")
    _breaker(context).run(bc.PassTime(cooldown))


@check_step('the breaker of target "{target}" has the profile\'s base cooldown')
def base_cooldown(context: Any, target: str) -> None:
    wanted = _settings(context).cooldown_seconds
    actual = getattr(_read(context, target), "cooldown_seconds", None)
    _check(context, actual == wanted, f"the cooldown of {target!r}", wanted, actual)


@check_step('the breaker of target "{target}" has the profile\'s cooldown after {probes:d}'
            ' failed probes')
def grown_cooldown(context: Any, target: str, probes: int) -> None:
    settings = _settings(context)
    wanted = settings.cooldown_seconds
    for _ in range(probes):
        wanted = min(wanted * settings.cooldown_multiplier, settings.cooldown_max_seconds)
    actual = getattr(_read(context, target), "cooldown_seconds", None)
    _check(context, actual == wanted, f"the cooldown of {target!r}", wanted, actual)
