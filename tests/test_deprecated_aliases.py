"""The shipped runtimes' deprecated aliases (deprecated-aliases): each does what the name
it replaces does, and warns where seed 004 says it does."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import DEPRECATED_ALIASES, RuntimeSettings
from jobconform.backends.task_store.memory import AsyncInMemoryTaskStore, InMemoryTaskStore
from jobconform.backends.task_store.threaded import RequestThreadTaskStore
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference.store.oracle import TaskRecord


def _record() -> TaskRecord:
    return TaskRecord("t1", "mail.send", "queued", EPOCH, None, None, None, None, 0, 3)


def test_put_saves_what_save_saves_and_warns() -> None:
    async_store = AsyncInMemoryTaskStore()
    with pytest.warns(DeprecationWarning, match="put"):
        asyncio.run(async_store.put(_record()))
    assert asyncio.run(async_store.get("t1")) == _record()
    threaded = RequestThreadTaskStore(InMemoryTaskStore())
    with pytest.warns(DeprecationWarning, match="put"):
        threaded.put(_record())
    assert threaded.get("t1") == _record()
    threaded.close()


def test_start_reaper_takes_the_old_keywords_with_a_warning_each() -> None:
    backend = MemoryBackend()
    assert DEPRECATED_ALIASES in backend.capabilities
    clock = VirtualClock(EPOCH)
    runtime = backend.open(RuntimeSettings(1, None), clock)
    with pytest.warns(DeprecationWarning) as heard:
        runtime.start_reaper(interval_seconds=10.0, max_age_seconds=30.0)
    assert len(heard) == 2
    # A sweep every 10 s, not every 10 ms: none is due before 10 s.
    clock.advance(9.0)
    runtime.settle()
    assert runtime.reaper_status()["sweeps"] == 0
    clock.advance(1.0)
    runtime.settle()
    assert runtime.reaper_status()["sweeps"] == 1
    runtime.close()


def test_attempt_number_reads_as_retry_count() -> None:
    from jobconform.backends.store import StoredJob

    job = StoredJob("j", "queued", EPOCH + timedelta(0), retry_count=2)
    assert job.attempt_number == 2
