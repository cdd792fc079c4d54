"""What Chromium loaded and rendered, written as MHTML by pdi's own writer (an edge's pure half).

``pdi capture --browser`` used to keep Chromium's ``Page.captureSnapshot`` MHTML,
which Chromium itself cannot fully reopen. Now the browser supplies two things and
:func:`pack_rendered` packs them exactly as ``pdi mhtml pack`` packs a folder
(:func:`pdi.capture.crawl.crawl` and :func:`pdi.capture.crawl.pack_crawl`):

- each frame's document as it stands after its scripts ran, serialized by the
  browser (:data:`SERIALIZE`: the nodes of the document, the doctype as it was,
  so quirks mode stays quirks mode), made inert as Chromium's own serializer
  makes it: no ``<script>``, no ``<noscript>`` (the page was shown with scripts
  on), no event handler attributes; written back in the document's own encoding
  (:func:`encode_html`: WHATWG "encode" with HTML character references for what
  it cannot encode), so every URL in it is asked for with the same query bytes;
- every response the page's targets received, as the DevTools Network domain
  recorded it (:class:`NetworkLog`: the URL asked for, the redirects, the final
  URL, the type and charset the server gave), with the body's bytes as the
  capture proxy saw them pass (:func:`recorded_body`: plain http, the chunks
  joined and a gzip or deflate coding undone, within the size limit); over https
  the proxy sees nothing but a tunnel, and the body is the one Chromium kept
  (``Network.getResponseBody``: bytes as they came for binary types, but text as
  Chromium decoded it, so it is written back in UTF-8 and labelled so).

The crawl then takes from these, and only these, what the page needs (style sheets,
images, fonts, frames, ``@import``\\ s): a URL the browser never loaded is missing,
as it was missing from the page.
"""

from __future__ import annotations

import asyncio
import base64
import re
import zlib
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from pdi._chunked import ChunkedError, Chunks
from pdi.capture.crawl import Crawl, crawl, pack_crawl
from pdi.capture.fetch import Fetched, Limits, Redirect
from pdi.charsets.sniff import lookup
from pdi.errors import NotFoundError
from pdi.mhtml.limits import Deadline
from pdi.mhtml.resolve import comparable
from pdi.mhtml.urlencoding import encode_or_fail

__all__ = ["SERIALIZE", "Document", "NetworkLog", "encode_html", "pack_rendered", "recorded_body", "response_body"]

_SURROGATE = re.compile("[\ud800-\udfff]")  # a JavaScript string may hold lone ones

# Runs in an isolated world of each frame (the page's own scripts cannot see or change it).
SERIALIZE = r"""(() => {
  const d = document;
  const out = [];
  for (const node of d.childNodes) {
    if (node.nodeType === Node.DOCUMENT_TYPE_NODE) {
      out.push('<!DOCTYPE ' + node.name + (node.publicId ? ' PUBLIC "' + node.publicId + '"' : '')
        + (node.systemId ? (node.publicId ? '' : ' SYSTEM') + ' "' + node.systemId + '"' : '') + '>');
    } else if (node.nodeType === Node.COMMENT_NODE) {
      out.push('<!--' + node.data + '-->');
    } else if (node.nodeType === Node.ELEMENT_NODE) {
      const copy = node.cloneNode(true);
      for (const inert of copy.querySelectorAll('script, noscript')) inert.remove();
      for (const element of [copy, ...copy.querySelectorAll('*')]) {
        for (const name of element.getAttributeNames()) {
          if (name.toLowerCase().startsWith('on')) element.removeAttribute(name);
        }
      }
      out.push(copy.outerHTML);
    }
  }
  return {url: d.URL, html: out.join('\n'), charset: d.characterSet, type: d.contentType};
})()"""


@dataclass(frozen=True)
class Document:
    """One frame's document as the browser serialized it (:data:`SERIALIZE`)."""

    url: str
    html: str
    charset: str
    media_type: str


def encode_html(text: str, charset: str) -> tuple[bytes, str]:
    """``text`` in the WHATWG encoding ``charset`` names (UTF-8 if none), and that encoding's name.

    What the encoding cannot encode becomes a decimal character reference (WHATWG
    Encoding "encode" with the ``html`` error mode, as a form is submitted).
    """
    encoding = lookup(charset) or "UTF-8"
    if encoding in ("UTF-8", "UTF-16BE", "UTF-16LE", "replacement"):
        return _SURROGATE.sub("\ufffd", text).encode("utf-8"), "UTF-8"
    pieces = encode_or_fail(text, encoding)
    return b"".join(p if isinstance(p, bytes) else b"&#%d;" % p for p in pieces), encoding


