"""``GET /api/manifest`` (a series' names and SHA-256 digests, a day or every day, signed) and ``GET /api/keys``
(the archive's public key, a JWK set; also at ``/.well-known/pdi-keys``).

A manifest page is a compact JWS (RFC 7515 §7.1, ``application/jose``,
§9.2.1) signed with EdDSA (RFC 8037 §3.1) by the archive's key
(:mod:`pdi.archive.signing_key`), whose payload :mod:`pdi.signing` writes
from :meth:`pdi.archive.Archive.manifest_page`. It lists what the reader may
see (:mod:`pdi.archive.access`): an anonymous reader only public names, a
token's holder its series' private and embargoed ones too; a series the
reader may not read is ``403`` (``404`` if hidden), as ``/api/ls`` answers.
Without a key the answers are ``404`` problems saying how to make one.
"""

from __future__ import annotations

import datetime
import functools

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pdi.archive import Archive
from pdi.archive.manifests import MANIFEST_PAGE, MAX_MANIFEST_PAGE
from pdi.errors import NotFoundError, ParseError
from pdi.server.http.params import integer, optional, required
from pdi.server.process.limits import ArchiveHandlers, WorkLimits
from pdi.signing import SigningKey, jwk_set, manifest_payload, sign_manifest

__all__ = ["ManifestAPI"]

#: Media type of a compact JWS (RFC 7515 §9.2.1) and of a JWK set (RFC 7517 §8.5.1).
JOSE = "application/jose"
JWK_SET = "application/jwk-set+json"
#: A manifest's answer changes as names are deposited and withdrawn: a cache asks again each time.
REVALIDATE = "no-cache"


class ManifestAPI(ArchiveHandlers):
    """Manifests and the public key of one archive (``key``: its signing key, ``None``: it has none)."""

    def __init__(self, archive: Archive, work: WorkLimits, key: SigningKey | None) -> None:
        super().__init__(archive, work)
        self.key = key

    def routes(self) -> list[Route]:
        """``/api/manifest``, ``/api/keys`` and ``/.well-known/pdi-keys``."""
        return [
            Route("/api/manifest", self.manifest, methods=["GET", "HEAD"]),
            Route("/api/keys", self.keys, methods=["GET", "HEAD"]),
            Route("/.well-known/pdi-keys", self.keys, methods=["GET", "HEAD"]),
        ]

    def _key(self) -> SigningKey:
        if self.key is None:
            raise NotFoundError("this archive has no signing key: `pdi keys init` makes one (then restart pdi serve)")
        return self.key

    def keys(self, request: Request) -> Response:
        """The archive's public signing key as a JWK set (RFC 7517 §5), ``kid`` its RFC 7638 thumbprint."""
        return JSONResponse(jwk_set([self._key().public]), media_type=JWK_SET,
                            headers={"Cache-Control": "max-age=3600"})

    async def manifest(self, request: Request) -> Response:
        """One page of a series' manifest: ``series`` (required), ``day`` (``YYYY-MM-DD``; none: every day),
        ``after`` (the previous page's ``next``), ``limit`` (names, 1000, at most 10000); a compact JWS."""
        series = required(request, "series")  # the request read first: a bad one is a 400 whatever the archive
        day = _day(optional(request, "day"))
        after = optional(request, "after")
        limit = integer(request, "limit", MANIFEST_PAGE, least=1, most=MAX_MANIFEST_PAGE)
        key = self._key()
        page = await self.work.run(functools.partial(self.archive.manifest_page, series, day=day, after=after, limit=limit))
        jws = sign_manifest(key, manifest_payload(page.series, page.day, list(page.entries), after=page.after,
                                                  next_after=page.next))
        headers = {"Cache-Control": REVALIDATE}
        if page.next is not None:
            url = request.url.include_query_params(after=page.next)
            headers["Link"] = f'<{url.path}?{url.query}>; rel="next"'
        return Response(jws, media_type=JOSE, headers=headers)


def _day(text: str | None) -> datetime.date | None:
    if text is None:
        return None
    try:
        return datetime.date.fromisoformat(text) if len(text) == 10 else _bad_day(text)
    except ValueError:
        return _bad_day(text)


def _bad_day(text: str) -> datetime.date:
    raise ParseError(f"day is a GMT day YYYY-MM-DD, not {text[:40]!r}", text=text[:40], rule="day")
