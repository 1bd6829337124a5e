"""Re-delivery's commands (RD-001..RD-008), declared once (conformance/vocabulary.py).

The Behave steps (conformance/redelivery/steps.py) and the Robot keywords (the job
runtime's library, conformance/lifecycle/keywords.py) are derived from this list; the
wordings are the feature file's and the Robot suite's own. A check of an answer (what a
lease pass re-queued and parked, a late write refused) stays with the steps and keywords.
"""

from __future__ import annotations

from jobconform.conformance.vocabulary import Declaration, Phrase
from jobconform.reference import commands as cmd
from jobconform.reference.faults import FaultKind, StoreFault

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
    Declaration("Park Request", park_request, (
        Phrase('agent "{agent}" parks the operator request "{request}"', park_request),
    )),
    Declaration("Previous Owner Writes", previous_owner_writes, (
        Phrase('the previous owner of job "{alias}" reports {what}', _previous_owner_reports),
    )),
)
