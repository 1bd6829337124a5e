"""The partial claim `scheduling-utc-only`: a scheduler whose crons have no time zone.

The memory scheduler refusing every zone but UTC (conformance/partial_claims.py) claims
it. The daylight-saving rules (SC-004, SC-005) must show "not claimed", the Behave and
Robot cases tagged `zones` be skipped as not applicable, the machine draw no zone but UTC
(and the unknown one, still refused) and no DST aim, and the rest of the area pass in all
three suites. The same runtime claiming the whole area must fail where a zone is asked.
"""

from __future__ import annotations

import json
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from jobconform.backends.loading import BackendLoadError, check_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.process.backend import (
    ProcessBackend,
    carried_capabilities,
    reference_child_command,
)
from jobconform.backends.protocol import SCHEDULING_UTC_ONLY
from jobconform.backends.scheduling.protocol import SCHEDULING
from jobconform.conformance.applicability import skip_reason, unclaimed
from jobconform.conformance.cli import main
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.harness import Divergence
from jobconform.conformance.partial_claims import (
    SCHEDULING_UTC_ONLY_BACKEND,
    SchedulingUtcOnlyBackend,
)
from jobconform.conformance.scheduling.harness import ExecutionRecord, SchedulingHarness
from jobconform.conformance.scheduling.machine import run_scheduling_machine
from jobconform.reference.commands import AdvanceTime
from jobconform.reference.scheduling import commands as sc
from jobconform.spec import load_registry

LEFT_OUT = {"SC-004", "SC-005"}
# Not claimed either: the backend does not claim scheduling-ends (nor its validation).
WITHOUT_ENDS = {"SC-019", "SC-020", "SC-021", "SC-022", "SC-023", "SC-024"}
ROOT = Path(__file__).resolve().parents[1]


class WholeSchedulingInUtc(SchedulingUtcOnlyBackend):
    """The UTC-only scheduler, claiming the whole scheduling area."""

    name = "whole-scheduling-in-utc"
    capabilities = frozenset({SCHEDULING})


def test_the_claim_leaves_out_the_dst_rules_and_the_cases_tagged_zones() -> None:
    registry = load_registry()
    backend, profile = SchedulingUtcOnlyBackend(), registry.profile("canonical")
    assert unclaimed(registry.requirement("SC-004"), backend.capabilities) == (
        "claims scheduling in part (scheduling-utc-only)")
    assert unclaimed(registry.requirement("SC-003"), backend.capabilities) is None
    assert skip_reason(registry, backend, profile, ["SC-003"], case_tags=["SC-003"]) is None
    assert skip_reason(registry, backend, profile, ["SC-003"],
                       case_tags=["SC-003", "zones"]) == (
        "backend scheduling-utc-only claims scheduling in part (scheduling-utc-only): the"
        " case names a zone other than UTC (tag zones), not applicable")
    # A backend claiming the whole area runs the same case.
    assert skip_reason(registry, MemoryBackend(), profile, ["SC-003"],
                       case_tags=["SC-003", "zones"]) is None


def test_the_claim_needs_the_area_and_the_process_protocol_carries_it() -> None:
    class UtcOnlyWithoutScheduling(MemoryBackend):
        capabilities = frozenset({"lifecycle", SCHEDULING_UTC_ONLY})

    with pytest.raises(BackendLoadError, match=SCHEDULING_UTC_ONLY):
        check_backend(UtcOnlyWithoutScheduling(), "utc-only-without-scheduling")
    check_backend(SchedulingUtcOnlyBackend(), "scheduling-utc-only")
    assert SCHEDULING_UTC_ONLY in carried_capabilities(2)
    assert SCHEDULING_UTC_ONLY not in carried_capabilities(1)  # no scheduling in version 1
    backend = ProcessBackend(command=[*reference_child_command(), "--backend",
                                      SCHEDULING_UTC_ONLY_BACKEND], timeout_seconds=30.0)
    try:
        assert {SCHEDULING, SCHEDULING_UTC_ONLY} <= backend.capabilities
    finally:
        backend.session.close()


def test_every_case_that_names_a_zone_other_than_utc_is_tagged_zones_or_left_out() -> None:
    # A case naming New York or Berlin must be skipped under the claim: tagged `zones`,
    # or checking a requirement the claim leaves out (SC-004, SC-005).
    feature = (ROOT / "features" / "scheduling.feature").read_text()
    for block in feature.split("\n\n"):
        if "Scenario" in block and ("America/" in block or "Europe/" in block):
            tags = {word for line in block.splitlines() if line.strip().startswith("@")
                    for word in line.replace("@", " ").split()}
            assert "zones" in tags or tags & LEFT_OUT, block
    suite = (ROOT / "robot" / "scheduling.robot").read_text()
    cases = suite.split("*** Test Cases ***", 1)[1].split("\n\n")
    for case in cases:
        if "${NEW_YORK}" in case or "America/" in case or "Europe/" in case:
            tag_line = next(line for line in case.splitlines() if "[Tags]" in line)
            tags = set(tag_line.split()[1:])
            assert "zones" in tags or tags & LEFT_OUT, case


