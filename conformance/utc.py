"""UTC checks for the instants an area returns.

Aware datetimes compare as instants: `==` ignores the offset, so a runtime that answers
the right instant at +02:00 agrees with the oracle's UTC value. Every area's harness
therefore also asks this module whether each instant it read is UTC (aware, with a zero
offset), and blames the requirement whose statement carries that clause.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import cast

ZERO = timedelta(0)
WANTED = "a timezone-aware datetime at UTC offset +00:00"


def is_off_utc(value: object) -> bool:
    """A datetime that is naive or at a non-zero offset (anything else is not an instant)."""
    return isinstance(value, datetime) and value.utcoffset() != ZERO


def instants_off_utc(value: object, where: str) -> Iterator[tuple[str, datetime]]:
    """(where, instant) for every datetime inside `value` that is not UTC.

    Looks inside dataclasses, tuples, lists and dict values, as the areas' views are built
    from them; `where` names the value and grows with the field or index.
    """
    if isinstance(value, datetime):
        if is_off_utc(value):
            yield where, value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from instants_off_utc(getattr(value, field.name), f"{where}.{field.name}")
    elif isinstance(value, tuple | list):
        for index, item in enumerate(value):
            yield from instants_off_utc(item, f"{where}[{index}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from instants_off_utc(item, f"{where}[{key!r}]")


def in_utc(value: object) -> bool:
    """None, or a plain datetime at `datetime.UTC` itself: what a UTC instant most often is,
    known without a call (False says nothing: `first_off_utc` then looks)."""
    return value is None or (isinstance(value, datetime) and type(value) is datetime
                             and value.tzinfo is UTC)


def first_off_utc(value: object, where: str) -> tuple[str, datetime] | None:
    """The first instant inside `value` that is not UTC, or None."""
    if not _holds_off_utc(value):  # the common case, without naming every field on the way
        return None
    return next(instants_off_utc(value, where), None)


def _holds_off_utc(value: object) -> bool:
    """Whether `instants_off_utc` would find anything inside `value`: the same walk, without
    the names (each step runs after every command, so this one builds no strings and asks
    each type once what it is)."""
    kind = _KINDS.get(type(value))
    if kind is None:
        kind = _KINDS[type(value)] = _kind_of(type(value))
    if kind is _ATOM:
        return False
    if kind is _INSTANT:
        return cast(datetime, value).utcoffset() != ZERO
    if kind is _ITEMS:
        items: Iterable[object] = cast("tuple[object, ...]", value)
    elif kind is _VALUES:
        items = cast("dict[object, object]", value).values()
    else:
        items = [getattr(value, name) for name in kind]
    # A loop rather than any(): most items are atoms (strings, numbers, None), skipped here
    # without a call.
    for item in items:  # noqa: SIM110
        if _KINDS.get(type(item)) is not _ATOM and _holds_off_utc(item):
            return True
    return False


# What `_holds_off_utc` does with a value of each type: nothing inside (_ATOM), an instant,
# items of a tuple or list, values of a dict, or the names of a dataclass's fields.
_ATOM: tuple[str, ...] = ()
_INSTANT: tuple[str, ...] = ("<instant>",)
_ITEMS: tuple[str, ...] = ("<items>",)
_VALUES: tuple[str, ...] = ("<values>",)
_KINDS: dict[type, tuple[str, ...]] = {}


def _kind_of(kind: type) -> tuple[str, ...]:
    """In the order `instants_off_utc` asks."""
    if issubclass(kind, datetime):
        return _INSTANT
    if dataclasses.is_dataclass(kind):
        return tuple(field.name for field in dataclasses.fields(kind)) or _ATOM
    if issubclass(kind, tuple | list):
        return _ITEMS
    if issubclass(kind, dict):
        return _VALUES
    return _ATOM


def describe_offset(value: datetime) -> str:
    """What was returned, as the divergence shows it: the ISO text with its offset."""
    return value.isoformat() if value.tzinfo is not None else f"{value.isoformat()} (naive)"


def off_utc_field(view: object, names: Iterable[str]) -> tuple[str, object] | None:
    """The first of `names` whose value in `view` is set but is not a timezone-aware UTC
    datetime (a naive one, another offset, or no datetime at all), with that value."""
    for name in names:
        value = getattr(view, name)
        if value is not None and (not isinstance(value, datetime) or is_off_utc(value)):
            return name, value
    return None


def record_fields(record: object) -> Iterator[tuple[str, object]]:
    """(name, value) for every public field of a record or view: a dataclass's fields,
    otherwise its public instance attributes (a view proxy that reads through
    `__getattr__` shows none, and is judged by the fields its caller names)."""
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        for field in dataclasses.fields(record):
            yield field.name, getattr(record, field.name)
        return
    for name, value in getattr(record, "__dict__", {}).items():
        if not name.startswith("_"):
            yield name, value


def field_off_utc(record: object) -> tuple[str, datetime] | None:
    """The first field of `record` holding an instant that is naive or not at UTC: every
    instant field counts (LC-005: every timestamp is UTC), not only the ones a check
    compares, so one column read back at +05:30 is caught while the others are UTC."""
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        # record_fields' names, asked of the type once (this runs for every record a
        # lifecycle step reads).
        kind = _KINDS.get(type(record))
        if kind is None:
            kind = _KINDS[type(record)] = _kind_of(type(record))
        for name in kind:
            value = getattr(record, name)
            if isinstance(value, datetime) and value.utcoffset() != ZERO:
                return name, value
        return None
    for name, value in record_fields(record):
        if isinstance(value, datetime) and is_off_utc(value):
            return name, value
    return None
