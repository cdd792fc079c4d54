"""Who reads: each request's reader, for private series and embargoes (:mod:`pdi.archive.access`).

Reading needs no token; a request that presents one (``Authorization:
Bearer …``, RFC 6750 §2.1) reads as its holder, and may then read the private
series and embargoed documents of the token's scope (any role). The reader
is set for the whole request (:data:`pdi.archive.access.current_reader`, a
context variable that the worker threads reading for it inherit), so every
read path — N2R and the other RFC 2169 services, ``/api/*``, the viewer,
replay, search and the browse pages — answers as the archive answers that
reader. A token that is unknown or revoked is ``401`` (RFC 6750 §3.1), and
``Bearer`` with no token after it, or with what is no ``b64token`` after it
(§2.1), ``400`` (``invalid_request``), rather than read as anonymous, so a reader is never silently shown less than they are
allowed to see; another scheme (``Basic``) is ``401`` with no error code, as
if no token were given (§3; :func:`refused_authorization`).

A browser cannot send that header: on the resolver's own origin
(``cookies=True``) a ``GET`` or ``HEAD`` without one reads as the token of
the :data:`COOKIE` cookie that ``POST /signin`` sets
(:mod:`pdi.server.pages.signin`), exactly as if it were its bearer token. Only
reads take it: any other method reads as anonymous whatever cookie comes
with it, and the write API reads the ``Authorization`` header alone, so a
cookie can never write (no cross-site request forgery to defend against).
An answer read with the cookie is ``Cache-Control: private, no-store``
whatever the route said (RFC 9111 §5.2.2.7, §5.2.2.5), and
:func:`pdi.server.protocol.entity_answers.shared_answer` never lets the resolver's cache keep
it. So is every answer read with a bearer token but an ``immutable`` one
(the bytes of a name anyone may read, the same for everyone): a cache on
the way that keeps answers whatever the request's ``Authorization`` (nginx
with ``proxy_cache_valid`` does) must not give it to others. And every
answer but an ``immutable`` one varies by :data:`BY_READER`, so that such a
cache never gives an anonymous reader's answer (a TimeMap, a listing, a
refusal) to a reader with a token or a sign-in, who may read more.
A cookie whose token is no longer live (revoked) is
``401`` and is cleared at once: the next request reads as anonymous. The
replay origin (``cookies=False``) never reads the cookie — the browser sends
it there too, as cookies are not kept apart by port — so an archived page
can never be shown, or act, with a person's sign-in.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Callable, Iterable
from typing import Final

import anyio.to_thread
from starlette.requests import cookie_parser
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi.archive import Archive
from pdi.archive.access import Reader, current_reader
from pdi.server.http.middleware import HTTPMiddleware
from pdi.server.http.problems import problem
from pdi.server.http.site import at

#: The cookie that holds a signed-in person's token (``HttpOnly``: no script, archived or not, reads it).
COOKIE = "pdi-token"

#: Whether the request being answered reads as the token of the :data:`COOKIE` cookie (not a bearer token).
by_cookie: contextvars.ContextVar[bool] = contextvars.ContextVar("pdi_by_cookie", default=False)

#: The paths whose answers are the same whoever asks, no token looked at (an ``Authorization`` sent there is
#: ``pdi serve --metrics-token``'s, which lets ``/readyz`` say why a part failed: :mod:`pdi.server.process.health`).
UNREAD_PATHS: Final = frozenset({"/healthz", "/readyz"})

#: The path and query of the ``GET`` being answered, as sent (where "sign in" brings the reader back to).
request_target: contextvars.ContextVar[str] = contextvars.ContextVar("pdi_request_target", default="/")

#: What an answer that depends on who reads varies by (RFC 9110 §12.5.5): the bearer token and the sign-in
#: cookie. A shared cache may give a stored answer to a request with ``Authorization`` (RFC 9111 §3.5 only
#: keeps it from storing the answer *to* one), so without these an anonymous answer kept by a cache on the
#: way would be given to a reader with a token, who may read more.
BY_READER = "Authorization, Cookie"

#: The methods that read: the only ones that take the cookie.
READS = frozenset({"GET", "HEAD"})

#: The ``Cache-Control`` of an answer no cache may keep or give to another (RFC 9111 §5.2.2.7, §5.2.2.5).
PRIVATE = "private, no-store"

#: An anonymous reader (made here, not in pdi.archive.access: a command that reads no request makes none).
ANONYMOUS = Reader()


def refused_authorization(scheme: str, secret: str) -> tuple[int, str, str | None]:
    """Why an ``Authorization`` field of this scheme and secret is refused before its token is looked up, as RFC 6750
    §3 says: another scheme (``Basic``) is as if none were given, ``401`` and no error code; ``Bearer`` without a
    token, or with what is no ``b64token`` (§2.1: a space, a comma, a letter beyond ASCII), is malformed, ``400``
    and ``invalid_request`` (§3.1). ``(0, "", None)``: a bearer token, to look up."""
    if scheme[:6].lower() == "bearer" and scheme[6:7].isspace():  # Bearer<TAB>token: the scheme said, wrongly parted
        return 400, ("Authorization: Bearer is parted from its token by a space (RFC 9110 §11.4), not a tab or another"
                     " blank: send Authorization: Bearer <token>"), "invalid_request"
    if scheme.lower() != "bearer":
        # a scheme's name is a short word (Basic, Digest); anything else may be a token sent bare: never echoed
        said = scheme if scheme.isascii() and scheme.isalpha() and len(scheme) <= 20 else "another scheme"
        return 401, f"this resolver takes Authorization: Bearer <token> (pdi token add), not {said}", None
    token = secret.strip(" \t")
    if not token:
        return 400, "Authorization: Bearer names no token", "invalid_request"
    if not _B64TOKEN.fullmatch(token):  # never a token pdi made: malformed (§3.1), not one unknown or revoked
        return 400, ("Authorization: Bearer is followed by something that is no bearer token (RFC 6750 §2.1:"
                     " letters, digits and -._~+/, then any =): send Authorization: Bearer <token>"), "invalid_request"
    return 0, "", None


#: RFC 6750 §2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" (ASCII only).
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


def authorization_given_more_than_once(count: int) -> str:
    """Why a request giving ``Authorization`` in ``count`` fields is refused (``400``, ``invalid_request``): RFC 9110
    §5.3 (a field that is not a list is given once) and RFC 6750 §3.1 (more than one token presented). Read by its
    first field, the request acted as whichever token came first, while a proxy or a log reading the last saw
    another."""
    return (f"the request gives Authorization {count} times: give one token, in one Authorization field (RFC 9110"
            " §5.3, RFC 6750 §3.1)")


def cookie_token(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """The token the :data:`COOKIE` cookie of a request's raw headers holds (``None``: none, or empty)."""
    sent = "; ".join(v.decode("latin-1") for k, v in headers if k == b"cookie")
    if COOKIE not in sent:
        return None
    return cookie_parser(sent).get(COOKIE, "").strip(" \t") or None


