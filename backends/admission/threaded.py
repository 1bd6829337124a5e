"""The threaded admission runtime: every execution holding a slot runs a body in a real thread.

A body thread enters its body when its execution starts and stays there until the
execution gives up its slot (finished, cancelled, released after an exhausted call
budget). A probe counts, per owner, the bodies inside at this instant and the most ever
seen at once, so a test (or the harness, after `settle`) can check that admission never
lets more bodies run than the effective cap allows. Admissions may come from any number
of client threads: the service's lock makes each check-then-record atomic.
"""

from __future__ import annotations

import threading
import time
from collections import Counter

from jobconform.backends.admission.runtime import AdmissionService, AdmissionStore, ExecutionRow
from jobconform.backends.protocol import Clock
from jobconform.reference.admission import AdmissionConfig

# A real-time limit on waiting for body threads to enter or leave their bodies. It only
# guards against a hung thread: a healthy one takes microseconds.
SETTLE_TIMEOUT_SECONDS = 30.0


class BodiesDidNotSettle(RuntimeError):
    """Body threads did not enter or leave their bodies within the real-time limit."""


class ThreadedAdmissionRuntime(AdmissionService):
    """See backends/admission/protocol.py; plus `bodies_running` and `peak_bodies_running`."""

    def __init__(self, store: AdmissionStore, clock: Clock, config: AdmissionConfig) -> None:
        self._probe = threading.Condition()
        self._inside: Counter[str] = Counter()  # owner -> bodies inside now
        self._peak: Counter[str] = Counter()  # owner -> most bodies inside at once
        self._releases: dict[str, threading.Event] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._entered: set[str] = set()
        self._left: set[str] = set()
        self._start_order: list[str] = []
        self._fleet: list[ThreadedAdmissionRuntime] = [self]  # peers over the same store
        super().__init__(store, clock, config)

    # -- the hooks of the service -----------------------------------------------------------

    def _started(self, row: ExecutionRow) -> None:
        release = threading.Event()
        thread = threading.Thread(target=self._body, args=(row, release),
                                  name=f"admission-body-{row.execution_id}", daemon=True)
        with self._probe:
            self._releases[row.execution_id] = release
            self._threads[row.execution_id] = thread
            self._start_order.append(row.execution_id)
        thread.start()

    def _joined(self, peer: AdmissionService) -> None:
        """Either runtime may end work the other runs (a finish or a cancel reaching the
        fleet through the other worker): its body, wherever it runs, ends first."""
        if isinstance(peer, ThreadedAdmissionRuntime):
            self._fleet.append(peer)
            peer._fleet = self._fleet

    def _ended(self, row: ExecutionRow) -> None:
        """The body ends before its slot is given to anyone else: a real worker frees a
        slot when its body returns, so the next body never overlaps the last one."""
        for runtime in self._fleet:
            with runtime._probe:
                release = runtime._releases.get(row.execution_id)
                thread = runtime._threads.get(row.execution_id)
            if release is not None and thread is not None:
                break
        if release is None or thread is None:
            return
        release.set()
        thread.join(SETTLE_TIMEOUT_SECONDS)
        if thread.is_alive():
            raise BodiesDidNotSettle(f"the body of {row.execution_id!r} did not end within"
                                     f" {SETTLE_TIMEOUT_SECONDS:g} s of real time")

    def _restarted(self) -> None:
        """The process's body threads end with it: the restarted runtime runs none of the
        work that was running (AD-018), so its probe counts none of it."""
        with self._probe:
            bodies = [(execution, self._releases[execution], self._threads[execution])
                      for execution in self._releases]
        for _, release, _thread in bodies:
            release.set()
        for execution, _, thread in bodies:
            thread.join(SETTLE_TIMEOUT_SECONDS)
            if thread.is_alive():
                raise BodiesDidNotSettle(f"the body of {execution!r} did not end within"
                                         f" {SETTLE_TIMEOUT_SECONDS:g} s of real time")
        with self._probe:
            for execution, _, _ in bodies:
                del self._releases[execution], self._threads[execution]

    def _body(self, row: ExecutionRow, release: threading.Event) -> None:
        with self._probe:
            self._inside[row.owner] += 1
            self._peak[row.owner] = max(self._peak[row.owner], self._inside[row.owner])
            self._entered.add(row.execution_id)
            self._probe.notify_all()
        release.wait()  # the body is busy until its execution gives up the slot
        with self._probe:
            self._inside[row.owner] -= 1
            self._left.add(row.execution_id)
            self._probe.notify_all()

    # -- the probe ----------------------------------------------------------------------------

    def bodies_running(self, owner: str) -> int:
        """How many of the owner's bodies are inside their body now."""
        with self._probe:
            return self._inside[owner]

    def start_order(self) -> list[str]:
        """Every execution that got a slot, in the order it got it."""
        with self._probe:
            return list(self._start_order)

    def peak_bodies_running(self, owner: str) -> int:
        """The most of the owner's bodies ever inside at once."""
        with self._probe:
            return self._peak[owner]

    # -- settling and closing -------------------------------------------------------------------

    def _settled(self) -> bool:
        started, released = set(self._releases), {
            execution for execution, event in self._releases.items() if event.is_set()}
        return started <= self._entered and released <= self._left

    def settle(self) -> None:
        """Refuse calls past their timeout, then wait until every started body is inside
        and every released one has left (bounded by a real-time safety limit).

        Raises:
            BodiesDidNotSettle: a body thread hangs.
        """
        super().settle()
        deadline = time.monotonic() + SETTLE_TIMEOUT_SECONDS
        with self._probe:
            while not self._settled():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise BodiesDidNotSettle(
                        f"body threads did not settle within {SETTLE_TIMEOUT_SECONDS:g} s of"
                        f" real time (entered {sorted(self._entered)}, left"
                        f" {sorted(self._left)}, started {sorted(self._releases)})")
                self._probe.wait(remaining)

    def close(self) -> None:
        with self._probe:
            releases = list(self._releases.values())
            threads = list(self._threads.values())
        for release in releases:
            release.set()
        for thread in threads:
            thread.join(SETTLE_TIMEOUT_SECONDS)
        super().close()
