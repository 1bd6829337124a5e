"""Commands declared once (conformance/vocabulary.py): the keywords and steps derived from
each converted area's declarations are the ones its Robot suites and features use."""

from __future__ import annotations

import contextlib
import functools
import inspect
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from behave.model import Table
from robot.api import SkipExecution
from robot.api.deco import library
from robot.libdocpkg import LibraryDocumentation

from jobconform.conformance import vocabulary as vocabulary_module
from jobconform.conformance.admission import declarations as admission
from jobconform.conformance.admission.keywords import AdmissionLibrary
from jobconform.conformance.breaker import declarations as breaker
from jobconform.conformance.breaker.keywords import BreakerLibrary
from jobconform.conformance.composite import declarations as composite
from jobconform.conformance.composite.keywords import CompositeLibrary
from jobconform.conformance.governor import declarations as governor
from jobconform.conformance.governor.keywords import GovernorLibrary
from jobconform.conformance.idempotency import declarations as idempotency
from jobconform.conformance.idempotency.keywords import IdempotencyLibrary
from jobconform.conformance.lifecycle import declarations as lifecycle
from jobconform.conformance.lifecycle.keywords import JobconformLibrary
from jobconform.conformance.loops import declarations as loops
from jobconform.conformance.loops.keywords import LoopsLibrary
from jobconform.conformance.reminders import declarations as reminders
from jobconform.conformance.reminders.keywords import ReminderLibrary
from jobconform.conformance.restart import declarations as restart
from jobconform.conformance.restart.keywords import RestartLibrary
from jobconform.conformance.scheduling import declarations as scheduling
from jobconform.conformance.scheduling.keywords import SchedulingLibrary
from jobconform.conformance.store import declarations as store
from jobconform.conformance.store.keywords import StoreLibrary
from jobconform.conformance.vocabulary import (
    AfterCommands,
    Declaration,
    DerivedLibrary,
    InBulk,
    OnProfile,
    derive_keywords,
    keyword_method_name,
)
from jobconform.reference import commands as cmd
from jobconform.reference.composite import commands as cc
from jobconform.reference.loops import commands as lc
from jobconform.reference.reminders import commands as rc
from jobconform.spec import load_registry

ROBOT_SUITES = Path(__file__).resolve().parents[1] / "robot"
# area -> its declarations, its Robot library, the glob of its Robot suites
AREAS = {
    "reminders": (reminders.DECLARATIONS, ReminderLibrary, "*reminder*.robot"),
    "scheduling": (scheduling.DECLARATIONS, SchedulingLibrary, "scheduling*.robot"),
    "store": (store.DECLARATIONS, StoreLibrary, "store*.robot"),
    "governor": (governor.DECLARATIONS, GovernorLibrary, "governor*.robot"),
    "breaker": (breaker.DECLARATIONS, BreakerLibrary, "breaker*.robot"),
    "admission": (admission.DECLARATIONS, AdmissionLibrary, "admission*.robot"),
    "idempotency": (idempotency.DECLARATIONS, IdempotencyLibrary, "idempotency*.robot"),
    "loops": (loops.DECLARATIONS, LoopsLibrary, "loops*.robot"),
    "lifecycle": (lifecycle.DECLARATIONS, JobconformLibrary, "*.robot"),
    "composite": (composite.DECLARATIONS, CompositeLibrary, "composite*.robot"),
    "restart": (restart.DECLARATIONS, RestartLibrary, "restart*.robot"),
}
DECLARED = [(area, declaration) for area, (declarations, _, _) in AREAS.items()
            for declaration in declarations]
DECLARATIONS = reminders.DECLARATIONS


@functools.cache
def keywords_of(library_class: type) -> dict[str, Any]:
    """The keywords of a Robot library by name, as Robot reads them (libdoc)."""
    documented = LibraryDocumentation(f"{library_class.__module__}.{library_class.__name__}")
    return {keyword.name: keyword for keyword in documented.keywords}


@pytest.mark.parametrize(("area", "declaration"), DECLARED,
                         ids=[f"{area}:{d.keyword}" for area, d in DECLARED])
def test_each_declared_command_is_a_keyword_taking_its_builders_arguments(
        area: str, declaration: Declaration) -> None:
    library_class = AREAS[area][1]
    if issubclass(library_class, DerivedLibrary):
        assert [argument.name for argument in
                keywords_of(library_class)[declaration.keyword].args] == list(
            inspect.signature(declaration.command).parameters)
        return
    method = getattr(library_class(), keyword_method_name(declaration.keyword))
    assert method.robot_name == declaration.keyword
    # Robot reads the arguments from the bound method's signature.
    assert inspect.signature(method) == inspect.signature(declaration.command)


