"""Finding the records an oracle expects among those a runtime emitted (`log-records`).

Each expected record must be matched by a record of its own, emitted during the same
command, at the same level and carrying every fact (`LogRecordView.carries`). Records
nobody expects are allowed: a runtime logs more than the spec asks. Shared by the job
harness and the area harnesses, so a record means the same in every area.
"""

from __future__ import annotations

from collections.abc import Sequence

from jobconform.backends.log_records import LogRecordView, log_source
from jobconform.reference.log_records import ExpectedLog


def first_unmatched(expected: Sequence[ExpectedLog], emitted: Sequence[LogRecordView]
                    ) -> ExpectedLog | None:
    """The first expected record no emitted one matches, or None when all are matched."""
    unused = list(emitted)
    for wanted in expected:
        match = next((record for record in unused if record.level == wanted.level
                      and all(record.carries(name, value) for name, value in wanted.facts)),
                     None)
        if match is None:
            return wanted
        unused.remove(match)
    return None


def shown(emitted: Sequence[LogRecordView]) -> list[str]:
    """The emitted records as a divergence shows them: level, logger, message, fields."""
    return [f"{record.level} {record.logger}: {record.message}"
            + (f" {dict(record.fields)}" if record.fields else "") for record in emitted]


class LogWatch:
    """The records a claiming backend's runtime emits, read command by command.

    Args:
        backend: the adapter; its `log_loggers` name the loggers captured, unless the
            runtime has its own `log_records()`.
        runtime: the runtime opened for the check.
    """

    def __init__(self, backend: object, runtime: object) -> None:
        self._backend = backend
        self._read, self._stop = log_source(backend, runtime)

    def reopen(self, runtime: object) -> None:
        """A new runtime replaced the old one (a restart): read the new one's records."""
        self._stop()
        self._read, self._stop = log_source(self._backend, runtime)

    def discard(self) -> None:
        """Forget what was emitted so far: a command's records are its own."""
        self._read()

    def unmatched(self, expected: Sequence[ExpectedLog]
                  ) -> tuple[ExpectedLog, list[LogRecordView]] | None:
        """Read the records emitted since the last read; the first expected record none
        of them matches, with what was emitted, or None."""
        emitted = list(self._read())
        missing = first_unmatched(expected, emitted)
        return None if missing is None else (missing, emitted)

    def close(self) -> None:
        self._stop()
