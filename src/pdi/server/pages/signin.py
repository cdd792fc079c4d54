"""Signing in from a browser: a token kept in an ``HttpOnly`` cookie, read as if it were a bearer token (an edge).

A browser cannot send ``Authorization: Bearer …``, so a person with a token
(``pdi token add NAME --series S --role read``; any role reads) signs in on
the resolver's own origin:

* ``GET /signin?next=PATH`` — a small form (a labelled field, a button; no
  script) where the token is pasted.
* ``POST /signin`` (``application/x-www-form-urlencoded``: ``token=…`` and
  ``next=…``) — the token is checked (:meth:`pdi.archive.Archive.authenticate`);
  a live one sets the :data:`~pdi.server.http.readers.COOKIE` cookie,
  ``HttpOnly; SameSite=Strict; Path=/`` (under a base URL's path, that path: ``Path=/pdi/``; and ``Secure``
  when the resolver is reached over ``https``, as its base URL or the request's scheme says), a
  session cookie, and answers ``303`` to ``next`` (default ``/``). One that
  is not live shows the form again with the error, ``401``.
* ``POST /signout`` — clears the cookie, ``303`` to ``next``.

``next`` is a path on this resolver only (:func:`local_path`): anything
with a scheme, an authority (``//``), a backslash, a space or a control
character (which URL parsers drop or turn into ``/``) is refused, ``400``,
before anything is set. A character beyond ASCII in it is percent-encoded
as UTF-8, as a browser sends it (RFC 3986 §2.5), so that ``Location``, a
field of ASCII octets, can carry it. Both ``POST`` routes take a request only from the
resolver's own origin (:func:`own_origin`; else ``403``): its ``Origin``
header, or, when a browser sends none, the origin of its ``Referer`` (the
page the form was on; RFC 9110 §10.1.3), as OWASP's CSRF prevention cheat sheet
says to verify the source origin. A request with neither is refused too: no
other origin — the replay origin included, another port of the same host
and so the same *site*, which ``SameSite`` does not tell apart — can sign a
person in as someone else (login CSRF) or out, not even from a page whose
``Referrer-Policy`` keeps its address to itself. ``SameSite=Strict`` keeps the cookie
from requests other sites start.

What the cookie then does is :class:`pdi.server.http.readers.Readers`'s: reads
(``GET``, ``HEAD``) take it as they take a bearer token, writes never; what
is read with it is ``private, no-store``; a revoked token's cookie is ``401``
and cleared at the next request; the replay origin never reads it (so a
private capture is not replayed for a signed-in person: the resolver shows what is kept of it
instead). No script can read the cookie (``HttpOnly``):
neither the resolver's pages' nor an archived page's.
"""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlsplit

import anyio.to_thread
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from pdi._ascii import ascii_lower
from pdi._wording import shown_field
from pdi.archive import Archive
from pdi.archive.access import current_reader
from pdi.archive.tokens import PREFIX
from pdi.errors import ParseError
from pdi.server.http.params import optional
from pdi.server.http.readers import COOKIE, by_cookie, clear_cookie, cookie_path
from pdi.server.pages.layout import esc, page

#: The largest sign-in form accepted (octets): a token is 47 characters, a path at most MAX_NEXT.
MAX_FORM = 8192
#: The longest ``next`` path accepted (characters).
MAX_NEXT = 2000

STYLE = """
form.signin{display:grid;gap:0.5rem;max-width:34rem;margin:1rem 0}
form.signin input{font-size:1rem;padding:0.35rem}
form.signin button{justify-self:start;font-size:1rem;padding:0.3rem 1rem}
.hint{color:#555;font-size:0.9rem;margin:0}
@media (prefers-color-scheme:dark){.hint{color:#b0b0b0}}
"""


class BadNext(ValueError):
    """A ``next=`` that is not a path on this resolver."""


def local_path(value: str | None) -> str:
    """``value`` if it is a path on this resolver (``/…``), ``/`` if empty; else :class:`BadNext` saying why.

    A character beyond ASCII comes back percent-encoded as UTF-8 (``/€`` is
    ``/%E2%82%AC``), as a browser writes it in a request (RFC 3986 §2.5): a
    ``Location`` field is ASCII (Starlette failed writing it: a ``500``).

    Refused: anything not starting with ``/`` (a scheme, a relative path), an
    authority (``//host``), a backslash (``/\\host`` is ``//host`` to a
    browser), whitespace or a control character (a URL parser drops tabs and
    newlines, which could join ``/`` and ``/``), a lone surrogate, and more
    than :data:`MAX_NEXT` characters.
    """
    if not value:
        return "/"
    if len(value) > MAX_NEXT:
        raise BadNext(f"next= is {len(value)} characters; a path here is at most {MAX_NEXT}")
    if not value.startswith("/"):
        raise BadNext(f"next={value[:60]!r} is not a path on this resolver: it must begin with '/'")
    if value.startswith("//"):
        raise BadNext(f"next={value[:60]!r} names another site ('//'): give a path on this resolver")
    bad = next((i for i, ch in enumerate(value) if ch == "\\" or ch.isspace() or ord(ch) < 0x20 or ord(ch) == 0x7F), None)
    if bad is not None:
        raise BadNext(f"next= holds {value[bad]!r} at character {bad}: a path here has no backslash, space or control character")
    if value.isascii():
        return value
    written = []
    for i, ch in enumerate(value):
        if "\ud800" <= ch <= "\udfff":  # a lone surrogate (a query read with surrogateescape) is no character
            raise BadNext(f"next= holds {ch!r} at character {i}: not a character UTF-8 can write")
        written.append(ch if ch.isascii() else quote(ch.encode("utf-8"), safe=""))
    return "".join(written)


