"""The adapter protocol of the `governor` area: the re-delivery governor.

A backend that claims the area has a method `open_governor(clock, settings)` returning a
fresh, empty `GovernorRuntime` per check (`settings` is a
`jobconform.reference.governor.oracle.GovernorSettings` from the profile). Targets, results and
deliveries are strings the harness picks. The governor reads time only from its clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol, runtime_checkable

from jobconform.backends.protocol import Clock
from jobconform.reference.governor.oracle import GovernorSettings

GOVERNOR = "governor"


class GovernorDecision(Protocol):
    @property
    def accepted(self) -> bool: ...
    @property
    def retry_after_seconds(self) -> float | None: ...  # set on a (retryable) refusal


class GovernorRuntime(Protocol):
    def redelivery_wait_ms(self, previous_ms: float | None, draw: float,
                           retry_after_ms: float | None) -> float:
        """The wait before the next re-delivery (RG-001); `draw` is a uniform draw in
        [0, 1) the harness supplies, `previous_ms` the last wait (None: the first)."""
        ...

    def offer(self, target: str) -> GovernorDecision:
        """A re-delivery for `target` asks to go out now: accepted (and counted against
        the caps) or refused with a retry-after (RG-002 to RG-005). Never drops it."""
        ...

    def record_failure(self, target: str, failure_class: str, result_id: str) -> None:
        """A terminal failure result of `target` (RG-005 to RG-007)."""
        ...

    def record_rate_limited(self, target: str, result_id: str) -> None:
        """A terminal result of `target` that the agent answered with HTTP 429 (rate
        limited): recorded as a failure of class billing (RG-010)."""
        ...

    def record_raw_end(self, target: str, result_id: str, signal: str | None,
                       exit_code: int | None, output: bool, error_text: str) -> None:
        """A terminal failure result of `target` given as its raw end (as the breaker's
        `record_end` takes it): the governor classes it by the same rules (a kill by
        signal, exit code or marker is "timeout", never "auth"; only a confirmed auth
        message is "auth"; else "agent_error") and records it as `record_failure` does,
        so no kill ever arms the pause (RG-014)."""
        ...

    def paused_until(self) -> datetime | None:
        """The end of the running shared-cause pause (UTC), or None."""
        ...

    def restart(self, draw: float) -> None:
        """This governor's process restarts with re-sends pending (RG-009): its first
        re-send sweep is due `settings.initial_jitter_max_seconds * draw` from now, `draw`
        being a uniform draw in [0, 1) the harness supplies. A later restart schedules
        afresh; a peer's restart does not move this governor's sweep."""
        ...

    def resend_sweep_at(self) -> datetime | None:
        """When this governor's first re-send sweep after its latest restart is due
        (UTC), or None before its first restart (RG-009)."""
        ...

    def set_store_available(self, available: bool) -> None:
        """Fault injection by the harness: make the governor's store unreachable, or
        reachable again (RG-011). While it is unreachable the governor fails open: offers
        accepted uncounted, failures not counted, no pause read, no error raised. The
        harness calls it on both governors of a check, as they share one store."""
        ...

    def set_enabled(self, enabled: bool) -> None:
        """This governor's master switch (RG-013); a new governor is on. Off, it accepts
        every offer uncounted and reads no pause, but still counts the failures and rate
        limits it records in the shared store."""
        ...

    def resend_times(self, draws: Sequence[float]) -> Sequence[datetime] | None:
        """When the re-send sweep after this governor's latest restart sends each of
        len(draws) pending envelopes, oldest first, the k-th waiting
        `draws[k] * settings.envelope_jitter_max_seconds` after the one before (the first
        after the sweep is due) (RG-012); None before its first restart. UTC instants."""
        ...

    def peer(self) -> GovernorRuntime:
        """Another process's governor on the same store: caps and pause are shared."""
        ...

    def close(self) -> None:
        ...


@runtime_checkable
class GovernorBackend(Protocol):
    def open_governor(self, clock: Clock, settings: GovernorSettings) -> GovernorRuntime:
        """A fresh governor: nothing accepted, nothing counted, no pause."""
        ...
