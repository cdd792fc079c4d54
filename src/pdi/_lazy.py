"""Lazy re-exports for a package's ``__init__`` (PEP 562), so importing one submodule does not import its siblings.

A package that gathers its submodules' public names imports them under
``if TYPE_CHECKING:`` for type checkers and, in that statement's ``else:``,
sets its ``__getattr__`` and ``__dir__`` from :func:`exports`, given a map
(a submodule, relative to the package -> the names it defines, separated by
spaces). A name is imported
from its submodule the first time it is asked for, then kept in the
package's namespace, so ``from pdi.capture.local import pack_path`` (or
``from pdi.capture import pack_path``) loads ``local`` and not the HTTP
client beside it. A name must not be a submodule's own name too: importing
that submodule would set the package's attribute to the module and hide the
re-export (``tests/test_lazy_exports.py`` checks every package).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def names_of(package: str, submodules: Mapping[str, str]) -> dict[str, str]:
    """Each re-exported name -> the full name of the submodule that defines it."""
    return {name: f"{package}.{module}" for module, names in submodules.items() for name in names.split()}


def exports(package: str, submodules: Mapping[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package ``package`` re-exporting its ``submodules``' names."""
    names = names_of(package, submodules)

    def __getattr__(name: str) -> object:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
