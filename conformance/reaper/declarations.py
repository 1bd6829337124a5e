"""The reaper's commands (RP-001..RP-010), declared once (conformance/vocabulary.py).

The Behave steps (conformance/reaper/steps.py) and the Robot keywords (the job runtime's
library, conformance/lifecycle/keywords.py) are derived from this list; the wordings are
the feature file's and the Robot suite's own. A check of an answer (the start accepted or
refused, the expired jobs listed) stays with the steps and keywords.
"""

from __future__ import annotations

from jobconform.conformance.vocabulary import Declaration, Phrase
from jobconform.reference import commands as cmd
from jobconform.reference.faults import FaultKind, StoreFault

# -- builders: each is a Robot keyword's signature and documentation ---------------------


def start_reaper(ttl: float | None = None, interval_ms: float | None = None) -> cmd.StartReaper:
    """Start the reaper with a TTL in seconds and a sweep interval in ms; a value left
    out is the runtime's configured default (RP-002). It must be accepted."""
    return cmd.StartReaper(None if ttl is None else float(ttl),
                           None if interval_ms is None else float(interval_ms))


def starting_reaper_should_be_refused(ttl: float | None = None,
                                      interval_ms: float | None = None) -> cmd.StartReaper:
    """Start the reaper again: it must raise ReaperAlreadyRunning (RP-006)."""
    return start_reaper(ttl, interval_ms)


def start_reaper_by_old_names(max_age_seconds: float | None = None,
                              interval_seconds: float | None = None) -> cmd.StartReaper:
    """Start the reaper through seed 004's deprecated keywords, ``max_age_seconds`` (the
    TTL) and ``interval_seconds`` (the sweep interval in seconds); each given must warn
    as deprecated and act as its current name (RP-010). It must be accepted."""
    return cmd.StartReaper(None if max_age_seconds is None else float(max_age_seconds),
                           None if interval_seconds is None else float(interval_seconds) * 1000,
                           old_names=True)


def stop_reaper() -> cmd.StopReaper:
    """Stop the reaper; returns the backend's answer: whether one was running."""
    return cmd.StopReaper()


def store_fails_for_next_sweeps(sweeps: int) -> cmd.StoreOutage:
    """The next ``sweeps`` reaper sweeps find the job store unavailable (RP-005)."""
    return cmd.StoreOutage(sweeps)


def advance_clock_while_store_write_fails(seconds: float, write: int) -> cmd.JobStoreFault:
    """Move the clock; store write ``write`` of the sweeps it makes due fails (RP-008)."""
    return cmd.JobStoreFault(StoreFault(FaultKind.FAIL, int(write)),
                             cmd.AdvanceTime(float(seconds)))


def list_expired_jobs(older_than: float) -> cmd.ListExpired:
    """list_expired(now - ``older_than`` seconds) (RP-003); returns the backend's list."""
    return cmd.ListExpired(float(older_than))


DECLARATIONS = (
    Declaration("Start Reaper", start_reaper, (
        Phrase("the reaper is started with its defaults", start_reaper),
        Phrase("the reaper is started with a TTL of {ttl:g} seconds and a sweep every"
               " {ms:g} ms", lambda ttl, ms: start_reaper(ttl, ms)),
    )),
    Declaration("Start Reaper By Old Names", start_reaper_by_old_names, (
        Phrase("the reaper is started through its deprecated keywords with a max age of"
               " {ttl:g} seconds and an interval of {seconds:g} seconds",
               lambda ttl, seconds: start_reaper_by_old_names(ttl, seconds)),
    )),
    Declaration("Starting Reaper Should Be Refused", starting_reaper_should_be_refused),
    Declaration("Stop Reaper", stop_reaper, (Phrase("the reaper is stopped", stop_reaper),)),
    Declaration("Store Fails For Next Sweeps", store_fails_for_next_sweeps, (
        Phrase("the job store fails for the next {sweeps:d} sweep", store_fails_for_next_sweeps),
        Phrase("the job store fails for the next {sweeps:d} sweeps",
               store_fails_for_next_sweeps),
    )),
    Declaration("Advance Clock While Store Write Fails", advance_clock_while_store_write_fails, (
        Phrase("store write {write:d} fails while {seconds:g} seconds pass",
               advance_clock_while_store_write_fails),
    )),
    Declaration("List Expired Jobs", list_expired_jobs, (
        Phrase("the jobs expired more than {seconds:g} seconds ago are listed",
               lambda seconds: list_expired_jobs(seconds)),
    )),
)
