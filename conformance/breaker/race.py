"""The half-open probe race: many callers in several processes hit one SQL breaker at once.

The parent trips a target's breaker in a database and moves a fixed clock past the
cooldown; spawned worker processes, each with its own connections and several caller
threads, then call the target at the same moment. Exactly one call may be the probe
(CB-007). Time is a fixed virtual instant in every process; the only real-time bounds are
guards against a hung process.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import Counter
from datetime import datetime, timedelta
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier

from jobconform.backends.breaker.runtime import BreakerDeployment, StoreBreakerRuntime
from jobconform.backends.breaker.sql import SqlBreakerStore
from jobconform.backends.sql.database import create_store_engine, migrate
from jobconform.conformance.clock import EPOCH
from jobconform.reference.breaker.oracle import BreakerSettings

GUARD_SECONDS = 120.0
TARGET = "raced"
SPAWN = multiprocessing.get_context("spawn")


class FixedClock:
    """A clock standing at one instant: the race happens at a single virtual moment."""

    def __init__(self, instant: datetime) -> None:
        self._instant = instant

    def now(self) -> datetime:
        return self._instant


def engaged_runtime(store: SqlBreakerStore, at: datetime,
                    settings: BreakerSettings) -> StoreBreakerRuntime:
    runtime = StoreBreakerRuntime(store, FixedClock(at), settings, BreakerDeployment())
    runtime.set_global_switch(True)
    runtime.set_opt_in(TARGET, True)
    return runtime


def trip(url: str, store_type: type[SqlBreakerStore], settings: BreakerSettings) -> datetime:
    """Empty the breaker tables, trip the target at EPOCH; returns the end of the cooldown."""
    engine = create_store_engine(url)
    migrate(engine)
    store = store_type(engine)
    store.clear()
    runtime = engaged_runtime(store, EPOCH, settings)
    for number in range(settings.failure_threshold):
        runtime.admit(TARGET, f"trip-{number}")
        runtime.record(TARGET, f"trip-{number}", "failure", sorted(settings.counted_classes)[0])
    engine.dispose()
    return EPOCH + timedelta(seconds=settings.cooldown_seconds)


def call_at_once(url: str, store_type: type[SqlBreakerStore], settings: BreakerSettings,
                 at: datetime, worker: int, callers: int, start: Barrier,
                 answers: Queue[list[str]]) -> None:
    """One worker process: `callers` threads call the target when every process is ready."""
    engine = create_store_engine(url)
    runtime = engaged_runtime(store_type(engine), at, settings)
    ready = threading.Barrier(callers)
    results: list[str] = []
    lock = threading.Lock()

    def caller(number: int) -> None:
        ready.wait(GUARD_SECONDS)
        answer = runtime.admit(TARGET, f"w{worker}-c{number}")
        with lock:
            results.append(answer)

    start.wait(GUARD_SECONDS)
    threads = [threading.Thread(target=caller, args=(n,)) for n in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(GUARD_SECONDS)
    answers.put(results)
    engine.dispose()


def run_probe_race(url: str, store_type: type[SqlBreakerStore] = SqlBreakerStore,
                   processes: int = 4, callers: int = 4,
                   settings: BreakerSettings | None = None) -> Counter[str]:
    """Race `processes` x `callers` calls for the probe; returns how many got each answer.

    Raises:
        TimeoutError: a worker process did not report within the guard (it hung).
    """
    settings = settings if settings is not None else BreakerSettings()
    at = trip(url, store_type, settings)
    start = SPAWN.Barrier(processes)
    answers: Queue[list[str]] = SPAWN.Queue()
    workers = [SPAWN.Process(target=call_at_once, args=(
        url, store_type, settings, at, number, callers, start, answers))
        for number in range(processes)]
    for worker in workers:
        worker.start()
    counted: Counter[str] = Counter()
    try:
        for _ in workers:
            counted.update(answers.get(timeout=GUARD_SECONDS))
    except Exception as error:
        raise TimeoutError(f"a breaker worker process did not report within {GUARD_SECONDS} s"
                           " of real time; it hangs") from error
    finally:
        for worker in workers:
            worker.join(GUARD_SECONDS)
    return counted
