"""CORS: what lets a script of another origin read the resolver's public answers (the Fetch standard's CORS protocol).

A catalogue's discovery layer, a citation manager or a reading app served
from another origin asks N2R, N2L, Memento, OAI-PMH or the JSON API with
``fetch``; the browser gives its script the answer only if the answer says
who may read it (Fetch §3.2.3, §4.9 "CORS check"), and sends a request whose
method or fields are not "CORS-safelisted" (an ``Accept-Datetime``, a
``Prefer``, an ``Authorization``, an ``If-None-Match`` …) only once an
``OPTIONS`` preflight has been answered so (§4.8). :class:`CrossOriginReads`
says it on the paths of the routes it is given, the read routes of
:func:`pdi.server.create_app` (the resolver's RFC 2169 services, the JSON read
API, Memento, OAI-PMH, manifests, the ``.well-known`` documents, ``/openapi.json``),
as :class:`CrossOrigin` is configured (``pdi serve --cors-origin``):

* any origin (``*``, the default, as doi.org and most public resolvers
  answer): every answer of those paths, a refusal's too, carries
  ``Access-Control-Allow-Origin: *`` and ``Access-Control-Expose-Headers``
  (:data:`EXPOSED`: the fields a reader needs that a script is not given
  otherwise: ``Link``, ``ETag``, ``Memento-Datetime``, ``Content-Range`` …).
  No ``Access-Control-Allow-Credentials`` is ever sent, so a browser gives a
  script nothing read with its cookies (§4.9: ``*`` is refused to a request
  whose credentials mode is ``include``): the sign-in cookie
  (:mod:`pdi.server.http.readers`) never reads for another origin's script. A
  token travels in ``Authorization``, which a script sends itself, as any
  other client would; an answer read with it is ``private`` as it always is.
* some origins only: the answer to a request whose ``Origin`` is one of them
  names it (``Access-Control-Allow-Origin: https://catalogue.example.edu``);
  every answer of those paths says ``Vary: Origin`` (§3.2.5, "CORS protocol
  and HTTP caches"), so that no cache gives one origin's answer to another.
* none (``--cors-origin none``): nothing is said, and browsers give other
  origins' scripts nothing.

A preflight (``OPTIONS`` with ``Origin`` and ``Access-Control-Request-Method``)
of such a path, from an origin allowed, asking a method its read routes take,
is ``204`` with the methods (``GET, HEAD``; ``POST`` too where a read route
takes it: OAI-PMH's, ``/api/octets``', ``/api/annotation``'s, none of which
writes), the request fields a reader sends (:data:`ALLOWED_HEADERS`) and how
long a browser may keep that (:data:`MAX_AGE`). Any other preflight is
answered as any ``OPTIONS`` is (:class:`pdi.server.http.problems.Options`:
``204`` and ``Allow``), without those fields, and the browser refuses the
request. The write API (a deposit, a withdrawal, the audit log …) is not
among these paths: a script of another origin cannot write, nor read what
only a token's holder reads there (a deposit tool in a browser would run on the
resolver's own origin, or go through a server of its own). The annotation
server (:mod:`pdi.server.write.annotations`) answers CORS itself, writes too,
as the W3C Web Annotation Protocol's clients expect.

Answers made without the app, by ``pdi serve``'s connections from the cache of
whole answers (:mod:`pdi.server.process.connection`), carry the same fields:
:attr:`CrossOrigin.lines`, made once, written after uvicorn's own default
fields (``Date``, ``Server``) as the ASGI path's are (:class:`CrossOriginReads`
puts them before the app's); with a list of origins, a request with an
``Origin`` is not answered there, but by the app, which names it. A refusal those connections write before the app
(:meth:`pdi.server.process.guarded.GuardedHttpToolsProtocol._refuse`) of a request to a read path whose request
line was read carries the fields the app's answer of it would (:meth:`ReadPaths.refusal_lines`); of a head the parser
refused (a field value holding a control character, which a browser's ``fetch`` sends), the target and ``Origin`` are
read from the head's lines, past the line refused.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi.errors import ParseError
from pdi.server.http.middleware import HTTPMiddleware
from pdi.server.http.problems import allowed_methods

#: The fields of the resolver's answers a script reads that are not CORS-safelisted response fields (Fetch §2.2.2:
#: ``Cache-Control``, ``Content-Language``, ``Content-Length``, ``Content-Type``, ``Expires``, ``Last-Modified``
#: and ``Pragma`` are given it anyway): a memento's ``Link`` and ``Memento-Datetime``, a validator, a range's
#: fields, N2L's ``Location``, a capture's ``PDI-Capture``, the digest of the octets, a past-the-end fragment's
#: ``Warning``, a busy resolver's ``Retry-After``, a refusal's ``Allow`` and ``WWW-Authenticate``, the request id.
EXPOSED: Final = ("Accept-Ranges, Allow, Content-Location, Content-Range, ETag, Link, Location, Memento-Datetime,"
                  " PDI-Capture, Retry-After, Vary, Warning, WWW-Authenticate, X-PDI-SHA256, X-Request-Id")
#: The request fields a reader's script may send (a preflight's ``Access-Control-Allow-Headers``): negotiation
#: (``Accept``, Memento's ``Accept-Datetime``, ``Prefer``), a token, validators and ranges, a body's type (OAI-PMH's
#: and ``/api/octets``' ``POST``), a request id of its own. ``Authorization`` is named (a ``*`` never covers it: Fetch
#: §3.2.3).
ALLOWED_HEADERS: Final = ("Accept, Accept-Datetime, Accept-Language, Authorization, Content-Type, If-Match,"
                          " If-Modified-Since, If-None-Match, If-Range, If-Unmodified-Since, Prefer, Range,"
                          " X-Request-Id")
#: Seconds a browser may keep a preflight's answer (Chromium keeps one two hours at most, Firefox a day).
MAX_AGE: Final = 7200

#: The methods a read route may take across origins (``OPTIONS`` is the preflight's own).
_READ_METHODS: Final = ("GET", "HEAD", "POST")
#: A serialized origin as a browser sends it in ``Origin`` (WHATWG URL §4.4 "origin", HTML's serialization): an
#: ``http`` or ``https`` scheme, a host (a domain in lower case, an IPv4 address, or an IPv6 one in brackets), a port
#: other than the scheme's default.
_ORIGIN: Final = re.compile(r"(https?)://([a-z0-9](?:[a-z0-9.-]*[a-z0-9])?|\[[0-9a-f:.]+\])(?::([0-9]{1,5}))?")
_DEFAULT_PORTS: Final = {"http": 80, "https": 443}
_VARY_ORIGIN: Final = (b"vary", b"Origin")


def one_vary(headers: Iterable[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` with their ``Vary`` fields made one, where the first was, each member once (compared without
    case, the first spelling kept; ``*`` alone if any is ``*``): RFC 9110 §5.3 lets a list field be split, but
    caches and tools read one (nginx before 1.23 only the first). Headers with no ``Vary``: as they came."""
    headers = list(headers)
    at = [i for i, (k, _) in enumerate(headers) if k.lower() == b"vary"]
    if not at:
        return headers
    members: dict[bytes, bytes] = {}
    for i in at:
        for member in headers[i][1].split(b","):
            member = member.strip(b" \t")
            if member:
                members.setdefault(member.lower(), member)
    value = b"*" if b"*" in members else b", ".join(members.values())
    merged = [pair for i, pair in enumerate(headers) if i not in at[1:]]
    merged[at[0]] = (headers[at[0]][0], value)
    return merged


