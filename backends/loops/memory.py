"""The step loop runtime: loops advance when the harness calls `settle`, over any loop store.

Deterministic and single-threaded. On `settle` it records every run whose outcome the
agent has decided, applies every per-run timeout and delay end that the clock has
reached, and starts the next runs, until nothing more can happen at this instant. The
memory backend uses it over a dict store, the SQL backend over its tables. Given an event
sink, it reports each step's ended runs and ended loop once the step is saved (LP-019).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

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
    snapshots,
)
from jobconform.backends.protocol import Clock


class LoopStore(Protocol):
    """Where loop rows live. `load` and `running` return copies the caller may change and
    hand back to `save`."""

    def next_id(self) -> str: ...
    def save(self, loop: StoredLoop) -> None: ...
    def load(self, loop_id: str) -> StoredLoop | None: ...
    def all(self) -> list[StoredLoop]: ...


class InMemoryLoopStore:
    """Loop rows in a dict. Beside the `LoopStore` reads, which copy, it lends its rows to a
    reader that only reads them (`lend`, `lend_all`): a loop runtime reads every loop after
    every command of a check, and a copy of each would cost more than the read."""

    def __init__(self) -> None:
        self._loops: dict[str, StoredLoop] = {}
        self._ids = itertools.count(1)

    def next_id(self) -> str:
        return f"loop-{next(self._ids)}"

    def save(self, loop: StoredLoop) -> None:
        self._loops[loop.loop_id] = loop.copy()

    def load(self, loop_id: str) -> StoredLoop | None:
        loop = self._loops.get(loop_id)
        return None if loop is None else loop.copy()

    def all(self) -> list[StoredLoop]:
        return [loop.copy() for loop in self._loops.values()]

    def running(self) -> list[StoredLoop]:
        """Copies of the loops still running, the only ones a step can change."""
        return [loop.copy() for loop in self._loops.values() if loop.status == "running"]

    def keep(self, loop: StoredLoop) -> None:
        """Store `loop` itself, not a copy: the caller hands it over and never changes it
        again (a runtime saving the copy it stepped)."""
        self._loops[loop.loop_id] = loop

    def lend(self, loop_id: str) -> StoredLoop | None:
        """The stored row itself, to read and never change."""
        return self._loops.get(loop_id)

    def lend_all(self) -> list[StoredLoop]:
        """The stored rows themselves, to read and never change."""
        return list(self._loops.values())


class StepLoopRuntime:
    """A loop runtime that acts only inside `start_loop`, `stop_loop` and `settle`.

    `events`, where given, hears of every ended run and every ended loop (LP-019).
    """

    def __init__(self, clock: Clock, config: LoopsConfig, store: LoopStore | None = None,
                 rules: LoopRules | None = None, events: LoopEvents | None = None) -> None:
        self.events = events
        self._clock = clock
        self._config = config
        self._store: LoopStore = store if store is not None else InMemoryLoopStore()
        self.rules = rules if rules is not None else LoopRules()
        self._agents: dict[str, LoopAgent] = {}
        self._memory: dict[str, RunnerMemory] = {}
        # loop id -> (the row lent, the clock's time, its snapshot then): see _snapshot
        self._snapshots: dict[str, tuple[StoredLoop, datetime, LoopSnapshot]] = {}

    def _now(self) -> datetime:
        return self._clock.now()

    def start_loop(self, params: LoopParameters, agent: LoopAgent) -> str:
        default = self._config.default_timeout_per_run_seconds
        self.rules.validate(params, default)
        loop = self.rules.new_loop(self._store.next_id(), params, default, self._now())
        self._save(loop)
        self._agents[loop.loop_id] = agent
        self._memory[loop.loop_id] = RunnerMemory()
        return loop.loop_id

    def settle(self) -> None:
        progressed = True
        while progressed:
            progressed = False
            now = self._now()
            for loop in self._running():
                if not self._due(loop, now):
                    continue
                if isinstance(self._store, InMemoryLoopStore):  # lent: step a copy
                    loop = loop.copy()
                before = Progress.of(loop)
                if self._step(loop):
                    self._commit(loop, before)
                    progressed = True

    def _running(self) -> list[StoredLoop]:
        """The loops still running. The memory store lends its own rows (`settle` copies
        the one it steps: a loop runtime settles after every command of a check, and
        most loops have nothing due); any other store's are copies."""
        if isinstance(self._store, InMemoryLoopStore):
            return [loop for loop in self._store.lend_all() if loop.status == "running"]
        return [loop for loop in self._store.all() if loop.status == "running"]

    def _due(self, loop: StoredLoop, now: datetime) -> bool:
        """Whether `_step` has something to do to the loop at `now`; reads it, changes
        nothing."""
        run = loop.in_flight
        if run is not None:
            agent = self._agents.get(loop.loop_id)
            return ((agent is not None and agent.decided(run.run_number))
                    or self.rules.run_timed_out(loop, now))
        return loop.next_run_at is not None and now >= loop.next_run_at

    def _read(self, loop_id: str) -> StoredLoop | None:
        """The loop to show, not to change: the memory store's own row, any other's copy."""
        if isinstance(self._store, InMemoryLoopStore):
            return self._store.lend(loop_id)
        return self._store.load(loop_id)

    def _read_all(self) -> list[StoredLoop]:
        """Every loop to show, not to change (as `_read`)."""
        if isinstance(self._store, InMemoryLoopStore):
            return self._store.lend_all()
        return self._store.all()

    def _commit(self, loop: StoredLoop, before: Progress) -> None:
        """Save what a step did to the loop, then tell the event sink (LP-019). The loop
        is this runtime's own copy, never changed once saved: the memory store keeps it
        as it is."""
        self._save(loop)
        self.rules.announce(self.events, loop, before)

    def _save(self, loop: StoredLoop) -> None:
        if isinstance(self._store, InMemoryLoopStore):
            self._store.keep(loop)
        else:
            self._store.save(loop)

    def _step(self, loop: StoredLoop) -> bool:
        """One thing that can happen to the loop now; False if nothing can."""
        now = self._now()
        memory = self._memory.setdefault(loop.loop_id, RunnerMemory())
        run = loop.in_flight
        if run is not None:
            agent = self._agents.get(loop.loop_id)
            result: RunResult | Exception
            if agent is not None and agent.decided(run.run_number):
                try:
                    result = self.rules.execute(agent, loop, run)
                except Exception as error:
                    result = error
            elif self.rules.run_timed_out(loop, now):
                result = RunResult(False, None, None, "TIMEOUT")
            else:
                return False
            self.rules.record(loop, memory, result, now)
            self._after_run(loop, memory, now)
            return True
        if loop.next_run_at is not None and now >= loop.next_run_at:
            self._next_run(loop, memory, now)
            return True
        return False

    def _after_run(self, loop: StoredLoop, memory: RunnerMemory, now: datetime) -> None:
        reason = self.rules.after_run(loop, memory, now)
        if reason is not None:
            self.rules.finish(loop, reason, now)
            return
        if loop.params.delay_seconds > 0:
            gate = self.rules.before_next_run(loop, memory, now)
            if gate is not None:
                self.rules.finish(loop, gate, now)
            else:
                loop.next_run_at = self.rules.delay_until(loop, now)
            return
        self._next_run(loop, memory, now)

    def _next_run(self, loop: StoredLoop, memory: RunnerMemory, now: datetime) -> None:
        gate = self.rules.before_next_run(loop, memory, now)
        if gate is not None:
            self.rules.finish(loop, gate, now)
        else:
            self.rules.begin_run(loop, now)

    def stop_loop(self, loop_id: str) -> str:
        loop = self._store.load(loop_id)
        if loop is None:
            raise LoopNotFound(loop_id)
        if loop.status != "running":
            return "already_done"
        before = Progress.of(loop)
        loop.stop_requested = True
        if loop.in_flight is None:  # waiting out a delay: nothing in flight to finish
            self.rules.finish(loop, "user_stopped", self._now())
        self._commit(loop, before)
        return "stopping"

    def get_loop(self, loop_id: str) -> LoopSnapshot | None:
        loop = self._read(loop_id)
        return None if loop is None else self._snapshot(loop, self._now())

    def list_loops(self) -> Sequence[LoopSnapshot]:
        if not isinstance(self._store, InMemoryLoopStore):
            return snapshots(self.rules, self._read_all(), self._now())
        now = self._now()
        return [self._snapshot(loop, now) for loop in self._read_all()]

    def _snapshot(self, loop: StoredLoop, now: datetime) -> LoopSnapshot:
        """The loop's snapshot at `now`. A row the memory store lends is replaced, never
        changed, when the loop is saved, so its snapshot is kept for as long as the same
        row is lent and, where the snapshot shows the clock, the clock stands still: a
        check reads every loop after every command and every move of the clock, and most
        loops have not changed (most have ended)."""
        if not isinstance(self._store, InMemoryLoopStore):
            return self.rules.snapshot(loop, now)
        kept = self._snapshots.get(loop.loop_id)
        if kept is not None and kept[0] is loop and (
                kept[1] == now or not self.rules.shows_the_clock(loop)):
            return kept[2]
        shown = self.rules.snapshot(loop, now)
        self._snapshots[loop.loop_id] = (loop, now, shown)
        return shown

    def restart(self) -> None:
        """Forget the agents and the runner memory; interrupt every loop still running."""
        self._agents.clear()
        self._memory.clear()
        self.rules.interrupt_running(self._store.all(), self._now(), self._commit)

    def close(self) -> None:
        self._agents.clear()
