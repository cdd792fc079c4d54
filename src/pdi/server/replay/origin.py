"""Replay: archived web pages shown as the pages they were, from an origin of their own (an edge, read-only).

An aggregate (a capture made by ``pdi capture``, or a deposited MHTML file:
``multipart/related``) or an HTML document is served at
``/replay/<name>/<file>``: ``<name>`` is the versioned PDI percent-encoded
whole (its ``/`` and ``#`` too), ``<file>`` one of its parts under the name
:func:`pdi.mhtml.unpack.plan` makes for it (the root is ``index.html``). The
references of every HTML and CSS part are rewritten to those names by the
reader's RFC 2557 §8 matching (:class:`pdi.mhtml.resolve.Resolver`); one that
no part satisfies becomes ``about:blank``: nothing leads to the live web.
Each part is served with its own media type (a text part with the charset
its bytes were read in).

A fragment of the name (``elt``, ``name``, ``char``, ``line``: evaluated on
the root page, an aggregate's as an HTML document's) is marked in the root
(:mod:`pdi.server.replay.marks`), and ``index.html#pdi-passage`` scrolls to it.
``/replay/<name>/select/<file>`` serves the same page for selection: its text
in pieces that carry their source positions, its start tags their numbers,
and :data:`SELECT_SCRIPT`, the one script the CSP then allows (by its hash),
which tells the framing page what the reader selects; a fragment of the name is
marked there too (between the pieces), and the script tells the framing page its
text and the element that holds it (the other forms of the name it was opened at).

The replay app runs on its own origin (``pdi serve --replay-origin``, by
default the next port of the same host): an archived page's script, if it
ran, could not read the resolver's cookies or pages (another origin), and
the resolver's pages never serve archived bytes. Every answer of the replay
origin, errors included, carries :func:`security_headers`: a
Content-Security-Policy under which nothing loads from anywhere but the
replay origin itself (and ``data:``/``blob:``), nothing connects
(``connect-src 'none'``), no form is sent, no plug-in runs, the answer is
sandboxed by its own policy (``sandbox``: no top navigation, pop-up or form,
whoever opens it), and only the resolver's pages (and replayed pages' own
frames) may frame it; no script runs unless ``scripts``
(``--replay-scripts``), and then only the page's own, and only in a frame:
the request's fetch metadata (``Sec-Fetch-Dest``, ``Sec-Fetch-Site``) decides
(:func:`framed_by_the_resolver`), so a page opened in a window of its own
(typed, followed, ``window.open``) runs nothing. Such a page is not even shown
alone: a window's or a tab's navigation to a replayed file (``Sec-Fetch-Dest:
document``, ``Sec-Fetch-Mode: navigate``) is answered ``303 See Other`` to the
resolver's ``/view?pdi=NAME`` (:func:`viewer_location`), so the archive's own
banner is always above what its replay host shows, and a page cannot stand there
alone to draw a banner of its own; a client that sends no fetch metadata is
answered the file, as the viewer's frame, an ``<object>`` and a sub-resource are.
It sets no cookie and reads none: not the resolver's sign-in cookie either
(:mod:`pdi.server.pages.signin`), which the browser sends here too (cookies are not
kept apart by port). A capture of a private series or an embargoed one is
therefore replayed only to a bearer token, never to a signed-in person: its
page is refused with a page that says so (:func:`not_replayed`, ``403``),
and the resolver shows such a reader its source instead. Whatever else is asked of it is ``404``.
A browser asking for a page (``Accept: text/html``, a frame's request) under a name held by no page, or withdrawn,
is answered with a page that says so (:func:`not_held`, ``404`` or ``410``); a program, with problem JSON. So is
every other refusal of a browser (a name that is not one, ``400``; a part the page does not have, ``404``):
:func:`pages_for_browsers` turns its problem into a page (:data:`REFUSED`), status and header fields kept. Each
such answer, page or JSON, names ``Accept`` in its ``Vary`` (RFC 9110 §12.5.5). These
small pages (:func:`small_page`) are drawn dark for a system that prefers a dark colour scheme, as the resolver's are.
"""

from __future__ import annotations

import codecs
import html
import json
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import quote, unquote, urlsplit

import anyio.to_thread
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdi import formats
from pdi.archive import Archive, Generic, Resolved
from pdi.errors import (
    AccessError,
    DeletedError,
    LimitError,
    NotFoundError,
    PDIError,
    UnsupportedError,
    WithdrawnError,
)
from pdi.identifier import PDI
from pdi.interop.memento import as_uri
from pdi.mhtml import Aggregate
from pdi.mhtml.limits import MAX_REPLAY_OCTETS
from pdi.mhtml.unpack import PlannedFile, plan
from pdi.server.http.middleware import HostField, HTTPMiddleware, MiddlewareErrors
from pdi.server.http.preconditions import Preconditions
from pdi.server.http.problems import HANDLERS, Options
from pdi.server.http.reader_words import heading_words, refusal_words
from pdi.server.http.readers import PRIVATE, Readers
from pdi.server.process.limits import PacedAnswers, WorkLimits
from pdi.server.protocol.entity_answers import shared_answer

