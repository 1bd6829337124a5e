"""A machine's harness observes most commands in part and the rest later (issue 33): a
bug is still blamed on the step, and with the message, of a harness that observes every
command in full."""

from __future__ import annotations

import pytest

from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import RuntimeSettings
from jobconform.backends.store import QUEUED, RUNNING
from jobconform.conformance.clock import VirtualClock
from jobconform.conformance.harness import Divergence, Harness
from jobconform.reference import commands as cmd
from jobconform.spec import load_registry


class CancelsOnAnEmptyQueue(MemoryRuntime):
    """A dispatch that finds nothing queued cancels what runs: the oracle's jobs stay as
    they were, so the harness observes it in part."""

    def dispatch(self) -> None:
        if not self._store.list(QUEUED):
            for job in self._store.list(RUNNING):
                self.cancel(job.job_id)
        super().dispatch()


class CancelsOnAnEmptyQueueBackend(MemoryBackend):
    name = "test.cancels_on_an_empty_queue"

    def open(self, settings: RuntimeSettings, clock: VirtualClock) -> MemoryRuntime:
        return CancelsOnAnEmptyQueue(settings, clock)


def divergence(defers: bool, commands: list[cmd.Command], owed: bool = False) -> Divergence:
    registry = load_registry()
    backend = CancelsOnAnEmptyQueueBackend()
    harness = Harness(backend, registry.profile(backend.profile), registry,
                      defers_observations=defers)
    try:
        with pytest.raises(Divergence) as raised:
            for command in commands:
                harness.run(command)
            if owed:
                harness.observe_owed()
    finally:
        harness.close()
    return raised.value


def test_a_bug_of_a_command_observed_in_part_is_blamed_on_it_as_in_full() -> None:
    # The quiet dispatch (step 3) breaks the running job; the submission after it, also
    # observed in part, sees the counts differ: the commands are replayed, each observed
    # in full, and the failure is step 3's.
    commands = [cmd.Submit("a"), cmd.Dispatch(), cmd.Dispatch(), cmd.Submit("b")]
    in_full = divergence(False, commands)
    deferred = divergence(True, commands)
    assert len(in_full.commands) == 3
    assert str(deferred) == str(in_full)
    assert deferred.primary == in_full.primary


def test_a_sequence_that_ends_owing_an_observation_is_observed_in_full() -> None:
    commands = [cmd.Submit("a"), cmd.Dispatch(), cmd.Dispatch()]
    in_full = divergence(False, commands)
    assert str(divergence(True, commands, owed=True)) == str(in_full)


def test_nothing_is_owed_after_a_full_observation() -> None:
    registry = load_registry()
    backend = MemoryBackend()
    harness = Harness(backend, registry.profile(backend.profile), registry,
                      defers_observations=True)
    try:
        harness.run(cmd.Submit("a"))  # added alone: observed in part
        harness.run(cmd.Get("a"))  # quiet
        harness.run(cmd.Dispatch())  # changes the job: observed in full
        assert not harness._owes_observation
        # What the commands observed in part exercised counts once it passed.
        assert {"LC-008", "LC-016", "LC-024"} <= harness.exercised
    finally:
        harness.close()
