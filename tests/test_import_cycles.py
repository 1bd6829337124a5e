"""No import circles inside the package: a module's top-level imports never lead back to it.

A circle works only while the import order happens to suit it (one side must not use the
other's names at import time), and it hides which module is the core the other builds on.
Imports inside functions (loaded when called) and under `if TYPE_CHECKING:` are left out:
they are how a module reaches a layer above it on purpose.
"""

from __future__ import annotations

import ast
import pathlib
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parent.parent
LAYERS = ("spec", "reference", "backends", "conformance", "bridges")
PACKAGE = "jobconform"


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join((PACKAGE, *parts))] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _top_level_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            pending.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            pending.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                pending.extend(handler.body)


def import_graph() -> dict[str, set[str]]:
    """Each module of the package and the package modules its top-level imports load."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in _top_level_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    anchor = name.split(".")
                    anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                    base = ".".join([*anchor, base] if base else anchor)
                targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
            for target in targets:
                # Importing a.b.c runs a/__init__, a/b/__init__ and a/b/c; the packages
                # holding the importing module have run (or are running) before it.
                parts = target.split(".")
                for end in range(2, len(parts) + 1):
                    candidate = ".".join(parts[:end])
                    if candidate in modules and not f"{name}.".startswith(f"{candidate}."):
                        edges.add(candidate)
        graph[name] = edges
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(circles)


def test_the_graph_sees_the_package() -> None:
    graph = import_graph()
    assert "jobconform.conformance.harness" in graph
    assert "jobconform.backends.protocol" in graph["jobconform.backends.memory"]


def test_a_circle_is_found() -> None:
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_of_the_package_imports_itself_back() -> None:
    circles = import_circles(import_graph())
    assert circles == [], "import circles: " + "; ".join(" <-> ".join(c) for c in circles)