if TYPE_CHECKING:
    from pdi.fragments import FragmentResult

#: The media types replay shows as pages.
AGGREGATE_TYPES = frozenset({"multipart/related"})

#: Fragment schemes marked in a replayed page (each selects ranges of the HTML source).
MARKED_SCHEMES = frozenset({"elt", "name", "char", "line"})

#: The largest representation replayed (bytes): a larger one is read by fragment, in the viewer's windows.
MAX_REPLAY_BYTES = MAX_REPLAY_OCTETS

#: Replayed pages kept planned in memory (their rewritten parts), most recently used last.
KEPT_PLANS = 8
#: Bytes of planned parts kept in memory at most, all pages together.
KEPT_BYTES = 64 << 20

_ROOT = re.compile(r"/replay/([^/]+)/(select/)?([^/]+)\Z")
#: A ``Host`` field as a browser sends it (RFC 9110 §7.2): a name or an IPv4 address, or an IPv6 one in brackets,
#: and a port.
_HOST = re.compile(r"(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")

#: The one script a page replayed for selection runs (``/replay/<name>/select/…``; allowed by its hash):
#: it names what the reader selects by the source positions the ``<pdi-t>`` pieces carry
#: (:func:`pdi.server.replay.marks.selection_insertions`) and tells the framing page.
SELECT_SCRIPT = """
(function () {
  function count(s) { let n = 0; for (const ch of s) n += (ch === "\\n" || ch === "\\x85") ? 2 : 1; return n; }
  function bounds(t) {
    const at = Number(t.dataset.at);
    return [at, t.hasAttribute("data-end") ? Number(t.dataset.end) : at + count(t.textContent)];
  }
  function at(t, node, offset, isEnd) {
    const [a, b] = bounds(t);
    if (t.hasAttribute("data-end")) return isEnd ? b : a;  // a character reference is taken whole
    if (node.nodeType === 3 && t.contains(node)) return a + count(node.data.slice(0, offset));
    return isEnd ? b : a;
  }
  // Chromium may fire selectionchange more than once for one selection (removeAllRanges, then
  // addRange); the framing page is told of each selection once, so that a late duplicate can never
  // be taken for the answer to a later selection.
  let told = null;
  document.addEventListener("selectionchange", function () {
    const selection = document.getSelection();
    if (!selection.rangeCount) { told = null; return; }
    const range = selection.getRangeAt(0);
    if (range.collapsed) { told = null; return; }
    const pieces = [...document.querySelectorAll("pdi-t")].filter((t) => range.intersectsNode(t));
    if (!pieces.length) return;
    const first = pieces[0], last = pieces[pieces.length - 1];
    const start = at(first, range.startContainer, range.startOffset, false);
    const end = at(last, range.endContainer, range.endOffset, true);
    let common = range.commonAncestorContainer;
    if (common.nodeType !== 1) common = common.parentElement;
    const element = common && common.closest("[data-pdi-e]");
    const elt = element ? Number(element.dataset.pdiE) : null;
    const key = start + "," + end + "," + elt;
    if (key === told) return;
    told = key;
    parent.postMessage({pdiSelection: {start: start, end: end, text: selection.toString(), elt: elt}}, "*");
  });
  // Opened at a passage (its marks written in): the framing page is told the text a reader selecting it would
  // select and the element holding it (an element's fragment: that element), to offer its other forms.
  const marked = [...document.querySelectorAll("pdi-mark")].filter((m) => m.textContent);
  if (marked.length) {
    const range = document.createRange();
    range.setStartBefore(marked[0]);
    range.setEndAfter(marked[marked.length - 1]);
    let common = range.commonAncestorContainer;
    if (common.nodeType !== 1) common = common.parentElement;
    const element = document.querySelector("[data-pdi-passage][data-pdi-e]") || (common && common.closest("[data-pdi-e]"));
    parent.postMessage({pdiOpened: {text: range.toString(), elt: element ? Number(element.dataset.pdiE) : null}}, "*");
  }
})();
"""


def replayable(media_type: str, size: int = 0) -> bool:
    """Whether replay shows a representation of this media type (and size) as a page: an aggregate or HTML,
    of at most :data:`MAX_REPLAY_BYTES`."""
    return (media_type in AGGREGATE_TYPES or formats.media_family(media_type) == "html") and size <= MAX_REPLAY_BYTES


