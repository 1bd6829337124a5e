"""Store faults in a lease pass (RD-007) and in the reaper's sweeps (RP-008): how the
lifecycle harness runs a `JobStoreFault` on a backend that claims them.

The fault is armed on the runtime (`inject_store_fault`, `jobconform.backends.faults`) for
the inner command only. A failed write must leave the pass or sweep as the oracle says.
A crash unwinds the lease pass at the planned write (`ProcessCrashed`); the harness then
reads what the dead pass left in the store and in the operator queue, compares it with the
oracle's writes before the crash, and runs the restarted rescuer's pass at once. The kit
cannot take an in-process rescuer's memory away: what it checks is that the store alone
holds what a new rescuer needs (a park's alert is marked on the job before it is raised).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from jobconform.backends.faults import ProcessCrashed, StoreFaults, StoreFaultsNotClaimed
from jobconform.backends.protocol import REAPER, REDELIVERY, Backend, JobView, Runtime, store_faults
from jobconform.conformance import blame
from jobconform.conformance.sinks import OperatorQueue
from jobconform.reference import commands as cmd
from jobconform.reference.faults import FaultKind
from jobconform.reference.lifecycle import JobState
from jobconform.reference.model import ReferenceModel

T = TypeVar("T")


class Harness(Protocol):
    """What running a store fault needs of the lifecycle harness (conformance/harness.py,
    its section "what `job_faults` needs of the harness"), named here so that this module
    does not import the harness that calls it."""

    @property
    def backend(self) -> Backend: ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def model(self) -> ReferenceModel: ...

    @property
    def aliases(self) -> dict[str, str]: ...

    @property
    def operator_queue(self) -> OperatorQueue | None: ...

    @property
    def faults_reaper(self) -> bool: ...

    @property
    def faults_redelivery(self) -> bool: ...

    def call(self, action: str, function: Callable[[], T]) -> T: ...

    def apply_plain(self, command: cmd.Command) -> object: ...

    def area_method(self, name: str) -> Callable[..., Any]: ...

    def adapter_fault(self, message: str) -> Exception: ...

    def defer_fault(self, what: str, expected: object, actual: object,
                    primary: str | None = None) -> None: ...

    def expected_of(self, job: JobState) -> object: ...

    def frozen(self, view: JobView) -> object: ...

REDELIVERY_FAULTS = "RD-007"
REAPER_FAULTS = "RP-008"


def fault_requirement(command: cmd.JobStoreFault) -> str:
    """The requirement a fault in this command checks first."""
    return REAPER_FAULTS if isinstance(command.command, cmd.AdvanceTime) else REDELIVERY_FAULTS


def check_fault_command(harness: Harness, command: cmd.JobStoreFault) -> None:
    """Raises:
        StoreFaultsNotClaimed: the backend does not claim store faults in the area.
        ValueError: a crash planned for a clock step, or a fault during a drain."""
    if isinstance(command.command, cmd.AdvanceTime):
        if not harness.faults_reaper:
            raise StoreFaultsNotClaimed(
                f"backend {harness.backend.name!r} does not claim {store_faults(REAPER)};"
                f" {REAPER_FAULTS} cannot be checked on it")
        if command.fault.kind is not FaultKind.FAIL:
            raise ValueError("the reaper's store faults are write failures only: a crash is"
                             " planned for a lease pass (ExpireLeases)")
        if harness.model.drain_deadline is not None:
            raise ValueError("no store fault while a drain-mode shutdown is under way: its"
                             " cancels would take the sweeps' writes")
        return
    if not harness.faults_redelivery:
        raise StoreFaultsNotClaimed(
            f"backend {harness.backend.name!r} does not claim {store_faults(REDELIVERY)};"
            f" {REDELIVERY_FAULTS} cannot be checked on it")


def run_under_fault(harness: Harness, command: cmd.JobStoreFault) -> object:
    """Apply `command` to the backend; its answer (a crashed pass's is the restarted
    rescuer's pass's)."""
    runtime = harness.runtime
    if not isinstance(runtime, StoreFaults):
        raise harness.adapter_fault(
            f"adapter {harness.backend.name!r} claims store faults for its job store but its"
            " runtime lacks inject_store_fault(fault) or store_fault_struck()")
    fault, inner = command.fault, command.command
    inject = runtime.inject_store_fault
    harness.call("inject_store_fault", lambda: inject(fault))
    answer: object = None
    crashed = False
    try:
        answer = harness.apply_plain(inner)
        if isinstance(inner, cmd.AdvanceTime):
            harness.call("settle", runtime.settle)  # the sweeps the step made due
    except ProcessCrashed:
        if fault.kind is not FaultKind.CRASH:
            raise harness.adapter_fault(
                f"adapter {harness.backend.name!r} crashed under a planned write failure"
                f" ({fault.describe()})") from None
        crashed = True
    finally:
        harness.call("inject_store_fault", lambda: inject(None))
    if isinstance(inner, cmd.AdvanceTime):
        _check_reaper_status(harness)
        return answer
    expected_crash = harness.model.crash_left is not None
    if crashed != expected_crash:
        harness.defer_fault(
            f"whether the lease pass died at its store write {fault.write} (a re-queue is"
            " one write, a park two: the mark, then the poison)", expected_crash, crashed)
    if not crashed:
        return answer
    if expected_crash:
        _check_crash_left(harness)
    # The restarted rescuer passes again at once, over the same store.
    return harness.apply_plain(inner)


def _check_reaper_status(harness: Harness) -> None:
    """The sweeps' count of deleted jobs holds every delete that landed (RP-008). Like
    every check here, a difference is held until the command's end state has passed
    (`Harness.defer_fault`)."""
    status_of = harness.area_method("reaper_status")
    actual = dict(harness.call("reaper_status", status_of))
    wanted = harness.model.reaper_status()
    if actual != wanted:
        model = harness.model
        harness.defer_fault("the reaper's status after the sweeps the fault met", wanted,
                            actual, blame.faulted_sweeps_primary(
                                wanted, actual, model.failed_sweeps, model.jobs))


def _check_crash_left(harness: Harness) -> None:
    """Before the restart: the store holds exactly the writes before the crash, and the
    alerts raised are those the writes before it guarded (RD-007)."""
    left = harness.model.crash_left
    assert left is not None
    views = list(harness.call("list_jobs", lambda: harness.runtime.list_jobs(None)))
    aliases = [harness.aliases.get(view.job_id, f"<unknown id {view.job_id}>")
               for view in views]
    if aliases != list(left):
        harness.defer_fault("the held jobs the crash left", list(left), aliases)
        return
    for alias, view in zip(aliases, views, strict=True):
        wanted = harness.expected_of(left[alias])
        actual = harness.frozen(view)
        if actual != wanted:
            harness.defer_fault(f"job {alias!r} as the crash left it", wanted, actual)
            return
    alert_states = harness.model.crash_alert_states or []
    if harness.operator_queue is not None:
        raised = [(harness.aliases.get(job_id, job_id), status)
                  for job_id, status in harness.operator_queue.raised()]
        if raised != alert_states:
            harness.defer_fault("operator alerts raised before the crash, each with its"
                                " job's status then", alert_states, raised)
            return
    pulled = harness.call("operator_alerts", harness.area_method("operator_alerts"))
    actual_alerts = [harness.aliases.get(job_id, job_id) for job_id in pulled]
    wanted_alerts = [alias for alias, _ in alert_states]
    if actual_alerts != wanted_alerts:
        harness.defer_fault("operator_alerts() after the crash", wanted_alerts, actual_alerts)
