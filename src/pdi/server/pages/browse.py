"""The reader's catalogue: the archive's series, their calendars, a day's documents, a document, a URL's captures.

Every page is plain HTML through :func:`pdi.server.pages.layout.page`, readable
and navigable without JavaScript, at a path a reader can bookmark:

* ``/`` — what the archive is: its series with their number of documents,
  latest day and latest deposit, how to cite and resolve a name, a box for a name (``/view?pdi=``)
  and one for a URL (``/captures?url=``);
* ``/series`` — every series; ``/series/NAME`` — its documents counted by year
  and month; ``/series/NAME/YYYY`` — that year's months as calendars;
  ``/series/NAME/YYYY/MM`` — the month's days; ``/series/NAME/YYYY/MM/DD`` —
  the day's documents, a page at a time (``?after=ID`` continues after the
  document ``ID``: a keyset, as cheap deep in a day as at its start);
* the document page, which ``/view?pdi=`` shows for a generic name: every
  version and format, deposit times, size, SHA-256 and the last fixity check,
  and the statements with their history;
* ``/captures?url=URL`` — the captures of one URL over every day and series,
  as a timeline.

Counts and pages come from :class:`pdi.archive.Archive` (``series_counts``,
``day_counts``, ``day_documents``, ``captures``, ``document``), each an index
read, never the whole catalog. A page that fails is an error page
(:mod:`pdi.server.pages.problem_pages`) with the status of the error's class.
"""

from __future__ import annotations

import calendar
import dataclasses
import datetime
import re
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import quote, urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from pdi._wording import clipped, counted
from pdi.archive import Archive, DocumentDetail, DocumentPage, Generic, canonical_series
from pdi.archive.access import HIDDEN, PUBLIC, current_reader
from pdi.archive.store import AssertionRecord, DocumentKey, FixityCheck, RepresentationRecord
from pdi.errors import ParseError, PDIError, WithdrawnError
from pdi.identifier import PDI
from pdi.server.http.params import single_values
from pdi.server.pages.layout import (
    breakable,
    capture_title,
    captured_url,
    day_in_words,
    esc,
    format_token,
    in_order,
    isolated,
    name_details,
    name_in_pieces,
    page,
    shown_format,
    shown_media_type,
    shown_url,
    size_cell,
    statement_value,
)
from pdi.server.pages.problem_pages import problem_page

#: Documents on one page of a day (``?limit=`` may ask for up to :data:`MAX_PAGE`).
DAY_PAGE = 100
#: Captures (documents) on one page of a URL's timeline.
CAPTURES_PAGE = 200
#: The most documents one page shows.
MAX_PAGE = 1000

STYLE = """
main{--measure:68rem}
nav.crumbs ol{list-style:none;margin:0 0 0.8rem;padding:0;display:flex;flex-wrap:wrap;font-size:0.95rem}
/* #767676 on white: 4.54:1, WCAG AA 1.4.3 (#777 was 4.48:1) */
nav.crumbs li+li::before{content:"\\203A";padding:0 0.45rem;color:#767676}
nav.crumbs [aria-current]{font-weight:600} nav.crumbs li{overflow-wrap:anywhere;min-width:0}
table.catalogue{min-width:50%;margin:0.5rem 0 1.2rem}
#documents,#formats,#statements,#years{width:100%}
/* a key is a word or words: the column is as wide as its longest word, never "sourc|e" (a long value beside it wraps) */
#statements td.key code,#formats code.media{overflow-wrap:normal;word-break:normal}
/* a document's id: a URL wraps after a / or before a dot, never inside a label (example.or|g); a longer part still
 breaks where it must */
#documents td.id code{overflow-wrap:break-word}
/* a subject in About: a name, then its fragment, each whole (the column as wide as the longer), a break between */
#statements td.about code{overflow-wrap:normal;word-break:normal}
#formats span.charset{white-space:nowrap}
/* a document's Formats just wider than 64 rem, a table there: its Format column's token whole between its escapes
 (vnd, %2Eopenxmlformats-, … %2Ewordprocessingml: layout.format_token) at a name's size in a table (0.8 rem, as
 code.name), its cells padded 0.4 rem a side and its SHA-256 three lines of 22 digits, so that the seven columns
 fit from 1,025 px (they needed 1,084 px, the page scrolling sideways) */
@media (width > 64rem){#formats code.token{font-size:0.8rem} #formats :is(th,td){padding-left:0.4rem;padding-right:0.4rem}
 #formats td.sha{min-width:10.5rem}}
/* a series' name wraps only before a dot; a table of names too long for the window scrolls in its own box (the one
 table of the reader's that scrolls: a Tab stop, tabindex=0, so the keyboard scrolls it), but on a phone or a
 tablet, where the table is cards (no box to scroll; layout.NARROWER_CARDS: the home page's up to 52 rem, /series's
 up to 60 rem), a label longer than its line (national-archives-and-records) wraps in itself: an inline block, which
 a link's underline does not reach into unless drawn there */
code.series span.label{white-space:nowrap}
@media (width > 52rem){table#series.cards-52{display:block;max-width:100%;overflow-x:auto}}
@media (width > 60rem){table#series.cards-60{display:block;max-width:100%;overflow-x:auto}}
@media (max-width:52rem){table.cards-52 code.series span.label{display:inline-block;max-width:100%;white-space:normal}
 table.cards-52 a code.series span.label{text-decoration:underline}
 /* a year's card: its months side by side, three or four to a line (a quarter, a season), its total under them */
 #years.cards tr{display:grid;grid-template-columns:repeat(auto-fill,minmax(max(4.5rem,22%),1fr));column-gap:0.5rem}
 #years.cards :is(th,td:last-child){grid-column:1/-1}}
@media (max-width:60rem){table.cards-60 code.series span.label{display:inline-block;max-width:100%;white-space:normal}
 table.cards-60 a code.series span.label{text-decoration:underline}}
/* a name in About longer than a card's line (a capture's, its id a URL) breaks where it must */
@media (max-width:64rem){#statements.cards td.about code{overflow-wrap:break-word}}
td.empty{color:#6b6b6b;text-align:center} .untitled{color:#6b6b6b;font-style:italic}
.months{display:grid;grid-template-columns:repeat(auto-fill,minmax(15.5rem,1fr));gap:1rem}
table.month{width:100%;font-size:0.9rem} section.one{max-width:30rem} table.month td,table.month th{text-align:center;padding:0.2rem}
table.month td a{display:block;font-weight:600} table.month td small{display:block;color:#555;font-size:0.75rem}
table.month td.has{background:#e7f0fb}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:0.25rem 1rem} dl.facts dd{margin:0}
code.sha{font-size:0.78rem;word-break:break-all} td.sha{min-width:12rem}
table.catalogue td time{white-space:normal} time span{white-space:nowrap}
tr.superseded td{color:#666} tr.superseded td.value{text-decoration:line-through}
.ok{color:#176117;font-weight:600} .bad{color:#a00;font-weight:600} .never,.sealed{color:#8a5a00}
.withdrawn{font-size:0.85em;padding:0 0.3em;border:1px solid #8a1c1c;border-radius:3px;color:#8a1c1c;white-space:nowrap}
.embargoed{font-size:0.85em;padding:0 0.3em;border:1px solid #8a5a00;border-radius:3px;color:#8a5a00}
ol.timeline{list-style:none;padding-left:0;border-left:3px solid #c8d3e0;margin-left:0.5rem}
ol.timeline li{padding:0.3rem 0 0.3rem 1rem;position:relative}
ol.timeline li::before{content:"";position:absolute;left:-0.45rem;top:0.75rem;width:0.6rem;height:0.6rem;border-radius:50%;background:#24303f}
form.wide{display:flex;flex-wrap:wrap;gap:0.4rem;align-items:center;margin:0.5rem 0 1rem}
form.wide input{flex:1 1 20rem;padding:0.3rem} form.wide button{align-self:stretch}
@media (min-width:40rem){div.home-forms{display:grid;grid-template-columns:max-content 1fr max-content;gap:0.4rem;align-items:center;margin:0.5rem 0 1rem}
 div.home-forms form.wide{display:contents}}
p.pager{display:flex;gap:1.5rem}
@media (prefers-color-scheme:dark){
nav.crumbs li+li::before{color:#9a9a9a} td.empty,.untitled{color:#8f959c}
table.month td small{color:#b0b0b0} table.month td.has{background:#1d3350} tr.superseded td{color:#9a9a9a}
.ok{color:#6fd36f} .bad{color:#ff8080} .never,.sealed{color:#f0c060} .withdrawn{border-color:#ff9090;color:#ff9090}
.embargoed{border-color:#f0c060;color:#f0c060}
ol.timeline{border-left-color:#3e4a5a} ol.timeline li::before{background:#8ab4f8}
}
"""


