"""The self-test gallery: deliberately broken backends, one known bug class each.

Each area keeps its broken backends in its own `gallery` module (`conformance/<area>/
gallery.py`); the modules here hold the galleries of the shipped runtimes themselves (SQL,
threaded, process) and of known-deviation files. `jobconform selftest` runs the suites
against every entry and proves each is caught by the requirement named in `catches`. A
suite that catches none of these is worthless, whatever it counts.

An entry is declared on its broken class, by a decorator that names the entry, the
requirement that must catch it and where the bug class comes from (`declares`, and
`over_new_store` / `with_swapped_store` for the common ways of opening a broken runtime
or store); the class's docstring is the bug.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import Clock, RuntimeSettings


@dataclass(frozen=True)
class GalleryEntry:
    """One broken backend: where it loads from, its bug, and the requirement that must
    name it."""

    name: str
    target: str  # `module:attr` of the broken backend
    bug: str
    catches: str
    source: str
    # The profile the self-test checks it under: a bug of a profile-scoped requirement
    # (LC-026 under task-manager) shows only under a profile that has it.
    profile: str = "canonical"
    # Requirements the one bug breaks as well, by the spec's own words (a store write
    # without the expected status lets a late outcome into an ended job, LC-003, and a
    # superseded owner's write into a re-queued one, RD-006): a suite may name them as
    # primaries beside `catches`, never instead of it, and no requirement else.
    also_breaks: tuple[str, ...] = ()

    @property
    def breaks(self) -> frozenset[str]:
        """Every requirement a suite may name for this bug: `catches` and `also_breaks`."""
        return frozenset({self.catches, *self.also_breaks})


class OverRuntime(MemoryBackend):
    """The memory backend opening a `runtime_type` runtime: a backend that changes only
    its runtime names that class, and writes no `open` of its own."""

    runtime_type: type[MemoryRuntime] = MemoryRuntime

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return self.runtime_type(settings, clock)


BrokenT = TypeVar("BrokenT", bound=type)
EntryMaker = Callable[..., GalleryEntry]  # (name, broken, *rest, **options) -> its entry


def declares(entries: list[GalleryEntry]
             ) -> Callable[[EntryMaker], Callable[..., Callable[[BrokenT], BrokenT]]]:
    """Makes a gallery's `make(name, broken, *rest, **options)`, which builds the entry of
    a broken class, a decorator of that class taking `(name, *rest, **options)`, so that
    an entry is stated where its bug is: the entry is appended to `entries`, in the order
    of the classes, and the class stays as it was."""

    def decorator_of(make: EntryMaker) -> Callable[..., Callable[[BrokenT], BrokenT]]:
        def entry(name: str, *rest: Any, **options: Any) -> Callable[[BrokenT], BrokenT]:
            def declare(broken: BrokenT) -> BrokenT:
                entries.append(make(name, broken, *rest, **options))
                return broken

            return declare

        return entry

    return decorator_of


def bug_text(broken: type) -> str:
    """A broken class's docstring on one line: the bug its gallery entry shows."""
    return " ".join((broken.__doc__ or "").split())


def register(module: str, name: str, backend: type, bug: str, catches: str,
             source: str, profile: str = "canonical") -> GalleryEntry:
    """Name `backend` as the broken backend of entry `name` and put it in `module`, so
    that it loads as `module:name`; the entry that says so."""
    backend.name = f"gallery.{name}"  # type: ignore[attr-defined]
    backend.__name__ = backend.__qualname__ = name
    backend.__doc__ = bug
    setattr(sys.modules[module], name, backend)
    return GalleryEntry(name, f"{module}:{name}", bug, catches, source, profile)


def subclass_entry(module: str, name: str, base: type, members: dict[str, Any],
                   broken: type, catches: str, source: str,
                   profile: str = "canonical") -> GalleryEntry:
    """Entry `name` of `module`: the shipped backend `base` with `members` replaced (a
    broken `store_type`, ...); its bug is `broken`'s docstring."""
    backend = type(name, (base,), dict(members))
    return register(module, name, backend, bug_text(broken), catches, source, profile)


def opener_entry(module: str, name: str, base: type, opener: str,
                 open_broken: Callable[..., object], broken: type, catches: str,
                 source: str, profile: str = "canonical") -> GalleryEntry:
    """Entry `name` of `module`: the shipped backend `base` whose `opener`
    (`open_reminders`, ...) opens what `open_broken(backend, *its arguments)` makes; its
    bug is `broken`'s docstring."""

    def opened(self: Any, *arguments: Any, **keywords: Any) -> object:
        return open_broken(self, *arguments, **keywords)

    return subclass_entry(module, name, base, {opener: opened}, broken, catches, source,
                          profile)


def over_new_store(entries: list[GalleryEntry], base: type, opener: str,
                   store: type | str) -> Callable[..., Callable[[BrokenT], BrokenT]]:
    """The decorator (`declares`) of broken runtime classes that `base`'s `opener`
    (`open_reminders`, ...) opens over a new store: `store()` for a class, else the
    backend's method of that name (`new_reminder_store`)."""

    def entry(name: str, broken: type, catches: str, source: str) -> GalleryEntry:
        def open_broken(backend: Any, *opened: Any) -> object:
            new_store = getattr(backend, store) if isinstance(store, str) else store
            return broken(new_store(), *opened)

        return opener_entry(broken.__module__, name, base, opener, open_broken, broken,
                            catches, source)

    return declares(entries)(entry)


def with_swapped_store(entries: list[GalleryEntry], base: type, store_method: str
                       ) -> Callable[..., Callable[[BrokenT], BrokenT]]:
    """The decorator (`declares`) of broken store classes that `base` answers its
    `store_method` with (`swapped_store_entry`)."""

    def entry(name: str, broken: type, catches: str, source: str) -> GalleryEntry:
        return swapped_store_entry(broken.__module__, name, base, store_method, broken,
                                   catches, source)

    return declares(entries)(entry)


def swapped_store_entry(module: str, name: str, base: type, store_method: str,
                        broken: type, catches: str, source: str) -> GalleryEntry:
    """Entry `name` of `module`: the shipped backend `base` whose `store_method`
    (`empty_reminder_store`, ...) answers its own store as a `broken` one: the same
    engine and state, the broken methods."""

    def swapped(self: Any) -> object:
        store = getattr(base, store_method)(self)
        store.__class__ = broken
        return store

    return subclass_entry(module, name, base, {store_method: swapped}, broken, catches,
                          source)
