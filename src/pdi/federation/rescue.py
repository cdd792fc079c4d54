"""The 1990s names of captured URLs answered from a capture somewhere in the network (legacy rescue).

The White House publications server cited pages as
``…/uri-res/I2R?urn:pdi://oma.eop.gov.us/1994/10/20/http%3a%2f%2fwww%2ewhitehouse%2egov%2f.html.1``
(PDI-GRAMMAR §2.4: the unique id encapsulates the URL; §2.11: ``I2R``). That
archive is gone; what survives are captures of the same URL, under other
names, in other archives. :func:`relation` says how a capture stands to the
version the old name asked for (same day, later, earlier: the exact
version was never kept); :class:`RemoteCaptures` asks the resolvers the
registries name, then the archives its mirrors name (origins and peers), each through its Memento TimeGate (RFC 7089 §4.1:
``/timegate/<URL>`` with ``Accept-Datetime``, ``302`` to the nearest
memento), and trusts only an answer that points back into that same
resolver's ``uri-res/N2R``, and only when that N2R answers itself: asked
first (``HEAD`` with :data:`~pdi.federation.routes.PROBE_HEADER`, redirects
not followed), one that sends the reader on to a resolver's ``uri-res/``
(back here, or round a loop: a TimeGate may name a capture its resolver
does not hold), answers ``5xx`` or ``4xx``, or does not answer in time is
skipped (logged) for the next resolver's capture.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urljoin

from pdi._refusals import IDENTITY, unreached
from pdi._wording import clipped
from pdi.federation.authorities import FETCH_SECONDS, PROBE_SECONDS, Authorities
from pdi.federation.routes import PROBE_HEADER
from pdi.interop.memento import http_datetime

__all__ = ["MAX_ASKED", "RemoteCapture", "RemoteCaptures", "relation"]

#: Resolvers asked for one URL, at most (each within the probe and fetch deadlines, all within :data:`ALL_SECONDS`).
MAX_ASKED = 8
#: Seconds all the asking of one URL may take.
ALL_SECONDS = 8.0
#: How long a URL no resolver holds is remembered as such.
NONE_SECONDS = 60.0

log = logging.getLogger("pdi.federation")


def relation(asked: datetime.date | None, captured: datetime.date | None) -> str:
    """How a capture of ``captured`` stands to the version of ``asked``: ``same-day``, ``later`` or ``earlier``."""
    if asked is None or captured is None or captured == asked:
        return "same-day"
    return "later" if captured > asked else "earlier"


@dataclass(frozen=True)
class RemoteCapture:
    """A memento another resolver holds: that resolver's base URL and the memento's N2R URL there."""

    base: str
    location: str


class RemoteCaptures:
    """The capture of a URL nearest a day, from the first resolver (in the registries' order) that holds one."""

    def __init__(self, authorities: Authorities) -> None:
        self.authorities = authorities
        self._none: dict[str, float] = {}
        self._lock = threading.Lock()

    def nearest(self, url: str, day: datetime.date | None, selves: Sequence[str] = ()) -> RemoteCapture | None:
        """The capture of ``url`` nearest ``day`` that a resolver holds, never asked of this resolver (one of
        ``selves``, the base URLs it is reached at, or one its probe found to be it: what it holds was looked for
        already)."""
        from pdi import _answer_head as answer_head  # here: httpx is slow to import

        now = time.monotonic()
        with self._lock:
            if self._none.get(url, 0.0) > now:
                return None
        deadline = now + ALL_SECONDS
        headers = {"accept": "*/*"}
        if day is not None:
            headers["accept-datetime"] = http_datetime(datetime.datetime.combine(day, datetime.time(), datetime.UTC))
        asked = 0
        # a peer that announced itself (public_only) is asked at a public address only, whatever its name
        # resolves to by then
        for base, public_only in self.authorities.every_resolver():
            if asked >= MAX_ASKED or time.monotonic() > deadline:
                break
            # never this resolver: one of its own base URLs, or one whose answer to the probe was its own
            if self.authorities.is_self(base, selves) or not self.authorities.is_up(
                    base, public_only=public_only) or self.authorities.is_self(base):
                continue
            asked += 1
            try:
                seconds = min(FETCH_SECONDS, max(0.5, deadline - time.monotonic()))
                # its head within them too (httpx bounds each read of it, not the whole: pdi._answer_head)
                with answer_head.client(seconds, timeout=seconds, follow_redirects=False,
                                        public_only=public_only) as client, \
                        client.stream("GET", f"{base}timegate/{url}", headers=headers) as answer:
                    # only the status and Location are read: the body, whatever its size, never is
                    status, location = answer.status_code, answer.headers.get("location", "")
            except unreached():
                continue
            if status in (302, 303) and location.startswith(f"{base}uri-res/N2R?") and len(location) <= 8000:
                why = _not_answered(location, public_only, deadline)
                if why is None:
                    return RemoteCapture(base, location)
                log.warning("pdi: the capture of %s at %s is not sent to: %s", clipped(url, 200), base, why)
        with self._lock:
            if len(self._none) > 4096:
                self._none.clear()
            self._none[url] = time.monotonic() + NONE_SECONDS
        return None


def _not_answered(location: str, public_only: bool, deadline: float) -> str | None:
    """Why the resolver's N2R at ``location`` (its TimeGate's answer) does not answer a reader itself, or ``None``
    when it does: ``2xx``, or ``3xx`` to what is no resolver's ``uri-res/`` (its own blobs). ``HEAD`` with the
    route probe's header, redirects not followed, within :data:`~pdi.federation.authorities.PROBE_SECONDS` (and
    ``deadline``), its body never read."""
    from pdi import _answer_head as answer_head  # here: httpx is slow to import
    seconds = min(PROBE_SECONDS, max(0.5, deadline - time.monotonic()))
    try:
        with answer_head.client(seconds, timeout=seconds, follow_redirects=False, public_only=public_only) as client, \
                client.stream("HEAD", location, headers={PROBE_HEADER: "1", **IDENTITY}) as answer:
            status, onward = answer.status_code, answer.headers.get("location", "")
    except unreached():
        return "its N2R did not answer in time"
    if 200 <= status < 300:
        return None
    if 300 <= status < 400:
        try:
            to = urljoin(location, onward.strip())
        except ValueError:
            return f"its N2R answers {status} to no URL"
        if "/uri-res/" not in to:
            return None  # to its own blobs (or a store's): the reader gets the octets there
        return f"its N2R sends the reader on ({status} to {clipped(to, 200)}), not answering itself"
    return f"its N2R answers {status}"
