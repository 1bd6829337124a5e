"""The store harness: each command goes to the backend's task store and to the oracle, and
their answers must agree.

A store may answer directly or with awaitables (seed 004's D-17 makes them async); the
harness awaits an awaitable answer on an event loop of its own whose time is the virtual
clock (`jobconform.bridges.VirtualLoop`), so both forms meet the same checks. Lists are
compared as sets, since the contract fixes no order. Every record the store hands out is
kept and compared again after each later command: it must not change (TS-008). A
concurrent save (TS-010) calls save from several real threads released together, each
awaiting its own answer on an event loop of its own, then lists the store from the
harness's thread: every record saved must be there. Reads and deletes run at once
(TS-012) the same way: each read is first made alone from the harness's thread, then all
together, and the answers must be the same. A store whose backend can be lost is cut off
through its fault seam (TS-011): every operation must then raise TASK_STORE_UNAVAILABLE and
change nothing; a store without the seam keeps its records in memory and must go on
answering. The first difference raises `Divergence` naming the requirement that explains
it first.
"""

from __future__ import annotations

import inspect
import json
import threading
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta, timezone
from functools import partial
from typing import Any, NamedTuple

from jobconform.backends.protocol import DEPRECATED_ALIASES, Backend
from jobconform.backends.task_store.protocol import STORE, reachability_seam
from jobconform.bridges.loop import CoroutineNeverFinished, VirtualLoop
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import (
    SAFETY_TIMEOUT_SECONDS,
    AdapterError,
    Divergence,
    ListedDeviations,
)
from jobconform.conformance.watchdog import guarded, run_at_once
from jobconform.reference.commands import Command
from jobconform.reference.store.commands import (
    AtOnce,
    BackendOutage,
    DeleteTask,
    GetTask,
    ListExpired,
    ListTasks,
    Operation,
    PutTask,
    Read,
    SaveConcurrently,
    SaveTask,
    StoreCommand,
    describe_store,
    is_write,
)
from jobconform.reference.store.oracle import (
    QUEUED,
    RUNNING,
    STATUSES,
    UNAVAILABLE,
    StoreOracle,
    TaskRecord,
    Unavailable,
    is_expired,
)
from jobconform.spec import Profile, Registry, load_registry

ASYNC_REQUIREMENT = "TS-009"
SNAPSHOT_REQUIREMENT = "TS-008"
CONCURRENT_SAVE_REQUIREMENT = "TS-010"
UNAVAILABLE_REQUIREMENT = "TS-011"
AT_ONCE_REQUIREMENT = "TS-012"
PUT_ALIAS_REQUIREMENT = "TS-013"
# Records handed out that the harness keeps re-checking (TS-008); the oldest go first.
HELD_SNAPSHOTS = 64
_MISSING = "<missing>"
RECORD_FIELDS = tuple(item.name for item in fields(TaskRecord))


@dataclass(frozen=True)
class Raised:
    """An operation raised instead of answering; `code` is the error's `code` attribute,
    if it has a text one (seed 004's TaskStoreError has)."""

    error_type: str
    message: str
    code: str | None = None

    @classmethod
    def of(cls, error: BaseException) -> Raised:
        code = getattr(error, "code", None)
        return cls(type(error).__name__, str(error), code if isinstance(code, str) else None)


def refused_as_unavailable(answer: object) -> bool:
    """Whether an operation's answer is the error an unreachable backend gives (TS-011)."""
    return isinstance(answer, Raised) and answer.code == UNAVAILABLE


def _agrees(expected: object, actual: object) -> bool:
    if isinstance(expected, Unavailable):
        return refused_as_unavailable(actual)
    return expected == actual


def _result_form(value: object) -> object:
    """A result as comparable data: 1, 1.0 and true stay apart, members in any order."""
    if value is None:
        return "null"  # json.dumps's text, without its call: most records have no result
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=True)
    except (TypeError, ValueError):
        return f"<not JSON: {value!r}>"


def _instant_form(value: object) -> object:
    if isinstance(value, datetime) and value.utcoffset() is not None:
        return value.astimezone(UTC)
    return value  # None, a naive datetime or something else: compared as it is


def _shown(value: object) -> str:
    return value.isoformat() if isinstance(value, datetime) else repr(value)


