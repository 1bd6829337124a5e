"""The JSON Schemas the kit publishes for its files: reports, traces, expected failures.

They live in conformance/schemas/ and ship with the package, so a CI job or another
language's tooling can validate what `jobconform` writes without importing it.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema


def load_schema(name: str) -> dict[str, Any]:
    """One published schema, by file name (`report.schema.json`)."""
    text = resources.files("jobconform.conformance").joinpath("schemas", name).read_text(
        encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def first_problem(document: object, schema_name: str) -> str | None:
    """Where and how `document` departs from the schema (the first problem), or None."""
    validator = jsonschema.Draft202012Validator(load_schema(schema_name))
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    where = "/".join(str(part) for part in errors[0].absolute_path) or "(top level)"
    return f"at {where}: {errors[0].message}"
