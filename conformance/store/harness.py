"""The store harness: each command goes to the backend's task store and to the oracle, and
their answers must agree.

A store may answer directly or with awaitables (seed 004's D-17 makes them async); the
harness awaits an awaitable answer on an event loop of its own whose time is the virtual
clock (`jobconform.bridges.VirtualLoop`), so both forms meet the same checks. Lists are
compared as sets, since the contract fixes no order. Every record the store hands out is
kept and compared again after each later command: it must not change (TS-008). A
concurrent save (TS-010) calls save from several real threads released together, each
awaiting its own answer on an event loop of its own, then lists the store from the
harness's thread: every record saved must be there. The first difference raises
`Divergence` naming the requirement that explains it first.
"""

from __future__ import annotations

import inspect
import json
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from jobconform.backends.protocol import Backend
from jobconform.backends.task_store.protocol import STORE
from jobconform.bridges.loop import CoroutineNeverFinished, VirtualLoop
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import (
    SAFETY_TIMEOUT_SECONDS,
    AdapterError,
    Divergence,
    ListedDeviations,
)
from jobconform.conformance.watchdog import guarded
from jobconform.reference.commands import Command
from jobconform.reference.store.commands import (
    DeleteTask,
    GetTask,
    ListExpired,
    ListTasks,
    SaveConcurrently,
    SaveTask,
    StoreCommand,
    describe_store,
)
from jobconform.reference.store.oracle import (
    QUEUED,
    RUNNING,
    STATUSES,
    StoreOracle,
    TaskRecord,
)
from jobconform.spec import Profile, Registry, load_registry

ASYNC_REQUIREMENT = "TS-009"
SNAPSHOT_REQUIREMENT = "TS-008"
CONCURRENT_SAVE_REQUIREMENT = "TS-010"
# Records handed out that the harness keeps re-checking (TS-008); the oldest go first.
HELD_SNAPSHOTS = 64
_MISSING = "<missing>"
RECORD_FIELDS = tuple(item.name for item in fields(TaskRecord))


@dataclass(frozen=True)
class Raised:
    """An operation raised instead of answering."""

    error_type: str
    message: str


def _result_form(value: object) -> object:
    """A result as comparable data: 1, 1.0 and true stay apart, members in any order."""
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
        values: dict[str, Any] = {name: getattr(view, name, _MISSING) for name in RECORD_FIELDS}
        for name in ("submitted_at", "started_at", "completed_at"):
            values[name] = _instant_form(values[name])
        values["result"] = _result_form(values["result"])
        return cls(**values)

    def __repr__(self) -> str:
        shown = [f"{name}={_shown(getattr(self, name))}" for name in RECORD_FIELDS
                 if getattr(self, name) is not None]
        return f"Record({', '.join(shown)})"


def _sorted(forms: list[RecordForm]) -> tuple[RecordForm, ...]:
    return tuple(sorted(forms, key=lambda form: (str(form.task_id), repr(form))))


