"""Re-delivery's commands and checks (RD-001..RD-008), declared once
(conformance/vocabulary.py).

Re-delivery is one more part of the job runtime: its vocabulary `runs_through` the
lifecycle library (in Behave, the scenario's job runtime). Its Behave steps and its Robot
keywords (in the job runtime's library, conformance/lifecycle/keywords.py) are derived
from these lists; the wordings are the feature file's and the Robot suite's own. The
Given-step opening a runtime with a re-delivery cap stays in steps.py.
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.job_readings import (
    JOB_RUNTIME_LIBRARY,
    answer_to,
    answered,
    job_record,
    sent_answers,
)
from jobconform.conformance.scenario import same_value
from jobconform.conformance.vocabulary import (
    Check,
    Declaration,
    Phrase,
    Reading,
    Vocabulary,
    check_worded,
    command_worded,
)
from jobconform.reference import commands as cmd
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.lifecycle import POISON_ERROR
from jobconform.reference.model import request_label

# The step's words for the previous owner's late writes (RD-006).
STALE_WRITE_WORDS = {"its outcome": "outcome", "a failure": "failure",
                     "a heartbeat": "heartbeat"}

# -- builders: each is a Robot keyword's signature and documentation ---------------------


def expire_leases(lease: float) -> cmd.ExpireLeases:
    """One lease pass with ``lease`` seconds (RD-001); returns the backend's answer."""
    return cmd.ExpireLeases(float(lease))


def expire_leases_under_store_fault(lease: float, fault: str,
                                    write: int) -> cmd.JobStoreFault:
    """One lease pass while store write ``write`` ``fail``s or the process ``crash``es at
    it, a restarted rescuer then passing again at once (RD-007); returns the answer (the
    restarted rescuer's after a crash)."""
    return cmd.JobStoreFault(StoreFault(FaultKind(fault), int(write)), expire_leases(lease))


def previous_owner_writes(alias: str, write: str) -> cmd.StaleOwnerWrite:
    """The owner of the delivery the job's latest lease expiry took away, unaware, writes
    late: ``outcome``, ``failure`` or ``heartbeat`` (RD-006); returns whether the runtime
    took it."""
    return cmd.StaleOwnerWrite(alias, write)


def park_request(agent: str, request: str) -> cmd.ParkRequest:
    """Agent ``agent`` parks its request ``request`` for an operator (RD-008); returns the
    request it landed on, "request n" for the n-th the runtime answered with."""
    return cmd.ParkRequest(agent, request)


def _previous_owner_reports(alias: str, what: str) -> cmd.StaleOwnerWrite:
    if what not in STALE_WRITE_WORDS:
        raise ValueError(f"the previous owner reports one of {sorted(STALE_WRITE_WORDS)},"
                         f" not {what!r}")
    return previous_owner_writes(alias, STALE_WRITE_WORDS[what])


DECLARATIONS = (
    Declaration("Expire Leases", expire_leases, (
        Phrase("leases expire with a lease of {seconds:g} seconds",
               lambda seconds: expire_leases(seconds)),
    )),
    Declaration("Expire Leases Under Store Fault", expire_leases_under_store_fault, (
        Phrase("store write {write:d} fails while leases expire with a lease of {seconds:g}"
               " seconds", lambda write, seconds: expire_leases_under_store_fault(
                   seconds, FaultKind.FAIL.value, write)),
        Phrase("the process crashes at store write {write:d} while leases expire with a lease"
               " of {seconds:g} seconds", lambda write, seconds: expire_leases_under_store_fault(
                   seconds, FaultKind.CRASH.value, write)),
    )),
    command_worded("Park Request", park_request,
                   'agent "{agent}" parks the operator request "{request}"'),
    Declaration("Previous Owner Writes", previous_owner_writes, (
        Phrase('the previous owner of job "{alias}" reports {what}', _previous_owner_reports),
    )),
)


# -- checks (conformance/lifecycle/declarations.py reads through the job runtime) ---------

_MISSING = "<missing>"


def _passed(requeued: int, parked: int) -> dict[str, int]:
    return {"requeued": int(requeued), "parked": int(parked)}


def lease_pass_should_requeue_and_park(lease: float, requeued: int,
                                       parked: int) -> Reading:
    """A lease pass must answer that it re-queued ``requeued`` and parked ``parked``."""
    return sent_answers(expire_leases(lease), f"expire_leases({lease:g})'s answer",
                        _passed(requeued, parked))


def lease_pass_under_store_fault(lease: float, fault: str, write: int, requeued: int,
                                 parked: int) -> Reading:
    """A lease pass while store write ``write`` ``fail``s or the process ``crash``es at
    it (a restarted rescuer then passes again at once) must answer ``requeued`` and
    ``parked`` (RD-007)."""
    return sent_answers(expire_leases_under_store_fault(lease, fault, write),
                        f"expire_leases({lease:g})'s answer under a store fault",
                        _passed(requeued, parked))


