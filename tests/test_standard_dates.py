"""A divergence's and a failed check's dates and instants as the standard library's types:
freezegun's subclasses rebuilt with the same fields, tzinfo and fold, wherever a view
holds them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import NamedTuple
from zoneinfo import ZoneInfo

import freezegun.api

from jobconform.conformance.standard_dates import with_standard_dates
from jobconform.conformance.vocabulary import Reading

NEW_YORK = ZoneInfo("America/New_York")


@dataclass(frozen=True)
class View:
    at: datetime
    on: date
    notes: dict[datetime, str]
    # Outside __init__: a rebuilt view keeps it.
    seen: int = field(default=0, init=False)


class Pair(NamedTuple):
    first: datetime
    label: str


def fake(value: datetime) -> datetime:
    return freezegun.api.FakeDatetime(value.year, value.month, value.day, value.hour,
                                      value.minute, value.second, value.microsecond,
                                      value.tzinfo, fold=value.fold)


def test_each_date_and_instant_inside_a_view_is_rebuilt_as_the_plain_type() -> None:
    # The second 01:30 of the night New York's clocks move back: only fold tells it apart.
    second = datetime(2026, 11, 1, 1, 30, tzinfo=NEW_YORK, fold=1)
    view = View(fake(second), freezegun.api.FakeDate(2026, 11, 1),
                {fake(datetime(2026, 1, 1, tzinfo=UTC)): "new year"})
    object.__setattr__(view, "seen", 3)
    # While freezegun is on it names its own types `datetime` and `date` in every module,
    # the one that rebuilds them too.
    with freezegun.freeze_time(datetime(2026, 1, 1, tzinfo=UTC)):
        shown = with_standard_dates([view, Pair(fake(second), "pair"), (fake(second),)])
    plain_view, pair, (alone,) = shown
    for instant in (plain_view.at, pair.first, alone):
        assert type(instant) is datetime
        assert instant == second and instant.tzinfo is NEW_YORK and instant.fold == 1
        assert instant.utcoffset() == second.utcoffset()
    assert type(plain_view.on) is date and plain_view.on == date(2026, 11, 1)
    assert [type(key) for key in plain_view.notes] == [datetime]
    assert plain_view.seen == 3 and type(pair) is Pair
    assert "Fake" not in repr(shown)


def test_a_value_without_freezeguns_types_is_kept_as_it_is() -> None:
    view = View(datetime(2026, 1, 1, tzinfo=UTC), date(2026, 1, 1), {})
    values = [view, ("text", 1, None)]
    assert with_standard_dates(values) is values
    assert with_standard_dates(view) is view


def test_a_failed_check_shows_freezeguns_instants_as_plain_datetimes() -> None:
    """A suite's Then-step or Robot keyword under the wall-clock bridge: the instant it
    wants (parsed there, so freezegun's) and the one the backend shows print as datetimes."""
    wanted = datetime(2026, 1, 1, 0, 45, tzinfo=UTC)
    shown_late = fake(wanted + timedelta(minutes=15))
    reading = Reading("execution 1 of 'a' (trigger, scheduled_for)",
                      lambda through: ("schedule", shown_late), ("schedule", fake(wanted)))
    agrees, shown_wanted, shown_actual = reading.check(object())
    assert not agrees
    assert shown_wanted == ("schedule", wanted) and shown_actual == ("schedule", shown_late)
    assert "datetime.datetime(2026, 1, 1, 1, 0," in repr(shown_actual)
    assert "Fake" not in repr(shown_wanted) + repr(shown_actual)
