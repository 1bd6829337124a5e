"""The pytest plugin (`pytest11` entry point): an SDK's own suite runs the conformance run
as one test and fails on its verdict. Each run is kept small: the lifecycle area, Robot
only (a few seconds)."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

SMALL_RUN = ("--jobconform-area", "lifecycle", "--jobconform-suite", "robot")


@pytest.fixture
def sdk(pytester: pytest.Pytester) -> pytest.Pytester:
    """An SDK's checkout: an adapter module beside its own tests, imported by name as the
    SDK's tests import it (from the folder pytest starts in)."""
    pytester.makepyfile(
        sdk_adapter="""
            from jobconform.backends.memory import MemoryBackend as Backend
            from jobconform.conformance.lifecycle.gallery import late_completion as Broken
        """,
        test_sdk="""
            def test_the_sdks_own_test():
                assert True
        """)
    return pytester


def test_a_conforming_backend_passes_beside_the_sdks_tests(sdk: pytest.Pytester) -> None:
    result = sdk.runpytest_subprocess("--jobconform-backend", "sdk_adapter:Backend",
                                      *SMALL_RUN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    report = json.loads((sdk.path / "reports" / "report.json").read_text())
    assert report["backend"] == "sdk_adapter:Backend" and report["verdict"] == "pass"
    assert report["requirements"]["RT-002"]["suites"] == {"robot": "not run"}


def test_a_failing_verdict_fails_the_test_naming_the_requirement(sdk: pytest.Pytester) -> None:
    result = sdk.runpytest_subprocess("--jobconform-backend", "sdk_adapter:Broken",
                                      *SMALL_RUN, "--jobconform-report-dir", "out",
                                      "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*jobconform*sdk_adapter:Broken*",
                                 "*exited 1*",
                                 "LC-003 Terminal states absorb late completions: robot fail",
                                 "report: *out*report.json"])
    assert json.loads((sdk.path / "out" / "report.json").read_text())["verdict"] == "fail"


def test_listed_deviations_pass_as_on_the_command_line(sdk: pytest.Pytester) -> None:
    sdk.makefile(".yaml", deviations="LC-003:\n  reason: late completions overwrite\n")
    result = sdk.runpytest_subprocess("--jobconform-backend", "sdk_adapter:Broken",
                                      "--jobconform-expected-failures", "deviations.yaml",
                                      *SMALL_RUN, "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_without_a_backend_the_plugin_adds_nothing(sdk: pytest.Pytester) -> None:
    result = sdk.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert not (sdk.path / "reports").exists()
    help_text = sdk.runpytest_subprocess("--help")
    help_text.stdout.fnmatch_lines(["*--jobconform-backend=MODULE:ATTR*"])
