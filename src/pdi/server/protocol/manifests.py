"""``GET /api/manifest`` (a series' names and SHA-256 digests, a day or every day, signed), ``GET /api/keys``
(the archive's public key, a JWK set; also at ``/.well-known/pdi-keys``) and ``GET /api/element-index`` (the
parse a manifest signs the digest of).

A manifest page is a compact JWS (RFC 7515 §7.1, ``application/jose``,
§9.2.1) signed with EdDSA (RFC 8037 §3.1) by the archive's key
(:mod:`pdi.archive.signing_key`), whose payload :mod:`pdi.signing` writes
from :meth:`pdi.archive.Archive.manifest_page`. It lists what the reader may
see (:mod:`pdi.archive.access`): an anonymous reader only public names, a
token's holder its series' private and embargoed ones too; a series the
reader may not read is ``403`` (``404`` if hidden), as ``/api/ls`` answers.
Without a key the answers are ``404`` problems saying how to make one.
A page is read, written and signed in one thread of the resolver's
expensive pool (:meth:`WorkLimits.run`), never on its event loop, whose
other clients would wait meanwhile (some 5 ms of CPU a page of 1,000 names,
50 ms of 10,000).

``GET /api/element-index?pdi=NAME`` answers the parse kept of an SGML
document (its element index, ``application/octet-stream``), whose SHA-256
its manifest entry signs (``element_index``): what a mirror that cannot
make the same parse keeps (:mod:`pdi.network.mirrors`). It is read under
the name's access rules, as ``N2R`` is (a private or embargoed name's to a
token that may read it alone); ``404`` when none is kept. A parse may
change (``pdi reindex --elements`` with other DTDs), so it is not
immutable, but its SHA-256 is its strong entity tag (``ETag``): a public
name's is ``Cache-Control: no-cache`` (a cache asks again, and
``If-None-Match`` is answered ``304``), a private or embargoed name's
``private, no-store``.

``GET /api/manifest.tsr`` (with ``pdi serve --tsa URL``) answers, for the
same query, an RFC 3161 timestamp (a DER ``TimeStampResp``,
``application/timestamp-reply``) of the very JWS octets ``/api/manifest``
answers: asked of the TSA the first time, then kept (by the JWS's SHA-256,
the last few thousand) so that asking again costs the TSA nothing; one
request to the TSA at a time.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import re
from collections import OrderedDict

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pdi.archive import Archive
from pdi.archive.manifests import MANIFEST_PAGE, MAX_MANIFEST_PAGE
from pdi.errors import NotFoundError, ParseError
from pdi.server.http.conditional import tag_matches
from pdi.server.http.params import integer, optional, required
from pdi.server.http.problems import Busy
from pdi.server.http.readers import PRIVATE, by_cookie
from pdi.server.process.limits import ArchiveHandlers, WorkLimits
from pdi.signing import SigningKey, jwk_set, manifest_payload, sign_manifest

__all__ = ["ManifestAPI"]

#: Media type of a compact JWS (RFC 7515 §9.2.1) and of a JWK set (RFC 7517 §8.5.1).
JOSE = "application/jose"
JWK_SET = "application/jwk-set+json"
#: A manifest's answer changes as names are deposited and withdrawn: a cache asks again each time.
REVALIDATE = "no-cache"
#: Media type of an element index (:mod:`pdi.fragments.markup.index`): octets of pdi's own layout.
OCTETS = "application/octet-stream"
#: Media type of an RFC 3161 response (RFC 3161 §4).
TIMESTAMP_REPLY = "application/timestamp-reply"
#: Timestamps kept, of as many distinct manifest pages (each a few KiB).
KEPT_STAMPS = 4096


class ManifestAPI(ArchiveHandlers):
    """Manifests and the public key of one archive (``key``: its signing key, ``None``: it has none)."""

    def __init__(self, archive: Archive, work: WorkLimits, key: SigningKey | None, tsa: str | None = None) -> None:
        super().__init__(archive, work)
        self.key = key
        self.tsa = tsa  # the time-stamping authority's URL (pdi serve --tsa), or None: no /api/manifest.tsr
        self._stamps: OrderedDict[bytes, bytes] = OrderedDict()
        self._stamping = anyio.Lock()

    def routes(self) -> list[Route]:
        """``/api/manifest``, ``/api/manifest.tsr``, ``/api/element-index``, ``/api/keys`` and
        ``/.well-known/pdi-keys``."""
        return [
            Route("/api/manifest", self.manifest, methods=["GET", "HEAD"]),
            Route("/api/manifest.tsr", self.timestamp, methods=["GET", "HEAD"]),
            Route("/api/element-index", self.element_index, methods=["GET", "HEAD"]),
            Route("/api/keys", self.keys, methods=["GET", "HEAD"]),
            Route("/.well-known/pdi-keys", self.keys, methods=["GET", "HEAD"]),
        ]

    def _key(self) -> SigningKey:
        if self.key is None:
            from pdi.archive.signing_key import no_key

            raise no_key(self.archive.location, self.archive.read_only,
                         "this archive has no signing key: `pdi keys init` makes one (then restart pdi serve)")
        return self.key

    def keys(self, request: Request) -> Response:
        """The archive's public signing key as a JWK set (RFC 7517 §5), ``kid`` its RFC 7638 thumbprint."""
        return JSONResponse(jwk_set([self._key().public]), media_type=JWK_SET,
                            headers={"Cache-Control": "max-age=3600"})

    async def manifest(self, request: Request) -> Response:
        """One page of a series' manifest: ``series`` (required), ``day`` (``YYYY-MM-DD``; none: every day),
        ``after`` (the previous page's ``next``), ``limit`` (names, 1000, at most 10000); a compact JWS."""
        jws, following = await self._page(request)
        headers = {"Cache-Control": REVALIDATE}
        if following is not None:
            url = request.url.include_query_params(after=following)
            headers["Link"] = f'<{url.path}?{url.query}>; rel="next"'
        return Response(jws, media_type=JOSE, headers=headers)

    async def element_index(self, request: Request) -> Response:
        """The parse kept of an SGML document (``pdi``, a versioned name): the element index whose SHA-256 its
        manifest entry signs (``element_index``), as its octets may be read by this reader; ``404`` if none."""
        name = required(request, "pdi")
        index, anyone = await self.work.run(self.archive.kept_parse_read, name)
        sha256 = hashlib.sha256(index).hexdigest()
        tag = f'"{sha256}"'  # strong: these octets (a parse made again with other DTDs is another tag)
        shared = anyone and not by_cookie.get()  # (as N2R's answers: one read with a sign-in is the reader's own)
        headers = {"ETag": tag, "Cache-Control": REVALIDATE if shared else PRIVATE, "X-PDI-SHA256": sha256}
        asked = request.headers.get("if-none-match")
        if asked is not None and tag_matches(asked, tag):  # RFC 9110 §13.1.2, §15.4.5: the validator's fields alone
            return Response(status_code=304, headers={"ETag": tag, "Cache-Control": headers["Cache-Control"]})
        return Response(index, media_type=OCTETS, headers=headers)

    async def timestamp(self, request: Request) -> Response:
        """The RFC 3161 timestamp of the JWS ``/api/manifest`` answers to the same query (``pdi serve --tsa``)."""
        data, _ = await self._page(request)  # first: a query wrong is 400, a series not readable 403 or 404
        if self.tsa is None:
            raise NotFoundError("this resolver keeps no timestamps of its manifests: `pdi serve --tsa URL` names"
                                " a time-stamping authority")
        digest = hashlib.sha256(data).digest()
        # one request to the TSA at a time, so that a page asked for twice is stamped once; a request waits its
        # turn as long as one for a place among the expensive ones may (503 after)
        with anyio.move_on_after(self.work.queue_seconds) as waited:
            await self._stamping.acquire()
        if waited.cancelled_caught:
            raise Busy(self.work.queue_seconds)
        try:
            if digest in self._stamps:
                self._stamps.move_to_end(digest)
            else:
                from pdi.timestamping import request_timestamp

                self._stamps[digest], _ = await self.work.run(request_timestamp, self.tsa, data)
                while len(self._stamps) > KEPT_STAMPS:
                    self._stamps.popitem(last=False)
            stamp = self._stamps[digest]
        finally:
            self._stamping.release()
        return Response(stamp, media_type=TIMESTAMP_REPLY, headers={"Cache-Control": REVALIDATE})

    async def _page(self, request: Request) -> tuple[bytes, str | None]:
        """The signed manifest page the query asks for (its ASCII octets), and its ``next`` cursor."""
        series = required(request, "series")
        day = _day(optional(request, "day"))
        after = optional(request, "after")
        limit = integer(request, "limit", MANIFEST_PAGE, least=1, most=MAX_MANIFEST_PAGE)
        key = self._key()  # after the query is read: a query wrong is 400 whether or not there is a key
        return await self.work.run(functools.partial(self._signed, key, series, day=day, after=after, limit=limit))

    def _signed(self, key: SigningKey, series: str, *, day: datetime.date | None, after: str | None,
                limit: int) -> tuple[bytes, str | None]:
        """:meth:`_page`'s work, in a thread: the page read, its payload written and signed."""
        page = self.archive.manifest_page(series, day=day, after=after, limit=limit)
        jws = sign_manifest(key, manifest_payload(page.series, page.day, list(page.entries), after=page.after,
                                                  next_after=page.next, access=page.access,
                                                  rules=page.rules))
        return jws.encode("ascii"), page.next


#: A day as ``day=`` gives it: YYYY-MM-DD, ASCII digits (``date.fromisoformat`` also reads ISO week dates such as
#: ``2024-W01-1``, also ten characters, as another day than the one written).
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _day(text: str | None) -> datetime.date | None:
    if text is None:
        return None
    if not _DAY.fullmatch(text):
        return _bad_day(text)
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        return _bad_day(text)


def _bad_day(text: str) -> datetime.date:
    raise ParseError(f"day is a GMT day YYYY-MM-DD, not {text[:40]!r}", text=text[:40], rule="day")
