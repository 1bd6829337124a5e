"""The shipped schedulers' own cron timetable: five-field expressions on a zone's wall clock.

Written apart from the oracle (which reads expressions with cronsim), so that a scheduler
agreeing with the oracle means two readings of the spec agree, not one function with
itself. It follows Debian cron across daylight-saving changes, as SC-003..SC-005 state:

- a job at a fixed time (neither the minute nor the hour field starts with `*`) is read on
  the wall clock: a time a forward gap skips fires at the end of the gap, and a time a fold
  repeats fires once, at its first occurrence;
- any other job fires at every instant whose local time matches, so a fold's repeated
  times fire twice and a gap's times, which never happen, do not fire.

Instants are UTC; the zone comes from zoneinfo. Nothing here reads a clock.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov",
               "dec")
WEEKDAY_NAMES = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
# The longest each month can be: a day that fits none of the months named never comes.
LONGEST_MONTH = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# How far ahead a timetable is searched before the expression is taken to never match
# (the weekdays of the Gregorian calendar repeat every 400 years; no real expression needs
# more than a few).
SEARCH_YEARS = 30
# How many days' local times (`_local_times`) are kept: a scheduler asks the same few days
# of the same timetables again at every fire, edit and creation.
KEPT_DAYS = 256


class CronSyntaxError(ValueError):
    """An expression that is not a five-field cron expression that ever matches."""


@dataclass(frozen=True)
class CronExpression:
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0 is Sunday
    # Vixie cron: a day matches both day fields when either starts with `*`, else either.
    both_day_fields: bool
    # Debian cron's fixed-time jobs are read on the wall clock through DST changes.
    fixed_time: bool

    def runs_on(self, day: date) -> bool:
        if day.month not in self.months:
            return False
        by_day, by_weekday = day.day in self.days, day.isoweekday() % 7 in self.weekdays
        return (by_day and by_weekday) if self.both_day_fields else (by_day or by_weekday)


def _number(text: str, low: int, high: int, names: tuple[str, ...], first_name: int) -> int:
    if text.lower() in names:
        return names.index(text.lower()) + first_name
    if not text.isdigit():
        raise CronSyntaxError(f"not a number: {text!r}")
    value = int(text)
    if not low <= value <= high:
        raise CronSyntaxError(f"{value} is outside {low}-{high}")
    return value


def _field(text: str, low: int, high: int, names: tuple[str, ...] = (),
           first_name: int = 0) -> frozenset[int]:
    """The values one field names: lists of `*`, `a`, `a-b`, each with an optional `/step`."""
    values: set[int] = set()
    for term in text.split(","):
        span, _, step_text = term.partition("/")
        if step_text and not (step_text.isdigit() and int(step_text) > 0):
            raise CronSyntaxError(f"not a step: {step_text!r}")
        step = int(step_text) if step_text else 1
        if span == "*":
            start, end = low, high
        elif "-" in span:
            start_text, _, end_text = span.partition("-")
            start = _number(start_text, low, high, names, first_name)
            end = _number(end_text, low, high, names, first_name)
            if end < start:
                raise CronSyntaxError(f"a range that runs backwards: {span!r}")
        else:
            start = _number(span, low, high, names, first_name)
            end = high if step_text else start  # `5/15` is 5, 20, 35, 50
        values.update(range(start, end + 1, step))
    return frozenset(values)


@lru_cache(maxsize=256)
def parse(expression: str) -> CronExpression:
    """Read a five-field expression (minute hour day-of-month month day-of-week).

    Raises:
        CronSyntaxError: not five fields, a field out of range, or days no month has.
    """
    fields = expression.split()
    if len(fields) != 5:
        raise CronSyntaxError(f"{len(fields)} fields, not five: {expression!r}")
    minute, hour, day, month, weekday = fields
    weekdays = {value % 7 for value in _field(weekday, 0, 7, WEEKDAY_NAMES)}  # 7 is Sunday
    cron = CronExpression(
        minutes=tuple(sorted(_field(minute, 0, 59))), hours=tuple(sorted(_field(hour, 0, 23))),
        days=_field(day, 1, 31), months=_field(month, 1, 12, MONTH_NAMES, 1),
        weekdays=frozenset(weekdays),
        both_day_fields=day.startswith("*") or weekday.startswith("*"),
        fixed_time=not (minute.startswith("*") or hour.startswith("*")))
    if cron.both_day_fields and not any(
            day_of_month <= LONGEST_MONTH[month_number - 1]
            for day_of_month in cron.days for month_number in cron.months):
        raise CronSyntaxError(f"no month has the days it names: {expression!r}")
    return cron


@lru_cache(maxsize=256)
def zone(name: str) -> ZoneInfo | None:
    """The IANA zone of that name, or None when there is none (kept: zoneinfo keeps the
    zones it finds, but looks for a missing one on disk again at every call)."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _is_real(wall: datetime) -> bool:
    """Whether an aware local time exists (a forward gap's times do not)."""
    return wall.astimezone(UTC).astimezone(wall.tzinfo) == wall


