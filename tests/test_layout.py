"""The package layout shows the data flow, and no two parts of it import each other.

A part is a top-level module or subpackage of `logsift` (`read`, `rules`, `group`, `match`,
`diagnosis`, `learn`, `report`, ...). Imports are read from the source (including imports
inside functions), so a cycle that only shows at run time is caught too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "logsift"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules
            # `from logsift.diagnosis import lifecycle` imports the submodule; names that are
            # not submodules are attributes of the module itself
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(node.module)
    return {name for name in found if name.startswith("logsift.")}


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _graph(level: str) -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        source = _part(name) if level == "part" else name
        if source is None:
            continue
        for target in _imports(path, set(modules)):
            if target not in modules:
                continue
            node = _part(target) if level == "part" else target
            if node is not None and node != source:
                graph.setdefault(source, set()).add(node)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return stack[stack.index(target):] + [target]
            if target not in state:
                found = visit(target)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


@pytest.mark.parametrize("level", ["part", "module"])
def test_no_import_cycle(level: str) -> None:
    cycle = _cycle(_graph(level))
    assert cycle is None, " -> ".join(cycle or [])


def test_the_folders_tell_the_data_flow() -> None:
    for part in ("read", "rules", "group.py", "match.py", "diagnosis", "learn", "report", "pipeline.py", "api.py", "cli"):
        assert (PACKAGE / part).exists(), part


def test_the_cycle_check_can_fail() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
