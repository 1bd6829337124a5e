"""Behave steps for idempotency keys (features/idempotency.feature, IK-001..IK-018).

Each Given/When-step sends one command through `IdempotencyHarness.run` (the steps that
send one command alone are derived from conformance/idempotency/declarations.py), so the
backend's answer is compared with the oracle's and a `Divergence` fails the scenario with the
requirement IDs. Each Then-step checks the BACKEND's own answer against the value the
scenario states. Steps speak of claims, keys and the key clock so that they cannot clash
with the lifecycle steps. Register them from features/steps/idempotency_steps.py:

    from jobconform.conformance.idempotency.steps import *  # noqa: F403
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance.area_steps import AreaScenario
from jobconform.conformance.idempotency.declarations import DECLARATIONS
from jobconform.conformance.idempotency.harness import ComparedAnswer, IdempotencyHarness
from jobconform.conformance.scenario import RunConfig, state_of
from jobconform.conformance.step_library import action_step, check_step, setup_step
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference.idempotency.commands import AskSchedulerKey, ClaimKey
from jobconform.reference.idempotency.oracle import (
    CONFLICT_STATUS,
    MISSING_EXECUTION_STATUS,
    UNAVAILABLE,
    canonical_json,
)
from jobconform.reference.lifecycle import JsonValue

__all__: list[str] = []

AREA = "idempotency"
SCHEDULER_SCOPE = "scheduler"
PARAMETER_NAMES = {"TTL": "ttl_seconds", "mismatch status": "mismatch_status",
                   "stale-lock timeout": "stale_lock_timeout_seconds"}


def _opener(overrides: dict[str, float | str]) -> Any:
    def open_keys(config: RunConfig) -> AreaScenario[IdempotencyHarness]:
        return AreaScenario(IdempotencyHarness(config.backend, config.profile,
                                               config.registry, overrides=overrides))
    return open_keys


def keys_of(context: Any) -> AreaScenario[IdempotencyHarness]:
    """The scenario's idempotency harness (opened with the profile's parameters on first
    use) and the backend's answers, kept by claim handle and the names `kept_as` gives."""
    keys: AreaScenario[IdempotencyHarness] = state_of(context).area_state(AREA, _opener({}))
    return keys


def _answer(context: Any, handle: str) -> ComparedAnswer:
    answer = keys_of(context).answers.get(handle)
    if not isinstance(answer, ComparedAnswer):
        raise AssertionError(f"claim {handle!r} has no answer yet; make the claim first")
    return answer


# -- set-up ------------------------------------------------------------------------------------


@setup_step("idempotency keys with a {name} of {value:g}")
def step_parameter(context: Any, name: str, value: float) -> None:
    if name not in PARAMETER_NAMES:
        raise ValueError(f"unknown idempotency parameter {name!r}; use one of"
                         f" {', '.join(PARAMETER_NAMES)}")
    _open_with(context, {PARAMETER_NAMES[name]: value})


def _open_with(context: Any, overrides: dict[str, float | str]) -> None:
    state = state_of(context)
    if AREA in state.areas:
        raise RuntimeError("set idempotency parameters before the scenario's first claim")
    state.area_state(AREA, _opener(overrides))


@setup_step("idempotency keys that are released when the work fails")
def step_release_failures(context: Any) -> None:
    _open_with(context, {"failure_policy": "release"})


@setup_step("idempotency keys whose executions may be re-delivered")
def step_redelivery_enabled(context: Any) -> None:
    _open_with(context, {"redelivery": "enabled"})


@setup_step("idempotency keys with a {name} of {value:g} seconds")
def step_parameter_seconds(context: Any, name: str, value: float) -> None:
    step_parameter(context, name, value)


# -- Given/When: commands, derived from their declarations (declarations.py); what stays
# -- here is not a command alone (a claim whose key is the answer to an earlier command) --

derive_steps(DECLARATIONS, keys_of)