def _page(title: str, body: str, *, name: str = "", resolve: bool = True) -> str:
    return page(title, body, style=STYLE, name=name, resolve=resolve)


def _crumbs(*steps: tuple[str, str | None]) -> str:
    """Breadcrumbs: each step a label and its link (``None``: the page itself); a label that is an id or a URL
    reads left to right as written, its Hebrew or Arabic parts each in its own direction (:func:`in_order`)."""
    items = "".join(
        f'<li><a href="{esc(href)}">{in_order(label)}</a></li>' if href is not None
        else f'<li aria-current="page">{in_order(label)}</li>'
        for label, href in steps
    )
    return f'<nav class="crumbs" aria-label="Breadcrumb"><ol>{items}</ol></nav>'


def _series_path(series: str, *parts: int) -> str:
    widths = (4, 2, 2)
    return f"/series/{quote(series, safe='')}" + "".join(f"/{p:0{w}d}" for p, w in zip(parts, widths, strict=False))


def _view(name: PDI | str) -> str:
    return f"/view?pdi={quote(str(name), safe='')}"


def _time(stamp: str) -> str:
    """A catalog time (ISO 8601, UTC) as ``<time>``: ``2026-11-22 14:30:00 UTC``."""
    day, _, clock = stamp.replace("T", " ").split(".")[0].rstrip("Z").partition(" ")
    # in a narrow table the line may break between the day and the clock, never inside either
    return f'<time datetime="{esc(stamp)}"><span>{esc(day)}</span> <span>{esc(clock)} UTC</span></time>'


def _day(day: datetime.date | None) -> str:
    return "—" if day is None else f'<time datetime="{day.isoformat()}"><span>{day.isoformat()}</span></time>'


def _count(n: int) -> str:
    return f"{n:,}"


def _breakable_count(n: int) -> str:
    """A count in a series' table of years (a month's, a year's total): grouped by thousands, breakable after each
    separator (a ``<wbr>``, nothing put into it: it copies as written), so that a year of five-digit months
    (``12,345``) fits as a table from 833 px (layout.NARROWER_CARDS) as a year of small ones does."""
    return _count(n).replace(",", ",<wbr>")


#: A series' name of at most this many characters stands on one line in a table of series
#: (``elsewhere.example.us``: 20); a longer one wraps before a dot.
SERIES_ON_ONE_LINE = 24
#: The longest label of a domain name (RFC 1035 §2.3.4): a label of a series' name up to this long is never cut
#: by a line break; a longer one (the grammar sets no bound) breaks anywhere, so that no name widens a page.
LABEL_WHOLE = 63


def _series_name(name: str) -> str:
    """A series' name in a table of series: on one line when it is short (at most :data:`SERIES_ON_ONE_LINE`
    characters); else wrapping only before a dot, each label (``national-archives``) whole, not cut at a hyphen
    or anywhere else (a label longer than :data:`LABEL_WHOLE` excepted). A table of names too long for the
    window scrolls in its own box (``table#series``); on a phone or a small tablet, where the table is cards, a label
    longer than a card's line wraps in itself (``STYLE``)."""
    if len(name) <= SERIES_ON_ONE_LINE:
        return f'<code class="series"><span class="label">{esc(name)}</span></code>'
    labels = [("." if i else "") + esc(label) if len(label) > LABEL_WHOLE  # its dot kept with it: no break after one
              else f'<span class="label">{"." if i else ""}{esc(label)}</span>' for i, label in enumerate(name.split("."))]
    return '<code class="series">' + "<wbr>".join(labels) + "</code>"


