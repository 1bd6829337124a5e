"""Names a package loads on first use (PEP 562), for packages whose eager imports would
import their own submodules' importers back while those are half loaded."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def load_on_first_use(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The package's module `__getattr__`: each name in `homes` comes from the submodule
    `homes[name]` of `package`; any other name is missing, as the import system says."""

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(f"{package}.{home}"), name)

    return attribute
