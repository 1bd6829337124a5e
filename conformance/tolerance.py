"""Deviation-tolerant runs: a listed deviation is recorded, and the check goes on.

With `--expected-failures`, the runner tells every harness which requirements are known
deviations of the runtime (the environment variable below, so that the Behave child
process sees them too). When a divergence's *primary* requirement is listed, the harness
records it here instead of raising, takes the backend's answer for that step and carries
on; one known deviation then no longer hides the rest of the case. An adapter that raises
where its listed deviation is (a delay function that overflows) is recorded the same way.
The oracle then adopts the runtime's whole observable state (`Harness`), so a deviation's
consequences are never judged again under another requirement.

At the end of each case the front-end takes the recorded deviations and reports the case
as failed on them alone, having run to its end (`RAN_TO_END` in its message): the
requirements it covers count as checked, the listed ones as expected failures.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

TOLERATE_VARIABLE = "JOBCONFORM_TOLERATE"
# Where a front-end in a child process (Behave) writes each case's tolerated deviations.
DEVIATIONS_FILE_VARIABLE = "JOBCONFORM_DEVIATIONS_FILE"
# Written in a case's message when it failed only on tolerated deviations.
RAN_TO_END = "the case ran to its end past these listed deviations"
# A Robot check that failed on the deviation the harness just recorded starts with this.
AT_LISTED_DEVIATION = "(at a listed deviation)"


@dataclass(frozen=True)
class Deviation:
    primary: str
    message: str


_journal: list[Deviation] = []
# Whether a harness adopted the backend's state after a listed deviation in this case: the
# case's own fixed expectations may then meet that deviation's consequence anywhere.
_adopted_state = [False]
# Whether the latest command any harness ran had a listed deviation tolerated: a check a
# suite makes of that command's outcome then fails on the same deviation.
_latest_deviated = [False]


# The latest command's requirements, named: an error a front-end meets outside the
# harness (a keyword reading a record that is a dict) is reported with them.
# Named only when an error needs them: formatting costs more than a command.
_latest_requirements: list[Callable[[], str] | None] = [None]


def note_command(deviated: bool, requirements: Callable[[], str] | None = None) -> None:
    _latest_deviated[0] = deviated
    if requirements is not None:
        _latest_requirements[0] = requirements


def forget_requirements() -> None:
    _latest_requirements[0] = None


def with_requirements(message: str, fallback: Iterable[str] = ()) -> str:
    """The message, with the latest command's requirements unless it names some (or,
    before any command, the `fallback`: the case's own requirements)."""
    if "requirement(s):" in message:
        return message
    named = _latest_requirements[0]
    text = named() if named is not None else ", ".join(fallback)
    return f"{message}\n  requirement(s): {text}" if text else message


def latest_command_deviated() -> bool:
    return _latest_deviated[0]


def shows_listed_deviation(checked: Iterable[str]) -> bool:
    """Whether a failed check of a case checking `checked` sees a listed deviation a
    harness recorded in this case: at the latest command, earlier in a case of that very
    requirement, or earlier where the deviation changed the backend's state. The oracle
    took the backend's state then, and goes on judging every command against it; the
    case's own expectations are fixed and still see the deviation's consequence (a job
    a listed cancel bug ended at once is not "still running" in a scenario of another
    cancel rule)."""
    wanted = set(checked)
    return (_latest_deviated[0] or _adopted_state[0]
            or any(deviation.primary in wanted for deviation in _journal))


def note_adopted() -> None:
    """A harness took the backend's state into its oracle after a listed deviation."""
    _adopted_state[0] = True


def robot_failure(message: str, checked: Iterable[str]) -> AssertionError:
    """A Robot keyword's failed check, marked when it sees a listed deviation (the
    listener then reports the test on that deviation alone)."""
    if shows_listed_deviation(checked):
        return AssertionError(f"{AT_LISTED_DEVIATION} {message}")
    return AssertionError(message)


def tolerated() -> frozenset[str]:
    """The requirement IDs whose divergences are recorded instead of raised."""
    raw = os.environ.get(TOLERATE_VARIABLE, "")
    return frozenset(rid.strip() for rid in raw.split(",") if rid.strip())


