"""The log records a runtime emits, as the kit reads them (capability `log-records`).

Some of what a job runtime promises is a log record: a reaper sweep that deleted jobs is
logged at DEBUG with the count, a call budget exhausted at WARNING with the agent and the
wait. An operator's alerting reads these records, so their level and the facts they
carry are behaviour; their wording is not.

A backend claiming `log-records` shows the records its runtimes emit in one of two ways:

- a Python runtime logs with the standard `logging` module, and the backend names the
  loggers it logs on in `log_loggers` (a tuple of logger names; a parent name covers its
  children). The harness captures what those loggers emit, at every level, while it
  checks (`LoggerCapture`); the runtime needs no code of its own for it;
- a runtime that cannot be reached through `logging` (a child process in another
  language) gives its runtime a method `log_records() -> Sequence[LogRecordView]` that
  answers the records emitted since the previous call, oldest first. The process
  protocol carries it as any other method.

A record carries facts, each a name and a value. The harness finds a fact in a record's
`fields` (for `logging`, the attributes given with `extra=`) or, failing that, as a
whole word of its message (a number may carry its unit), so `"deleted 2 expired jobs"`
carries the count 2 and `"after 10500ms"` the wait 10500, whatever the sentence around
them. Elsewhere the requirements that need `log-records` are "not
claimed", and nothing is captured.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from jobconform.backends.protocol import LOG_RECORDS
from jobconform.reference.lifecycle import JsonValue

__all__ = ["LOG_RECORDS", "LogRecordView", "LoggerCapture", "library_logger", "log_source",
           "view_of"]


def library_logger(name: str) -> logging.Logger:
    """The logger a shipped runtime logs on, with a `NullHandler`: a library leaves its
    output to the application, so until the application configures logging its records
    reach the root logger's handlers only (Robot's log shows them), and Python's
    last-resort handler does not print every warning of a test run to stderr."""
    logger = logging.getLogger(name)
    logger.addHandler(logging.NullHandler())
    return logger
# The attributes every `logging.LogRecord` has: what is left over was given with `extra=`.
_STANDARD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime", "taskName"}


@dataclass(frozen=True)
class LogRecordView:
    """One emitted record: its level name (DEBUG, INFO, WARNING, ERROR, CRITICAL), the
    logger that emitted it, its rendered message and the facts given with it."""

    level: str
    logger: str
    message: str
    fields: Mapping[str, JsonValue] = field(default_factory=dict)

    def carries(self, name: str, value: JsonValue) -> bool:
        """Whether the record carries the fact: a field of that name with that value, or
        the value as a whole word of the message."""
        if name in self.fields:
            return self.fields[name] == value
        text = str(value).lower() if isinstance(value, bool) else str(value)
        # A number may carry its unit ("10500ms"); it must not be part of a larger one.
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        after = r"(?!\d|\.\d)" if numeric else r"(?!\w)"
        pattern = r"(?<![\w.])" + re.escape(text) + after
        return re.search(pattern, self.message) is not None


def _field_value(value: object) -> JsonValue:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def view_of(record: logging.LogRecord) -> LogRecordView:
    """A `logging` record as the kit compares it."""
    extra = {name: _field_value(value) for name, value in vars(record).items()
             if name not in _STANDARD_ATTRIBUTES and not name.startswith("_")}
    return LogRecordView(record.levelname, record.name, record.getMessage(), extra)


class LoggerCapture(logging.Handler):
    """Captures every record the named loggers (and their children) emit, from any thread,
    until closed. The loggers are opened to DEBUG meanwhile, as a runtime's DEBUG records
    are part of what is checked, and set back on close."""

    def __init__(self, names: Iterable[str]) -> None:
        super().__init__(logging.DEBUG)
        self._lock_records = threading.Lock()
        self._records: list[LogRecordView] = []
        self._loggers = [logging.getLogger(name) for name in names]
        self._levels = [logger.level for logger in self._loggers]
        for logger in self._loggers:
            logger.addHandler(self)
            logger.setLevel(logging.DEBUG)

    def emit(self, record: logging.LogRecord) -> None:
        view = view_of(record)
        with self._lock_records:
            self._records.append(view)

    def drain(self) -> list[LogRecordView]:
        """The records captured since the previous drain, oldest first."""
        with self._lock_records:
            taken, self._records = self._records, []
        return taken

    def close(self) -> None:
        for logger, level in zip(self._loggers, self._levels, strict=True):
            logger.removeHandler(self)
            logger.setLevel(level)
        super().close()


def log_source(backend: object, runtime: object
               ) -> tuple[Callable[[], Sequence[LogRecordView]], Callable[[], None]]:
    """How to read the records a claiming backend's runtime emits, and how to stop.

    The runtime's own `log_records()` where it has one; otherwise a capture of the loggers
    the backend names in `log_loggers` (none named: nothing is ever read).
    """
    own = getattr(runtime, "log_records", None)
    if callable(own):
        return own, lambda: None
    capture = LoggerCapture(getattr(backend, "log_loggers", ()))
    return capture.drain, capture.close
