"""The shape every ASGI middleware of the resolver shares: it acts on HTTP requests and passes the rest on."""

from __future__ import annotations

import ipaddress
import re
from typing import Final

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi._wording import shown_field
from pdi.errors import PDIError
from pdi.server.http.bodies import sends_content
from pdi.server.http.problems import problem

#: The key under which a connection offers the app its zero-copy sending in an ASGI scope's ``extensions``
#: (:class:`pdi.server.process.zerocopy.ZeroCopy`): named here, below the rooms that offer and use it.
SENDFILE_EXTENSION: Final = "pdi.sendfile"


class HTTPMiddleware:
    """ASGI middleware for HTTP requests: any other scope (``lifespan``, ``websocket``) goes to ``app`` untouched.

    A subclass says what it does with a request in :meth:`http`.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one HTTP request (``scope["type"] == "http"``)."""
        raise NotImplementedError


class MiddlewareErrors(HTTPMiddleware):
    """ASGI middleware: an error of :mod:`pdi.errors` raised by the middleware inside it before an answer began (a
    storage error as the answer cache asks the catalog whether a name was withdrawn, or as a token or a cookie is
    looked up) answered by the app's own handler (:data:`pdi.server.http.problems.HANDLERS`) of it, as a route's is: a storage error ``503`` with
    ``Retry-After``, counted in ``pdi_store_errors_total`` and said in the log. Starlette's exception handlers
    see only what the routes raise; a middleware's error was the bare ``500`` of a bug, with a traceback."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except PDIError as exc:
            handlers = getattr(scope.get("app"), "exception_handlers", {})
            handler = next((handlers[kind] for kind in type(exc).__mro__ if kind in handlers), None)
            if started or handler is None:  # an answer under way cannot be another now
                raise
            answer = await handler(Request(scope, receive), exc)
            await answer(scope, receive, send)


#: The Content-Security-Policy of a resolver's HTML answer that says none of who may frame it (CSP 3 §6.4.2): only a
#: page of the resolver's own origin, as the viewer's pages and N2R's archived pages already say.
FRAMED_HERE_ONLY = "frame-ancestors 'self'"
#: The Content-Security-Policy of a resolver's HTML answer that has none of its own (a page with no script: the
#: sign-in form, search, the catalogue, the API reference, an error page): no script runs, inline, injected or
#: loaded, nor ``eval`` (CSP 3 §6.1.1, ``script-src 'none'``); everything else from the resolver alone (its own
#: pages in frames too), inline styles (each page's ``<style>``), no plug-in, no ``<base>``, forms sent to the
#: resolver alone, framed by its own pages alone. What a depositor or a stranger wrote is escaped on every page;
#: this keeps a slip there from becoming a script run with a signed-in person's reads (OWASP's XSS prevention
#: cheat sheet: CSP as defence in depth).
PAGE_POLICY = (
    "default-src 'self'; script-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:;"
    " object-src 'none'; base-uri 'none'; form-action 'self'; " + FRAMED_HERE_ONLY
)
#: The media types of a document a browser renders in a frame, and so another site could frame to mislead.
_PAGE_TYPES = (b"text/html", b"application/xhtml+xml")


class BrowserFields(HTTPMiddleware):
    """ASGI middleware: the fields every answer owes a browser that its handler did not give.

    An HTML answer with no ``Content-Security-Policy`` of its own gets :data:`PAGE_POLICY` (no script runs).
    Every HTML answer says who may frame it; one that says it in none of its ``Content-Security-Policy``
    fields gets one more, :data:`FRAMED_HERE_ONLY`. A browser enforces every policy field of an answer (CSP 3
    §4.1), so the field added takes nothing from a page's own (:func:`pdi.server.pages.viewer.view_policy`, the
    banner of a replayed page's, N2R's for an archived page), and a page another site frames (the sign-in form,
    search, the catalogue, the API reference, an error page: clickjacking, or the resolver's look lent to
    another site's words) is not shown. The resolver's own pages still frame each other. The replay origin is
    an app of its own with its own ``frame-ancestors`` (:mod:`pdi.server.replay.origin`).

    Every answer says ``X-Content-Type-Options: nosniff`` (the Fetch standard's section of that name: a
    browser reads the answer as its ``Content-Type`` says and as nothing else): a problem's JSON or an OAI-PMH
    answer that quotes a stranger's words is never sniffed as a page or run as a script, and another site's
    ``<script>`` of a JSON answer is refused.
    """

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def fielded(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message.get("headers", [])
                kind = next((v for k, v in headers if k.lower() == b"content-type"), b"")
                page = kind.split(b";", 1)[0].strip().lower() in _PAGE_TYPES
                policies = [v.lower() for k, v in headers if k.lower() == b"content-security-policy"]
                added = []
                if page and not policies:
                    added.append((b"content-security-policy", PAGE_POLICY.encode("ascii")))
                elif page and not any(b"frame-ancestors" in v for v in policies):
                    added.append((b"content-security-policy", FRAMED_HERE_ONLY.encode("ascii")))
                if not any(k.lower() == b"x-content-type-options" for k, _ in headers):
                    added.append((b"x-content-type-options", b"nosniff"))
                if added:
                    message = {**message, "headers": [*headers, *added]}
            await send(message)

        await self.app(scope, receive, fielded)


#: The request fields a ``HEAD`` loses (:class:`HeadWithoutRange`).
RANGE_FIELDS = (b"range", b"if-range")


class HeadWithoutRange(HTTPMiddleware):
    """ASGI middleware: a ``HEAD`` request's ``Range`` and ``If-Range`` are dropped before anything reads them.

    RFC 9110 §14.2: "A server MUST ignore a Range header field received
    with a request method that is unrecognized or for which range handling
    is not defined" — it is defined for ``GET`` alone, so a ``HEAD`` is
    answered as its ``GET`` without ``Range`` would be: ``200`` and the
    whole representation's ``Content-Length``, never ``206`` or ``416``.
    """

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] == "HEAD" and any(k in RANGE_FIELDS for k, _ in scope["headers"]):
            scope = {**scope, "headers": [(k, v) for k, v in scope["headers"] if k not in RANGE_FIELDS]}
        await self.app(scope, receive, send)


#: A ``Host`` field's value, RFC 9112 §3.2: ``uri-host [ ":" port ]`` of RFC 3986 §3.2.2–3.2.3 — an IP literal
#: in brackets, or a registered name (IPv4 addresses are among them) of unreserved characters, sub-delimiters and
#: percent-encodings (each ``%`` and two hex digits: :data:`_PERCENT`) — possibly empty (a target with no
#: authority); the field's trailing whitespace (RFC 9112 §5's OWS, which the parser leaves) is not its value's.
_HOST_VALUE = re.compile(
    rb"(?:(\[[0-9A-Fa-f:.]+\])|\[[vV][0-9A-Fa-f]+\.[A-Za-z0-9._~!$&'()*+,;=:-]+\]"
    rb"|[A-Za-z0-9._~!$&'()*+,;=%-]*)(?::[0-9]*)?[ \t]*"
)
_PERCENT = re.compile(rb"%(?![0-9A-Fa-f]{2})")
#: Host values found valid, so that a connection's every request is not matched again (a few, bounded).
_VALID: set[bytes] = set()


def valid_host(value: bytes) -> bool:
    """Whether ``value`` is a ``Host`` field's value by RFC 9112 §3.2's grammar (an IPv6 literal checked as one)."""
    if value in _VALID:
        return True
    found = _HOST_VALUE.fullmatch(value)
    if found is None or (b"%" in value and _PERCENT.search(value) is not None):
        return False
    literal = found[1]
    if literal is not None:
        try:
            ipaddress.IPv6Address(literal[1:-1].decode("ascii"))
        except ValueError:
            return False
    if len(_VALID) < 64:
        _VALID.add(value)
    return True


#: The versions of HTTP a request may name (llhttp, under uvicorn, parses ``HTTP/2.0`` in a request line too).
_VERSIONS = ("1.1", "1.0")


def read_as(version: str) -> str:
    """The version of HTTP a request naming ``version`` is read as: HTTP/1.1 for a later minor version of HTTP/1
    (``1.2``, ``1.9``), which RFC 9110 §2.5 says a recipient "SHOULD process ... as if it were in the highest minor
    version within that major version to which the recipient is conformant"; else ``version`` itself."""
    major, dot, minor = version.partition(".")
    if major == "1" and dot and minor.isascii() and minor.isdigit() and int(minor) > 1:
        return "1.1"
    return version


class HostField(HTTPMiddleware):
    """ASGI middleware for what a request's head must be before anything reads it, each ``400`` or ``505`` with an
    RFC 9457 problem and ``Connection: close``:

    * more than one ``Host`` field, an HTTP/1.1 request with none, or one whose value is not ``host[:port]``
      (RFC 9112 §3.2: a server MUST answer ``400``; which host it asks for, and so which base URL its answers
      name, is not known);
    * a request line naming a version of HTTP other than 1.x (``HTTP/2.0`` in a request line is not how HTTP/2 is
      spoken): ``505`` (RFC 9110 §15.6.6); a later minor version of HTTP/1 (``HTTP/1.2``) is read, and answered,
      as HTTP/1.1 (RFC 9110 §2.5, :func:`read_as`);
    * a query with an octet beyond ASCII, which no URI holds (RFC 3986 §2: such octets are %-escaped): ``400``, as
      ``pdi serve``'s HTTP parser answers it before the app; an ASGI server that passes it on (HTTP/2's ``:path``
      is octets) had the app fail on it, a ``500`` (Starlette reads ``request.url``'s query as UTF-8, strictly).

    Answered as any answer is, in the connection's order of requests (a request before it on the connection is
    answered first), with its ``Date``, logged and counted."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        version = scope.get("http_version", "1.1")
        if version not in _VERSIONS and read_as(version) != version:
            version = read_as(version)
            scope = {**scope, "http_version": version}
        hosts = []
        listed = 0
        expects = False
        for key, value in scope["headers"]:
            if key == b"host":
                hosts.append(value)
            elif key in _JOINED:
                listed += 1
            elif key == b"expect":
                expects = True

        if version not in _VERSIONS:
            answer = problem(505, "HTTP Version Not Supported",
                             f"this server speaks HTTP/1.1 and HTTP/1.0; the request line says HTTP/{version}")
        elif len(hosts) > 1 or (not hosts and version == "1.1"):
            answer = problem(400, "Bad Request",
                             f"a request has one Host field (RFC 9112 §3.2); this one has {len(hosts)}")
        elif hosts and not valid_host(hosts[0]):
            answer = problem(400, "Bad Request", f"the Host field is {shown_field(hosts[0], 80)}, not a host and port"
                             " (RFC 9112 §3.2, RFC 3986 §3.2.2)")
        elif not bytes(scope.get("query_string", b"")).isascii():
            answer = problem(400, "Bad Request", "the request target is not a URL this server reads (RFC 9112 §3.2):"
                             " its query holds an octet beyond ASCII, which a URL sends %-escaped (RFC 3986 §2.1)")
        else:
            if listed > 1:
                scope = {**scope, "headers": joined(scope["headers"])}
            # of an HTTP/1.0 request, or of one without content (RFC 9112 §6.3), nothing to wait for: RFC 9110 §10.1.1
            if expects and version != "1.0" and sends_content(scope["headers"]):
                receive, send = closing_unread(receive, send)
            await self.app(scope, receive, send)
            return
        answer.headers["Connection"] = "close"
        await answer(scope, receive, send)


#: Request fields the app reads as one value, whose several lines are that value only joined (RFC 9110 §5.3): the
#: lists ``If-Match`` and ``If-None-Match`` (§13.1.1, §13.1.2: ``#entity-tag``) and ``Accept`` (§12.5.1: read as its
#: first line alone, ``Accept: text/html`` then ``Accept: application/json`` was answered a text's octets, where the
#: one line ``text/html, application/json`` is its description: found by probing, 2026-12-01), and ``Range``, ``If-Range`` and
#: ``Accept-Datetime``, no lists (§14.1.1: one range-set; §13.1.5: one validator; RFC 7089 §2.1.1: one date), sent
#: on several lines an invalid value as a sender that joins them reads it (``Range`` ignored, ``If-Range`` false, a
#: ``400``), never the first line alone (found by probing, 2026-11-28: ``Range: bytes=0-1`` then
#: ``Range: bytes=3-4`` was a ``206`` of the first two octets, where a proxy reading the last saw other octets).
_JOINED = frozenset({b"accept", b"if-match", b"if-none-match", b"range", b"if-range", b"accept-datetime"})


def closing_unread(receive: Receive, send: Send) -> tuple[Receive, Send]:
    """``receive`` and ``send`` of a request with ``Expect`` (``100-continue``), such that an answer begun before
    its content was all read says ``Connection: close``: the client, told no ``100``, may send the content or not,
    so what follows on the connection cannot be told apart from it (RFC 9110 §10.1.1: the server "SHOULD indicate
    whether it intends to close the connection"). Found in review (2026-11-27): after a ``401`` the next request's
    first octets were read as this one's content."""
    done = False

    async def receiving() -> Message:
        nonlocal done
        message = await receive()
        if message["type"] != "http.request" or not message.get("more_body", False):
            done = True
        return message

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start" and not done:
            headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
            message = {**message, "headers": [*headers, (b"connection", b"close")]}
        await send(message)

    return receiving, sending


def joined(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` with the lines of each :data:`_JOINED` field made one, their values joined by ``", "`` in the
    order sent, where the first stood (RFC 9110 §5.3: "without changing the semantics of the message"); a
    Starlette ``headers.get`` reads the first line alone, so ``If-Match: "x"`` then ``If-Match: <the tag>``
    was a ``412``."""
    values: dict[bytes, list[bytes]] = {}
    for key, value in headers:
        if key in _JOINED:
            values.setdefault(key, []).append(value)
    made: list[tuple[bytes, bytes]] = []
    for key, value in headers:
        if key not in values:
            made.append((key, value))
        elif values[key]:
            made.append((key, b", ".join(values[key])))
            values[key] = []
    return made
