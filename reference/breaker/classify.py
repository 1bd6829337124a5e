"""How a failed call's raw end is classed for the breaker (CB-016, CB-017), as a pure function.

The breaker counts failures by class (CB-003), and seed 002 counts only `auth`. So the
step that turns the way a call ended (the signal that ended its process, its exit code,
whether it produced any output, its error text) into a class decides what trips the
breaker. Seed 002 section 10.4.1 is the story of that step getting it wrong: an OOM kill
of the agent's process, with no output, was worded "possible authentication issue" and
taken for an expired token. Its rules, in the kit's words:

1. An end killed by a signal (SIGKILL, SIGTERM, SIGINT, named or given as the exit code
   a parent or a shell reports for it) is a `timeout`: the seed answers it 504,
   "terminated by SIGKILL", whether the schedule's timeout, the cgroup's OOM killer or an
   operator sent the signal.
2. An error text with a kill marker (SIGKILL, SIGTERM, SIGINT, OOM, out of memory, timed
   out, timeout) is a `timeout` too, even if it also carries an auth indicator: the seed's
   is_auth_failure skips such messages.
3. Only then does an auth indicator in the error text make the end an `auth` failure.
4. Anything else is an `agent_error`. No output, by itself, says nothing about the token.

The error the runtime reports for the end (`report_end`) says the same as data: its class,
the signal that killed it (CB-018: the seed's 504 names it), and, for a failure that left
no output and no text, the causes it may have had, an expired token only among them
(CB-019: the seed's diagnosis once named the token alone).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# The signals seed 002 classes as a kill, by name and number (POSIX numbers).
KILL_SIGNALS = {"SIGKILL": 9, "SIGTERM": 15, "SIGINT": 2}
# The exit codes that report those signals: negative, as Python's subprocess and a
# parent's wait report a signal; 128 + the number, as a shell and container runtimes do
# (an OOM kill's 137).
KILL_EXIT_CODES = frozenset({-number for number in KILL_SIGNALS.values()}
                            | {128 + number for number in KILL_SIGNALS.values()})
SIGNAL_OF_EXIT_CODE = {code: name for name, number in KILL_SIGNALS.items()
                       for code in (-number, 128 + number)}
# What a failure that left no output and no text may have been (CB-019), in the order
# seed 002's diagnosis lists them: a silent end is never put down to the token alone.
SILENT_FAILURE_CAUSES = ("oom_kill", "timeout", "expired_token")
# Whole words or phrases, in any case.
KILL_MARKERS = ("SIGKILL", "SIGTERM", "SIGINT", "OOM", "out of memory", "timed out",
                "timeout")
AUTH_INDICATORS = ("authentication failed", "authentication failure", "unauthorized",
                   "invalid api key", "401", "token expired", "expired or revoked")


@dataclass(frozen=True)
class RawEnd:
    """How a failed call ended, before anyone named its class.

    `signal` is the name of the signal that ended the process (None: it exited);
    `exit_code` its exit code if known; `output` whether it produced any output;
    `error_text` what it or its host said about the failure.
    """

    signal: str | None = None
    exit_code: int | None = None
    output: bool = False
    error_text: str = ""


def _carries(text: str, phrases: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(phrase)}\b", text, re.IGNORECASE)
               for phrase in phrases)


def killed(end: RawEnd) -> bool:
    """Whether the end is a kill (rules 1 and 2): never an auth failure (CB-016)."""
    return (end.signal in KILL_SIGNALS or end.exit_code in KILL_EXIT_CODES
            or _carries(end.error_text, KILL_MARKERS))


def classify_end(end: RawEnd) -> str:
    """The failure class of a raw end: "timeout", "auth" or "agent_error"."""
    if killed(end):
        return "timeout"
    if _carries(end.error_text, AUTH_INDICATORS):
        return "auth"
    return "agent_error"


def kill_signal(end: RawEnd) -> str | None:
    """The signal that killed the end: the one named, else the one its exit code reports;
    None for an end that no signal killed or whose kill only its text tells."""
    if end.signal in KILL_SIGNALS:
        return end.signal
    return SIGNAL_OF_EXIT_CODE.get(end.exit_code) if end.exit_code is not None else None


def report_end(end: RawEnd) -> dict[str, object]:
    """The error the runtime reports for a failed end (CB-018, CB-019): its class, the
    signal that killed it, and the possible causes of a silent failure."""
    failure_class = classify_end(end)
    silent = failure_class == "agent_error" and not end.output and not end.error_text.strip()
    return {"failure_class": failure_class, "signal": kill_signal(end),
            "possible_causes": list(SILENT_FAILURE_CAUSES) if silent else []}
