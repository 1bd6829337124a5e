"""Which job views the harness may read once (conformance/sealed_views.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone, tzinfo

from jobconform.backends.store import StoredJob
from jobconform.conformance.answers import _is_job
from jobconform.conformance.harness import VIEW_NAMES
from jobconform.conformance.sealed_views import is_sealed, same_text

NOW = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class StatusFromOutside:
    """A frozen view whose status a property reads from elsewhere each time."""

    job_id: str
    where: list[str] = field(default_factory=lambda: ["queued"])

    @property
    def status(self) -> str:
        return self.where[0]


@dataclass
class Unfrozen:
    job_id: str
    status: str


class ShiftingZone(tzinfo):
    """A zone whose offset its owner may change later."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def utcoffset(self, dt: datetime | None) -> timedelta:
        return self.offset


class Live:
    """A proxy reading through on every access."""

    def __getattr__(self, name: str) -> object:
        return "queued"


def test_a_frozen_record_of_immutable_values_is_sealed() -> None:
    job = StoredJob("a", "queued", NOW, result="done", arguments=3,
                    last_heartbeat=NOW.astimezone(timezone(timedelta(hours=2))))
    assert is_sealed(job, VIEW_NAMES)


def test_a_record_holding_a_dict_or_list_is_read_every_time() -> None:
    assert not is_sealed(StoredJob("a", "succeeded", NOW, result={"n": 1}), VIEW_NAMES)
    assert not is_sealed(StoredJob("a", "queued", NOW, arguments=[1]), VIEW_NAMES)


def test_an_instant_in_a_zone_of_another_class_is_read_every_time() -> None:
    assert not is_sealed(StoredJob("a", "queued", NOW.replace(tzinfo=ShiftingZone())),
                         VIEW_NAMES)
    # Also in a field the record comparison does not read: its offset is checked (LC-005).
    assert "next_attempt_at" not in VIEW_NAMES
    assert not is_sealed(StoredJob("a", "queued", NOW,
                                   next_attempt_at=NOW.replace(tzinfo=ShiftingZone())),
                         VIEW_NAMES)


def test_a_dict_in_a_field_the_harness_never_reads_leaves_the_record_sealed() -> None:
    # The memory store's retry policy: only the fields' instants are looked at there.
    assert "retry_policy" not in VIEW_NAMES
    assert is_sealed(StoredJob("a", "queued", NOW, retry_policy={"max_retries": 2}),
                     VIEW_NAMES)


def test_properties_unfrozen_records_and_proxies_are_read_every_time() -> None:
    assert not is_sealed(StatusFromOutside("a"), VIEW_NAMES)
    assert not is_sealed(Unfrozen("a", "queued"), VIEW_NAMES)
    assert not is_sealed(Live(), VIEW_NAMES)


def test_same_text_only_for_one_scalar_of_one_type() -> None:
    assert same_text(None, None)
    assert same_text("x", "x")
    assert same_text(2, 2)
    assert not same_text(1, True)  # "1" and "true"
    assert not same_text(1, 1.0)
    assert not same_text(0.0, -0.0)  # floats are never taken: -0.0 reads otherwise
    assert not same_text({"a": 1}, {"a": 1})  # equal, but no text is assumed


def test_the_shape_check_still_refuses_a_view_without_the_job_fields() -> None:
    assert _is_job(StoredJob("a", "queued", NOW))
    assert _is_job(StoredJob("b", "running", NOW))  # known by its type now
    assert not _is_job(Unfrozen("a", "queued"))
    assert not _is_job("a job")
