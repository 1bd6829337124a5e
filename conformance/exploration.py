"""Make a machine's exploration depend on its seed alone: not on how jobconform is
installed, and not on how long the backend takes.

Two things outside the seed would otherwise change what a machine explores:

- Hypothesis mixes constants it reads from the "local" source files it has imported into a
  small share of its draws. An editable install is local code, a wheel in site-packages is
  not, so the same seed explored different command sequences in the two (and a coverage
  gap could show on CI, which tests the wheel, but not on a developer's editable
  checkout). While a machine runs, that pool is held empty: every install explores what a
  wheel does.
- Hypothesis stops shrinking after five minutes of wall time (`MAX_SHRINKING_SECONDS`).
  A runtime with threads of its own, or a slow database, reached that limit at a
  different point on every run: the same seed gave a different counterexample and a
  different number of steps (46,467 and 30,359 in one report). While a machine runs, the
  limit is lifted; shrinking still ends on Hypothesis's own counts (at most 500
  successful shrinks, and 200 calls in a row without progress).

The other time limits are settings (no deadline, no `too_slow` health check) and are in
`conformance/machine_runner.py`. Both hooks here are Hypothesis internals, so when one is
missing the runs go on without it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

try:
    from hypothesis.internal.conjecture import engine as _engine
    from hypothesis.internal.conjecture import providers as _providers
except ImportError:  # pragma: no cover - a Hypothesis without the internal modules
    _engine = None  # type: ignore[assignment]
    _providers = None  # type: ignore[assignment]

_HOOK = "_get_local_constants"
SHRINK_TIME_LIMIT = "MAX_SHRINKING_SECONDS"


@contextmanager
def seed_alone() -> Iterator[None]:
    """Inside this block, Hypothesis draws no constants from local source files and
    shrinks without a wall-time limit."""
    with ExitStack() as stack:
        stack.enter_context(_no_local_constants())
        stack.enter_context(_shrinking_without_time_limit())
        yield


@contextmanager
def _no_local_constants() -> Iterator[None]:
    original = getattr(_providers, _HOOK, None)
    constants_type = getattr(_providers, "Constants", None)
    if original is None or constants_type is None:
        yield
        return
    empty: Any = constants_type()
    setattr(_providers, _HOOK, lambda: empty)
    _providers.CONSTANTS_CACHE.cache.clear()  # entries built from the local pool
    try:
        yield
    finally:
        setattr(_providers, _HOOK, original)
        _providers.CONSTANTS_CACHE.cache.clear()


@contextmanager
def _shrinking_without_time_limit() -> Iterator[None]:
    original = getattr(_engine, SHRINK_TIME_LIMIT, None)
    if original is None:
        yield
        return
    # Read when shrinking starts (now + limit): infinity is a deadline never reached.
    setattr(_engine, SHRINK_TIME_LIMIT, math.inf)
    try:
        yield
    finally:
        setattr(_engine, SHRINK_TIME_LIMIT, original)
