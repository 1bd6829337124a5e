"""What every service area's harness shares: the one base the area harnesses build on.

An area harness (breaker, governor, idempotency, reminders, scheduling, admission,
loops) applies each command to the backend's runtime and to the area's oracle, compares
what both show, and raises `Divergence` at the first difference. The parts that are the
same in every area live here, once:

- the fields every harness takes (backend, profile, registry; the safety timeout, the
  virtual clock, the commands run so far, the requirements exercised and the listed
  deviations gone past) and the check that the backend claims the area;
- the profile's area parameters with a check's own values on top;
- opening the runtime through the backend's `open_<area>` and closing it;
- calling the adapter (`_call`: an exception the protocol does not allow becomes
  `AdapterError`, with one message layout) and building the divergence (`_fail`);
- for an area whose checks may plan a failing store write (idempotency, reminders):
  whether the backend claims store faults for it, the refusal of a faulted command where
  it does not, and the runtime as one that takes faults;
- for an area whose checks name what they create by aliases (`AliasedHarness`): the
  aliases, and the frame of `run` (check the command, record it, let the area apply
  it, then compare the answer and the state through the listed deviations);
- for an area whose checks run two workers on one store against a model that answers
  each command as the backend is asked it (`PairedHarness`: breaker, governor): the
  worker check, the frame of `run` (the backend answering first, then the model at the
  instant the command was sent), what the shared store does to both workers, and closing
  them.

What differs (the commands, the oracle, how a difference is blamed) stays in the area's
own harness.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property, partial
from typing import Any, ClassVar, Generic, Protocol, Self, TypeVar, cast

from jobconform.backends.faults import StoreFaults, StoreFaultsNotClaimed
from jobconform.backends.protocol import LOG_RECORDS, Backend, store_faults
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import (
    SAFETY_TIMEOUT_SECONDS,
    AdapterError,
    Divergence,
    ListedDeviations,
)
from jobconform.conformance.log_records import LogWatch, shown
from jobconform.conformance.watchdog import call_adapter, guarded
from jobconform.reference.commands import Command, describe
from jobconform.reference.log_records import ExpectedLog
from jobconform.spec import Profile, Registry, SpecError

T = TypeVar("T")
CommandT = TypeVar("CommandT")


class Peered(Protocol):
    def peer(self) -> Self:
        """Another process's runtime over the same store."""
        ...


PeeredT = TypeVar("PeeredT", bound=Peered)


def with_overrides(area: str, known: Iterable[str], values: dict[str, Any],
                   overrides: dict[str, Any],
                   error: type[Exception] = ValueError) -> dict[str, Any]:
    """`values` with a check's own `overrides` on top, each of them one of `known`.

    Raises:
        error: an override names no parameter of the area (ValueError by default).
    """
    names = list(known)
    unknown = set(overrides) - set(names)
    if unknown:
        raise error(f"unknown {area} parameter(s) {sorted(unknown)}; known:"
                    f" {', '.join(names)}")
    return {**values, **overrides}


def profile_parameters(profile: Profile, area: str, names: Sequence[str],
                       overrides: dict[str, Any],
                       error: type[Exception] = ValueError) -> dict[str, Any]:
    """The profile's value of each of `names` for `area`, with `overrides` on top.

    Raises:
        SpecError: the profile sets no value for one of the names.
        error: an override names no parameter (ValueError by default).
    """
    values = {name: profile.parameter(area, name) for name in names}
    return with_overrides(area, names, values, overrides, error)


def all_profile_parameters(profile: Profile, area: str,
                           overrides: dict[str, Any]) -> dict[str, Any]:
    """Every parameter the profile gives `area`, with `overrides` on top.

    Raises:
        SpecError: the profile has no parameters for the area.
        ValueError: an override names no parameter the profile gives.
    """
    try:
        values = dict(profile.area_parameters[area])
    except KeyError:
        raise SpecError(f"profile {profile.name!r} has no {area} parameters; add"
                        f" area_parameters.{area} to it in profiles.yaml") from None
    return with_overrides(area, sorted(values), values, overrides)


