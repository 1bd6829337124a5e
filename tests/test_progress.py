"""Progress lines on long runs: examples done, time left; the backend is left unchanged."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from jobconform.backends.memory import MemoryBackend
from jobconform.backends.protocol import RuntimeSettings
from jobconform.conformance.cli import main
from jobconform.conformance.clock import VirtualClock
from jobconform.conformance.partial_claims import LIFECYCLE_ONLY
from jobconform.conformance.progress import CountingBackend, Meter, duration


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_durations_read_naturally() -> None:
    assert duration(4.4) == "4 s"
    assert duration(185) == "3 min 05 s"
    assert duration(3720) == "1 h 02 min"


def test_meter_estimates_the_time_left_and_prints_at_most_every_interval() -> None:
    clock, lines = FakeClock(), []
    meter = Meter("machine", 100, "examples", lines.append, interval=10.0, clock=clock)
    clock.now += 5
    meter.advance(25)
    assert lines == []  # within the interval: nothing printed
    clock.now += 5
    meter.advance(25)
    assert lines == ["machine: 50/100 examples, 10 s, about 10 s left"]
    meter.advance(55)
    assert meter.line() == "machine: 105 runs for 100 examples (discarded or shrinking), 10 s"


def test_counting_backend_counts_opens_and_forwards_the_rest() -> None:
    lines: list[str] = []
    meter = Meter("m", 3, "examples", lines.append)
    backend = MemoryBackend()
    counted = CountingBackend(backend, meter)
    assert counted.name == backend.name and counted.capabilities == backend.capabilities
    assert callable(counted.open_breaker) and meter.done == 0  # looking is not opening
    assert not hasattr(counted, "open_nothing_such")
    runtime = counted.open(RuntimeSettings(max_concurrent=2, max_tasks=None), VirtualClock())
    runtime.close()
    assert meter.done == 1


def test_a_run_shows_each_machines_examples(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", "--backend", LIFECYCLE_ONLY, "--suite",
                                       "hypothesis", "--examples", "10", "--report-dir",
                                       str(tmp_path)])
    assert "hypothesis: lifecycle machine, seed 0: 0/10 examples, 0 s" in result.output
    final = [line for line in result.output.splitlines()
             if line.startswith("hypothesis: lifecycle machine, seed 0:") and "steps" in line]
    assert len(final) == 1 and final[0].endswith("passed"), result.output
    assert "/10 examples" in final[0] or "runs for 10 examples" in final[0]


def test_the_self_test_shows_entries_done_and_time_left(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["selftest", "--only", "late_completion", "--suite",
                                       "hypothesis", "--examples", "20",
                                       "--work-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "self-test: 1/1 broken backends, " in result.output