def replay_path(name: str, file: str = "index.html") -> str:
    """The replay origin's path of ``file`` of the page ``name`` (a versioned PDI, with a fragment or not)."""
    return f"/replay/{quote(name, safe='')}/{file}"


def select_script_hash() -> str:
    """The CSP source of :data:`SELECT_SCRIPT` (``'sha256-…'``)."""
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(SELECT_SCRIPT.encode()).digest()).decode() + "'"


#: The ``Sec-Fetch-Dest`` of a request for a framed document, as the viewer's frame asks for a page (Fetch Metadata §2.1).
FRAMED = frozenset({"iframe", "frame"})


def viewer_location(dest: str | None, mode: str | None, path: str, resolver_origin: str | None) -> str | None:
    """Where a top-level navigation to a replayed page's file is sent instead (``303``): the resolver's viewer of
    that page, ``RESOLVER/view?pdi=NAME`` (``&select=1`` for a page replayed for selection), so the archive's
    banner always stands above what its replay origin shows; ``None`` for any other request, which is answered.

    A navigation of a window or a tab (typed, followed, ``window.open``) says ``Sec-Fetch-Dest: document`` and
    ``Sec-Fetch-Mode: navigate`` (W3C Fetch Metadata Request Headers §2.1, §2.3); the viewer's frame (``iframe``),
    an ``<object>`` or ``<embed>`` and every sub-resource say otherwise, and a client that sends no fetch metadata
    (curl, a web archive's crawler, an old browser) is answered as before. ``path`` is the request's raw path
    (``/replay/<name>/<file>``); a name that is no PDI is answered too (its refusal says why). The location is
    the resolver's origin followed by the name the path holds, percent-encoded whole: nothing of the request can
    name another host.
    """
    if dest != "document" or mode != "navigate" or resolver_origin is None:
        return None
    found = _ROOT.match(path)
    if found is None:
        return None
    try:
        name = str(PDI.parse(unquote(found.group(1))))
    except PDIError:
        return None
    return f"{resolver_origin}/view?pdi={quote(name, safe='')}" + ("&select=1" if found.group(2) else "")


def content_security_policy(
    resolver_origin: str | None, *, scripts: bool = False, select: bool = False, framed_anywhere: bool = False
) -> str:
    """The replay origin's Content-Security-Policy.

    ``'self'`` and ``data:``/``blob:`` for what a page shows (images, style,
    fonts, media, its own frames), nothing else: ``connect-src 'none'``
    (no ``fetch``, XHR, WebSocket, beacon), ``form-action 'none'``,
    ``object-src 'self'`` (an archived SVG in an ``<object>`` or ``<embed>``,
    not another host's, not a ``data:`` one), no workers or manifests,
    ``base-uri 'none'`` (every ``<base>`` was rewritten to ``./``). Scripts:
    ``'none'``, or with ``scripts`` the page's own (``'self' 'unsafe-inline'``,
    still nothing from the network). With ``select`` (a page replayed for
    selection), only :data:`SELECT_SCRIPT`, by its hash: never the page's own.
    Framed only by ``resolver_origin`` and the replay origin (CSP 3
    ``frame-ancestors``), or with ``framed_anywhere`` by any page: a part
    that a page run with scripts holds (a frame, an SVG in an ``<object>``)
    has that page's opaque origin above it, which no source expression
    matches (CSP 3 ``frame-ancestors`` checks each ancestor's origin, and an
    opaque one is ``null``); it never runs a script.

    The answer is sandboxed by its own policy too (CSP 3 §6.3.2
    ``sandbox``), whoever opens it: where a script may run, ``sandbox
    allow-scripts`` (an opaque origin; no ``allow-same-origin``, no
    ``allow-top-navigation``, ``allow-popups`` or ``allow-forms``), else
    ``sandbox allow-same-origin`` (the replay origin's own, and nothing may
    run, navigate the top, open a window or send a form, not even the
    frames it holds: they inherit the flags).
    """
    script = select_script_hash() if select else "'self' 'unsafe-inline'" if scripts else "'none'"
    sandbox = "allow-scripts" if scripts or select else "allow-same-origin"
    ancestors = f"'self' {resolver_origin}" if resolver_origin else "'self'"
    framing = "" if framed_anywhere else f"; frame-ancestors {ancestors}"
    return (
        "default-src 'none'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline' data:; "
        "font-src 'self' data:; media-src 'self' data: blob:; frame-src 'self' data: blob:; "
        f"child-src 'self' data: blob:; script-src {script}; connect-src 'none'; form-action 'none'; "
        f"object-src 'self'; worker-src 'none'; manifest-src 'none'; base-uri 'none'; sandbox {sandbox}"
        + framing
    )


