"""Packages that re-export lazily (:mod:`pdi._lazy`): nothing loads until asked, and every name is the real one.

For each ``__init__`` that calls :func:`pdi._lazy.exports`: the map it hands
over in the ``else:`` of its ``if TYPE_CHECKING:`` names exactly what that block imports (what type
checkers read), and every name of ``__all__``; importing the package loads
none of those submodules; each name, asked for, is the object its submodule
defines, also after every submodule has been imported (a name that is also a
submodule's would then be hidden by the module).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from pdi._lazy import names_of

SRC = Path(__file__).resolve().parents[1] / "src"


def package_of(path: Path) -> str:
    return ".".join(path.parent.relative_to(SRC).parts)


def _lazy_packages() -> dict[str, Path]:
    found = {}
    for path in sorted((SRC / "pdi").rglob("__init__.py")):
        if "from pdi._lazy import exports" in path.read_text(encoding="utf-8"):
            found[package_of(path)] = path
    return found


PACKAGES = _lazy_packages()


def _declared(path: Path) -> tuple[dict[str, str], dict[str, str], list[str]]:
    """``(the TYPE_CHECKING imports, the map given to exports(), __all__)`` of an ``__init__``, read from its text."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checked: dict[str, str] = {}
    mapping: dict[str, str] = {}
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom) and statement.module:
                    checked.update((alias.name, statement.module) for alias in statement.names)
            assignment = node.orelse[0]  # else: what runs, the map handed to exports()
            assert isinstance(assignment, ast.Assign)
            call = assignment.value
            assert isinstance(call, ast.Call) and ast.unparse(call.func) == "exports"
            mapping = names_of(package_of(path), ast.literal_eval(call.args[1]))
        if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) == "__all__":
            names = ast.literal_eval(node.value)
    return checked, mapping, names


def test_some_packages_are_lazy() -> None:
    assert {"pdi.fragments.text", "pdi.capture", "pdi.interop.warc", "pdi.archive.bagit"} <= set(PACKAGES)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_the_map_is_what_type_checkers_read(package: str) -> None:
    checked, mapping, names = _declared(PACKAGES[package])
    assert mapping, package
    assert {name: module for name, module in checked.items() if name in mapping} == mapping
    assert set(mapping) <= set(names)
    defined_here = set(names) - set(mapping)  # defined in the __init__ itself (pdi.capture's capture, Captured)
    assert all(name not in checked or name in mapping for name in defined_here)


_PROBE = """
import importlib, json, pkgutil, sys
package, mapping, names = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
module = importlib.import_module(package)
loaded_at_once = sorted(m for m in set(mapping.values()) if m in sys.modules)
first = {name: getattr(module, name) is getattr(importlib.import_module(mapping[name]), name) for name in mapping}
for info in pkgutil.walk_packages(module.__path__, package + "."):
    importlib.import_module(info.name)
after = {name: getattr(module, name) is getattr(importlib.import_module(mapping[name]), name) for name in mapping}
submodules = sorted(name for name in names if isinstance(getattr(module, name), type(sys)))
print(json.dumps({"loaded_at_once": loaded_at_once, "first": first, "after": after, "submodules": submodules,
                  "dir_has_all": set(names) <= set(dir(module))}))
"""


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_names_load_when_asked_and_are_the_real_ones(package: str) -> None:
    _, mapping, names = _declared(PACKAGES[package])
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, package, json.dumps(mapping), json.dumps(names)],
        capture_output=True, text=True, check=True,
    )
    report = json.loads(result.stdout)
    assert report["loaded_at_once"] == []
    assert all(report["first"].values()), report["first"]
    assert all(report["after"].values()), report["after"]
    assert report["submodules"] == []
    assert report["dir_has_all"]
