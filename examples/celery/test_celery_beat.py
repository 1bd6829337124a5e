"""The celery beat example: embedded beats on the virtual clock, and two of its deviations.

Run with `tox -e example-celery` (installs the `celery-example` extra); beat needs no broker
(its tasks run eagerly), so these need no server. The environment's `jobconform run` of
celery_beat is the run with the deviation list.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.scheduling.harness import HarnessTarget
from jobconform.reference.scheduling.oracle import MissedFires, SchedulingConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))


def open_runtime(clock: VirtualClock) -> tuple[Any, HarnessTarget]:
    from celery_beat import CeleryBeatBackend

    target = HarnessTarget()
    config = SchedulingConfig(MissedFires.ONE)
    return CeleryBeatBackend().open_scheduling(clock, config, target), target


def test_a_beat_fires_on_time_and_a_second_beat_runs_every_fire_again() -> None:
    """SC-008's entry: each beat keeps its own state, so a beat that starts runs a fire
    another already ran, and two beats run each fire."""
    clock = VirtualClock(EPOCH.replace(minute=10))
    runtime, target = open_runtime(clock)
    try:
        schedule_id = runtime.create_cron("tick", "0 * * * *", "Europe/Berlin")
        clock.advance(3000)  # 01:00 UTC
        runtime.settle()
        assert [when.hour for _, when, _ in target.dispatches] == [1]
        peer = runtime.open_peer()  # its own file: its entry's last run is the creation,
        assert [when.hour for _, when, _ in target.dispatches] == [1, 1]  # so 01:00 again
        clock.advance(3600)  # 02:00 UTC: both beats fire it
        runtime.settle()
        assert [when.hour for _, when, _ in target.dispatches] == [1, 1, 2, 2]
        assert runtime.get(schedule_id).next_fire_at == datetime(2026, 1, 1, 3, tzinfo=UTC)
        peer.close()
    finally:
        runtime.close()


def test_a_gap_time_fires_an_hour_late_as_listed() -> None:
    """SC-004's entry: 02:30 New York time on 2026-03-08 comes at 03:30 EDT (07:30Z)."""
    clock = VirtualClock(datetime(2026, 3, 8, 6, 0, tzinfo=UTC))
    runtime, target = open_runtime(clock)
    try:
        schedule_id = runtime.create_cron("nightly", "30 2 * * *", "America/New_York")
        assert runtime.get(schedule_id).next_fire_at == datetime(2026, 3, 8, 7, 30, tzinfo=UTC)
        clock.advance(5400)
        runtime.settle()
        assert [when for _, when, _ in target.dispatches] == [
            datetime(2026, 3, 8, 7, 30, tzinfo=UTC)]
    finally:
        runtime.close()


def test_a_wildcard_hour_skips_the_repeated_hour_as_listed() -> None:
    """SC-005's entry: stepped through New York's fall-back fold, "0 * * * *" fires at 01:00
    EDT (05:00Z), then 02:00 EST (07:00Z): 01:00 EST (06:00Z) never comes."""
    clock = VirtualClock(datetime(2026, 11, 1, 4, 0, tzinfo=UTC))
    runtime, target = open_runtime(clock)
    try:
        runtime.create_cron("hourly", "0 * * * *", "America/New_York")
        for _ in range(8):  # half-hour steps to 08:00Z
            clock.advance(1800)
            runtime.settle()
        assert [when.hour for _, when, _ in target.dispatches] == [5, 7, 8]
    finally:
        runtime.close()
