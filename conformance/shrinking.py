"""Whether the Hypothesis machines shrink the counterexample they find.

A conformance run shrinks: the shortest command list is the reproducer an SDK author
reads. The self-test does not need one. It asks only whether each broken backend is
caught and which requirement the divergence names, and shrinking costs most of its time.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from hypothesis import Phase

_shrinking: ContextVar[bool] = ContextVar("jobconform_shrinking", default=True)


def machine_phases() -> list[Phase]:
    """The phases every machine runs. No explain phase: it re-runs the failure under a
    tracer, which costs minutes and adds nothing to the command list."""
    phases = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target]
    return [*phases, Phase.shrink] if _shrinking.get() else phases


@contextmanager
def without_shrinking() -> Iterator[None]:
    """Run the machines inside this block without shrinking what they find."""
    token = _shrinking.set(False)
    try:
        yield
    finally:
        _shrinking.reset(token)
