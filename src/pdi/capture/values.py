"""What a capture is bounded by and what it fetched: values, with nothing of HTTP imported.

:mod:`pdi.capture.fetch` fetches over HTTP (httpx) and gives these; a WARC import's crawl
(:mod:`pdi.interop.warc.pages`) fetches from the file and gives the same, and imports them
from here, not httpx (a fifth of a second of ``pdi import``'s start: issue 24).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field

__all__ = ["Exchange", "Fetched", "Limits", "Redirect"]


@dataclass(frozen=True)
class Limits:
    """Bounds of one capture. Sizes in bytes, times in seconds."""

    connect_timeout: float = 10.0
    read_timeout: float = 20.0
    total_timeout: float = 120.0
    max_resource_bytes: int = 50 * 1024 * 1024
    max_total_bytes: int = 200 * 1024 * 1024
    max_resources: int = 500
    max_references: int = 100_000  # read from all the pages and style sheets of one capture
    max_label_octets: int = 8 << 20  # the URLs (with fragments) the parts are labelled with, all together
    concurrency: int = 6
    max_redirects: int = 10
    max_depth: int = 6  # frames within frames, @import within @import


@dataclass(frozen=True)
class Redirect:
    """One hop: ``status`` answered for ``source`` pointed to ``target``."""

    status: int
    source: str
    target: str


@dataclass(frozen=True)
class Fetched:
    """One resource as fetched: ``url`` as asked for, ``final_url`` after redirects."""

    url: str
    final_url: str
    status: int
    media_type: str | None
    charset: str | None
    data: bytes = field(repr=False)
    redirects: tuple[Redirect, ...] = field(default=())


@dataclass(frozen=True)
class Exchange:
    """One HTTP exchange as it went over the wire, for a WARC (:func:`pdi.interop.warc.write_exchanges`).

    ``body`` is the response body as sent (content codings kept), without
    its chunked transfer coding, which httpx has already undone.
    """

    url: str
    date: datetime.datetime
    method: str
    request_headers: tuple[tuple[str, str], ...]
    http_version: str  # the response's (the request always went as HTTP/1.1)
    status: int
    reason: str
    response_headers: tuple[tuple[str, str], ...]
    body: bytes = field(repr=False)
    address: str | None = None
