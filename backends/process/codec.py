"""Values and their JSON forms in protocol version 2, directed by type annotations.

Every argument and result crossing the pipe is encoded from its annotation in the
interface (`jobconform.backends.process.interfaces`), by one small set of rules that
both sides and the JSON Schemas share:

| annotation | JSON |
|---|---|
| `str`, `int`, `bool`, `None` | the same |
| `float` | a number; NaN and the infinities as the strings "NaN", "Infinity", "-Infinity" |
| `datetime` | an RFC 3339 string (the kit writes UTC with `Z`; a child's offset is kept) |
| an enum | its value |
| `Sequence[X]`, `tuple[...]`, `frozenset[X]` | an array |
| `Mapping[str, X]` | an object |
| a dataclass | an object of its fields; in a union of dataclasses, with `"type": ClassName` |
| a view protocol (`JobRecord`, `ReminderView`, ...) | an object of its properties |
| an interface (a runtime, a task body) | a handle, `{"handle": "breaker-2"}`, and its properties |
| `object`, `JsonValue` | any JSON value, as it is |

Values are not coerced: an argument the harness gave the wrong type (a loop's
`max_runs` of "three", to check validation) crosses as it is, and the runtime judges it.
Objects behind an interface never cross; `Handles` maps them to handles and back.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, Protocol

from jobconform.backends.process.interfaces import (
    AREA_FIELDS,
    LATER_FIELDS,
    is_interface,
    is_view,
    view_fields,
)

NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


class CodecError(ValueError):
    """A JSON value does not have the form its annotation gives it."""


class Handles(Protocol):
    """How one side names objects behind an interface."""

    def handle_of(self, value: Any, interface: type) -> str:
        """The handle for a local object (registering it), or a remote proxy's own."""
        ...

    def object_for(self, document: dict[str, Any], interface: type) -> Any:
        """The local object for a handle document, or a proxy for the other side's object
        (the document also carries the interface's properties, if it has any)."""
        ...


@dataclasses.dataclass(frozen=True)
class _Shape:
    """What the rules ask of one annotation, worked out once: every value of every message
    is encoded and decoded by its annotation, and asking `typing` again each time was
    most of the protocol's CPU on both sides."""

    args: tuple[Any, ...]
    origin: Any
    union: bool
    members: tuple[Any, ...]  # a union's members but None
    any_json: bool  # `object`, `Any` and `JsonValue` (a union that holds lists and dicts)
    tagged: bool  # a union of several dataclasses: each value says which with `"type"`
    with_float: bool  # float, or a union holding it (non-finite numbers travel as text)
    interface: bool
    view: bool
    # A JSON scalar type (str, int, bool, float), or a union of them and None: encoded as
    # its value, and decoded after a check of its form (the commonest field by far).
    scalar: bool


SCALAR_TYPES = (str, int, bool, float)
# Values that are their own JSON form (exactly these types: a subclass, an enum, may not be).
PLAIN_TYPES = frozenset({str, int, bool, type(None)})


# Annotation shapes by the annotation's id, each kept with its annotation (which keeps
# the id from being reused). Not by equality: `int | str` equals `str | int`, and the
# order of a union's members decides which one a value is encoded as.
_SHAPES: dict[int, tuple[Any, _Shape]] = {}


def _shape(annotation: Any) -> _Shape:
    known = _SHAPES.get(id(annotation))
    if known is not None and known[0] is annotation:
        return known[1]
    args, origin = typing.get_args(annotation), typing.get_origin(annotation)
    union = origin in (typing.Union, types.UnionType)
    members = tuple(a for a in args if a is not type(None)) if union else ()
    shape = _Shape(
        args, origin, union, members,
        annotation is object or annotation is Any or (
            union and any(typing.get_origin(a) in (list, dict) for a in args)),
        union and len(members) > 1 and all(dataclasses.is_dataclass(a) for a in members),
        annotation is float or (union and float in args),
        is_interface(annotation), is_view(annotation),
        annotation in SCALAR_TYPES or (union and all(m in SCALAR_TYPES for m in members)))
    _SHAPES[id(annotation)] = (annotation, shape)
    return shape