@dataclass
class _Request:
    urls: list[str]
    statuses: list[int] = field(default_factory=list)
    response: dict[str, Any] | None = None
    finished: bool = False


class NetworkLog:
    """The page's responses, from the DevTools Network events of each of its targets.

    :meth:`event` takes every event; :meth:`finished` names the requests whose body can
    be asked for (``Network.getResponseBody`` in the session that saw them);
    :meth:`add_body` gives a body; :meth:`responses` is what was loaded, by URL.
    """

    def __init__(self) -> None:
        self._requests: dict[tuple[str | None, str], _Request] = {}

    def event(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params", {})
        key = (message.get("sessionId"), str(params.get("requestId", "")))
        if method == "Network.requestWillBeSent":
            url = str(params.get("request", {}).get("url", ""))
            request = self._requests.get(key)
            if request is not None and "redirectResponse" in params:
                request.statuses.append(int(params["redirectResponse"].get("status", 0)))
                request.urls.append(url)
            elif request is None:
                self._requests[key] = _Request([url])
        elif method == "Network.responseReceived" and key in self._requests:
            self._requests[key].response = params.get("response", {})
        elif method == "Network.loadingFinished" and key in self._requests:
            self._requests[key].finished = True

    def finished(self, have: Collection[str] = ()) -> list[tuple[str | None, str]]:
        """``(session, requestId)`` of each request answered in full, in the order asked: one for
        each final URL (two sessions of one tab see the same request), none for a URL in
        ``have`` (``comparable`` form: bodies the proxy kept)."""
        seen = set(have)
        out: list[tuple[str | None, str]] = []
        for key, request in self._requests.items():
            if not request.finished or request.response is None:
                continue
            final = comparable(str(request.response.get("url") or request.urls[-1]))
            if final not in seen:
                seen.add(final)
                out.append(key)
        return out

    def responses(
        self, bodies: dict[tuple[str | None, str], tuple[bytes, bool]], recorded: dict[str, bytes] | None = None
    ) -> dict[str, Fetched]:
        """What was loaded, under every URL that led to it (``comparable`` form), first answer kept.

        ``bodies`` are Chromium's (bytes, and whether they are text it decoded);
        ``recorded`` the bodies as they passed the proxy, by URL: those win.
        """
        recorded = recorded or {}
        loaded: dict[str, Fetched] = {}
        for key, request in self._requests.items():
            response = request.response
            if response is None:
                continue
            final = str(response.get("url") or request.urls[-1])
            media, charset = _content_type(response)
            raw = recorded.get(comparable(final))
            if raw is not None:
                body = raw
            elif key in bodies:
                body, decoded = bodies[key]
                if decoded:
                    charset = "UTF-8"  # Chromium's text, written back in UTF-8
            else:
                continue
            redirects = tuple(
                Redirect(status, source, target)
                for status, source, target in zip(request.statuses, request.urls, request.urls[1:], strict=False)
            )
            for url in request.urls:
                fetched = Fetched(url, final, int(response.get("status", 0)), media, charset, body, redirects)
                loaded.setdefault(comparable(url), fetched)
        return loaded


def response_body(result: dict[str, Any]) -> tuple[bytes, bool]:
    """The bytes of a ``Network.getResponseBody`` answer, and whether they are text Chromium decoded."""
    body = str(result.get("body", ""))
    if result.get("base64Encoded"):
        return base64.b64decode(body), False
    return _SURROGATE.sub("\ufffd", body).encode("utf-8"), True


def recorded_body(head: bytes, body: bytes, limit: int) -> bytes | None:
    """The body of a plain-http answer as the proxy passed it: framing and content coding undone.

    ``None`` when it cannot be read back exactly (a coding other than gzip or deflate, a
    broken chunk, more than ``limit`` bytes once decoded): then Chromium's copy is used.
    """
    fields: dict[str, str] = {}
    for line in head.split(b"\r\n")[1:]:
        name, colon, value = line.partition(b":")
        if colon:
            key = name.strip().lower().decode("latin-1")
            fields[key] = (fields[key] + ", " if key in fields else "") + value.strip().decode("latin-1")
    if "chunked" in fields.get("transfer-encoding", "").lower():
        data = _unchunk(body)
        if data is None:
            return None
    else:
        data = body
        length = fields.get("content-length", "").strip(" \t")
        if length:
            # RFC 9110 §8.6: 1*DIGIT, ASCII (str.isdigit is true of "²", which int() refuses, as it does 4,301 digits)
            if re.fullmatch(r"[0-9]+", length) is None:
                return None  # no length: not to be read back exactly
            digits = length.lstrip("0") or "0"
            if len(digits) > 19 or len(body) < int(digits):
                return None  # cut short
            data = body[: int(digits)]
    coding = fields.get("content-encoding", "identity").strip(" \t").lower()
    if coding in ("", "identity"):
        return data if len(data) <= limit else None
    if coding not in ("gzip", "x-gzip", "deflate"):
        return None
    # wbits 47: a gzip or a zlib header, found by the header (RFC 1952, RFC 1950); -15:
    # the raw deflate some servers send as "deflate".
    for wbits in (47, -15):
        inflater = zlib.decompressobj(wbits)
        try:
            out = inflater.decompress(data, limit + 1)
        except zlib.error:
            continue
        if len(out) > limit or inflater.unconsumed_tail:
            return None  # more than the limit once decoded
        return out
    return None


def _unchunk(body: bytes) -> bytes | None:
    """The data of a chunked body (RFC 9112 §7.1), its framing read by :class:`pdi._chunked.Chunks` (spaces and
    tabs around a size passed over, as :mod:`pdi.interop.warc.coding` reads one; a size line as long as the body);
    ``None`` if it is malformed (a size line that is not one, a size of more than 16 hex digits, a chunk's data not
    followed by CRLF) or cut short before its last chunk. What follows the last chunk (its trailer section) is
    passed over, whatever it holds: the data is whole."""
    chunks = Chunks(max_line=len(body), spaces=True)
    out = bytearray()
    at = 0
    try:
        while True:
            at = chunks.framing(body, at, len(body))
            if not chunks.in_data:  # its last chunk read (what follows is not read), or the body cut short
                return bytes(out) if chunks.last else None
            if at + chunks.size > len(body):
                return None
            out += body[at:at + chunks.size]
            at += chunks.size
    except ChunkedError:
        return bytes(out) if chunks.last else None  # (past its last chunk: in the trailer section, not read)


def _content_type(response: dict[str, Any]) -> tuple[str | None, str | None]:
    headers = {str(k).lower(): str(v) for k, v in (response.get("headers") or {}).items()}
    value = headers.get("content-type")
    charset: str | None = None
    if value is not None:
        for param in value.split(";")[1:]:
            name, _, token = param.partition("=")
            if name.strip(" \t").lower() == "charset" and token.strip(" \t").strip('"'):
                charset = token.strip(" \t").strip('"')
    media = str(response.get("mimeType") or "") or None
    return media, charset


def pack_rendered(
    final_url: str,
    documents: list[Document],
    loaded: dict[str, Fetched],
    limits: Limits | None = None,
    deadline: Deadline | None = None,
) -> tuple[bytes, Crawl]:
    """The MHTML of the page at ``final_url``: its frames' ``documents`` and what it ``loaded``.

    An HTML document is taken as the browser serialized it; everything else (and a
    document that is not HTML) as it arrived. The first document is the page's own.
    Past ``deadline`` (the capture's) it stops, a :class:`~pdi.errors.LimitError`.
    """
    if deadline is not None:
        deadline.check()
    limits = limits or Limits()
    serialized: dict[str, Fetched] = {}
    for index, document in enumerate(documents):
        if document.media_type != "text/html" or not document.url.lower().startswith(("http:", "https:")):
            continue
        data, encoding = encode_html(document.html, document.charset)
        key = comparable(document.url)
        arrived = loaded.get(key)
        status = arrived.status if arrived is not None else 200
        serialized.setdefault(key, Fetched(document.url, document.url, status, "text/html", encoding, data))
        if index == 0:
            # The page itself, though a script moved its URL (history.pushState): labelled
            # with the URL it was loaded from, against which what it loaded was resolved.
            serialized[comparable(final_url)] = Fetched(final_url, final_url, status, "text/html", encoding, data)

    async def fetch(url: str) -> Fetched:
        key = comparable(url)
        found = serialized.get(key) or loaded.get(key)
        if found is None:
            raise NotFoundError(f"the browser did not load {url}")
        if found.url != url and key in serialized:
            return Fetched(url, found.final_url, found.status, found.media_type, found.charset, found.data)
        return found

    result = asyncio.run(crawl(final_url, fetch, limits=limits, deadline=deadline))
    return pack_crawl(result, deadline=deadline), result
