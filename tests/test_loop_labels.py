"""Loop runs' execution labels (LP-020, capability `loop-labels`): each run's execution
says a loop triggered it and names the loop; without the claim the agent is called as
before and LP-020 is not claimed."""

from __future__ import annotations

from jobconform.backends.loops.protocol import LoopAgent, Respond
from jobconform.backends.memory import MemoryBackend
from jobconform.backends.process.backend import carried_capabilities
from jobconform.backends.protocol import LOOP_LABELS
from jobconform.conformance.applicability import skip_reason
from jobconform.spec import load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")


class WithoutLoopLabels(MemoryBackend):
    """The memory backend not claiming loop-labels, as a runtime written before it."""

    name = "without-loop-labels"
    capabilities = MemoryBackend.capabilities - {LOOP_LABELS}


def test_the_agent_keeps_the_labels_of_a_runs_first_execution() -> None:
    agent = LoopAgent()
    agent.decide(1, Respond("one"))
    agent.decide(2, Respond("two"))
    agent.execute(1, "go", "loop", "L1")
    agent.execute(1, "go")  # a second call of the same run keeps the first's labels
    agent.execute(2, "go")  # a caller that passes none, as before the capability
    assert agent.labels == {1: ("loop", "L1"), 2: (None, None)}


def test_without_the_claim_lp020_is_not_claimed() -> None:
    backend = WithoutLoopLabels()
    reason = skip_reason(REGISTRY, backend, CANONICAL, ["LP-020"])
    assert reason is not None and LOOP_LABELS in reason
    assert skip_reason(REGISTRY, backend, CANONICAL, ["LP-002"]) is None


def test_the_process_protocol_carries_the_claim() -> None:
    assert LOOP_LABELS in carried_capabilities(2)
    assert LOOP_LABELS not in carried_capabilities(1)  # no loops in version 1