@dataclass(frozen=True)
class RecordForm:
    """A record reduced to comparable values, read from a store's view in one pass."""

    task_id: object
    module_id: object
    status: object
    submitted_at: object
    started_at: object
    completed_at: object
    result: object
    error: object
    retry_count: object
    max_retries: object

    @classmethod
    def of(cls, view: object) -> RecordForm:
        return cls.of_values(_values(view))

    @classmethod
    def of_values(cls, values: tuple[object, ...]) -> RecordForm:
        """The form of a view's field values (`_values`), in `RECORD_FIELDS` order."""
        (task_id, module_id, status, submitted_at, started_at, completed_at, result, error,
         retry_count, max_retries) = values
        return cls(task_id, module_id, status, _instant_form(submitted_at),
                   _instant_form(started_at), _instant_form(completed_at),
                   _result_form(result), error, retry_count, max_retries)

    def __repr__(self) -> str:
        shown = [f"{name}={_shown(getattr(self, name))}" for name in RECORD_FIELDS
                 if getattr(self, name) is not None]
        return f"Record({', '.join(shown)})"


# The types of field values that cannot change in place: a view showing the very same
# objects as when it was handed out shows the same record (see `_unchanged`).
_IMMUTABLE = frozenset({str, int, float, bool, type(None), datetime})


def _values(view: object) -> tuple[object, ...]:
    """A view's field values as they are, uncompared (what `RecordForm.of` reads)."""
    return tuple(getattr(view, name, _MISSING) for name in RECORD_FIELDS)


def _unchanged(view: object, then: tuple[object, ...]) -> bool:
    """Whether `view` still shows the very objects `then` held, each of a type that cannot
    change in place (instants with a fixed offset or none): then its `RecordForm` is the
    one it had, and need not be built again. False means only: compare the forms."""
    for name, before in zip(RECORD_FIELDS, then, strict=True):
        now = getattr(view, name, _MISSING)
        if now is not before or type(now) not in _IMMUTABLE:
            return False
        if isinstance(now, datetime) and type(now.tzinfo) not in (timezone, type(None)):
            return False
    return True


class HeldRecord(NamedTuple):
    """A record the store handed out (TS-008): the view, its form and field values then,
    and the step and command that handed it out (named only in a failure's message)."""

    step: int
    command: StoreCommand
    view: object
    then: RecordForm
    values: tuple[object, ...]

    @property
    def where(self) -> str:
        return f"step {self.step} ({describe_store(self.command)})"


def _sorted(forms: list[RecordForm]) -> tuple[RecordForm, ...]:
    return tuple(sorted(forms, key=lambda form: (str(form.task_id), repr(form))))


def _check_command(command: StoreCommand) -> None:
    if isinstance(command, AtOnce):
        for op in command.operations:
            _check_command(op)
    if isinstance(command, ListTasks) and command.status not in (None, *STATUSES):
        raise ValueError(f"list by a canonical status ({', '.join(STATUSES)}), not"
                         f" {command.status!r}; adapters translate their own names")
    if isinstance(command, ListExpired) and command.before.utcoffset() is None:
        raise ValueError(f"the cut-off {command.before!r} has no timezone; stores compare UTC"
                         " instants")


def _operation(op: Operation) -> tuple[str, Callable[[Any], object]]:
    """The store method an operation calls, and how it calls it."""
    match op:
        case SaveTask(record=record):
            return "save", lambda save: save(record)
        case GetTask(task_id=task_id):
            return "get", lambda get: get(task_id)
        case ListTasks(status=status):
            return "list", lambda listing: listing() if status is None else listing(status)
        case ListExpired(before=before):
            return "list_expired", lambda expired: expired(before)
        case DeleteTask(task_id=task_id):
            return "delete", lambda delete: delete(task_id)
    raise ValueError(f"not a store operation: {op!r}")


def _compared(op: Operation, answer: object) -> tuple[object, list[object]]:
    """An operation's answer in compared form, and the views it handed out."""
    if isinstance(answer, Raised):
        return answer, []
    if isinstance(op, SaveTask | DeleteTask):
        return None, []  # they answer nothing; what they return is not looked at
    if isinstance(op, GetTask):
        return (None, []) if answer is None else (RecordForm.of(answer), [answer])
    return StoreHarness._listed(answer)


def _selects(op: Read) -> Callable[[TaskRecord], bool]:
    """Which records a list or list_expired answers with."""
    if isinstance(op, ListExpired):
        return lambda record: is_expired(record, op.before)
    if isinstance(op, ListTasks):
        return lambda record: op.status is None or record.status == op.status
    return lambda record: record.task_id == op.task_id


def _expected_reading(op: Read, records: dict[str, TaskRecord]) -> object:
    """What `op` answers on a store holding `records`, in compared form."""
    chosen = [RecordForm.of(r) for r in records.values() if _selects(op)(r)]
    if isinstance(op, GetTask):
        return chosen[0] if chosen else None
    return _sorted(chosen)