# --- home ------------------------------------------------------------------------------------
def render_home(archive: Archive) -> str:
    """The home page: the archive's series with counts, how to cite and resolve."""
    counts = archive.series_counts()
    total = sum(c.documents for c in counts)
    rows = "".join(
        f'<tr><td class="stacked" data-label="Series"><a href="{_series_path(c.series)}">{_series_name(c.series)}</a></td>'
        f'<td class="number" data-label="Documents">{_count(c.documents)}</td>'
        f'<td data-label="Latest day">{_day(c.last_day)}</td>'
        f"""<td data-label="Latest deposit">{'—' if c.last_deposit is None else _time(c.last_deposit)}</td></tr>"""
        for c in counts
    )
    table = (
        '<table class="catalogue cards cards-52" id="series" tabindex="0"><caption>Series</caption><thead><tr><th scope="col">Series</th>'
        '<th scope="col" class="number">Documents</th><th scope="col">Latest day</th>'
        '<th scope="col">Latest deposit</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
        if counts else _NO_SERIES.format(here="")
    )
    body = (
        "<h1>The archive</h1>"
        f"<p>This archive has minted {counted(total, 'document')} in {counted(len(counts), 'series', 'series')}"
        " under persistent names. A name resolves to exactly what was deposited under it, byte for byte, and"
        " is never given to anything else; a document taken out of service (withdrawn) keeps its name, which"
        " then says when and why.</p>"
        # the two forms in one grid on a wider screen: their boxes one under the other, whatever their labels
        '<div class="home-forms"><form class="wide" action="/view" method="get"><label for="home-pdi">Resolve a name</label>'
        '<input id="home-pdi" name="pdi" dir="ltr" placeholder="urn:pdi://series/YYYY/MM/DD/id.format.version">'
        '<button type="submit">Resolve</button></form>'
        '<form class="wide" action="/captures" method="get"><label for="home-url">Captures of a URL</label>'
        '<input id="home-url" name="url" type="url" dir="ltr" placeholder="https://www.example.org/">'
        '<button type="submit">Show</button></form></div>'
        f"{table}"
        '<h2 id="cite">How to cite and resolve</h2>'
        "<p>A document's name is <code>urn:pdi://SERIES/YYYY/MM/DD/ID.FORMAT.VERSION</code>: the series that"
        " keeps it, the day (GMT) it was first deposited, its number that day (or the id it was deposited"
        " under, such as a URL), its format and version. Without format and version it names the document"
        " with all its versions. A passage is named by a fragment: <code>#char=10,20</code> (characters),"
        " <code>#line=3,5</code>, <code>#elt=…</code> in a page, <code>#rect=(x1,y1),(x2,y2)</code> in an"
        " image, <code>#sec=1.5,3</code> in a recording.</p>"
        "<p>Cite the name; anyone can resolve it here at <code>/view?pdi=NAME</code> (this page's box),"
        " as bytes at <code>/uri-res/N2R?NAME</code> (RFC 2169; write <code>#</code> as <code>%23</code>)"
        " or as JSON at <code>/api/resolve?pdi=NAME</code>; every route is described in the"
        ' <a href="/api">API reference</a>.</p>'
    )
    return _page("The archive", body, resolve=False)  # its own box, explained below it: the header's would be a second


#: What the home page and ``/series`` say when there is no series to show: how one is registered, and how a reader
#: with a token sees those that are not open to all (``here``: the sign-in link's query, back to the page).
_NO_SERIES = (
    '<p class="empty-state">No series to show: none is registered yet, or none is open to read without a token.'
    " The archive's keeper registers one with <code>pdi series add NAME</code> (then deposits into it with"
    ' <code>pdi add FILE --series NAME</code>); a reader with a token <a href="/signin{here}">signs in</a>'
    " to see the series it may read.</p>"
)


# --- series ----------------------------------------------------------------------------------
def render_series_list(archive: Archive) -> str:
    """``/series``: every registered series, with its parent, counts and days."""
    records = {s.name: s for s in archive.series()}
    rows = "".join(
        f'<tr><td class="stacked" data-label="Series"><a href="{_series_path(c.series)}">{_series_name(c.series)}</a></td>'
        f'<td class="stacked" data-label="Under">{"—" if (up := records[c.series].parent) is None else _series_name(up)}</td>'
        f'<td class="number" data-label="Documents">{_count(c.documents)}</td>'
        f'<td data-label="First day">{_day(c.first_day)}</td><td data-label="Latest day">{_day(c.last_day)}</td>'
        f"""<td data-label="Latest deposit">{'—' if c.last_deposit is None else _time(c.last_deposit)}</td>"""
        f'<td data-label="Registered">{_time(records[c.series].created_at)}</td></tr>'
        for c in archive.series_counts()
        if c.series in records
    )
    body = (
        _crumbs(("Home", "/"), ("Series", None))
        + "<h1>Series</h1>"
        + (
            '<table class="catalogue cards cards-60" id="series" tabindex="0" aria-label="Series"><thead><tr><th scope="col">Series</th>'
            '<th scope="col">Under</th>'
            '<th scope="col" class="number">Documents</th><th scope="col">First day</th>'
            '<th scope="col">Latest day</th><th scope="col">Latest deposit</th><th scope="col">Registered</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
            if rows else _NO_SERIES.format(here="?next=%2Fseries")
        )
    )
    return _page("Series", body)


def _parse_date_parts(series: str, year: str, month: str | None = None, day: str | None = None) -> tuple[int, ...]:
    """The numbers of a path's ``YYYY``, ``MM`` and ``DD`` (as a PDI writes them), checked to make a date: a part
    that is not one is a :class:`ParseError` in a reader's words, of its rule (``year``, ``month``, ``day``) and at
    its place in the page's address (``/series/NAME/YYYY/MM/DD``), which its page marks."""
    given = [(text, width, what) for text, width, what in ((year, 4, "year"), (month, 2, "month"), (day, 2, "day"))
             if text is not None]
    path = f"/series/{series}"
    places = []
    for text, _, _ in given:
        places.append(len(path) + 1)
        path += "/" + text
    numbers: list[int] = []
    for (text, width, what), at in zip(given, places, strict=True):
        if len(text) != width or not text.isascii() or not text.isdigit():
            raise ParseError(f"the {what} in the address is '{clipped(text, 40)}': write it as {width} digits",
                             text=path, offset=at, rule=what)
        numbers.append(int(text))
    if numbers[0] < 1:
        raise ParseError("there is no year 0000: the years are 0001 to 9999", text=path, offset=places[0], rule="year")
    if len(numbers) > 1 and not 1 <= numbers[1] <= 12:
        raise ParseError(f"there is no month {numbers[1]:02d}: the months are 01 to 12", text=path, offset=places[1],
                         rule="month")
    if len(numbers) > 2:
        days = calendar.monthrange(numbers[0], numbers[1])[1]
        if not 1 <= numbers[2] <= days:
            raise ParseError(f"there is no day {numbers[2]:02d} in {calendar.month_name[numbers[1]]} {numbers[0]},"
                             f" whose days are 01 to {days}", text=path, offset=places[2], rule="day")
    return tuple(numbers)


