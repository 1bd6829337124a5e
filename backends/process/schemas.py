"""The JSON Schemas of the process protocol, shipped with the package, as validators.

`schemas/request.schema.json` specifies every request, `response.schema.json` every
successful answer (the result of operation X is its `$defs/X`), `error.schema.json` an
error answer, and `common.schema.json` the values they share. The parent checks every
line the child writes against them, so a malformed answer is reported where it happens
with the rule it breaks; the reference child checks every request it reads.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
import typing
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

from jobconform.backends.process import codec
from jobconform.backends.process.interfaces import (
    CHILD_INTERFACES,
    ERROR_KINDS,
    KIT_INTERFACES,
    LATER_FIELDS,
    ScriptedError,
    is_interface,
    is_view,
    methods,
    view_fields,
)

SCHEMA_NAMES = ("common", "request", "response", "error")  # version 1
PREFIX = "urn:jobconform:process-protocol:1:"


def load_schema(name: str) -> dict[str, Any]:
    """One of the protocol's schemas, by name (`request`, `response`, …)."""
    text = (resources.files("jobconform.backends.process") / "schemas"
            / f"{name}.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


@cache
def _registry() -> Registry[Any]:
    return Registry().with_resources(
        (PREFIX + name, Resource.from_contents(load_schema(name))) for name in SCHEMA_NAMES
    )


@cache
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json), registry=_registry())


def _problem(validator: Draft202012Validator, message: object) -> str | None:
    error = best_match(validator.iter_errors(message))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "the message"
    return f"{where}: {error.message}"


def request_problem(message: object) -> str | None:
    """Why `message` is not a valid request, or None when it is."""
    return _problem(_validator(json.dumps({"$ref": PREFIX + "request"})), message)


def response_problem(message: object, operation: str) -> str | None:
    """Why `message` is not a valid answer to `operation`, or None when it is."""
    schema = {
        "allOf": [
            {"$ref": PREFIX + "response"},
            {"if": {"properties": {"ok": {"const": True}}},
             "then": {"properties": {"result": {"$ref": f"{PREFIX}response#/$defs/{operation}"}}}},
        ]
    }
    return _problem(_validator(json.dumps(schema, sort_keys=True)), message)


# -- version 2: generated from the interfaces ---------------------------------------------------

V2_SCHEMA_NAME = "protocol-2"
V2_ID = "urn:jobconform:process-protocol:2"
TIMESTAMP_PATTERN = (r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?"
                     r"(Z|[+-][0-9]{2}:[0-9]{2})?$")


def _type_name(annotation: Any) -> str:
    module = annotation.__module__.split(".")
    # Two areas may name a type alike (ExecutionView): the area's name tells them apart.
    area = module[2] if len(module) > 3 and module[1] in ("backends", "reference") else ""
    return f"{area}.{annotation.__name__}" if area and area not in ("process",) else \
        annotation.__name__


