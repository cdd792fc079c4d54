"""The resolver for people: the pages a reader opens (an edge, read-only).

``/`` is the home page (:func:`pdi.server.pages.browse.render_home`: the series
with their counts, how to cite, a box for a name); ``/view?pdi=NAME`` shows
what a name names (:mod:`pdi.server.pages.viewer` renders it; a generic name is
the document page of :mod:`pdi.server.pages.document_page`; ``/thread?pdi=NAME`` (or ``?mid=mid:ID``) an e-mail's thread,
:mod:`pdi.server.pages.mail_pages`; an archived page, when there
is a replay origin, :mod:`pdi.server.pages.replay_frame`, and ``&view=source`` its source; a citation's name,
``A@position=B#fragment``, shows A under a note of what it cites and whether the quotation stands, as ``pdi cite``
checks it: :func:`citation_note`). The catalogue's own pages
(``/series…``, ``/captures``) are :class:`pdi.server.pages.browse.BrowsePages`. A page that
reads a whole representation runs within the resolver's
:class:`~pdi.server.process.limits.WorkLimits`; an error is a page of its own
(:mod:`pdi.server.pages.problem_pages`: a tombstone, how to sign in, the nearest
names) with the status of its class.
"""

from __future__ import annotations

import functools
import re

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pdi.archive import Archive, CitationResolved
from pdi.errors import NotFoundError, ParseError, PDIError
from pdi.identifier import PDI
from pdi.server.http.params import integer, optional
from pdi.server.http.problems import Problem
from pdi.server.http.site import base_of, origin_of
from pdi.server.pages.layout import MAIN, breakable, in_order, shown_url
from pdi.server.pages.replay_frame import ReplaySite
from pdi.server.process.limits import WorkLimits
from pdi.server.protocol.elsewhere import Elsewhere, rescued_from


class ReaderApp:
    """The reader's pages over one archive."""

    def __init__(self, archive: Archive, work: WorkLimits, replay: ReplaySite | None = None) -> None:
        self.archive = archive
        self.work = work
        self.replay = replay  # where archived pages are replayed (pdi.server.pages.replay_frame); None: never
        self.elsewhere: Elsewhere | None = None  # names not held here (pdi.server.protocol.elsewhere); None: 404

    async def view(self, request: Request) -> Response:
        from pdi.interop.aliases import alias_fragment, native_names
        from pdi.server.pages.browse import render_home
        from pdi.server.pages.replay_frame import frame_page_policy, render_replay_page
        from pdi.server.pages.viewer import render_view, view_policy

        name: str | None = None
        try:
            name = pasted(optional(request, "pdi"))
            # a message's body by pages (pdi.server.pages.body_pages): a number from 1, else a 400 saying so
            page = integer(request, "page", 0, least=1) or None
            if not name:
                return HTMLResponse(await anyio.to_thread.run_sync(render_home, self.archive))
            alias = None  # a browser's fragment (#t=, #xywh=, #:~:text=): the native name it equals, as pdi get reads it
            if alias_fragment(name) is not None:
                alias = await self.work.run(native_names, self.archive, name)
            if self.replay is not None and optional(request, "view") != "source" and page is None:
                origin = self.replay.origin_for(request)
                select = optional(request, "select") == "1"
                replayed = functools.partial(render_replay_page, scripts=self.replay.scripts, select=select)
                framed = str(alias.native) if alias else name
                shown = await self.work.run(replayed, self.archive, framed, origin)
                if shown is not None:
                    shown = await self._with_citation(_later_note(shown, optional(request, "later"), name), name)
                    # its frame may show that page of the replay origin and nothing else; no script but its own;
                    # framed here only
                    policy = frame_page_policy(origin, framed, select=select)
                    return HTMLResponse(shown, headers={"content-security-policy": policy})
            source = self.replay is not None and optional(request, "view") == "source"  # of a page replayed here
            viewing = functools.partial(render_view, replayed=source, page=page)
            viewed = _later_note(await self.work.run(viewing, self.archive, name, alias), optional(request, "later"),
                                 name)
            viewed = await self._with_citation(viewed, name)
            return HTMLResponse(viewed, headers={"content-security-policy": view_policy(origin_of(request))})
        except PDIError as exc:
            error = exc
        if isinstance(error, NotFoundError) and self.elsewhere is not None and name:
            try:
                elsewhere = await self.elsewhere.view(request, name)
            except Problem as down:  # known elsewhere, every resolver down (503) or sending it back (508): said
                from pdi.server.pages.problem_pages import render_unavailable

                return HTMLResponse(render_unavailable(down.detail, name, down.status), status_code=down.status,
                                    headers=down.headers)
            except PDIError as failed:  # where it is could not be found out (the DNS failed): its page, 502
                return await self._problem(request, failed, name)
            if elsewhere is not None:
                return elsewhere
        return await self._problem(request, error, name or "")

    async def _with_citation(self, page: str, name: str) -> str:
        """``page`` with a note at the top of its main part when ``name`` is a citation (``A@position=B``): what it
        cites and whether the quotation stands there, as ``pdi cite`` says it (:meth:`Archive.cite`)."""
        if "@" not in name:
            return page
        parsed = PDI.parse(name)
        if parsed.citation is None:
            return page
        try:
            cited = await self.work.run(self.archive.cite, parsed)
        except PDIError as exc:  # the citing document is shown; the citation could not be checked
            return page.replace(MAIN, MAIN + citation_note(parsed, None, str(exc)), 1)
        return page.replace(MAIN, MAIN + citation_note(parsed, cited, ""), 1)

    async def _problem(self, request: Request, error: PDIError, name: str) -> Response:
        """The page of an error met on a page about ``name`` (:mod:`pdi.server.pages.problem_pages`)."""
        from pdi.server.pages.problem_pages import problem_page

        base = base_of(request)
        return await anyio.to_thread.run_sync(lambda: problem_page(self.archive, error, name, base))

    async def thread(self, request: Request) -> Response:
        """``/thread?pdi=NAME`` or ``/thread?mid=mid:ID``: the thread of an e-mail message, named or found by its
        Message-ID (:mod:`pdi.server.pages.mail_pages`)."""
        from pdi.server.pages.mail_pages import render_thread, render_thread_of_id

        name: str | None = None
        try:
            name = pasted(optional(request, "pdi"))
            mid = optional(request, "mid")
            if name and mid:
                raise ParseError("give the message by ?pdi=NAME or by ?mid=mid:ID, not both", rule="pdi")
            if mid:
                return HTMLResponse(await self.work.run(render_thread_of_id, self.archive, mid))
            if not name:
                raise ParseError("the thread of which message? give ?pdi=NAME or ?mid=mid:ID", rule="pdi")
            return HTMLResponse(await self.work.run(render_thread, self.archive, name))
        except PDIError as exc:
            error = exc
        return await self._problem(request, error, name or "")