def may_hold_cookie(field: bytes) -> bool:
    """Whether a raw ``Cookie`` field may carry the :data:`COOKIE` cookie (a quick test: never a false "no")."""
    return _COOKIE_NAME in field


_COOKIE_NAME = COOKIE.encode()


def cookie_path() -> str:
    """The ``Path`` of the :data:`COOKIE` cookie: the resolver's own, ``/`` at a host's root, ``/pdi/`` under the path
    of its base URL (:func:`pdi.server.http.site.at`), so that a browser sends the token to no other service of the
    host (RFC 6265 §5.1.4)."""
    return at("/")


def clear_cookie(secure: bool) -> str:
    """The ``Set-Cookie`` value that makes a browser forget the :data:`COOKIE` cookie (at :func:`cookie_path`)."""
    return f"{COOKIE}=; Path={cookie_path()}; Max-Age=0; HttpOnly; SameSite=Strict" + ("; Secure" if secure else "")


class Readers(HTTPMiddleware):
    """ASGI middleware: the reader of each HTTP request, anonymous or the token it presents.

    ``cookies``: whether a read may present its token in the :data:`COOKIE` cookie (the resolver's
    origin); ``base_url`` says whether the resolver is reached over ``https`` (a cleared cookie is then ``Secure``);
    ``expired_page`` makes the ``401`` page a person is shown when the cookie's token is no longer live, from
    the request's target (:func:`pdi.server.pages.signin.expired_sign_in`; without it, a problem).
    """

    def __init__(
        self, app: ASGIApp, archive: Archive, *, cookies: bool = False, base_url: str | None = None,
        expired_page: Callable[[str], Response] | None = None,
    ) -> None:
        super().__init__(app)
        self.archive = archive
        self.cookies = cookies
        self.base_url = base_url
        self.expired_page = expired_page

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] in UNREAD_PATHS:  # the same to every reader; an Authorization there is --metrics-token's
            await self.app(scope, receive, send)
            return
        fields = [v for k, v in scope["headers"] if k == b"authorization"]
        header = fields[0] if fields else None
        reader = ANONYMOUS
        cookie = None
        if header is not None:
            scheme, _, secret = header.decode("latin-1").partition(" ")
            record = None
            status, detail, error = refused_authorization(scheme, secret)
            if len(fields) > 1:
                status, detail, error = 400, authorization_given_more_than_once(len(fields)), "invalid_request"
            elif not status:
                record = await anyio.to_thread.run_sync(self.archive.authenticate, secret.strip(" \t"))
                status, detail, error = 401, "the token is not known, or was revoked", "invalid_token"
            if record is None:
                refusal = problem(status, "unauthorized" if status == 401 else "bad request", detail)
                refusal.headers["WWW-Authenticate"] = 'Bearer realm="pdi"' + (f', error="{error}"' if error else "")
                await refusal(scope, receive, send)
                return
            reader = Reader(record)
        elif self.cookies and scope["method"] in READS:
            cookie = cookie_token(scope["headers"])
            if cookie is not None:
                record = await anyio.to_thread.run_sync(self.archive.authenticate, cookie)
                if record is None:
                    await self._signed_out(scope, receive, send)
                    return
                reader = Reader(record)
        token = current_reader.set(reader)
        marked = by_cookie.set(cookie is not None)
        target = request_target.set(_target(scope))
        try:
            if cookie is not None:  # private, no-store, and varying by the reader as every answer here does
                await self.app(scope, receive, _private(_varies(send, BY_READER)))
            else:
                # the replay origin never reads the cookie: its answers vary by the token alone
                varying = _varies(send, BY_READER if self.cookies else "Authorization")
                await self.app(scope, receive, varying if header is None else _private(varying, immutable=True))
        finally:
            request_target.reset(target)
            by_cookie.reset(marked)
            current_reader.reset(token)

    async def _signed_out(self, scope: Scope, receive: Receive, send: Send) -> None:
        """``401`` to a read whose cookie's token is not live: the cookie cleared; for a person, the sign-in page."""
        accept = next((v for k, v in scope["headers"] if k == b"accept"), b"")
        secure = scope.get("scheme") == "https" or (self.base_url or "").lower().startswith("https:")
        refusal: Response
        if b"text/html" in accept and self.expired_page is not None:
            refusal = await anyio.to_thread.run_sync(self.expired_page, _target(scope))
        else:
            refusal = problem(401, "unauthorized",
                              "the token you signed in with is not known, or was revoked: sign in again (/signin)")
        refusal.headers["WWW-Authenticate"] = 'Bearer realm="pdi", error="invalid_token"'
        refusal.headers["Cache-Control"] = "no-store"
        refusal.headers.append("Set-Cookie", clear_cookie(secure))
        await refusal(scope, receive, send)


