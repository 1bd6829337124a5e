"""The reaper's commands and checks (RP-001..RP-010), declared once
(conformance/vocabulary.py).

The reaper is one more part of the job runtime: its vocabulary `runs_through` the
lifecycle library (in Behave, the scenario's job runtime). Its Behave steps and its Robot
keywords (in the job runtime's library, conformance/lifecycle/keywords.py) are derived
from these lists; the wordings are the feature file's and the Robot suite's own. A
keyword's check of the answer it got (the start accepted or refused) stays with the
keywords.
"""

from __future__ import annotations

from typing import Any

from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.job_readings import (
    JOB_RUNTIME_LIBRARY,
    answered,
    sent_answers,
)
from jobconform.conformance.scenario import same_value
from jobconform.conformance.vocabulary import (
    Check,
    Declaration,
    OnHarness,
    Phrase,
    Reading,
    Vocabulary,
    check_worded,
    command_worded,
)
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


def advance_clock_by_default_reaper_ttl() -> OnHarness:
    """Move the clock by the reaper TTL the runtime was configured with (the profile's)."""
    return OnHarness(lambda harness: cmd.AdvanceTime(harness.settings.reaper_ttl_seconds))


def advance_clock_by_default_sweep_interval_minus(seconds: float) -> OnHarness:
    """Move the clock by the configured sweep interval less ``seconds``."""
    def advance(harness: Any) -> cmd.AdvanceTime:
        interval = harness.settings.reaper_sweep_interval_ms / 1000
        if seconds > interval:
            raise ValueError(f"the default interval is {interval:g} s; {seconds:g} s cannot"
                             " be left out of it")
        return cmd.AdvanceTime(interval - seconds)

    return OnHarness(advance)


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
    command_worded("Stop Reaper", stop_reaper, "the reaper is stopped"),
    command_worded("Store Fails For Next Sweeps", store_fails_for_next_sweeps,
                   "the job store fails for the next {sweeps:d} sweep",
                   "the job store fails for the next {sweeps:d} sweeps"),
    command_worded("Advance Clock While Store Write Fails", advance_clock_while_store_write_fails,
                   "store write {write:d} fails while {seconds:g} seconds pass"),
    Declaration("List Expired Jobs", list_expired_jobs, (
        Phrase("the jobs expired more than {seconds:g} seconds ago are listed",
               lambda seconds: list_expired_jobs(seconds)),
    )),
    command_worded("Advance Clock By Default Reaper TTL", advance_clock_by_default_reaper_ttl,
                   "the default reaper TTL passes"),
    command_worded("Advance Clock By Default Sweep Interval Minus",
                   advance_clock_by_default_sweep_interval_minus,
                   "the default sweep interval passes but {seconds:g} second",
                   "the default sweep interval passes but {seconds:g} seconds"),
)


# -- checks (conformance/lifecycle/declarations.py reads through the job runtime) ---------


def stop_reaper_should_answer(expected: bool) -> Reading:
    """Stop the reaper; it must answer ``expected`` (RP-007)."""
    return sent_answers(cmd.StopReaper(), "stop_reaper's answer", expected, same_value)


def _status(through: Any) -> object:
    """The backend's reaper status, read through the harness (compared with the oracle)."""
    status = through.run(cmd.ReaperStatus())
    if not isinstance(status, dict):
        raise AssertionError(f"reaper_status() should answer a dict, the backend answered"
                             f" {status!r}")
    return status


def reaper_should_be_running(expected: bool = True) -> Reading:
    """The backend's reaper status says running (or not, with ``expected=False``)."""
    return Reading("reaper_status() running",
                   lambda through: _status(through).get("running"),  # type: ignore[attr-defined]
                   expected, lambda actual, wanted: actual is wanted)


def reaper_counts_should_be(sweeps: int, failed: int, deleted: int) -> Reading:
    """The backend's reaper status counts ``sweeps`` completed, ``failed`` failed sweeps
    and ``deleted`` deleted jobs (RP-005)."""
    def read(through: Any) -> object:
        status: Any = _status(through)
        return status.get("sweeps"), status.get("failed_sweeps"), status.get("deleted")

    return Reading("reaper_status() (sweeps, failed_sweeps, deleted)", read,
                   (sweeps, failed, deleted))


def expired_jobs_should_be(older_than: float, *aliases: str) -> Reading:
    """list_expired(now - ``older_than`` seconds) must return exactly ``aliases``, in
    submission order (RP-003)."""
    return sent_answers(list_expired_jobs(older_than), "list_expired's jobs, in submission"
                        " order", list(aliases))


def _expired(aliases: str = "") -> Reading:
    return answered(cmd.ListExpired, "list_expired's jobs, in submission order",
                    alias_list(aliases))


def _stopped(found: bool) -> Reading:
    return answered(cmd.StopReaper, "stop_reaper's answer", found, same_value)


CHECKS = (
    Check(None, answered, (
        Phrase("the reaper start is accepted", lambda: answered(
            cmd.StartReaper, "the answer to start_reaper", cmd.REAPER_STARTED)),
        Phrase("the reaper start is refused as already running", lambda: answered(
            cmd.StartReaper, "the answer to start_reaper on a running reaper"
            " (ReaperAlreadyRunning)", cmd.REFUSED_REAPER_RUNNING)),
    )),
    Check("Stop Reaper Should Answer", stop_reaper_should_answer, (
        Phrase("the stop found the reaper running", lambda: _stopped(True)),
        Phrase("the stop found no reaper running", lambda: _stopped(False)),
    )),
    Check("Expired Jobs Should Be", expired_jobs_should_be, (
        Phrase('the expired jobs are "{aliases}"', _expired),
        Phrase("no job is expired", _expired),
    )),
    Check("Reaper Should Be Running", reaper_should_be_running, (
        Phrase("the reaper is running", reaper_should_be_running),
        Phrase("the reaper is not running", lambda: reaper_should_be_running(False)),
    )),
    check_worded("Reaper Counts Should Be", reaper_counts_should_be,
                 "the reaper has swept {sweeps:d} times, failed {failed:d} times and deleted"
                 " {deleted:d} jobs"),
)

VOCABULARY = Vocabulary(area="reaper", noun="reaper", start=None, commands=DECLARATIONS,
                        checks=CHECKS, runs_through=JOB_RUNTIME_LIBRARY)