def _later_note(page: str, later: str | None, shown: str) -> str:
    """``page`` with a note at the top of its main part when ``later`` (``&later=NAME``, set by the legacy
    rescue of :mod:`pdi.server.protocol.elsewhere`) names another capture of the URL ``shown`` is a capture of."""
    import html

    from pdi.federation.rescue import relation

    pair = rescued_from(later, shown) if later else None
    if pair is None:
        return page
    asked, found = pair
    how = relation(asked.date, found.date)
    said = ("a capture of the same day</strong>" if how == "same-day"
            else f"a{'n' if how == 'earlier' else ''} {how} capture</strong> ({found.date})")
    note = (f'<p class="version-banner later-capture" role="note" id="later-capture"><strong>This is {said} of'
            f" <code>{in_order(shown_url(asked.unique_id))}</code>: the version <code>{html.escape(str(asked))}</code>"
            f" named ({asked.date}) was never kept.</p>")
    return page.replace(MAIN, MAIN + note, 1)


#: The most characters of a quotation a citation's note shows (the rest is the cited passage's, a link away).
QUOTE_SHOWN = 300


def citation_note(name: PDI, cited: CitationResolved | None, failed: str) -> str:
    """The note a citation's page opens with: the passage cited (a link), where it is quoted in this document (a
    link to that place when the position is a character), and the check's outcome, or ``failed``, why none."""
    from html import escape
    from urllib.parse import quote

    assert name.citation is not None
    target = str(name.citation.cited)
    origin = name.citation.origin
    position = "(" + ",".join(map(str, origin)) + ")" if isinstance(origin, tuple) else str(origin)

    def link(to: str, text: str) -> str:
        return f'<a href="/view?pdi={quote(to, safe="")}">{text}</a>'

    def shown(text: str) -> str:
        cut = text[:QUOTE_SHOWN] + ("\u2026" if len(text) > QUOTE_SHOWN else "")
        return f"\u201c{escape(cut)}\u201d"

    citing = str(name).split("@", 1)[0]
    place = f"position {escape(position)}"
    check = cited.check if cited is not None else None
    if check is not None and check.quote is not None and isinstance(origin, int):
        place = link(f"{citing}#char={origin},{origin + len(check.quote)}", place)
    said = f"<strong>A citation:</strong> this document quotes {link(target, f'<code>{breakable(target)}</code>')} at {place}. "
    if check is None:
        said += f"<strong>Not checked:</strong> {escape(failed)}"
    elif check.status == "ok":
        said += f"<strong>The quotation stands</strong> there: {shown(check.quote or '')}."
    elif check.status == "mismatch":
        said += f"<strong>The quotation does not stand</strong> there: {escape(check.detail)}."
        if check.quote:
            said += f" The passage cited: {shown(check.quote)}."
        if check.found is not None:
            said += f" What this document holds there: {shown(check.found)}."
    else:
        said += f"<strong>Not checked:</strong> {escape(check.detail)}."
    return f'<p class="version-banner citation" role="note" id="citation">{said}</p>'


#: A line break a text wrapped a name at, with the spaces beside it.
_BREAKS = re.compile(r"[\r\n]+")

#: What may surround a name copied out of running text: RFC 3986 Appendix C's delimiters, and quotation marks.
_AROUND = (("<", ">"), ('"', '"'), ("'", "'"), ("\u201c", "\u201d"), ("\u2018", "\u2019"), ("\u2039", "\u203a"),
           ("\u00ab", "\u00bb"))


def _unwrapped(name: str) -> str:
    """``name`` without its line breaks and the spaces and tabs beside them, in one pass: the expression
    ``[ \t]*[\r\n]+[ \t]*`` said the same, but tried each blank of a run and ran to the run's end, quadratic in
    the run (a name pasted with 60,000 spaces held the event loop for 17 s)."""
    if "\n" not in name and "\r" not in name:
        return name
    lines = _BREAKS.split(name)
    return "".join([lines[0].rstrip(" \t"), *(line.strip(" \t") for line in lines[1:-1]), lines[-1].lstrip(" \t")])


def pasted(name: str | None) -> str | None:
    """A name as a person pasted it into a page, read as RFC 3986 Appendix C reads a URI in running text: the
    whitespace around it, and a line break a text wrapped it at (with the spaces beside it), left out, and the
    angle brackets or quotation marks around it taken off. A space inside is left for the parser to refuse (in
    a browser's ``#:~:text=`` it would change what is quoted)."""
    if name is None:
        return None
    name = _unwrapped(name.strip())
    for left, right in _AROUND:
        if len(name) > 1 and name.startswith(left) and name.endswith(right):
            return name[1:-1]
    return name
