"""Capturing web pages whole (the network edge, issue 6).

- :func:`capture` fetches a page and everything it needs with ``httpx``
  (:mod:`pdi.capture.fetch`: time-outs, size limits, a concurrency limit,
  redirects recorded, private addresses refused unless ``allow_private``) and
  packs it as RFC 2557 MHTML with :func:`pdi.mhtml.write.build`.
- :func:`capture_with_browser` lets Debian's Chromium load the page (for pages
  that build themselves with JavaScript) and writes what it loaded and rendered
  (each frame's document after its scripts) with the same writer
  (:mod:`pdi.capture.browser`, :mod:`pdi.capture.rendered`); every connection Chromium makes goes through
  pdi's forward proxy, which applies the same address check
  (:mod:`pdi.capture.proxy`).
- :func:`pack_path` and :func:`unpack_to` are the file-system side
  (:mod:`pdi.capture.local`).
- :func:`pdi.capture.deposit.deposit_capture` deposits a capture in the
  archive: one document per URL and day, a new version only when the page's
  parts changed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pdi._lazy import exports
from pdi.errors import LimitError

if TYPE_CHECKING:
    from pdi.capture.browser import BrowserCapture, capture_with_browser
    from pdi.capture.crawl import Crawl, Failure
    from pdi.capture.fetch import Exchange, Limits, Redirect, check_address
    from pdi.capture.local import Packed, media_type_for_name, pack_path, unpack_to
else:  # loaded when first asked for (pdi._lazy): pack_path loads no browser
    __getattr__, __dir__ = exports(__name__, {
        "browser": "BrowserCapture capture_with_browser", "crawl": "Failure",
        "fetch": "Exchange Limits Redirect check_address",
        "local": "Packed media_type_for_name pack_path unpack_to",
    })

__all__ = [
    "BrowserCapture", "Captured", "Exchange", "Failure", "Limits", "Packed", "Redirect", "capture",
    "capture_with_browser", "check_address", "media_type_for_name", "pack_path", "unpack_to",
]


@dataclass(frozen=True)
class Captured:
    """A captured page: the MHTML, where it came from, how it got there, what is missing."""

    mhtml: bytes
    url: str
    final_url: str
    redirects: tuple[Redirect, ...]
    parts: int
    failures: tuple[Failure, ...]


def capture(
    url: str,
    *,
    allow_private: bool = False,
    limits: Limits | None = None,
    progress: Callable[[int, int], None] | None = None,
    exchanges: list[Exchange] | None = None,
) -> Captured:
    """Fetch ``url`` and what it needs, and pack it as MHTML (deterministic for the same bytes).

    All of it, the reading and packing of what was fetched too, within ``limits.total_timeout``
    seconds (past them a :class:`~pdi.errors.LimitError`). ``exchanges``, when given, receives every HTTP exchange of the capture as
    it went over the wire (for :func:`pdi.interop.warc.write_exchanges`).
    """
    import asyncio

    from pdi.capture.crawl import crawl, pack_crawl
    from pdi.capture.fetch import Fetcher, Limits
    from pdi.mhtml.limits import Deadline

    limits = limits or Limits()
    deadline = Deadline.after(limits.total_timeout, f"capturing {url} took longer than {limits.total_timeout:g} s")

    async def run() -> Crawl:
        async with Fetcher(allow_private=allow_private, limits=limits, exchanges=exchanges) as fetcher:
            return await crawl(url, fetcher.fetch, limits=limits, progress=progress, deadline=deadline)

    async def bounded() -> Crawl:
        # The fetching waits; the reading of what was fetched is work on the loop, which no timeout can
        # interrupt: the crawl looks at the deadline as it reads.
        try:
            return await asyncio.wait_for(run(), timeout=max(deadline.left(), 0))
        except TimeoutError as exc:
            raise LimitError(deadline.words) from exc

    result = asyncio.run(bounded())
    return Captured(
        mhtml=pack_crawl(result, deadline=deadline),
        url=url,
        final_url=result.root.final_url,
        redirects=result.root.redirects + tuple(hop for r in result.resources for hop in r.redirects),
        parts=1 + len(result.resources),
        failures=result.failures,
    )
