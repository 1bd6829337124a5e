"""The deprecated names the shipped runtimes keep beside the current ones, as an SDK keeps
them for a release or two (capability `deprecated-aliases`): each alias does what the
name it replaces does and warns, so a caller hears of the removal before it comes."""

from __future__ import annotations

import warnings


def warn_deprecated(alias: str, instead: str) -> None:
    """Warn the caller of `alias` (two frames up: the alias's caller) to use `instead`."""
    warnings.warn(f"{alias} is deprecated; use {instead}", DeprecationWarning, stacklevel=3)
