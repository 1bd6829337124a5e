"""Backends: the loader, the memory backend, and the harness comparing a backend to the oracle."""

from __future__ import annotations

import math
import sys
import types
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_sequences import lifecycle_commands

from jobconform.backends.capabilities import CAPABILITIES
from jobconform.backends.loading import BackendLoadError, backend_names, check_backend, load_backend
from jobconform.backends.memory import MemoryBackend, MemoryRuntime
from jobconform.backends.protocol import (
    BREAKER_SEAMS,
    IDEMPOTENCY,
    LIFECYCLE,
    REAPER,
    REDELIVERY,
    REMINDERS,
    Backend,
    CapacityExceeded,
    Clock,
    JobNotCompleted,
    JobNotFound,
    RuntimeSettings,
    RuntimeShutDown,
    TaskScript,
    store_faults,
)
from jobconform.conformance.clock import EPOCH, VirtualClock
from jobconform.conformance.harness import (
    HARNESS_MODULES,
    AdapterError,
    Divergence,
    Harness,
    open_harness,
)
from jobconform.reference.commands import (
    ACCEPTED,
    NOT_FOUND,
    REFUSED_CAPACITY,
    REFUSED_SHUT_DOWN,
    AdvanceTime,
    Cancel,
    Cleanup,
    Command,
    Dispatch,
    Finish,
    Get,
    GetResult,
    ListJobs,
    Raise,
    Shutdown,
    Submit,
    Succeed,
    not_completed,
)
from jobconform.spec import Profile, Registry, load_registry
from jobconform.spec.areas import areas

FAKE_MODULE = "jobconform_test_fake_adapters"


def harness(backend: Backend, profile: Profile, registry: Registry | None = None,
            **overrides: Any) -> Harness:
    # No real-time guard: these tests never hang and must not depend on wall-clock time.
    return open_harness(backend, profile, registry, safety_timeout=0, **overrides)


# -- fake adapters ---------------------------------------------------------------------------


class NoOpen:
    name = "no-open"
    profile = "canonical"
    capabilities = frozenset({LIFECYCLE})


class BadCapabilities(MemoryBackend):
    capabilities = frozenset({LIFECYCLE, "teleport", "time-travel"})


Replacements = dict[str, Callable[..., Any]]


class Patched:
    """A runtime with some of its methods replaced (to inject faults); the rest are its own."""

    def __init__(self, runtime: MemoryRuntime, replacements: Replacements) -> None:
        self.runtime = runtime
        vars(self).update(replacements)

    def __getattr__(self, name: str) -> Any:  # reached only for a name not replaced
        return getattr(self.runtime, name)


class PatchedMemory(MemoryBackend):
    """A memory backend whose runtime `patch` replaces methods of: it takes the runtime and
    returns the replacements by method name, which may call the runtime's own."""

    def __init__(self, name: str, patch: Callable[[MemoryRuntime], Replacements]) -> None:
        self.name = name
        self.patch = patch

    def open(self, settings: RuntimeSettings, clock: Clock) -> Any:
        runtime = MemoryRuntime(settings, clock)
        return Patched(runtime, self.patch(runtime))


def dispatch_raises(runtime: MemoryRuntime) -> Replacements:
    def dispatch() -> None:
        raise ValueError("worker pool exploded")

    return {"dispatch": dispatch}


def queued_cancel_refused(runtime: MemoryRuntime) -> Replacements:
    """Refuses to cancel queued jobs: violates LC-011."""

    def cancel(job_id: str) -> bool:
        view = runtime.get(job_id)
        if view is not None and view.status == "queued":
            return False
        return runtime.cancel(job_id)

    return {"cancel": cancel}


def cleanup_exclusive(runtime: MemoryRuntime) -> Replacements:
    """Removes jobs strictly older than max_age: violates the inclusive bound of LC-020."""

    def cleanup(max_age_seconds: float) -> int:
        return runtime.cleanup(max_age_seconds + 1e-6)

    return {"cleanup": cleanup}


