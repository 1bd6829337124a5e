"""Bridges that put a real runtime on the harness's virtual clock.

- `WallClock`: `time.time()`, `datetime.now()` and friends read the virtual clock, in
  every thread (freezegun); `importing_on_bridges()` imports a library that binds the clock
  at import so that what it binds is the bridges' own.
- `VirtualLoop`: a private asyncio event loop whose time is the virtual clock; settle runs
  every timer due, in due order, each at its own deadline; with `busy` (`InFlight`
  counts a client's calls awaiting a server), settle waits for their answers too.
- `ThreadWaits`: `time.sleep`, `Event.wait(timeout)`, `Condition.wait(timeout)` and
  `queue.Queue.get(timeout)` in the runtime's own threads end on the virtual clock, settle
  sees when they are all idle, and `closing()` ends them at once for the runtime's close.
- `DispatchGate`: a runtime that starts work on its own begins bodies only at dispatch;
  `as_dispatched` reads the records of a runtime that marks a job running itself.
- `Deliveries`: settle for a worker fed by a broker whose threads wait where no bridge sees
  (a socket, a C queue): the adapter says what it sent and where each body runs; `until`
  waits out a step the library takes after a body returned (a broker's acknowledgement).
- `DerivedHealth`: health counters from the job records, for runtimes without counters;
  `JobRecords`: the records themselves, for libraries that keep none with the spec's fields;
  `RedeliveryRecord`: one with the redelivery area's fields, as a view over them.
- `HeldSchedules`: a scheduler library's schedules and executions, kept for it with the
  protocol's reads (get, list, history, trigger), for libraries that fire but keep no records;
  with a `ScheduleLibrary` (check, declare, withdraw) it answers the writes too;
  `Schedulers`: a scheduler's peers and restarts, their autonomy, crash and close;
  `HeldScheduler`: the whole scheduling runtime over those two and a library's machinery.
- `keeping_signal_handlers`: a worker that installs signal handlers in the main thread
  leaves the harness's in place.

docs/validate-your-runtime.md walks through them with two worked runtimes;
docs/runtime-shapes.md says which to use for each shape of runtime, and how it closes.
"""

from jobconform.bridges.deliveries import Deliveries, DeliveriesTimeout, until
from jobconform.bridges.gate import DispatchGate
from jobconform.bridges.health import DERIVED_HEALTH_NOTE, DerivedHealth
from jobconform.bridges.loop import CoroutineNeverFinished, InFlight, VirtualLoop
from jobconform.bridges.records import JobRecord, JobRecords, RedeliveryRecord
from jobconform.bridges.schedules import (
    HeldMachinery,
    HeldScheduler,
    HeldSchedules,
    Machinery,
    ScheduleLibrary,
    Schedulers,
    known_zone,
)
from jobconform.bridges.signals import keeping_signal_handlers
from jobconform.bridges.threads import SettleTimeout, ThreadWaits
from jobconform.bridges.wallclock import WallClock, importing_on_bridges
from jobconform.reference.model import Health

__all__ = [
    "DERIVED_HEALTH_NOTE",
    "CoroutineNeverFinished",
    "Deliveries",
    "DeliveriesTimeout",
    "DerivedHealth",
    "DispatchGate",
    "Health",
    "HeldMachinery",
    "HeldScheduler",
    "HeldSchedules",
    "InFlight",
    "JobRecord",
    "JobRecords",
    "Machinery",
    "RedeliveryRecord",
    "ScheduleLibrary",
    "Schedulers",
    "SettleTimeout",
    "ThreadWaits",
    "VirtualLoop",
    "WallClock",
    "importing_on_bridges",
    "keeping_signal_handlers",
    "known_zone",
    "until",
]
