"""Aimed rules: the time steps that put a machine on a boundary and just either side of it.

A boundary requirement (an exact timeout, cutoff, cap or window) is broken by a runtime
whose comparison is a little off: `>=` for `>`, a threshold a second early or late, a
silence counted in whole seconds (`int(now - last_beat) > timeout`), instants kept or
compared at milliseconds. Random time steps reach the exact boundary only by chance, so on
some seeds a machine never checks it. Each area's machine therefore has rules that, in one
go, set up the boundary's subject and step the clock to just before the boundary, onto it,
and just past it, observing after each step: any seed that draws the rule once checks the
boundary.

"Just" is the precision a runtime must keep time to: a microsecond (LC-005, and
spec/lifecycle.md, "Time precision"). One microsecond either side catches every
comparison that is off by any coarser amount: a second early or late, a whole-second or
a millisecond truncation, a rounding to either, and an inclusive bound for an exclusive
one. (A truncation to milliseconds under an inclusive bound needs a subject that starts
between two milliseconds, which the machine's own steps provide or not.)
"""

from __future__ import annotations

from jobconform.spec import MICROSECOND, Profile

# A second: the unit the spec writes its durations in; machines use it for their own
# margins (a bound one second inside a range, a boundary far enough ahead to aim at).
TICK_SECONDS = 1.0
# The precision a runtime keeps and compares instants at (LC-005): the aimed steps land
# this far either side of a boundary (a profile's time_precision_seconds, when it relaxes
# the microsecond).


def steps_to_edge(elapsed: float, boundary: float,
                  precision: float = MICROSECOND) -> tuple[float, ...]:
    """Clock steps from `elapsed` seconds after the subject's start: to `precision` before
    `boundary`, onto it and `precision` past it (the steps already behind are skipped).

    Each step is rounded to the microsecond, as the clock keeps time, so that the landings
    are exact whatever the floating-point sums.

    Raises:
        ValueError: a negative boundary or elapsed time, or a precision that is not > 0.
    """
    if boundary < 0 or elapsed < 0:
        raise ValueError(f"times are >= 0, not elapsed={elapsed!r}, boundary={boundary!r}")
    if not precision > 0:
        raise ValueError(f"the precision is > 0 seconds, not {precision!r}")
    steps = []
    at = elapsed
    for target in (boundary - precision, boundary, boundary + precision):
        if target >= at:
            steps.append(round(target - at, 6))
            at = target
    return tuple(steps)


def steps_onto(elapsed: float, boundary: float,
               precision: float = MICROSECOND) -> tuple[float, ...]:
    """Clock steps from `elapsed` to `precision` before `boundary` (when that is still
    ahead) and then onto it: for boundaries whose far side the machine reaches anyway.

    Raises:
        ValueError: a negative boundary or elapsed time, or a precision that is not > 0.
    """
    steps = steps_to_edge(elapsed, boundary, precision)
    return steps[:-1] if steps else steps


def fine_steps(precision: float = MICROSECOND) -> tuple[float, ...]:
    """Clock steps finer than a second, for a machine's random draws beside its whole
    seconds: the precision itself, half a millisecond (when finer than the precision
    allows, left out) and half a second. A few of them put instants between milliseconds
    and silences between whole seconds anywhere in a sequence, not only where an aimed
    rule lands: a runtime that keeps instants or counts silence coarser than `precision`
    then differs from the oracle on whatever the sequence does next.

    Raises:
        ValueError: a precision that is not > 0.
    """
    if not precision > 0:
        raise ValueError(f"the precision is > 0 seconds, not {precision!r}")
    return tuple(sorted({round(step, 6) for step in (precision, 0.0005, 0.5)
                         if step >= precision}))


def precision_notes(profile: Profile) -> tuple[str, ...]:
    """The report's note for a profile that relaxes LC-005's microsecond, else none: its
    boundaries were checked only to the precision it declares."""
    if profile.time_precision_seconds <= MICROSECOND:
        return ()
    return (f"profile {profile.name!r} declares a time precision of"
            f" {profile.time_precision_seconds:g} s: boundaries were checked that far either"
            f" side, not to LC-005's microsecond",)