def _read_fits(op: Read, answer: object, before: dict[str, TaskRecord],
               after: dict[str, TaskRecord]) -> bool:
    """Whether a read made beside writes shows each record as it was before or after
    the write that touched it (an untouched record has one version), each once."""
    if isinstance(op, GetTask):
        return answer in (_expected_reading(op, before), _expected_reading(op, after))
    if not isinstance(answer, tuple):
        return False
    shown = Counter(str(form.task_id) for form in answer)
    if any(count > 1 for count in shown.values()):
        return False
    by_id = {str(form.task_id): form for form in answer}
    selects = _selects(op)
    for task_id in before.keys() | after.keys() | by_id.keys():
        versions = (before.get(task_id), after.get(task_id))
        allowed = {RecordForm.of(v) if v is not None and selects(v) else None for v in versions}
        if by_id.get(task_id) not in allowed:
            return False
    return True


@dataclass
class StoreHarness:
    """Differential execution of store commands on one backend and the oracle.

    Args:
        backend: an adapter claiming the store area.
        profile: decides whether every operation must be awaitable (TS-009).
        registry: the spec, for requirement titles and TS-009's profiles.

    Raises:
        ValueError: the backend does not claim the area.
        AdapterError: the backend has no `open_store` or it raised.
    """

    backend: Backend
    profile: Profile
    registry: Registry | None = None
    safety_timeout: float = SAFETY_TIMEOUT_SECONDS
    clock: VirtualClock = field(default_factory=lambda: VirtualClock(EPOCH))
    commands: list[Command] = field(default_factory=list)
    exercised: set[str] = field(default_factory=set)
    listed: ListedDeviations = field(default_factory=ListedDeviations)

    def __post_init__(self) -> None:
        if STORE not in self.backend.capabilities:
            raise ValueError(f"backend {self.backend.name!r} does not claim the store area;"
                             " its task store cannot be checked")
        registry = self.registry if self.registry is not None else load_registry()
        self._titles = {r.id: r.title for r in registry.requirements}
        self.async_required = (
            self.profile.name in registry.requirement(ASYNC_REQUIREMENT).profiles)
        self.oracle = StoreOracle()
        self.held: list[HeldRecord] = []
        # Every version saved under each id, oldest first: a store showing a replaced
        # version broke the replacement (TS-002); one showing no saved version altered the
        # record (TS-001).
        self.saved: dict[str, list[RecordForm]] = {}
        self._loop: VirtualLoop | None = None
        opener: object = getattr(self.backend, "open_store", None)
        if not callable(opener):
            raise AdapterError(f"adapter {self.backend.name!r} claims the store area but has"
                               " no open_store(clock)")
        # Once a call of this backend's task store hangs, the later ones are not tried.
        self.hang_scope = f"{self.backend.name!r} store"
        with guarded(self.safety_timeout, f"opening {self.backend.name!r} task store",
                     self.hang_scope):
            try:
                self.store: Any = opener(self.clock)
            except Exception as error:
                raise AdapterError(f"adapter {self.backend.name!r} raised"
                                   f" {type(error).__name__}: {error} in open_store") from error
        # A store with a backend to lose offers the fault seam; one kept in memory does not
        # (TS-011), and an outage asked of it changes nothing.
        self.reachability = reachability_seam(self.store)
        self.outage = False  # an outage asked and not yet ended, whether or not it bites

    @property
    def has_backend(self) -> bool:
        """Whether the store can be cut off its backend (it offers the fault seam)."""
        return self.reachability is not None

    # -- the one operation ---------------------------------------------------------------

    def run(self, command: StoreCommand) -> object:
        """Apply `command` to both sides and compare the answers; return the backend's, as
        compared: a `RecordForm` or None for get, a sorted tuple of forms for the lists,
        None for save and delete, `Raised` for an operation that raised.

        Raises:
            Divergence: the answers differ, or a record handed out earlier changed.
            AdapterError: the adapter hung, or lacks an operation.
            ValueError: the command is malformed (a status that is not canonical, a
                cut-off without a timezone).
        """
        _check_command(command)
        self._check_against_state(command)
        self.commands.append(command)  # type: ignore[arg-type]
        if isinstance(command, AtOnce):
            return self._run_at_once(command)
        expected, requirements = self._expect(command)
        self.exercised.update(requirements)
        with guarded(self.safety_timeout, partial(describe_store, command), self.hang_scope):
            actual, views = self._apply(command)
        self.listed.check(len(self.commands),
                          partial(self._compare, command, expected, actual, requirements),
                          self._check_snapshots, self._adopt_snapshots)
        self._hold(command, views)
        return actual

    def run_oracle(self, command: StoreCommand) -> object:
        """The command applied to the oracle alone:
        the oracle's answer (the cost floor, see machine_runner.oracle_alone)."""
        _check_command(command)
        self._check_against_state(command)
        self.commands.append(command)  # type: ignore[arg-type]
        if isinstance(command, AtOnce):
            for operation in command.operations:
                self._expect_answer(operation)
            return _sorted([RecordForm.of(r) for r in self.oracle.records.values()])
        return self._expect(command)[0]

    def run_all(self, commands: list[StoreCommand]) -> None:
        for command in commands:
            self.run(command)

    def close(self) -> None:
        with guarded(self.safety_timeout, "closing the task store", self.hang_scope):
            try:
                closing = getattr(self.store, "close", None)
                answer = closing() if callable(closing) else None
                if inspect.isawaitable(answer):
                    self._event_loop().run(answer, name="close")
            finally:
                if self._loop is not None:
                    self._loop.close()
                    self._loop = None

    def _check_against_state(self, command: StoreCommand) -> None:
        """Refuse a batch the store's state gives no single right outcome, and an alias
        the backend does not claim to keep."""
        if isinstance(command, PutTask) and (
                DEPRECATED_ALIASES not in self.backend.capabilities):
            raise ValueError(f"backend {self.backend.name!r} does not claim"
                             f" {DEPRECATED_ALIASES}; the put alias cannot be checked on it")
        if isinstance(command, SaveConcurrently | AtOnce) and self.outage:
            raise ValueError("threads run at once only while the store's backend is"
                             " reachable: end the outage first")
        if isinstance(command, AtOnce):
            unknown = [op.task_id for op in command.operations
                       if isinstance(op, DeleteTask) and op.task_id not in self.oracle.records]
            if unknown:
                raise ValueError(f"deletes run at once name records the store holds, not"
                                 f" {unknown}: deleting an unknown id is asked alone (TS-005)")

    # -- the oracle's side ---------------------------------------------------------------

    def _expect(self, command: StoreCommand) -> tuple[object, tuple[str, ...]]:
        model = self.oracle
        if isinstance(command, BackendOutage):
            self.outage = command.down
            model.backend_outage(command.down, self.has_backend)
            return None, (UNAVAILABLE_REQUIREMENT,)
        if model.unreachable:
            return Unavailable(), (UNAVAILABLE_REQUIREMENT,)  # refused; nothing changes
        expected, requirements = self._expect_answer(command)
        if self.outage:  # asked of a store kept in memory: it must go on answering
            requirements = (*requirements, UNAVAILABLE_REQUIREMENT)
        return expected, requirements

    def _expect_answer(self, command: StoreCommand) -> tuple[object, tuple[str, ...]]:
        model = self.oracle
        match command:
            case SaveTask():
                replacing = command.record.task_id in model.records
                model.save(command.record)
                self.saved.setdefault(command.record.task_id, []).append(
                    RecordForm.of(command.record))
                return None, ("TS-002", "TS-001") if replacing else ("TS-001",)
            case PutTask():
                replacing = command.record.task_id in model.records
                model.save(command.record)
                self.saved.setdefault(command.record.task_id, []).append(
                    RecordForm.of(command.record))
                # The answer is the record read back after the put; where put and save
                # leave the same wrong record, the fault is save's (`_put`).
                return RecordForm.of(command.record), (
                    *(("TS-002",) if replacing else ()), "TS-001", PUT_ALIAS_REQUIREMENT)
            case GetTask():
                record = model.get(command.task_id)
                expected = None if record is None else RecordForm.of(record)
                return expected, model.explaining(command.task_id)
            case ListTasks():
                return _sorted([RecordForm.of(r) for r in model.list(command.status)]), \
                    ("TS-004",)
            case DeleteTask():
                model.delete(command.task_id)
                return None, ("TS-005",)
            case SaveConcurrently():
                model.save_concurrently(command.records)
                for record in command.records:
                    self.saved.setdefault(record.task_id, []).append(RecordForm.of(record))
                return _sorted([RecordForm.of(r) for r in model.list()]), \
                    (CONCURRENT_SAVE_REQUIREMENT, "TS-004")
            case ListExpired():
                unfinished = any(r.status in (QUEUED, RUNNING) for r in model.records.values())
                expected_list = _sorted([RecordForm.of(r)
                                         for r in model.list_expired(command.before)])
                return expected_list, ("TS-006", "TS-007") if unfinished else ("TS-006",)
        raise ValueError(f"not a store command: {command!r}")

    # -- the backend's side --------------------------------------------------------------

    def _event_loop(self) -> VirtualLoop:
        if self._loop is None:
            # Half the watchdog's limit: a coroutine that never finishes is reported as
            # the adapter's error before the watchdog ends the process.
            self._loop = VirtualLoop(self.clock, safety_limit_seconds=self.safety_timeout / 2)
        return self._loop

    def _call(self, operation: str, call: Callable[[Any], object]) -> object:
        """One operation on the store: its answer, awaited if awaitable, or `Raised`."""
        method = getattr(self.store, operation, None)
        if not callable(method):
            raise AdapterError(f"the task store of {self.backend.name!r} has no {operation}();"
                               " see jobconform.backends.task_store.protocol")
        try:
            answer = call(method)
        except Exception as error:
            return Raised.of(error)
        if self.async_required:
            self.exercised.add(ASYNC_REQUIREMENT)
            if not inspect.isawaitable(answer):
                raise self._fail((ASYNC_REQUIREMENT,), f"what {operation}() returned",
                                 "an awaitable (a coroutine), as the profile requires",
                                 f"a plain {type(answer).__name__}, answered by a blocking"
                                 " call")
        if not inspect.isawaitable(answer):
            return answer
        try:
            return self._event_loop().run(answer, name=f"{operation}()")
        except CoroutineNeverFinished as error:
            raise AdapterError(f"the task store's {operation}() never finished: {error}") \
                from error
        except Exception as error:
            return Raised.of(error)

    def _apply(self, command: StoreCommand) -> tuple[object, list[object]]:
        """The backend's answer in compared form, and the views it handed out."""
        match command:
            case BackendOutage():
                if self.reachability is not None:
                    self._cut_off(command.down)
                return None, []
            case SaveTask() | DeleteTask() | GetTask() | ListTasks() | ListExpired():
                return _compared(command, self._call(*_operation(command)))
            case PutTask():
                return self._put(command.record)
            case SaveConcurrently():
                answers = self._on_threads([_operation(SaveTask(record))
                                            for record in command.records])
                raised = next((a for a in answers if isinstance(a, Raised)), None)
                if raised is not None:
                    return raised, []
                return self._listed(self._call("list", lambda listing: listing()))
        raise ValueError(f"not a store command: {command!r}")

    def _put(self, record: TaskRecord) -> tuple[object, list[object]]:
        """The deprecated `put`, called as the SDK has it, then the record read back with
        `get`. The alias must agree with the name it replaces: it must warn as deprecated,
        be refused only where save is, and leave what `save` of the same record leaves,
        read back the same way (TS-013); saving a record again changes nothing (TS-002).
        What both leave is then compared with the oracle, so a fault of save's own is
        save's requirement, not the alias's."""
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always")
            answer = self._call("put", lambda put: put(record))
        if isinstance(answer, Raised):
            if not self.oracle.unreachable:
                raise self._fail((PUT_ALIAS_REQUIREMENT,), f"the answer to put({record.task_id!r})",
                                 "what save answers: nothing", answer)
            return answer, []
        if not any(issubclass(warning.category, DeprecationWarning) for warning in heard):
            raise self._fail((PUT_ALIAS_REQUIREMENT,), f"what put({record.task_id!r}) warned",
                             "a DeprecationWarning",
                             [f"{w.category.__name__}: {w.message}" for w in heard] or "none")
        read_back = GetTask(record.task_id)
        put_answer, views = _compared(read_back, self._call(*_operation(read_back)))
        self._call(*_operation(SaveTask(record)))
        saved_answer, _ = _compared(read_back, self._call(*_operation(read_back)))
        if put_answer != saved_answer:
            raise self._fail((PUT_ALIAS_REQUIREMENT,),
                             f"the record put({record.task_id!r}) left, against save's",
                             saved_answer, put_answer)
        return put_answer, views

    def _cut_off(self, down: bool) -> None:
        assert self.reachability is not None
        try:
            self.reachability(not down)
        except Exception as error:
            raise AdapterError(f"the task store of {self.backend.name!r} raised"
                               f" {type(error).__name__}: {error} in set_reachable"
                               f"({not down})") from error

    def _method(self, operation: str) -> Any:
        method = getattr(self.store, operation, None)
        if not callable(method):
            raise AdapterError(f"the task store of {self.backend.name!r} has no {operation}();"
                               " see jobconform.backends.task_store.protocol")
        return method

    def _on_threads(self, calls: list[tuple[str, Callable[[Any], object]]]) -> list[object]:
        """Make each call of a store operation on a thread of its own, the threads
        released together by a barrier; an awaitable answer is awaited on that thread, on
        an event loop of its own. Returns each call's answer, or `Raised`.

        Raises:
            Divergence: under a profile needing awaitables, a call answered directly.
            AdapterError: the store lacks an operation, or a call did not finish in time.
        """
        methods = [self._method(operation) for operation, _ in calls]
        # Half the watchdog's limit for each wait, so that a hung store is reported as
        # the adapter's error before the watchdog ends the process.
        limit = self.safety_timeout / 2
        start_together = threading.Barrier(len(calls))
        answers: list[object] = [None] * len(calls)
        awaited = [False] * len(calls)

        def caller(index: int) -> None:
            operation, call = calls[index]
            try:
                start_together.wait(timeout=limit)
                answer = call(methods[index])
                awaited[index] = inspect.isawaitable(answer)
                if inspect.isawaitable(answer):
                    loop = VirtualLoop(self.clock, safety_limit_seconds=limit)
                    try:
                        answer = loop.run(answer, name=f"{operation}()")
                    finally:
                        loop.close()
                answers[index] = answer
            except Exception as error:
                answers[index] = Raised.of(error)

        run_at_once(caller, [f"jobconform-{operation}-{index + 1}"
                             for index, (operation, _) in enumerate(calls)],
                    limit, "a call", "called the store")
        if self.async_required:
            self.exercised.add(ASYNC_REQUIREMENT)
            lazy = [operation for (operation, _), was in zip(calls, awaited, strict=True)
                    if not was]
            if lazy:
                raise self._fail((ASYNC_REQUIREMENT,), f"what {lazy[0]}() returned on a"
                                 " thread of its own", "an awaitable (a coroutine), as the"
                                 " profile requires", "a plain answer, given by a blocking"
                                 " call")
        return answers

    # -- operations at once (TS-012) ----------------------------------------------------------

    def _run_at_once(self, command: AtOnce) -> object:
        """Each read made alone first, where its own rules judge it; then every operation
        at once, each on a thread of its own; then the store listed from the harness's
        thread, and that list is the answer. A read made at once must see each record a
        write of the batch touches as before or after that write, every other record
        exactly as made alone."""
        step = len(self.commands)
        operations = command.operations
        before = dict(self.oracle.records)
        wanted = {index: self._expect_answer(op) for index, op in enumerate(operations)
                  if not is_write(op)}  # the reads answer the store as it was
        wanted |= {index: self._expect_answer(op) for index, op in enumerate(operations)
                   if is_write(op)}
        after = dict(self.oracle.records)
        self.exercised.update(rid for _, requirements in wanted.values() for rid in requirements)
        self.exercised.add(AT_ONCE_REQUIREMENT)
        everything = _sorted([RecordForm.of(r) for r in after.values()])
        views: list[object] = []
        alone: dict[int, object] = {}
        with guarded(self.safety_timeout, partial(describe_store, command), self.hang_scope):
            for index, op in enumerate(operations):
                if not is_write(op):
                    alone[index], handed = self._apply(op)
                    views += handed
            at_once = [_compared(op, answer) for op, answer in zip(
                operations, self._on_threads([_operation(op) for op in operations]),
                strict=True)]
            listed, handed = self._listed(self._call("list", lambda listing: listing()))
        views += [view for _, held in at_once for view in held] + handed

        def compare() -> None:
            for index, answer in alone.items():
                want, requirements = wanted[index]
                self._compare(operations[index], want, answer, requirements)
            for index, op in enumerate(operations):
                answer = at_once[index][0]
                if is_write(op) and isinstance(answer, Raised):
                    # A save raising beside others breaks TS-010 as in a concurrent save.
                    first = (CONCURRENT_SAVE_REQUIREMENT if isinstance(op, SaveTask)
                             else AT_ONCE_REQUIREMENT)
                    raise self._fail((first, AT_ONCE_REQUIREMENT, *wanted[index][1]),
                                     f"the answer to {describe_store(op)}, made at once"
                                     f" with {len(operations) - 1} other(s)", None, answer)
            if listed != everything:
                raise self._fail(self._blame_after_at_once(
                    command, everything, listed if isinstance(listed, tuple) else ()),
                                 f"the store's list after {describe_store(command)}",
                                 everything, listed)
            for index, op in enumerate(operations):
                if isinstance(op, SaveTask | DeleteTask) or _read_fits(
                        op, at_once[index][0], before, after):
                    continue
                want, requirements = wanted[index]
                shown: object = want
                if command.writes:
                    shown = (f"as before the writes, {want!r}, or with any of them"
                             f" made: {_expected_reading(op, after)!r}")
                raise self._fail((AT_ONCE_REQUIREMENT, *requirements),
                                 f"the answer to {describe_store(op)}, made at once with"
                                 f" {len(operations) - 1} other(s)", shown, at_once[index][0])

        self.listed.check(step, compare, self._check_snapshots, self._adopt_snapshots)
        self._hold(command, views)
        return listed

    def _blame_after_at_once(self, command: AtOnce, expected: tuple[RecordForm, ...],
                             actual: tuple[RecordForm, ...]) -> tuple[str, ...]:
        """A record saved in the batch and wrong afterwards is TS-010's (or the round
        trip's); one deleted in it and still there is TS-012's; any other, the list's."""
        saved = {op.record.task_id for op in command.writes if isinstance(op, SaveTask)}
        deleted = {op.task_id for op in command.writes if isinstance(op, DeleteTask)}
        differing = {str(form.task_id) for form in set(expected) ^ set(actual)}
        if differing & saved:
            records = tuple(op.record for op in command.writes if isinstance(op, SaveTask))
            return (*self._blame_concurrent(saved, expected, actual, records),
                    AT_ONCE_REQUIREMENT)
        if differing & deleted:
            return (AT_ONCE_REQUIREMENT, "TS-005")
        return (AT_ONCE_REQUIREMENT, *self._blame_list(ListTasks(), expected, actual))

    @staticmethod
    def _listed(found: object) -> tuple[object, list[object]]:
        if isinstance(found, Raised):
            return found, []
        try:
            views = list(found)  # type: ignore[call-overload]
        except TypeError:
            return f"<not a list: {found!r}>", []
        return _sorted([RecordForm.of(view) for view in views]), views

    # -- comparing -------------------------------------------------------------------------

    def _fail(self, requirements: tuple[str, ...], what: str, expected: object,
              actual: object) -> Divergence:
        return Divergence(requirements, what, expected, actual, self.commands, self._titles)

    def _compare(self, command: StoreCommand, expected: object, actual: object,
                 requirements: tuple[str, ...]) -> None:
        if _agrees(expected, actual):
            return
        if refused_as_unavailable(actual):
            # The error of an unreachable backend, from a store that was not cut off.
            requirements = (UNAVAILABLE_REQUIREMENT, *requirements)
        if isinstance(expected, Unavailable):
            pass  # cut off: whatever else it answered, TS-011 alone explains it
        elif isinstance(command, SaveConcurrently) and isinstance(actual, tuple):
            assert isinstance(expected, tuple)
            requirements = self._blame_concurrent(
                {record.task_id for record in command.records}, expected, actual,
                command.records)
        elif isinstance(command, ListTasks | ListExpired) and isinstance(actual, tuple):
            assert isinstance(expected, tuple)
            requirements = self._blame_list(command, expected, actual) + requirements
        elif isinstance(command, GetTask) and isinstance(actual, RecordForm):
            requirements = self._explaining_version(command.task_id, actual) + requirements
        elif isinstance(command, PutTask) and isinstance(actual, RecordForm):
            # Put and save agreed (`_put`): the record they both left is save's fault.
            requirements = (self._explaining_version(command.record.task_id, actual)
                            + requirements)
        raise self._fail(requirements, f"the answer to {describe_store(command)}", expected,
                         actual)

    def _blame_list(self, command: ListTasks | ListExpired, expected: tuple[RecordForm, ...],
                    actual: tuple[RecordForm, ...]) -> tuple[str, ...]:
        """The requirements explaining the first task id the two lists disagree on."""
        model = self.oracle
        wanted = Counter(expected)
        got = Counter(actual)
        differing = sorted({str(f.task_id) for f in (wanted - got) + (got - wanted)})
        if not differing:
            return ()
        task_id = differing[0]
        listed = [form for form in actual if form.task_id == task_id]
        held = model.get(task_id)
        if len(listed) > 1:
            return ("TS-004", "TS-002")
        if listed and (held is None or listed[0] != RecordForm.of(held)):
            # The store lists a version of the record it should not hold (a replaced or
            # deleted one, or one it altered): the rule of that record's history.
            return self._explaining_version(task_id, listed[0])
        if isinstance(command, ListExpired):
            return model.explaining_expiry(task_id)
        if listed:
            return ("TS-004",)  # the right record, where the filter should have left it out
        return ("TS-004", *model.explaining(task_id))

    def _blame_concurrent(self, saved_now: set[str], expected: tuple[RecordForm, ...],
                          actual: tuple[RecordForm, ...],
                          records: tuple[TaskRecord, ...] = ()) -> tuple[str, ...]:
        """The requirements explaining the first record the list after a concurrent save
        gets wrong: a record saved by one of the threads and missing is lost (TS-010);
        one shown as a version saved before, a replacement lost: the threads' (TS-010)
        where the same save made alone replaces it, else save's own rule (TS-002, issue
        33: the command's rule where its effect fails without the threads); one shown
        altered, the round trip (TS-001). A difference about a record the batch did not
        touch is the list's."""
        differing = sorted({str(form.task_id) for form in set(expected) ^ set(actual)}
                           & saved_now)
        if not differing:
            return (*self._blame_list(ListTasks(), expected, actual),
                    CONCURRENT_SAVE_REQUIREMENT)
        task_id = differing[0]
        listed = [form for form in actual if form.task_id == task_id]
        if not listed:
            return (CONCURRENT_SAVE_REQUIREMENT, "TS-004")
        if len(listed) > 1:
            return ("TS-004", "TS-002", CONCURRENT_SAVE_REQUIREMENT)
        if listed[0] in self.saved.get(task_id, [])[:-1]:
            record = next((r for r in records if r.task_id == task_id), None)
            if record is not None and not self._replaces_alone(record):
                return ("TS-002", CONCURRENT_SAVE_REQUIREMENT)
            return (CONCURRENT_SAVE_REQUIREMENT, "TS-002")
        return ("TS-001", CONCURRENT_SAVE_REQUIREMENT)

    def _replaces_alone(self, record: TaskRecord) -> bool:
        """Whether saving `record` once more, from this thread alone, leaves it held as
        saved. Asked only once the run has diverged: the save changes the store, and
        puts it where the oracle has it."""
        if isinstance(self._call(*_operation(SaveTask(record))), Raised):
            return True  # refused alone too: no answer on replacing
        read_back = GetTask(record.task_id)
        answer, _ = _compared(read_back, self._call(*_operation(read_back)))
        return answer == RecordForm.of(record)

    def _explaining_version(self, task_id: str, shown: RecordForm) -> tuple[str, ...]:
        """The rules explaining a wrong version of a held record: a version saved earlier
        is a replacement that did not replace (TS-002); one never saved, the round trip
        (TS-001)."""
        explained = self.oracle.explaining(task_id)
        if explained[0] == "TS-002" and shown not in self.saved.get(task_id, []):
            return ("TS-001", "TS-002")
        return explained

    # -- snapshots (TS-008) ------------------------------------------------------------------

    def _hold(self, command: StoreCommand, views: list[object]) -> None:
        step = len(self.commands)
        for view in views:
            values = _values(view)
            self.held.append(HeldRecord(step, command, view, RecordForm.of_values(values),
                                        values))
        del self.held[:-HELD_SNAPSHOTS]

    def _adopt_snapshots(self) -> None:
        """After a listed deviation, a handed-out record that changed is held as it is
        now, so that the same change is not reported again at every later step."""
        adopted = []
        for held in self.held:
            values = _values(held.view)
            adopted.append(held._replace(then=RecordForm.of_values(values), values=values))
        self.held = adopted

    def _check_snapshots(self) -> None:
        if not self.held:
            return
        self.exercised.add(SNAPSHOT_REQUIREMENT)
        for held in self.held:
            if _unchanged(held.view, held.values):
                continue
            now = RecordForm.of(held.view)
            if now != held.then:
                raise self._fail((SNAPSHOT_REQUIREMENT,),
                                 f"the record of task {held.then.task_id!r} handed out at"
                                 f" {held.where}", held.then, now)


