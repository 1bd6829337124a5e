"""Records that cannot change once read: the harness reads each of them once (issue 33).

After every command the harness reads every held job and compares it with the oracle,
and reads again every record it handed out earlier (LC-016). A runtime that hands out
the same record object until its job changes (the memory backend's frozen `StoredJob`)
hands the same objects back step after step, and reading them again finds what it found
before. A view is *sealed* when nothing the harness reads from it can change: its type
is a frozen dataclass whose attributes are read as plain fields (no property, slot or
`__getattr__` in between), each field the harness reads holds an immutable value (None, a
bool, an int, a float, a str, or a datetime that is naive or at a fixed offset), and no
other field holds an instant that could change its offset. The harness looks at the other
fields only for their instants (every instant is UTC, LC-005), so what they hold besides
does not matter: a frozen field cannot be rebound, and a dict in it (the memory store's
retry policy) is never read. The harness keeps what it read from a sealed view with the
view and trusts it after; any other view (a live proxy, a record whose result is a dict)
is read in full every time, as before.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Generic, TypeVar

# Values with nothing inside that could change (exact types: a subclass may add state).
ATOMS = frozenset({type(None), bool, int, float, str})
# The zones whose offset is fixed (a tzinfo of another class may answer differently later).
FIXED_ZONES = frozenset({type(None), timezone})
# JSON scalars whose canonical text equal values of one type share (floats aside: -0.0
# equals 0.0 and reads otherwise).
SAME_TEXT_ATOMS = frozenset({type(None), bool, int, str})

# (type, names read) -> the type's fields where its instances can be sealed, those read and
# the others, else None.
_SEALABLE: dict[tuple[type, tuple[str, ...]], tuple[tuple[str, ...], tuple[str, ...]] | None]
_SEALABLE = {}

RecordT = TypeVar("RecordT")


@dataclass
class SealedView(Generic[RecordT]):
    """A sealed view with what the harness read from it: its record, whether its
    instants were found at UTC (they are read after the record, so known later), and the
    number of the command after which a field it has that is read afresh (a property:
    the deprecated attempt_number) was last read."""

    view: object
    record: RecordT
    in_utc: bool = False
    read_afresh_at: int = -1


def _sealable_fields(kind: type, read: tuple[str, ...]
                     ) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The field names of `kind`, those in `read` and the others, if its instances can be
    sealed: a frozen dataclass with the plain attribute lookup, where each name in `read`
    is a plain field or is not there at all (its getattr default then answers, always the
    same); None otherwise."""
    params = getattr(kind, "__dataclass_params__", None)
    if params is None or not params.frozen:
        return None
    if (getattr(kind, "__getattribute__", None) is not object.__getattribute__
            or hasattr(kind, "__getattr__")):
        return None
    names = tuple(field.name for field in dataclasses.fields(kind))
    for name in read:
        for klass in kind.__mro__:
            if name in vars(klass):
                if hasattr(type(vars(klass)[name]), "__get__"):
                    return None  # a property (or slot) may answer differently each time
                break
    return (tuple(name for name in names if name in read),
            tuple(name for name in names if name not in read))


def is_sealed(view: object, read: tuple[str, ...]) -> bool:
    """Whether nothing of `view` the harness reads (the names `read`) can change."""
    key = (type(view), read)
    if key not in _SEALABLE:
        _SEALABLE[key] = _sealable_fields(type(view), read)
    fields = _SEALABLE[key]
    if fields is None:
        return False
    read_fields, other_fields = fields
    for name in read_fields:
        value = getattr(view, name)
        value_kind = type(value)
        if value_kind in ATOMS:
            continue
        if value_kind is datetime and type(value.tzinfo) in FIXED_ZONES:
            continue
        return False
    for name in other_fields:
        value = getattr(view, name)
        # Only its instant is looked at (utc.field_off_utc): one that may shift is not
        # sealed; anything else held there is never read.
        if isinstance(value, datetime) and not (
                type(value) is datetime and type(value.tzinfo) in FIXED_ZONES):
            return False
    return True


def same_text(value: object, other: object) -> bool:
    """Whether two values are one JSON scalar of one type, so that their canonical texts
    (`arguments_text`) are equal without building them; False says nothing."""
    return type(value) is type(other) and type(value) in SAME_TEXT_ATOMS and value == other
