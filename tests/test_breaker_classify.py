"""The classing of a failed call's raw end (CB-016, CB-017): the oracle's rule, the shipped
classifier's agreement with it, and the harness naming the classifier's requirements."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from jobconform.backends.breaker.classify import failure_class_of
from jobconform.backends.loading import load_backend
from jobconform.backends.memory import MemoryBackend
from jobconform.conformance.breaker.gallery import GALLERY
from jobconform.conformance.breaker.harness import BreakerHarness
from jobconform.conformance.breaker.machine import raw_ends
from jobconform.conformance.harness import Divergence
from jobconform.reference.breaker import commands as bc
from jobconform.reference.breaker.classify import RawEnd, classify_end, killed
from jobconform.spec import load_registry


@pytest.mark.parametrize("end", [
    RawEnd(signal="SIGKILL"),
    RawEnd(signal="SIGTERM", error_text="Authentication failed"),
    RawEnd(exit_code=137),  # an OOM kill, as a container runtime reports it
    RawEnd(exit_code=-9, output=True),
    RawEnd(exit_code=130),
    RawEnd(exit_code=1, error_text="OOM kill: authentication failed"),
    RawEnd(exit_code=1, error_text="request TIMED OUT after 600 s (401 retries)"),
])
def test_a_kill_is_a_timeout_never_auth(end: RawEnd) -> None:
    assert killed(end)
    assert classify_end(end) == "timeout"


@pytest.mark.parametrize(("end", "wanted"), [
    (RawEnd(exit_code=1), "agent_error"),  # the zero-output fallback is no auth failure
    (RawEnd(exit_code=1, error_text="possible authentication issue"), "agent_error"),
    (RawEnd(signal="SIGHUP", exit_code=129), "agent_error"),  # not one of the seed's kills
    (RawEnd(exit_code=1, error_text="Authentication failed"), "auth"),
    (RawEnd(exit_code=1, output=True, error_text="HTTP 401 Unauthorized"), "auth"),
    (RawEnd(error_text="subscription token expired or revoked"), "auth"),
    (RawEnd(exit_code=1, error_text="exit 14010"), "agent_error"),  # 401 as a whole word only
    (RawEnd(exit_code=1, error_text="the room was full"), "agent_error"),  # OOM as a word only
])
def test_only_a_confirmed_auth_message_is_auth(end: RawEnd, wanted: str) -> None:
    assert classify_end(end) == wanted


@given(raw_ends)
def test_the_shipped_classifier_agrees_with_the_oracle(
        end: tuple[str | None, int | None, bool, str]) -> None:
    assert failure_class_of(*end) == classify_end(RawEnd(*end))


@given(st.sampled_from(("SIGKILL", "SIGTERM", "SIGINT")), st.integers(-20, 300),
       st.booleans(), st.text(max_size=40))
def test_a_signal_kill_is_never_auth_whatever_else_the_end_says(
        signal: str, exit_code: int, output: bool, text: str) -> None:
    assert classify_end(RawEnd(signal, exit_code, output, text)) == "timeout"


def test_the_harness_names_cb016_and_cb017_as_primaries() -> None:
    registry = load_registry()
    entries = {entry.name: entry for entry in GALLERY}
    for name, end, primary in (
            ("breaker_kill_classed_auth", bc.CallEndsRaw("a", "c", exit_code=137), "CB-016"),
            ("breaker_auth_indicator_first",
             bc.CallEndsRaw("a", "c", exit_code=1, error_text="OOM: Unauthorized"), "CB-016"),
            ("breaker_silence_classed_auth", bc.CallEndsRaw("a", "c", exit_code=1),
             "CB-017")):
        harness = BreakerHarness(load_backend(entries[name].target),
                                 registry.profile("canonical"), registry)
        for command in (bc.SwitchBreaker(True), bc.OptIn("a"), bc.Call("a", "c")):
            harness.run(command)
        with pytest.raises(Divergence) as caught:
            harness.run(end)
        assert caught.value.primary == primary, name
        harness.close()


def test_a_raw_end_is_classed_also_when_the_breaker_is_not_engaged() -> None:
    registry = load_registry()
    harness = BreakerHarness(MemoryBackend(), registry.profile("canonical"), registry)
    assert harness.run(bc.CallEndsRaw("a", "c", "SIGKILL")) == "timeout"
    assert harness.run(bc.CallEndsRaw("a", "d", None, 1, False, "Unauthorized")) == "auth"
    harness.close()