def _args(annotation: Any) -> tuple[Any, ...]:
    return _shape(annotation).args


def _origin(annotation: Any) -> Any:
    return _shape(annotation).origin


def _is_union(annotation: Any) -> bool:
    return _shape(annotation).union


def _is_any_json(annotation: Any) -> bool:
    return _shape(annotation).any_json


def _tagged(annotation: Any) -> bool:
    return _shape(annotation).tagged


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


# The text of instants written lately, by the instant object's id, each kept with its object
# (which keeps the id from being reused): a virtual clock hands out the same object until
# it moves, and a record keeps its instants, so most are written many times. By identity,
# not equality: the same instant at another offset is written differently (LC-005).
_TIMESTAMPS: dict[int, tuple[datetime, str]] = {}
TIMESTAMPS_KEPT = 4096


def encode_timestamp(moment: datetime) -> str:
    """UTC as `2026-01-01T00:00:05.000000Z`; another offset, or none, as written."""
    known = _TIMESTAMPS.get(id(moment))
    if known is not None and known[0] is moment:
        return known[1]
    if moment.utcoffset() == timedelta(0):
        text = moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    else:
        text = moment.isoformat()
    if len(_TIMESTAMPS) >= TIMESTAMPS_KEPT:
        _TIMESTAMPS.clear()
    _TIMESTAMPS[id(moment)] = (moment, text)
    return text