def one_vary_head(answer: bytes) -> bytes:
    """``answer`` (a status line, header lines, the empty line, perhaps a body) with its head's ``Vary`` fields
    made one as :func:`one_vary` makes them; as it came when its head has none."""
    end = answer.find(b"\r\n\r\n")
    head = answer if end < 0 else answer[:end]
    if b"\r\nvary:" not in head.lower():
        return answer
    status, *lines = head.split(b"\r\n")
    pairs = [(name, value.strip(b" \t")) for name, _, value in (line.partition(b":") for line in lines)]
    made = b"".join(b"\r\n%s: %s" % pair for pair in one_vary(pairs))
    return status + made + (b"" if end < 0 else answer[end:])


def serialized_origin(text: str) -> str:
    """``text`` (``https://Catalogue.Example.edu:443``, a trailing ``/`` allowed) as a browser serializes the origin
    in ``Origin`` (``https://catalogue.example.edu``): scheme and host in lower case, the scheme's default port left
    out; a :class:`~pdi.errors.ParseError` for anything else (a path, a user, another scheme, ``null``)."""
    lowered = text.strip().lower()
    if lowered.endswith("/"):
        lowered = lowered[:-1]
    found = _ORIGIN.fullmatch(lowered)
    if found is None or (found.group(3) is not None and not 0 < int(found.group(3)) <= 65535):
        raise ParseError(f"an origin is scheme://host[:port] (https://catalogue.example.edu), not {text[:200]!r}",
                         rule="origin")
    scheme, host, port = found.groups()
    if port is None or int(port) == _DEFAULT_PORTS[scheme]:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{int(port)}"


