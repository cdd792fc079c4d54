"""Where else a held name lives: the origin of a mirrored series (``Link: <origin N2R>; rel="canonical"`` on every
N2R answer of its names) and every recorded peer (each one's N2R URL in ``N2Ls``, after this resolver's own).

Read from the archive's recorded mirrors (:meth:`pdi.archive.Archive.mirrors`,
``pdi mirror add``; ``--peer`` on the origin's side), at most once every
:data:`REFRESH_SECONDS`, so a mirror added while the resolver runs is
answered for soon after (an answer already in the response cache keeps
its headers until it is dropped). Names of a series this archive neither
holds nor mirrors are not this module's.

The recorded mirrors are read holding no lock of this module's: reading takes
the catalog's lock, and a thread holding that lock (a resolver's snapshot)
asks here too, so a lock held across the read would be taken in the other
order by another thread, and the two would wait for each other for good. The
event loop reads them only at its first asking:
:meth:`Locations.origin_at_once` then answers from what was read last and,
when that is due to be read again, has a thread of its own read it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from pdi._wording import public_url
from pdi.archive import Archive
from pdi.server.protocol.rfc2169 import n2r_url

__all__ = ["REFRESH_SECONDS", "Locations"]

#: Seconds the recorded mirrors are trusted before they are read again.
REFRESH_SECONDS = 5.0


class Locations:
    """The other archives holding each series, read from ``archive`` and kept :data:`REFRESH_SECONDS`."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        #: Each series' origin, and every archive holding each series: replaced whole, in one assignment.
        self._known: tuple[dict[str, str], dict[str, tuple[str, ...]]] = ({}, {})
        self._read_at = float("-inf")
        self._reading = threading.Lock()  # held by the one thread origin_at_once starts, never while waiting

    def _fresh(self) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
        """What is known, read again first when it is older than :data:`REFRESH_SECONDS` (two threads may both read
        it then: each gets what the catalog says; see the module's docstring for why no lock is held)."""
        if time.monotonic() - self._read_at < REFRESH_SECONDS:
            return self._known
        origins: dict[str, str] = {}
        holders: dict[str, list[str]] = {}
        for record in self.archive.mirrors():
            # listed to anyone (N2Ls, Link): never with a user or password an earlier pdi recorded in it
            listed = public_url(record.base_url)
            if record.role == "origin":
                origins[record.series] = listed
            holders.setdefault(record.series, []).append(listed)
        self._known = known = (origins, {series: tuple(bases) for series, bases in holders.items()})
        self._read_at = time.monotonic()
        return known

    def origin(self, series: str) -> str | None:
        """The base URL of the archive ``series`` is mirrored from, or ``None`` (this archive's own, or unknown)."""
        return self._fresh()[0].get(series)

    def origin_at_once(self, series: str) -> str | None:
        """:meth:`origin` as last read, without waiting for the catalog's lock once it was read: for the event loop.
        The first asking reads it (holding no lock of this module's, so it waits at most for a snapshot another
        thread holds, once a process); after that, when it is due to be read again, a thread of its own reads it
        (one at a time), and the answers after use what it read."""
        if self._read_at == float("-inf"):
            return self._fresh()[0].get(series)
        if time.monotonic() - self._read_at >= REFRESH_SECONDS and self._reading.acquire(blocking=False):
            threading.Thread(target=self._read_in_thread, name="pdi-mirrors", daemon=True).start()
        return self._known[0].get(series)

    def _read_in_thread(self) -> None:
        try:
            self._fresh()
        except Exception:  # a catalog busy or closing: what was read last stays, and is read again next time
            pass
        finally:
            self._reading.release()

    def others(self, series: str, own: str) -> tuple[str, ...]:
        """The base URLs of the other archives holding ``series`` (origin first), without ``own``."""
        mine = own.rstrip("/")
        return tuple(base for base in self._fresh()[1].get(series, ()) if base != mine)

    def headers(self, series: str, name: str, about: Mapping[str, str]) -> Mapping[str, str]:
        """``about`` with ``Link: <the origin's N2R of name>; rel="canonical"`` joined when ``series`` is mirrored."""
        origin = self.origin(series)
        if origin is None:
            return about
        link = f'<{n2r_url(origin, name)}>; rel="canonical"'
        return {**about, "Link": link + (", " + about["Link"] if "Link" in about else "")}
