"""What every service area's Robot library shares: one harness per test, opened by the
area's start keyword on the backend and profile the run names, closed when the test ends
whatever its outcome, and failures that name the test's requirement tags.

`AreaLibrary` keeps a test's harness and the answers kept by alias; the Robot library
derived from an area's vocabulary (conformance/vocabulary.py's `DerivedLibrary`) builds on
it, saying how its start keyword is spelt (`START`) and what it opens (`OPENS`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.loading import load_backend
from jobconform.backends.protocol import Backend
from jobconform.conformance import tolerance
from jobconform.conformance.requirement_tags import requirement_tags
from jobconform.spec import Profile, Registry, load_registry

DEFAULT_BACKEND = "memory"


class Closable(Protocol):
    def close(self) -> None: ...


HarnessT = TypeVar("HarnessT", bound=Closable)


def close_at_end_of_test(harness: Closable | None, result: Any) -> None:
    """Close a Robot test's runtime, whatever the outcome; a close that raises fails the
    test, after what the test itself said, as it fails the Behave scenario (Robot would
    only log a listener's exception). Every Robot library's `end_test` calls this."""
    if harness is None:
        return
    try:
        harness.close()
    except Exception as error:
        said = f"closing the runtime: {type(error).__name__}: {error}"
        result.message = f"{result.message}\n{said}" if result.message else said
        result.status = "FAIL"


def robot_variable(name: str) -> str | None:
    """A Robot variable's value as text; None where it is unset or empty."""
    value = BuiltIn().get_variable_value(name)
    return None if value is None or value == "" else str(value)


def run_setting(backend_name: str | None = None, profile_name: str | None = None
                ) -> tuple[Backend, Profile, Registry]:
    """The backend (`backend_name`, else ${BACKEND}, else memory), the spec, and the
    profile (`profile_name`, else ${PROFILE}, else the backend's own) a Robot run checks."""
    backend = load_backend(backend_name or robot_variable("${BACKEND}") or DEFAULT_BACKEND)
    registry = load_registry()
    profile = registry.profile(profile_name or robot_variable("${PROFILE}") or backend.profile)
    return backend, profile, registry


def test_failure(message: str, checks: str | None = None) -> AssertionError:
    """A failed expectation naming the requirement tags of the running test, `checks`
    first where the test is tagged with it: the one requirement the keyword's own reading
    belongs to, where it has one."""
    ids = requirement_tags(BuiltIn().get_variable_value("@{TEST_TAGS}") or [])
    if checks in ids:
        ids.sort(key=lambda tag: tag != checks)
    suffix = f" [test checks {', '.join(ids)}]" if ids else ""
    return tolerance.robot_failure(message + suffix, ids)


class AreaLibrary(Generic[HarnessT]):
    """One harness of an area per Robot test, closed as the test ends."""

    ROBOT_LISTENER_API_VERSION = 3
    START: ClassVar[str]  # the keyword that opens the harness, e.g. "Start Reminders"
    OPENS: ClassVar[str]  # what it opens, e.g. "reminders runtime"

    def __init__(self) -> None:
        self._forget_test()
        self.ROBOT_LIBRARY_LISTENER = self

    def _forget_test(self) -> None:
        """Nothing of an earlier test: one instance serves a suite's tests (scope SUITE,
        see JobconformLibrary._forget_test), each starting from this state."""
        self._harness: HarnessT | None = None
        self._answers: dict[str, Any] = {}  # alias -> the answer to its creation

    def start_test(self, data: Any, result: Any) -> None:
        self._forget_test()

    def end_test(self, data: Any, result: Any) -> None:
        """Close the test's harness, whatever the outcome."""
        harness, self._harness = self._harness, None
        close_at_end_of_test(harness, result)

    @property
    def harness(self) -> HarnessT:
        if self._harness is None:
            raise RuntimeError(f"no {self.OPENS} in this test yet: call `{self.START}` first")
        return self._harness

    def _start(self, open_harness: Callable[[Backend, Profile, Registry], HarnessT],
               backend_name: str | None = None, profile_name: str | None = None) -> HarnessT:
        """Open the test's harness on the run's backend and profile (`run_setting`).

        Raises:
            RuntimeError: the start keyword already ran in this test.
        """
        if self._harness is not None:
            raise RuntimeError(f"`{self.START}` was already called in this test")
        self._harness = open_harness(*run_setting(backend_name, profile_name))
        return self._harness

    @property
    def answers(self) -> dict[str, Any]:
        """The answers kept by alias (conformance/vocabulary.py keeps creations' here)."""
        return self._answers

    def run(self, command: Any) -> object:
        """Send one command through the test's harness; its answer."""
        harness: Any = self.harness
        return harness.run(command)
