"""The composite gallery: the memory backend with its areas wired together wrongly.

Each entry changes one point of the kit's wiring (backends/composite/wiring.py) to a
mistake the seed's sections guard against; the area runtimes it wires stay correct.
`jobconform selftest` proves each is caught by every suite, naming the requirement in
`catches`.
"""

from __future__ import annotations

from collections.abc import Mapping

from jobconform.backends.composite.wiring import SharedAdmission, open_shared_admission
from jobconform.backends.memory import MemoryBackend
from jobconform.conformance.gallery import GalleryEntry, declares, opener_entry
from jobconform.reference.admission import RUNNING

# -- entries, each declared on its broken class (`declares`) in the order of the classes ------

GALLERY: list[GalleryEntry] = []


@declares(GALLERY)
def composite_entry(name: str, wiring: type[SharedAdmission], catches: str,
                    source: str) -> GalleryEntry:
    """The memory backend with a broken wiring, loadable as `<this module>:<name>`."""
    return opener_entry(__name__, name, MemoryBackend, "open_composite",
                        lambda backend, clock, config: open_shared_admission(
                            backend, clock, config, wiring), wiring, catches, source)


@composite_entry("composite_loop_run_bypasses_cap", "CX-001",
                 "seed 002 38.1: each iteration goes through capacity_manager admit/slot")
class LoopRunsBypassCap(SharedAdmission):
    """A loop's runs start directly on the loop runtime, never through the admission: they
    hold no slot, so a loop runs beside its owner's jobs past the owner's cap."""

    def admit_loop_run(self, work: str, owner: str) -> str:
        return RUNNING


@composite_entry("composite_fire_bypasses_cap", "CX-002",
                 "seed 002 10.14 AC #2: through capacity_manager admit/slot, no parallel"
                 " dispatch path")
class FiresBypassCap(SharedAdmission):
    """A reminder's fire dispatches its execution on a path of its own, outside the
    admission: it takes no slot of its owner."""

    def admit_fire(self, work: str, owner: str) -> None:
        return None


@composite_entry("composite_probe_without_free_slot", "CX-003",
                 "seed 002 10.11: a half-open probe is admitted only into a free slot"
                 " (never enqueued)")
class ProbeWithoutFreeSlot(SharedAdmission):
    """The half-open probe is admitted like any job, so with no free slot it waits in the
    backlog while its lease runs out, instead of being refused."""

    def free_slot(self, owner: str) -> bool:
        return True


@composite_entry("composite_drains_during_pause", "CX-004",
                 "seed 002 10.11.1: capacity drain hold-off")
class DrainsDuringPause(SharedAdmission):
    """The governor's pause is not read by the admission: a freed slot drains the backlog
    into the outage as usual."""

    def drain_held(self, paused: bool) -> bool:
        return False


@composite_entry("composite_reaps_leases_during_pause", "CX-005",
                 "seed 002 10.11.1: lease reaper hold-off (keeps async rows RUNNING)")
class ReapsLeasesDuringPause(SharedAdmission):
    """The lease reaper does not read the governor's pause: an orphan whose lease lapses
    during the pause is reclaimed at once (lease_expired), freeing its slot, instead of
    staying running until the pause has ended."""

    def lease_reclaim_held(self, paused: bool) -> bool:
        return False


@composite_entry("composite_loop_not_told_of_timeout", "CX-006",
                 "seed 002 38.1: each iteration is an execution through admit/slot;"
                 " 10.7: the execution timeout kills the work")
class LoopNotToldOfTimeout(SharedAdmission):
    """The admission stops a loop's run at its owner's execution timeout and frees the
    slot, but the loop runtime is never told: the loop stays running with its run open
    for good, instead of failing the run with TIMEOUT and going on per its policy."""

    def run_timed_out(self, work: str, states: Mapping[str, str]) -> bool:
        return False
