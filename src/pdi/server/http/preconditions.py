"""``If-Match`` and ``If-None-Match`` of any ``GET`` or ``HEAD`` the resolver answers ``2xx`` (RFC 9110 §13.1.1,
§13.1.2, §13.2), read against the answer's own ``ETag`` (an ASGI middleware)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import Message, Receive, Scope, Send

from pdi._wording import shown_field
from pdi.errors import PreconditionError
from pdi.server.http.conditional import if_match_holds, tag_matches
from pdi.server.http.middleware import SENDFILE_EXTENSION as ZEROCOPY
from pdi.server.http.middleware import HTTPMiddleware
from pdi.server.http.problems import problem_body
from pdi.server.http.site import SITED

#: The fields of a ``200`` its ``304`` keeps (RFC 9110 §15.4.5: those "that would have been sent in a 200", and no
#: other representation metadata), and the CORS fields that let a script of another origin read it.
_NOT_MODIFIED_FIELDS = frozenset({b"cache-control", b"content-location", b"date", b"etag", b"expires", b"vary"})


class Preconditions(HTTPMiddleware):
    """ASGI middleware: ``If-Match`` and ``If-None-Match`` of a ``GET`` or ``HEAD`` evaluated against the answer's
    ``ETag``, for every route that gives a ``2xx`` (RFC 9110 §13.2.1; §13.1.1 and §13.1.2: an origin server that
    receives either "MUST evaluate the condition").

    N2R answers both fields itself, before its work, and the annotations ``If-None-Match``: a ``2xx`` they give
    already holds, and passes here unchanged. Any other answer (the JSON API, TimeMaps, OAI-PMH, pages, pdf.js, the
    replay origin's files) was given whole: an ``If-Match`` that holds none of its tags by strong comparison
    (§8.8.3.2; an answer with no ``ETag`` holds none, and ``*`` holds for any answer) makes it a ``412`` problem;
    then an ``If-None-Match`` of ``*`` or of its tag (weak comparison) makes it a ``304`` (§13.2.2's order:
    ``If-Match`` first). The answer's body is dropped; the answer to such a request is sent as messages, not with
    ``sendfile`` (:mod:`pdi.server.process.zerocopy`), so that nothing of a dropped answer reaches the connection.
    Writes (``POST``, ``PUT``, ``DELETE``) are not answered here: a precondition of a write is its handler's to read
    before it changes anything.
    """

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if_match = if_none_match = None
        if scope["method"] in ("GET", "HEAD"):
            for key, value in scope["headers"]:  # one line each (HostField joined a list sent on several)
                if key == b"if-match":
                    if_match = value.decode("latin-1")
                elif key == b"if-none-match":
                    if_none_match = value.decode("latin-1")
        if if_match is None and if_none_match is None:
            await self.app(scope, receive, send)
            return
        extensions = {k: v for k, v in scope.get("extensions", {}).items() if k != ZEROCOPY}
        dropped = False

        async def checked(message: Message) -> None:
            nonlocal dropped
            if dropped:
                return
            if message["type"] == "http.response.start" and 200 <= message["status"] < 300:
                headers = message.get("headers", [])
                tag = next((v.decode("latin-1") for k, v in headers if k.lower() == b"etag"), None)
                if if_match is not None and not (
                        if_match.strip(" \t") == "*" or (tag is not None and if_match_holds(if_match, tag))):
                    dropped = True
                    body = problem_body(412, f"If-Match {shown_field(if_match, 200)} holds no entity tag of this answer's"
                                             f" ({tag or 'it has none'}; strong comparison, RFC 9110 §13.1.1)")
                    await send({"type": "http.response.start", "status": 412, "headers": [
                        (b"content-type", b"application/problem+json"), (b"content-length", b"%d" % len(body))]})
                    await send({"type": "http.response.body", "body": body})
                    return
                weak = None if tag is None else tag.removeprefix("W/")
                if if_none_match is not None and (
                        if_none_match.strip(" \t") == "*" or (weak is not None and tag_matches(if_none_match, weak))):
                    dropped = True
                    kept = [(k, v) for k, v in headers
                            if k.lower() in _NOT_MODIFIED_FIELDS or k.lower().startswith(b"access-control-")]
                    # its Content-Location as the answer's was: under the base URL's path already, or not yet
                    await send({"type": "http.response.start", "status": 304, "headers": kept,
                                **({SITED: True} if message.get(SITED) else {})})
                    await send({"type": "http.response.body", "body": b""})
                    return
            await send(message)

        await self.app({**scope, "extensions": extensions}, receive, checked)


def refuse_if_match(request: Request) -> None:
    """RFC 9110 §13.1.1 for a change or a ``POST`` sent to a route with no representation of its own
    (``POST /api/deposit``, ``/api/version`` …, ``/api/mirrors``; ``POST /oai`` and ``/api/octets``, whose
    answer is made from the request's content, not a representation of the target resource): an ``If-Match``
    there holds no entity tag, and ``*`` is "false if the origin server has no current representation for the
    target resource", so the origin server "MUST NOT perform the requested method": ``412``, nothing done (a client that meant ``If-Match`` as "only if the latest
    version is still this one" is told it was not read, rather than finding its change made regardless). ``GET``
    and ``HEAD`` are :class:`Preconditions`'s to answer. ``If-None-Match`` there holds whatever it names (no
    current representation matches it): the method is performed."""
    field = request.headers.get("if-match")
    if field is not None and request.method not in ("GET", "HEAD"):
        raise PreconditionError(f"If-Match {shown_field(field, 200)}: {request.url.path} has no representation, so no entity tag to"
                                " match, and nothing is done on a condition that cannot hold (RFC 9110 §13.1.1)")