@action_step('scheduler claim "{handle}" is sent for execution "{execution}" with payload'
             " {payload:Json}")
def step_scheduler_claim(context: Any, handle: str, execution: str,
                         payload: JsonValue) -> None:
    keys = keys_of(context)
    key = keys.run(AskSchedulerKey(execution))
    if not isinstance(key, str):
        raise AssertionError(f"the scheduler key should be a string, backend answered {key!r}")
    keys.answers[handle] = keys.run(ClaimKey(handle, SCHEDULER_SCOPE, key, payload))


# -- store faults (IK-015) ---------------------------------------------------------------------


@setup_step("the idempotency keys take store faults")
def step_takes_store_faults(context: Any) -> None:
    """IK-015 needs a backend claiming store-faults:idempotency; elsewhere the scenario
    is skipped, never passed."""
    keys = keys_of(context)
    if not keys.harness.takes_store_faults:
        context.scenario.skip(f"backend {keys.harness.backend.name} does not take store"
                              " faults for its idempotency keys (store-faults:idempotency)")


@check_step('claim "{handle}" is answered unavailable')
def check_claim_unavailable(context: Any, handle: str) -> None:
    answer = keys_of(context).answers.get(handle)
    if answer != UNAVAILABLE:
        raise AssertionError(f"claim {handle!r} met a failed store write and should answer"
                             f" {UNAVAILABLE!r}, holding nothing; backend answered {answer!r}")


@check_step('the {what:w} of claim "{handle}" is answered unavailable')
def check_call_unavailable(context: Any, what: str, handle: str) -> None:
    name = {"completion": "complete", "release": "release"}.get(what)
    if name is None:
        raise ValueError(f"a completion or a release is answered, not a {what!r}")
    answer = keys_of(context).answers.get(f"{name}:{handle}")
    if answer != UNAVAILABLE:
        raise AssertionError(f"the {what} of {handle!r} met a failed store write and should"
                             f" answer {UNAVAILABLE!r}; backend answered {answer!r}")


# -- checks on what the backend answered --------------------------------------------------------


@check_step('claim "{handle}" is started')
def check_started(context: Any, handle: str) -> None:
    answer = _answer(context, handle)
    if answer.kind != "started" or not answer.with_token:
        raise AssertionError(f"claim {handle!r} should be started with a token, backend"
                             f" answered {answer}")


@check_step('claim "{handle}" is started without a token')
def check_started_untracked(context: Any, handle: str) -> None:
    answer = _answer(context, handle)
    if answer.kind != "started" or answer.with_token:
        raise AssertionError(f"claim {handle!r} should be started with no token (nothing"
                             f" recorded), backend answered {answer}")


@check_step('claim "{handle}" is refused for want of an execution id')
def check_refused_without_execution(context: Any, handle: str) -> None:
    answer = _answer(context, handle)
    if (answer.kind, answer.status, answer.with_token) != (
            "refused", MISSING_EXECUTION_STATUS, False):
        raise AssertionError(f"claim {handle!r} names no execution while executions may be"
                             f" re-delivered, so it should be refused with status"
                             f" {MISSING_EXECUTION_STATUS} and no token; backend answered"
                             f" {answer}")


@check_step('claim "{handle}" is refused as a conflict')
def check_conflict(context: Any, handle: str) -> None:
    answer = _answer(context, handle)
    if (answer.kind, answer.status) != ("conflict", CONFLICT_STATUS):
        raise AssertionError(f"claim {handle!r} should be a conflict with status"
                             f" {CONFLICT_STATUS}, backend answered {answer}")


@check_step('claim "{handle}" is refused as a mismatch with status {status:d}')
def check_mismatch(context: Any, handle: str, status: int) -> None:
    answer = _answer(context, handle)
    if (answer.kind, answer.status) != ("mismatch", status):
        raise AssertionError(f"claim {handle!r} should be a mismatch with status {status},"
                             f" backend answered {answer}")