def render_series(archive: Archive, series: str) -> str:
    """``/series/NAME``: the series' documents counted by year and month."""
    counts = archive.day_counts(series)
    name = canonical_series(series)
    by_month: dict[tuple[int, int], int] = {}
    for c in counts:
        key = (c.day.year, c.day.month)
        by_month[key] = by_month.get(key, 0) + c.documents
    years = sorted({y for y, _ in by_month}, reverse=True)
    head = "".join(f'<th scope="col" class="number"><abbr title="{calendar.month_name[m]}">{calendar.month_abbr[m]}</abbr></th>' for m in range(1, 13))
    rows = ""
    for y in years:
        cells = "".join(
            f'<td class="number stacked" data-label="{calendar.month_abbr[m]}"><a href="{_series_path(name, y, m)}"'
            f' aria-label="{calendar.month_name[m]} {y}: {counted(by_month[(y, m)], "document")}">'
            f"{_breakable_count(by_month[(y, m)])}</a></td>"
            if (y, m) in by_month else f'<td class="empty stacked" data-label="{calendar.month_abbr[m]}">·</td>'
            for m in range(1, 13)
        )
        total = sum(n for (yy, _), n in by_month.items() if yy == y)
        rows += (
            f'<tr><th scope="row"><a href="{_series_path(name, y)}">{y}</a></th>{cells}'
            f'<td class="number" data-label="Total">{_breakable_count(total)}</td></tr>'
        )
    total = sum(by_month.values())
    body = (
        _crumbs(("Home", "/"), ("Series", "/series"), (name, None))
        + f"<h1><code>{esc(name)}</code></h1>"
        + f"<p>{counted(total, 'document')}"
        + ((f", minted on {_day(counts[0].day)} (a GMT day)." if counts[0].day == counts[-1].day else
            f", minted from {_day(counts[0].day)} to {_day(counts[-1].day)} (GMT days).") if counts else ".")
        + "</p>" + series_note(archive, name)
        + (
            '<table class="catalogue cards cards-52" id="years"><caption>Documents by year and month</caption>'
            f'<thead><tr><th scope="col">Year</th>{head}<th scope="col" class="number">Total</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
            if rows else _NOTHING_IN_SERIES.format(name=esc(name))
        )
    )
    return _page(name, body)


#: What a series with no document a reader may see offers instead (the same whether none was deposited or none
#: is open without a token: what a reader may not see is never told apart from what is not there).
_NOTHING_IN_SERIES = (
    '<p class="empty-state">No document of this series is open to read here: none has been deposited yet, or'
    " none is open to read without a token. A depositor adds one with <code>pdi add FILE --series {name}</code>"
    ' (or <code>POST /api/deposit</code>). Meanwhile, see <a href="/series">every series</a> or'
    ' <a href="/search">search the archive</a>.</p>'
)


def _month_calendar(name: str, year: int, month: int, days: dict[int, int], *, heading: str = "h2", one: bool = False) -> str:
    """One month as a calendar (weeks from Monday), each day with documents linked and counted."""
    weeks = ""
    for week in calendar.Calendar(firstweekday=0).monthdayscalendar(year, month):
        cells = ""
        for d in week:
            if d == 0:
                cells += "<td></td>"
            elif d in days:
                cells += (
                    f'<td class="has"><a href="{_series_path(name, year, month, d)}" aria-label="{d} {calendar.month_name[month]} {year}:'
                    f' {counted(days[d], "document")}">{d}</a><small>{_count(days[d])}</small></td>'
                )
            else:
                cells += f"<td>{d}</td>"
        weeks += f"<tr>{cells}</tr>"
    head = "".join(f'<th scope="col"><abbr title="{calendar.day_name[i]}">{calendar.day_abbr[i][:2]}</abbr></th>' for i in range(7))
    title = f"{calendar.month_name[month]} {year}"
    # the month's own page: headed by its month already, the calendar is the calendar (and no link to itself)
    link = "Calendar" if one else f'<a href="{_series_path(name, year, month)}">{title}</a>'
    kind = ' class="one"' if one else ""
    return (
        f'<section{kind}><{heading}>{link}</{heading}><table class="month"><caption class="visually-hidden">{title}</caption>'
        f"<thead><tr>{head}</tr></thead><tbody>{weeks}</tbody></table></section>"
    )


def render_year(archive: Archive, series: str, year_text: str) -> str:
    """``/series/NAME/YYYY``: the year's months with documents, as calendars."""
    (year,) = _parse_date_parts(series, year_text)
    name = canonical_series(series)
    counts = archive.day_counts(name, year=year)
    months: dict[int, dict[int, int]] = {}
    for c in counts:
        months.setdefault(c.day.month, {})[c.day.day] = c.documents
    total = sum(c.documents for c in counts)
    body = (
        _crumbs(("Home", "/"), ("Series", "/series"), (name, _series_path(name)), (str(year), None))
        + f"<h1><code>{esc(name)}</code> in {year}</h1><p>{counted(total, 'document')} minted in {year}"
        + (f" on {counted(len(counts), 'day')}." if counts else ".")
        + "</p>" + series_note(archive, name)
        + '<div class="months">'
        + "".join(_month_calendar(name, year, m, months[m]) for m in sorted(months))
        + "</div>"
    )
    return _page(f"{name} {year}", body)