def same_id_twice(runtime: MemoryRuntime) -> Replacements:
    first: list[str] = []

    def submit(script: TaskScript) -> str:
        first.append(runtime.submit(script))
        return first[0]  # every later submission gets the first job's id again

    return {"submit": submit}


class NaiveClock:
    def __init__(self, inner: Clock) -> None:
        self.inner = inner

    def now(self) -> datetime:
        return self.inner.now().replace(tzinfo=None)


class NaiveTimestamps(MemoryBackend):
    name = "naive"

    def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
        return MemoryRuntime(settings, NaiveClock(clock))


@pytest.fixture
def fake_module(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    module = types.ModuleType(FAKE_MODULE)
    module.NoOpen = NoOpen  # type: ignore[attr-defined]
    module.no_open_instance = NoOpen()  # type: ignore[attr-defined]
    module.BadCapabilities = BadCapabilities  # type: ignore[attr-defined]
    module.memory_instance = MemoryBackend()  # type: ignore[attr-defined]
    module.factory = lambda: MemoryBackend()  # type: ignore[attr-defined]
    module.not_a_backend = 42  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, FAKE_MODULE, module)
    yield module


# -- the loader --------------------------------------------------------------------------------


def test_load_memory_backend() -> None:
    backend = load_backend("memory")
    assert isinstance(backend, MemoryBackend)
    assert isinstance(backend, Backend)
    assert backend.name == "memory"
    assert backend.profile == "canonical"
    assert LIFECYCLE in backend.capabilities
    names = {area.name for area in areas()}
    # Every claim is an area, the store faults of an area it claims, or a declared capability
    # (jobconform.backends.capabilities).
    assert backend.capabilities <= (names | {store_faults(name) for name in names}
                                    | CAPABILITIES.keys())
    assert BREAKER_SEAMS in backend.capabilities
    assert {store_faults(REMINDERS), store_faults(IDEMPOTENCY), store_faults(REDELIVERY),
            store_faults(REAPER)} <= backend.capabilities


def test_memory_is_an_installed_backend() -> None:
    assert "memory" in backend_names()


def test_unknown_backend_names_the_installed_ones() -> None:
    with pytest.raises(BackendLoadError) as caught:
        load_backend("celery")
    message = str(caught.value)
    assert "unknown backend 'celery'" in message
    assert "installed backends:" in message
    assert "memory" in message
    assert "module:attr" in message
    assert isinstance(caught.value, LookupError)


def test_module_attr_class_instance_and_factory(fake_module: types.ModuleType) -> None:
    assert isinstance(load_backend("jobconform.backends.memory:MemoryBackend"), MemoryBackend)
    assert load_backend(f"{FAKE_MODULE}:memory_instance") is fake_module.memory_instance
    assert isinstance(load_backend(f"{FAKE_MODULE}:factory"), MemoryBackend)


def test_missing_module() -> None:
    with pytest.raises(BackendLoadError) as caught:
        load_backend("no_such_module_for_jobconform:Backend")
    message = str(caught.value)
    assert "cannot import module 'no_such_module_for_jobconform'" in message
    assert "installed" in message
    assert isinstance(caught.value.__cause__, ImportError)


def test_missing_attribute(fake_module: types.ModuleType) -> None:
    with pytest.raises(BackendLoadError) as caught:
        load_backend(f"{FAKE_MODULE}:Nothing")
    assert f"module {FAKE_MODULE!r} has no attribute 'Nothing'" in str(caught.value)


def test_class_lacking_open(fake_module: types.ModuleType) -> None:
    with pytest.raises(BackendLoadError) as caught:
        load_backend(f"{FAKE_MODULE}:NoOpen")
    message = str(caught.value)
    assert "lacks open" in message
    assert "NoOpen" in message
    assert "jobconform.backends.protocol.Backend" in message


def test_object_lacking_everything() -> None:
    with pytest.raises(BackendLoadError, match="lacks name, profile, capabilities, open"):
        load_backend("builtins:object")


