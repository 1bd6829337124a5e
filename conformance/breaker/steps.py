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

import json
from datetime import timedelta
from typing import Any

from jobconform.conformance import scenario as core
from jobconform.conformance.area_steps import ConfiguredScenario
from jobconform.conformance.breaker.declarations import (
    BACKSTOP,
    DECLARATIONS,
    concurrent_answers_of,
    names,
    worker_index,
)
from jobconform.conformance.breaker.harness import BreakerHarness, breaker_settings
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference.breaker import commands as bc

__all__: list[str] = []


class BreakerScenario(ConfiguredScenario[BreakerHarness]):
    """One scenario's breaker harness; its answers are kept by call or work name (and
    under BACKSTOP and CONCURRENT)."""

    NOUN = "breaker"

    def open(self) -> BreakerHarness:
        settings = breaker_settings(self.config.profile, **self.overrides)
        return BreakerHarness(self.config.backend, self.config.profile,
                              self.config.registry, settings)


def _breaker(context: Any) -> BreakerScenario:
    return core.state_of(context).area_state("breaker", BreakerScenario)


def _check(context: Any, ok: bool, what: str, expected: object, actual: object) -> None:
    core._check(context, ok, what, expected, actual)


# -- parameters ------------------------------------------------------------------------------


@setup_step("a breaker tripping after {threshold:d} failures with a {cooldown:g} s cooldown"
            " growing {multiplier:g}-fold up to {cap:g} s")
def breaker_parameters(context: Any, threshold: int, cooldown: float, multiplier: float,
                       cap: float) -> None:
    _breaker(context).configure(failure_threshold=threshold, cooldown_seconds=cooldown,
                                cooldown_multiplier=multiplier, cooldown_max_seconds=cap)


@setup_step('a breaker that counts only "{classes}" failures')
def counted_classes(context: Any, classes: str) -> None:
    _breaker(context).configure(counted_classes=",".join(names(classes)))


@setup_step("a breaker whose probe lease is {lease:g} seconds")
def probe_lease(context: Any, lease: float) -> None:
    _breaker(context).configure(probe_lease_seconds=lease)


# -- actions: derived from their declarations (declarations.py) -----------------------------


derive_steps(DECLARATIONS, _breaker)


@action_step('target "{target}" fails {count:d} calls with {failure_class:w}')
def fails_calls(context: Any, target: str, count: int, failure_class: str) -> None:
    """Not a command alone: each call is named after the commands run so far."""
    scenario = _breaker(context)
    for number in range(1, count + 1):
        call = f"{target}-{failure_class}-{len(scenario.harness.commands)}-{number}"
        scenario.answers[call] = scenario.run(bc.Call(target, call))
        scenario.run(bc.Report(target, call, "failure", failure_class))


# -- checks -----------------------------------------------------------------------------------


def _read(context: Any, target: str, number: int = 1) -> Any:
    scenario = _breaker(context)
    return scenario.harness.workers[worker_index(number)].read(target)


@check_step('call "{call}" is {answer:w}')
def call_answer(context: Any, call: str, answer: str) -> None:
    actual = _breaker(context).answers.get(call, "<never sent>")
    _check(context, actual == answer, f"the breaker's answer to call {call!r}", answer, actual)


@check_step('the end of call "{call}" is classed {failure_class:w}')
def end_classed(context: Any, call: str, failure_class: str) -> None:
    actual = _breaker(context).answers.get(call, "<never sent>")
    _check(context, actual == failure_class, f"the class of call {call!r}'s end",
           failure_class, actual)


@check_step('the report of call "{call}" is {report}')
def end_report_is(context: Any, call: str, report: str) -> None:
    """The report the runtime gave for the end kept under `call` (CB-018, CB-019), JSON."""
    actual = _breaker(context).answers.get(call, "<never sent>")
    wanted = json.loads(report)
    _check(context, actual == wanted, f"the report of call {call!r}'s end", wanted, actual)


@check_step('work "{work}" is {answer:w}')
def work_answer(context: Any, work: str, answer: str) -> None:
    actual = _breaker(context).answers.get(work, "<never sent>")
    _check(context, actual == answer, f"the answer to work {work!r}", answer, actual)


@check_step("the backstop sweep failed {count:d} pieces of work")
def backstop_failed(context: Any, count: int) -> None:
    actual = _breaker(context).answers.get(BACKSTOP, "<never run>")
    _check(context, actual == count, "the work the backstop sweep failed", count, actual)


@check_step("the concurrent calls got {probes:d} probe and {refused:d} refused")
def concurrent_answers(context: Any, probes: int, refused: int) -> None:
    actual = concurrent_answers_of(_breaker(context).answers)
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
    _check(context, actual == names(works), f"the queue of {target!r}", names(works), actual)


@check_step('the queue of target "{target}" is empty')
def queue_empty(context: Any, target: str) -> None:
    actual = tuple(_breaker(context).harness.workers[0].queued(target))
    _check(context, actual == (), f"the queue of {target!r}", (), actual)


@check_step('the failed work of target "{target}" is "{works}"')
def failed_work(context: Any, target: str, works: str) -> None:
    actual = tuple(_breaker(context).harness.workers[0].failed_work(target))
    _check(context, actual == names(works), f"the failed work of {target!r}", names(works),
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
