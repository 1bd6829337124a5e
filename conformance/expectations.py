"""Known deviations as data: the expected-failures file, keyed by requirement ID.

A runtime that knowingly departs from a requirement lists it, with a reason and an
optional link to the issue that tracks it:

    # expected-failures.yaml
    LC-016:
      reason: get() hands out the live record; tracked upstream
      link: https://example.org/issues/12

An entry may name the suites it applies to, for a cause only some suites meet (say, a
sequence only the Hypothesis machine draws):

    SC-002:
      reason: a change is seen at the scheduler's next look, up to a second late
      suites: [hypothesis]

A listed requirement that fails in a suite the entry applies to (every suite, unless it
names some) is reported as "expected failure" and does not fail the run; in any other
suite its failure is a failure. The list must stay honest, so two things fail the run:
an entry whose requirement no suite it applies to fails any more (an unexpected pass:
remove the entry), and an entry naming no requirement of the spec (a stale entry: a
typo, or a requirement that was removed). The second is known before anything runs, so
`jobconform run` refuses such a file at once, as it does a file listing one requirement
twice (YAML would keep the last silently), a link that is not an http(s) URL or a suite
that is not behave, robot or hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from jobconform.conformance.schema_files import first_problem

SCHEMA_FILE = "expected-failures.schema.json"


class ExpectationsError(ValueError):
    """The expected-failures file cannot be read or does not match its schema."""


@dataclass(frozen=True)
class ExpectedFailure:
    requirement: str
    reason: str
    link: str | None = None
    # The suites the entry applies to; None: every suite.
    suites: frozenset[str] | None = None

    def applies_to(self, suite: str) -> bool:
        return self.suites is None or suite in self.suites


class _UniqueKeysLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that holds one key twice."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise ExpectationsError(
                    f"{key!r} is listed twice (lines {seen[key]} and {line}): YAML would keep"
                    " the second entry only; merge the two into one")
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def stale_entries(expected: dict[str, ExpectedFailure], known: set[str],
                  version: str) -> list[str]:
    """Entries naming no requirement of the spec, each with how to fix it."""
    return [f"{rid}: stale entry, the spec {version} has no such requirement (reason given:"
            f" {entry.reason!r}); fix the ID or remove the entry (`jobconform list"
            " requirements` lists them)"
            for rid, entry in sorted(expected.items()) if rid not in known]


def parse_expectations(document: object, source: str) -> dict[str, ExpectedFailure]:
    """Validate a loaded expected-failures document and turn it into entries.

    Raises:
        ExpectationsError: the document does not match the schema; the message names the
            entry and what to fix.
    """
    if document is None:
        return {}  # an empty file lists nothing
    problem = first_problem(document, SCHEMA_FILE)
    if problem is not None:
        raise ExpectationsError(
            f"{source} does not match {SCHEMA_FILE} {problem}. Each entry is a requirement"
            " ID mapping to {reason: text, link: optional http(s) URL, suites: optional"
            " list of behave, robot, hypothesis}")
    assert isinstance(document, dict)
    return {rid: ExpectedFailure(rid, body["reason"].strip(), body.get("link"),
                                 frozenset(body["suites"]) if "suites" in body else None)
            for rid, body in document.items()}


def load_expectations(path: Path) -> dict[str, ExpectedFailure]:
    """Read an expected-failures YAML file.

    Raises:
        ExpectationsError: the file is missing, not UTF-8, not YAML, or off-schema.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ExpectationsError(f"cannot read the expected-failures file {path}: {error}"
                                ) from error
    except UnicodeDecodeError as error:
        raise ExpectationsError(f"the expected-failures file {path} is not UTF-8 text"
                                f" ({error.reason} at byte {error.start}): save it as UTF-8"
                                ) from error
    try:
        document = yaml.load(text, Loader=_UniqueKeysLoader)  # a SafeLoader underneath
    except yaml.YAMLError as error:
        raise ExpectationsError(f"{path} is not valid YAML: {error}") from error
    except ExpectationsError as error:
        raise ExpectationsError(f"{path}: {error}") from error
    return parse_expectations(document, str(path))
