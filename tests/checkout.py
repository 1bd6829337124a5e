"""A private copy of the checkout for the tests that build it.

A build writes into the folder it builds (build/, *.egg-info, the sdist's staging folder),
so two builds of one folder at once (two pytest-xdist workers, each with its own
module-scoped fixture) delete each other's files. Each build gets a copy of its own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# What a build never reads: tools' state, reports, earlier build output, the Node example's
# installed packages.
NOT_SOURCE = shutil.ignore_patterns(".git", ".tox", ".venv", "reports", "build", "dist",
                                    "*.egg-info", "node_modules", "__pycache__")


def copy_of_checkout(folder: Path) -> Path:
    """Copy the checkout's sources into `folder`/checkout and return that path."""
    target = folder / "checkout"
    shutil.copytree(ROOT, target, ignore=NOT_SOURCE)
    return target