#: Upper-case ASCII letters to lower case, and nothing else: a header's octets beyond ASCII, read as Latin-1, stay
#: the octets they were (``Ã`` lower-cased would be ``ã``, another octet), so an answer quotes them as sent.


def _origin(scheme: str, host: str) -> str:
    """``scheme://host[:port]`` lower-cased (ASCII: RFC 6454 §4 takes a host as IDNA makes it, all ASCII), its
    default port left out (RFC 6454 §6.1's serialisation)."""
    scheme = ascii_lower(scheme)
    host = ascii_lower(host)
    default = {"http": ":80", "https": ":443"}.get(scheme)
    if default and host.endswith(default):
        host = host[: -len(default)]
    return f"{scheme}://{host}"


def _origin_of(url: str) -> str:
    """The origin a URL's scheme and authority name, or the URL as it is when it has none."""
    try:
        parts = urlsplit(url)
    except ValueError:  # an authority urllib cannot read ("http://[x"): no origin
        return url
    if not parts.scheme or not parts.netloc or "@" in parts.netloc:  # no user name in an origin (RFC 6454 §4)
        return url
    return _origin(parts.scheme, parts.netloc)


def own_origin(request: Request, base_url: str | None) -> str:
    """The resolver's origin: its base URL's, when it has one, else the request's own scheme and ``Host``."""
    if base_url:
        parts = urlsplit(base_url)
        return _origin(parts.scheme, parts.netloc)
    return _origin(request.url.scheme, request.headers.get("host", request.url.netloc))


def secure(request: Request, base_url: str | None) -> bool:
    """Whether the resolver is reached over ``https`` (its base URL, else the request's scheme)."""
    return (base_url or "").lower().startswith("https:") or request.url.scheme == "https"


class SignIn:
    """``/signin`` and ``/signout`` over one archive (see the module's docstring)."""

    def __init__(self, archive: Archive, base_url: str | None = None) -> None:
        self.archive = archive
        self.base_url = base_url

    async def form(self, request: Request) -> Response:
        """``GET /signin``: the form (or, signed in, who is, and the way on)."""
        try:
            back = local_path(optional(request, "next"))
        except (BadNext, ParseError) as exc:
            return _form("/", error=str(exc), status=400)
        return _form(back)

    async def sign_in(self, request: Request) -> Response:
        """``POST /signin``: a live token sets the cookie and goes on to ``next``; else the form again."""
        refused = self._foreign(request)
        if refused is not None:
            return refused
        fields, error = await _read_form(request)
        if error is not None:
            return _form("/", error=error[1], status=error[0])
        try:
            back = local_path(fields.get("next"))
        except BadNext as exc:
            return _form("/", error=str(exc), status=400)
        secret = fields.get("token", "").strip()
        if not secret:
            return _form(back, error="No token was given: paste the token you were given (it begins pdi_).", status=400)
        record = await anyio.to_thread.run_sync(self.archive.authenticate, secret)
        if record is None:
            hint = "" if secret.startswith(PREFIX) else f" (a token begins {PREFIX})"
            answer = _form(back, error=f"This token is not known, or was revoked: check that you pasted all of it{hint}.",
                           status=401)
            answer.headers["WWW-Authenticate"] = 'Bearer realm="pdi", error="invalid_token"'
            return answer
        cookie = f"{COOKIE}={secret}; Path={cookie_path()}; HttpOnly; SameSite=Strict" + ("; Secure" if secure(request, self.base_url) else "")
        return Response(status_code=303, headers={"Location": back, "Set-Cookie": cookie, "Cache-Control": "no-store"})

    async def sign_out(self, request: Request) -> Response:
        """``POST /signout``: the cookie cleared, ``303`` to ``next`` (default ``/``)."""
        refused = self._foreign(request)
        if refused is not None:
            return refused
        fields, error = await _read_form(request)
        try:
            back = local_path(fields.get("next")) if error is None else "/"
        except BadNext:
            back = "/"
        return Response(status_code=303, headers={
            "Location": back, "Set-Cookie": clear_cookie(secure(request, self.base_url)), "Cache-Control": "no-store"})

    def _foreign(self, request: Request) -> Response | None:
        """``403`` unless the request comes from the resolver's own origin, by its ``Origin``, or, without one,
        by its ``Referer``; else ``None``."""
        own = own_origin(request, self.base_url)
        sent = request.headers.get("origin")
        said = "Origin"
        if sent is None:
            sent = request.headers.get("referer")
            said = "Referer"
            if sent is None:
                return _form("/", status=403, error="This form was sent with neither Origin nor Referer, so it cannot"
                                                    f" be told from a form another site sent: sign in on this resolver's own"
                                                    f" page ({own}/signin) in a browser that says where a form comes from.")
        if sent != "null" and _origin_of(sent) == own:
            return None
        shown = shown_field(sent if said == "Origin" else _origin_of(sent), 100)
        return _form("/", status=403, error=f"This form was sent from {shown} ({said}), not from this resolver ({own}):"
                                            " sign in on this resolver's own page.")

    def routes(self) -> list[Route]:
        """The routes: ``GET``/``POST /signin`` and ``POST /signout``."""
        return [Route("/signin", self.form, methods=["GET"]), Route("/signin", self.sign_in, methods=["POST"]),
                Route("/signout", self.sign_out, methods=["POST"])]