def security_headers(
    resolver_origin: str | None, *, scripts: bool = False, select: bool = False, framed_anywhere: bool = False
) -> list[tuple[bytes, bytes]]:
    """What every answer of the replay origin carries (see the module's docstring).

    The policy depends on the request's fetch metadata (:func:`framed_by_the_resolver`),
    so every answer says so (``Vary``): a cache must never give the answer a frame got
    to a window.
    """
    policy = content_security_policy(resolver_origin, scripts=scripts, select=select, framed_anywhere=framed_anywhere)
    return [
        (b"content-security-policy", policy.encode("latin-1")),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
        (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=(), usb=()"),
        (b"vary", b"Sec-Fetch-Dest, Sec-Fetch-Mode, Sec-Fetch-Site"),
    ]


def framed_by_the_resolver(dest: str | None, site: str | None, resolver_host: str | None, replay_host: str | None) -> bool:
    """Whether a request's fetch metadata (W3C Fetch Metadata Request Headers §2) says it asks for a document
    nested in a page: ``Sec-Fetch-Dest`` one of :data:`FRAMED`; ``document`` (a window, a tab, a pop-up), any
    other, or none at all (a client that sends no fetch metadata) is not.

    When the resolver and the replay origin are on one host (the default: two ports) the viewer's request is
    ``same-site`` (§2.2: a site is a scheme and a host, not a port), so a ``cross-site`` one is another
    site's page framing it. Who frames it is then checked by the browser (``frame-ancestors``): a page
    framed by another origin is never shown.
    """
    if dest not in FRAMED:
        return False
    if resolver_host is not None and replay_host is not None and resolver_host.lower() == replay_host.lower():
        return site in ("same-origin", "same-site")
    return site in ("same-origin", "same-site", "cross-site")


class _Guarded(HTTPMiddleware):
    """ASGI middleware: the replay origin's headers on every answer, and no ``Set-Cookie`` ever.

    The resolver's origin (who may frame the pages) is ``resolver_origin``,
    or, when that is not known, the request's own scheme and host at
    ``resolver_port`` (the replay origin is then the resolver's host at
    another port). Archived scripts (``scripts``) run only in an answer the
    fetch metadata says is framed (:func:`framed_by_the_resolver`), and only
    in a page's root (``index.html``); the selection script too: opened in a
    window or a tab, nothing replayed runs. A window's or a tab's navigation to
    a replayed file is not answered with it at all but sent to the resolver's
    viewer of its page (:func:`viewer_location`, ``303``), under ``resolver_base``
    when it is known (``--base-url``, its path too: a resolver behind a proxy).
    """

    def __init__(
        self, app: ASGIApp, resolver_origin: str | None, resolver_port: int | None, *, scripts: bool,
        resolver_base: str | None = None,
    ) -> None:
        super().__init__(app)
        self.resolver_origin = resolver_origin
        self.resolver_port = resolver_port
        self.scripts = scripts
        #: The resolver's public base URL without its last ``/`` (``--base-url``, a path and all: a resolver behind
        #: a proxy at ``https://host/pdi/``), where its viewer is sent; ``None``: its origin.
        self.resolver_base = None if resolver_base is None else resolver_base.rstrip("/")

    def _origin(self, request: Request, *, checked: bool = False) -> str | None:
        """The resolver's origin: as configured, or the request's own scheme and host at the resolver's port;
        ``checked``, none of a host no browser sends (HostField refuses a malformed one only after this)."""
        if self.resolver_origin is not None or self.resolver_port is None:
            return self.resolver_origin
        if checked and not _HOST.fullmatch(request.headers.get("host", "")):
            return None
        host = request.url.hostname or "127.0.0.1"
        shown = f"[{host}]" if ":" in host else host
        return f"{request.url.scheme}://{shown}:{self.resolver_port}"

    def _headers(self, scope: Scope) -> list[tuple[bytes, bytes]]:
        raw = scope.get("raw_path") or scope.get("path", "").encode()
        found = _ROOT.match(raw.decode("latin-1").split("?", 1)[0])
        request = Request(scope)
        origin = self._origin(request)
        replay_host = request.url.hostname
        resolver_host = urlsplit(origin).hostname if origin is not None else None
        framed = framed_by_the_resolver(
            request.headers.get("sec-fetch-dest"), request.headers.get("sec-fetch-site"), resolver_host, replay_host
        )
        # scripts run in a replayed page's root alone: what it holds (its frames, an SVG in an <object>) runs
        # none, for the request of a page of an opaque origin (one run with scripts) for it is cross-site, as
        # another site's is (Fetch Metadata §2.2), and must be let through frame-ancestors
        root = found is not None and unquote(found.group(3)) == "index.html"
        select = framed and root and found is not None and found.group(2) is not None
        return security_headers(origin, scripts=self.scripts and framed and root, select=select,
                                framed_anywhere=self.scripts and found is not None and not root)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = self._headers(scope)
        names = {key for key, _ in headers}
        answer: ASGIApp = self.app
        if scope["method"] in ("GET", "HEAD"):  # a tab opened at a replayed file: the viewer's page, banner and all
            request = Request(scope)
            raw = scope.get("raw_path") or scope.get("path", "").encode()
            location = viewer_location(request.headers.get("sec-fetch-dest"), request.headers.get("sec-fetch-mode"),
                                       raw.decode("latin-1").split("?", 1)[0],
                                       self.resolver_base or self._origin(request, checked=True))
            if location is not None:  # after the checks of the request's head any answer has (RFC 9112 §3.2: a
                # request without Host, or with two, is 400 before it is sent anywhere)
                answer = HostField(RedirectResponse(location, status_code=303, headers={"cache-control": "no-store"}))

        async def guarded(message: Message) -> None:
            if message["type"] == "http.response.start":
                given = message.get("headers", [])
                kept = [(k, v) for k, v in given if k.lower() not in names and k.lower() != b"set-cookie"]
                # the app's own Vary (who reads: pdi.server.http.readers) kept beside the fetch metadata's
                varies = [v for k, v in given if k.lower() == b"vary"]
                added = [(k, b", ".join([*varies, v]) if k == b"vary" else v) for k, v in headers]
                message = {**message, "headers": [*kept, *added]}
            await send(message)

        await answer(scope, receive, guarded)


@dataclass(frozen=True)
class _Page:
    """A replayed page: its files by name (root first) and the media type each is served with."""

    files: dict[str, tuple[PlannedFile, str]]
    size: int


def _served_type(media_type: str, encoding: str | None) -> str:
    """The ``Content-Type`` a part is served with: its own, a text's with the charset it was read in; a part
    whose Content-Type is no media type (``text/htmlé``, ``a/b"c"``: the parser keeps what it is given) as
    ``text/plain``, RFC 2045 §5.2's default for a syntactically invalid one (UTF-8, as Starlette labels a text)."""
    if not formats.is_media_type(media_type):
        return "text/plain"
    return f"{media_type}; charset={encoding}" if encoding and media_type.startswith("text/") else media_type


class ReplayApp:
    """The replay origin's pages over one archive."""

    def __init__(self, archive: Archive, work: WorkLimits) -> None:
        self.archive = archive
        self.work = work
        self._pages: OrderedDict[str, _Page] = OrderedDict()

    async def part(self, request: Request) -> Response:
        raw = request.scope.get("raw_path") or request.url.path.encode()
        found = _ROOT.match(raw.decode("latin-1").split("?", 1)[0])
        if found is None:
            raise NotFoundError(f"{request.url.path} is not a replayed page's file: /replay/<name>/<file>")
        name, select, file = unquote(found.group(1)), bool(found.group(2)), unquote(found.group(3))
        key = ("select " if select else "") + name
        # asked of the catalog each time, kept plan or not: the reader's access (403, 404),
        # and a withdrawal (410), as they stand now, also when changed by another process
        try:
            located = await anyio.to_thread.run_sync(self.archive.locate, PDI.parse(name).without_fragment())
        except AccessError as refused:
            if file.endswith(".html") or "text/html" in request.headers.get("accept", ""):
                return _by_accept(not_replayed(refused))  # a page, shown in the resolver's frame: say why it is empty
            raise
        except (NotFoundError, WithdrawnError, DeletedError) as missing:
            if "text/html" in request.headers.get("accept", ""):
                return _by_accept(not_held(missing))  # a browser's page (a frame's): a page saying so, not problem JSON
            raise
        shared = isinstance(located, Generic) or shared_answer(self.archive, located)
        page = self._pages.get(key)
        if page is None:
            page = await self.work.run(self._plan, name, select)
            self._keep(key, page)
        else:
            self._pages.move_to_end(key)
        entry = page.files.get(file)
        if entry is None:
            raise NotFoundError(f"{name} has no part replayed as {file}")
        planned, media_type = entry
        del page  # while waiting for room, the file alone is held (the plan, kept or not, is the cache's)
        await self.work.hold(len(planned.data))  # a large file is room in the answer budget while it is sent
        headers = {"cache-control": "public, max-age=86400" if shared else PRIVATE}
        return Response(planned.data, media_type=media_type, headers=headers)

    def _keep(self, name: str, page: _Page) -> None:
        self._pages[name] = page
        while len(self._pages) > KEPT_PLANS or (
            len(self._pages) > 1 and sum(p.size for p in self._pages.values()) > KEPT_BYTES
        ):
            self._pages.popitem(last=False)

    def _plan(self, name: str, select: bool = False) -> _Page:
        whole, aggregate = read_page(self.archive, name)
        parsed = PDI.parse(name)
        insertions: Sequence[tuple[int, str]] = ()
        if select:  # opened at a fragment: its passage marked too, as the name the framing page shows
            insertions = selection_marks(aggregate, passage_marks(aggregate, parsed, whole) if parsed.fragment is not None else ())
        elif parsed.fragment is not None:
            insertions = passage_marks(aggregate, parsed, whole)
        planned = plan(aggregate, nowhere=True, policy=False, insertions=insertions)
        by_part = {part.index: part for part in aggregate.parts}
        files: dict[str, tuple[PlannedFile, str]] = {}
        for item in planned.files:
            part = by_part[item.part]
            encoding = part.encoding if part.is_text else part.charset
            files[item.name] = (item, _served_type(part.content_type, encoding))
        return _Page(files, sum(len(f.data) for f in planned.files))


def read_page(archive: Archive, name: str) -> tuple[Resolved, Aggregate]:
    """The whole representation ``name`` names (its fragment aside) and the page it holds as an aggregate.

    An HTML document is read as a one-part aggregate, labelled with its
    foreign id when that is an absolute ``http``/``https`` URL (so its relative
    references resolve as they did on the web, and satisfy nothing).
    """
    parsed = PDI.parse(name)
    located = archive.locate(parsed.without_fragment())
    if isinstance(located, Generic):
        raise UnsupportedError(f"{parsed.without_fragment()} names a document, not one page: replay needs a version and format")
    if not replayable(located.record.media_type):
        raise UnsupportedError(f"{located.pdi} is {located.record.media_type}: replay shows pages (HTML, multipart/related)")
    if located.record.size > MAX_REPLAY_BYTES:
        raise LimitError(f"{located.pdi} is {located.record.size:,} octets: replay shows pages of up to {MAX_REPLAY_BYTES:,}")
    whole = archive.read(located)
    if whole.media_type in AGGREGATE_TYPES:
        return whole, Aggregate.parse(whole.data)
    head = f"Content-Type: {whole.media_type}" + (f"; charset={whole.charset}" if whole.charset else "")
    url = original_url(whole)
    if url is not None:  # as a URI: a header is ASCII, and a URL beyond it (an IRI) is its %-escaped UTF-8
        head += f"\r\nContent-Location: {as_uri(url)}"
    return whole, Aggregate.parse(f"MIME-Version: 1.0\r\n{head}\r\n\r\n".encode("latin-1") + whole.data)


def original_url(whole: Resolved, aggregate: Aggregate | None = None) -> str | None:
    """The URL the page was taken from: the foreign id its name encapsulates, else the root's Content-Location.

    Only an absolute ``http``/``https`` URL counts.
    """
    record = whole.record
    candidates = [record.unique_id if record.serial is None else None]
    if aggregate is not None:
        candidates.append(aggregate.root.location or aggregate.root.content_location)
    for candidate in candidates:
        if candidate and re.match(r"https?://[^\s<>\"]+\Z", candidate, re.I):
            return candidate
    return None


def passage_result(aggregate: Aggregate, parsed: PDI, whole: Resolved) -> tuple[str, FragmentResult] | None:
    """The scheme of the fragment of ``parsed`` and what it selects in the root page of ``aggregate``; ``None``
    for a scheme replay does not mark (:data:`MARKED_SCHEMES`) or a root that is not HTML. A fragment that cannot
    be evaluated raises its error."""
    from pdi import fragments

    fragment = parsed.fragment
    assert fragment is not None
    token = "html" if whole.media_type in AGGREGATE_TYPES else whole.record.format
    scheme = fragment.effective_scheme(token)
    root = aggregate.root
    if scheme not in MARKED_SCHEMES or not root.is_html:
        return None
    return scheme, fragments.evaluate(scheme, fragment.positions, root.data, media_type=root.content_type,
                                      charset=root.encoding)


def passage_marks(aggregate: Aggregate, parsed: PDI, whole: Resolved) -> list[tuple[int, str]]:
    """The marks for the fragment of ``parsed`` in the root page of ``aggregate``; none for another scheme."""
    from pdi.server.replay.marks import passage_insertions

    found = passage_result(aggregate, parsed, whole)
    if found is None:
        return []
    scheme, result = found
    return passage_insertions(aggregate.root.data, result.ranges, scheme)


def selection_marks(aggregate: Aggregate, passage: Sequence[tuple[int, str]] = ()) -> list[tuple[int, str]]:
    """The pieces and element numbers (:func:`pdi.server.replay.marks.selection_insertions`) of the root page,
    and :data:`SELECT_SCRIPT` at its end; with the marks of a ``passage`` (:func:`passage_marks`: the page was
    opened at a fragment), written between the pieces (:func:`pdi.server.replay.marks.with_passage`)."""
    from pdi.charsets.sniff import codec_name
    from pdi.fragments.markup import document_charset, markup_elements
    from pdi.fragments.text import TextIndex
    from pdi.fragments.text.lines import to_crlf
    from pdi.server.replay.marks import selection_insertions, with_passage

    root = aggregate.root
    if not root.is_html or root.content_type != "text/html":
        raise UnsupportedError(f"the root of this page is {root.content_type}: selection is named in HTML pages")
    charset = document_charset(root.data, root.content_type, root.encoding)
    whole = TextIndex(root.data, charset).whole_text()
    text = to_crlf(whole)
    codec = codec_name(charset or "UTF-8")
    boms = {"utf-8": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}
    bom = boms.get(codecs.lookup(codec).name.replace("_", "-"), b"")
    skip = len(bom) if bom and root.data.startswith(bom) and not text.startswith("\ufeff") else 0
    if codecs.lookup(codec).name.startswith("utf-16"):
        raise UnsupportedError("selection is named in pages of an ASCII-compatible encoding, not UTF-16")
    elements = [(e.number, e.start) for e in markup_elements("html", whole)]  # as elt reads them
    # a mark between the CR and the LF of a line end is written after it: a piece cut there would count them apart
    passage = [(place + 1 if root.data[place - 1:place + 1] == b"\r\n" else place, markup) for place, markup in passage]
    marks = selection_insertions(root.data, codec, skip, len(text), elements, cuts=(place for place, _ in passage))
    return [*with_passage(marks, passage), (len(root.data), f"<script>{SELECT_SCRIPT}</script>")]


#: The style of the replay origin's own small pages (a refusal, a capture not held): light, and dark for a system
#: that prefers a dark colour scheme, as the resolver's pages are (:mod:`pdi.server.pages.layout`), each at WCAG
#: AA contrast (4.5:1) on its background; shown in the resolver's frame, they match the page around them.
SMALL_PAGE_STYLE = """:root{color-scheme:light dark}
body{font:16px/1.45 system-ui,sans-serif;margin:1.5rem;color:#222;background:#fff;max-width:44rem;overflow-wrap:anywhere}
h1{font-size:1.2rem} .why{color:#555}
@media (prefers-color-scheme:dark){body{background:#16191d;color:#e6e6e6} .why{color:#b0b0b0}}
"""

#: The replay origin's refusal of a private page (a private series, an embargo): a page, as it is shown in a frame.
NOT_REPLAYED = """<h1>This capture is private: it is not replayed</h1>
<p>%s</p>
<p class="why">Captures of a private series, and embargoed ones, are never replayed, even to a reader
who is signed in: the replay origin reads no sign-in, so that an archived page can never be shown or act
as that reader. A reader with a token for it can read its source on the resolver
(<code>/view?pdi=NAME&amp;view=source</code>), or fetch it with <code>Authorization: Bearer</code>.</p>
"""

#: The replay origin's page for a name it holds no page for (none by that name, a withdrawn one): shown in a frame.
NOT_HELD = """<h1>%s</h1>
<p>%s</p>
<p class="why">The replay origin shows archived pages only; the resolver's page for this name says more.</p>
"""


def small_page(title: str, body: str, status: int) -> Response:
    """A page of the replay origin's own (``body``: already-escaped HTML), in its light and dark style, not kept;
    laid out at a phone's own width (``viewport``), not a desktop's 980 px drawn small, when opened there alone."""
    text = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title>"
            f"<style>\n{SMALL_PAGE_STYLE}</style></head><body>{body}</body></html>\n")
    return Response(text, status_code=status, media_type="text/html", headers={"cache-control": "no-store"})


