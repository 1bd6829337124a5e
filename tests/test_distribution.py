"""The built distribution is ready to publish and installs into a clean folder; the
package, the spec and the docs state one version.

The version has one source, spec/VERSION: pyproject reads it (`dynamic = ["version"]`),
so the package is versioned with the spec it carries. These tests check everything that
repeats it: the built metadata, `jobconform --version`, and the transcripts and version
mentions in the README and docs.
"""

from __future__ import annotations

import email
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from pathlib import Path

import pytest
from checkout import copy_of_checkout
from trove_classifiers import classifiers as known_classifiers

from jobconform.spec import load_registry

ROOT = Path(__file__).resolve().parents[1]
VERSION = (ROOT / "spec" / "VERSION").read_text(encoding="utf-8").strip()
# Documents whose transcripts and version mentions must follow spec/VERSION.
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# `jobconform 0.4.0: backend ...` (a run's first line), `The spec (version 0.4.0)`,
# `jobconform, version 0.4.0` (--version), `jobconform-0.4.0-py3-none-any.whl` and
# `Spec 0.4.0, seed 0.` (a Markdown summary).
VERSION_MENTION = re.compile(r"jobconform (\d+\.\d+\.\d+):|spec \(version (\d+\.\d+\.\d+)\)"
                             r"|jobconform, version (\d+\.\d+\.\d+)"
                             r"|jobconform-(\d+\.\d+\.\d+)[.-]"
                             r"|Spec (\d+\.\d+\.\d+), seed")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    source = copy_of_checkout(tmp_path_factory.mktemp("source"))
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out),
                    str(source)], check=True, capture_output=True, text=True)
    return out


def wheel_metadata(dist: Path) -> Message:
    (wheel,) = dist.glob("jobconform-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(archive.read(name))


def test_twine_check_passes_on_sdist_and_wheel(dist: Path) -> None:
    files = sorted(str(path) for path in dist.iterdir())
    assert len(files) == 2, files
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_metadata_is_complete_and_versioned_by_the_spec(dist: Path) -> None:
    metadata = wheel_metadata(dist)
    assert metadata["Version"] == VERSION == load_registry().version
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert metadata["License-Expression"] == "MIT"
    classifiers = metadata.get_all("Classifier") or []
    assert classifiers
    unknown = sorted(set(classifiers) - known_classifiers)
    assert not unknown, f"the package index refuses unknown classifiers: {unknown}"
    (sdist,) = dist.glob("jobconform-*.tar.gz")
    assert sdist.name == f"jobconform-{VERSION}.tar.gz"
    with tarfile.open(sdist) as archive:
        assert f"jobconform-{VERSION}/spec/VERSION" in archive.getnames()


def test_the_wheel_installs_and_runs_from_a_clean_folder(dist: Path, tmp_path: Path) -> None:
    # The dependencies are already here; the wheel alone goes into a folder of its own.
    (wheel,) = dist.glob("jobconform-*.whl")
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-index", "--target", str(target), str(wheel)], check=True)
    environment = {**os.environ, "PYTHONPATH": str(target)}
    script = ("import jobconform.spec, sys; from jobconform.conformance.cli import main;"
              " print(jobconform.spec.__file__); sys.argv = ['jobconform', '--version'];"
              " main()")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, cwd=tmp_path, env=environment)
    assert done.returncode == 0, done.stderr
    where, version = done.stdout.strip().splitlines()
    assert where.startswith(str(target)), f"imported {where}, not the installed wheel"
    assert version.endswith(f"version {VERSION}")


def test_the_docs_state_the_spec_version() -> None:
    mentions = [(path.name, next(group for group in match.groups() if group))
                for path in DOCUMENTS
                for match in VERSION_MENTION.finditer(path.read_text(encoding="utf-8"))]
    assert mentions, "no version mention found: the pattern no longer matches the docs"
    wrong = [f"{name} says {found}" for name, found in mentions if found != VERSION]
    assert not wrong, (f"spec/VERSION is {VERSION}, but {'; '.join(wrong)}: update the"
                       " transcript (rerun the command) or the text")


def test_the_docs_install_what_exists() -> None:
    # jobconform is not on the package index yet: a plain `pip install jobconform` fails.
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"pip install '?jobconform\b(?![.\w/-]*\.whl)", text), (
            f"{path.name} installs jobconform from the package index, where it is not"
            " published: install from a checkout or a built wheel")