@dataclass
class AreaHarness(Generic[CommandT]):
    """The fields and plumbing every service area's harness shares.

    Args:
        backend: the adapter under test; it must claim the area.
        profile: the profile whose area parameters apply.
        registry: the spec, for requirement titles in messages.

    Raises:
        ValueError: the backend does not claim the area, or an area's own argument (a
            parameter override) is bad.
        AdapterError: the backend has no `open_<area>`, or it raised or hung opening it.

    A subclass sets `AREA` (the capability it needs, which also names its protocol in
    messages) and `PASSES_THROUGH` (the exceptions its protocol allows the adapter to
    raise), calls `_require_area()` first in its `__post_init__`, and keeps its runtimes
    in `_to_close()` for `close`. Fields after `registry` are keyword-only, so that an
    area's own fields (its settings, overrides) come fourth when passed by position.
    """

    AREA: ClassVar[str]
    PASSES_THROUGH: ClassVar[tuple[type[Exception], ...]] = ()

    backend: Backend
    profile: Profile
    registry: Registry | None = None
    safety_timeout: float = field(default=SAFETY_TIMEOUT_SECONDS, kw_only=True)
    clock: VirtualClock = field(default_factory=lambda: VirtualClock(EPOCH), kw_only=True)
    commands: list[CommandT] = field(default_factory=list, kw_only=True)
    exercised: set[str] = field(default_factory=set, kw_only=True)
    listed: ListedDeviations = field(default_factory=ListedDeviations, kw_only=True)

    def _require_area(self, detail: str = "its checks cannot run on it") -> None:
        """Refuse a backend that does not claim the area; note the requirement titles.

        Raises:
            ValueError: the backend does not claim `AREA`.
        """
        if self.AREA not in self.backend.capabilities:
            raise ValueError(f"backend {self.backend.name!r} does not claim the {self.AREA}"
                             f" area; {detail}")
        self._titles = ({r.id: r.title for r in self.registry.requirements}
                        if self.registry else {})

    def _opener(self, signature: str) -> Callable[..., Any]:
        """The backend's `open_<area>` method.

        Raises:
            AdapterError: the backend claims the area but has no such method.
        """
        opener: object = getattr(self.backend, f"open_{self.AREA}", None)
        if not callable(opener):
            raise AdapterError(f"adapter {self.backend.name!r} claims the {self.AREA} area"
                               f" but has no open_{self.AREA}({signature})")
        return cast(Callable[..., Any], opener)

    @cached_property
    def hang_scope(self) -> str:
        """What a hang puts out of use (see watchdog.guarded): this backend's area.
        Written once: every adapter call names it (issue 33)."""
        return f"{self.backend.name!r} {self.AREA}"

    @cached_property
    def _adapter_terms(self) -> tuple[str, tuple[type[Exception], ...]]:
        """The protocol `_call` names and the exceptions it lets through, built once."""
        return (f"the {self.AREA} protocol",
                (Divergence, AdapterError, *self.PASSES_THROUGH))

    def _open(self, open_runtime: Callable[[], T]) -> T:
        """Open the area's runtime under the safety timeout, as an adapter call."""
        with guarded(self.safety_timeout, f"opening {self.backend.name!r} {self.AREA}",
                     self.hang_scope):
            return self._call(f"open_{self.AREA}", open_runtime)

    def _open_with_peer(self, open_runtime: Callable[[], PeeredT]) -> list[PeeredT]:
        """Open the area's runtime and its `peer()` over the same store, as two processes
        would be (a check's two workers), under the safety timeout."""
        with guarded(self.safety_timeout, f"opening the {self.AREA} of {self.backend.name!r}",
                     self.hang_scope):
            first = self._call(f"open_{self.AREA}", open_runtime)
            return [first, self._call("peer", first.peer)]

    def _to_close(self) -> Sequence[Any]:
        """The runtimes `close` closes, in order (each area says which it opened)."""
        raise NotImplementedError

    def close(self) -> None:
        with guarded(self.safety_timeout, f"closing the {self.AREA} runtime", self.hang_scope):
            for runtime in self._to_close():
                self._call("close", runtime.close)

    def _call(self, action: str, function: Callable[[], T]) -> T:
        """Call the adapter; an exception its protocol does not allow is `AdapterError`."""
        protocol, allowed = self._adapter_terms
        return call_adapter(function, action, backend=self.backend.name, protocol=protocol,
                            allowed=allowed, hang_scope=self.hang_scope)

    @property
    def takes_store_faults(self) -> bool:
        """Whether the backend claims store faults for the area
        (`jobconform.backends.faults`); checks that need them are skipped where it does
        not, never passed."""
        return store_faults(self.AREA) in self.backend.capabilities

    def _require_store_faults(self, requirement: str) -> None:
        """Refuse a command with a planned store fault on a backend that does not claim
        them, so that `requirement` is reported untested there.

        Raises:
            StoreFaultsNotClaimed: the backend does not claim store faults for the area.
        """
        if not self.takes_store_faults:
            raise StoreFaultsNotClaimed(
                f"backend {self.backend.name!r} does not claim"
                f" {store_faults(self.AREA)}; {requirement} cannot be checked on it")

    def _faulted(self, runtime: object) -> StoreFaults:
        """`runtime` as one that takes planned store faults, as the backend's claim says.

        Raises:
            AdapterError: the runtime lacks the methods of `StoreFaults`.
        """
        if not isinstance(runtime, StoreFaults):
            raise AdapterError(f"adapter {self.backend.name!r} claims"
                               f" {store_faults(self.AREA)} but its {self.AREA} runtime lacks"
                               " inject_store_fault(fault) or store_fault_struck()")
        return runtime

    def _fail(self, requirements: tuple[str, ...], what: str, expected: object,
              actual: object, primary: str | None = None) -> Divergence:
        return Divergence(requirements, what, expected, actual,
                          cast(list[Command], self.commands), self._titles, primary)

    def _watch_logs(self, runtime: object) -> LogWatch | None:
        """The runtime's log records, where the backend claims log-records."""
        if LOG_RECORDS not in self.backend.capabilities:
            return None
        return LogWatch(self.backend, runtime)

    def _check_log_records(self, watch: LogWatch | None, expected: list[ExpectedLog],
                           requirements: tuple[str, ...]) -> None:
        """Each record the oracle made due (taken out of `expected`) among those the runtime
        emitted since the last check, at its level with its facts."""
        wanted, expected[:] = list(expected), []
        if watch is None:
            return
        missing = self._call("log_records", lambda: watch.unmatched(wanted))
        if missing is not None:
            record, emitted = missing
            raise self._fail((*requirements, record.requirement), "the log records emitted",
                             record.describe(), shown(emitted), record.requirement)
        self.exercised.update(record.requirement for record in wanted)