@check_step('claim "{handle}" replays claim "{original}" returning {result:Json}')
def check_replay_result(context: Any, handle: str, original: str, result: JsonValue) -> None:
    answer = _answer(context, handle)
    wanted = ("replay", original, ("returns", canonical_json(result)))
    if (answer.kind, answer.original, answer.outcome) != wanted:
        raise AssertionError(f"claim {handle!r} should replay {original!r}'s result"
                             f" {result!r}, backend answered {answer}")


@check_step('claim "{handle}" replays claim "{original}" raising {error_type} "{message}"')
def check_replay_error(context: Any, handle: str, original: str, error_type: str,
                       message: str) -> None:
    answer = _answer(context, handle)
    wanted = ("replay", original, ("raises", error_type, message))
    if (answer.kind, answer.original, answer.outcome) != wanted:
        raise AssertionError(f"claim {handle!r} should replay {original!r}'s error"
                             f" {error_type}({message!r}), backend answered {answer}")


def _boolean_answer(context: Any, key: str, wanted: bool, what: str) -> None:
    answer = keys_of(context).answers.get(key)
    if answer is not wanted:
        raise AssertionError(f"{what} should answer {wanted}, backend answered {answer!r}")


@check_step('the completion of claim "{handle}" is stored')
def check_completion_stored(context: Any, handle: str) -> None:
    _boolean_answer(context, f"complete:{handle}", True, f"completing {handle!r}")


@check_step('the completion of claim "{handle}" is refused')
def check_completion_refused(context: Any, handle: str) -> None:
    _boolean_answer(context, f"complete:{handle}", False, f"completing {handle!r}")


@check_step('the release of claim "{handle}" is accepted')
def check_release_accepted(context: Any, handle: str) -> None:
    _boolean_answer(context, f"release:{handle}", True, f"releasing {handle!r}")


@check_step('the release of claim "{handle}" is refused')
def check_release_refused(context: Any, handle: str) -> None:
    _boolean_answer(context, f"release:{handle}", False, f"releasing {handle!r}")


@check_step("{count:d} key records were purged")
def check_purged(context: Any, count: int) -> None:
    answer = keys_of(context).answers.get("purge")
    if answer != count or isinstance(answer, bool):
        raise AssertionError(f"the purge should remove {count} records, backend answered"
                             f" {answer!r}")


@check_step('the scheduler key of execution "{execution}" is "{key}"')
def check_scheduler_key(context: Any, execution: str, key: str) -> None:
    answer = keys_of(context).answers.get(f"scheduler:{execution}")
    if answer != key:
        raise AssertionError(f"the scheduler key of {execution!r} should be {key!r}, backend"
                             f" answered {answer!r}")


# -- audit events of replays (IK-017) ------------------------------------------------------------


@setup_step("the idempotency keys emit audit events")
def step_emits_audit_events(context: Any) -> None:
    """IK-017 needs a backend claiming audit-events; elsewhere the scenario is skipped,
    never passed."""
    keys = keys_of(context)
    if not keys.harness.audits:
        context.scenario.skip(f"backend {keys.harness.backend.name} does not report replays"
                              " to an audit sink (audit-events)")


@check_step('the audit log holds {count:d} idempotent_replay events, the last for claim'
            ' "{original}" on key "{key}" in scope "{scope}"')
def check_audit_events(context: Any, count: int, original: str, key: str, scope: str) -> None:
    events = keys_of(context).harness.audit_events()
    if len(events) != count or events[-1:] != [(scope, key, original)]:
        raise AssertionError(f"the audit log should hold {count} idempotent_replay events,"
                             f" the last ({scope!r}, {key!r}, {original!r}); it holds"
                             f" {events}")


@check_step("the audit log holds no idempotent_replay event")
def check_no_audit_events(context: Any) -> None:
    events = keys_of(context).harness.audit_events()
    if events:
        raise AssertionError(f"the audit log should hold no idempotent_replay event; it holds"
                             f" {events}")