@contextmanager
def tolerating(requirement_ids: Iterable[str]) -> Iterator[None]:
    """Tolerate these requirements' divergences in this process and its children."""
    before = os.environ.get(TOLERATE_VARIABLE)
    os.environ[TOLERATE_VARIABLE] = ",".join(sorted(requirement_ids))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(TOLERATE_VARIABLE, None)
        else:
            os.environ[TOLERATE_VARIABLE] = before


def record(primary: str, message: str) -> None:
    """Note a tolerated divergence; the same primary is noted once per case."""
    if all(deviation.primary != primary for deviation in _journal):
        _journal.append(Deviation(primary, message))


def start_case() -> None:
    """A case starts: nothing recorded, no command run, no requirement named yet."""
    take()
    note_command(False)
    forget_requirements()


def take() -> list[Deviation]:
    """The deviations noted since the last call (a case's start), and forget them."""
    taken = list(_journal)
    _journal.clear()
    _adopted_state[0] = False
    return taken


def case_message(deviations: list[Deviation]) -> str:
    """A failed case's message for tolerated deviations; the first lines name them."""
    primaries = ", ".join(deviation.primary for deviation in deviations)
    lines = [f"listed deviation(s) {primaries}: {RAN_TO_END}",
             f"  requirement(s): {primaries}"]
    for deviation in deviations:
        lines.append(deviation.message)
    return "\n".join(lines)


def write_case_deviations(case: str, deviations: list[Deviation]) -> None:
    """Append one case's deviations to the file the runner named, as one JSON line."""
    path = os.environ.get(DEVIATIONS_FILE_VARIABLE)
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(json.dumps({"case": case, "message": case_message(deviations)})
                         + "\n")


def write_case_error(case: str, message: str) -> None:
    """Append the error a case's step raised (the same file, kind "error")."""
    path = os.environ.get(DEVIATIONS_FILE_VARIABLE)
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(json.dumps({"case": case, "message": message, "kind": "error"})
                         + "\n")


def read_case_deviations(path: str, kind: str = "deviations") -> dict[str, str]:
    """Case name -> the failure message of its tolerated deviations (or of its error)."""
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as stream:
        entries = [json.loads(line) for line in stream if line.strip()]
    return {str(entry["case"]): str(entry["message"]) for entry in entries
            if entry.get("kind", "deviations") == kind}


class RobotDeviationListener:
    """A Robot Framework listener: a test that passed past listed deviations fails on
    them, with a message naming each (the runner reads it as having run to its end)."""

    ROBOT_LISTENER_API_VERSION = 3

    def start_test(self, data: object, result: object) -> None:
        start_case()

    def end_test(self, data: object, result: object) -> None:
        deviations = take()
        status, message = getattr(result, "status", ""), str(getattr(result, "message", ""))
        if deviations and (status == "PASS" or latest_command_deviated()
                           or _only_at_listed_deviations(message)):
            result.status = "FAIL"  # type: ignore[attr-defined]
            result.message = case_message(deviations)  # type: ignore[attr-defined]
        elif status == "FAIL" and _is_error(message):
            tags = [str(tag) for tag in getattr(data, "tags", ())
                    if re.fullmatch(r"[A-Z]{2,4}-\d{3}", str(tag))]
            result.message = with_requirements(message, tags)  # type: ignore[attr-defined]


def _only_at_listed_deviations(message: str) -> bool:
    """Robot's message for one failed check, or for several that continued on failure,
    where every check failed at a listed deviation."""
    if message.startswith(AT_LISTED_DEVIATION):
        return True
    parts = re.split(r"\n\n\d+\) ", message)
    return (message.startswith("Several failures occurred:") and len(parts) > 1
            and all(part.startswith(AT_LISTED_DEVIATION) for part in parts[1:]))


def _is_error(message: str) -> bool:
    """An exception's message as Robot shows it (`TypeName: text`), not a failed check."""
    return re.match(r"[A-Z]\w*(Error|Exception|Hung|Exited): ", message) is not None
