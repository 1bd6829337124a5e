"""Broken backends with several known deviations, for proving the expected-failures file.

`two_deviations` adds jitter after the cap (RT-009's trap) and treats the stuck-detection
boundary as inclusive (ST-003's). Its deviation list, `two_deviations.yaml` beside this
module, names the requirements the kit blames for them; a run with it reports exactly
those as expected failures and passes. The same run fails when the list leaves a
deviation out, or names a requirement the spec does not have (tests/test_expectations.py).

It is not in the self-test gallery: the gallery holds one bug class per backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from jobconform.backends.admission.memory import InMemoryAdmissionStore
from jobconform.backends.admission.runtime import AdmissionService
from jobconform.backends.breaker.memory import InMemoryBreakerStore
from jobconform.backends.breaker.protocol import BREAKER
from jobconform.backends.breaker.runtime import BreakerDeployment, StoreBreakerRuntime
from jobconform.backends.idempotency.memory import MemoryKeyStore
from jobconform.backends.idempotency.protocol import (
    Claim,
    ClaimKind,
    IdempotencyAudit,
    IdempotencyConfig,
)
from jobconform.backends.idempotency.service import IdempotencyService
from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import (
    ADMISSION,
    IDEMPOTENCY,
    LIFECYCLE,
    REAPER,
    RETRY,
    STUCK,
    Clock,
    JobView,
    RuntimeSettings,
)
from jobconform.conformance.admission.gallery import NewestFirstDrainService
from jobconform.conformance.breaker.gallery import TimeoutCountedRuntime
from jobconform.conformance.lifecycle.gallery import (
    CancelAlwaysTrueRuntime,
    JitterAfterCapRuntime,
    StuckInclusiveBoundaryRuntime,
)
from jobconform.reference.admission import AdmissionConfig
from jobconform.reference.breaker.oracle import BreakerSettings

DEVIATIONS_FILE = Path(__file__).with_name("two_deviations.yaml")
TWO_DEVIATIONS = f"{__name__}:two_deviations"


def _memory_backend(name: str, runtime: type[MemoryRuntime],
                    capabilities: frozenset[str]) -> type[MemoryBackend]:
    """The memory backend `name`, claiming only `capabilities`, whose job runtime is
    `runtime`."""

    def open_runtime(self: MemoryBackend, settings: RuntimeSettings,
                     clock: Clock) -> MemoryRuntime:
        return runtime(settings, clock)

    return type(name, (MemoryBackend,), {"name": name, "capabilities": capabilities,
                                         "open": open_runtime})


class TwoDeviationsRuntime(JitterAfterCapRuntime, StuckInclusiveBoundaryRuntime):
    """Both bugs at once: they live in different methods, so they do not interfere."""


# The areas its deviation list speaks for. The inclusive boundary also shows in the
# re-delivery lease pass, which shares the predicate; claiming that area would add
# deviations this example does not mean to list.
two_deviations = _memory_backend("gallery.two_deviations", TwoDeviationsRuntime,
                                 frozenset({LIFECYCLE, RETRY, STUCK}))


# -- three independent deviations in three areas (issue 15's proof) -------------------------

THREE_DEVIATIONS_FILE = Path(__file__).with_name("three_deviations.yaml")
THREE_DEVIATIONS = f"{__name__}:three_deviations"


class ThreeDeviationsRuntime(JitterAfterCapRuntime, CancelAlwaysTrueRuntime):
    """Jitter added after the cap (retry, RT-009), cancel answering true for a finished job
    (lifecycle, LC-015), and `list_expired` taking its boundary as inclusive (reaper,
    RP-003). Each changes only an answer, never the runtime's state, so each is caught by
    its own requirement and none of them hides another."""

    def list_expired(self, before: datetime) -> Sequence[JobView]:
        # One microsecond later under the strict `<` is `<=` at the datetimes' resolution.
        return super().list_expired(before + timedelta(microseconds=1))


three_deviations = _memory_backend("gallery.three_deviations", ThreeDeviationsRuntime,
                                   frozenset({LIFECYCLE, RETRY, REAPER}))


# -- independent deviations in three service areas (issue 15, tolerant service harnesses) ---

SERVICE_DEVIATIONS_FILE = Path(__file__).with_name("service_deviations.yaml")
SERVICE_DEVIATIONS = f"{__name__}:service_deviations"


class MismatchAs400Service(IdempotencyService):
    """A key reused with another payload is refused with 400, whatever mismatch status
    the profile sets (IK-006); the key's record is left as it was."""

    def _claim(self, scope: str, key: str, fingerprint: str) -> Claim:
        claim = super()._claim(scope, key, fingerprint)
        if claim.kind is ClaimKind.MISMATCH:
            return replace(claim, status=400)
        return claim


class ServiceDeviationsBackend(MemoryBackend):
    """Three service areas, one deviation each: the breaker counts a timeout as a failure
    (CB-003), a freed admission slot goes to the newest queued work (AD-006), and a
    payload mismatch answers 400 (IK-006). The first two change state, so the harnesses
    must adopt the backend's state to go on without blaming the next step on another
    requirement."""

    name = "gallery.service_deviations"
    capabilities = frozenset({BREAKER, ADMISSION, IDEMPOTENCY})

    def open_breaker(self, clock: Clock, settings: BreakerSettings) -> StoreBreakerRuntime:
        return TimeoutCountedRuntime(InMemoryBreakerStore(), clock, settings,
                                     BreakerDeployment())

    def open_admission(self, clock: Clock, config: AdmissionConfig) -> AdmissionService:
        return NewestFirstDrainService(InMemoryAdmissionStore(), clock, config)

    def open_idempotency(self, clock: Clock, config: IdempotencyConfig,
                         audit: IdempotencyAudit | None = None) -> IdempotencyService:
        return MismatchAs400Service(MemoryKeyStore(), clock, config, audit)


service_deviations = ServiceDeviationsBackend
