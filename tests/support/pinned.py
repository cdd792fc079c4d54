"""Checks that a pinned library is the release whose private parts pdi relies on, shared by its fingerprint tests.

A module of pdi that extends a library's internals lists them (``NAME_INTERNALS``:
each part and what relies on it); its test holds the SHA-256 of the files
(from the release wheel's ``RECORD``) and of each part's source, and fails
naming the part that changed and what in pdi relies on it
(``tests/test_fragments_markup_html5lib.py``, ``tests/server/test_server_uvicorn_internals.py``).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest


def resolve_dotted(name: str) -> Any:
    """The object of that module and qualified name (``package.module.Class.method``)."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            found = getattr(found, part)
        return found
    raise LookupError(name)


@dataclass(frozen=True)
class Pinned:
    """A library pinned at ``version``, whose parts ``user`` (a pdi module) relies on."""

    library: str
    version: str
    directory: Path
    user: str
    record: dict[str, str]
    fingerprints: dict[str, tuple[str | None, str]]
    relied_on: Callable[[str], str]
    resolve: Callable[[str], Any] = resolve_dotted

    def check_file(self, path: str, module: str) -> None:
        """The file ``path`` is byte for byte the release wheel's (its ``RECORD`` digest)."""
        digest = hashlib.sha256((self.directory / path).read_bytes()).digest()
        parts = sorted(name for name in self.fingerprints if name.startswith(module + "."))
        assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == self.record[path], (
            f"{self.library}/{path} is not {self.library} {self.version}'s (SHA-256 differs from the {self.version}"
            f" wheel's RECORD); re-check what {self.user} takes from {module}: {', '.join(parts) or 'its imports'}"
        )

    def check_part(self, name: str) -> None:
        """The part ``name`` exists where it was, with the signature and the source it had in the release."""
        signature, digest = self.fingerprints[name]
        try:
            found = self.resolve(name)
        except (LookupError, AttributeError) as exc:
            pytest.fail(f"{self.library} has no {name} ({exc!r}); {self.user} relies on it: {self.relied_on(name)}")
        assert f"{found.__module__}.{found.__qualname__}" == name, (
            f"{name} is now {found.__module__}.{found.__qualname__}"
        )
        if signature is not None:
            assert str(inspect.signature(found)) == signature, (
                f"{self.library}'s {name} now takes {inspect.signature(found)}, not {signature} as in"
                f" {self.version}; re-check {self.relied_on(name)}"
            )
        source = inspect.getsource(found)
        assert hashlib.sha256(source.encode("utf-8")).hexdigest() == digest, (
            f"{self.library}'s {name} is not {self.library} {self.version}'s (its source's SHA-256 differs);"
            f" re-check {self.relied_on(name)}"
        )
