"""The layering rules of ``ARCHITECTURE.md`` that an import scan can check (issue 23).

Read from ``src/pdi`` with :mod:`ast`, never imported:

* **No module imports another package's private name.** A *package* here is
  a directory: the modules in one directory of ``src/pdi`` (its
  ``__init__.py`` among them) are one package, and a subdirectory is a
  package of its own (``pdi/archive/blobs`` is not ``pdi/archive``). A module
  may import a ``_private`` name (``from X import _y``) defined in a module
  of its own directory only; a private *module* (``import X._y``,
  ``from X._y import z``, ``from X import _y`` where ``_y`` is a module) may
  be imported from anywhere inside ``X``'s own directory tree only
  (``pdi._wording`` from anywhere in ``pdi``; ``pdi.identifier._pdi`` only
  from ``pdi/identifier/…``). ``module._y`` read through a name bound to an
  imported module counts as importing ``_y``. Only pdi's own modules are
  checked (a third-party library's internals are pinned and fingerprinted
  instead, as html5lib's are).
* **Nothing outside ``pdi/archive/`` reaches around** :class:`pdi.archive.Archive`:
  no ``.store`` or ``._store`` attribute is read outside that directory
  (the catalog is the archive's; the edges use its public methods).

The cases other engineers' areas still have are named in
:data:`TEMPORARY_EXCEPTIONS` with the area that owns them; each must still
occur (a fixed one is taken off the list).
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
PDI = SRC / "pdi"

#: (importing module, "defining module:name") -> the area (OWNERS.md) that is to remove it.
TEMPORARY_EXCEPTIONS: dict[tuple[str, str], str] = {
}


@dataclass(frozen=True)
class Module:
    name: str  # pdi.archive.naming
    path: Path

    @property
    def directory(self) -> Path:
        return self.path.parent

    @property
    def package(self) -> str:
        """The dotted name of the module's directory (its package)."""
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]


def modules(root: Path = PDI) -> list[Module]:
    found = []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found.append(Module(".".join(parts), path))
    return found


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_path(dotted: str, src: Path) -> Path | None:
    """The file or package directory of pdi's module ``dotted``, if it is one."""
    base = src.joinpath(*dotted.split("."))
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _resolve(module: Module, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    package = module.package.split(".")
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _inside(module: Module, owner: str) -> bool:
    return module.name == owner or module.name.startswith(owner + ".")


def violations(src: Path = SRC) -> list[tuple[str, str, str]]:
    """Every (importing module, ``defining:name``, why) the rules refuse under ``src/pdi``."""
    found: list[tuple[str, str, str]] = []
    for module in modules(src / "pdi"):
        tree = ast.parse(module.path.read_text(encoding="utf-8"), str(module.path))
        aliases: dict[str, str] = {}  # a local name bound to one of pdi's modules -> that module

        def private_module(dotted: str, what: str, module: Module = module) -> None:
            parts = dotted.split(".")
            for i, part in enumerate(parts):
                if _is_private(part) and not _inside(module, ".".join(parts[:i])):
                    found.append((module.name, f"{'.'.join(parts[:i])}:{part}", f"{what}: a private module"))
                    return

        def private_name(defining: str, name: str, module: Module = module) -> None:
            if _module_path(f"{defining}.{name}", src) is not None:
                private_module(f"{defining}.{name}", f"from {defining} import {name}")
                return
            path = _module_path(defining, src)
            if path is not None and path.parent != module.directory:
                found.append((module.name, f"{defining}:{name}", "a private name of another package"))

        nodes = list(ast.walk(tree))  # walked once: the imports bind the aliases the attributes are read through
        for node in nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] != "pdi":
                        continue
                    private_module(alias.name, f"import {alias.name}")
                    aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else "pdi"
            elif isinstance(node, ast.ImportFrom):
                source = _resolve(module, node)
                if source.split(".")[0] != "pdi":
                    continue
                private_module(source, f"from {source} import …")
                for alias in node.names:
                    if _is_private(alias.name):
                        private_name(source, alias.name)
                    if _module_path(f"{source}.{alias.name}", src) is not None:
                        aliases[alias.asname or alias.name] = f"{source}.{alias.name}"
        for node in nodes:
            if isinstance(node, ast.Attribute):
                if (isinstance(node.value, ast.Name) and node.value.id in aliases and _is_private(node.attr)):
                    private_name(aliases[node.value.id], node.attr)
                if node.attr in ("store", "_store") and not _inside(module, "pdi.archive"):
                    found.append((module.name, f"{ast.unparse(node)}", "reaches around Archive to its catalog"))
    return found


@functools.cache
def violations_in_pdi() -> tuple[tuple[str, str, str], ...]:
    """:func:`violations` of this checkout's ``src/pdi``, scanned once for the tests of this module (seconds each)."""
    return tuple(violations())


def test_no_module_imports_another_packages_private_name_or_reaches_around_the_archive() -> None:
    found = [v for v in violations_in_pdi() if (v[0], v[1]) not in TEMPORARY_EXCEPTIONS]
    assert found == [], "\n".join(f"{where} uses {what} ({why})" for where, what, why in found)


def test_each_named_exception_is_still_needed() -> None:
    seen = {(where, what) for where, what, _ in violations_in_pdi()}
    stale = [f"{where} -> {what} ({area})" for (where, what), area in TEMPORARY_EXCEPTIONS.items()
             if (where, what) not in seen]
    assert stale == [], "fixed: take these off TEMPORARY_EXCEPTIONS:\n" + "\n".join(stale)


def test_the_scan_finds_each_kind_of_violation(tmp_path: Path) -> None:
    # a throwaway tree with one module of each kind, checked by the same scan
    root = tmp_path / "pdi"
    files = {
        "__init__.py": "",
        "_wording.py": "def plural() -> None: ...\n",
        "low.py": "_SECRET = 1\nPUBLIC = 2\n",
        "core/__init__.py": "",
        "core/_inner.py": "X = 1\n",
        "core/one.py": "_HELPER = 1\n",
        "core/two.py": "from pdi.core.one import _HELPER\nfrom pdi.core import _inner\nfrom pdi import _wording\n",
        "edge/__init__.py": "",
        "edge/uses.py": (
            "from pdi.low import _SECRET, PUBLIC\n"
            "from pdi.core._inner import X\n"
            "import pdi.low as low\n"
            "from pdi import low as again\n"
            "print(low._SECRET, again.PUBLIC)\n"
            "def f(archive):\n    return archive.store.get_series('a')\n"
        ),
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    found = {(where, what) for where, what, _ in violations(tmp_path)}
    assert found == {
        ("pdi.edge.uses", "pdi.low:_SECRET"),
        ("pdi.edge.uses", "pdi.core:_inner"),
        ("pdi.edge.uses", "archive.store"),
    }