def render_month(archive: Archive, series: str, year_text: str, month_text: str) -> str:
    """``/series/NAME/YYYY/MM``: the month as a calendar, and its days with documents in a table."""
    year, month = _parse_date_parts(series, year_text, month_text)
    name = canonical_series(series)
    every = archive.day_counts(name)  # one read of the series' days: this month's, and the months beside it
    counts = [c for c in every if (c.day.year, c.day.month) == (year, month)]
    days = {c.day.day: c.documents for c in counts}
    rows = "".join(
        f'<tr><td data-label="Day"><a href="{_series_path(name, year, month, c.day.day)}">{_day(c.day)}</a></td>'
        f'<td data-label="Weekday">{calendar.day_name[c.day.weekday()]}</td>'
        f'<td class="number" data-label="Documents">{_count(c.documents)}</td></tr>'
        for c in counts
    )
    # the nearest months before and after with documents, whatever year
    months = sorted({(c.day.year, c.day.month) for c in every})
    before = [m for m in months if m < (year, month)]
    after = [m for m in months if m > (year, month)]
    near = "".join(
        f'<a rel="{rel}" href="{_series_path(name, y, m)}">{text.format(f"{calendar.month_name[m]} {y}")}</a>'
        for rel, found, text in (("prev", before[-1:], "« {}"), ("next", after[:1], "{} »")) for y, m in found
    )
    body = (
        _crumbs(("Home", "/"), ("Series", "/series"), (name, _series_path(name)),
                (str(year), _series_path(name, year)), (calendar.month_name[month], None))
        + f"<h1><code>{esc(name)}</code>, {calendar.month_name[month]} {year}</h1>"
        + f"<p>{counted(sum(days.values()), 'document')} minted this month.</p>{series_note(archive, name)}"
        + (f'<p class="pager">{near}</p>' if near else "")
        + _month_calendar(name, year, month, days, one=True)
        + (
            '<table class="catalogue cards" id="days"><caption>Days with documents</caption><thead><tr><th scope="col">Day</th>'
            '<th scope="col">Weekday</th><th scope="col" class="number">Documents</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
            if rows else ""
        )
    )
    return _page(f"{name} {year}-{month:02d}", body)


def _limit(text: str | None, default: int) -> int:
    if text is None or text == "":
        return default
    if not text.isascii() or not text.isdigit() or len(text) > 9 or not 1 <= int(text) <= MAX_PAGE:
        raise ParseError(f"limit={text!r}: a page holds 1 to {MAX_PAGE} documents", rule="limit")
    return int(text)


def _format_link(name: PDI) -> str:
    """A format of a version, as a day's table and a document's Versions list show it: the media type it is
    (:func:`shown_format`), linked to its page; its token as its name spells it (``svg%2Bxml``) in the link's
    tooltip, with the name."""
    return f'<a href="{esc(_view(name))}" title="{esc(f"format {name.format}: {name}")}">{shown_format(name.format or "")}</a>'


def _formats(version_names: Sequence[PDI]) -> str:
    """A version's formats in a day's table (:func:`_format_link`), one after another."""
    return ", ".join(_format_link(n) for n in version_names)


def render_day(
    archive: Archive, series: str, year_text: str, month_text: str, day_text: str,
    *, after: str | None = None, limit: str | None = None,
) -> str:
    """``/series/NAME/YYYY/MM/DD``: a page of the day's documents (``after`` the unique id the page before ended with)."""
    year, month, dom = _parse_date_parts(series, year_text, month_text, day_text)
    name = canonical_series(series)
    day = datetime.date(year, month, dom)
    size = _limit(limit, DAY_PAGE)
    found = archive.day_documents(name, day, after=after or None, limit=size)
    total = next((c.documents for c in archive.day_counts(name, year=year, month=month) if c.day == day), 0)
    keys = [DocumentKey(name, day, doc.pdi.unique_id) for doc in found.documents]
    gone = {(t.key.unique_id, t.version) for t in archive.withdrawals_of(keys)}  # by index: this page's alone
    # the embargoes in force of the page's documents, which only a reader with a token (or the owner) is shown:
    # for a reader without one nothing is read (none of them is listed to such a reader)
    reader = current_reader.get()
    sealed = {} if reader is not None and reader.token is None else {
        (key.unique_id, version): until for (key, version), until in archive.embargoes_in_force(keys).items()}
    rows = "".join(_document_row(doc, found, gone, sealed) for doc in found.documents)
    marked = sum(1 for doc in found.documents if _sealed_until(doc, sealed) is not None)
    here = _series_path(name, year, month, dom)
    pager = []
    if after:
        pager.append(f'<a href="{esc(here + ("?" + urlencode({"limit": size}) if limit else ""))}">« First page</a>')
    if found.after is not None:
        query = {"after": found.after, **({"limit": str(size)} if limit else {})}
        pager.append(f'<a rel="next" href="{esc(here + "?" + urlencode(query))}">Next page »</a>')
    body = (
        _crumbs(("Home", "/"), ("Series", "/series"), (name, _series_path(name)),
                (str(year), _series_path(name, year)), (calendar.month_name[month], _series_path(name, year, month)),
                (f"{dom:02d}", None))
        + f"<h1><code>{esc(name)}</code>, {day.isoformat()}</h1>"
        + f"<p>{counted(total, 'document')} minted on this day (GMT)"
        + (f"; this page shows {len(found.documents):,}, after <code>{in_order(shown_url(after))}</code>" if after else
           f"; this page shows the first {len(found.documents):,}" if found.after is not None else "")
        + ".</p>"
        + series_note(archive, name, marked)
        + (
            '<table class="catalogue cards" id="documents"><thead><tr><th scope="col">Id</th><th scope="col">Title</th>'
            '<th scope="col">Formats (latest version)</th><th scope="col" class="number">Versions</th>'
            '<th scope="col">Latest version deposited</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
            if rows else "<p>No documents on this page.</p>" if after else
            # nothing that day: where the days that have documents are, not a second line saying there are none
            f'<p class="empty-state">The calendar of <a href="{_series_path(name, year, month)}">'
            f"{calendar.month_name[month]} {year}</a> links each day of it that has documents; the series'"
            f' <a href="{_series_path(name)}">years and months</a> count them all.</p>'
        )
        + (f'<p class="pager">{"".join(pager)}</p>' if pager else "")
    )
    return _page(f"{name} {day.isoformat()}", body)


def _sealed_until(doc: Generic, sealed: Mapping[tuple[str, int | None], str]) -> tuple[str, str] | None:
    """What of a day's document is under an embargo in force (``sealed``: the page's, by unique id and version,
    ``None`` for a whole document) and until when: the document, else its latest version; else ``None``."""
    uid = doc.pdi.unique_id
    if (uid, None) in sealed:
        return "under embargo", sealed[uid, None]
    latest = doc.versions[-1].number
    return ("latest version under embargo", sealed[uid, latest]) if (uid, latest) in sealed else None


