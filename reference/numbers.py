"""What the oracles take for a number in a parameter or a command: never a bool.

Python counts `True` as the int 1, but a parameter given `true` is not the number 1 in
the spec's eyes: every range check in the oracles starts from these two predicates.
"""

from __future__ import annotations

import math
from typing import TypeGuard


def is_whole_number(value: object) -> TypeGuard[int]:
    """An int that is not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_finite_number(value: object) -> TypeGuard[int | float]:
    """An int or a float, not a bool, neither infinite nor NaN."""
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value))
