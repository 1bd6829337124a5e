"""Make a machine's exploration depend on its seed alone, not on how jobconform is installed.

Hypothesis mixes constants it reads from the "local" source files it has imported into a
small share of its draws. An editable install is local code, a wheel in site-packages is
not, so the same seed explored different command sequences in the two (and a coverage gap
could show on CI, which tests the wheel, but not on a developer's editable checkout).
While a machine runs, that pool is held empty: every install explores what a wheel does.
The hook is a Hypothesis internal, so when it is missing the runs go on unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

try:
    from hypothesis.internal.conjecture import providers as _providers
except ImportError:  # pragma: no cover - a Hypothesis without the internal module
    _providers = None  # type: ignore[assignment]

_HOOK = "_get_local_constants"


@contextmanager
def seed_alone() -> Iterator[None]:
    """Inside this block, Hypothesis draws no constants from local source files."""
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