def _document_row(doc: Generic, found: DocumentPage, gone: set[tuple[str, int | None]],
                  sealed: Mapping[tuple[str, int | None], str]) -> str:
    """A day's document: its id, title, latest formats, versions and deposit; ``gone`` the (unique id, version) of
    the page's withdrawals (version ``None``: the whole document), said beside its title, as is an embargo in force
    of the document or of its latest version (``sealed``, :func:`_sealed_until`), until when: a signed-in reader's
    page lists what a reader without a token is not shown, so that a link taken from it is not taken for one anyone
    opens."""
    latest = doc.versions[-1]
    title = found.titles.get(str(doc.pdi))
    uid = doc.pdi.unique_id
    said = isolated(title) if title else '<span class="untitled">untitled</span>'  # a cell left blank reads as missing
    if (uid, None) in gone or all((uid, v.number) in gone for v in doc.versions):  # whole, or each version
        said += ' <span class="withdrawn">withdrawn</span>'
    elif (uid, latest.number) in gone:
        said += ' <span class="withdrawn">latest version withdrawn</span>'
    embargo = _sealed_until(doc, sealed)
    if embargo is not None:
        what, until = embargo
        said += (f' <span class="embargoed" title="not open to a reader without a token until then">{what} until'
                 f" {esc(day_in_words(until))}</span>")
    return (
        f'<tr><td class="id" data-label="Id"><a href="{esc(_view(doc.pdi))}" title="{esc(doc.pdi)}">'
        f"<code>{breakable(shown_url(uid))}</code></a></td>"
        f'<td data-label="Title">{said.strip()}</td><td data-label="Latest formats">{_formats(latest.formats)}</td>'
        f'<td class="number" data-label="Versions">{len(doc.versions):,}</td>'
        f'<td data-label="Latest deposit">{_time(latest.created_at)}</td></tr>'
    )


# --- a document --------------------------------------------------------------------------------
def _fixity(check: FixityCheck | None) -> str:
    if check is None:
        return '<span class="never">not audited yet</span>'
    if check.ok:
        return f'<span class="ok">intact</span>, verified {_time(check.checked_at)}'
    return f'<span class="bad">{esc(check.problem or "failed")}</span> at the check of {_time(check.checked_at)}'


def _key(key: str) -> str:
    """A statement's key in its cell: escaped, breakable after each ``.``, ``:`` and ``_`` (``dc:title``,
    ``x.court_ref``) as after a ``-``, and never inside a word (``STYLE``'s ``#statements td.key code``): a narrow
    Key column beside a long value broke ``source`` into ``sourc`` and ``e``."""
    return re.sub(r"([.:_])(?=.)", r"\1<wbr>", esc(key))


def _statements(statements: Sequence[AssertionRecord], generic: str) -> str:
    """The statements, oldest first; each superseded by a later one of the same subject and key is marked so."""
    latest: dict[tuple[str, str], int] = {}
    for s in statements:
        latest[(s.subject, s.key)] = s.id
    rows = ""
    for s in statements:
        current = latest[(s.subject, s.key)] == s.id
        # another name of the document is shown from its last segment: 1.text.1#char=0,3
        shown = s.subject[generic.rindex("/") + 1:] if s.subject.startswith(generic) else s.subject
        subject = "the document" if s.subject == generic else f'<a href="{esc(_view(s.subject))}"><code>{name_in_pieces(shown)}</code></a>'
        rows += (
            f'<tr class="{"current" if current else "superseded"}"><td class="about" data-label="About">{subject}</td>'
            f'<td class="key" data-label="Key"><code>{_key(s.key)}</code></td>'
            f'<td class="value" data-label="Value">{statement_value(s.value)}</td>'
            f'<td data-label="Stated by">{isolated(s.who)}</td><td data-label="When">{_time(s.at)}</td>'
            f"""<td data-label="Status">{'current' if current else 'superseded'}</td></tr>"""
        )
    return (
        '<table class="catalogue cards" id="statements" aria-label="Statements"><thead><tr><th scope="col">About</th><th scope="col">Key</th>'
        '<th scope="col">Value</th><th scope="col">Stated by</th><th scope="col">When</th><th scope="col">Status</th>'
        f"</tr></thead><tbody>{rows}</tbody></table>"
    )


def access_note(archive: Archive, name: PDI) -> str:
    """What a reader with a token is told on the page of a name not everyone may read: under an embargo not yet over
    (until when, in words), or of a private or hidden series; that others are refused it, so a link to it opens only
    for those who may read it. Empty for a name anyone reads (the only ones a reader without a token is shown: for
    one, nothing is read of the catalog to say so)."""
    reader = current_reader.get()
    if reader is not None and reader.token is None:
        return ""
    series = name.series_name.lower()
    access = archive.series_access().get(series, PUBLIC)
    try:
        until = archive.embargo_in_force(name.without_fragment())
    except PDIError:
        until = None
    if until is None and access == PUBLIC:
        return ""
    why = [f"this {'document' if name.format is None else 'version'} is under embargo until"
           f" {esc(day_in_words(until))}"] if until is not None else []
    if access != PUBLIC:
        why.append(f"its series, <code>{esc(series)}</code>, is {access}")
    told = ("is answered that it is not in this archive" if access == HIDDEN
            else "is refused it (<q>Not open to you</q>)")
    return (
        f'<p class="version-banner access" role="note" id="access"><strong>Not open to everyone:</strong>'
        f" {', and '.join(why)}. You read it with your token; a reader without one {told}"
        f"{' until then' if until is not None and access == PUBLIC else ''}, so a link to it opens only for those"
        " who may read it.</p>"
    )


def series_note(archive: Archive, series: str, marked: int = 0) -> str:
    """What a reader with a token is told above a page of the catalogue of ``series`` (canonical) that not everyone
    may read, as :func:`access_note` tells it on a document's page: that the series is private or hidden, and so a
    reader without a token is refused its pages and documents (a hidden one's answered as not in this archive);
    ``marked``: how many documents of a day's page are marked under embargo (:func:`_sealed_until`), which such a
    reader is not shown there. Empty when neither, and for a reader without a token, for whom nothing is read (it
    is refused a series it may not read before any page of it is made)."""
    reader = current_reader.get()
    if reader is not None and reader.token is None:
        return ""
    access = archive.series_access().get(series, PUBLIC)
    if access == PUBLIC and not marked:
        return ""
    sealed = (f"{counted(marked, 'document')} of this page {'is' if marked == 1 else 'are'} under embargo"
              f"{' as well' if access != PUBLIC else ''} (marked below)") if marked else ""
    if access == PUBLIC:
        them = "it" if marked == 1 else "them"
        said = (f"{sealed}. You read {them} with your token; a reader without one is not shown {them} here, and is"
                f" refused {them} (<q>Not open to you</q>) until {'its' if marked == 1 else 'their'} embargo ends.")
    else:
        told = ("is answered that they are not in this archive" if access == HIDDEN
                else "is refused them (<q>Not open to you</q>)")
        said = (f"this series, <code>{esc(series)}</code>, is {access}{', and ' + sealed if sealed else ''}. You read"
                f" its pages and documents with your token; a reader without one {told}, so a link to one opens only"
                " for those who may read it.")
    return f'<p class="version-banner access" role="note" id="access"><strong>Not open to everyone:</strong> {said}</p>'