def not_replayed(refused: AccessError) -> Response:
    """``403``, as a page: the capture is private, and why private captures are not replayed."""
    return small_page("Not replayed: this capture is private", NOT_REPLAYED % html.escape(str(refused)), 403)


def not_held(missing: NotFoundError | WithdrawnError | DeletedError) -> Response:
    """``404`` or ``410``, as a page: no page is replayed under this name, and why; its tab in a reader's words
    (*Not replayed: withdrawn*, *not in this archive*), as the resolver's pages say them, not the problem's title
    (*gone*, *not found*: :func:`refused_words`)."""
    heading = "This page was withdrawn: it is not replayed" if missing.http_status == 410 \
        else "No page is held under this name"
    return small_page(f"Not replayed: {refused_words(missing, missing.http_status, missing.title, named=True)}",
                      NOT_HELD % (heading, html.escape(missing.over_http())), missing.http_status)


def refused_words(exc: Exception, status: int, title: str, *, named: bool = False) -> str:
    """What a refusal of the replay origin's says after *Not replayed:* (its tab, and a refusal's heading), in the
    words the resolver's pages say after *Cannot show this:* (:func:`pdi.server.http.reader_words.heading_words`:
    *not written right*, *withdrawn*), not its problem's title (*syntax error*, *gone*, HTTP's *Bad Request*). A
    file or a path that is not there (a ``404`` of :func:`pages_for_browsers`; ``named``: a name's, :func:`not_held`)
    says so by its status (*nothing is at this address*), as does a refusal that is no error of pdi's (a busy ``503``)."""
    if isinstance(exc, PDIError) and (named or not isinstance(exc, NotFoundError)):
        return heading_words(exc)
    return refusal_words(status, title)


