"""LC-038's checks at volume: commands compared only where they changed the state
(`Harness.comparing_changes_only`), the rest compared by the next full observation, and
a read by id that answers another job's record."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from runtime_stand_ins import MemoryBackendOf

from jobconform.backends.memory import MemoryRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings
from jobconform.backends.store import StoredJob
from jobconform.conformance.harness import Divergence, Harness
from jobconform.conformance.lifecycle.gallery import (
    ListingCutAtAPageRuntime,
    ReadTakesANeighboursRowRuntime,
)
from jobconform.reference import commands as cmd
from jobconform.reference.lifecycle import VOLUME
from jobconform.spec import load_registry


class CountingRuntime(MemoryRuntime):
    """The memory runtime, counting the whole listings and reads by id it answers."""

    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        super().__init__(settings, clock)
        self.listings = 0
        self.reads = 0

    def list_jobs(self, status: str | None = None) -> Sequence[StoredJob]:
        self.listings += 1
        return super().list_jobs(status)

    def get(self, job_id: str) -> StoredJob | None:
        self.reads += 1
        return super().get(job_id)


def harness_on(runtime_type: type[MemoryRuntime]) -> Harness:
    backend = MemoryBackendOf(runtime_type)
    return Harness(backend, load_registry().profile(backend.profile), max_tasks=1000)


def submit_in_bulk(harness: Harness, count: int) -> None:
    with harness.comparing_changes_only():
        for number in range(1, count):
            harness.run(cmd.Submit(f"v{number}"))
    harness.run(cmd.Submit(f"v{count}"))


def test_a_submission_compared_for_its_changes_reads_its_job_and_no_listing() -> None:
    harness = harness_on(CountingRuntime)
    runtime = harness.runtime
    assert isinstance(runtime, CountingRuntime)
    with harness.comparing_changes_only():
        for number in range(1, 51):
            harness.run(cmd.Submit(f"v{number}"))
        # Each read once, straight after submit returned (LC-031), and compared then
        # with the oracle's record after the command.
        assert (runtime.listings, runtime.reads) == (0, 50)
        harness.run(cmd.Get("v7"))  # a read changes nothing: its answer is all
        assert (runtime.listings, runtime.reads) == (0, 51)
    harness.run(cmd.Submit("v51"))  # outside: observed in full
    assert runtime.listings == 1
    harness.close()


def test_a_listing_cut_at_a_page_is_found_by_the_full_observation_after_the_bulk() -> None:
    harness = harness_on(ListingCutAtAPageRuntime)
    with pytest.raises(Divergence) as caught:
        submit_in_bulk(harness, VOLUME)
    assert caught.value.primary == "LC-038"
    assert len(harness.commands) == VOLUME  # not before the last command
    harness.close()


def test_a_read_that_takes_a_neighbours_row_is_lc_038s_at_volume() -> None:
    harness = harness_on(ReadTakesANeighboursRowRuntime)
    with pytest.raises(Divergence) as caught:
        submit_in_bulk(harness, VOLUME)
    # The 201st job's read straight after its submission answers the 200th's record,
    # the same as its own but for the id.
    assert caught.value.primary == "LC-038"
    assert len(harness.commands) == ReadTakesANeighboursRowRuntime.PAGE + 1
    assert "'v200'" in str(caught.value)
    harness.close()
