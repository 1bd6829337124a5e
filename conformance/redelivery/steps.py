"""Behave steps for re-delivery and poison parking (spec area "redelivery", RD-001..RD-008).

Register it with `from jobconform.conformance.redelivery.steps import *  # noqa: F403` in a
module under `features/steps/`. The commands' steps are derived from their declarations
(declarations.py). Heartbeats use the stuck area's step (`job "a" sends a heartbeat`).
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.redelivery.declarations import DECLARATIONS
from jobconform.conformance.scenario import (
    _check,
    job_view,
    last_answer,
    reopen_runtime,
    same_value,
    state_of,
)
from jobconform.conformance.step_library import check_step, setup_step
from jobconform.conformance.vocabulary import derive_steps
from jobconform.reference import commands as cmd
from jobconform.reference.lifecycle import POISON_ERROR
from jobconform.reference.model import request_label

__all__: list[str] = []


@setup_step("a runtime with a re-delivery cap of {cap:d}")
def step_runtime_redelivery_cap(context: Any, cap: int) -> None:
    """Keeps the limits set by earlier Given-steps; only the cap changes."""
    harness = state_of(context).harness
    reopen_runtime(context, max_concurrent=harness.max_concurrent, max_tasks=harness.max_tasks,
                 unlimited_tasks=harness.unlimited_tasks, max_redelivery=cap)


# -- actions: the commands' steps are derived from their declarations (declarations.py) ----

derive_steps(DECLARATIONS, state_of)


# -- checks ----------------------------------------------------------------------------------


@check_step("the lease pass re-queued {requeued:d} and parked {parked:d}")
def check_lease_pass(context: Any, requeued: int, parked: int) -> None:
    kind = (cmd.JobStoreFault if isinstance(state_of(context).last_command, cmd.JobStoreFault)
            else cmd.ExpireLeases)
    answer = last_answer(context, kind, "the lease pass re-queued …")
    expected = {"requeued": requeued, "parked": parked}
    _check(context, answer == expected, "expire_leases' answer", expected, answer)


@check_step('job "{alias}" has re-delivery count {count:d}')
def check_redelivery_count(context: Any, alias: str, count: int) -> None:
    actual = getattr(job_view(context, alias), "redelivery_count", "<missing>")
    _check(context, same_value(count, actual), f"job {alias!r} redelivery_count", count, actual)


@check_step('job "{alias}" is parked as poison')
def check_parked(context: Any, alias: str) -> None:
    view = job_view(context, alias)
    actual = (view.status, view.error, getattr(view, "alerted", "<missing>"),
              getattr(view, "poisoned", "<missing>"))
    expected = ("failed", POISON_ERROR, True, True)
    _check(context, actual == expected, f"job {alias!r} (status, error, alerted, poisoned)",
           expected, actual)


@check_step('job "{alias}" is not parked')
def check_not_parked(context: Any, alias: str) -> None:
    view = job_view(context, alias)
    actual = (getattr(view, "alerted", "<missing>"), getattr(view, "poisoned", "<missing>"))
    _check(context, actual == (False, False), f"job {alias!r} (alerted, poisoned)",
           (False, False), actual)


@check_step("the previous owner's write was refused")
def check_stale_write_refused(context: Any) -> None:
    answer = last_answer(context, cmd.StaleOwnerWrite, "the previous owner's write was …")
    _check(context, answer is False, "stale_owner_write's answer (accepted?)", False, answer)


def _alerts(context: Any) -> object:
    return state_of(context).run(cmd.OperatorAlerts())


@check_step('the operator alerts are "{aliases}"')
def check_alerts(context: Any, aliases: str) -> None:
    actual = _alerts(context)
    _check(context, actual == alias_list(aliases), "operator_alerts(), in the order raised",
           alias_list(aliases), actual)


@check_step("no operator alert was raised")
def check_no_alerts(context: Any) -> None:
    actual = _alerts(context)
    _check(context, actual == [], "operator_alerts()", [], actual)


@check_step('the request parked is request {number:d}')
def check_parked_request(context: Any, number: int) -> None:
    answer = last_answer(context, cmd.ParkRequest, "the request parked is …")
    expected = request_label(number - 1)
    _check(context, answer == expected, "park_request's answer, the request it landed on",
           expected, answer)


@check_step('the operator requests are "{requests}"')
def check_operator_requests(context: Any, requests: str) -> None:
    """`requests`: "agent request-id" pairs in the order first parked, comma-separated;
    each request's label is its place in that order."""
    expected = [[request_label(index), *pair.split()]
                for index, pair in enumerate(alias_list(requests))]
    actual = state_of(context).run(cmd.OperatorRequests())
    _check(context, actual == expected, "operator_requests(), in the order first parked",
           expected, actual)
