"""The shipped schedulers' own cron reader (backends/scheduling/timetable.py) against the
oracle's (cronsim) around daylight-saving changes of zones the suites do not visit."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

import pytest

from jobconform.backends.scheduling import timetable
from jobconform.reference.scheduling import oracle

# Fixed-time jobs and wall-clock ones, on the hours the zones' clocks skip or repeat.
EXPRESSIONS = ("30 2 * * *", "30 1 * * *", "*/30 * * * *", "0 * * * *", "15 1,3 * * *",
               "* 1 * * *", "5/20 0-3 * * sun", "0 0 29 2 *")
# A day before a change: Berlin's spring gap and autumn fold, Sao Paulo's midnight gap
# (2018), Santiago's midnight fold, Havana's gap at midnight.
STARTS = (("Europe/Berlin", datetime(2026, 3, 28, 12, tzinfo=UTC)),
          ("Europe/Berlin", datetime(2026, 10, 24, 12, tzinfo=UTC)),
          ("America/Sao_Paulo", datetime(2018, 11, 3, 12, tzinfo=UTC)),
          ("America/Santiago", datetime(2026, 4, 4, 12, tzinfo=UTC)),
          ("America/Havana", datetime(2026, 3, 7, 12, tzinfo=UTC)))
FIRES = 40


@pytest.mark.parametrize(("zone", "start"), STARTS, ids=[f"{z}-{s:%Y-%m}" for z, s in STARTS])
def test_the_shipped_cron_reader_agrees_with_the_oracle_across_dst(zone: str,
                                                                   start: datetime) -> None:
    tz = timetable.zone(zone)
    assert tz is not None
    for expression in EXPRESSIONS:
        expected = list(itertools.islice(oracle.fire_times(expression, zone, start), FIRES))
        shipped = list(itertools.islice(
            timetable.fire_times(timetable.parse(expression), tz, start), FIRES))
        assert shipped == expected, expression


@pytest.mark.parametrize("expression", ["61 * * * *", "every hour", "0 0 30 2 *",
                                        "*/0 * * * *", "5-1 * * * *", "* * * *", "0 24 * * *"])
def test_an_expression_the_oracle_refuses_does_not_parse(expression: str) -> None:
    assert oracle.cron_problem(expression, "UTC", datetime(2026, 1, 1, tzinfo=UTC))
    with pytest.raises(timetable.CronSyntaxError):
        timetable.parse(expression)
