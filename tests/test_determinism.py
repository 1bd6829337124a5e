"""Same seed, same result: the Hypothesis machine depends on its seed alone."""

from __future__ import annotations

from jobconform.backends.loading import load_backend
from jobconform.conformance.lifecycle.machine import run_lifecycle_machine
from jobconform.reference.commands import describe
from jobconform.spec import load_registry


def test_same_seed_same_counterexample() -> None:
    registry = load_registry()
    backend = load_backend("jobconform.conformance.lifecycle.gallery:cleanup_exclusive_boundary")
    runs = [run_lifecycle_machine(backend, registry.profile("canonical"), registry, seed=7)
            for _ in range(2)]
    first, second = (run.divergence for run in runs)
    assert first is not None and second is not None
    assert [describe(c) for c in first.commands] == [describe(c) for c in second.commands]
    assert runs[0].steps == runs[1].steps


def test_same_seed_same_passing_run() -> None:
    registry = load_registry()
    runs = [run_lifecycle_machine(load_backend("memory"), registry.profile("canonical"), registry,
                        seed=3, examples=50) for _ in range(2)]
    assert runs[0].divergence is None and runs[1].divergence is None
    assert runs[0].steps == runs[1].steps
    assert runs[0].exercised == runs[1].exercised


def test_machines_shrink_except_inside_the_self_test() -> None:
    from hypothesis import Phase

    from jobconform.conformance.shrinking import machine_phases, without_shrinking

    assert Phase.shrink in machine_phases()
    with without_shrinking():
        assert Phase.shrink not in machine_phases()
        assert Phase.generate in machine_phases()
    assert Phase.shrink in machine_phases()