@pytest.mark.parametrize("attribute", ["no_open_instance", "not_a_backend"])
def test_instance_lacking_open(fake_module: types.ModuleType, attribute: str) -> None:
    with pytest.raises(BackendLoadError, match="lacks"):
        load_backend(f"{FAKE_MODULE}:{attribute}")


def test_empty_module_name() -> None:
    with pytest.raises(BackendLoadError):
        load_backend(":Backend")


def test_unknown_capabilities_rejected(fake_module: types.ModuleType) -> None:
    with pytest.raises(BackendLoadError) as caught:
        load_backend(f"{FAKE_MODULE}:BadCapabilities")
    message = str(caught.value)
    assert "unknown capabilities ['teleport', 'time-travel']" in message
    assert "lifecycle" in message  # the known ones are listed


def test_check_backend_directly() -> None:
    backend = MemoryBackend()
    assert check_backend(backend, "x") is backend
    with pytest.raises(BackendLoadError, match=r"'mine'.*unknown capabilities"):
        check_backend(BadCapabilities(), "mine")


# -- the memory runtime on its own ----------------------------------------------------------


def test_memory_runtime_basics() -> None:
    clock = VirtualClock()
    runtime = MemoryBackend().open(RuntimeSettings(max_concurrent=1, max_tasks=2), clock)
    script = TaskScript()
    first = runtime.submit(script)
    second = runtime.submit(TaskScript())
    assert first != second
    with pytest.raises(CapacityExceeded):
        runtime.submit(TaskScript())
    runtime.dispatch()
    view = runtime.get(first)
    assert view is not None and view.status == "running"
    assert view.started_at == EPOCH
    clock.advance(2)
    script.decide(Succeed([1, 2]))
    runtime.settle()
    assert runtime.get_result(first) == [1, 2]
    with pytest.raises(JobNotCompleted) as caught:
        runtime.get_result(second)
    assert caught.value.status == "queued"
    with pytest.raises(JobNotFound):
        runtime.get_result("nope")
    runtime.shutdown()
    with pytest.raises(RuntimeShutDown):
        runtime.submit(TaskScript())
    runtime.close()
    assert runtime.list_jobs() == []


def test_task_script() -> None:
    script = TaskScript()
    with pytest.raises(RuntimeError, match="not decided"):
        script.run()
    script.decide(Raise("KeyError", "k"))
    script.decide(Succeed(1))  # only the first decision counts
    with pytest.raises(Exception) as caught:
        script.run()
    assert type(caught.value).__name__ == "KeyError"
    assert str(caught.value) == "k"


# -- the harness ---------------------------------------------------------------------------------


def test_memory_backend_passes_a_full_scenario(canonical: Profile, registry: Registry) -> None:
    check = harness(MemoryBackend(), canonical, registry, max_concurrent=2, max_tasks=4)
    assert check.run(Submit("a")) == ACCEPTED
    check.run_all([Submit("b", ignores_cancel=True), Submit("c"), Dispatch(), AdvanceTime(5)])
    assert check.run(Cancel("b")) is True
    assert check.run(Cancel("b")) is False
    check.run_all([Finish("a", Succeed({"k": [1]})), Finish("b", Succeed("discarded")),
                   Dispatch(), Finish("c", Raise("ValueError", "bad"))])
    assert check.run(GetResult("a")) == {"k": [1]}
    assert check.run(GetResult("b")) == not_completed("cancelled")
    assert check.run(GetResult("zz")) == NOT_FOUND
    assert check.run(ListJobs("failed")) == ["c"]
    check.run(Get("a"))
    check.run(Submit("d"))
    assert check.run(Submit("e")) == REFUSED_CAPACITY
    check.run(AdvanceTime(3600))
    assert check.run(Cleanup(3600)) == 3
    check.run(Shutdown())
    check.run(Shutdown())
    assert check.run(Submit("f")) == REFUSED_SHUT_DOWN
    assert {"LC-013", "LC-014", "LC-015", "LC-020", "LC-023"} <= check.exercised
    check.close()


