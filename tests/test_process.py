"""The process boundary, version 1 and what both versions share: the version-1 schemas,
the `process` backend, the reference child acting as a version-1 child (`--protocol 1`),
fake children breaking the conversation. tests/test_process_v2.py checks version 2.

Fake children are small Python scripts written for each failure the backend must report
clearly. Waits are bounded by real-time safety limits only; one test shows that limit
firing on a child that never answers. Time passes for a runtime only with the virtual
clock, whose reading travels in every request.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fake_children import fake_child
from jsonschema import Draft202012Validator

from jobconform.backends.loading import BackendLoadError, load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.process import (
    ChildExited,
    ChildHung,
    ChildStartError,
    MalformedMessage,
    ProcessBackend,
    ProtocolVersionMismatch,
)
from jobconform.backends.process.backend import (
    COMMAND_VARIABLE,
    TIMEOUT_VARIABLE,
    VALIDATE_VARIABLE,
    configured_command,
    configured_timeout,
    reference_child_command,
)
from jobconform.backends.process.child import ChildServer
from jobconform.backends.process.schemas import (
    SCHEMA_NAMES,
    V2_SCHEMA_NAME,
    load_schema,
    request_problem,
    response_problem,
)
from jobconform.backends.process.session import ChildSession
from jobconform.backends.process.wire import OPERATIONS, PROTOCOL_AREAS, PROTOCOL_VERSION
from jobconform.backends.protocol import RuntimeSettings, TaskScript
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.gallery.process import PROCESS_DIRECTED_GALLERY
from jobconform.conformance.harness import Divergence, Harness
from jobconform.conformance.lifecycle.machine import run_lifecycle_machine
from jobconform.conformance.watchdog import AdapterHung, forget_hangs
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.spec import Profile, Registry

# A real-time limit per answer in these tests: generous for a loaded machine, and only
# ever reached by a child that hangs.
SAFETY_SECONDS = 30.0
ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-01-01T00:00:00.000000Z"
HELLO_ANSWER = ('{"id": 1, "ok": true, "result": {"protocol": 1, "name": "fake",'
                ' "profile": "canonical", "capabilities": ["lifecycle"]}}')


def v1_child_command() -> list[str]:
    """The reference child acting as a version-1 child: it refuses version 2."""
    return [*reference_child_command(), "--protocol", "1"]


@pytest.fixture
def validated_session(monkeypatch: pytest.MonkeyPatch) -> Iterator[ChildSession]:
    """The reference child as a version-1 child, both sides checking every message against
    the schemas."""
    monkeypatch.setenv(VALIDATE_VARIABLE, "1")  # the child inherits it
    session = ChildSession(v1_child_command(), SAFETY_SECONDS, validate=True)
    yield session
    session.close()



def answering_hello_then(body: str) -> str:
    """A child that answers the handshake correctly, then runs `body`."""
    return ("import sys\n"
            "sys.stdin.readline()\n"
            f"print({HELLO_ANSWER!r}, flush=True)\n" + body)


def answering_open_with(tmp_path: Path, line: str) -> ProcessBackend:
    """A backend whose child answers the handshake, then the open request with `line`."""
    command = fake_child(tmp_path, answering_hello_then(
        f"sys.stdin.readline()\nprint({line!r}, flush=True)\nsys.stdin.read()\n"))
    return ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)


# -- the schemas -------------------------------------------------------------------------


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_every_schema_is_a_valid_json_schema(name: str) -> None:
    Draft202012Validator.check_schema(load_schema(name))


def test_the_schemas_ship_as_package_data() -> None:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = pyproject["tool"]["setuptools"]["package-data"]["jobconform.backends.process"]
    shipped = {path.name for pattern in patterns
               for path in (ROOT / "backends" / "process").glob(pattern)}
    assert shipped == {f"{name}.schema.json" for name in (*SCHEMA_NAMES, V2_SCHEMA_NAME)}


def test_every_operation_has_a_request_and_a_result_schema() -> None:
    requests, responses = load_schema("request"), load_schema("response")
    assert set(requests["$defs"]) == set(OPERATIONS)
    assert set(requests["properties"]["op"]["enum"]) == set(OPERATIONS)
    assert set(responses["$defs"]) == set(OPERATIONS)


def test_request_schema_rejects_what_the_protocol_forbids() -> None:
    good = {"id": 3, "op": "cancel", "now": NOW, "runtime": "r", "args": {"job_id": "j"}}
    assert request_problem(good) is None
    assert "now" in str(request_problem({k: v for k, v in good.items() if k != "now"}))
    assert request_problem({**good, "now": "2026-01-01T00:00:00"}) is not None  # not UTC
    assert request_problem({**good, "args": {}}) is not None  # no job_id
    assert request_problem({**good, "op": "explode"}) is not None
    bad_outcome = {**good, "decisions": [{"job_id": "j", "outcome": {"kind": "raises"}}]}
    assert request_problem(bad_outcome) is not None


def test_response_schema_checks_each_operations_result() -> None:
    assert response_problem({"id": 1, "ok": True, "result": True}, "cancel") is None
    assert "result" in str(response_problem({"id": 1, "ok": True, "result": "yes"}, "cancel"))
    assert response_problem({"id": 1, "ok": True, "result": -1}, "cleanup") is not None
    not_completed = {"id": 1, "ok": False,
                     "error": {"type": "JobNotCompleted", "message": "m"}}
    assert "status" in str(response_problem(not_completed, "get_result"))
    assert response_problem({**not_completed, "error": {**not_completed["error"],
                                                        "status": "running"}},
                            "get_result") is None


# -- the reference child, validated on both sides -------------------------------------------


def test_a_version_1_child_claims_what_the_memory_backend_claims_and_version_1_carries(
        validated_session: ChildSession) -> None:
    backend = ProcessBackend(session=validated_session)
    assert (validated_session.version, backend.version) == (1, 1)
    memory = MemoryBackend()
    assert backend.name == "process:memory"
    assert (backend.profile, backend.capabilities) == (
        memory.profile, memory.capabilities & PROTOCOL_AREAS)
    assert backend.capabilities == frozenset({"lifecycle", "retry", "stuck"})


def test_every_operation_and_error_passes_the_schemas_both_ways(
        validated_session: ChildSession, canonical: Profile, registry: Registry) -> None:
    harness = Harness(ProcessBackend(session=validated_session), canonical, registry,
                      max_concurrent=1, max_tasks=3)
    policy = RetryPolicy(max_retries=1, retry_delay_ms=1000.0, non_retryable=("PlanError",))
    harness.run_all([
        cmd.Submit("a", retry=policy), cmd.Submit("b", ignores_cancel=True), cmd.Submit("c"),
        cmd.Submit("d"),  # refused: the cap of 3 records
        cmd.Dispatch(), cmd.GetResult("a"), cmd.GetResult("zz"), cmd.Heartbeat("a"),
        cmd.Finish("a", cmd.Raise("ValueError", "busy", retry_after_ms=2500.0)),
        cmd.AdvanceTime(2.5), cmd.Dispatch(), cmd.Get("a"),
        cmd.Finish("a", cmd.Succeed({"n": [1, 2.5, True, None, "x"]})), cmd.GetResult("a"),
        cmd.Dispatch(), cmd.Cancel("b"), cmd.ListJobs("running"), cmd.AdvanceTime(60),
        cmd.DetectStuck(30), cmd.Cleanup(0),
        cmd.ComputeDelay(policy, 3, Jitter.EQUAL, 0.5, None, 500.0),
        cmd.Shutdown(), cmd.Submit("e"),  # refused: shut down
    ])
    harness.close()


def test_a_hypothesis_run_through_the_pipe_passes_the_schemas(
        validated_session: ChildSession, canonical: Profile, registry: Registry) -> None:
    run = run_lifecycle_machine(ProcessBackend(session=validated_session), canonical, registry,
                                seed=3, examples=15)
    assert run.divergence is None
    assert run.steps > 100


# -- how bodies and time cross the boundary --------------------------------------------------


def test_results_and_errors_cross_exactly() -> None:
    backend = ProcessBackend()
    clock = VirtualClock(EPOCH)
    runtime = backend.open(RuntimeSettings(max_concurrent=3, max_tasks=None), clock)
    scripts = [TaskScript() for _ in range(3)]
    ids = [runtime.submit(script) for script in scripts]
    runtime.dispatch()
    scripts[0].decide(cmd.Succeed(1.0))
    scripts[1].decide(cmd.Succeed({"flag": True, "n": 1}))
    scripts[2].decide(cmd.Raise("PlanError", "a: b"))
    runtime.settle()
    first, second, third = (runtime.get(job_id) for job_id in ids)
    assert first is not None and second is not None and third is not None
    assert first.result == 1.0 and type(first.result) is float
    assert second.result == {"flag": True, "n": 1}
    assert type(second.result["flag"]) is bool  # type: ignore[index]
    assert (third.status, third.error) == ("failed", "PlanError: a: b")
    runtime.close()


def test_the_child_keeps_the_kits_time_only() -> None:
    runtime = ProcessBackend().open(RuntimeSettings(1, None), clock := VirtualClock(EPOCH))
    clock.advance(timedelta(days=3).total_seconds())
    job_id = runtime.submit(TaskScript())
    clock.advance(0.000001)
    runtime.dispatch()
    view = runtime.get(job_id)
    assert view is not None
    assert view.submitted_at == EPOCH + timedelta(days=3)
    assert view.started_at == EPOCH + timedelta(days=3, microseconds=1)
    assert view.submitted_at.utcoffset() == timedelta(0)
    runtime.close()


def test_backends_with_one_command_share_one_child_and_runtimes_stay_apart() -> None:
    first, second = ProcessBackend(), ProcessBackend()
    assert first.session is second.session
    settings = RuntimeSettings(1, None)
    one = first.open(settings, VirtualClock(EPOCH))
    two = second.open(settings, VirtualClock(EPOCH))
    one.submit(TaskScript())
    assert [len(one.list_jobs()), len(two.list_jobs())] == [1, 0]
    one.close()
    two.close()


def test_a_closed_session_lets_the_child_exit_cleanly() -> None:
    session = ChildSession(reference_child_command(), SAFETY_SECONDS)
    session.close()
    assert not session.alive
    assert session._process.returncode == 0


def test_a_threaded_runtime_behind_the_pipe_agrees_with_the_oracle(
        canonical: Profile, registry: Registry) -> None:
    # The child serves the threaded worker: bodies block in real pool threads until the
    # decisions carried by the kit's requests wake them. Version 1 pushes decisions with
    # the requests, which threads can wait for (version 2's callbacks are made from within
    # a request only).
    backend = ProcessBackend(command=[*v1_child_command(), "--backend", "threaded"])
    assert backend.capabilities == frozenset({"lifecycle", "retry", "stuck"})
    harness = Harness(backend, canonical, registry, max_concurrent=2)
    harness.run_all([
        cmd.Submit("a"), cmd.Submit("b", ignores_cancel=True), cmd.Submit("c"), cmd.Dispatch(),
        cmd.Cancel("b"), cmd.AdvanceTime(5), cmd.Finish("a", cmd.Raise("PlanError", "no")),
        cmd.Finish("b", cmd.Succeed(2)), cmd.Dispatch(), cmd.Finish("c", cmd.Succeed([1])),
        cmd.GetResult("c"), cmd.Shutdown(),
    ])
    harness.close()


def test_a_child_that_does_not_report_a_next_attempt_is_caught(
        canonical: Profile, registry: Registry) -> None:
    [entry] = [e for e in PROCESS_DIRECTED_GALLERY if e.name == "process_next_attempt_unreported"]
    harness = Harness(load_backend(entry.target), canonical, registry)
    # The spent outcome ends the next attempt as soon as it starts: failed, not running.
    with pytest.raises(Divergence, match=r"(?s)RT-003.*job 'a' status.*'running'.*'failed'"):
        harness.run_all([
            cmd.Submit("a", retry=RetryPolicy(max_retries=1)), cmd.Dispatch(),
            cmd.Finish("a", cmd.Raise("ValueError", "flaky")), cmd.AdvanceTime(1),
            cmd.Dispatch(), cmd.Finish("a", cmd.Succeed("ok")),
        ])
    harness.close()


def test_a_child_that_drops_the_retry_after_is_caught(canonical: Profile,
                                                      registry: Registry) -> None:
    [entry] = [e for e in PROCESS_DIRECTED_GALLERY if e.name == "process_retry_after_dropped"]
    harness = Harness(load_backend(entry.target), canonical, registry)
    with pytest.raises(Divergence, match=r"(?s)RT-002.*job 'a' status.*'queued'.*'running'"):
        harness.run_all([
            cmd.Submit("a", retry=RetryPolicy(max_retries=1, retry_delay_ms=1000)),
            cmd.Dispatch(), cmd.Finish("a", cmd.Raise("ValueError", "busy", 5000.0)),
            cmd.AdvanceTime(2), cmd.Dispatch(),
        ])
    harness.close()


# -- the child's side of bad input ---------------------------------------------------------


def child_answer(server: ChildServer, request: dict[str, Any] | str) -> dict[str, Any]:
    line = request if isinstance(request, str) else json.dumps(request)
    answer: dict[str, Any] = json.loads(server.answer(line))
    return answer


def test_the_child_answers_a_request_it_cannot_read_with_a_protocol_error() -> None:
    server = ChildServer(MemoryBackend(), validate=True)
    garbage = child_answer(server, "not json")
    assert garbage["id"] is None and garbage["error"]["type"] == "ProtocolError"
    no_runtime = child_answer(server, {"id": 2, "op": "settle", "now": NOW,
                                       "runtime": "nope", "args": {}})
    assert no_runtime["error"]["type"] == "ProtocolError"
    assert "no open runtime" in no_runtime["error"]["message"]
    wrong_version = child_answer(server, {"id": 3, "op": "hello", "args": {"protocol": 9}})
    assert "protocol version 1, not 9" in wrong_version["error"]["message"]
    unschematic = child_answer(server, {"id": 4, "op": "open", "args": {}})
    assert unschematic["error"]["type"] == "ProtocolError"
    timeless = child_answer(ChildServer(MemoryBackend()),
                            {"id": 5, "op": "settle", "runtime": "r", "args": {}})
    assert timeless["error"] == {"type": "ProtocolError",
                                 "message": "settle needs the kit's time in 'now'"}
    for answer in (garbage, no_runtime, wrong_version, unschematic, timeless):
        assert response_problem(answer, "settle") is None


# -- the kit's side of a broken child ---------------------------------------------------------


def test_a_command_that_cannot_start_says_so(tmp_path: Path) -> None:
    with pytest.raises(ChildStartError, match=r"cannot start the child .*JOBCONFORM_PROCESS"):
        ProcessBackend(command=[str(tmp_path / "no-such-child")])


def test_a_child_that_exits_is_reported_with_its_code_and_stderr(tmp_path: Path) -> None:
    command = fake_child(tmp_path, "import sys\nprint('cannot find my config', file=sys.stderr)"
                                   "\nsys.exit(3)\n")
    with pytest.raises(ChildExited, match=r"(?s)exited with code 3 .*cannot find my config"):
        ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)


def test_a_child_that_exits_mid_run_fails_the_next_request(tmp_path: Path) -> None:
    command = fake_child(tmp_path, answering_hello_then("sys.exit(0)\n"))
    backend = ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)
    with pytest.raises(ChildExited, match="answer to open"):
        backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))


def test_a_malformed_line_is_reported_with_the_line(tmp_path: Path) -> None:
    backend = answering_open_with(tmp_path, "ready!")
    with pytest.raises(MalformedMessage, match=r"(?s)malformed answer to open \(line 2 of its"
                       r" stdout\): not a JSON line.*the line: ready!"):
        backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))
    assert not backend.session.alive


def test_a_wrong_result_form_is_reported(tmp_path: Path) -> None:
    backend = answering_open_with(tmp_path, '{"id": 2, "ok": true, "result": {"handle": 1}}')
    with pytest.raises(MalformedMessage, match="result of open must be an object with a runtime"):
        backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))


def test_an_error_the_operation_cannot_raise_is_reported(tmp_path: Path) -> None:
    backend = answering_open_with(tmp_path, '{"id": 2, "ok": false, "error": {"type":'
                                            ' "JobNotFound", "message": "m"}}')
    with pytest.raises(MalformedMessage, match="JobNotFound is not an answer to open"):
        backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))


def test_a_child_speaking_another_version_is_refused(tmp_path: Path) -> None:
    answer = '{"id": 1, "ok": true, "result": {"protocol": 3}}'
    command = fake_child(tmp_path, "import sys\nsys.stdin.readline()\n"
                                   f"print({answer!r}, flush=True)\nsys.stdin.read()\n")
    expected = f"speaks protocol version 3; this kit speaks version {PROTOCOL_VERSION} or 1"
    with pytest.raises(ProtocolVersionMismatch, match=expected):
        ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)


@pytest.mark.parametrize("result", ['{}', '{"protocol": "2"}', '"hello"', 'null'])
def test_a_malformed_hello_answer_is_a_malformed_message_not_a_version(
        tmp_path: Path, result: str) -> None:
    answer = f'{{"id": 1, "ok": true, "result": {result}}}'
    command = fake_child(tmp_path, "import sys\nsys.stdin.readline()\n"
                                   f"print({answer!r}, flush=True)\nsys.stdin.read()\n")
    with pytest.raises(MalformedMessage, match=r"wrote a malformed answer to hello .*"
                       r"`protocol` is the version the child speaks, an integer") as error:
        ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)
    assert f"the line: {answer}" in str(error.value)


def test_a_child_refusing_every_version_of_the_kit_is_refused(tmp_path: Path) -> None:
    # It refuses version 2, then version 1: the kit offers no other.
    command = fake_child(tmp_path, "import json, sys\nfor line in sys.stdin:\n"
                         "    print(json.dumps({'id': json.loads(line)['id'], 'ok': False,"
                         " 'error': {'type': 'ProtocolError', 'message':"
                         " 'I speak version 7 only'}}), flush=True)\n")
    with pytest.raises(ProtocolVersionMismatch,
                       match=r"refused .* versions 2 or 1: I speak version 7"):
        ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)


def test_a_hung_child_is_stopped_after_the_safety_limit(tmp_path: Path) -> None:
    # It reads the request and then waits for input that never comes: no wall-clock sleep.
    command = fake_child(tmp_path, answering_hello_then(
        "print('working on it', file=sys.stderr, flush=True)\nsys.stdin.read()\n"))
    backend = ProcessBackend(command=command, timeout_seconds=0.5)
    with pytest.raises(ChildHung,
                       match=r"(?s)did not answer open within 0.5 s .*stopped.*working on it"):
        backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))
    assert not backend.session.alive


def test_the_harness_reports_a_hung_child_once_as_a_hang(
        tmp_path: Path, canonical: Profile) -> None:
    opened = '{"id": 2, "ok": true, "result": {"runtime": "r"}}'
    command = fake_child(tmp_path, answering_hello_then(
        f"sys.stdin.readline()\nprint({opened!r}, flush=True)\nsys.stdin.read()\n"))
    forget_hangs()
    backend = ProcessBackend(command=command, timeout_seconds=0.5)
    harness = Harness(backend, canonical)
    with pytest.raises(AdapterHung, match=r"ADAPTER HUNG: submit: the child .* did not answer"
                                          r" submit"):
        harness.run(cmd.Submit("a"))
    # Every later call of that runtime is not tried: a child that hangs costs one limit.
    with pytest.raises(AdapterHung, match="was not tried: an earlier call of the same"):
        Harness(backend, canonical)
    forget_hangs()


# -- configuration ---------------------------------------------------------------------------


def test_the_command_variable_is_split_like_a_shell(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(COMMAND_VARIABLE, raising=False)
    assert configured_command() == reference_child_command()
    monkeypatch.setenv(COMMAND_VARIABLE, "node 'my child.js' --fast")
    assert configured_command() == ["node", "my child.js", "--fast"]
    monkeypatch.setenv(COMMAND_VARIABLE, "node 'unclosed")
    with pytest.raises(ChildStartError, match="not a valid command line"):
        configured_command()


def test_a_bad_timeout_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIMEOUT_VARIABLE, "soon")
    with pytest.raises(ValueError, match="positive number of seconds"):
        configured_timeout()


def test_the_loader_reports_a_child_that_cannot_start(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    monkeypatch.setenv(COMMAND_VARIABLE, str(tmp_path / "missing-child"))
    with pytest.raises(BackendLoadError, match="ChildStartError: cannot start the child"):
        load_backend("process")
