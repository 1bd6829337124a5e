"""Dates and instants in a finding, as the standard library's own types.

A runtime under the wall-clock bridge (`jobconform.bridges.wallclock`) hands back
freezegun's `FakeDatetime` and `FakeDate`: subclasses of `datetime` and `date` that compare
as the same values but print under a name no reader of a finding knows. The oracle adopts
such values where a listed deviation makes it follow the backend, and a suite's step parses
its instants into them while the bridge is on, so they turn up on both sides. A divergence
therefore keeps its two values, and a failed check (`vocabulary.Reading`) shows its two,
with every date and instant inside them rebuilt as the plain type, with the same fields,
tzinfo and fold; nothing else about them changes, and a value holding none is kept as it
is. Any other library's subclass (pendulum's) is shown plain too: the kit compares dates by
value, so their type is never what a divergence is about.

The plain class is found in the value's own type's MRO, not named here: while freezegun is
on, it puts `FakeDatetime` in place of every module's `datetime`, this one's too, and it is
an optional dependency that the kit's core does not import.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable
from datetime import date, datetime
from typing import Any, TypeVar, cast

T = TypeVar("T")

# The containers a view is built from, looked into; anything else (a runtime's own
# object, a string) is shown as it is.
_REBUILT_AS_IS = (list, tuple, set, frozenset)


def with_standard_dates(value: T) -> T:
    """`value` with every date and instant inside it as a plain `date` or `datetime`.

    Looks inside dataclasses, lists, tuples (named ones too), sets and dicts (keys and
    values); returns `value` itself when nothing inside it changes.
    """
    return cast(T, _plain(value))


def _plain(value: Any) -> Any:
    if isinstance(value, date):
        return _standard(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed: dict[str, object] = {}
        for field in dataclasses.fields(value):
            item = getattr(value, field.name)
            plain = _plain(item)
            if plain is not item:
                changed[field.name] = plain
        if not changed:
            return value
        # A copy with the fields set, not `replace`: a frozen view's __post_init__ does not
        # run again, and a field outside __init__ keeps its value.
        rebuilt = copy.copy(value)
        for name, plain in changed.items():
            object.__setattr__(rebuilt, name, plain)
        return rebuilt
    if type(value) is dict:
        keys = [_plain(key) for key in value]
        items = [_plain(item) for item in value.values()]
        if _all_kept(keys, value) and _all_kept(items, value.values()):
            return value
        return dict(zip(keys, items, strict=True))
    named_tuple = isinstance(value, tuple) and hasattr(value, "_fields")
    if type(value) in _REBUILT_AS_IS or named_tuple:
        given = list(value)
        items = [_plain(item) for item in given]
        if _all_kept(items, given):
            return value
        return type(value)._make(items) if named_tuple else type(value)(items)
    return value


def _standard(value: date) -> date:
    """`value` as the standard library's own class it derives from."""
    plain = next(kind for kind in type(value).__mro__ if kind.__module__ == "datetime")
    if plain is type(value):
        return value
    if isinstance(value, datetime):
        return cast(datetime, plain(value.year, value.month, value.day, value.hour,
                                    value.minute, value.second, value.microsecond,
                                    value.tzinfo, fold=value.fold))
    return cast(date, plain(value.year, value.month, value.day))


def _all_kept(plain: Iterable[object], given: Iterable[object]) -> bool:
    return all(new is old for new, old in zip(plain, given, strict=True))