def _check_command(command: StoreCommand) -> None:
    if isinstance(command, ListTasks) and command.status not in (None, *STATUSES):
        raise ValueError(f"list by a canonical status ({', '.join(STATUSES)}), not"
                         f" {command.status!r}; adapters translate their own names")
    if isinstance(command, ListExpired) and command.before.utcoffset() is None:
        raise ValueError(f"the cut-off {command.before!r} has no timezone; stores compare UTC"
                         " instants")


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
        self.held: list[tuple[str, object, RecordForm]] = []  # (where from, view, as read)
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
        self.commands.append(command)  # type: ignore[arg-type]
        expected, requirements = self._expect(command)
        self.exercised.update(requirements)
        with guarded(self.safety_timeout, describe_store(command), self.hang_scope):
            actual, views = self._apply(command)
        self.listed.check(len(self.commands),
                          partial(self._compare, command, expected, actual, requirements),
                          self._check_snapshots, self._adopt_snapshots)
        self._hold(command, views)
        return actual

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

    # -- the oracle's side ---------------------------------------------------------------

    def _expect(self, command: StoreCommand) -> tuple[object, tuple[str, ...]]:
        model = self.oracle
        match command:
            case SaveTask():
                replacing = command.record.task_id in model.records
                model.save(command.record)
                self.saved.setdefault(command.record.task_id, []).append(
                    RecordForm.of(command.record))
                return None, ("TS-002", "TS-001") if replacing else ("TS-001",)
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
            return Raised(type(error).__name__, str(error))
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
            return Raised(type(error).__name__, str(error))

    def _apply(self, command: StoreCommand) -> tuple[object, list[object]]:
        """The backend's answer in compared form, and the views it handed out."""
        match command:
            case SaveTask():
                record = command.record
                answer = self._call("save", lambda save: save(record))
                return (answer if isinstance(answer, Raised) else None), []
            case DeleteTask():
                task_id = command.task_id
                answer = self._call("delete", lambda delete: delete(task_id))
                return (answer if isinstance(answer, Raised) else None), []
            case GetTask():
                task_id = command.task_id
                view = self._call("get", lambda get: get(task_id))
                if view is None or isinstance(view, Raised):
                    return view, []
                return RecordForm.of(view), [view]
            case ListTasks():
                status = command.status
                found = self._call("list", lambda listing: (listing() if status is None
                                                            else listing(status)))
                return self._listed(found)
            case ListExpired():
                before = command.before
                return self._listed(self._call("list_expired", lambda expired: expired(before)))
            case SaveConcurrently():
                raised = self._save_on_threads(command.records)
                if raised is not None:
                    return raised, []
                return self._listed(self._call("list", lambda listing: listing()))
        raise ValueError(f"not a store command: {command!r}")

    def _save_on_threads(self, records: tuple[TaskRecord, ...]) -> Raised | None:
        """Call save(record) for each record on a thread of its own, the threads released
        together by a barrier; an awaitable answer is awaited on that thread, on an event
        loop of its own. Returns the first saver's error in record order, or None.

        Raises:
            Divergence: under a profile needing awaitables, a save answered directly.
            AdapterError: the store has no save, or a saver did not finish in time.
        """
        save = getattr(self.store, "save", None)
        if not callable(save):
            raise AdapterError(f"the task store of {self.backend.name!r} has no save();"
                               " see jobconform.backends.task_store.protocol")
        # Half the watchdog's limit for each wait, so that a hung store is reported as
        # the adapter's error before the watchdog ends the process.
        limit = self.safety_timeout / 2
        start_together = threading.Barrier(len(records))
        answers: list[object] = [None] * len(records)
        awaited = [False] * len(records)

        def saver(index: int, record: TaskRecord) -> None:
            try:
                start_together.wait(timeout=limit)
                answer = save(record)
                awaited[index] = inspect.isawaitable(answer)
                if inspect.isawaitable(answer):
                    loop = VirtualLoop(self.clock, safety_limit_seconds=limit)
                    try:
                        loop.run(answer, name="save()")
                    finally:
                        loop.close()
            except Exception as error:
                answers[index] = Raised(type(error).__name__, str(error))

        threads = [threading.Thread(target=saver, args=(index, record), daemon=True,
                                    name=f"jobconform-saver-{index + 1}")
                   for index, record in enumerate(records)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=limit)
            if thread.is_alive():
                raise AdapterError(f"a save on {thread.name} did not finish within {limit:g} s"
                                   " of real time while other threads saved too")
        if self.async_required:
            self.exercised.add(ASYNC_REQUIREMENT)
            if not all(awaited):
                raise self._fail((ASYNC_REQUIREMENT,), "what save() returned on a saver"
                                 " thread", "an awaitable (a coroutine), as the profile"
                                 " requires", "a plain answer, given by a blocking call")
        return next((answer for answer in answers if isinstance(answer, Raised)), None)

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
        if expected == actual:
            return
        if isinstance(command, SaveConcurrently) and isinstance(actual, tuple):
            assert isinstance(expected, tuple)
            requirements = self._blame_concurrent(command, expected, actual)
        elif isinstance(command, ListTasks | ListExpired) and isinstance(actual, tuple):
            assert isinstance(expected, tuple)
            requirements = self._blame_list(command, expected, actual) + requirements
        elif isinstance(command, GetTask) and isinstance(actual, RecordForm):
            requirements = self._explaining_version(command.task_id, actual) + requirements
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

    def _blame_concurrent(self, command: SaveConcurrently, expected: tuple[RecordForm, ...],
                          actual: tuple[RecordForm, ...]) -> tuple[str, ...]:
        """The requirements explaining the first record the list after a concurrent save
        gets wrong: a record saved by one of the threads and missing is lost (TS-010);
        one shown as a version saved before, a replacement lost (TS-002, TS-010); one
        shown altered, the round trip (TS-001). A difference about a record the batch did
        not touch is the list's."""
        saved_now = {record.task_id for record in command.records}
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
            return (CONCURRENT_SAVE_REQUIREMENT, "TS-002")
        return ("TS-001", CONCURRENT_SAVE_REQUIREMENT)

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
            self.held.append((f"step {step} ({describe_store(command)})", view,
                              RecordForm.of(view)))
        del self.held[:-HELD_SNAPSHOTS]

    def _adopt_snapshots(self) -> None:
        """After a listed deviation, a handed-out record that changed is held as it is
        now, so that the same change is not reported again at every later step."""
        self.held = [(where, view, RecordForm.of(view)) for where, view, _ in self.held]

    def _check_snapshots(self) -> None:
        if not self.held:
            return
        self.exercised.add(SNAPSHOT_REQUIREMENT)
        for where, view, then in self.held:
            now = RecordForm.of(view)
            if now != then:
                raise self._fail((SNAPSHOT_REQUIREMENT,),
                                 f"the record of task {then.task_id!r} handed out at {where}",
                                 then, now)


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
