"""A job's arguments (LC-036) and queued execution off (LC-037): the oracle's comparison,
the harness's guards, and traces of a runtime with the switch off."""

from __future__ import annotations

import json
from contextlib import closing

import pytest

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import JOB_ARGUMENTS, QUEUED_EXECUTION_SWITCH
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.harness import Divergence, Harness
from jobconform.conformance.lifecycle import gallery
from jobconform.conformance.trace import Trace, parse_trace, replay, to_gherkin
from jobconform.reference import commands as cmd
from jobconform.reference.lifecycle import arguments_text
from jobconform.reference.model import ReferenceModel
from jobconform.spec import load_registry
from jobconform.spec.runtime_settings import RuntimeSettings

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")


def test_arguments_compare_by_type_digit_and_code_point_but_not_key_order() -> None:
    assert arguments_text({"a": 1, "b": [True]}) == arguments_text({"b": [True], "a": 1})
    assert arguments_text(1) != arguments_text(1.0)
    assert arguments_text(1) != arguments_text(True)
    assert arguments_text(-0.0) != arguments_text(0.0)
    assert arguments_text(2**53 + 1) != arguments_text(2**53)
    assert arguments_text("\u00e9") != arguments_text("e\u0301")  # no normalisation
    with pytest.raises(ValueError):
        arguments_text(float("nan"))


class WithoutTheCapabilities(MemoryBackend):
    name = "memory-without-arguments"
    capabilities = MemoryBackend.capabilities - {JOB_ARGUMENTS, QUEUED_EXECUTION_SWITCH}


def test_a_backend_without_the_capabilities_is_given_no_arguments_and_no_switch() -> None:
    with pytest.raises(ValueError, match="does not claim queued-execution-switch"):
        Harness(WithoutTheCapabilities(), CANONICAL, REGISTRY, queued_execution=False)
    with (closing(Harness(WithoutTheCapabilities(), CANONICAL, REGISTRY)) as harness,
          pytest.raises(ValueError, match="does not claim job-arguments")):
        harness.run(cmd.Submit("a", arguments={"x": 1}))


def test_with_queued_execution_off_the_oracle_needs_the_body_decided() -> None:
    model = ReferenceModel(RuntimeSettings(2, 4, queued_execution=False), EPOCH)
    with pytest.raises(ValueError, match="decide it in the Submit command"):
        model.apply(cmd.Submit("a"))
    answer = model.apply(cmd.Submit("b", outcome=cmd.Succeed(1)))
    assert answer.answer == cmd.ACCEPTED and "LC-037" in answer.requirements
    assert model.jobs["b"].result == 1 and model.processed == 1


def test_a_runtime_that_queues_anyway_is_lc_037_straight_after_submit() -> None:
    with closing(Harness(gallery.queued_anyway(), CANONICAL, REGISTRY,
                         queued_execution=False)) as harness, pytest.raises(Divergence) as caught:
        harness.run(cmd.Submit("a", outcome=cmd.Succeed(1)))
    assert caught.value.primary == "LC-037"


def test_a_trace_found_with_queued_execution_off_replays_so() -> None:
    commands = (cmd.Submit("a", arguments={"n": 2**63 - 1}, outcome=cmd.Succeed(1)),
                cmd.Cancel("a"))
    trace = Trace("memory", "canonical", REGISTRY.version, "lifecycle machine", 0, 2, 4,
                  ("LC-037",), "job 'a' status", "'succeeded'", "'queued'", commands,
                  queued_execution=False)
    document = json.loads(json.dumps(trace.to_json()))
    assert document["limits"]["queued_execution"] is False
    read = parse_trace(document, "a test")
    assert read == trace
    assert replay(read, MemoryBackend(), CANONICAL, REGISTRY).agreed
    assert replay(read, gallery.queued_anyway(), CANONICAL, REGISTRY).divergence is not None
    feature = to_gherkin(read, "t")
    assert "Given a runtime with queued execution off and a task cap of 4" in feature
    # A submission with arguments or a decided body has no plain step: it is replayed as
    # recorded, so nothing of it is lost.
    assert "the recorded command" in feature
