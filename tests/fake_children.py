"""Child processes for the process backend's tests, each written as a small Python script."""

from __future__ import annotations

import sys
from pathlib import Path


def fake_child(tmp_path: Path, source: str) -> list[str]:
    """The command of a child whose behaviour is the given Python source."""
    script = tmp_path / "child.py"
    script.write_text(source, encoding="utf-8")
    return [sys.executable, str(script)]