def check_time_step(seconds: float) -> None:
    """Time moves forward by a finite amount, or not at all.

    Raises:
        ValueError: `seconds` is negative, infinite or NaN.
    """
    if not 0 <= seconds < float("inf"):
        raise ValueError(f"time advances by a finite amount >= 0, not {seconds!r}")


def same_answer(expected: object, actual: object) -> bool:
    """The backend answered as the oracle did: equal, and of the same type (True is not 1)."""
    return expected == actual and type(expected) is type(actual)


@dataclass
class AliasedHarness(AreaHarness[CommandT]):
    """An area harness whose checks name what they create by aliases of their own.

    The runtime gives each creation an id; the harness keeps both ways between alias and
    id, and compares what the runtime lists through the aliases.
    """

    ids: dict[str, str] = field(default_factory=dict, init=False)  # alias -> runtime id
    aliases: dict[str, str] = field(default_factory=dict, init=False)  # runtime id -> alias
    last_answer: object = field(default=None, init=False)

    def run(self, command: CommandT) -> object:
        """Apply `command` to both sides, settle both, compare everything.

        Returns:
            The backend's answer.

        Raises:
            Divergence: the backend's answer or state differs from the oracle's.
            AdapterError: the adapter raised outside its contract or hung.
            ValueError: the command is malformed (an alias used twice, time going back).
        """
        self._check_command(command)
        self.commands.append(command)
        return self._run(command)

    def _check_command(self, command: CommandT) -> None:
        """Refuse a malformed command before either side sees it (ValueError)."""
        raise NotImplementedError

    def _run(self, command: CommandT) -> object:
        """The area's part of `run`: apply a checked command to both sides, settle them
        and `_compare` what they answered; the backend's answer."""
        raise NotImplementedError

    def _compare(self, command: CommandT, expected: object, actual: object,
                 requirements: tuple[str, ...]) -> None:
        """Keep the backend's answer as the last, then compare it with the oracle's
        (`_compare_answer`) and everything else (`observe`), where a listed deviation
        of an earlier step has not already been adopted (`_adopt`)."""
        self.last_answer = actual
        self.listed.check(len(self.commands),
                          partial(self._compare_answer, command, expected, actual,
                                  requirements),
                          partial(self.observe, requirements), self._adopt)

    def _compare_answer(self, command: CommandT, expected: object, actual: object,
                        requirements: tuple[str, ...]) -> None:
        """Raises Divergence where the backend's answer is not the oracle's."""
        raise NotImplementedError

    def observe(self, requirements: tuple[str, ...] = ()) -> None:
        """Raises Divergence at the first difference of the backend's state."""
        raise NotImplementedError

    def _adopt(self) -> None:
        """After a listed deviation, take the backend's state as the oracle's."""
        raise NotImplementedError

    def run_all(self, commands: Iterable[CommandT]) -> None:
        for command in commands:
            self.run(command)

    def _check_new_alias(self, noun: str, alias: str) -> None:
        """Raises ValueError where the check names a second creation as an earlier one."""
        if alias in self.ids:
            raise ValueError(f"{noun} alias {alias!r} is already used; pick a new one")

    def _remember(self, alias: str, runtime_id: str) -> None:
        self.ids[alias] = runtime_id
        self.aliases[runtime_id] = alias

    def _id(self, alias: str) -> str:
        """The runtime's id of `alias`; one no runtime holds where the harness never
        managed to create it."""
        return self.ids.get(alias, f"unknown-{alias}")

    def _listed(self, runtime_ids: Iterable[str]) -> list[str]:
        """What the runtime lists, by alias; an id the harness never learnt is shown
        as such (a difference with the oracle's list)."""
        return [self.aliases.get(runtime_id, f"<unknown id {runtime_id}>")
                for runtime_id in runtime_ids]