@pytest.mark.parametrize("area", AREAS)
def test_every_keyword_an_areas_robot_suite_uses_exists(area: str) -> None:
    declarations, library_class, suites = AREAS[area]
    names = set(keywords_of(library_class))
    used = set()
    for suite in ROBOT_SUITES.rglob(suites):
        for line in suite.read_text(encoding="utf-8").splitlines():
            if line.startswith("    ") and not line.strip().startswith(("[", "#", "${")):
                used.add(line.split("    ")[1].strip())
    declared = {d.keyword for d in declarations}
    assert declared <= names
    assert used & declared, f"no {area} suite found, or none uses a declared command"


def test_a_derived_library_has_the_start_the_commands_and_the_checks_of_its_vocabulary(
        ) -> None:
    vocabulary = governor.VOCABULARY
    documented = keywords_of(GovernorLibrary)
    assert set(documented) == {vocabulary.start, *(d.keyword for d in vocabulary.commands),
                               *(c.keyword for c in vocabulary.checks)}
    # Robot converts the arguments by the builders' types, and knows their defaults.
    pause = documented["Pause Should End At Second"].args
    assert [str(argument) for argument in pause] == ["second: float | None",
                                                     "governor: int = 2"]
    assert [str(argument) for argument in documented["Start Governor"].args] == [
        "**parameters: str"]


def test_a_derived_check_fails_naming_what_it_read(monkeypatch: pytest.MonkeyPatch) -> None:
    # Outside a Robot run there are no test tags to name.
    monkeypatch.setattr(vocabulary_module, "test_failure", AssertionError)
    library = GovernorLibrary()
    library.answers[governor.OFFER] = (False, 30.0)
    library.run_keyword("Re-Delivery Should Be Refused", [30.0], {})
    with pytest.raises(AssertionError, match="the last offer's answer should be"
                                             r" \(True, None\), the backend shows"):
        library.run_keyword("Re-Delivery Should Be Accepted", [], {})


def test_a_keyword_hiding_a_hand_written_method_is_refused() -> None:
    @library(scope="TEST", auto_keywords=False)
    class Library:
        def cancel_reminder(self) -> None: ...

    with pytest.raises(ValueError, match="would hide it"):
        derive_keywords(Library, [Declaration("Cancel Reminder", rc.CancelReminder)],
                        lambda library: library)


class Recorder:
    """Stands where a declaration sends its commands (a harness or a library): records each
    command and answers `answer`; `profile`, when given, is the profile it runs under."""

    def __init__(self, answer: object, profile: object = None) -> None:
        self.answers: dict[str, object] = {}
        self.sent: list[object] = []
        self.answer = answer
        self.profile = profile

    def run(self, command: object) -> object:
        self.sent.append(command)
        return self.answer


def test_a_derived_keyword_sends_what_its_builder_builds_and_keeps_creations() -> None:
    class Through:
        def __init__(self) -> None:
            self.answers: dict[str, object] = {}
            self.sent: list[object] = []

        def run(self, command: object) -> object:
            self.sent.append(command)
            return f"answer {len(self.sent)}"

    (create_many,) = [d for d in DECLARATIONS if d.keyword == "Create Reminders"]
    through = Through()
    answer = create_many.send(through, create_many.command("a, b", 60))
    assert [c.reminder for c in through.sent] == ["a", "b"]  # type: ignore[attr-defined]
    assert through.answers == {"a": "answer 1", "b": "answer 2"}
    assert answer == "answer 2"


def test_commands_in_bulk_are_compared_for_their_changes_but_the_last_in_full() -> None:
    class Through:
        def __init__(self) -> None:
            self.answers: dict[str, object] = {}
            self.harness = self
            self.changes_only = False
            self.sent: list[tuple[str, bool]] = []

        @contextlib.contextmanager
        def comparing_changes_only(self) -> Iterator[None]:
            self.changes_only = True
            yield
            self.changes_only = False

        def run(self, command: cmd.Submit) -> object:
            self.sent.append((command.job, self.changes_only))
            return "accepted"

    (in_range,) = [d for d in lifecycle.DECLARATIONS if d.keyword == "Submit Jobs In Range"]
    through = Through()
    built = in_range.command("v1", "v3")
    assert isinstance(built, InBulk)
    assert in_range.send(through, built) == "accepted"
    assert through.sent == [("v1", True), ("v2", True), ("v3", False)]
    assert through.answers == {"v1": "accepted", "v2": "accepted", "v3": "accepted"}


def test_a_command_on_the_profile_is_completed_by_the_profile_it_is_sent_under() -> None:
    profile = load_registry().profile("task-manager")
    (with_retry,) = [d for d in lifecycle.DECLARATIONS if d.keyword == "Submit Job With Retry"]
    through = Recorder("accepted", profile=profile)
    built = with_retry.command("a", 2)
    assert isinstance(built, OnProfile)
    with_retry.send(through, built)
    (sent,) = through.sent
    assert isinstance(sent, cmd.Submit) and sent.retry is not None
    assert sent.retry.max_retry_delay_ms == profile.max_retry_delay_ms
    assert through.answers == {"a": "accepted"}


