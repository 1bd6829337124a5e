"""The JSON Schemas of the process protocol, shipped with the package, as validators.

`schemas/request.schema.json` specifies every request, `response.schema.json` every
successful answer (the result of operation X is its `$defs/X`), `error.schema.json` an
error answer, and `common.schema.json` the values they share. The parent checks every
line the child writes against them, so a malformed answer is reported where it happens
with the rule it breaks; the reference child checks every request it reads.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match
from referencing import Registry, Resource

SCHEMA_NAMES = ("common", "request", "response", "error")
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