def render_document(archive: Archive, generic: Generic, name: str) -> str:
    """The document page (``/view?pdi=`` of a generic name): versions, formats with fixity, statements with history."""
    detail: DocumentDetail = archive.document(generic.pdi)
    pdi = detail.generic.pdi
    generic_text = str(pdi.canonical())
    series = pdi.series_name.lower()
    date = pdi.date
    assert date is not None  # a document's name always has its day
    url = captured_url(pdi)  # a capture's: its URL, not the name that encapsulates it, heads the page
    # its tombstones (one indexed read): a document withdrawn whole is its tombstone (410), a version says so
    tombs = archive.withdrawals_of([DocumentKey(series, date, pdi.unique_id)])
    whole = next((t for t in tombs if t.version is None), None)
    if whole is not None:
        raise WithdrawnError(f"{pdi}: its document was withdrawn {whole.at}: {whole.reason}",
                             reason=whole.reason, at=whole.at, who=whole.who, purged=whole.purged)
    gone = {t.version: t for t in tombs}
    titles = [s for s in detail.statements if s.key == "title"]
    own = [s for s in titles if s.subject == generic_text]
    title = (own or titles)[-1].value if titles else None
    reader = current_reader.get()
    # a version under an embargo of its own: listed only to a reader with a token (or the owner), who is told so
    sealed = {} if (reader is not None and reader.token is None) or archive.embargo_in_force(pdi) is not None else {
        v.number: until for v in detail.generic.versions if v.formats
        and (until := archive.embargo_in_force(v.formats[0])) is not None
    }
    versions = "".join(
        f'<tr><td class="number" data-label="Version">{v.number}</td>'
        f'<td data-label="Deposited">{_time(v.created_at)}'
        + (f'<br><span class="bad">withdrawn {_time(gone[v.number].at)}: {esc(gone[v.number].reason)}</span>'
           if v.number in gone else "")
        + (f'<br><span class="sealed">under embargo until {esc(day_in_words(sealed[v.number]))}: not open to'
           " a reader without a token until then</span>" if v.number in sealed else "")
        + '</td><td data-label="Formats"><ul>'
        + "".join(
            f"<li>{_format_link(n)}"
            + (f" {name_details(n)}</li>" if url else f' <code class="name">{breakable(n)}</code></li>')
            for n in v.formats
        )
        + "</ul></td></tr>"
        for v in detail.generic.versions
    )
    formats = "".join(_format_row(r, detail.fixity.get(r.sha256)) for r in detail.records)
    checked = [c for c in detail.fixity.values()]
    unique = pdi.unique_id
    captures = (
        f'<p>This document\'s id is a URL: <a href="/captures?{esc(urlencode({"url": unique}))}">every capture of'
        f" <code>{in_order(shown_url(unique))}</code></a>.</p>"
        if pdi.serial is None and "://" in unique else ""
    )
    facts = (
        f"<dt>Name</dt><dd><code>{esc(pdi)}</code></dd>"
        f'<dt>Series</dt><dd><a href="{_series_path(series)}"><code>{esc(series)}</code></a></dd>'
        f'<dt>Day</dt><dd><a href="{_series_path(series, date.year, date.month, date.day)}">{_day(date)}</a> (GMT)</dd>'
        f"<dt>{'Serial' if pdi.serial is not None else 'Id'}</dt><dd><code>{in_order(shown_url(unique))}</code></dd>"
        f"<dt>Versions</dt><dd>{len(detail.generic.versions):,}</dd>"
        f"<dt>Fixity</dt><dd>{_fixity_summary(detail.records, checked)}</dd>"
    )
    body = (
        _crumbs(("Home", "/"), ("Series", "/series"), (series, _series_path(series)),
                (str(date.year), _series_path(series, date.year)),
                (calendar.month_name[date.month], _series_path(series, date.year, date.month)),
                (f"{date.day:02d}", _series_path(series, date.year, date.month, date.day)), (shown_url(unique), None))
        + f"<h1>{isolated(title) if title else capture_title(url, None) if url else f'<code>{breakable(pdi)}</code>'}</h1>"
        + f'{access_note(archive, pdi)}<dl class="facts">{facts}</dl>{captures}'
        + f"<h2>Versions</h2><p>{counted(len(detail.generic.versions), 'version')} of this document,"
        + " oldest first (deposit times in UTC):</p>"
        + '<table class="catalogue cards" id="versions"><thead><tr><th scope="col" class="number">Version</th>'
        + f'<th scope="col">Deposited</th><th scope="col">Formats</th></tr></thead><tbody>{versions}</tbody></table>'
        + "<h2>Formats</h2>"
        + '<table class="catalogue cards" id="formats"><thead><tr><th scope="col" class="number">Version</th><th scope="col">Format</th>'
        + '<th scope="col">Media type</th><th scope="col" class="number">Bytes</th><th scope="col">SHA-256</th>'
        + f'<th scope="col">Deposited</th><th scope="col">Fixity</th></tr></thead><tbody>{formats}</tbody></table>'
        + "<h2>Statements</h2>"
        + (
            "<p>Statements are never changed: a later one with the same key about the same name supersedes"
            " the earlier, which is kept as history.</p>" + _statements(detail.statements, generic_text)
            if detail.statements else "<p>Nothing has been stated about this document.</p>"
        )
    )
    return _page(title or str(pdi), body, name=name)


def _fixity_summary(records: Sequence[RepresentationRecord], checks: Sequence[FixityCheck]) -> str:
    blobs = {r.sha256 for r in records}
    if not checks:
        return ('<span class="never">not audited yet</span> (every read is checked against the octets\' SHA-256;'
                " the archive's audit, <code>pdi verify</code>, has not run since they were deposited)")
    bad = [c for c in checks if not c.ok]
    last = max(c.checked_at for c in checks)
    if bad:
        return f'<span class="bad">{counted(len(bad), "blob")} failed</span> the last check'
    unchecked = len(blobs) - len(checks)
    return (
        f'<span class="ok">intact</span> at the last check, {_time(last)}'
        + (f"; {counted(unchecked, 'blob')} not audited yet" if unchecked else "")
    )


