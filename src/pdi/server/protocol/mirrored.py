"""Where else a held name lives: the origin of a mirrored series (``Link: <origin N2R>; rel="canonical"`` on every
N2R answer of its names) and every recorded peer (each one's N2R URL in ``N2Ls``, after this resolver's own).

Read from the archive's recorded mirrors (:meth:`pdi.archive.Archive.mirrors`,
``pdi mirror add``; ``--peer`` on the origin's side), at most once every
:data:`REFRESH_SECONDS`, so a mirror added while the resolver runs is
answered for soon after (an answer already in the response cache keeps
its headers until it is dropped). Names of a series this archive neither
holds nor mirrors are not this module's.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from pdi.archive import Archive
from pdi.server.protocol.rfc2169 import n2r_url

__all__ = ["REFRESH_SECONDS", "Locations"]

#: Seconds the recorded mirrors are trusted before they are read again.
REFRESH_SECONDS = 5.0


class Locations:
    """The other archives holding each series, read from ``archive`` and kept :data:`REFRESH_SECONDS`."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self._origins: dict[str, str] = {}
        self._holders: dict[str, tuple[str, ...]] = {}
        self._read_at = float("-inf")
        self._lock = threading.Lock()

    def _fresh(self) -> None:
        if time.monotonic() - self._read_at < REFRESH_SECONDS:
            return
        with self._lock:
            if time.monotonic() - self._read_at < REFRESH_SECONDS:
                return
            origins: dict[str, str] = {}
            holders: dict[str, list[str]] = {}
            for record in self.archive.mirrors():
                if record.role == "origin":
                    origins[record.series] = record.base_url
                holders.setdefault(record.series, []).append(record.base_url)
            self._origins = origins
            self._holders = {series: tuple(bases) for series, bases in holders.items()}
            self._read_at = time.monotonic()

    def origin(self, series: str) -> str | None:
        """The base URL of the archive ``series`` is mirrored from, or ``None`` (this archive's own, or unknown)."""
        self._fresh()
        return self._origins.get(series)

    def others(self, series: str, own: str) -> tuple[str, ...]:
        """The base URLs of the other archives holding ``series`` (origin first), without ``own``."""
        self._fresh()
        mine = own.rstrip("/")
        return tuple(base for base in self._holders.get(series, ()) if base != mine)

    def headers(self, series: str, name: str, about: Mapping[str, str]) -> Mapping[str, str]:
        """``about`` with ``Link: <the origin's N2R of name>; rel="canonical"`` joined when ``series`` is mirrored."""
        origin = self.origin(series)
        if origin is None:
            return about
        link = f'<{n2r_url(origin, name)}>; rel="canonical"'
        return {**about, "Link": link + (", " + about["Link"] if "Link" in about else "")}
