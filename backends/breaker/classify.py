"""The shipped runtimes' failure classifier: a failed call's raw end to a breaker class.

Seed 002 section 10.4.1: a process killed by a signal (the cgroup's OOM killer, a
schedule's timeout, an operator's stop) is a kill, never an expired token, whatever its
error text or its lack of output suggests; only a confirmed authentication message is an
`auth` failure (CB-016, CB-017). The rules are checked in that order, so a message that
carries both a kill marker and an auth indicator is a kill.
"""

from __future__ import annotations

import re

# Signal numbers on POSIX; the exit codes that report them are the negated number
# (a parent's wait, Python's subprocess) and 128 + the number (a shell, a container
# runtime: an OOM kill exits 137).
_KILLS = {"SIGKILL": 9, "SIGTERM": 15, "SIGINT": 2}
_KILL_CODES = {code for number in _KILLS.values() for code in (-number, 128 + number)}
_KILL_TEXT = re.compile(r"\b(SIGKILL|SIGTERM|SIGINT|OOM|out of memory|timed out|timeout)\b",
                        re.IGNORECASE)
_AUTH_TEXT = re.compile(r"\b(authentication failed|authentication failure|unauthorized"
                        r"|invalid api key|401|token expired|expired or revoked)\b",
                        re.IGNORECASE)


def failure_class_of(signal: str | None, exit_code: int | None, output: bool,
                     error_text: str) -> str:
    """"timeout" for a kill, "auth" for a confirmed authentication failure, else
    "agent_error". `output` never decides: a silent failure is no auth failure."""
    if signal in _KILLS or exit_code in _KILL_CODES or _KILL_TEXT.search(error_text):
        return "timeout"
    if _AUTH_TEXT.search(error_text):
        return "auth"
    return "agent_error"


# The signal an exit code reports, and what a silent failure may have been (CB-018, CB-019).
_SIGNAL_OF_CODE = {code: name for name, number in _KILLS.items()
                   for code in (-number, 128 + number)}
_SILENT_CAUSES = ("oom_kill", "timeout", "expired_token")


def end_report(failure_class: str, signal: str | None, exit_code: int | None, output: bool,
               error_text: str) -> dict[str, object]:
    """The error reported for a failed end of `failure_class` (the one its runtime gave
    it): the class, the signal that killed it (the seed's 504 names it), and for a failure
    with no output and no text its possible causes, the token only one of them (the
    seed's diagnosis once named it alone)."""
    killed_by = signal if signal in _KILLS else (
        None if exit_code is None else _SIGNAL_OF_CODE.get(exit_code))
    silent = failure_class == "agent_error" and not output and not error_text.strip()
    return {"failure_class": failure_class, "signal": killed_by,
            "possible_causes": list(_SILENT_CAUSES) if silent else []}