def test_a_utc_only_run_passes_the_rest_of_the_area_in_every_suite(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--backend", SCHEDULING_UTC_ONLY_BACKEND,
                                       "--area", SCHEDULING, "--examples", "40",
                                       "--report-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    suites = set()
    for rid, body in report["requirements"].items():
        if body["area"] == SCHEDULING:
            wanted = "not claimed" if rid in LEFT_OUT | WITHOUT_ENDS else "pass"
            assert set(body["suites"].values()) == {wanted}, (rid, body["suites"])
            suites |= set(body["suites"])
    assert suites == {"behave", "robot", "hypothesis"}
    skipped = [line for line in (tmp_path / "behave.log").read_text().splitlines()
               if "(tag zones), not applicable" in line]
    assert len(skipped) == 2, skipped  # the SC-003 and SC-017 scenarios that name zones


def test_the_same_scheduler_claiming_the_whole_area_fails_where_a_zone_is_asked() -> None:
    registry = load_registry()
    profile = registry.profile("canonical")
    with closing(SchedulingHarness(WholeSchedulingInUtc(), profile, registry)) as harness:
        harness.run(sc.CreateCron("utc", "tick", "0 * * * *", "UTC"))
        with pytest.raises(Divergence) as caught:
            harness.run(sc.CreateCron("berlin", "tick", "0 9 * * *", "Europe/Berlin"))
    assert caught.value.primary == "SC-003"
    whole = run_scheduling_machine(WholeSchedulingInUtc(), profile, registry, examples=40)
    assert whole.divergence is not None
    # Declared, the machine never asks for a zone (nor aims at New York's changes).
    declared = run_scheduling_machine(SchedulingUtcOnlyBackend(), profile, registry,
                                      examples=40)
    assert declared.divergence is None, declared.divergence


def test_a_timetable_moved_on_while_autonomy_is_off_is_sc010_though_nothing_fired() -> None:
    # huey's revoked periodic task is queued at each fire time and dropped: its next fire
    # time moves on while autonomy is off with no execution. The hold of the switch is
    # broken (SC-010), not the timetable's rule (SC-003) that the blame fell back to.
    from jobconform.conformance.scheduling import gallery

    registry = load_registry()
    broken = gallery.scheduling_pause_drops_fires  # type: ignore[attr-defined]
    with closing(SchedulingHarness(broken(), registry.profile("canonical"), registry)) as harness:
        harness.run(sc.CreateCron("a", "poll", "*/30 * * * *", "UTC"))
        harness.run(sc.SetAutonomy(False))
        with pytest.raises(Divergence) as caught:
            harness.run(AdvanceTime(3600.0))
    assert caught.value.primary == "SC-010"
    assert "next_fire_at" in str(caught.value)


def _fire(scheduled_for: datetime, started_at: datetime | None = None) -> ExecutionRecord:
    return ExecutionRecord(scheduled_for, started_at or scheduled_for, "schedule",
                           "dispatched", "poll", None, None)


def _memory_harness() -> SchedulingHarness:
    registry = load_registry()
    return SchedulingHarness(MemoryBackend(), registry.profile("canonical"), registry)


def test_a_fire_run_twice_beside_a_fire_missed_is_sc008_not_a_fire_moved() -> None:
    # huey's two consumers: each runs the 01:00 fire, neither the 00:30 one a clock step
    # passed over. The doubled fire is blamed on its own rule, not paired with the missing
    # one as "a fire at another time" (SC-003).
    with closing(_memory_harness()) as harness:
        harness.run(sc.CreateCron("a", "poll", "*/30 * * * *", "UTC"))
        harness.run(sc.StartSecondScheduler())
        half_past, one = EPOCH + timedelta(minutes=30), EPOCH + timedelta(hours=1)
        wanted = [_fire(half_past, one), _fire(one)]
        assert harness._history_primary("a", wanted, [_fire(one), _fire(one)]) == "SC-008"
        # One fire moved to another time is still the timetable's.
        assert harness._history_primary("a", wanted, [_fire(one), _fire(
            one + timedelta(minutes=1))]) == "SC-003"


def test_a_fire_at_the_creation_instant_made_by_a_scheduler_started_then_is_sc003() -> None:
    # A scheduler started in the minute a schedule was created fires that minute: the
    # creation instant is never a fire time, whichever command made the fire.
    with closing(_memory_harness()) as harness:
        harness.run(sc.CreateCron("a", "poll", "*/30 * * * *", "UTC"))
        harness.run(sc.StartSecondScheduler())
        assert harness._history_primary("a", [], [_fire(EPOCH)]) == "SC-003"


def test_a_one_shot_job_due_by_the_resume_and_still_held_later_is_sc011() -> None:
    # huey discards a revoked task that comes due: a one-shot job due while autonomy was
    # off never runs after it comes back on. Read later, it breaks what resuming does with
    # it (SC-011), not its own firing rule (SC-002).
    with closing(_memory_harness()) as harness:
        harness.run(sc.SetAutonomy(False))
        harness.run(sc.CreateOnce("b", "once", delay_seconds=0.0))
        harness.run(sc.SetAutonomy(True))
        harness.run(AdvanceTime(60.0))
        state = harness.oracle.schedules["b"]
        assert harness._next_fire_primary("b", state, None, EPOCH) == "SC-011"
        # A one-shot job created after the resume is its own rule's.
        harness.run(sc.CreateOnce("c", "once", delay_seconds=0.0))
        later = harness.oracle.schedules["c"]
        assert harness._next_fire_primary("c", later, None, later.created_at) == "SC-002"


def test_a_fire_made_late_into_the_next_clock_step_is_sc006_not_a_fire_moved() -> None:
    # procrastinate defers each fire half a second after its time: the 01:00 fire lands in
    # the step to 02:00, beside the 02:00 fire not made yet. The right fire at the wrong
    # time (SC-006), not a fire at another time than due (SC-003).
    with closing(_memory_harness()) as harness:
        harness.run(sc.CreateCron("a", "poll", "0 * * * *", "UTC"))
        one, two = EPOCH + timedelta(hours=1), EPOCH + timedelta(hours=2)
        assert harness._history_primary("a", [_fire(two)], [_fire(one, two)]) == "SC-006"
        # A fire at an instant that is no fire time of the timetable stays SC-003's.
        off = one + timedelta(minutes=1)
        assert harness._history_primary("a", [_fire(two)], [_fire(off, two)]) == "SC-003"
