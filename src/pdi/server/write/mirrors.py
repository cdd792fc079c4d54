"""``POST /api/mirrors`` and ``DELETE /api/mirrors``: an archive announces that it holds a copy of a series (or
withdraws that), so that this one lists it among the series' locations without its operator's ``pdi mirror add``.

The mirror's operator is given a token of role ``mirror`` for the series
(``pdi token add mirror-b --role mirror --series S``: it reads, and
announces; it deposits nothing); its ``pdi mirror sync --announce
https://b.example.org`` sends, with ``Authorization: Bearer``::

    POST /api/mirrors
    {"series": "S", "base_url": "https://b.example.org", "keys": {"keys": [JWK, …]}}

and this archive records ``base_url`` as a peer holding S, its keys pinned
(:meth:`pdi.archive.Archive.add_mirror`, an audit line naming the token):
``N2Ls`` lists it (within 5 s: :mod:`pdi.server.protocol.mirrored`), ``pdi
mirror audit`` polls it, ``pdi verify --repair`` may fetch from it.
``201`` when it is new, ``200`` when it was recorded already with the same
keys; the same address with other keys is ``409`` (the operator removes
it first, knowingly). ``DELETE /api/mirrors?series=S&base_url=URL``
forgets a peer the same token announced (``204``); the origin a series is
mirrored from here, another token's announcement and a peer the operator
recorded are never forgotten so (``403``). Every refusal is an RFC 9457 problem naming what was
wrong: no token ``401``, a token of another role or series ``403`` (so is a ``base_url`` at an address that
is not public, loopback, private or link-local: :func:`_public`), a body
that is not the object above ``400`` (or ``413`` past 64 KiB), a series not
registered or a peer not recorded ``404``. An announcement is recorded once however often it is sent, so
the ``503`` of one whose commit's answer was lost (whether it was recorded is unknown) says to send it
again, and ``pdi mirror sync --announce`` does, once (:func:`pdi.network.peers.announce`). So does the ``503`` of
a ``DELETE`` whose commit's answer was lost: sent again, it is answered ``404`` if the first forgot the peer,
``204`` if it forgets it now.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pdi.archive import Archive
from pdi.archive.mirroring import base_url, recorded_url
from pdi.errors import AccessError, ParseError
from pdi.server.http.bodies import read_json
from pdi.server.http.params import only, required
from pdi.server.write.api import bearer_writer
from pdi.signing import jwk_set_text, parse_jwks

__all__ = ["MirrorAnnouncements"]

#: The longest announcement read.
MAX_ANNOUNCEMENT = 64 << 10
#: The most keys an archive may announce.
MAX_KEYS = 8
#: What sending an announcement again answers, as a 503 of unknown outcome says (its commit's answer lost).
SAME_AGAIN = ("an announcement recorded already is answered 200 and is not recorded twice; one that was not is"
              " recorded now (201)")
#: What sending a withdrawal of an announcement again answers, as a 503 of unknown outcome says.
FORGOTTEN_AGAIN = "404 then says the peer was forgotten already (by the first), 204 that it is forgotten now"
#: What an announcement is.
_SHAPE = '{"series": S, "base_url": "http(s)://…", "keys": a JWK set}'


class MirrorAnnouncements:
    """``POST`` and ``DELETE /api/mirrors`` over one archive."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive

    def routes(self) -> list[Route]:
        return [Route("/api/mirrors", self.announce, methods=["POST"]),
                Route("/api/mirrors", self.withdraw, methods=["DELETE"])]

    async def announce(self, request: Request) -> Response:
        """Record the announcing archive as a peer holding a series (role mirror): {series, base_url, keys}."""
        request.state.same_again = SAME_AGAIN  # a 503 of unknown outcome says so (pdi.server.http.problems)
        writer = await bearer_writer(self.archive, request)
        only(request, frozenset())
        body = await read_json(request, MAX_ANNOUNCEMENT, f"the announcement is more than {MAX_ANNOUNCEMENT} octets",
                               rule="mirror-announcement", unique_keys=True)  # one series, one address: no second
        if not isinstance(body, dict):
            raise ParseError(f"an announcement is {_SHAPE}", rule="mirror-announcement")
        series, url = _text(body, "series"), _public(base_url(_text(body, "base_url")))
        announced = body.get("keys")
        if not isinstance(announced, dict) or not isinstance(announced.get("keys"), list):
            raise ParseError(f"keys: a JWK set ({{\"keys\": [...]}}) of the announcing archive, in {_SHAPE}",
                             rule="mirror-announcement")
        if len(announced["keys"]) > MAX_KEYS:
            raise ParseError(f"keys: at most {MAX_KEYS} keys, not {len(announced['keys'])}", rule="mirror-announcement")
        keys = parse_jwks(json.dumps(body["keys"]), "the keys announced")
        jwk = jwk_set_text(keys)

        def record() -> tuple[bool, Any]:
            known = any(m.base_url == url for m in self.archive.mirrors(series))
            return known, self.archive.add_mirror(series, url, "peer", jwk, writer=writer)

        known, added = await anyio.to_thread.run_sync(record)
        return JSONResponse({"series": added.series, "base_url": added.base_url, "role": added.role,
                             "keys": json.loads(added.jwk), "added_at": added.added_at},
                            status_code=200 if known else 201, headers={"Cache-Control": "no-store"})

    async def withdraw(self, request: Request) -> Response:
        """Forget a peer that announced itself: series= and base_url= (role mirror)."""
        request.state.same_again = FORGOTTEN_AGAIN  # a 503 of unknown outcome says so (pdi.server.http.problems)
        writer = await bearer_writer(self.archive, request)
        only(request, frozenset({"series", "base_url"}))
        series, url = required(request, "series"), recorded_url(required(request, "base_url"))
        await anyio.to_thread.run_sync(lambda: self.archive.remove_mirror(series, url, writer=writer))
        return Response(status_code=204)


def _public(url: str) -> str:
    """``url``, unless its host is an address no stranger may make this resolver ask (loopback, private,
    link-local such as 169.254.169.254, and the rest :func:`pdi._addresses.not_public` names) or
    ``localhost``: an announced peer is listed by ``N2Ls`` and asked by the legacy rescue (a ``GET`` whose path
    an anonymous reader chooses), ``pdi mirror audit`` and ``pdi verify --repair``. Such a peer is recorded by
    its operator (``pdi mirror add --peer``), never by a token."""
    from pdi._addresses import host_not_public

    why = host_not_public(urlsplit(url).hostname or "")  # 127.1, 0x7f.1, 2130706433 as a connection reads them
    if why is not None:
        raise AccessError(f"an archive announces itself at a public address, not {url[:200]} ({why}): a peer at"
                          " such an address is recorded by this archive's operator (pdi mirror add --peer)")
    return url


def _text(body: dict[str, Any], member: str) -> str:
    value = body.get(member)
    if not isinstance(value, str) or not value:
        raise ParseError(f"{member}: text, in {_SHAPE}", rule="mirror-announcement")
    return value
