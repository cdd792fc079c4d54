"""A withdrawal made by another writer while a deposit's octets are staged: between the deposit's first checks
(which find the name in service) and its write transaction, whose own check must refuse it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import pytest

from pdi.archive import Archive


def withdraw_while_staging(monkeypatch: pytest.MonkeyPatch, archive: Archive, location: str, clock: Any,
                           name: str, reason: str) -> None:
    """Make ``archive``'s next staging of octets withdraw ``name`` (for ``reason``) through a second archive on
    ``location``, its own connections, once the octets are staged; ``monkeypatch.undo()`` ends it."""
    store = archive.store
    real = store._stage

    @contextmanager
    def staged_then_withdrawn(*args: Any) -> Iterator[Any]:
        with real(*args) as pins:
            other = Archive.open(location, clock=clock)
            try:
                other.withdraw(name, reason)
            finally:
                other.close()
            yield pins

    def stage(*args: Any) -> AbstractContextManager[Any]:
        return staged_then_withdrawn(*args)

    monkeypatch.setattr(store, "_stage", stage)
