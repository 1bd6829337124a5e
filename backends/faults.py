"""The injection point for store faults (`jobconform.reference.faults`), for our own stores.

A store that takes faults calls `WriteFaults.before_write()` before each write; the
harness arms a plan through the runtime's `inject_store_fault`. The SQL stores use
`SqlWriteFaults`, a SQLAlchemy `before_cursor_execute` listener on their engine that
counts the data-changing statements, so the fault strikes inside the store's real
transaction, which rolls back as it would on a lost connection.

An adapter of another runtime claims store faults in an area with the capability
`store-faults:<area>` (`jobconform.backends.protocol.store_faults`) and by giving its
runtime of that area two methods:

    inject_store_fault(fault: StoreFault | None) -> None
    store_fault_struck() -> bool

None disarms; `store_fault_struck` says whether the fault armed last met its write, as
only the adapter can see its store's writes. Until the plan is disarmed, the store must
raise `StoreWriteFailed` (a `StoreUnavailable`) at the planned write of a `fail` plan,
and act as a dead process from the planned write of a `crash` plan on: that write and
every later one do not happen, and no effect follows. A backend without the claim gets
the checks that need it skipped and reported "not claimed", never passed.
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, runtime_checkable

from sqlalchemy import Engine, event

from jobconform.backends.protocol import StoreUnavailable
from jobconform.reference.faults import FaultKind, StoreFault

__all__ = [
    "CrashedInStatement",
    "ProcessCrashed",
    "SqlWriteFaults",
    "StoreFault",
    "StoreFaults",
    "StoreFaultsNotClaimed",
    "StoreWriteFailed",
    "WriteFaults",
]

WRITE_STATEMENTS = ("INSERT", "UPDATE", "DELETE")


class StoreWriteFailed(StoreUnavailable):
    """The store refused one write (an injected fault); the write did not happen."""


class ProcessCrashed(BaseException):
    """The process died here (an injected crash). A BaseException, as no `except
    Exception` of the runtime could catch a real crash either: it unwinds the thread that
    met it, and the harness restarts the runtime."""


class StoreFaultsNotClaimed(ValueError):
    """A check planned a store fault on a backend that does not claim store faults in the
    area (`jobconform.backends.protocol.store_faults`)."""


@runtime_checkable
class StoreFaults(Protocol):
    """The optional capability of an area runtime: it takes a planned store fault."""

    def inject_store_fault(self, fault: StoreFault | None) -> None: ...

    def store_fault_struck(self) -> bool: ...


class WriteFaults:
    """Counts a store's writes while a plan is armed and strikes the planned one.

    Shared by every store object over the same data, so a plan armed through one
    reaches the writes of all; thread-safe, as the threaded runtimes write from many
    threads.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fault: StoreFault | None = None
        self._writes = 0
        self._struck = False

    def arm(self, fault: StoreFault | None) -> None:
        """Arm `fault` for the writes from now on (None: disarm); counting starts again."""
        with self._lock:
            self._fault = fault
            self._writes = 0
            if fault is not None:
                self._struck = False

    def struck(self) -> bool:
        """Whether the fault armed last has struck a write."""
        with self._lock:
            return self._struck

    def before_write(self) -> None:
        """Called before each write.

        Raises:
            StoreWriteFailed: this is the planned write of a `fail` plan.
            ProcessCrashed: this is the planned write of a `crash` plan, or a later one.
        """
        with self._lock:
            fault = self._fault
            if fault is None:
                return
            self._writes += 1
            if self._writes >= fault.write:
                self._struck = True
            if fault.kind is FaultKind.CRASH and self._writes >= fault.write:
                raise ProcessCrashed(f"the process crashed at store write {self._writes}"
                                     f" (planned at write {fault.write})")
            if fault.kind is FaultKind.FAIL and self._writes == fault.write:
                raise StoreWriteFailed(f"store write {fault.write} failed (injected)")


class SqlWriteFaults(WriteFaults):
    """`WriteFaults` for a SQL store: while a plan is armed, a `before_cursor_execute`
    listener on the store's engine counts every INSERT, UPDATE and DELETE it runs as one
    write. The listener is there only while armed, so an engine that outlives the store
    (a database server's) keeps no trace of it."""

    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self._engine = engine
        self._listening = False

    def arm(self, fault: StoreFault | None) -> None:
        super().arm(fault)
        if fault is not None and not self._listening:
            event.listen(self._engine, "before_cursor_execute", self._before_cursor_execute)
            self._listening = True
        elif fault is None and self._listening:
            event.remove(self._engine, "before_cursor_execute", self._before_cursor_execute)
            self._listening = False

    def _before_cursor_execute(self, connection: Any, cursor: Any, statement: str,
                               parameters: Any, context: Any, executemany: bool) -> None:
        if statement.lstrip().upper().startswith(WRITE_STATEMENTS):
            try:
                self.before_write()
            except ProcessCrashed as crash:
                # SQLAlchemy closes a connection that meets a BaseException, and with it an
                # in-memory database: what the process committed would die with it. An
                # ordinary error rolls the transaction back; `transaction` then crashes.
                raise CrashedInStatement(str(crash)) from None


class CrashedInStatement(Exception):
    """A crash struck a SQL statement; `jobconform.backends.sql.database.transaction`
    raises it as `ProcessCrashed` once the transaction has rolled back."""