#: The replay origin's page for any other refusal (a name that is not one, a part the page does not have).
REFUSED = """<h1>%s</h1>
<p>%s</p>
<p class="why">The replay origin shows archived pages only, at <code>/replay/NAME/FILE</code>; the resolver's
page for a name says more.</p>
"""

_Handler = Callable[[Request, Exception], Awaitable[Response]]


def _by_accept(answer: Response) -> Response:
    """``answer``, saying in ``Vary`` that ``Accept`` chose it (a refusal: a page to a browser, else problem JSON):
    RFC 9110 §12.5.5, so that no cache gives one reader's form to the other (a ``404`` is cacheable by default,
    RFC 9111 §4.2.2)."""
    answer.headers.add_vary_header("Accept")
    return answer


def pages_for_browsers(handler: _Handler) -> _Handler:
    """``handler``, but its problem JSON answered as a page (:data:`REFUSED`) to a browser (``Accept: text/html``,
    a frame's request), with the same status and header fields (``Allow``, ``Retry-After``, ``WWW-Authenticate``);
    either form says it varies by ``Accept``."""

    async def answer(request: Request, exc: Exception) -> Response:
        problem = await handler(request, exc)
        if problem.media_type != "application/problem+json":
            return problem
        _by_accept(problem)  # the page or the JSON, as Accept chose: a cache gives neither to the other's reader
        if "text/html" not in request.headers.get("accept", ""):
            return problem
        said = json.loads(bytes(problem.body))
        title, detail = str(said.get("title", "")), str(said.get("detail", ""))
        heading = f"Not replayed: {refused_words(exc, problem.status_code, title)}"
        page = small_page(heading, REFUSED % (html.escape(heading), html.escape(detail)), problem.status_code)
        for field, value in problem.headers.items():
            if field not in ("content-type", "content-length"):
                page.headers[field] = value
        return page

    return answer


