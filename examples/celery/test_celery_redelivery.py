"""Celery's commanded re-delivery: kombu's visibility sweep on the virtual clock, and two of
the deviations its list names.

Run with `tox -e example-celery`; it needs Redis on 127.0.0.1:6379 (db 11 for the broker,
keys under a prefix of each runtime's own). The environment's `jobconform run` of
celery_redelivery is the run with the deviation list.
"""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Imported here, at collection: kombu's Redis transport must be imported on the bridges,
# before another test's Celery result backend imports it bound to the real clock.
from celery_redelivery import CeleryRedeliveryBackend, CeleryRedeliveryRuntime

from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.adapter_testing import need_server
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference.commands import Succeed


@pytest.fixture()
def runtime() -> object:
    need_server("Redis", "127.0.0.1:6379",
                lambda: socket.create_connection(("127.0.0.1", 6379), timeout=2).close())
    clock = VirtualClock(EPOCH)
    opened = CeleryRedeliveryBackend().open(RuntimeSettings(max_concurrent=2, max_tasks=None),
                                            clock)
    yield opened, clock
    opened.close()


def test_a_lapsed_lease_comes_back_and_only_the_next_delivery_records(runtime: object) -> None:
    celery, clock = runtime  # type: ignore[misc]
    assert isinstance(celery, CeleryRedeliveryRuntime)
    script = TaskScript()
    job_id = celery.submit(script)
    celery.dispatch()
    clock.advance(61)
    assert celery.expire_leases(60) == {"requeued": 1, "parked": 0}
    assert (celery.get(job_id).status, celery.get(job_id).redelivery_count) == ("queued", 1)
    celery.dispatch()  # kombu's restored message, taken again by the worker
    script.decide(Succeed(7))
    celery.settle()
    record = celery.get(job_id)
    assert (record.status, record.result, record.redelivery_count) == ("succeeded", 7, 1)
    assert script.invocations == 1  # the lost worker's body never ran


def test_a_lease_exactly_used_up_is_restored_as_listed(runtime: object) -> None:
    """RD-005's entry: kombu's sweep takes every message stamped at or before the cut-off."""
    celery, clock = runtime  # type: ignore[misc]
    job_id = celery.submit(TaskScript())
    celery.dispatch()
    clock.advance(60)
    assert celery.expire_leases(60) == {"requeued": 1, "parked": 0}
    assert celery.get(job_id).redelivery_count == 1


def test_a_lost_workers_late_outcome_is_stored_as_listed(runtime: object) -> None:
    """RD-006's entry: nothing fences the lost worker; Celery's result store takes its write."""
    celery, clock = runtime  # type: ignore[misc]
    job_id = celery.submit(TaskScript())
    celery.dispatch()
    assert celery.stale_owner_write(job_id, "outcome") is False  # it has lost nothing yet
    clock.advance(61)
    celery.expire_leases(60)
    assert celery.stale_owner_write(job_id, "outcome") is True
    assert celery.stale_owner_write(job_id, "heartbeat") is False  # Celery has none
    assert celery.app.AsyncResult(job_id).state == "SUCCESS"
    assert celery.get(job_id).status == "queued"
