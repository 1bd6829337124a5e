"""The Dramatiq example: its Worker's threads and RedisBroker on the virtual clock, and its report.

Run with `tox -e example-dramatiq` (installs the `dramatiq-example` extra); it needs Redis
on 127.0.0.1:6379 (the adapter uses db 7).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest
import redis

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.adapter_testing import adapter_importable, need_server, run_kit
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.expectations import load_expectations
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.commands import Raise, Succeed

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
DEVIATIONS = HERE / "expected-failures.yaml"
REDIS = redis.Redis(host="127.0.0.1", port=6379, db=7, socket_timeout=2)


@pytest.fixture(autouse=True)
def redis_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """The broker is Redis on 127.0.0.1:6379; CI must have it running. The adapter module
    must import here and in the Behave child process."""
    need_server("Redis", "127.0.0.1:6379", REDIS.ping, (redis.RedisError,))
    adapter_importable(monkeypatch, HERE)


@pytest.fixture
def clock() -> VirtualClock:
    return VirtualClock(EPOCH)


@pytest.fixture
def runtime(clock: VirtualClock) -> Iterator[object]:
    from dramatiq_jobs import DramatiqRuntime

    with closing(DramatiqRuntime(RuntimeSettings(max_concurrent=1, max_tasks=None),
                                 clock)) as opened:
        yield opened
    assert REDIS.keys(f"{opened.broker.namespace}*") == []  # its namespace is gone
    assert time.time() > EPOCH.timestamp() + 86_400 * 30  # real time again


def test_with_its_deviation_list_the_robot_retry_suite_passes(tmp_path: Path) -> None:
    # The retry area only, to keep `tox -e example-dramatiq` short: its run then checks all.
    done = run_kit("dramatiq_jobs:DramatiqBackend", tmp_path, "--suite", "robot",
                   "--area", "retry", "--expected-failures", str(DEVIATIONS))
    assert done.exit_code == 0, done.report["expectation_problems"]
    expected = done.requirements_with("expected failure")
    # RT-003 is listed for the Hypothesis machine only (the list says why).
    assert expected == set(load_expectations(DEVIATIONS)) - {"RT-003"}
    assert done.report["counts"]["pass"] == 7  # RT-001, RT-003 to RT-008 (RT-009 not claimed)


def test_the_worker_polls_fetches_and_stamps_on_the_virtual_clock(runtime, clock) -> None:
    script = TaskScript()
    job_id = runtime.submit(script)
    assert REDIS.keys(f"{runtime.broker.namespace}*")  # the message is in Redis
    clock.advance(3600)  # the consumers poll many times and the worker takes the message
    runtime.settle()
    assert runtime.get(job_id).status == "queued"  # its body waits for a dispatch point
    runtime.dispatch()
    clock.advance(1.5)
    script.decide(Succeed("done"))
    runtime.settle()
    view = runtime.get(job_id)
    assert (view.status, view.result) == ("succeeded", "done")
    assert (view.started_at - EPOCH).total_seconds() == 3600
    assert (view.finished_at - EPOCH).total_seconds() == 3601.5


def test_a_retry_waits_in_the_delay_queue_until_its_eta_on_the_virtual_clock(
        runtime, clock) -> None:
    script = TaskScript()
    job_id = runtime.submit(script, RetryPolicy(max_retries=2, retry_delay_ms=1000))
    runtime.dispatch()
    script.decide(Raise("FlakyError", "try again"))
    runtime.settle()
    view = runtime.get(job_id)
    assert (view.status, view.retry_count, view.error) == ("queued", 1, None)
    clock.advance(0.999)
    runtime.dispatch()
    assert runtime.get(job_id).status == "queued"  # its eta: 1000 ms times uniform(1, 2)
    clock.advance(1.001)
    runtime.dispatch()
    assert runtime.get(job_id).status == "running"
    script.decide(Raise("FlakyError", "again"))
    runtime.settle()
    clock.advance(4)  # the second retry waits 1000 * 2 ** 1 ms times uniform(1, 2)
    runtime.dispatch()
    script.decide(Raise("FlakyError", "for the last time"))
    runtime.settle()
    view = runtime.get(job_id)
    assert (view.status, view.retry_count) == ("failed", 2)
    assert view.error == "FlakyError: for the last time"


def test_a_non_retryable_error_is_one_the_actor_throws_and_fails_at_once(runtime) -> None:
    script = TaskScript()
    policy = RetryPolicy(max_retries=3, non_retryable=("PlanError",))
    job_id = runtime.submit(script, policy)
    runtime.dispatch()
    script.decide(Raise("PlanError", "no plan"))
    runtime.settle()
    view = runtime.get(job_id)
    assert (view.status, view.retry_count, view.error) == ("failed", 0, "PlanError: no plan")


def test_retries_backoff_doubles_and_jitters_below_the_cap_and_past_it(runtime) -> None:
    policy = RetryPolicy(retry_delay_ms=1000, backoff_multiplier=3.0, max_retry_delay_ms=60_000)
    delay = runtime.compute_delay_ms
    for attempt in range(4):  # it doubles, whatever the policy's multiplier, times uniform(1, 2)
        assert 1000 * 2**attempt <= delay(policy, attempt) <= 2000 * 2**attempt
    assert 30_000 <= delay(policy, 6) <= 60_000  # past the cap: max_backoff * uniform(0.5, 1)
    assert delay(policy, 2) == delay(policy, 2)  # a seeded draw: the same answer each time


@pytest.fixture
def self_running(clock: VirtualClock) -> Iterator[object]:
    from dramatiq_self_running import SelfRunningDramatiq

    from jobconform.backends.self_running import Clockwork

    with closing(SelfRunningDramatiq(RuntimeSettings(max_concurrent=1, max_tasks=None), clock,
                                     Clockwork(poll_interval_seconds=1, job_timeout_seconds=3600,
                                               lease_seconds=60))) as opened:
        yield opened
    assert REDIS.keys(f"{opened.broker.namespace}*") == []


def test_on_its_own_clockwork_a_job_and_its_retry_start_with_no_dispatch(  # type: ignore[no-untyped-def]
        self_running, clock) -> None:
    script = TaskScript()
    job_id = self_running.submit(script, RetryPolicy(max_retries=1, retry_delay_ms=2000))
    self_running.settle()
    assert self_running.get(job_id).status == "queued"  # its consumer sleeps on the clock
    clock.advance(1)  # one poll interval: an idle poll backs off to half of it at most
    self_running.settle()
    view = self_running.get(job_id)
    assert view.status == "running" and 0 < (view.started_at - EPOCH).total_seconds() <= 1
    script.decide(Raise("FlakyError", "try again"))  # at 1 s: its eta 2 to 4 s later
    self_running.settle()
    clock.advance(1.9)  # the delay queue holds it until its eta, never before 3 s
    self_running.settle()
    assert self_running.get(job_id).status == "queued"
    while self_running.get(job_id).status == "queued" and clock.now() < EPOCH + timedelta(
            seconds=8):  # in small steps, so each poll wakes at its own time
        clock.advance(0.25)  # its eta passes: moved to its queue and fetched, unasked
        self_running.settle()
    view = self_running.get(job_id)
    assert (view.status, view.retry_count) == ("running", 1)
    # Within two polls of its eta: the delay queue's consumer moves it, its queue's takes it,
    # each idle poll backing off up to the interval (jittered too).
    assert 3 <= (view.started_at - EPOCH).total_seconds() <= 7


def test_on_its_own_clockwork_with_its_own_deviation_list_the_area_passes(
        tmp_path: Path) -> None:
    done = run_kit("dramatiq_self_running:DramatiqSelfRunningBackend", tmp_path,
                   "--suite", "behave", "--area", "self-running",
                   "--expected-failures", str(HERE / "expected-failures-self-running.yaml"))
    assert done.exit_code == 0, (done.output, done.report["expectation_problems"])
    suites = done.verdicts("behave")
    assert suites["SR-001"] == "pass"
    assert suites["SR-004"] == "expected failure"  # a policy's multiplier other than 2
    # No heartbeat-based job timeout, no lease, no reaper: not claimed, never passed.
    assert suites["SR-002"] == suites["SR-003"] == suites["SR-005"] == "not claimed"


def test_time_limit_and_age_limit_on_the_virtual_clock() -> None:
    """Why neither is claimed (dramatiq_limits.py): the times are virtual, the interrupt is not."""
    probe = subprocess.run([sys.executable, str(HERE / "dramatiq_limits.py")], check=True,
                           capture_output=True, text=True, timeout=60)
    seen = json.loads(probe.stdout.splitlines()[-1])
    assert seen["4.5"] == [["start", "a", 0.0]]
    assert seen["5.0"][-1] == ["TimeLimit raises", "a", 5.0]  # its checker, on time
    assert seen["15.0"] == seen["5.0"]  # the body, blocked in a wait, is not interrupted
    assert seen["decided at 15.0"][-1] == ["TimeLimitExceeded", "a", 15.0]  # until it wakes
    assert seen["dead letters"] == ["b"]  # 15 s old when taken: AgeLimit drops it

