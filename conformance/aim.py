"""Aimed rules: the time steps that put a machine on a boundary and one tick before it.

A boundary requirement (an exact timeout, cutoff, cap or window) is broken by a runtime
whose comparison is one tick off (`>=` for `>`, a threshold a second early). Random time
steps reach the exact boundary only by chance, so on some seeds a machine never checks it.
Each area's machine therefore has rules that, in one go, set up the boundary's subject and
step the clock to one tick before the boundary, onto it, and one tick past it, observing
after each step: any seed that draws the rule once checks the boundary.

The spec writes its durations in whole seconds, so a tick is one second.
"""

from __future__ import annotations

TICK_SECONDS = 1.0


def steps_to_edge(elapsed: float, boundary: float) -> tuple[float, ...]:
    """Clock steps from `elapsed` seconds after the subject's start: to one tick before
    `boundary`, onto it and one tick past it (the steps already behind are skipped).

    Raises:
        ValueError: a negative boundary or elapsed time.
    """
    if boundary < 0 or elapsed < 0:
        raise ValueError(f"times are >= 0, not elapsed={elapsed!r}, boundary={boundary!r}")
    steps = []
    at = elapsed
    for target in (boundary - TICK_SECONDS, boundary, boundary + TICK_SECONDS):
        if target >= at:
            steps.append(target - at)
            at = target
    return tuple(steps)


def steps_onto(elapsed: float, boundary: float) -> tuple[float, ...]:
    """Clock steps from `elapsed` to one tick before `boundary` (when that is still ahead)
    and then onto it: for boundaries whose far side the machine reaches anyway.

    Raises:
        ValueError: a negative boundary or elapsed time.
    """
    steps = steps_to_edge(elapsed, boundary)
    return steps[:-1] if steps else steps
