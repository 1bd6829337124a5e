"""What every watch of a self-running check shares: the harness's backend, profile and
clock, and its three hooks (a divergence, a guarded adapter call, the requirements
exercised). A watch keeps one service the runtime runs by itself (its scheduler, its
breaker's backstop, its reminders) against the oracle, reading before and at each
boundary; the harness builds one per service."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jobconform.backends.protocol import Backend, Clock
from jobconform.conformance.harness import AdapterError, Divergence
from jobconform.spec import Profile, Registry, SpecError

# Builds the harness's Divergence from (requirements, what, expected, actual).
FailHook = Callable[[tuple[str, ...], str, object, object], Divergence]
# Runs an adapter call, named, under the harness's safety limit.
CallHook = Callable[[str, Callable[[], Any]], Any]


class HarnessWatch:
    """The harness's parts a watch reads and reports through.

    Args:
        backend, profile, clock: the harness's; the watched service is opened over the
            same clock as the job runtime.
        fail: builds the harness's Divergence from (requirements, what, expected, actual).
        call: runs an adapter call under the harness's safety limit.
        exercised: the harness's set of requirements exercised.
    """

    def __init__(self, backend: Backend, profile: Profile, clock: Clock, fail: FailHook,
                 call: CallHook, exercised: set[str]) -> None:
        self.backend, self.profile, self.clock = backend, profile, clock
        self._fail, self._call, self._exercised = fail, call, exercised

    def _opener(self, name: str, area: str, arguments: str) -> Any:
        """The backend's opener of the watched service, `name(arguments)`.

        Raises:
            AdapterError: the backend claims `area` but has no such opener.
        """
        opener: Any = getattr(self.backend, name, None)
        if not callable(opener):
            raise AdapterError(f"adapter {self.backend.name!r} claims {area} but has no"
                               f" {name}({arguments})")
        return opener


def service_watched(backend: Backend, profile: Profile, registry: Registry | None,
                    capability: str, area: str, requirement: str,
                    parameter_of: Callable[[Profile], float]) -> bool:
    """Whether a watch's requirement applies: the backend claims `capability`, the profile
    has `area` and the requirement (or, without a registry, the watch's parameter, which
    `parameter_of` reads and which raises SpecError when the profile sets none)."""
    if capability not in frozenset(backend.capabilities) or area not in profile.areas:
        return False
    try:
        if registry is not None:
            return profile.name in registry.requirement(requirement).profiles
        parameter_of(profile)
    except SpecError:
        return False
    return True
