"""No circle of imports between any two files of src/pdi (issue 23: "no circle between files").

Every ``import`` and ``from … import`` in src/pdi, at module level or inside a function
(a deferred import still joins the circle), is an edge from one file to another; a circle
is a strongly connected group of two or more files, and there must be none: shared names
live below the modules that share them (``interop/warc/sources.py``, ``fragments/results.py``,
``fragments/markup/element.py``), a module names a submodule by its own path
(``import pdi.archive.tokens as tokens``, not ``from pdi.archive import tokens``, which
passes through the package's ``__init__``), and where a module serves the archive that
calls it, it names what it needs as a ``Protocol`` (``archive/bagit/imports.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

def _modules() -> dict[str, Path]:
    found = {}
    for path in (SRC / "pdi").rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _edges(modules: dict[str, Path]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets += [base, *(f"{base}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets += [alias.name for alias in node.names]
            graph[name].update(t for t in targets if t in modules and t != name)
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of two or more files (iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    circles.append(sorted(group))
    return circles


def test_no_file_circle_anywhere_in_the_package() -> None:
    modules = _modules()
    assert len(modules) > 150  # the scan sees the whole package, not an empty folder
    assert _circles(_edges(modules)) == []


def test_the_scan_sees_a_circle() -> None:
    graph = {"pdi.a": {"pdi.b"}, "pdi.b": {"pdi.c"}, "pdi.c": {"pdi.a"}, "pdi.d": {"pdi.a"}}
    assert _circles(graph) == [["pdi.a", "pdi.b", "pdi.c"]]
