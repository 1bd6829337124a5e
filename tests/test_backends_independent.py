"""The shipped backends compute their answers with code of their own, never the oracle's.

The harness checks a backend by comparing its answers with the oracle's. A backend that
computes an answer with the oracle's own function agrees with it whatever that function
gets wrong, so the check is blind exactly there. A module under backends/ may import from
`jobconform.reference` only what backend and oracle must share: the data types the
adapter protocols speak, the commands, and the vocabulary the harness compares as it is.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ROOT / "backends"
REFERENCE = "jobconform.reference"

# Module -> the names a backend may import from it. Classes and type aliases are data;
# a function or a whole module is not allowed (see COMMAND_HELPERS for the exceptions).
ALLOWED: dict[str, frozenset[str]] = {
    # The task bodies' scripted outcomes and the values the adapter protocols carry.
    "jobconform.reference.commands": frozenset({"Outcome", "Raise", "Succeed"}),
    "jobconform.reference.lifecycle": frozenset({"JsonValue", "STUCK_ERROR", "POISON_ERROR"}),
    "jobconform.reference.faults": frozenset({"FaultKind", "StoreFault"}),
    "jobconform.reference.backoff": frozenset({"Jitter", "RetryPolicy"}),
    # The health snapshot's six counts, one record for runtimes, the pipe and the bridges.
    "jobconform.reference.model": frozenset({"Health"}),
    "jobconform.reference.admission": frozenset({"AdmissionConfig"}),
    "jobconform.reference.breaker.oracle": frozenset({"BreakerSettings"}),
    "jobconform.reference.governor.oracle": frozenset({"GovernorSettings"}),
    "jobconform.reference.idempotency.oracle": frozenset({"ClaimKind", "IdempotencyConfig"}),
    "jobconform.reference.loops.oracle": frozenset({
        "FailResult", "InvalidLoopParameters", "LoopParameters", "ParameterProblem",
        "RaiseError", "Respond", "RunOutcome", "TIMEOUT_ERROR"}),
    "jobconform.reference.reminders.oracle": frozenset({"DeliveryOutcome", "ReminderConfig"}),
    "jobconform.reference.scheduling.oracle": frozenset({
        "CRON", "ONCE", "BusinessStatus", "ExecutionOutcome", "ExecutionStatus", "MissedFires",
        "PreCheckAnswer", "SchedulingConfig", "Trigger"}),
    "jobconform.reference.store.oracle": frozenset({"STATUSES", "TERMINAL", "TaskRecord"}),
    # The composite commands: the work a loop's run is named by, the loop a StartLoop
    # starts, what its agent answers and the reminder a CreateReminder makes.
    "jobconform.reference.composite.commands": frozenset({"loop_run"}),
    "jobconform.reference.composite.oracle": frozenset({
        "AUTH", "CompositeConfig", "FAILED_RUN_STATUS", "LOOP_RUN_TIMEOUT_SECONDS", "REFUSED",
        "loop_parameters", "reminder_message", "run_response"}),
}
# The only functions allowed: they spell out what a composite command means, which both
# sides must read alike; none of them decides an answer the harness compares.
COMMAND_HELPERS = frozenset({"loop_run", "loop_parameters", "reminder_message", "run_response"})


def reference_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, module, name) for everything `path` takes from jobconform.reference; a
    whole module imported is named "*"."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module is not None and (
                node.module == REFERENCE or node.module.startswith(f"{REFERENCE}.")):
            found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, "*") for alias in node.names
                      if alias.name == REFERENCE or alias.name.startswith(f"{REFERENCE}.")]
    return found


def backend_modules() -> list[Path]:
    return sorted(BACKENDS.rglob("*.py"))


def test_backends_import_only_shared_data_types_and_commands_from_the_oracle() -> None:
    borrowed = [f"{path.relative_to(ROOT)}:{line}: {name} from {module}"
                for path in backend_modules()
                for line, module, name in reference_imports(path)
                if name not in ALLOWED.get(module, frozenset())]
    assert not borrowed, (
        "backends must compute their answers with their own code, not the oracle's (a"
        " differential check is blind where both sides run one function):\n"
        + "\n".join(borrowed))


def test_the_allowed_list_holds_data_and_commands_only() -> None:
    for module, names in ALLOWED.items():
        imported = importlib.import_module(module)
        for name in names:
            value = getattr(imported, name)
            if inspect.isfunction(value) or inspect.ismodule(value):
                assert name in COMMAND_HELPERS, f"{module}.{name} is a function, not data"


def test_every_allowed_name_is_still_used() -> None:
    used = {(module, name) for path in backend_modules()
            for _, module, name in reference_imports(path)}
    unused = sorted(f"{module}.{name}" for module, names in ALLOWED.items()
                    for name in names if (module, name) not in used)
    assert not unused, f"no backend imports these any more; drop them from ALLOWED: {unused}"


@pytest.mark.parametrize("source", [
    "from jobconform.reference.scheduling.oracle import next_fire\n",
    "from jobconform.reference import backoff\n",
    "import jobconform.reference.reminders.oracle\n",
    "from jobconform.reference.reminders.oracle import ReminderConfig, derived_key\n",
])
def test_the_guard_sees_an_oracle_function_or_module(tmp_path: Path, source: str) -> None:
    module = tmp_path / "borrowing.py"
    module.write_text(source, encoding="utf-8")
    names = {name for _, imported, name in reference_imports(module)
             if name not in ALLOWED.get(imported, frozenset())}
    assert names and names <= {"next_fire", "backoff", "*", "derived_key"}