def test_adapter_error_names_adapter_and_action(canonical: Profile) -> None:
    check = harness(PatchedMemory("dispatch-raises", dispatch_raises), canonical)
    check.run(Submit("a"))
    with pytest.raises(AdapterError) as caught:
        check.run(Dispatch())
    message = str(caught.value)
    assert "'dispatch-raises'" in message
    assert "during dispatch" in message
    assert "ValueError: worker pool exploded" in message
    assert isinstance(caught.value.__cause__, ValueError)


def test_adapter_error_when_open_raises(canonical: Profile) -> None:
    class OpenRaises(MemoryBackend):
        name = "open-raises"

        def open(self, settings: RuntimeSettings, clock: Clock) -> MemoryRuntime:
            raise OSError("no database")

    with pytest.raises(AdapterError, match="'open-raises' raised OSError: no database during open"):
        harness(OpenRaises(), canonical)


def test_naive_timestamp_is_an_lc005_divergence(canonical: Profile, registry: Registry) -> None:
    check = harness(NaiveTimestamps(), canonical, registry)
    with pytest.raises(Divergence) as caught:
        check.run(Submit("a"))
    divergence = caught.value
    assert "LC-005" in divergence.requirements
    message = str(divergence)
    assert "LC-005 (Timestamps are timezone-aware UTC)" in message
    assert "submitted_at" in message
    assert "tz-aware UTC datetime" in message


def test_divergence_message_has_requirement_expected_actual_and_commands(
    canonical: Profile, registry: Registry
) -> None:
    check = harness(PatchedMemory("queued-cancel-refused", queued_cancel_refused),
                    canonical, registry)
    check.run(Submit("a"))
    with pytest.raises(Divergence) as caught:
        check.run(Cancel("a"))
    divergence = caught.value
    assert "LC-011" in divergence.requirements
    assert divergence.expected is True
    assert divergence.actual is False
    assert divergence.commands == [Submit("a"), Cancel("a")]
    message = str(divergence)
    assert "LC-011 (Cancel of a queued job)" in message
    assert "expected: True" in message
    assert "actual:   False" in message
    assert "1. Submit(job='a')" in message
    assert "2. Cancel(job='a')" in message
    assert "after step 2" in message
    assert isinstance(divergence, AssertionError)


def test_cleanup_boundary_divergence_names_lc020(canonical: Profile) -> None:
    check = harness(PatchedMemory("cleanup-exclusive", cleanup_exclusive), canonical)
    check.run_all([Submit("a"), Cancel("a"), AdvanceTime(60)])
    with pytest.raises(Divergence) as caught:
        check.run(Cleanup(60))
    # The answer (1 removed, 0 by the backend) and the listing after it differ; either way
    # the boundary of the age cut-off is the one rule broken.
    assert caught.value.primary == "LC-020"


def test_reused_submit_id_is_an_lc008_divergence(canonical: Profile) -> None:
    check = harness(PatchedMemory("same-id", same_id_twice), canonical)
    check.run(Submit("a"))
    with pytest.raises(Divergence) as caught:
        check.run(Submit("b"))
    assert caught.value.requirements == ("LC-008",)


def test_divergence_built_directly() -> None:
    commands: list[Command] = [Submit("x"), Dispatch()]
    divergence = Divergence(("LC-010", "LC-010", "LC-024"), "the health snapshot", 1, 2,
                            commands, {"LC-010": "Concurrency limit"})
    assert divergence.requirements == ("LC-010", "LC-024")  # de-duplicated, in order
    message = str(divergence)
    assert "LC-010 (Concurrency limit); also involved: LC-024" in message
    assert "what: the health snapshot" in message
    assert "expected: 1" in message
    assert "actual:   2" in message
    assert "1. Submit(job='x')" in message
    assert "2. Dispatch()" in message
    assert "after step 2 (Dispatch())" in message


def test_divergence_with_no_commands() -> None:
    message = str(Divergence(("LC-001",), "start", None, None, [], {}))
    assert "after step 0 (start)" in message


def test_reusing_a_job_alias_raises_value_error(canonical: Profile) -> None:
    check = harness(MemoryBackend(), canonical)
    check.run(Submit("a"))
    with pytest.raises(ValueError, match="job alias 'a' is already used"):
        check.run(Submit("a"))
    assert check.commands == [Submit("a")]  # the bad command was not recorded