def test_a_command_after_commands_is_named_by_the_count_run_before_it() -> None:
    class Through:
        def __init__(self) -> None:
            self.answers: dict[str, object] = {}
            self.harness = self
            self.commands: list[object] = ["an earlier command"]

        def run(self, command: object) -> object:
            self.commands.append(command)
            return None

    (report,) = [d for d in composite.DECLARATIONS if d.keyword == "Report Composite Failures"]
    through = Through()
    built = report.command("auth", "a", "b")
    assert all(isinstance(command, AfterCommands) for command in built)
    report.send(through, built)
    assert through.commands[1:] == [cc.RecordFailure("a", "auth", "a-auth-1"),
                                    cc.RecordFailure("b", "auth", "b-auth-2")]


def test_a_keyword_checks_its_answer_where_the_library_says_how() -> None:
    @library(scope="TEST", auto_keywords=False)
    class Library:
        def __init__(self) -> None:
            self.answers: dict[str, object] = {}

        def run(self, command: object) -> object:
            return 3

        def doubled(self, answer: object) -> object:
            assert isinstance(answer, int)
            return answer * 2

    derive_keywords(Library, [Declaration("Cancel Reminder", rc.CancelReminder)],
                    lambda library: library, {"Cancel Reminder": Library.doubled})
    assert Library().cancel_reminder("a") == 6  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="no declaration has"):
        derive_keywords(Library, [], lambda library: library, {"Cancel Reminder": Library.doubled})


def test_behave_in_process_after_a_step_library_was_imported_finds_its_types(
        tmp_path: Path) -> None:
    # Behave 1.3 clears its parameter types as each run starts; a step library imported for
    # the first time during a run (after lifecycle's `Json` was registered and cleared)
    # failed with "format spec 'Json' not recognised". A fresh interpreter fixes the order.
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "import jobconform.conformance.vocabulary  # imports the step library first\n"
        "from jobconform.conformance.runner import RunConfig, run_behave\n"
        "from jobconform.spec import load_registry\n"
        "selected = frozenset(r.id for r in load_registry().requirements\n"
        "                     if r.area == 'idempotency')\n"
        "config = RunConfig(backend='memory', profile='canonical', suites=('behave',),\n"
        "                   seed=0, examples=5, work_dir=Path(sys.argv[1]),\n"
        "                   selected=selected, behave_in_process=True)\n"
        "run = run_behave(config)\n"
        "print(len(run.cases), [c.message for c in run.cases if not c.passed][:1])\n")
    finished = subprocess.run([sys.executable, "-c", script, str(tmp_path)],
                              capture_output=True, text=True, timeout=600, check=False)
    assert finished.returncode == 0, finished.stderr
    count, failures = finished.stdout.strip().split(" ", 1)
    assert int(count) > 10 and failures == "[]", finished.stdout


def test_a_start_keyword_that_sends_commands_takes_their_arguments_before_the_parameters(
        ) -> None:
    documented = keywords_of(CompositeLibrary)
    assert [str(argument) for argument in documented["Start Composite"].args] == [
        "*owners: str", "**parameters: str"]


def test_a_precondition_the_backend_does_not_meet_skips_the_test() -> None:
    library = IdempotencyLibrary()
    library._harness = SimpleNamespace(audits=False, takes_store_faults=True,
                                       backend=SimpleNamespace(name="stub"))
    library.run_keyword("Require Store Faults", [], {})
    with pytest.raises(SkipExecution, match="does not report replays to an audit sink"):
        library.run_keyword("Require Audit Events", [], {})


def test_a_phrase_with_a_table_builds_its_command_from_the_rows() -> None:
    (start,) = [d for d in loops.DECLARATIONS if d.keyword == "Start Loop"]
    through = Recorder("started")
    step = vocabulary_module._step(start, start.phrases[0], lambda context: through)
    step(SimpleNamespace(table=Table(["parameter", "value"], rows=[["max_runs", "3"],
                                                                   ["message", '"go"']])),
         alias="a")
    (sent,) = through.sent
    assert isinstance(sent, lc.StartLoop) and sent.loop == "a"
    assert (sent.params.max_runs, sent.params.message) == (3, "go")


def test_a_vocabulary_running_through_another_library_sends_through_its_harness(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lifecycle_library = Recorder(None)
    asked: list[str] = []

    class Robot:
        def get_library_instance(self, name: str) -> Recorder:
            asked.append(name)
            return lifecycle_library

    monkeypatch.setattr(vocabulary_module, "BuiltIn", Robot)
    # No start keyword of its own: the restart runs on the runtime Start Runtime opened.
    assert RestartLibrary().get_keyword_names() == [d.keyword for d in restart.DECLARATIONS]
    RestartLibrary().run_keyword("Send SIGTERM To The Runtime", ["5"], {})
    assert asked == [restart.JOB_RUNTIME_LIBRARY]
    assert lifecycle_library.sent == [cmd.StopBySignal(5.0)]