def _end_of_gap(wall: datetime) -> datetime:
    """The first instant after the forward gap that swallows `wall` (naive local time)."""
    tz = wall.tzinfo
    assert tz is not None
    # Read with the offsets from before and after the change, the skipped time lands after
    # and before the change: the instant the offset changes lies between, found by halving.
    before = int(wall.replace(fold=1).astimezone(UTC).timestamp())
    after = int(wall.replace(fold=0).astimezone(UTC).timestamp())
    new_offset = datetime.fromtimestamp(after, tz).utcoffset()
    while after - before > 1:
        middle = (before + after) // 2
        if datetime.fromtimestamp(middle, tz).utcoffset() == new_offset:
            after = middle
        else:
            before = middle
    return datetime.fromtimestamp(after, UTC)


def _first_reading(wall: datetime) -> datetime:
    """The first instant at which the zone's clock reads `wall` or later: its first
    occurrence, or the end of the gap that skips it."""
    return wall.replace(fold=0).astimezone(UTC) if _is_real(wall) else _end_of_gap(wall)


def _instants(cron: CronExpression, wall: datetime) -> list[datetime]:
    """The UTC instants at which a matching local time fires (see the module docstring)."""
    first = _first_reading(wall)
    if cron.fixed_time:
        return [first]
    if not _is_real(wall):
        return []
    second = wall.replace(fold=1).astimezone(UTC)  # differs from the first only in a fold
    return [first] if second == first else [first, second]


def fire_times(cron: CronExpression, tz: ZoneInfo, after: datetime) -> Iterator[datetime]:
    """The fire times strictly after `after`, in order, each instant once; it ends when
    SEARCH_YEARS pass without one.

    Local times are walked in order. In a fold an earlier local time's second occurrence
    comes after a later one's first, so instants wait in a heap until the clock first
    reads the local time walked next: nothing walked later can fire before that.
    """
    pending: list[datetime] = []
    last = after

    def released(floor: datetime | None) -> Iterator[datetime]:
        nonlocal last
        while pending and (floor is None or pending[0] < floor):
            instant = heapq.heappop(pending)
            if instant > last:
                last = instant
                yield instant

    day = after.astimezone(tz).date() - timedelta(days=1)  # a fold may reach back a day
    give_up = day + timedelta(days=SEARCH_YEARS * 366)
    while day < give_up:
        for latest, first, instants in _local_times(cron, tz, day):
            if latest <= after:
                continue  # every instant it could fire at is already past
            for instant in released(first):
                give_up = day + timedelta(days=SEARCH_YEARS * 366)
                yield instant
            for instant in instants:
                heapq.heappush(pending, instant)
        day += timedelta(days=1)
    yield from released(None)


@lru_cache(maxsize=KEPT_DAYS)
def _local_times(cron: CronExpression, tz: ZoneInfo, day: date
                 ) -> tuple[tuple[datetime, datetime, tuple[datetime, ...]], ...]:
    """The local times of `day` the expression matches, in order, each as (the last instant
    the zone's clock reads it, the first instant it reads it or later, the instants it
    fires at): what `fire_times` walks, the same for every walk over the day."""
    if not cron.runs_on(day):
        return ()
    matching = []
    for hour in cron.hours:
        for minute in cron.minutes:
            wall = datetime.combine(day, time(hour, minute), tzinfo=tz)
            latest = max(wall.replace(fold=0).astimezone(UTC),
                         wall.replace(fold=1).astimezone(UTC))
            matching.append((latest, _first_reading(wall), tuple(_instants(cron, wall))))
    return tuple(matching)


def next_fire_time(cron: CronExpression, tz: ZoneInfo, after: datetime) -> datetime | None:
    """The first fire time strictly after `after`, or None within the search horizon."""
    return next(fire_times(cron, tz, after), None)