def schema_of(annotation: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of `annotation`'s JSON form (codec.py's table); named types go to
    `defs` once and are referenced."""
    if annotation is type(None):
        return {"type": "null"}
    if codec._is_any_json(annotation):
        return {"description": "any JSON value"}
    if codec._is_union(annotation):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        nullable = type(None) in typing.get_args(annotation)
        choices = [schema_of(member, defs) for member in members]
        if codec._tagged(annotation):  # each value says which dataclass with "type"
            choices = [{"allOf": [choice, {"required": ["type"], "properties": {
                "type": {"const": member.__name__}}}]}
                for choice, member in zip(choices, members, strict=True)]
        if nullable:
            choices.append({"type": "null"})
        return {"anyOf": choices} if len(choices) > 1 else choices[0]
    if annotation is str:
        return {"type": "string"}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"anyOf": [{"type": "number"}, {"enum": sorted(codec.NON_FINITE)}]}
    if annotation is datetime:
        return {"type": "string", "pattern": TIMESTAMP_PATTERN}
    origin = typing.get_origin(annotation)
    if origin is not None:
        args = typing.get_args(annotation)
        if origin in (dict, Mapping):
            return {"type": "object", "additionalProperties": schema_of(args[1], defs)}
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return {"type": "array", "prefixItems": [schema_of(a, defs) for a in args],
                    "minItems": len(args), "maxItems": len(args)}
        if origin in (list, tuple, Sequence, frozenset, set):
            return {"type": "array", "items": schema_of(args[0], defs)}
    name = _type_name(annotation)
    if name not in defs:
        defs[name] = {}  # a placeholder while its fields refer to others
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            defs[name] = {"enum": [member.value for member in annotation]}
        elif is_interface(annotation):
            properties = {"handle": {"type": "string", "minLength": 1}}
            properties.update({field: schema_of(hint, defs)
                               for field, hint in view_fields(annotation)})
            defs[name] = {"description": f"a handle of a {annotation.__name__}",
                          "type": "object", "required": sorted(properties),
                          "properties": properties}
        elif is_view(annotation) or dataclasses.is_dataclass(annotation):
            if is_view(annotation):
                fields = list(view_fields(annotation))
                # A field added later may be left out by a child that predates it.
                later = LATER_FIELDS.get(annotation.__name__, frozenset())
                required = [field for field, _ in fields if field not in later]
            else:
                hints = typing.get_type_hints(annotation)
                fields = [(f.name, hints[f.name]) for f in dataclasses.fields(annotation)]
                required = [f.name for f in dataclasses.fields(annotation)
                            if f.default is dataclasses.MISSING
                            and f.default_factory is dataclasses.MISSING]
            defs[name] = {"type": "object", "required": required,
                          "properties": {field: schema_of(hint, defs)
                                         for field, hint in fields}}
        else:
            raise TypeError(f"no JSON form for {annotation!r}")
    return {"$ref": f"#/$defs/{name}"}


def _error_schema() -> dict[str, Any]:
    kinds = sorted([*ERROR_KINDS, ScriptedError.__name__, "ProtocolError", "InternalError"])
    return {"type": "object", "required": ["type", "message"],
            "properties": {"type": {"enum": kinds}, "message": {"type": "string"},
                           "data": {"type": "object"}}}


def generate_v2_schema() -> dict[str, Any]:
    """The whole of protocol version 2 as one JSON Schema document: the envelope of each
    kind of line, and for every method the shape of its arguments and of its result."""
    defs: dict[str, Any] = {}
    messages: dict[str, Any] = {}
    for interface in CHILD_INTERFACES + KIT_INTERFACES:
        for method in methods(interface).values():
            # The kit sends every argument, defaults included, but for the later ones
            # (interfaces.LATER_ARGUMENTS), which it sends only when given.
            required = [n for n, _ in method.parameters if n not in method.later]
            messages[method.op] = {
                "args": {"type": "object", "additionalProperties": False,
                         "required": required,
                         "properties": {n: schema_of(a, defs) for n, a in method.parameters}},
                "result": schema_of(method.returns, defs),
            }
    hello_result = {"type": "object", "required": ["protocol", "name", "profile",
                                                   "capabilities"],
                    "properties": {"protocol": {"const": 2}, "name": {"type": "string"},
                                   "profile": {"type": "string"},
                                   "capabilities": {"type": "array",
                                                    "items": {"type": "string"}},
                                   # The libraries the child wraps and their versions
                                   # (the report's "libraries"), when it says.
                                   "libraries": {"type": "object",
                                                 "additionalProperties": {"type": "string"}},
                                   # True: the child answers `batch` (several requests in
                                   # one exchange); absent or false: one by one.
                                   "batch": {"type": "boolean"}}}
    messages["hello"] = {"args": {"type": "object", "required": ["protocol"],
                                  "properties": {"protocol": {"type": "integer"}}},
                         "result": hello_result}
    messages["goodbye"] = {"args": {"type": "object", "maxProperties": 0},
                           "result": {"type": "null"}}
    # Several requests answered in one exchange, in order, by a child that announced it.
    messages["batch"] = {"args": {"type": "object", "required": ["requests"],
                                  "additionalProperties": False,
                                  "properties": {"requests": {"type": "array", "minItems": 1,
                                                              "items": {"$ref": "#/request"}}}},
                         "result": {"type": "array", "items": {"$ref": "#/answer"}}}
    child_ops = sorted(m.op for i in CHILD_INTERFACES for m in methods(i).values())
    kit_ops = sorted(m.op for i in KIT_INTERFACES for m in methods(i).values())
    id_schema = {"type": "integer", "minimum": 1}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": V2_ID,
        "title": "jobconform process protocol 2 (generated from the interfaces; do not edit)",
        "description": "Every line of version 2. `request`: the kit to the child;"
                       " `answer`: the child's answer to a request; `callback`: the child"
                       " calling one of the kit's objects while it handles a request;"
                       " `reply`: the kit's answer to a callback. `messages` gives, per op,"
                       " the shape of `args` and of an ok answer's `result`.",
        "request": {"type": "object", "required": ["id", "op", "args"],
                    "additionalProperties": False,
                    "properties": {"id": id_schema,
                                   "op": {"enum": ["hello", "goodbye", "batch", *child_ops]},
                                   "object": {"type": "string", "minLength": 1},
                                   "now": {"type": "string", "pattern": TIMESTAMP_PATTERN},
                                   "args": {"type": "object"}}},
        "answer": {"type": "object", "required": ["id", "ok"],
                   "properties": {"id": {"type": ["integer", "null"]},
                                  "ok": {"type": "boolean"}, "result": True,
                                  "error": {"$ref": "#/error"}},
                   "if": {"properties": {"ok": {"const": True}}},
                   "then": {"required": ["result"]}, "else": {"required": ["error"]}},
        "callback": {"type": "object", "required": ["callback", "op", "object", "args"],
                     "additionalProperties": False,
                     "properties": {"callback": id_schema, "op": {"enum": kit_ops},
                                    "object": {"type": "string", "minLength": 1},
                                    "args": {"type": "object"}}},
        "reply": {"type": "object", "required": ["callback", "ok"],
                  "properties": {"callback": id_schema, "ok": {"type": "boolean"},
                                 "result": True, "error": {"$ref": "#/error"}}},
        "error": _error_schema(),
        "messages": messages,
        "$defs": defs,
    }


@cache
def _v2_document() -> dict[str, Any]:
    return load_schema(V2_SCHEMA_NAME)


@cache
def _v2_validator(pointer: str) -> Draft202012Validator:
    document = dict(_v2_document())
    document["$ref"] = pointer
    return Draft202012Validator(document)


def v2_problem(message: object, kind: str, op: str | None = None) -> str | None:
    """Why `message` is not a valid version-2 line of `kind` (request, answer, callback,
    reply), with the args or result of its op checked too; None when it is valid."""
    problem = _problem(_v2_validator(f"#/{kind}"), message)
    if problem is not None or not isinstance(message, dict):
        return problem
    op = op if op is not None else message.get("op")
    if op not in _v2_document()["messages"]:
        return None
    if kind in ("request", "callback"):
        return _prefixed("args", _problem(_v2_validator(f"#/messages/{op}/args"),
                                          message.get("args")))
    if message.get("ok") is True:
        return _prefixed("result", _problem(_v2_validator(f"#/messages/{op}/result"),
                                            message.get("result")))
    return None


def _prefixed(where: str, problem: str | None) -> str | None:
    if problem is None:
        return None
    return f"{where}: {problem}" if not problem.startswith("the message") else \
        f"{where}: {problem.removeprefix('the message: ')}"


def v2_envelope_problem(message: dict[str, Any]) -> str | None:
    """The cheap check of every version-2 answer when the schemas are off."""
    if not isinstance(message.get("ok"), bool):
        return "'ok' must be true or false"
    if message["ok"]:
        return None if "result" in message else "an ok answer has a 'result'"
    error = message.get("error")
    if not isinstance(error, dict) or not isinstance(error.get("type"), str) or (
            not isinstance(error.get("message"), str)):
        return "'error' must be an object with a string 'type' and a string 'message'"
    if "data" in error and not isinstance(error["data"], dict):
        return "an error's 'data' is an object"
    return None


def write_v2_schema(folder: str) -> None:
    """Regenerate `folder`/protocol-2.schema.json: after an area's protocol changed, run
    `python -m jobconform.backends.process.schemas backends/process/schemas` in a checkout
    (tests/test_process_v2.py fails while the shipped file is stale)."""
    path = Path(folder) / f"{V2_SCHEMA_NAME}.schema.json"
    path.write_text(json.dumps(generate_v2_schema(), indent=1) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    write_v2_schema(sys.argv[1])
