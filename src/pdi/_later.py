"""``dataclass``, made when the class is first used rather than when its module is imported.

:func:`dataclasses.dataclass` writes each class's ``__init__``, ``__repr__``,
``__eq__``, ``__hash__`` and (frozen) ``__setattr__`` as source text and
compiles it: about half a millisecond a class. The archive's modules define
some fifty records, and a command uses a few of them, so at start-up most of
that work is for nothing (``pdi get`` of a small text spent a quarter of its
time on it).

:func:`dataclass` here takes the same arguments and gives the same class:
the very class object, processed by :func:`dataclasses.dataclass` with the
same options, only when its first instance is made instead of at once.
Until then the class has a stand-in ``__init__`` (and ``__setstate__``, for
an instance :mod:`pickle` makes) that does the processing under a lock,
is replaced by the real one in one step (:func:`made`: threads making
the first instances together never find the class without one) and goes
on as it. A module uses it as::

    if TYPE_CHECKING:
        from dataclasses import dataclass
    else:
        from pdi._later import dataclass

so type checkers see :func:`dataclasses.dataclass` itself. What cannot wait is
done at once, as :func:`dataclasses.dataclass` would: ``slots=True`` (which
makes a new class), ``init=False`` or a class with its own ``__init__`` or
``__setstate__``; a waiting base is
made when a subclass is defined (a subclass's fields start with its
bases'). Asking
:func:`dataclasses.fields` or :func:`dataclasses.is_dataclass` about a class
(not an instance) first needs :func:`made`. ``tests/test_later_dataclass.py``
checks every record made this way against :func:`dataclasses.dataclass`'s
own.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T", bound=type)
V = TypeVar("V")

#: What a class's stand-ins and its instances' layout put in its namespace (not copied to a twin).
_OWN = frozenset({"__init__", "__setstate__", "__dict__", "__weakref__"})
#: Classes not yet made -> the options to make them with.
_waiting: dict[type, dict[str, Any]] = {}
_lock = threading.RLock()


def made(cls: T) -> T:
    """``cls``, processed by :func:`dataclasses.dataclass` now if it is still waiting.

    In a process of one thread (a command) the stand-ins are removed and
    :func:`dataclasses.dataclass` writes the class's ``__init__`` itself.
    Otherwise the stand-in ``__init__`` stays until the real one replaces it in one
    step, so a thread that makes an instance meanwhile always finds one of
    the two (the stand-in waits for the lock): ``dataclasses`` leaves a
    class's own ``__init__`` alone, so the real one is written for a
    throw-away twin of the class (same bases, body and ``frozen``/``kw_only``,
    which are all an ``__init__`` depends on) and moved over. (A base's
    ``__init_subclass__`` sees the twin too: no base of the classes made
    here has one of its own.)
    """
    with _lock:
        options = _waiting.get(cls)
        if options is None:
            return cls
        if threading.active_count() == 1:  # no other thread to find the class between its two __init__s
            delattr(cls, "__init__")
            delattr(cls, "__setstate__")
            dataclasses.dataclass(cls, **options)  # __init__ written by dataclasses itself: no twin needed
            del _waiting[cls]
            return cls
        body = {name: value for name, value in vars(cls).items() if name not in _OWN}
        body["__qualname__"] = cls.__qualname__
        twin: Any = dataclasses.dataclass(
            type(cls)(cls.__name__, cls.__bases__, body), init=True, repr=False, eq=False, match_args=False,
            frozen=options.get("frozen", False), kw_only=options.get("kw_only", False),
        )
        undocumented = not cls.__doc__
        dataclasses.dataclass(cls, **options)  # everything but __init__, which is the stand-in's
        setattr(cls, "__init__", vars(twin)["__init__"])  # noqa: B010 (the stand-in replaced at once)
        if undocumented:  # dataclasses wrote the stand-in's signature; the twin's is the real one
            cls.__doc__ = twin.__doc__
        delattr(cls, "__setstate__")
        del _waiting[cls]
    return cls


def filled(cls: type[V], values: dict[str, Any]) -> V:
    """An instance of the frozen dataclass ``cls`` (made here, not ``slots``, no ``__post_init__``) whose fields are
    ``values``, which names every field, its defaults too: ``cls(**values)``, made without calling its ``__init__``,
    whose ``object.__setattr__`` a field is most of what a record of many fields costs (a first-asking N2R makes
    two of 14 and 7 fields; :meth:`pdi.archive.sqlite.SQLiteStore.public_serial_version`). Equal to, and hashed
    as, the instance ``__init__`` makes (``tests/test_later_dataclass.py``)."""
    if cls in _waiting:
        made(cls)
    instance: V = object.__new__(cls)
    object.__setattr__(instance, "__dict__", values)
    return instance


def waiting() -> list[type]:
    """The classes not made yet (for tests)."""
    with _lock:
        return list(_waiting)


def _wait(cls: T, options: dict[str, Any]) -> T:
    for base in reversed(cls.__mro__[1:]):  # a subclass's fields start with its bases'
        made(base)
    if (options.get("slots") or options.get("init") is False
            or not {"__init__", "__setstate__"}.isdisjoint(vars(cls))):
        made_now: Any = dataclasses.dataclass(cls, **options)
        return made_now  # type: ignore[no-any-return]

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        init: Callable[..., None] = vars(made(cls))["__init__"]  # the real one, now
        init(self, *args, **kwargs)

    def __setstate__(self: Any, state: Any) -> None:  # an instance unpickled before any was made here
        made(cls)
        restore = getattr(self, "__setstate__", None)
        if restore is not None:
            restore(state)
            return
        state, slots = state if isinstance(state, tuple) and len(state) == 2 else (state, None)
        if state:
            vars(self).update(state)
        for name, value in (slots or {}).items():
            object.__setattr__(self, name, value)

    with _lock:
        _waiting[cls] = options
        setattr(cls, "__init__", __init__)  # noqa: B010 (a class's method, replaced)
        setattr(cls, "__setstate__", __setstate__)  # noqa: B010
    return cls


def dataclass(cls: T | None = None, /, **options: Any) -> T | Callable[[T], T]:
    """:func:`dataclasses.dataclass` with the same options, run when the class is first instantiated."""
    if cls is None:
        return lambda later: _wait(later, options)
    return _wait(cls, options)
