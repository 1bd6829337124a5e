"""The wheel carries every subpackage and all spec and suite data, under jobconform.* only.

An editable install imports a subpackage missing from pyproject's explicit list without
complaint, yet the wheel silently leaves it out; this test is the guard.
"""

from __future__ import annotations

import configparser
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from checkout import copy_of_checkout

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PACKAGE_DIRS: dict[str, str] = PYPROJECT["tool"]["setuptools"]["package-dir"]
DATA_SUFFIXES = (".py", ".yaml", ".json", ".md", ".feature", ".robot", ".resource", ".typed")
DATA_NAMES = ("VERSION", "requirements.lock")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    source = copy_of_checkout(tmp_path_factory.mktemp("source"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        check=True,
    )
    (built,) = out.glob("jobconform-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def source_files() -> dict[str, Path]:
    """Every file the wheel must hold, keyed by its path inside the wheel."""
    wanted = {}
    for package, folder in PACKAGE_DIRS.items():
        prefix = package.replace(".", "/")
        for path in (ROOT / folder).iterdir():
            if path.is_file() and (path.suffix in DATA_SUFFIXES or path.name in DATA_NAMES):
                wanted[f"{prefix}/{path.name}"] = path
    return wanted


def test_every_source_folder_with_code_is_a_listed_package() -> None:
    listed = {ROOT / folder for folder in PACKAGE_DIRS.values()}
    for folder in ("spec", "reference", "backends", "conformance", "features", "robot"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".feature", ".robot") and "__pycache__" not in path.parts:
                assert path.parent in listed, (
                    f"{path.relative_to(ROOT)} is in a folder missing from pyproject's"
                    " packages/package-dir: the wheel would leave it out"
                )


def test_wheel_holds_every_file(wheel_names: set[str]) -> None:
    missing = sorted(set(source_files()) - wheel_names)
    assert not missing, f"files left out of the wheel: {missing}"


def test_wheel_holds_spec_data_and_type_markers(wheel_names: set[str]) -> None:
    for name in ("lifecycle.yaml", "profiles.yaml", "registry.schema.json",
                 "profiles.schema.json", "VERSION", "requirements.lock", "lifecycle.md"):
        assert f"jobconform/spec/{name}" in wheel_names
    for package in ("spec", "reference", "backends", "conformance"):
        assert f"jobconform/{package}/py.typed" in wheel_names


def test_wheel_installs_nothing_but_jobconform(wheel_names: set[str]) -> None:
    top_level = {name.split("/", 1)[0] for name in wheel_names}
    strays = {name for name in top_level
              if name != "jobconform" and not name.endswith(".dist-info")}
    assert not strays, f"generic top-level names in the wheel: {sorted(strays)}"


def test_wheel_declares_the_memory_backend_entry_point(wheel: Path) -> None:
    """`jobconform run --backend memory` finds its adapter through the wheel's entry points."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/entry_points.txt")]
        text = archive.read(name).decode("utf-8")
    declared = configparser.ConfigParser(delimiters=("=",))
    declared.read_string(text)
    backends = dict(declared["jobconform.backends"]) if "jobconform.backends" in declared else {}
    assert backends.get("memory") == "jobconform.backends.memory:MemoryBackend", text
    # Every backend pyproject declares is in the wheel, pointing where pyproject says.
    assert backends == PYPROJECT["project"]["entry-points"]["jobconform.backends"], text
