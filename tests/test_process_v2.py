"""Process protocol version 2: every area through the pipe, the fallback to version 1, and
bad lines named where they happen.

The round trips run each area's Hypothesis machine against the reference child with the
schemas checked on both sides, so every message of every area (requests, answers,
callbacks and replies) is a valid line of the generated schema.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from fake_children import fake_child
from jsonschema import Draft202012Validator

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.process import ChildRejectedRequest, MalformedMessage, ProcessBackend
from jobconform.backends.process.backend import (
    VALIDATE_VARIABLE,
    carried_capabilities,
    reference_child_command,
)
from jobconform.backends.process.child import Child
from jobconform.backends.process.codec import CodecError, decode, encode
from jobconform.backends.process.interfaces import (
    CHILD_INTERFACES,
    KIT_INTERFACES,
    JobRecord,
    methods,
)
from jobconform.backends.process.schemas import (
    V2_SCHEMA_NAME,
    generate_v2_schema,
    load_schema,
    v2_problem,
)
from jobconform.backends.process.session import ChildSession
from jobconform.backends.protocol import STORE_FAULTS, RuntimeSettings, TaskScript
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import RetryPolicy
from jobconform.reference.idempotency.oracle import ClaimKind
from jobconform.spec import Profile, Registry
from jobconform.spec.areas import BUILTIN_AREAS, load_attribute

SAFETY_SECONDS = 30.0
NOW = "2026-01-01T00:00:00.000000Z"


def _validated(command: list[str]) -> ChildSession:
    environment = os.environ.get(VALIDATE_VARIABLE)
    os.environ[VALIDATE_VARIABLE] = "1"  # the child inherits it
    try:
        return ChildSession(command, SAFETY_SECONDS, validate=True)
    finally:
        if environment is None:
            del os.environ[VALIDATE_VARIABLE]
        else:
            os.environ[VALIDATE_VARIABLE] = environment


@pytest.fixture(scope="module")
def validated_session() -> Iterator[ChildSession]:
    """The reference child speaking version 2, every line checked on both sides."""
    session = _validated(reference_child_command())
    yield session
    session.close()


@pytest.fixture(scope="module")
def validated_self_running_session() -> Iterator[ChildSession]:
    """The reference child with a clockwork of its own (`--self-running`), validated."""
    session = _validated([*reference_child_command(), "--self-running"])
    yield session
    session.close()



def answer_lines(*answers: dict[str, object]) -> str:
    """Child source (after `import sys`) that reads one request per answer and prints it."""
    return "".join(f"sys.stdin.readline()\nprint({json.dumps(answer)!r}, flush=True)\n"
                   for answer in answers)


# A lifecycle-only child's answers to the hello and the open (protocol 2).
HELLO = {"id": 1, "ok": True, "result": {"protocol": 2, "name": "fake", "profile": "canonical",
                                         "capabilities": ["lifecycle"]}}
OPENED = {"id": 2, "ok": True, "result": {"handle": "jobruntime-1"}}


# -- the generated schema ---------------------------------------------------------------------


def test_the_shipped_schema_is_the_one_the_interfaces_generate() -> None:
    # A stale file means an area's protocol changed: regenerate it (schemas.py says how).
    assert load_schema(V2_SCHEMA_NAME) == json.loads(json.dumps(generate_v2_schema()))


def test_the_schema_is_a_valid_json_schema_with_a_message_per_method() -> None:
    schema = load_schema(V2_SCHEMA_NAME)
    Draft202012Validator.check_schema(schema)
    ops = {m.op for i in CHILD_INTERFACES + KIT_INTERFACES for m in methods(i).values()}
    assert ops | {"hello", "goodbye", "batch"} == set(schema["messages"])
    assert len(ops) > 100  # every area's methods, not a hand-picked few


def test_every_area_has_its_interface_on_the_wire() -> None:
    openers = set(methods(CHILD_INTERFACES[0]))
    for area in BUILTIN_AREAS:
        assert (area.opener or "open") in openers, area.name


def test_the_schema_names_what_is_wrong_in_a_request() -> None:
    good = {"id": 4, "op": "BreakerRuntime.admit", "object": "breakerruntime-1", "now": NOW,
            "args": {"target": "t", "call": "c"}}
    assert v2_problem(good, "request") is None
    assert "call" in str(v2_problem({**good, "args": {"target": "t"}}, "request"))
    assert "args: target" in str(v2_problem({**good, "args": {"target": 1, "call": "c"}},
                                            "request"))
    assert v2_problem({**good, "op": "BreakerRuntime.explode"}, "request") is not None
    answer = {"id": 4, "ok": True, "result": "maybe"}
    assert "result" in str(v2_problem(answer, "answer", "BreakerRuntime.read"))


def test_values_cross_by_their_annotations() -> None:
    class NoHandles:
        def handle_of(self, value: Any, interface: type) -> str:
            raise AssertionError("no handles here")

        def object_for(self, document: dict[str, Any], interface: type) -> Any:
            raise AssertionError("no handles here")

    handles = NoHandles()
    claim = methods(CHILD_INTERFACES[2])["claim"].returns  # IdempotencyRuntime.claim -> Claim
    value = claim(ClaimKind.REPLAY, 200, None, "t-1", cmd.Raise("PlanError", "no", 1.5))
    document = encode(value, claim, handles)
    assert document["outcome"] == {"type": "Raise", "error_type": "PlanError", "message": "no",
                                   "retry_after_ms": 1.5}
    assert decode(json.loads(json.dumps(document)), claim, handles) == value
    record = decode({"job_id": "a", "status": "queued", "submitted_at": NOW,
                     "started_at": None, "finished_at": None, "result": None, "error": None,
                     "retry_count": 0, "max_retries": 0, "last_heartbeat": None,
                     "redelivery_count": None, "alerted": None, "poisoned": None},
                    JobRecord, handles)
    assert record.submitted_at == EPOCH and record.submitted_at.utcoffset() is not None
    assert encode(float("nan"), float, handles) == "NaN"
    # An operation that answers nothing (JobRuntime.dispatch) takes no answer but null.
    dispatch = methods(CHILD_INTERFACES[1])["dispatch"].returns
    assert decode(None, dispatch, handles) is None
    with pytest.raises(CodecError, match="the dispatch answer must be null, not 5"):
        decode(5, dispatch, handles, "the dispatch answer")
    # A scalar answer is of its type: a whole number may stand for a float, a boolean for
    # nothing but a boolean.
    cancel = methods(CHILD_INTERFACES[1])["cancel"].returns
    assert decode(True, cancel, handles) is True
    with pytest.raises(CodecError, match="the cancel answer must be true or false, not 1"):
        decode(1, cancel, handles, "the cancel answer")
    assert decode(2, float, handles) == 2
    for garbage, annotation, wanted in ((True, float, "a number"), ("5", int, "a whole number"),
                                        (5, str, "a string"), (1.5, int, "a whole number")):
        with pytest.raises(CodecError, match=f"must be {wanted}, not"):
            decode(garbage, annotation, handles)


# -- every area, round trip ---------------------------------------------------------------------


# Restart is not carried by the protocol (no message restarts a child over its store).
@pytest.mark.parametrize("area", [a for a in BUILTIN_AREAS
                                  if a.machine is not None and a.name != "restart"],
                         ids=lambda a: a.name)
def test_each_areas_machine_passes_through_the_pipe_with_every_line_valid(
        area: Any, validated_session: ChildSession,
        validated_self_running_session: ChildSession, canonical: Profile,
        registry: Registry) -> None:
    # The memory backend keeps the commanded mode; the child's --self-running claims it.
    session = (validated_self_running_session if area.name == "self-running"
               else validated_session)
    backend = ProcessBackend(session=session)
    assert area.machine.covers & backend.capabilities
    run = load_attribute(area.machine.run)(backend, canonical, registry, seed=1, examples=8)
    assert run.divergence is None
    assert run.steps > 20


def test_the_child_claims_every_area_the_memory_backend_claims(
        validated_session: ChildSession) -> None:
    backend = ProcessBackend(session=validated_session)
    assert validated_session.version == 2
    # Every claim but the deprecated aliases, Python's names with Python's warning (TS-013,
    # RT-011, RP-010). The breaker's dispatch seams are kept: their methods are
    # BreakerRuntime messages (CB-014, CB-015); so are the log records, pulled with
    # log_records() (AD-025, AD-026, RP-009), and since issue #35 the health report, the
    # submissions made at once, both event sinks and the store faults. A second admission
    # runtime over the same store (admission-peers, AD-027) is no message either.
    areas_claimed = {claim for claim in MemoryBackend().capabilities
                     if claim not in ("deprecated-aliases", "admission-peers")}
    assert backend.capabilities == areas_claimed
    assert {claim for claim in backend.capabilities if claim.startswith(STORE_FAULTS)} == {
        "store-faults:redelivery", "store-faults:reaper", "store-faults:idempotency",
        "store-faults:reminders"}  # each area's runtime carries inject_store_fault
    assert "audit-events" in backend.capabilities  # open_idempotency carries the sink
    assert "loop-events" in backend.capabilities  # open_loops carries the event sink
    assert "health-report" in backend.capabilities  # the health answer carries it
    assert "concurrent-submit" in backend.capabilities  # submit_concurrently carries it
    assert "breaker-seams" in backend.capabilities
    assert callable(backend.open_breaker) and callable(backend.open_scheduling)


def test_a_child_claims_retry_in_part_through_the_pipe(registry: Registry) -> None:
    from jobconform.conformance.applicability import unclaimed
    from jobconform.conformance.partial_claims import RETRY_WITHOUT_JITTER_BACKEND

    assert {"retry-without-jitter", "retry-intervals"} <= carried_capabilities(1)
    backend = ProcessBackend(command=[*reference_child_command(), "--backend",
                                      RETRY_WITHOUT_JITTER_BACKEND],
                             timeout_seconds=SAFETY_SECONDS)
    try:
        assert {"retry", "retry-without-jitter"} <= backend.capabilities
        # The jitter modes are not asked of it; the rest of retry is.
        assert unclaimed(registry.requirement("RT-009"), backend.capabilities) is not None
        assert unclaimed(registry.requirement("RT-002"), backend.capabilities) is None
    finally:
        backend.session.close()


def test_a_child_whose_breaker_lacks_the_seams_claims_the_breaker_alone(
        canonical: Profile, registry: Registry) -> None:
    from jobconform.conformance.breaker.machine import run_breaker_machine
    from jobconform.conformance.partial_claims import BREAKER_WITHOUT_SEAMS

    assert "breaker-seams" in carried_capabilities(2)
    assert "breaker-seams" not in carried_capabilities(1)
    backend = ProcessBackend(command=[*reference_child_command(), "--backend",
                                      BREAKER_WITHOUT_SEAMS], timeout_seconds=SAFETY_SECONDS)
    assert "breaker" in backend.capabilities and "breaker-seams" not in backend.capabilities
    # The machine sends none of the three seams' messages, so the child never answers
    # that its breaker has no such method (CB-014 and CB-015 are "not claimed").
    run = run_breaker_machine(backend, canonical, registry, seed=1, examples=8)
    assert run.divergence is None and run.steps > 20
    assert not {"CB-014", "CB-015"} & run.exercised


def test_a_task_bodys_scripted_error_crosses_with_its_type_and_retry_after() -> None:
    backend = ProcessBackend()
    clock = VirtualClock(EPOCH)
    runtime = backend.open(RuntimeSettings(max_concurrent=1, max_tasks=None), clock)
    script = TaskScript()
    job_id = runtime.submit(script, RetryPolicy(max_retries=1, retry_delay_ms=10.0))
    runtime.dispatch()
    script.decide(cmd.Raise("RateLimited", "slow down", retry_after_ms=4000.0))
    runtime.settle()
    assert not script.decided()  # the child called next_attempt back: a new decision waits
    clock.advance(1.0)
    runtime.dispatch()
    view = runtime.get(job_id)
    assert (view.status, view.retry_count) == ("queued", 1)  # the 4 s floor holds (RT-010)
    clock.advance(3.0)
    runtime.dispatch()
    assert runtime.get(job_id).status == "running"
    runtime.close()


# -- a version-1 child keeps working ----------------------------------------------------------


def test_a_version_1_child_is_spoken_to_in_version_1_for_its_areas() -> None:
    backend = ProcessBackend(command=[*reference_child_command(), "--protocol", "1"])
    assert backend.session.version == 1
    assert backend.capabilities == frozenset({"lifecycle", "retry", "stuck"})
    assert not hasattr(backend, "open_breaker")
    runtime = backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))
    script = TaskScript()
    job_id = runtime.submit(script)
    runtime.dispatch()
    script.decide(cmd.Succeed({"n": 1}))
    runtime.settle()
    assert runtime.get_result(job_id) == {"n": 1}
    runtime.close()


def test_a_run_on_a_version_1_child_reports_the_other_areas_not_claimed(
        tmp_path: Path) -> None:
    command = f"{sys.executable} -m jobconform.backends.process.child --protocol 1"
    run = subprocess.run(
        [sys.executable, "-m", "jobconform.conformance.cli", "run", "--backend", "process",
         "--suite", "hypothesis", "--examples", "3", "--report-dir", str(tmp_path)],
        env={**os.environ, "JOBCONFORM_PROCESS_COMMAND": command}, capture_output=True,
        text=True, timeout=300, check=False)
    # Its exit status is 1 (3 examples leave requirements untested); the verdicts matter.
    assert (tmp_path / "report.json").exists(), run.stdout + run.stderr
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    verdicts = {rid: set(entry["suites"].values())
                for rid, entry in report["requirements"].items()}
    assert verdicts["LC-001"] == {"pass"}
    for rid in ("CB-001", "RP-001", "RD-001", "IK-001", "SC-001", "AD-001", "LP-001",
                "RM-001", "RG-001", "TS-001"):
        assert verdicts[rid] == {"not claimed"}, rid


# -- bad lines, named ---------------------------------------------------------------------------


def test_a_bad_line_from_the_child_mid_session_is_named(tmp_path: Path) -> None:
    # The child answers the handshake and the open, then writes garbage for the submit.
    command = fake_child(tmp_path, "import sys\n" + answer_lines(HELLO, OPENED)
                         + "sys.stdin.readline()\nprint('{\"id\": 3, \"ok\": tru}', flush=True)\n"
                         "sys.stdin.read()\n")
    backend = ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)
    runtime = backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))
    with pytest.raises(MalformedMessage, match=r"(?s)malformed answer to JobRuntime.submit"
                       r" \(line 3 of its stdout\): not a JSON line"
                       r".*the line: \{\"id\": 3, \"ok\": tru\}"):
        runtime.submit(TaskScript())
    assert not backend.session.alive


def test_a_child_names_the_libraries_it_wraps_in_its_hello(tmp_path: Path) -> None:
    # The report's "libraries" for a child: npm's packages are not pip's to look up.
    says = {"id": 1, "ok": True, "result": {**HELLO["result"],  # type: ignore[dict-item]
                                            "libraries": {"p-queue": "8.1.1"}}}
    command = fake_child(tmp_path, "import sys\n" + answer_lines(says) + "sys.stdin.read()\n")
    backend = ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)
    assert backend.libraries == {"p-queue": "8.1.1"}
    backend.session.stop()
    mistyped = {"id": 1, "ok": True, "result": {**HELLO["result"],  # type: ignore[dict-item]
                                                "libraries": {"p-queue": 8}}}
    command = fake_child(tmp_path, "import sys\n" + answer_lines(mistyped)
                         + "sys.stdin.read()\n")
    with pytest.raises(MalformedMessage, match="libraries, an object of version strings"):
        ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)


def test_a_wrong_result_is_named_with_the_field(tmp_path: Path) -> None:
    record = {"id": 3, "ok": True, "result": {"job_id": "a", "status": "queued"}}
    command = fake_child(tmp_path, "import sys\n" + answer_lines(HELLO, OPENED, record)
                         + "sys.stdin.read()\n")
    backend = ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)
    runtime = backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))
    with pytest.raises(MalformedMessage, match=r"the result of JobRuntime.get lacks"
                       r" submitted_at, started_at"):
        runtime.get("a")


def test_a_bad_line_from_the_kit_is_answered_naming_it() -> None:
    lines = [json.dumps({"id": 1, "op": "hello", "args": {"protocol": 2}}),
             json.dumps({"id": 2, "op": "Backend.open", "object": "backend", "now": NOW,
                         "args": {"settings": {"max_concurrent": 1, "max_tasks": None}}}),
             "{not json",
             json.dumps({"id": 4, "op": "JobRuntime.get", "object": "jobruntime-1",
                         "now": NOW, "args": {"job_id": 5}}),
             json.dumps({"id": 5, "op": "JobRuntime.settle", "object": "nope", "now": NOW,
                         "args": {}})]
    answers = io.StringIO()
    Child(MemoryBackend()).serve(io.StringIO("\n".join(lines) + "\n"), answers)
    hello, opened, garbage, mistyped, unknown = (json.loads(line) for line in
                                                 answers.getvalue().splitlines())
    assert hello["result"]["protocol"] == 2
    assert opened["result"] == {"handle": "jobruntime-1"}
    assert garbage["id"] is None and garbage["error"]["type"] == "ProtocolError"
    assert garbage["error"]["message"].startswith("line 3 from the kit is not a request")
    # A scalar of the wrong type is refused by the codec, naming the argument, before the
    # runtime sees it (the same check reads the child's answers).
    assert mistyped["ok"] is False and mistyped["error"]["type"] == "ProtocolError"
    assert mistyped["error"]["message"] == "args.job_id must be a string, not 5"
    assert "no object 'nope'" in unknown["error"]["message"]


def test_a_child_rejecting_a_request_is_reported(validated_session: ChildSession) -> None:
    backend = ProcessBackend(session=validated_session)
    runtime = backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))
    runtime.close()
    with pytest.raises(ChildRejectedRequest, match=r"no object 'jobruntime-.*' here"):
        runtime.list_jobs()


# -- what the task-manager profile needs: interrupting cancel, module ids --------------------


def test_a_cancel_that_interrupts_calls_the_running_body_back(
        validated_session: ChildSession) -> None:
    # LC-026: the child's cancel interrupts the body through the TaskBody.interrupt
    # callback, and the kit's script records it; the body never runs after it.
    backend = ProcessBackend(session=validated_session)
    settings = RuntimeSettings(max_concurrent=1, max_tasks=None, cancel_interrupts=True)
    runtime = backend.open(settings, VirtualClock(EPOCH))
    script = TaskScript(honours_cancellation=False)
    job_id = runtime.submit(script)
    runtime.dispatch()
    assert runtime.get(job_id).status == "running"
    assert runtime.cancel(job_id) is True
    assert script.interrupted
    script.decide(cmd.Succeed("late"))
    runtime.settle()
    assert runtime.get(job_id).status == "cancelled"
    assert script.invocations == 0
    runtime.close()


def test_a_cancel_that_only_requests_sends_no_interrupt(
        validated_session: ChildSession) -> None:
    # Under canonical (cancel_interrupts false) nothing changes: the body that ignores
    # cancellation runs until decided (LC-013), and is never interrupted.
    backend = ProcessBackend(session=validated_session)
    runtime = backend.open(RuntimeSettings(max_concurrent=1, max_tasks=None),
                           VirtualClock(EPOCH))
    script = TaskScript(honours_cancellation=False)
    job_id = runtime.submit(script)
    runtime.dispatch()
    assert runtime.cancel(job_id) is True
    assert not script.interrupted
    script.decide(cmd.Succeed("late"))
    runtime.settle()
    assert not script.interrupted
    assert runtime.get(job_id).status == "cancelled"  # the request wins (LC-014)
    runtime.close()


def test_a_module_id_crosses_and_its_refusals_come_back_as_the_protocols_exceptions(
        validated_session: ChildSession) -> None:
    from jobconform.backends.protocol import InvalidModuleId, ModuleNotFound

    backend = ProcessBackend(session=validated_session)
    settings = RuntimeSettings(max_concurrent=1, max_tasks=None,
                               modules=frozenset({"mail.send"}))
    runtime = backend.open(settings, VirtualClock(EPOCH))
    job_id = runtime.submit(TaskScript(), None, module_id="mail.send")
    assert runtime.get(job_id).status == "queued"
    with pytest.raises(InvalidModuleId):
        runtime.submit(TaskScript(), None, module_id="Data..batch")
    with pytest.raises(ModuleNotFound):
        runtime.submit(TaskScript(), None, module_id="billing.charge_card")
    assert [job.job_id for job in runtime.list_jobs(None)] == [job_id]  # no record left
    runtime.close()


def test_a_module_id_travels_only_when_given(tmp_path: Path) -> None:
    # A child that predates module ids never receives one: the kit leaves the argument
    # out unless a check of LC-027 names a module. This child answers each submit with
    # the names of the arguments it received.
    command = fake_child(tmp_path, "import json, sys\n" + answer_lines(HELLO, OPENED)
                         + "for line in iter(sys.stdin.readline, ''):\n"
                         "    request = json.loads(line)\n"
                         "    names = ','.join(sorted(request['args']))\n"
                         "    print(json.dumps({'id': request['id'], 'ok': True,"
                         " 'result': names}), flush=True)\n")
    backend = ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)
    runtime = backend.open(RuntimeSettings(1, None), VirtualClock(EPOCH))
    assert runtime.submit(TaskScript()) == "retry,script"
    assert runtime.submit(TaskScript(), RetryPolicy(max_retries=1)) == "retry,script"
    assert runtime.submit(TaskScript(), None, module_id="mail.send") == "module_id,retry,script"
    backend.session.close()


def test_the_schema_leaves_a_later_argument_optional_and_knows_the_new_callback() -> None:
    document = {"id": 3, "op": "JobRuntime.submit", "object": "jobruntime-1", "now": NOW,
                "args": {"script": {"handle": "kit-taskbody-1",
                                    "honours_cancellation": True}, "retry": None}}
    assert v2_problem(document, "request") is None  # a version-2 request as it always was
    assert v2_problem({**document, "args": {**document["args"], "module_id": "mail.send"}},
                      "request") is None
    assert "interrupt" in methods(KIT_INTERFACES[0])
    callback = {"callback": 1, "op": "TaskBody.interrupt", "object": "kit-taskbody-1",
                "args": {}}
    assert v2_problem(callback, "callback") is None


def test_the_lifecycle_machine_passes_through_the_pipe_under_task_manager(
        validated_session: ChildSession, registry: Registry) -> None:
    # The interrupting cancel and the module ids cross with every line valid, and the
    # machine exercises both requirements through the pipe. The lifecycle machine alone,
    # not the volume machine run_lifecycle_machine runs after it: its 300 jobs and
    # 70 000-character texts were four fifths of this test's time, and they cross the pipe
    # in the same messages under canonical, validated in the area's test above.
    from jobconform.conformance.lifecycle.machine import checks_once_per_run, make_machine
    from jobconform.conformance.machine_runner import run_machine

    backend = ProcessBackend(session=validated_session)
    task_manager = registry.profile("task-manager")
    run = run_machine(make_machine, backend, task_manager, registry, seed=1, examples=8,
                      once=partial(checks_once_per_run, backend, task_manager, registry))
    assert run.divergence is None
    assert {"LC-026", "LC-027"} <= run.exercised


def test_a_child_that_never_interrupts_the_body_is_caught_by_lc_026(
        tmp_path: Path, registry: Registry) -> None:
    # The child's runtime calls interrupt, but its server swallows the callback: the kit's
    # body is never told, and the machine names LC-026.
    command = fake_child(tmp_path, "import sys\n"
                         "from jobconform.backends.process.child import main\n"
                         "from jobconform.backends.process.server import ObjectServer\n"
                         "class Swallowing(ObjectServer):\n"
                         "    def call_kit(self, handle, method, args, kwargs):\n"
                         "        if method.op == 'TaskBody.interrupt':\n"
                         "            return None\n"
                         "        return super().call_kit(handle, method, args, kwargs)\n"
                         "sys.exit(main([], object_server_type=Swallowing))\n")
    area = next(a for a in BUILTIN_AREAS if a.name == "lifecycle")
    backend = ProcessBackend(command=command, timeout_seconds=SAFETY_SECONDS)
    run = load_attribute(area.machine.run)(backend, registry.profile("task-manager"),
                                           registry, seed=0, examples=30)
    backend.session.close()
    assert run.divergence is not None
    assert run.divergence.requirements[0] == "LC-026"


# -- capabilities carried beside the areas (issue #35) -----------------------------------------


def test_the_health_report_carries_the_worker_and_its_last_heartbeat(
        validated_session: ChildSession) -> None:
    # LC-029, ST-005: version 2's health answer is a HealthRecord, with the worker's id,
    # status and last heartbeat beside the six counts, so the child claims health-report.
    from datetime import timedelta

    backend = ProcessBackend(session=validated_session)
    assert "health-report" in backend.capabilities
    clock = VirtualClock(EPOCH)
    runtime = backend.open(RuntimeSettings(max_concurrent=1, max_tasks=None), clock)
    first = runtime.health()
    assert isinstance(first.worker_id, str) and first.worker_id
    assert first.status == "running" and first.last_heartbeat is None
    job_id = runtime.submit(TaskScript())
    runtime.dispatch()
    clock.advance(5)
    runtime.heartbeat(job_id)
    report = runtime.health()
    assert report.running == 1 and report.worker_id == first.worker_id
    assert report.last_heartbeat == EPOCH + timedelta(seconds=5)
    assert report.last_heartbeat.utcoffset() == timedelta(0)
    runtime.shutdown()
    assert runtime.health().status in ("stopping", "stopped")
    runtime.close()


def test_a_child_that_predates_the_worker_fields_answers_six_counts(tmp_path: Path) -> None:
    # The three fields came later: a child that leaves them out is read as null, and the
    # schema does not require them, so such a child keeps working where it does not claim
    # health-report.
    counts = {"queued": 0, "running": 0, "total": 0, "processed": 0, "failed": 0,
              "cancelled": 0}
    source = "import sys\n" + answer_lines(HELLO, OPENED, {"id": 3, "ok": True,
                                                            "result": counts})
    backend = ProcessBackend(command=fake_child(tmp_path, source),
                             timeout_seconds=SAFETY_SECONDS)
    try:
        assert "health-report" not in backend.capabilities
        runtime = backend.open(RuntimeSettings(max_concurrent=1, max_tasks=None),
                               VirtualClock(EPOCH))
        report = runtime.health()
        assert (report.total, report.worker_id, report.status, report.last_heartbeat) == (
            0, None, None, None)
    finally:
        backend.session.close()


def test_submissions_made_at_once_travel_as_one_batch(
        validated_session: ChildSession) -> None:
    # LC-030: the kit's threads would queue on the one pipe, so the batch travels in one
    # submit_concurrently message and the child submits it at once; each answer is the
    # job's id, or what its submit raised, in the order of the scripts.
    backend = ProcessBackend(session=validated_session)
    assert "concurrent-submit" in backend.capabilities
    runtime = backend.open(RuntimeSettings(max_concurrent=1, max_tasks=4),
                           VirtualClock(EPOCH))
    held = runtime.submit(TaskScript())
    answers = runtime.submit_concurrently([TaskScript() for _ in range(3)])
    ids = [answer.job_id for answer in answers]
    assert all(isinstance(job_id, str) for job_id in ids)
    assert len({held, *ids}) == 4
    assert sorted(job.job_id for job in runtime.list_jobs(None)) == sorted([held, *ids])
    # A batch over the cap: each refusal crosses with its exception's name.
    refused = runtime.submit_concurrently([TaskScript(), TaskScript()])
    assert [answer.error_type for answer in refused] == ["CapacityExceeded"] * 2
    assert all(answer.job_id is None for answer in refused)
    runtime.close()


def test_the_child_calls_submit_from_a_thread_each_released_together() -> None:
    # The reference child's answer to submit_concurrently: one thread per script, released
    # together by a barrier, so a runtime that is not thread-safe is met by real threads.
    # The fake runtime's own barrier only opens if every submit is in flight at once.
    import threading

    from jobconform.backends.process.server import ObjectServer

    count = 4
    all_in_flight = threading.Barrier(count, timeout=SAFETY_SECONDS)
    threads: list[str] = []

    class Runtime:
        def submit(self, script: TaskScript) -> str:
            threads.append(threading.current_thread().name)
            all_in_flight.wait()
            return f"job-{len(threads)}-{threading.current_thread().name}"

    server = ObjectServer(MemoryBackend(), frozenset({"lifecycle", "concurrent-submit"}),
                          io.StringIO(), io.StringIO())
    answers = server.submit_concurrently(Runtime(), [TaskScript() for _ in range(count)])
    assert len(set(threads)) == count
    assert len({answer.job_id for answer in answers}) == count


def test_the_audit_sink_travels_and_hears_every_replay(
        validated_session: ChildSession) -> None:
    # IK-017: open_idempotency carries the kit's audit sink as a later argument (a handle
    # of the kit's IdempotencyAudit); the child calls it back once per replay.
    from jobconform.backends.idempotency.protocol import IdempotencyConfig
    from jobconform.conformance.sinks import ReplayAudit

    backend = ProcessBackend(session=validated_session)
    assert "audit-events" in backend.capabilities
    audit = ReplayAudit()
    config = IdempotencyConfig(86400.0, 422, 300.0)
    runtime = backend.open_idempotency(VirtualClock(EPOCH), config, audit)
    first = runtime.claim("api", "key-1", {"n": 1})
    assert first.kind is ClaimKind.STARTED and first.token is not None
    assert runtime.complete(first.token, cmd.Succeed("done"))
    assert audit.events() == []  # a started claim is not a replay
    replay = runtime.claim("api", "key-1", {"n": 1})
    assert replay.kind is ClaimKind.REPLAY
    assert audit.events() == [("api", "key-1", first.token)]
    runtime.close()


def test_an_idempotency_runtime_is_opened_without_a_sink_unless_one_is_given(
        tmp_path: Path) -> None:
    # The sink is a later argument: the kit sends it only when the harness gives one, so a
    # child that does not claim audit-events never receives it.
    from jobconform.backends.idempotency.protocol import IdempotencyConfig

    hello = {**HELLO, "result": {**HELLO["result"], "capabilities": ["idempotency"]}}
    log = tmp_path / "requests.jsonl"
    source = ("import sys\n"
              f"log = open({str(log)!r}, 'w')\n"
              "for answer in [{hello!r}, {opened!r}]:\n"
              "    log.write(sys.stdin.readline()); log.flush()\n"
              "    print(answer, flush=True)\n").format(
        hello=json.dumps(hello),
        opened=json.dumps({"id": 2, "ok": True, "result": {"handle": "idempotencyruntime-1"}}))
    backend = ProcessBackend(command=fake_child(tmp_path, source),
                             timeout_seconds=SAFETY_SECONDS)
    try:
        assert "audit-events" not in backend.capabilities
        backend.open_idempotency(VirtualClock(EPOCH), IdempotencyConfig(86400.0, 422, 300.0))
        request = json.loads(log.read_text(encoding="utf-8").splitlines()[1])
        assert request["op"] == "Backend.open_idempotency"
        assert set(request["args"]) == {"config"}
    finally:
        backend.session.close()


def test_the_loop_event_sink_travels_and_reads_the_loop_back_within_its_callback(
        validated_session: ChildSession) -> None:
    # LP-019: open_loops carries the kit's event sink; the child calls it back after the
    # run's record is written, and the sink reads the loop back (get_loop) before it
    # replies: a request within the callback, which the child answers first.
    from jobconform.backends.loops.protocol import LoopAgent, LoopParameters, LoopsConfig
    from jobconform.conformance.sinks import LoopEventLog
    from jobconform.reference.loops.oracle import Respond

    backend = ProcessBackend(session=validated_session)
    assert "loop-events" in backend.capabilities
    events = LoopEventLog()
    runtime = backend.open_loops(VirtualClock(EPOCH), LoopsConfig(300.0), events)
    events.read = runtime.get_loop
    agent = LoopAgent()
    loop_id = runtime.start_loop(LoopParameters("go", 1), agent)
    agent.decide(1, Respond("done", 0.5))
    runtime.settle()
    kinds = [(event.kind, event.loop_id, event.seen) for event in events.events()]
    assert kinds == [("loop_run_completed", loop_id, ("succeeded",)),
                     ("loop_completed", loop_id, ("completed", "max_runs_reached"))]
    assert events.events()[0].values[0] == 1 and events.events()[0].values[2] == 0.5
    runtime.close()


def test_store_faults_travel_and_come_back_as_the_protocols_exceptions(
        validated_session: ChildSession) -> None:
    # RD-007, RP-008, IK-015, RM-014: the kit arms a plan on the child's runtime with
    # inject_store_fault; a failed write answers StoreWriteFailed (a StoreUnavailable), a
    # crash ProcessCrashed, and the child lives on to serve the area's restart. Only the
    # child sees its store's writes, so it answers store_fault_struck.
    from jobconform.backends.faults import ProcessCrashed, StoreWriteFailed
    from jobconform.backends.idempotency.protocol import IdempotencyConfig
    from jobconform.backends.protocol import StoreUnavailable
    from jobconform.backends.reminders.protocol import ReminderConfig
    from jobconform.conformance.reminders.harness import HarnessTarget
    from jobconform.reference.faults import FaultKind, StoreFault

    backend = ProcessBackend(session=validated_session)
    clock = VirtualClock(EPOCH)
    keys = backend.open_idempotency(clock, IdempotencyConfig(86400.0, 422, 300.0))
    keys.inject_store_fault(StoreFault(FaultKind.FAIL, 1))
    with pytest.raises(StoreWriteFailed) as failed:
        keys.claim("api", "key-1", {"n": 1})
    assert isinstance(failed.value, StoreUnavailable)
    assert keys.store_fault_struck() is True
    keys.inject_store_fault(None)
    assert keys.claim("api", "key-1", {"n": 1}).kind is ClaimKind.STARTED  # nothing held
    keys.close()

    reminders = backend.open_reminders(clock, ReminderConfig(), HarnessTarget())
    reminders.inject_store_fault(StoreFault(FaultKind.CRASH, 1))
    with pytest.raises(ProcessCrashed):
        reminders.create("hello", delay_seconds=120.0)
    assert reminders.store_fault_struck() is True
    reminders.inject_store_fault(None)
    reminders.crash()
    reopened = reminders.reopen()
    assert list(reopened.list_reminders(None)) == []  # the crash came before the write
    assert validated_session.alive
    reopened.close()
