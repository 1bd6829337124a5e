"""The process gallery: the reference child with one thing wrong that SDKs in other
languages get wrong at the process boundary.

Each entry is the `process` backend driving a broken child,
`python -m jobconform.conformance.gallery.process NAME`, which is the reference child's
server (over the memory backend) with one method changed. `PROCESS_GALLERY` joins the
self-test: every suite must catch each entry, by the requirement it names.
`PROCESS_DIRECTED_GALLERY` holds a bug that only some suites meet (see there).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from jobconform.backends.process import ProcessBackend
from jobconform.backends.process.child import ChildServer, OpenRuntime, main
from jobconform.backends.process.wire import TIMESTAMP_FIELDS
from jobconform.backends.protocol import JobView
from jobconform.conformance.gallery import GalleryEntry
from jobconform.reference.commands import Outcome, Raise

MODULE = "jobconform.conformance.gallery.process"
# Central European winter time: the offset of a child that formats local time.
LOCAL_OFFSET = timezone(timedelta(hours=1))


class OwnClockChild(ChildServer):
    """The child takes the kit's time once, when a runtime opens, and then ignores the time
    sent with every request: its runtime keeps its own reading, which never moves, so
    every later timestamp is wrong."""

    def set_clock(self, opened: OpenRuntime, now: datetime) -> None:
        pass  # the bug: the clock set at open is never updated


class LocalOffsetChild(ChildServer):
    """The child writes timestamps in local time with their offset (+01:00) instead of
    UTC: each instant is right, its encoding is not."""

    def job_document(self, view: JobView) -> dict[str, Any]:
        document = super().job_document(view)
        for name in TIMESTAMP_FIELDS:
            if document.get(name) is not None:
                instant = datetime.fromisoformat(document[name])
                document[name] = instant.astimezone(LOCAL_OFFSET).isoformat()
        return document


class RetryAfterDroppedChild(ChildServer):
    """The child rebuilds a raised outcome from its error type and message only, so the
    server's retry-after never reaches the runtime's backoff."""

    def outcome(self, document: dict[str, Any]) -> Outcome:
        outcome = super().outcome(document)
        if isinstance(outcome, Raise):
            return replace(outcome, retry_after_ms=None)
        return outcome


class NextAttemptUnreportedChild(ChildServer):
    """The child retries a failed attempt but does not report it in `next_attempt`, so the
    kit still holds the spent outcome and never sends the decision for the next attempt:
    the retried job runs forever."""

    def _note_next_attempt(self, job_id: str) -> None:
        pass  # the bug: the kit is not told that the attempt's outcome is spent


CHILDREN: dict[str, type[ChildServer]] = {}


def _process_entry(name: str, server: type[ChildServer], catches: str,
                   source: str) -> GalleryEntry:
    """The process backend on a broken child, loadable as `<this module>:<name>`."""
    bug = " ".join((server.__doc__ or "").split())
    CHILDREN[name] = server

    class BrokenBackend(ProcessBackend):
        __doc__ = bug

        def __init__(self) -> None:
            super().__init__(command=[sys.executable, "-m", MODULE, name])
            self.name = f"gallery.{name}"

    BrokenBackend.__name__ = BrokenBackend.__qualname__ = name
    globals()[name] = BrokenBackend
    return GalleryEntry(name, f"{MODULE}:{name}", bug, catches, source)


PROCESS_GALLERY = (
    _process_entry("process_own_clock", OwnClockChild, "LC-004",
                   "anchors: compare times on one clock"),
    _process_entry("process_local_offset", LocalOffsetChild, "LC-005", "seed 000 B4"),
)

# Behave and Robot catch these two (their RT-003 and RT-010 scenarios), but the Hypothesis
# machine misses them through the pipe within the self-test's budget (it seldom decides an
# attempt after a retry, or dispatches between the computed delay and a larger
# retry-after), so they stay out of the self-test; tests/test_process.py checks each with a
# directed command sequence.
PROCESS_DIRECTED_GALLERY = (
    _process_entry("process_retry_after_dropped", RetryAfterDroppedChild, "RT-010",
                   "anchors: Retry-After floor"),
    _process_entry("process_next_attempt_unreported", NextAttemptUnreportedChild, "RT-003",
                   "docs/process-protocol.md, task bodies"),
)


def serve(argv: list[str]) -> int:
    """Run the broken child named by the one argument."""
    if len(argv) != 1 or argv[0] not in CHILDREN:
        print(f"usage: python -m {MODULE} NAME, NAME one of {', '.join(CHILDREN)}",
              file=sys.stderr)
        return 2
    return main([], server_type=CHILDREN[argv[0]])


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1:]))
