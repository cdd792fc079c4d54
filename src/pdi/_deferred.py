"""Standard-library modules a command imports but may never use, loaded when first used.

:func:`defer` puts a stand-in for each named module in :data:`sys.modules`,
so an ``import`` of it (by pdi or by the standard library itself) finds the
stand-in and loads nothing. The first attribute asked of the stand-in (a
function, a class, ``__file__``) imports the real module, which answers that
and every later question: the stand-in forwards to it, and :data:`sys.modules`
holds the real module from then on. A module already imported is left as it is.

``pdi get`` uses it (:mod:`pdi.cli.fast_get`): :mod:`dataclasses` imports
:mod:`inspect` (and with it :mod:`ast`, :mod:`dis`, :mod:`tokenize`) only to
word the docstring of a class that has none, and :mod:`urllib.parse` imports
:mod:`ipaddress` only for a URL whose host is in brackets; together they were
a tenth of the command's start-up. ``tests/test_cli_startup_imports.py``
checks that reading a text by name never loads them.
"""

from __future__ import annotations

import importlib
import sys
import threading
from types import ModuleType

_lock = threading.Lock()


class _Deferred(ModuleType):
    """A module's stand-in in :data:`sys.modules`; any attribute it lacks is the real module's (imported then)."""

    def __getattr__(self, attribute: str) -> object:
        return getattr(_real(self), attribute)


def _real(stand_in: _Deferred) -> ModuleType:
    """The module ``stand_in`` stands for, imported the first time it is asked for."""
    name = stand_in.__name__
    with _lock:
        real = vars(stand_in).get("_deferred_real")
        if real is None:
            if sys.modules.get(name) is stand_in:
                del sys.modules[name]
            real = importlib.import_module(name)
            vars(stand_in)["_deferred_real"] = real
    return real


def defer(*names: str) -> None:
    """Put a stand-in for each module of ``names`` not imported yet in :data:`sys.modules` (see the module's text)."""
    for name in names:
        if name not in sys.modules:
            sys.modules[name] = _Deferred(name)


def loaded(name: str) -> bool:
    """Whether the module ``name`` has been imported for real (not only deferred): for tests."""
    module = sys.modules.get(name)
    return module is not None and not (isinstance(module, _Deferred) and "_deferred_real" not in vars(module))