@dataclass
class PairedHarness(AreaHarness[CommandT]):
    """An area harness whose checks run two workers over one store (the runtime the
    backend opened and its `peer()`, as two processes would share it), and whose oracle
    is a model the harness applies each command to as it sends it to the backend.

    A subclass opens its workers in `__post_init__` (`_open_with_peer`, kept as
    `workers`) and fills in the hooks below.
    """

    WORKERS: ClassVar[int] = 2

    workers: Sequence[Any] = field(default=(), init=False)

    def run(self, command: CommandT) -> object:
        """Apply `command` to both sides, compare everything, return the backend's answer.

        Raises:
            Divergence: the backend's answer or state differs from the oracle's.
            AdapterError: the adapter raised or hung.
            ValueError: the command itself is malformed.
        """
        self._check_command(command)
        self.commands.append(command)
        self._note(command)
        requirements = self._requirements(command)
        self.exercised.update(requirements)
        with guarded(self.safety_timeout, partial(describe, cast(Command, command)),
                     self.hang_scope):
            answer, expected = self._apply(command)
            self.listed.check(len(self.commands),
                              partial(self._compare_answer, command, requirements, expected,
                                      answer),
                              partial(self._observe_after, command, requirements),
                              self._adopt)
        return answer

    def run_oracle(self, command: CommandT) -> object:
        """The command applied to the oracle alone: the oracle's answer (the cost floor,
        see machine_runner.oracle_alone)."""
        self._check_command(command)
        self.commands.append(command)
        self._note(command)
        return self._apply_to_model(command, self.clock.now())

    def _to_close(self) -> Sequence[Any]:
        return self.workers

    def _on_every_worker(self, action: str, call: Callable[[Any], object]) -> None:
        """`call` on each worker: what the one store behind them does to both (it goes
        down or comes back, a drain is lost)."""
        for worker in self.workers:
            self._call(action, partial(call, worker))

    def _check_worker(self, command: CommandT) -> None:
        """Raises ValueError where the command names a worker the check does not run."""
        worker = getattr(command, "worker", 0)
        if worker not in range(self.WORKERS):
            raise ValueError(f"worker must be 0 or 1, not {worker!r}")

    # What each area says: the checks of a command (ValueError), what the harness learns of
    # it before it is applied (nothing by default), the requirements it rests on, the
    # answers of both sides (backend's, model's), how they compare (Divergence), what else
    # must agree after it, and what to take from the backend after a listed deviation.

    def _check_command(self, command: CommandT) -> None:
        raise NotImplementedError

    def _note(self, command: CommandT) -> None:
        pass

    def _requirements(self, command: CommandT) -> tuple[str, ...]:
        raise NotImplementedError

    def _apply(self, command: CommandT) -> tuple[object, object]:
        """(backend's, oracle's) answers: the backend first, then the model at the instant
        the command was sent (a command that lets time pass moves the clock there)."""
        now = self.clock.now()
        return self._apply_to_backend(command), self._apply_to_model(command, now)

    def _apply_to_backend(self, command: CommandT) -> object:
        raise NotImplementedError

    def _apply_to_model(self, command: CommandT, now: datetime) -> object:
        raise NotImplementedError

    def _compare_answer(self, command: CommandT, requirements: tuple[str, ...],
                        expected: object, answer: object) -> None:
        raise NotImplementedError

    def _observe_after(self, command: CommandT, requirements: tuple[str, ...]) -> None:
        self.observe(requirements)

    def observe(self, requirements: tuple[str, ...] = ()) -> None:
        raise NotImplementedError

    def _adopt(self) -> None:
        raise NotImplementedError