@dataclass(frozen=True)
class CrossOrigin:
    """Which origins' scripts may read the resolver's public answers: any (``origins`` ``None``), those
    ``origins`` (serialized as a browser sends them), or none (``origins`` empty)."""

    origins: frozenset[str] | None = None

    @classmethod
    def parse(cls, values: Iterable[str]) -> CrossOrigin:
        """The configuration ``values`` say (``pdi serve --cors-origin``, each given once or more): ``*`` (also
        when none is given), ``none``, or origins (:func:`serialized_origin`); ``*`` or ``none`` with anything
        else is a :class:`~pdi.errors.ParseError`."""
        given = [v.strip() for v in values]
        if not given or given == ["*"]:
            return cls(None)
        if given == ["none"]:
            return cls(frozenset())
        if "*" in given or "none" in given:
            raise ParseError("--cors-origin is '*', 'none', or one or more origins, not some of each", rule="origin")
        return cls(frozenset(serialized_origin(v) for v in given))

    @property
    def on(self) -> bool:
        """Whether any origin's script may read."""
        return self.origins is None or bool(self.origins)

    @property
    def by_origin(self) -> bool:
        """Whether an answer depends on the request's ``Origin`` (a list of origins)."""
        return bool(self.origins)

    @property
    def fields(self) -> tuple[tuple[bytes, bytes], ...]:
        """The fields every answer of a read path carries, whatever the request: ``*``'s, or ``Vary: Origin``."""
        if self.origins is None:
            return _ANY_FIELDS
        return (_VARY_ORIGIN,) if self.origins else ()

    @property
    def lines(self) -> bytes:
        """:attr:`fields` as header lines (``name: value`` and CRLF each), as a connection writes them."""
        return b"".join(b"%s: %s\r\n" % pair for pair in self.fields)

    def fields_for(self, origin: bytes | None) -> tuple[tuple[bytes, bytes], ...]:
        """The fields of an answer to a request whose ``Origin`` is ``origin`` (``None``: none, or several)."""
        if self.origins is None or not self.origins:
            return self.fields
        if origin is not None and origin.decode("latin-1") in self.origins:
            return (_VARY_ORIGIN, (b"access-control-allow-origin", origin), _EXPOSE)
        return (_VARY_ORIGIN,)

    def allows(self, origin: bytes | None) -> bool:
        """Whether a script of ``origin`` may read."""
        if self.origins is None:
            return True
        return origin is not None and origin.decode("latin-1") in self.origins


_EXPOSE: Final = (b"access-control-expose-headers", EXPOSED.encode("ascii"))
_ANY_FIELDS: Final = ((b"access-control-allow-origin", b"*"), _EXPOSE)
_ALLOWED_HEADERS: Final = ALLOWED_HEADERS.encode("ascii")


class ReadPaths:
    """The paths of the read routes ``routes`` and the methods each takes (:meth:`methods`): what
    :class:`CrossOriginReads` says CORS on, and the connection's own refusals too (:meth:`refusal_lines`)."""

    def __init__(self, routes: Sequence[Route]) -> None:
        #: The methods of the routes without parameters, by path; the others' fixed beginnings, with each route (a
        #: path is matched against a route's pattern only when it begins with that route's).
        self._exact: dict[str, set[str]] = {}
        self._patterned: list[tuple[str, Route]] = []
        for route in routes:
            if "{" in route.path:
                self._patterned.append((route.path.split("{", 1)[0], route))
            else:
                self._exact.setdefault(route.path, set()).update(route.methods or ())
        self._prefixes = tuple(prefix for prefix, _ in self._patterned)

    def methods(self, path: str) -> list[str]:
        """The methods the read routes take at ``path``, in the order of :data:`_READ_METHODS` (none: not a read
        path)."""
        taken = self._exact.get(path)
        if taken is None and not path.startswith(self._prefixes):
            return []
        taken = set(taken or ())
        for prefix, route in self._patterned:
            if path.startswith(prefix) and route.path_regex.match(path):
                taken |= set(route.methods or ())
        return [m for m in _READ_METHODS if m in taken]

    def refusal_lines(self, policy: CrossOrigin, target: bytes, headers: Sequence[tuple[bytes, bytes]]) -> bytes:
        """The CORS fields' lines of a refusal the connection writes itself, before the app (a ``503`` past the
        requests a connection may pipeline, a ``431`` head, a ``400`` of its framing or of a head the parser refused, a
        ``414``:
        :meth:`pdi.server.process.guarded.GuardedHttpToolsProtocol._refuse`), to the request whose target is
        ``target`` (as sent: origin or absolute form) and whose fields read so far are ``headers`` (names in lower
        case): those :class:`CrossOriginReads` gives an answer of that path, so that a script reads a refusal (a
        ``503``'s ``Retry-After``) as it reads the app's; none for any other path."""
        if not policy.on:
            return b""
        if target[:1] != b"/":  # absolute form (a proxy's): its path after the authority; "*" and the rest: none
            scheme, found, rest = target.partition(b"://")
            if not found or not scheme.isalpha():
                return b""
            target = b"/" + rest.partition(b"/")[2]
        path = target.partition(b"?")[0].partition(b"#")[0].decode("latin-1")  # (a '#' refused: RFC 3986 §3.5)
        if "%" in path:
            path = urllib.parse.unquote(path)
        if not self.methods(path):
            return b""
        origins = [value for name, value in headers if name == b"origin"]
        fields = policy.fields_for(origins[0] if len(origins) == 1 else None)
        return b"".join(b"%s: %s\r\n" % pair for pair in fields)