@pytest.mark.parametrize("command", [AdvanceTime(-1), AdvanceTime(math.inf),
                                     AdvanceTime(math.nan), Cleanup(-5), Cleanup(math.inf)])
def test_harness_rejects_malformed_time_commands(canonical: Profile, command: Command) -> None:
    check = harness(MemoryBackend(), canonical)
    with pytest.raises(ValueError):
        check.run(command)
    assert check.commands == []


def test_harness_uses_profile_limits(registry: Registry) -> None:
    check = harness(MemoryBackend(), registry.profile("async-jobs"))
    # Seed 000 keeps finished jobs for a day: the runtime's reaper is configured so.
    assert check.settings == RuntimeSettings(max_concurrent=4, max_tasks=None,
                                             reaper_ttl_seconds=86_400.0,
                                             modules=HARNESS_MODULES)
    check = harness(MemoryBackend(), registry.profile("task-manager"), max_concurrent=1)
    # Seed 004 D-18: the task manager's cancel interrupts the running invocation.
    assert check.settings == RuntimeSettings(max_concurrent=1, max_tasks=1000,
                                             cancel_interrupts=True, modules=HARNESS_MODULES)
    check = harness(MemoryBackend(), registry.profile("draining-worker"))
    assert (check.settings.shutdown_mode, check.settings.drain_timeout_seconds) == (
        "drain", 30.0)
    check = harness(MemoryBackend(), registry.profile("task-manager"), unlimited_tasks=True)
    assert check.settings.max_tasks is None


# -- the virtual clock ---------------------------------------------------------------------------


def test_virtual_clock_starts_at_epoch_and_advances() -> None:
    clock = VirtualClock()
    assert clock.now() == EPOCH == datetime(2026, 1, 1, tzinfo=UTC)
    clock.advance(0)
    assert clock.now() == EPOCH
    clock.advance(1.5)
    assert clock.now() == EPOCH + timedelta(seconds=1.5)
    assert clock.now().utcoffset() == timedelta(0)


@pytest.mark.parametrize("seconds", [-1, -1e-9, math.inf, -math.inf, math.nan])
def test_virtual_clock_refuses_bad_advances(seconds: float) -> None:
    clock = VirtualClock()
    with pytest.raises(ValueError, match="only moves forward"):
        clock.advance(seconds)
    assert clock.now() == EPOCH


def test_virtual_clock_refuses_non_utc_start() -> None:
    from datetime import timezone

    with pytest.raises(ValueError, match="UTC"):
        VirtualClock(datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="UTC"):
        VirtualClock(datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2))))


# -- differential: the memory backend agrees with the oracle on random sequences --------------

outcomes = st.one_of(
    st.builds(Succeed, st.none() | st.integers(-3, 3) | st.lists(st.integers(0, 2), max_size=2)),
    st.builds(Raise, st.sampled_from(["ValueError", "Boom"]), st.text("ab ", max_size=3)),
)


command_sequences = partial(
    lifecycle_commands, max_size=30, outcomes=outcomes,
    kinds=["submit", "submit", "dispatch", "finish", "finish", "cancel", "time", "cleanup",
           "shutdown", "get", "result", "list"],
    seconds=[0, 0.25, 1, 30], ages=[0, 1, 30],
    statuses=[None, "queued", "running", "succeeded", "cancelled"])


@given(command_sequences(), st.integers(1, 3), st.sampled_from([None, 3]))
@settings(max_examples=150, deadline=None, database=None, derandomize=True)
def test_memory_backend_agrees_with_oracle(
    commands: list[Command], max_concurrent: int, max_tasks: int | None
) -> None:
    profile = load_registry().profile("canonical")
    check = harness(MemoryBackend(), profile, max_concurrent=max_concurrent,
                    max_tasks=max_tasks, unlimited_tasks=max_tasks is None)
    check.run_all(commands)  # raises Divergence on the first disagreement
    check.close()