# -- records written in checks ------------------------------------------------------------

DEFAULT_MODULE = "reports.build"
INSTANT_FIELDS = ("submitted_at", "started_at", "completed_at")


def record_from_fields(task_id: str, given: object) -> TaskRecord:
    """A record from the fields a check writes as a JSON object, instants in seconds after
    the kit's epoch: `{"status": "succeeded", "completed_at": 30, "result": 1.0}`. Unset
    fields take their defaults (module reports.build, queued, submitted at 0).

    Raises:
        ValueError: not an object, an unknown field, or a bad value.
    """
    if not isinstance(given, dict):
        raise ValueError(f"write a record's fields as a JSON object, not {given!r}")
    known = set(RECORD_FIELDS) - {"task_id"}
    unknown = set(given) - known
    if unknown:
        raise ValueError(f"unknown record field(s) {sorted(unknown)}; known:"
                         f" {', '.join(sorted(known))}")
    values: dict[str, Any] = {"module_id": DEFAULT_MODULE, "status": QUEUED,
                              "submitted_at": 0, **given}
    for name in INSTANT_FIELDS:
        seconds = values.get(name)
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, int | float):
                raise ValueError(f"{name} is written in seconds after the epoch, not"
                                 f" {seconds!r}")
            values[name] = EPOCH + timedelta(seconds=seconds)
    return TaskRecord(task_id=task_id, **values)


def at_seconds(seconds: float) -> datetime:
    """The instant `seconds` after the kit's epoch, as checks write cut-offs."""
    return EPOCH + timedelta(seconds=seconds)


def listed_ids(answer: object) -> list[str]:
    """The task ids of a list answer, sorted, as a check names them."""
    if not isinstance(answer, tuple):
        raise AssertionError(f"the store did not answer with a list: {answer!r}")
    return sorted(str(form.task_id) for form in answer)


def differing_fields(answer: object, expected: TaskRecord) -> dict[str, tuple[object, object]]:
    """The fields where the store's answer to a read differs from `expected`:
    name -> (expected, actual)."""
    if not isinstance(answer, RecordForm):
        raise AssertionError(f"the store answered {answer!r}, not a record")
    wanted = RecordForm.of(expected)
    return {name: (getattr(wanted, name), getattr(answer, name)) for name in RECORD_FIELDS
            if getattr(wanted, name) != getattr(answer, name)}