def _record_name(record: RepresentationRecord) -> PDI:
    return PDI.build(
        series=record.series, date=record.day, serial=record.serial,
        foreign_id=None if record.serial is not None else record.unique_id,
        format=record.format, version=record.version,
    )


def record_generic(record: RepresentationRecord) -> PDI:
    """The generic name of the document a record belongs to: its document page is ``/view`` of it."""
    return dataclasses.replace(_record_name(record), format=None, version=None).canonical()


def document_title(archive: Archive, record: RepresentationRecord, version: str,
                   stated: Mapping[str, str] | None = None) -> str | None:
    """The title a page about a representation shows: its document's ``title`` statement, else that of the
    ``version`` it is of (``stated``: that version's statements, when the caller has them already)."""
    title = archive.meta(str(record_generic(record))).get("title")
    return title or (archive.meta(version) if stated is None else stated).get("title")


def tab_title(title: str | None, name: object) -> str:
    """A page's ``<title>`` (the browser's tab, history and bookmarks): the document's title first, when it has one."""
    return f"{title} — {name}" if title else str(name)


def _format_row(record: RepresentationRecord, check: FixityCheck | None) -> str:
    name = _record_name(record)
    # as shown_format writes it: a short one whole (text/html was cut text/ above html at 1100 px), a long one
    # breakable after its / and before each . (officedocument.wordprocessingml.document was wider than a phone)
    media = (shown_media_type(record.media_type)
             + (f'<br><small>charset <span class="charset">{esc(record.charset)}</span></small>' if record.charset else ""))
    return (
        f'<tr><td class="number" data-label="Version">{record.version}</td>'
        f'<td data-label="Format"><a href="{esc(_view(name))}">{format_token(record.format)}</a></td>'
        f'<td data-label="Media type">{media}</td>{size_cell(record.size, label="Bytes")}'
        f'<td class="sha" data-label="SHA-256"><code class="sha">{esc(record.sha256)}</code></td>'
        f'<td data-label="Deposited">{_time(record.created_at)}</td><td data-label="Fixity">{_fixity(check)}</td></tr>'
    )


# --- captures of a URL -------------------------------------------------------------------------
def render_captures(archive: Archive, url: str | None, *, after: str | None = None) -> str:
    """``/captures?url=URL``: every capture of the URL (each version of each document whose id it is), by time."""
    form = (
        '<form class="wide" action="/captures" method="get"><label for="captures-url">URL</label>'
        f'<input id="captures-url" name="url" dir="ltr" value="{esc(url or "")}" placeholder="https://www.example.org/">'
        '<button type="submit">Show captures</button></form>'
    )
    crumbs = _crumbs(("Home", "/"), ("Captures", None))
    if not url:
        return _page("Captures", crumbs + "<h1>Captures of a URL</h1>" + form)
    found = archive.captures(url, after=after or None, limit=CAPTURES_PAGE)
    items: list[tuple[str, str]] = []  # (deposit time, the list item)
    for doc in found.documents:
        for v in doc.versions:
            first = v.formats[0]
            others = "".join(f' · <a href="{esc(_view(n))}">{shown_format(n.format or "")}</a>' for n in v.formats[1:])
            items.append((v.created_at, (
                f'<li>{_time(v.created_at)} — <a href="{esc(_view(first))}">{shown_format(first.format or "")},'
                f" version {v.number}</a>{others} in <code>{esc(doc.pdi.series_name.lower())}</code>"
                f' (<a href="{esc(_view(doc.pdi))}">the document</a>)</li>'
            )))
    items.sort(key=lambda item: item[0])
    timeline = ""
    year = None
    for at, item in items:
        if at[:4] != year:
            if year is not None:
                timeline += "</ol>"
            year = at[:4]
            timeline += f'<h2>{esc(year)}</h2><ol class="timeline">'
        timeline += item
    if year is not None:
        timeline += "</ol>"
    pager = (
        f'<p class="pager"><a rel="next" href="/captures?{esc(urlencode({"url": url, "after": found.after}))}">Later captures »</a></p>'
        if found.after is not None else ""
    )
    body = (
        crumbs
        + f"<h1>Captures of <code>{in_order(shown_url(url))}</code></h1>{form}"
        + (
            f"<p>{counted(len(items), 'capture')} in {counted(len(found.documents), 'document')}"
            + (" on this page" if after or found.after else "")
            + ", oldest first (UTC).</p>" + timeline + pager
            if items else "<p>No capture of this URL is in the archive (the URL is compared exactly as it was captured).</p>"
        )
    )
    return _page(f"Captures of {shown_url(url)}", body)



class BrowsePages:
    """The catalogue's routes over one archive: each renders on Starlette's threads (catalog reads only)."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive

    def _answer(self, render: Callable[[], str]) -> Response:
        try:
            return HTMLResponse(render())
        except PDIError as exc:
            return problem_page(self.archive, exc)

    def series_list(self, request: Request) -> Response:
        return self._answer(lambda: render_series_list(self.archive))

    def series(self, request: Request) -> Response:
        p = {k: str(v) for k, v in request.path_params.items()}
        name = p["name"]
        if "day" in p:  # a repeated after= or limit= is an error shown on the home page, as any other
            return self._answer(lambda: render_day(
                self.archive, name, p["year"], p["month"], p["day"],
                after=single_values(request).get("after"), limit=single_values(request).get("limit"),
            ))
        if "month" in p:
            return self._answer(lambda: render_month(self.archive, name, p["year"], p["month"]))
        if "year" in p:
            return self._answer(lambda: render_year(self.archive, name, p["year"]))
        return self._answer(lambda: render_series(self.archive, name))

    def captures(self, request: Request) -> Response:
        return self._answer(lambda: render_captures(
            self.archive, single_values(request).get("url"), after=single_values(request).get("after")))

    def routes(self) -> list[Route]:
        """``/series``, ``/series/NAME[/YYYY[/MM[/DD]]]`` and ``/captures`` (``/`` is the viewer's, which shows the home page)."""
        return [
            Route("/series", self.series_list),
            Route("/series/{name}", self.series),
            Route("/series/{name}/{year}", self.series),
            Route("/series/{name}/{year}/{month}", self.series),
            Route("/series/{name}/{year}/{month}/{day}", self.series),
            Route("/captures", self.captures),
        ]