async def _read_form(request: Request) -> tuple[dict[str, str], tuple[int, str] | None]:
    """The fields of an urlencoded form body of at most :data:`MAX_FORM` octets (each field's first value),
    or the status and error saying what was wrong with it."""
    sent = request.headers.get("content-type", "").split(";", 1)[0].strip(" \t")
    if sent.lower() != "application/x-www-form-urlencoded":
        said = shown_field(sent, 80) if sent else "no Content-Type"
        return {}, (415, f"the form is sent as application/x-www-form-urlencoded, not {said}")
    body = bytearray()
    try:
        async for piece in request.stream():
            body += piece
            if len(body) > MAX_FORM:
                return {}, (413, f"the form is larger than {MAX_FORM} octets: a token is {len(PREFIX) + 43} characters")
    except ClientDisconnect:
        return {}, (400, "the form was not sent whole")
    try:
        parsed = parse_qs(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        return {}, (400, "the form is not UTF-8")
    return {key: values[0] for key, values in parsed.items()}, None


def _form(back: str, *, error: str = "", status: int = 200, more: str = "") -> HTMLResponse:
    """The sign-in page: the form (with ``error``, if any) going on to ``back``; or, signed in, who is."""
    reader = current_reader.get()
    token = reader.token if reader is not None else None
    heading = "Sign in"
    if token is not None and by_cookie.get() and not error:
        scope = ", ".join(token.series) if token.series else "every series"
        body = (
            f"<h1>{heading}</h1><p>You are signed in as <strong>{esc(token.name)}</strong> ({esc(token.role)},"
            f' {esc(scope)}).</p><p><a href="{esc(back)}">Go on to {esc(back)}</a></p>'
        )
        return _no_store(HTMLResponse(page(heading, body, style=STYLE), status_code=status))
    described = "token-hint signin-error" if error else "token-hint"
    invalid = ' aria-invalid="true" autofocus' if error else ""
    alert = f'<p class="error" id="signin-error" role="alert">{esc(error)}</p>{more}' if error else ""
    body = (
        f"<h1>{heading}</h1>"
        "<p>Signed in, this browser reads the private series and embargoed documents your token covers,"
        " on this resolver's pages, as a program reads them with <code>Authorization: Bearer</code>."
        " Archived pages of a private series are not replayed: what is kept of them is shown instead.</p>"
        f"{alert}"
        '<form class="signin" action="/signin" method="post">'
        f'<input type="hidden" name="next" value="{esc(back)}">'
        '<label for="token">Token</label>'
        f'<input id="token" name="token" type="password" autocomplete="off" spellcheck="false" required'
        f' aria-describedby="{described}"{invalid}>'
        f'<p class="hint" id="token-hint">The token you were given (made with <code>pdi token add</code>;'
        f" it begins <code>{PREFIX}</code>). This browser keeps it until you sign out or close it, where no"
        " script can read it; only this resolver reads it (not its replay origin, nor any other site).</p>"
        '<button type="submit">Sign in</button></form>'
    )
    return _no_store(HTMLResponse(page(heading, body, style=STYLE), status_code=status))


def _no_store(answer: HTMLResponse) -> HTMLResponse:
    answer.headers["Cache-Control"] = "no-store"
    return answer


def expired_sign_in(target: str) -> HTMLResponse:
    """The ``401`` page of a read whose cookie's token is no longer live: sign in again, or go on without."""
    try:
        back = local_path(target)
    except BadNext:
        back = "/"
    return _form(back, status=401, error="The token you signed in with is not known any more (it was revoked):"
                                         " you are signed out. Sign in again, or go on without signing in.",
                 more=f'<p><a href="{esc(back)}">Go on without signing in</a></p>')


__all__ = ["SignIn", "expired_sign_in", "local_path", "own_origin"]
