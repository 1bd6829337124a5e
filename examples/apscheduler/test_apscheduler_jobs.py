"""The APScheduler example: its schedulers on the virtual clock over PostgreSQL, and its report.

Run with `tox -e example-apscheduler` (installs the `apscheduler-example` extra); needs
PostgreSQL on 127.0.0.1:5432 (database test, trust).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
import yaml
from click.testing import CliRunner

from jobconform.conformance.cli import main
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

    try:
        with sqlalchemy.create_engine(DATABASE).connect() as connection:
            connection.execute(sqlalchemy.text("select 1"))
    except sqlalchemy.exc.OperationalError as error:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is not running on 127.0.0.1:5432: {error}")
        pytest.skip(f"PostgreSQL is not running on 127.0.0.1:5432: {error}")
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.setenv("PYTHONPATH", str(HERE))


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
    """Robot: every listed deviation it reaches fails as listed, and the rest pass. SC-017
    (an edit made on a fire time fires at once) only the machine reaches: `tox -e
    example-apscheduler` runs every suite with the whole list."""
    listed = {rid: entry for rid, entry in load_expectations(DEVIATIONS).items()
              if rid != "SC-017"}
    reached = tmp_path / "reached.yaml"
    reached.write_text(yaml.safe_dump({rid: {"reason": entry.reason, "link": entry.link}
                                       for rid, entry in listed.items()}))
    result = CliRunner().invoke(main, [
        "run", "--backend", "apscheduler_jobs:ApschedulerBackend", "--suite", "robot",
        "--report-dir", str(tmp_path), "--expected-failures", str(reached)])
    report = json.loads((tmp_path / "report.json").read_text())
    assert result.exit_code == 0, report["expectation_problems"]
    for rid, body in report["requirements"].items():
        if body["area"] == "scheduling":
            wanted = {"expected failure"} if rid in listed else {"pass"}
            assert set(body["suites"].values()) == wanted, (rid, body["suites"])
