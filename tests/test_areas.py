"""The registry of areas: the kit's own, and one registered from outside the package.

`tests/areas/` holds a third-party area, `tally`, with its `jobconform.areas` entry point
in a `.dist-info` folder: with that folder on the path it is installed as far as
`importlib.metadata` can tell. The kit must load its spec, run its Behave feature, its
Robot suite and its machine, and report its requirements, with no change to the kit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from jobconform.spec import AREA_FILES
from jobconform.spec.areas import BUILTIN_AREAS, AreaError, area, areas

THIRD_PARTY = Path(__file__).parent / "areas"


def run_kit(backend: str, report_dir: Path) -> tuple[int, dict[str, Any], str]:
    """`jobconform run` in a child process that sees the third-party area."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(THIRD_PARTY), *filter(None, [os.environ.get("PYTHONPATH")])])}
    finished = subprocess.run(
        [sys.executable, "-c", "from jobconform.conformance.cli import main; main()",
         "run", "--backend", backend, "--report-dir", str(report_dir)],
        capture_output=True, text=True, env=env, timeout=600, check=False)
    report = json.loads((report_dir / "report.json").read_text(encoding="utf-8"))
    return finished.returncode, report, finished.stdout + finished.stderr


def test_a_third_party_area_runs_in_every_suite_and_is_reported(tmp_path: Path) -> None:
    code, report, output = run_kit("tally_area.backends:TallyBackend", tmp_path)
    assert code == 0, output
    for requirement in ("TL-001", "TL-002"):
        verdicts = report["requirements"][requirement]
        assert verdicts["area"] == "tally"
        assert verdicts["suites"] == {"behave": "pass", "robot": "pass",
                                      "hypothesis": "pass"}, requirement
    # The kit's own areas are there too, and not claimed by this backend.
    assert report["requirements"]["LC-001"]["suites"]["behave"] == "not claimed"


def test_a_broken_third_party_runtime_is_caught_by_every_suite(tmp_path: Path) -> None:
    code, report, output = run_kit("tally_area.backends:BrokenTallyBackend", tmp_path)
    assert code != 0, output
    assert report["requirements"]["TL-002"]["suites"] == {
        "behave": "fail", "robot": "fail", "hypothesis": "fail"}


def test_the_kit_areas_are_registered_once_each() -> None:
    names = [candidate.name for candidate in BUILTIN_AREAS]
    assert len(names) == len(set(names))
    assert areas()[:len(BUILTIN_AREAS)] == BUILTIN_AREAS
    # The spec files load lifecycle first, then by requirement prefix.
    assert AREA_FILES[0] == "lifecycle.yaml"
    prefixes = [area(name.removesuffix(".yaml")).prefix for name in AREA_FILES[1:]]
    assert prefixes == sorted(prefixes)


def test_an_unknown_area_is_a_clear_error() -> None:
    with pytest.raises(AreaError, match="no area is named 'nope'; the areas are: admission"):
        area("nope")


def test_every_declared_piece_imports() -> None:
    """A typo in a declaration would only show when that piece runs: import them all."""
    from jobconform.conformance.vocabulary import Vocabulary
    from jobconform.spec.areas import load_attribute

    for declared in BUILTIN_AREAS:
        for module in (declared.oracle, declared.protocol, declared.steps):
            if module is not None:
                load_attribute(module)
        if declared.keywords is not None:
            module, _, cls = declared.keywords.rpartition(".")
            assert isinstance(getattr(load_attribute(module), cls), type)
        if declared.machine is not None:
            assert callable(load_attribute(declared.machine.run))
        if declared.gallery is not None:
            assert load_attribute(declared.gallery)
        if declared.vocabulary is not None:
            assert isinstance(load_attribute(declared.vocabulary), Vocabulary)
