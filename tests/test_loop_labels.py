"""Loop runs' execution labels (LP-020, capability `loop-labels`): each run's execution
says a loop triggered it and names the loop; without the claim the agent is called as
before and LP-020 is not claimed."""

from __future__ import annotations

from optional_claims import assert_carried_from_version_2, assert_not_claimed, memory_without

from jobconform.backends.loops.protocol import LoopAgent, Respond
from jobconform.backends.protocol import LOOP_LABELS


def test_the_agent_keeps_the_labels_of_a_runs_first_execution() -> None:
    agent = LoopAgent()
    agent.decide(1, Respond("one"))
    agent.decide(2, Respond("two"))
    agent.execute(1, "go", "loop", "L1")
    agent.execute(1, "go")  # a second call of the same run keeps the first's labels
    agent.execute(2, "go")  # a caller that passes none, as before the capability
    assert agent.labels == {1: ("loop", "L1"), 2: (None, None)}


def test_without_the_claim_lp020_is_not_claimed() -> None:
    assert_not_claimed(memory_without(LOOP_LABELS), LOOP_LABELS, ["LP-020"], "LP-002")


def test_the_process_protocol_carries_the_claim() -> None:
    assert_carried_from_version_2(LOOP_LABELS)
