"""The log records the spec asks a runtime to emit, as the oracles expect them (pure).

A requirement on a log record fixes its level and the facts it carries (the agent and
the wait of an exhausted call budget, the count of a sweep), never its wording. An
oracle notes each record a command makes due; the harness of a backend claiming
`log-records` then looks for it among the records the runtime emitted during the same
command (`jobconform.backends.log_records`).
"""

from __future__ import annotations

from dataclasses import dataclass

from jobconform.reference.lifecycle import JsonValue

DEBUG = "DEBUG"
INFO = "INFO"
WARNING = "WARNING"


@dataclass(frozen=True)
class ExpectedLog:
    """A record the runtime must emit: at `level`, carrying every one of `facts`."""

    requirement: str
    level: str
    facts: tuple[tuple[str, JsonValue], ...]

    def describe(self) -> str:
        facts = ", ".join(f"{name}={value!r}" for name, value in self.facts)
        return f"a {self.level} record carrying {facts}"
