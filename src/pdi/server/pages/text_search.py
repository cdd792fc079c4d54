"""Full-text search for readers: ``/search?q=WORDS`` (a page) and ``/api/search?q=WORDS`` (JSON).

Both take ``q`` (the reader's words, :func:`pdi.passages.fulltext.parse_query`),
``series`` (only names of that series), ``limit`` (hits a page, 20 by
default, at most :data:`~pdi.archive.MAX_SEARCH_LIMIT`) and ``after`` (the
cursor of the next page, which each page links to). A hit links to the
viewer at ``/view?pdi=NAME%23char=a,b``, the passage that matched, which the
viewer marks (the page's link ends in ``#passage``, so it lands there without a script). The page is plain HTML in the site's frame
(:func:`pdi.server.pages.layout.page`): a labelled GET form, an ordered list of
hits with the matched words in ``<mark>``, links to the next page and (from a later one) the first; it needs
no script. Searching runs in the resolver's :class:`~pdi.server.process.limits.WorkLimits`.
An error in the query is shown on the page (with its status) and, from the
API, as an RFC 9457 problem.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from pdi._wording import clipped, counted
from pdi.archive import MAX_SEARCH_LIMIT, SearchHit, SearchResults
from pdi.errors import ParseError, PDIError
from pdi.server.http.params import integer, optional, single_values
from pdi.server.http.problems import status_of
from pdi.server.pages.document_page import record_generic
from pdi.server.pages.layout import (
    breakable,
    capture_title,
    captured_url,
    cited,
    esc,
    name_details,
    page,
)
from pdi.server.pages.problem_pages import explained
from pdi.server.process.limits import ArchiveHandlers

T = TypeVar("T")

#: Hits on a page unless ``limit`` says otherwise.
PAGE_HITS = 20

STYLE = """
form.search{display:flex;flex-wrap:wrap;gap:0.5rem;align-items:end;margin-bottom:1rem}
form.search label{display:flex;flex-direction:column;font-size:0.9rem;font-weight:600;max-width:100%}
form.search input,form.search select{font:inherit;padding:0.3rem}
form.search input,form.search select,form.search button{box-sizing:border-box;height:2.2rem}
ol.hits{padding-left:1.4rem} ol.hits li{margin-bottom:1rem}
ol.hits .snippet{margin:0.2rem 0;max-width:48rem}
ol.hits .where{font-size:0.85rem;color:#555}
ol.hits .hit-title{margin:0 0 0.1rem;font-weight:600} ol.hits .hit-title cite{font-style:normal}
nav.pages{margin-top:1rem}
p.pending{max-width:48rem;margin:0 0 1rem;padding:0.4rem 0.8rem;border-left:4px solid #b8860b;background:#fdf6e3}
@media (prefers-color-scheme:dark){ol.hits .where{color:#b0b0b0} p.pending{background:#2b2614}}
"""


def _limit(request: Request) -> int:
    return integer(request, "limit", PAGE_HITS, least=1, most=MAX_SEARCH_LIMIT)


def _next_url(path: str, request: Request, results: SearchResults) -> str | None:
    if results.next is None:
        return None
    params = [(k, v) for k, v in request.query_params.multi_items() if k != "after"]
    return f"{path}?{urllib.parse.urlencode([*params, ('after', results.next)])}"


def _first_url(request: Request) -> str:
    """The first page of the same search (its words, series and limit, no ``after``)."""
    return "/search?" + urllib.parse.urlencode([(k, v) for k, v in request.query_params.multi_items() if k != "after"])


def view_url(hit: SearchHit) -> str:
    """The viewer's address of the passage a hit names (``#`` written ``%23``)."""
    return "/view?pdi=" + urllib.parse.quote(str(hit.name), safe=":/=,")


def _hit_link(hit: SearchHit) -> str:
    """The link to a hit's passage: its name; a capture's (a name that encapsulates a URL), its URL and when it
    was deposited, the name one click away."""
    url = captured_url(hit.name)
    if url is None:
        return f'<a href="{esc(view_url(hit))}#passage"><code class="name">{breakable(hit.name)}</code></a>'
    return f'<a href="{esc(view_url(hit))}#passage">{capture_title(url, hit.record.created_at)}</a> {name_details(hit.name)}'


def _titled(title: str | None) -> str:
    """A hit's document title, when it has one (its ``title`` statement), above its name."""
    return f'<p class="hit-title">{cited(title)}</p>' if title else ""


def _marked_snippet(hit: SearchHit) -> str:
    out: list[str] = []
    at = 0
    for a, b in hit.marks:
        out.append(esc(hit.snippet[at:a]))
        out.append(f"<mark>{esc(hit.snippet[a:b])}</mark>")
        at = b
    out.append(esc(hit.snippet[at:]))
    return "".join(out)


def _next_steps(query: str, series: str) -> str:
    """What a reader whose words were found nowhere may try next: fewer words (a passage must hold them all), the
    phrase's words without its quotes, every series rather than one, or the catalogue to browse."""
    tries = ["fewer words (a passage must hold every one) or other spellings"]
    if '"' in query:
        unquoted = {"q": " ".join(query.replace('"', " ").split()), **({"series": series} if series else {})}
        tries.append(f'<a href="/search?{esc(urllib.parse.urlencode(unquoted))}">the same words without quotes</a>,'
                     " in any order")
    if series:
        tries.append(f'<a href="/search?{esc(urllib.parse.urlencode({"q": query}))}">every series</a> rather than'
                     f" <code>{esc(series)}</code> alone")
    return (" Try " + "; ".join(tries) + '; or browse the documents <a href="/series">series by series</a>.')


class SearchPages(ArchiveHandlers):
    """``/search`` and ``/api/search`` over one archive."""

    async def _search(self, request: Request, render: Callable[[SearchResults, dict[str, str]], T],
                      titled: bool = False) -> T:
        """``render`` of the hits, and with ``titled`` the title of each hit's version (its document's ``title``
        statement, else the version's, as the viewer titles it), read in the same work (two catalog queries a
        page), and rendered in it too: a page of hits is long, and is made in a thread, never on the event loop."""
        query = optional(request, "q", "") or ""
        series = optional(request, "series")
        after = optional(request, "after")
        limit = _limit(request)

        def work() -> T:
            results = self.archive.search(query, series=series, limit=limit, after=after)
            if not titled or not results.hits:
                return render(results, {})
            versions = {str(h.name.without_fragment()): h.name.without_fragment() for h in results.hits}
            documents = {str(h.name.without_fragment()): record_generic(h.record) for h in results.hits}
            own = self.archive.latest_statements(list(versions.values()), "title")
            whole = self.archive.latest_statements(list({str(d): d for d in documents.values()}.values()), "title")
            titles = {}
            for v, name in versions.items():
                title = whole.get(str(documents[v].canonical())) or own.get(str(name.canonical()))
                if title:
                    titles[v] = title
            return render(results, titles)

        return await self.work.run(work)

    async def api(self, request: Request) -> Response:
        """JSON: ``query`` (as read), ``hits`` (:meth:`SearchHit.to_json` and the viewer's ``view`` URL), ``next``,
        ``pending`` (names whose text the indexer has yet to read), and ``note`` (why nothing was found, where the archive
        can tell: :attr:`SearchResults.note`; else ``null``)."""
        if "q" not in single_values(request):
            raise ParseError("give the words to search for as q=", rule="q")

        def render(results: SearchResults, _: dict[str, str]) -> Response:
            return JSONResponse({
                "query": str(results.query),
                "hits": [{**hit.to_json(), "view": view_url(hit)} for hit in results.hits],
                "next": _next_url("/api/search", request, results),
                "pending": results.pending,
                "note": results.note,
            })

        return await self._search(request, render)

    async def page(self, request: Request) -> Response:
        """The search page: the form, and the hits when there is a query."""
        try:
            query = optional(request, "q") or ""
            series = optional(request, "series") or ""
        except PDIError as exc:
            body = f'<h1>Search</h1>{await self._form_of("", "")}{explained(exc)}'
            return HTMLResponse(page("Search refused", body, style=STYLE), status_code=status_of(exc))
        if not query.strip():
            form = await self._form_of(query, series)
            body = f"<h1>Search</h1>{form}<p>Type words to find the passages of texts, pages and captures that hold them all;" \
                   " put a phrase in double quotes.</p>"
            return HTMLResponse(page("Search", body, style=STYLE, query=query))
        try:
            return await self._search(request, lambda results, titles: self._hits_page(
                request, query, series, self._form(query, series), results, titles), titled=True)
        except PDIError as exc:
            body = f'<h1>Search</h1>{await self._form_of(query, series)}{explained(exc, given="the words searched for")}'
            # the tab and the history name the words refused (clipped: a query may be long), as a search's name them
            return HTMLResponse(page(f"Search refused: {clipped(query, 80)}", body, style=STYLE, query=query),
                                status_code=status_of(exc))

    def _hits_page(self, request: Request, query: str, series: str, form: str, results: SearchResults,
                   titles: dict[str, str]) -> Response:
        """The search page of ``results`` (in the search's thread)."""
        items = "".join(
            f"<li>{_titled(titles.get(str(hit.name.without_fragment())))}{_hit_link(hit)}"
            f'<p class="snippet" dir="auto">{_marked_snippet(hit)}</p>'
            f'<p class="where">characters {hit.start} to {hit.end} · {esc(hit.record.media_type)}'
            f" · version {hit.record.version} · deposited {esc(hit.record.created_at[:10])}</p>"
            "</li>"
            for hit in results.hits
        )
        after = optional(request, "after")
        first = after is None
        if results.hits:  # numbered on from the hits before (the cursor is their count, read by the search)
            start = f' start="{int(after) + 1}"' if after else ""
            found = f'<ol class="hits"{start} aria-label="Results">{items}</ol>'
        else:
            # while texts wait for the indexer, one of them may hold the words: "no passage holds" would be untrue
            missed = ("No passage searched so far holds all these words; the text not searched yet may."
                      if results.pending and first else "No passage holds all these words.")
            found = f"<p>{missed}" + (_next_steps(query, series) if first else " (No more results.)") + "</p>"
            if results.note:
                found += f'<p class="pending" role="note" id="search-note">{esc(results.note[0].upper() + results.note[1:])}.</p>'
        following = _next_url("/search", request, results)
        links = [] if first else [f'<a href="{esc(_first_url(request))}" rel="first">« First results</a>']
        links += [f'<a href="{esc(following)}" rel="next">Next results</a>'] if following else []
        pages = f'<nav class="pages" aria-label="Pages">{" · ".join(links)}</nav>' if links else ""
        heading = f"<h1>Search: {esc(results.query)}</h1>"
        pending = (
            f'<p class="pending" role="status">Index pending: the text of {counted(results.pending, "document")}'
            " deposited lately is not searched yet;"
            " it can be read already, and is found once the indexer has read it.</p>"
            if results.pending else ""
        )
        return HTMLResponse(page(f"Search: {query}", heading + form + pending + found + pages, style=STYLE, query=query))

    async def _form_of(self, query: str, series: str) -> str:
        """:meth:`_form`, in a thread (it reads the catalog's series)."""
        return await anyio.to_thread.run_sync(self._form, query, series)

    def _form(self, query: str, series: str) -> str:
        options = ['<option value="">all series</option>'] + [
            f'<option value="{esc(s.name)}"{" selected" if s.name == series else ""}>{esc(s.name)}</option>'
            for s in self.archive.series()
        ]
        return (
            '<form class="search" action="/search" method="get" role="search" aria-label="Search the archive">'
            f'<label for="search-q">Words<input id="search-q" name="q" type="search" size="40" dir="auto" value="{esc(query)}"></label>'
            f'<label for="search-series">Series<select id="search-series" name="series">{"".join(options)}</select></label>'
            '<button type="submit">Search</button></form>'
        )
