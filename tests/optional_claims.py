"""An optional capability left unclaimed: the memory backend without it, and the checks
each optional capability's tests make (its requirements are not claimed without it; the
process protocol carries it from version 2 on)."""

from __future__ import annotations

from collections.abc import Iterable

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.process.backend import carried_capabilities
from jobconform.conformance.applicability import skip_reason
from jobconform.spec import load_registry

REGISTRY = load_registry()
CANONICAL = REGISTRY.profile("canonical")


def memory_without(*left_out: str) -> MemoryBackend:
    """The memory backend not claiming the capabilities `left_out`, as a runtime written
    before them."""

    class MemoryWithout(MemoryBackend):
        name = "memory-without-" + "-".join(left_out)
        capabilities = MemoryBackend.capabilities - frozenset(left_out)

    return MemoryWithout()


def assert_not_claimed(backend: MemoryBackend, capability: str, requirements: Iterable[str],
                       still_claimed: str) -> None:
    """Each of `requirements` is skipped on `backend` for want of `capability`, while
    `still_claimed`, a requirement of the same area that needs no more, is not."""
    for requirement in requirements:
        reason = skip_reason(REGISTRY, backend, CANONICAL, [requirement])
        assert reason is not None and capability in reason, (requirement, reason)
    assert skip_reason(REGISTRY, backend, CANONICAL, [still_claimed]) is None


def assert_carried_from_version_2(*capabilities: str) -> None:
    """The process protocol carries the claims from version 2; version 1 had none of
    their areas."""
    assert set(capabilities) <= carried_capabilities(2)
    assert not set(capabilities) & carried_capabilities(1)