class CrossOriginReads(HTTPMiddleware):
    """ASGI middleware: the CORS fields of the module's docstring on the paths of ``routes`` (read routes), and the
    answer to a preflight of them; any other path passes untouched."""

    def __init__(self, app: ASGIApp, policy: CrossOrigin, routes: Sequence[Route]) -> None:
        super().__init__(app)
        self.policy = policy
        self.paths = ReadPaths(routes)

    def read_methods(self, path: str) -> list[str]:
        """The methods the read routes take at ``path`` (:meth:`ReadPaths.methods`)."""
        return self.paths.methods(path)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        policy = self.policy
        if not policy.on:
            await self.app(scope, receive, send)
            return
        methods = self.read_methods(scope["path"]) or self._redirected(scope)
        if not methods:
            await self.app(scope, receive, send)
            return
        origin = asked = None
        origins = 0
        for key, value in scope["headers"]:
            if key == b"origin":
                origin, origins = value, origins + 1
            elif key == b"access-control-request-method":
                asked = value
        if origins > 1:
            origin = None  # several: none names the one origin a browser sends
        fields: tuple[tuple[bytes, bytes], ...]
        if scope["method"] == "OPTIONS" and origins and asked is not None:
            if policy.allows(origin) and asked.decode("latin-1") in methods:
                await self._preflight(scope, receive, send, origin, methods)
                return
            fields = (_VARY_ORIGIN,) if policy.by_origin else ()  # no Access-Control-*: the browser refuses it
        else:
            fields = policy.fields_for(origin)
        if not fields:
            await self.app(scope, receive, send)
            return

        async def said(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                if not any(k.lower() == b"access-control-allow-origin" for k, _ in headers):
                    message = {**message, "headers": one_vary([*fields, *headers])}
            await send(message)

        await self.app(scope, receive, said)

    def _redirected(self, scope: Scope) -> list[str]:
        """The methods of the read path a request of another path is redirected to by the app's router (Starlette's
        ``redirect_slashes``: ``/api/search/`` to ``/api/search``, a ``307``), where no route of the app takes the
        path as asked: that redirect is the read path's first answer, and a browser's ``fetch`` follows it only if
        it passes the CORS check (Fetch §4.4 "HTTP-redirect fetch"; found in review, 2026-12-01: it had no CORS
        field, and a script's ``fetch`` of ``/api/search/?q=…`` failed). None where it is no such path."""
        path: str = scope["path"]
        if path == "/":
            return []
        variant = path.rstrip("/") if path.endswith("/") else path + "/"
        methods = self.read_methods(variant)
        if not methods:
            return []
        routes: Sequence[BaseRoute] = getattr(scope.get("app"), "routes", ())
        if any(route.matches(scope)[0] != Match.NONE for route in routes):
            return []  # a route takes the path itself: not redirected
        return methods

    async def _preflight(self, scope: Scope, receive: Receive, send: Send, origin: bytes | None,
                         methods: list[str]) -> None:
        """``204`` to a preflight the module's docstring allows (its ``Allow`` as :class:`~pdi.server.http.problems.Options`
        says it)."""
        fields = [*self.policy.fields_for(origin),
                  (b"access-control-allow-methods", ", ".join(methods).encode("ascii")),
                  (b"access-control-allow-headers", _ALLOWED_HEADERS),
                  (b"access-control-max-age", str(MAX_AGE).encode("ascii"))]
        answer = Response(status_code=204, headers={"Allow": ", ".join(allowed_methods(scope["app"].routes, scope))})
        answer.raw_headers[:0] = fields
        await answer(scope, receive, send)