def _target(scope: Scope) -> str:
    """The request's path and query as sent."""
    raw: bytes = scope.get("raw_path") or scope["path"].encode("utf-8")
    query: bytes = scope.get("query_string", b"")
    return raw.decode("latin-1") + ("?" + query.decode("latin-1") if query else "")


def _private(send: Send, *, immutable: bool = False) -> Send:
    """``send`` with every answer's ``Cache-Control`` made ``private, no-store``; with ``immutable``, every
    answer's but an ``immutable`` one's (the same for everyone, any cache may keep it)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = message.get("headers", [])
            control = next((v for k, v in headers if k.lower() == b"cache-control"), b"")
            if not (immutable and b"immutable" in control):
                kept = [(k, v) for k, v in headers if k.lower() != b"cache-control"]
                message = {**message, "headers": [*kept, (b"cache-control", PRIVATE.encode("latin-1"))]}
        await send(message)

    return sending


def _varies(send: Send, fields: str) -> Send:
    """``send`` with ``fields`` added to the ``Vary`` of every answer but an ``immutable`` one (the same for
    everyone), in one field after the route's own (some caches read only one: nginx before 1.23)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            control = next((v for k, v in headers if k.lower() == b"cache-control"), b"")
            if b"immutable" not in control:
                message = {**message, "headers": varying_also(headers, fields)}
        await send(message)

    return sending


def varying_also(headers: Iterable[tuple[bytes, bytes]], fields: str) -> list[tuple[bytes, bytes]]:
    """``headers`` with ``fields`` (``Authorization, Cookie``) added to their ``Vary``, the ones not named there
    already, in one field after the others (some caches read only one: nginx before 1.23)."""
    headers = list(headers)
    kept = [(k, v) for k, v in headers if k.lower() != b"vary"]
    varies = [v.decode("latin-1").strip() for k, v in headers if k.lower() == b"vary"]
    named = {f.strip().lower() for v in varies for f in v.split(",")}
    varies += [f for f in (f.strip() for f in fields.split(",")) if f.lower() not in named]
    return [*kept, (b"vary", ", ".join(varies).encode("latin-1"))]
