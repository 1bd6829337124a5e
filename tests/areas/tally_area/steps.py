"""Behave steps of the tally area (features/tally.feature beside this module)."""

from typing import Any

from behave import then, when

from jobconform.conformance import scenario as core
from tally_area.harness import TallyHarness


def _tally(context: Any) -> TallyHarness:
    state = core.state_of(context)
    if "tally" not in state.areas:
        state.areas["tally"] = TallyHarness(state.config.backend, state.config.registry)
    return state.areas["tally"]  # type: ignore[no-any-return]


@when("the tally is incremented {times:d} times")
def increment(context: Any, times: int) -> None:
    for _ in range(times):
        _tally(context).run("increment")


@when("the tally is reset")
def reset(context: Any) -> None:
    _tally(context).run("reset")


@then("the tally reads {value:d}")
def reads(context: Any, value: int) -> None:
    actual = _tally(context).tally.value()
    assert actual == value, f"the tally reads {actual}, expected {value}"
