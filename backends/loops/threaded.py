"""Loops on real threads: each loop's runs execute on a worker thread of its own.

The worker thread is the seed's runner loop written straight (seed 002 §38): start a run,
wait for the agent or the per-run timeout, execute the agent call on this thread, record
the run, judge it, check the gate before the next run, sleep out the delay (never past
the deadline), and go round again. Every wait sleeps on the runtime's condition with the
clock deciding when a timed wait ends, so under the kit's virtual clock time passes only
when the harness advances it.

`settle()` returns once every loop thread has looked at the world as it is now and is
blocked again (on an undecided run, a timeout or a delay) or has ended its loop. It asks
each thread for a fresh look by bumping a generation counter; a thread records the
generation it saw when it blocks. The wait is bounded by a real-time safety limit.

Given an event sink, a loop thread reports each ended run and its loop's end right after
saving them, still holding the runtime's lock (LP-019), so a settle never returns between
a save and its events.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from jobconform.backends.loops.memory import LoopStore
from jobconform.backends.loops.protocol import (
    LoopAgent,
    LoopEvents,
    LoopNotFound,
    LoopParameters,
    LoopsConfig,
    LoopSnapshot,
    RunResult,
)
from jobconform.backends.loops.runner import (
    LoopRules,
    Progress,
    RunnerMemory,
    StoredLoop,
    StoredRun,
    snapshots,
)
from jobconform.backends.threaded.clock import WaitableClock
from jobconform.backends.threaded.worker import SettleTimeout

SETTLE_LIMIT_SECONDS = 10.0
JOIN_LIMIT_SECONDS = 10.0


class ThreadedLoopRuntime:
    """Args:
        clock: the clock the threads sleep on.
        config: the profile's loop defaults.
        open_store: called once now and again after each restart; it returns the store
            on the same data (a restart loses only what the process held).
        on_close: releases what the store needs (an engine), after the threads ended.
        events: hears of every ended run and every ended loop (LP-019), if given.
    """

    def __init__(self, clock: WaitableClock, config: LoopsConfig,
                 open_store: Callable[[], LoopStore],
                 on_close: Callable[[], None] = lambda: None,
                 rules: LoopRules | None = None,
                 settle_limit: float = SETTLE_LIMIT_SECONDS,
                 events: LoopEvents | None = None) -> None:
        self.events = events
        self._clock = clock
        self._config = config
        self._open_store = open_store
        self._on_close = on_close
        self._store = open_store()
        self.rules = rules if rules is not None else LoopRules()
        self._settle_limit = settle_limit
        self._state = threading.Condition()
        self._generation = 0
        self._threads: dict[str, threading.Thread] = {}  # live loop threads by loop id
        self._parked: dict[str, int] = {}  # loop id -> generation it saw when it blocked
        self._stop_flags: set[str] = set()
        self._leaving = False  # a restart or close is taking the threads down
        self._crashes: list[str] = []

    # -- the caller's side -------------------------------------------------------------------

    def start_loop(self, params: LoopParameters, agent: LoopAgent) -> str:
        default = self._config.default_timeout_per_run_seconds
        self.rules.validate(params, default)
        with self._state:
            loop = self.rules.new_loop(self._store.next_id(), params, default,
                                       self._clock.now())
            self._store.save(loop)
            thread = threading.Thread(target=self._run_loop, args=(loop, agent), daemon=True,
                                      name=f"jobconform-loop-{loop.loop_id}")
            self._threads[loop.loop_id] = thread
            thread.start()
            return loop.loop_id

    def stop_loop(self, loop_id: str) -> str:
        with self._state:
            if loop_id in self._threads:
                self._stop_flags.add(loop_id)
                self._state.notify_all()
                return "stopping"
            loop = self._store.load(loop_id)
            if loop is None:
                raise LoopNotFound(loop_id)
            return "already_done"

    def settle(self) -> None:
        """Raises SettleTimeout (with each thread's stack position) when not quiet in time."""
        with self._state:
            self._generation += 1
            wanted = self._generation
            self._state.notify_all()
            quiet = self._state.wait_for(
                lambda: all(self._parked.get(loop_id, -1) >= wanted
                            for loop_id in self._threads),
                timeout=self._settle_limit)
            crashes, self._crashes = self._crashes, []
        if crashes:
            raise RuntimeError("a loop thread failed: " + "\n".join(crashes))
        if not quiet:
            busy = sorted(set(self._threads) - {loop_id for loop_id, seen in
                                                self._parked.items() if seen >= wanted})
            raise SettleTimeout(f"loop threads {busy} did not block again within"
                                f" {self._settle_limit:g} s of real time")

    def get_loop(self, loop_id: str) -> LoopSnapshot | None:
        with self._state:
            loop = self._store.load(loop_id)
            return None if loop is None else self.rules.snapshot(loop, self._clock.now())

    def list_loops(self) -> Sequence[LoopSnapshot]:
        with self._state:
            return snapshots(self.rules, self._store.all(), self._clock.now())

    def restart(self) -> None:
        """End the threads as a process exit would, then run start-up recovery."""
        self._take_threads_down()
        with self._state:
            self._store = self._open_store()
            self.rules.interrupt_running(self._store.all(), self._clock.now(), self._commit)

    def _commit(self, loop: StoredLoop, before: Progress) -> None:
        """Save the loop, then tell the event sink what the save holds (LP-019); called
        with the runtime's lock held."""
        self._store.save(loop)
        self.rules.announce(self.events, loop, before)

    def close(self) -> None:
        self._take_threads_down()
        self._on_close()

    def _take_threads_down(self) -> None:
        with self._state:
            self._leaving = True
            self._state.notify_all()
            threads = list(self._threads.values())
        for thread in threads:
            thread.join(JOIN_LIMIT_SECONDS)
        with self._state:
            self._leaving = False
            self._threads.clear()
            self._parked.clear()
            self._stop_flags.clear()

    # -- the loop thread ---------------------------------------------------------------------

    def _wait(self, loop_id: str, ready: Callable[[], bool], until: datetime | None) -> bool:
        """Block (holding the condition's lock as the caller does) until `ready()`, the
        clock reaching `until`, or a restart; True only for `ready()`."""
        while True:
            if self._leaving:
                return False
            if ready():
                return True
            if until is not None and self._clock.now() >= until:
                return False
            self._parked[loop_id] = self._generation
            self._state.notify_all()  # a settle may be waiting for this thread
            if until is None:
                self._state.wait()
            else:
                self._clock.wait_until(self._state, until)
            self._parked.pop(loop_id, None)

    def _execute(self, agent: LoopAgent, loop: StoredLoop,
                 run: StoredRun) -> RunResult | Exception:
        """The agent call, on this thread and outside the runtime's lock."""
        self._state.release()
        try:
            return self.rules.execute(agent, loop, run)
        except Exception as error:
            return error
        finally:
            self._state.acquire()

    def _run_loop(self, loop: StoredLoop, agent: LoopAgent) -> None:
        loop_id = loop.loop_id
        with self._state:
            try:
                self._loop_body(loop, agent)
            except Exception as error:  # reported by the next settle, never swallowed
                self._crashes.append(f"loop {loop_id}: {type(error).__name__}: {error}")
            finally:
                self._threads.pop(loop_id, None)
                self._parked.pop(loop_id, None)
                self._stop_flags.discard(loop_id)
                self._state.notify_all()

    def _loop_body(self, loop: StoredLoop, agent: LoopAgent) -> None:
        rules, memory, loop_id = self.rules, RunnerMemory(), loop.loop_id
        while True:
            run = loop.in_flight
            assert run is not None
            timeout_at = run.started_at + timedelta(seconds=loop.timeout_per_run_seconds)
            number = run.run_number
            decided = self._wait(loop_id, functools.partial(agent.decided, number), timeout_at)
            if self._leaving:
                return
            result = (self._execute(agent, loop, run) if decided
                      else RunResult(False, None, None, "TIMEOUT"))
            if self._leaving:
                return
            now = self._clock.now()
            before = Progress.of(loop)
            loop.stop_requested = loop.stop_requested or loop_id in self._stop_flags
            rules.record(loop, memory, result, now)
            reason = rules.after_run(loop, memory, now) or rules.before_next_run(
                loop, memory, now)
            if reason is None and loop.params.delay_seconds > 0:
                loop.next_run_at = rules.delay_until(loop, now)
                self._commit(loop, before)
                self._wait(loop_id, lambda: loop_id in self._stop_flags, loop.next_run_at)
                if self._leaving:
                    return
                now = self._clock.now()
                before = Progress.of(loop)
                loop.stop_requested = loop.stop_requested or loop_id in self._stop_flags
                reason = rules.before_next_run(loop, memory, now)
            if reason is not None:
                rules.finish(loop, reason, now)
                self._commit(loop, before)
                return
            rules.begin_run(loop, now)
            self._commit(loop, before)
