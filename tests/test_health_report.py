"""The health report's worker fields (LC-029, ST-005): the oracle, the step runtime, the
harness's comparison, and an adapter without the fields reported as not claimed."""

from __future__ import annotations

from datetime import timedelta

import pytest

from jobconform.backends.loading import BackendLoadError, check_backend
from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import (
    HEALTH_REPORT,
    LIFECYCLE,
    STUCK,
    Clock,
    RuntimeSettings,
)
from jobconform.conformance.applicability import skip_reason
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import Divergence, Harness
from jobconform.reference import commands as cmd
from jobconform.reference.model import Health, ReferenceModel
from jobconform.spec import load_registry

REGISTRY = load_registry()
PROFILE = REGISTRY.profile("canonical")


def test_oracle_status_and_heartbeat_follow_the_jobs() -> None:
    model = ReferenceModel(RuntimeSettings(max_concurrent=2, max_tasks=None), EPOCH)
    assert model.worker_report().status == "running"
    assert model.worker_report().last_heartbeat is None
    model.apply(cmd.Submit("a"))
    model.apply(cmd.AdvanceTime(5))
    model.apply(cmd.Dispatch())
    assert model.worker_report().last_heartbeat == EPOCH + timedelta(seconds=5)
    model.apply(cmd.AdvanceTime(5))
    model.apply(cmd.Heartbeat("a"))
    model.apply(cmd.Finish("a", cmd.Succeed(1)))
    model.apply(cmd.AdvanceTime(60))
    model.apply(cmd.Cleanup(0))
    assert not model.jobs
    # Cleanup removed the job that beat last; the report keeps its heartbeat (ST-005).
    assert model.worker_report().last_heartbeat == EPOCH + timedelta(seconds=10)
    model.apply(cmd.Shutdown())
    assert model.worker_report().status == "stopped"


def test_oracle_is_stopping_while_a_drain_lasts() -> None:
    model = ReferenceModel(RuntimeSettings(max_concurrent=1, max_tasks=None, shutdown_mode="drain",
                                  drain_timeout_seconds=30), EPOCH)
    model.apply(cmd.Shutdown())
    assert model.worker_report().status == "stopping"
    model.apply(cmd.AdvanceTime(30))
    assert model.worker_report().status == "stopped"


def test_each_step_runtime_names_its_own_worker() -> None:
    backend = MemoryBackend()
    settings = RuntimeSettings(max_concurrent=1, max_tasks=None)
    first = backend.open(settings, _clock())
    second = backend.open(settings, _clock())
    assert first.health().worker_id != second.health().worker_id
    assert first.health().worker_id == first.health().worker_id


class _CountsOnlyRuntime(MemoryRuntime):
    """An adapter written before the health report named its worker: its health is the
    six counts alone, as the oracle's `Health` record is."""

    def health(self) -> Health:  # type: ignore[override]
        full = super().health()
        return Health(full.queued, full.running, full.total, full.processed, full.failed,
                      full.cancelled)


class _CountsOnlyBackend(MemoryBackend):
    name = "counts-only"
    capabilities = frozenset({LIFECYCLE, STUCK})

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return _CountsOnlyRuntime(settings, clock)


class _ClaimsButLacks(_CountsOnlyBackend):
    name = "claims-but-lacks"
    capabilities = frozenset({LIFECYCLE, STUCK, HEALTH_REPORT})


def test_an_adapter_without_the_fields_is_not_claimed_and_still_runs() -> None:
    backend = _CountsOnlyBackend()
    for requirement in ("LC-029", "ST-005"):
        reason = skip_reason(REGISTRY, backend, PROFILE, [requirement])
        assert reason is not None and HEALTH_REPORT in reason
    harness = Harness(backend, PROFILE, REGISTRY)
    harness.run(cmd.Submit("a"))
    harness.run(cmd.Dispatch())
    harness.run(cmd.Shutdown())
    assert not {"LC-029", "ST-005"} & harness.exercised
    harness.close()


def test_a_claim_without_the_fields_fails_lc_029() -> None:
    harness = Harness(_ClaimsButLacks(), PROFILE, REGISTRY)
    with pytest.raises(Divergence) as caught:
        harness.run(cmd.Submit("a"))
    assert caught.value.primary == "LC-029"
    harness.close()


def test_the_memory_backend_reaches_both_requirements() -> None:
    harness = Harness(MemoryBackend(), PROFILE, REGISTRY)
    harness.run(cmd.Submit("a"))
    harness.check_worker_id_unique()
    assert {"LC-029", "ST-005"} <= harness.exercised
    harness.close()


def test_health_report_needs_the_lifecycle_area() -> None:
    class ReportOnly(MemoryBackend):
        name = "report-only"
        capabilities = frozenset({HEALTH_REPORT})

    with pytest.raises(BackendLoadError, match="health-report"):
        check_backend(ReportOnly(), "report-only")


def _clock() -> Clock:
    return VirtualClock(EPOCH)