def _lease_pass(requeued: int, parked: int) -> Reading:
    """The latest lease pass's answer, under a store fault or not."""
    def read(through: Any) -> object:
        kind = (cmd.JobStoreFault if isinstance(through.last_command, cmd.JobStoreFault)
                else cmd.ExpireLeases)
        return answer_to(kind, through)

    return Reading("expire_leases' answer", read, _passed(requeued, parked))


def previous_owner_write_should_be_refused(alias: str, write: str) -> Reading:
    """The owner of the delivery the job's latest lease expiry took away writes late
    (``outcome``, ``failure`` or ``heartbeat``); the runtime must refuse it (RD-006)."""
    return sent_answers(previous_owner_writes(alias, write),
                        f"the previous owner's {write} for job {alias!r} accepted?", False,
                        same_value)


def job_redelivery_count_should_be(alias: str, count: int) -> Reading:
    """The backend's record shows ``count`` re-deliveries (RD-001, RD-004)."""
    return Reading(f"job {alias!r} redelivery_count", lambda through: getattr(
        job_record(through, alias), "redelivery_count", _MISSING), count, same_value)


def job_should_be_parked_as_poison(alias: str) -> Reading:
    """Failed with the poison error, alerted and poisoned (RD-003)."""
    return Reading(f"job {alias!r} (status, error, alerted, poisoned)", lambda through: (
        (view := job_record(through, alias)).status, view.error,
        getattr(view, "alerted", _MISSING), getattr(view, "poisoned", _MISSING)),
        ("failed", POISON_ERROR, True, True))


def job_should_not_be_parked(alias: str) -> Reading:
    return Reading(f"job {alias!r} (alerted, poisoned)", lambda through: (
        getattr(view := job_record(through, alias), "alerted", _MISSING),
        getattr(view, "poisoned", _MISSING)), (False, False))


def operator_alerts_should_be(*aliases: str) -> Reading:
    """The backend's operator alerts name exactly ``aliases``, in the order raised."""
    return sent_answers(cmd.OperatorAlerts(), "operator_alerts(), in the order raised",
                        list(aliases))


def parked_request_should_be(agent: str, request: str, number: int) -> Reading:
    """Agent ``agent`` parks ``request`` (RD-008), which must land on request
    ``number``: the ``number``-th the runtime answered with."""
    return sent_answers(park_request(agent, request), "park_request's answer, the request"
                        " it landed on", request_label(int(number) - 1))


def operator_requests_should_be(*requests: str) -> Reading:
    """The operator queue holds exactly ``requests``, each "agent request-id", in the
    order first parked, and each is the request of that place (RD-008)."""
    return sent_answers(cmd.OperatorRequests(), "operator_requests(), in the order first"
                        " parked", [[request_label(index), *pair.split()]
                                    for index, pair in enumerate(requests)])


CHECKS = (
    Check("Lease Pass Should Re-queue And Park", lease_pass_should_requeue_and_park, (
        Phrase("the lease pass re-queued {requeued:d} and parked {parked:d}", _lease_pass),
    )),
    Check("Lease Pass Under Store Fault Should Re-queue And Park",
          lease_pass_under_store_fault),
    check_worded("Job Redelivery Count Should Be", job_redelivery_count_should_be,
                 'job "{alias}" has re-delivery count {count:d}'),
    check_worded("Job Should Be Parked As Poison", job_should_be_parked_as_poison,
                 'job "{alias}" is parked as poison'),
    check_worded("Job Should Not Be Parked", job_should_not_be_parked,
                 'job "{alias}" is not parked'),
    Check("Previous Owner Write Should Be Refused", previous_owner_write_should_be_refused, (
        Phrase("the previous owner's write was refused", lambda: answered(
            cmd.StaleOwnerWrite, "stale_owner_write's answer (accepted?)", False,
            same_value)),)),
    Check("Operator Alerts Should Be", operator_alerts_should_be, (
        Phrase('the operator alerts are "{aliases}"',
               lambda aliases: operator_alerts_should_be(*alias_list(aliases))),
        Phrase("no operator alert was raised", operator_alerts_should_be),
    )),
    Check("Parked Request Should Be", parked_request_should_be, (
        Phrase("the request parked is request {number:d}", lambda number: answered(
            cmd.ParkRequest, "park_request's answer, the request it landed on",
            request_label(number - 1))),)),
    Check("Operator Requests Should Be", operator_requests_should_be, (
        Phrase('the operator requests are "{requests}"',
               lambda requests: operator_requests_should_be(*alias_list(requests))),)),
)

VOCABULARY = Vocabulary(area="redelivery", noun="re-delivery", start=None,
                        commands=DECLARATIONS, checks=CHECKS, runs_through=JOB_RUNTIME_LIBRARY)