async def _not_here(request: Request) -> Response:
    raise NotFoundError(f"{request.url.path}: the replay origin serves only /replay/<name>/<file>")


def create_replay_app(
    location: str,
    *,
    archive: Archive | None = None,
    resolver_origin: str | None = None,
    resolver_port: int | None = None,
    scripts: bool = False,
    limits: WorkLimits | None = None,
    resolver_base: str | None = None,
) -> ASGIApp:
    """The replay origin's app for the archive at ``location`` (``archive`` to pass one already open).

    ``resolver_origin`` (``http://127.0.0.1:8000``) is the origin whose pages
    may frame replayed pages; without it, the request's host at
    ``resolver_port``; without either, only the replay origin itself.
    ``resolver_base`` (``https://host/pdi/``: the resolver's ``--base-url``)
    is where a tab opened at a replayed file is sent to the viewer
    (``…/view``); without it, the resolver's origin.
    ``scripts`` lets archived scripts run.
    """
    opened = archive if archive is not None else Archive.open(location)
    pages = ReplayApp(opened, limits if limits is not None else WorkLimits())
    routes = [Route("/replay/{rest:path}", pages.part), Route("/{rest:path}", _not_here)]
    app = Starlette(routes=routes, exception_handlers={k: pages_for_browsers(h) for k, h in HANDLERS.items()},
                    middleware=[Middleware(PacedAnswers), Middleware(HostField), Middleware(Options),
                                Middleware(MiddlewareErrors), Middleware(Readers, archive=opened), Middleware(Preconditions)])
    app.state.archive = opened
    return _Guarded(app, resolver_origin, resolver_port, scripts=scripts, resolver_base=resolver_base)


__all__ = [
    "AGGREGATE_TYPES",
    "ReplayApp",
    "content_security_policy",
    "create_replay_app",
    "framed_by_the_resolver",
    "original_url",
    "pages_for_browsers",
    "read_page",
    "replay_path",
    "replayable",
    "security_headers",
    "viewer_location",
]