def encode_json(value: Any) -> Any:
    """Any JSON value, its non-finite floats as strings (JSON has no NaN)."""
    if type(value) in PLAIN_TYPES:
        return value
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, list | tuple):
        return [encode_json(item) for item in value]
    if isinstance(value, dict):
        return {str(key): encode_json(item) for key, item in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return encode_timestamp(value)
    return value


# What encodes and decodes each annotation's values, worked out once per annotation (kept
# by id with the annotation, as the shapes are): the commonest forms (scalars, optional
# values, timestamps, records and views, lists of them) get a function that goes straight
# to the fields; every other form goes the general way, `_encode_any` and `_decode_any`.
Encoder = Callable[[Any, Handles], Any]
Decoder = Callable[[Any, Handles, str], Any]
_ENCODERS: dict[int, tuple[Any, Encoder]] = {}
_DECODERS: dict[int, tuple[Any, Decoder]] = {}


def encode(value: Any, annotation: Any, handles: Handles) -> Any:
    """The JSON form of `value` as `annotation` gives it (see the module's table)."""
    known = _ENCODERS.get(id(annotation))
    if known is None or known[0] is not annotation:
        known = (annotation, _encoder(annotation))
        _ENCODERS[id(annotation)] = known
    return known[1](value, handles)


def _encoder(annotation: Any) -> Encoder:
    """The function that encodes values of `annotation` as `_encode_any` does."""
    shape = _shape(annotation)
    if shape.any_json or shape.scalar:
        def plain(value: Any, handles: Handles) -> Any:
            return value if type(value) in PLAIN_TYPES else encode_json(value)
        return plain
    if shape.union and not shape.tagged and len(shape.members) == 1:
        member = shape.members[0]

        def optional(value: Any, handles: Handles) -> Any:
            if value is None:
                return None
            if _accepts(member, value):
                return encode(value, member, handles)
            return encode_json(value)
        return optional
    if annotation is datetime:
        def timestamp(value: Any, handles: Handles) -> Any:
            if isinstance(value, datetime):
                return encode_timestamp(value)
            return encode_json(value)
        return timestamp
    if shape.view:
        optional_fields = AREA_FIELDS | LATER_FIELDS.get(annotation.__name__, frozenset())
        fields = tuple((name, name in optional_fields, hint)
                       for name, hint in view_fields(annotation))

        def view(value: Any, handles: Handles) -> Any:
            if value is None:
                return None
            return {name: encode(getattr(value, name, None) if optional else
                                 getattr(value, name), hint, handles)
                    for name, optional, hint in fields}
        return view
    if (isinstance(annotation, type) and dataclasses.is_dataclass(annotation)
            and not shape.interface):
        hints = _hints(annotation)
        names = tuple((f.name, hints[f.name]) for f in dataclasses.fields(annotation))

        def record(value: Any, handles: Handles) -> Any:
            if value is None:
                return None
            return {name: encode(getattr(value, name), hint, handles) for name, hint in names}
        return record
    if _homogeneous(shape):
        item_type = shape.args[0]

        def items(value: Any, handles: Handles) -> Any:
            if isinstance(value, list | tuple):
                return [encode(item, item_type, handles) for item in value]
            return _encode_any(value, annotation, handles)
        return items
    return lambda value, handles: _encode_any(value, annotation, handles)


def _homogeneous(shape: _Shape) -> bool:
    """A list, a sequence or a `tuple[X, ...]`: every item of one annotation."""
    if shape.origin in (list, Sequence):
        return len(shape.args) == 1
    return shape.origin is tuple and len(shape.args) == 2 and shape.args[1] is Ellipsis


def _encode_any(value: Any, annotation: Any, handles: Handles) -> Any:
    """The JSON form of `value` as `annotation` gives it, for any annotation."""
    shape = _shape(annotation)
    if value is None or shape.any_json or shape.scalar:
        return encode_json(value)
    if shape.union:
        if shape.tagged:
            document = encode(value, type(value), handles)
            return {"type": type(value).__name__, **document}
        for member in shape.members:
            if _accepts(member, value):
                return encode(value, member, handles)
        return encode_json(value)
    origin = shape.origin
    if annotation is datetime:
        return encode_timestamp(value) if isinstance(value, datetime) else encode_json(value)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return value.value if isinstance(value, enum.Enum) else value
    if shape.interface:
        document = {"handle": handles.handle_of(value, annotation)}
        for name, hint in view_fields(annotation):
            document[name] = encode(getattr(value, name), hint, handles)
        return document
    if shape.view:
        optional = AREA_FIELDS | LATER_FIELDS.get(annotation.__name__, frozenset())
        return {name: encode(_field(value, name, optional), hint, handles)
                for name, hint in view_fields(annotation)}
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        hints = _hints(annotation)
        return {f.name: encode(getattr(value, f.name), hints[f.name], handles)
                for f in dataclasses.fields(annotation)}
    if origin in (list, tuple, Sequence, frozenset, set) and not isinstance(value, str | dict):
        items = list(value) if origin not in (frozenset, set) else sorted(value, key=repr)
        return [encode(item, _item_type(annotation, index), handles)
                for index, item in enumerate(items)]
    if origin in (dict, Mapping) and isinstance(value, Mapping):
        value_type = _args(annotation)[1]
        return {str(key): encode(item, value_type, handles) for key, item in value.items()}
    return encode_json(value)


def _field(value: Any, name: str, optional: frozenset[str]) -> Any:
    # A runtime's own view lacks the fields of job areas it does not claim, and those
    # added to its view later: null then.
    if name in optional:
        return getattr(value, name, None)
    return getattr(value, name)


def _accepts(member: Any, value: Any) -> bool:
    base = _origin(member) or member
    if base is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if base in (Sequence, list, tuple):
        return isinstance(value, list | tuple)
    if base in (Mapping, dict):
        return isinstance(value, Mapping)
    if _shape(base).interface or _shape(base).view:
        return True
    return isinstance(base, type) and isinstance(value, base)


def _item_type(annotation: Any, index: int) -> Any:
    args = _args(annotation)
    if _origin(annotation) is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        return args[index] if index < len(args) else object
    return args[0] if args else object


def decode(document: Any, annotation: Any, handles: Handles, where: str = "value") -> Any:
    """The value of `annotation` that `document` stands for.

    Raises:
        CodecError: the document cannot be read as that type; `where` names its place.
    """
    known = _DECODERS.get(id(annotation))
    if known is None or known[0] is not annotation:
        known = (annotation, _decoder(annotation))
        _DECODERS[id(annotation)] = known
    return known[1](document, handles, where)


def _decoder(annotation: Any) -> Decoder:
    """The function that decodes documents of `annotation` as `_decode_any` does."""
    shape = _shape(annotation)
    if shape.scalar and annotation in SCALARS:
        with_float = shape.with_float

        def scalar(document: Any, handles: Handles, where: str) -> Any:
            if document is None:
                return None
            if with_float and isinstance(document, str) and document in NON_FINITE:
                return NON_FINITE[document]
            if not _is_scalar(document, annotation):
                raise CodecError(f"{where} must be {SCALARS[annotation]}, not"
                                 f" {_clip(document)}")
            return document
        return scalar
    if shape.any_json and not shape.with_float:
        return lambda document, handles, where: document
    if shape.union and not shape.tagged and len(shape.members) == 1:
        member, with_float = shape.members[0], shape.with_float

        def optional(document: Any, handles: Handles, where: str) -> Any:
            if document is None:
                return None
            if with_float and isinstance(document, str) and document in NON_FINITE:
                return NON_FINITE[document]
            return decode(document, member, handles, where)
        return optional
    if shape.view:
        later = LATER_FIELDS.get(annotation.__name__, frozenset())
        fields = view_fields(annotation)
        build = record_type(annotation)

        def view(document: Any, handles: Handles, where: str) -> Any:
            if document is None:
                return None
            if later and isinstance(document, dict):
                # A child that predates a field added later leaves it out: null.
                document = {**dict.fromkeys(later), **document}
            return _decode_fields(document, fields, build, handles, where, later)
        return view
    if (isinstance(annotation, type) and dataclasses.is_dataclass(annotation)
            and not shape.interface and not issubclass(annotation, enum.Enum)):
        hints = _hints(annotation)
        declared = tuple((f.name, hints[f.name], f.default is dataclasses.MISSING
                        and f.default_factory is dataclasses.MISSING)
                       for f in dataclasses.fields(annotation))

        def record(document: Any, handles: Handles, where: str) -> Any:
            if document is None:
                return None
            present = document if isinstance(document, dict) else {}
            given = tuple((name, hint) for name, hint, required in declared
                          if required or name in present)
            return _decode_fields(document, given, annotation, handles, where)
        return record
    if _homogeneous(shape):
        item_type, as_tuple = shape.args[0], shape.origin is tuple

        def items(document: Any, handles: Handles, where: str) -> Any:
            if document is None:
                return None
            if not isinstance(document, list):
                raise CodecError(f"{where} must be an array, not {document!r}")
            decoded = [decode(item, item_type, handles, f"{where}[{index}]")
                       for index, item in enumerate(document)]
            return tuple(decoded) if as_tuple else decoded
        return items
    return lambda document, handles, where: _decode_any(document, annotation, handles, where)


def _decode_any(document: Any, annotation: Any, handles: Handles, where: str) -> Any:
    """The value of `annotation` that `document` stands for, for any annotation."""
    if document is None:
        return None
    shape = _shape(annotation)
    if shape.with_float and isinstance(document, str) and document in NON_FINITE:
        return NON_FINITE[document]
    if shape.scalar and annotation in SCALARS:
        if not _is_scalar(document, annotation):
            raise CodecError(f"{where} must be {SCALARS[annotation]}, not {_clip(document)}")
        return document
    if shape.any_json:
        return document
    if shape.union:
        members = list(shape.members)
        if shape.tagged:
            if not isinstance(document, dict) or document.get("type") not in {
                    m.__name__ for m in members}:
                raise CodecError(f"{where} must be an object whose \"type\" is one of"
                                 f" {', '.join(m.__name__ for m in members)}, not {document!r}")
            chosen = next(m for m in members if m.__name__ == document["type"])
            fields = {k: v for k, v in document.items() if k != "type"}
            return decode(fields, chosen, handles, where)
        return decode(document, members[0], handles, where) if len(members) == 1 else document
    origin = shape.origin
    if annotation is datetime:
        if not isinstance(document, str):
            raise CodecError(f"{where} must be an RFC 3339 timestamp string, not {document!r}")
        try:
            return datetime.fromisoformat(document)
        except ValueError:
            raise CodecError(f"{where} is not an RFC 3339 timestamp: {document!r}") from None
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        try:
            return annotation(document)
        except ValueError:
            raise CodecError(f"{where} must be one of {[m.value for m in annotation]},"
                             f" not {document!r}") from None
    if shape.interface:
        if not isinstance(document, dict) or not isinstance(document.get("handle"), str):
            raise CodecError(f"{where} must be a handle {{\"handle\": \"...\"}} of a"
                             f" {annotation.__name__}, not {document!r}")
        return handles.object_for(document, annotation)
    if shape.view:
        later = LATER_FIELDS.get(annotation.__name__, frozenset())
        if later and isinstance(document, dict):
            # A child that predates a field added later leaves it out: null.
            document = {**dict.fromkeys(later), **document}
        return _decode_fields(document, view_fields(annotation), record_type(annotation),
                              handles, where,
                              LATER_FIELDS.get(annotation.__name__, frozenset()))
    if isinstance(annotation, type) and dataclasses.is_dataclass(annotation):
        hints = _hints(annotation)
        present = document if isinstance(document, dict) else {}
        given = tuple((f.name, hints[f.name]) for f in dataclasses.fields(annotation)
                      if f.name in present or (f.default is dataclasses.MISSING
                                               and f.default_factory is dataclasses.MISSING))
        return _decode_fields(document, given, annotation, handles, where)
    if origin in (list, tuple, Sequence, frozenset, set):
        if not isinstance(document, list):
            raise CodecError(f"{where} must be an array, not {document!r}")
        items = [decode(item, _item_type(annotation, index), handles, f"{where}[{index}]")
                 for index, item in enumerate(document)]
        if origin is tuple:
            return tuple(items)
        if origin in (frozenset, set):
            return frozenset(items)
        return items
    if origin in (dict, Mapping):
        if not isinstance(document, dict):
            raise CodecError(f"{where} must be an object, not {document!r}")
        value_type = _args(annotation)[1]
        return {key: decode(item, value_type, handles, f"{where}.{key}")
                for key, item in document.items()}
    if annotation is None or annotation is type(None):
        # An operation that answers nothing (dispatch, settle, close): anything else is a
        # child that does something the kit does not know of.
        raise CodecError(f"{where} must be null, not {_clip(document)}")
    if annotation in SCALARS and not _is_scalar(document, annotation):
        raise CodecError(f"{where} must be {SCALARS[annotation]}, not {_clip(document)}")
    return document


# What a JSON scalar must be to stand for each Python type: a whole number may stand for a
# float (JSON writes 2.0 as 2); a boolean is never a number, though Python's bool is an int.
SCALARS: dict[Any, str] = {bool: "true or false", int: "a whole number",
                           float: "a number", str: "a string"}


def _is_scalar(document: Any, annotation: Any) -> bool:
    if annotation is bool or isinstance(document, bool):
        return annotation is bool and isinstance(document, bool)
    if annotation is float:
        return isinstance(document, int | float)
    return isinstance(document, annotation)


def _decode_fields(document: Any, fields: tuple[tuple[str, Any], ...], build: Any,
                   handles: Handles, where: str, later: frozenset[str] = frozenset()) -> Any:
    """The object `build` makes of `document`'s fields; a field in `later` may be absent
    (`interfaces.LATER_FIELDS`) and is then null."""
    if not isinstance(document, dict):
        raise CodecError(f"{where} must be an object, not {document!r}")
    missing = [name for name, _ in fields if name not in document and name not in later]
    if missing:
        raise CodecError(f"{where} lacks {', '.join(missing)}: {_clip(document)}")
    values = {name: decode(document.get(name), hint, handles, f"{where}.{name}")
              for name, hint in fields}
    try:
        return build(**values)
    except (TypeError, ValueError) as error:
        raise CodecError(f"{where} is not a valid {getattr(build, '__name__', build)}:"
                         f" {error}") from None


def _clip(document: Any, limit: int = 200) -> str:
    text = repr(document)
    return text if len(text) <= limit else text[:limit] + "…"


@cache
def record_type(view: type) -> type:
    """A frozen dataclass with a view protocol's properties: how a received view is held
    (always a snapshot, LC-016)."""
    return dataclasses.make_dataclass(
        view.__name__ + "Snapshot", [(name, hint) for name, hint in view_fields(view)],
        frozen=True)
