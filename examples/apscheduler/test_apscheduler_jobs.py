"""The APScheduler example: its schedulers on the virtual clock over PostgreSQL, and its report.

Run with `tox -e example-apscheduler` (installs the `apscheduler-example` extra); needs
PostgreSQL on 127.0.0.1:5432 (database test, trust).
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy

from jobconform.conformance.adapter_testing import adapter_importable, need_server, run_kit
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.expectations import load_expectations
from jobconform.conformance.scheduling.harness import HarnessTarget
from jobconform.reference.scheduling.oracle import MissedFires, SchedulingConfig

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
DEVIATIONS = HERE / "expected-failures.yaml"


@pytest.fixture(autouse=True)
def postgres(monkeypatch: pytest.MonkeyPatch) -> None:
    """APScheduler's job store is PostgreSQL's; CI must have it running."""
    from apscheduler_jobs import DATABASE

    def select_one() -> None:
        with sqlalchemy.create_engine(DATABASE).connect() as connection:
            connection.execute(sqlalchemy.text("select 1"))

    need_server("PostgreSQL", "127.0.0.1:5432", select_one, (sqlalchemy.exc.OperationalError,))
    adapter_importable(monkeypatch, HERE)


def open_runtime(clock: VirtualClock,
                 policy: MissedFires = MissedFires.ONE) -> tuple[Any, HarnessTarget]:
    from apscheduler_jobs import ApschedulerBackend

    target = HarnessTarget()
    return ApschedulerBackend().open_scheduling(clock, SchedulingConfig(policy), target), target


def test_a_restart_catches_up_the_latest_missed_fire_from_the_durable_store() -> None:
    clock = VirtualClock(EPOCH.replace(minute=10))
    runtime, target = open_runtime(clock)
    try:
        schedule_id = runtime.create_cron("tick", "0 * * * *", "UTC")
        clock.advance(3000)  # 01:00: an ordinary fire
        runtime.settle()
        runtime.crash()
        clock.advance(3 * 3600 + 600)  # down over 02:00, 03:00 and 04:00
        runtime = runtime.reopen()
        runs = [(e.trigger, e.scheduled_for.hour) for e in runtime.history(schedule_id)]
        assert runs == [("schedule", 1), ("catch_up", 4)]  # coalesce: the latest one only
        assert [when.hour for _, when, _ in target.dispatches] == [1, 4]
        assert runtime.get(schedule_id).next_fire_at == datetime(2026, 1, 1, 5, tzinfo=UTC)
    finally:
        runtime.close()


def test_a_gap_time_fires_an_hour_late_as_listed() -> None:
    """SC-004's entry: 02:30 New York time on 2026-03-08 comes at 03:30 EDT (07:30Z)."""
    clock = VirtualClock(datetime(2026, 3, 8, 6, 0, tzinfo=UTC))
    runtime, _ = open_runtime(clock)
    try:
        schedule_id = runtime.create_cron("nightly", "30 2 * * *", "America/New_York")
        assert runtime.get(schedule_id).next_fire_at == datetime(2026, 3, 8, 7, 30, tzinfo=UTC)
    finally:
        runtime.close()


def test_with_its_deviation_list_the_run_passes_and_reports_them(tmp_path: Path) -> None:
    """Robot: every deviation listed for it fails as listed, and the rest pass. SC-007's
    entry is the machine's only (a downtime ending on a fire time): Robot passes it, and
    a run without the machine does not check that entry. `tox -e example-apscheduler`
    runs every suite with the list."""
    listed = {rid for rid, entry in load_expectations(DEVIATIONS).items()
              if entry.applies_to("robot")}
    assert "SC-007" not in listed
    done = run_kit("apscheduler_jobs:ApschedulerBackend", tmp_path, "--suite", "robot",
                   "--area", "scheduling", "--expected-failures", str(DEVIATIONS))
    assert done.exit_code == 0, done.report["expectation_problems"]
    for rid, body in done.report["requirements"].items():
        verdicts = set(body["suites"].values())
        # What the adapter does not claim (SC-019, its capability) is not checked at all.
        if body["area"] == "scheduling" and verdicts != {"not claimed"}:
            wanted = {"expected failure"} if rid in listed else {"pass"}
            assert verdicts == wanted, (rid, body["suites"])
