"""The reader's catalogue: the archive's series, their calendars, a day's documents, a URL's captures.

Every page is plain HTML through :func:`pdi.server.pages.catalogue.catalogue_page`, readable
and navigable without JavaScript, at a path a reader can bookmark:

* ``/`` — what the archive is: its series with their number of documents,
  latest day and latest deposit, how to cite and resolve a name, a box for a name (``/view?pdi=``)
  and one for a URL (``/captures?url=``);
* ``/series`` — every series; ``/series/NAME`` — its documents counted by year
  and month; ``/series/NAME/YYYY`` — that year's months as calendars;
  ``/series/NAME/YYYY/MM`` — the month's days; ``/series/NAME/YYYY/MM/DD`` —
  the day's documents, a page at a time (``?after=ID`` continues after the
  document ``ID``: a keyset, as cheap deep in a day as at its start);
* ``/captures?url=URL`` — the captures of one URL over every day and series,
  as a timeline.

Counts and pages come from :class:`pdi.archive.Archive` (``series_counts``,
``day_counts``, ``day_documents``, ``captures``, ``document``), each an index
read, never the whole catalog. The document page, which ``/view?pdi=`` shows for a generic name, is
:mod:`pdi.server.pages.document_page`. A page that fails is an error page
(:mod:`pdi.server.pages.problem_pages`) with the status of the error's class.
"""

from __future__ import annotations

import calendar
import datetime
from collections.abc import Callable, Mapping, Sequence
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from pdi._wording import clipped, counted
from pdi.archive import Archive, DocumentPage, Generic, canonical_series
from pdi.archive.access import HIDDEN, PUBLIC, current_reader
from pdi.archive.store import DocumentKey
from pdi.errors import ParseError, PDIError
from pdi.identifier import PDI
from pdi.server.http.params import single_values
from pdi.server.pages.catalogue import (
    breadcrumbs,
    catalogue_page,
    format_link,
    iso_day,
    series_path,
    utc_time,
    view_path,
)
from pdi.server.pages.layout import (
    breakable,
    day_in_words,
    esc,
    in_order,
    isolated,
    shown_format,
    shown_url,
)
from pdi.server.pages.problem_pages import problem_page

#: Documents on one page of a day (``?limit=`` may ask for up to :data:`MAX_PAGE`).
DAY_PAGE = 100
#: Captures (documents) on one page of a URL's timeline.
CAPTURES_PAGE = 200
#: The most documents one page shows.
MAX_PAGE = 1000

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
        f'<tr><td class="stacked" data-label="Series"><a href="{series_path(c.series)}">{_series_name(c.series)}</a></td>'
        f'<td class="number" data-label="Documents">{_count(c.documents)}</td>'
        f'<td data-label="Latest day">{iso_day(c.last_day)}</td>'
        f"""<td data-label="Latest deposit">{'—' if c.last_deposit is None else utc_time(c.last_deposit)}</td></tr>"""
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
    return catalogue_page("The archive", body, resolve=False)  # its own box, explained below it: the header's would be a second


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
        f'<tr><td class="stacked" data-label="Series"><a href="{series_path(c.series)}">{_series_name(c.series)}</a></td>'
        f'<td class="stacked" data-label="Under">{"—" if (up := records[c.series].parent) is None else _series_name(up)}</td>'
        f'<td class="number" data-label="Documents">{_count(c.documents)}</td>'
        f'<td data-label="First day">{iso_day(c.first_day)}</td><td data-label="Latest day">{iso_day(c.last_day)}</td>'
        f"""<td data-label="Latest deposit">{'—' if c.last_deposit is None else utc_time(c.last_deposit)}</td>"""
        f'<td data-label="Registered">{utc_time(records[c.series].created_at)}</td></tr>'
        for c in archive.series_counts()
        if c.series in records
    )
    body = (
        breadcrumbs(("Home", "/"), ("Series", None))
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
    return catalogue_page("Series", body)


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
            f'<td class="number stacked" data-label="{calendar.month_abbr[m]}"><a href="{series_path(name, y, m)}"'
            f' aria-label="{calendar.month_name[m]} {y}: {counted(by_month[(y, m)], "document")}">'
            f"{_breakable_count(by_month[(y, m)])}</a></td>"
            if (y, m) in by_month else f'<td class="empty stacked" data-label="{calendar.month_abbr[m]}">·</td>'
            for m in range(1, 13)
        )
        total = sum(n for (yy, _), n in by_month.items() if yy == y)
        rows += (
            f'<tr><th scope="row"><a href="{series_path(name, y)}">{y}</a></th>{cells}'
            f'<td class="number" data-label="Total">{_breakable_count(total)}</td></tr>'
        )
    total = sum(by_month.values())
    body = (
        breadcrumbs(("Home", "/"), ("Series", "/series"), (name, None))
        + f"<h1><code>{esc(name)}</code></h1>"
        + f"<p>{counted(total, 'document')}"
        + ((f", minted on {iso_day(counts[0].day)} (a GMT day)." if counts[0].day == counts[-1].day else
            f", minted from {iso_day(counts[0].day)} to {iso_day(counts[-1].day)} (GMT days).") if counts else ".")
        + "</p>" + series_note(archive, name)
        + (
            '<table class="catalogue cards cards-52" id="years"><caption>Documents by year and month</caption>'
            f'<thead><tr><th scope="col">Year</th>{head}<th scope="col" class="number">Total</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
            if rows else _NOTHING_IN_SERIES.format(name=esc(name))
        )
    )
    return catalogue_page(name, body)


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
                    f'<td class="has"><a href="{series_path(name, year, month, d)}" aria-label="{d} {calendar.month_name[month]} {year}:'
                    f' {counted(days[d], "document")}">{d}</a><small>{_count(days[d])}</small></td>'
                )
            else:
                cells += f"<td>{d}</td>"
        weeks += f"<tr>{cells}</tr>"
    head = "".join(f'<th scope="col"><abbr title="{calendar.day_name[i]}">{calendar.day_abbr[i][:2]}</abbr></th>' for i in range(7))
    title = f"{calendar.month_name[month]} {year}"
    # the month's own page: headed by its month already, the calendar is the calendar (and no link to itself)
    link = "Calendar" if one else f'<a href="{series_path(name, year, month)}">{title}</a>'
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
        breadcrumbs(("Home", "/"), ("Series", "/series"), (name, series_path(name)), (str(year), None))
        + f"<h1><code>{esc(name)}</code> in {year}</h1><p>{counted(total, 'document')} minted in {year}"
        + (f" on {counted(len(counts), 'day')}." if counts else ".")
        + "</p>" + series_note(archive, name)
        + '<div class="months">'
        + "".join(_month_calendar(name, year, m, months[m]) for m in sorted(months))
        + "</div>"
    )
    return catalogue_page(f"{name} {year}", body)


def render_month(archive: Archive, series: str, year_text: str, month_text: str) -> str:
    """``/series/NAME/YYYY/MM``: the month as a calendar, and its days with documents in a table."""
    year, month = _parse_date_parts(series, year_text, month_text)
    name = canonical_series(series)
    every = archive.day_counts(name)  # one read of the series' days: this month's, and the months beside it
    counts = [c for c in every if (c.day.year, c.day.month) == (year, month)]
    days = {c.day.day: c.documents for c in counts}
    rows = "".join(
        f'<tr><td data-label="Day"><a href="{series_path(name, year, month, c.day.day)}">{iso_day(c.day)}</a></td>'
        f'<td data-label="Weekday">{calendar.day_name[c.day.weekday()]}</td>'
        f'<td class="number" data-label="Documents">{_count(c.documents)}</td></tr>'
        for c in counts
    )
    # the nearest months before and after with documents, whatever year
    months = sorted({(c.day.year, c.day.month) for c in every})
    before = [m for m in months if m < (year, month)]
    after = [m for m in months if m > (year, month)]
    near = "".join(
        f'<a rel="{rel}" href="{series_path(name, y, m)}">{text.format(f"{calendar.month_name[m]} {y}")}</a>'
        for rel, found, text in (("prev", before[-1:], "« {}"), ("next", after[:1], "{} »")) for y, m in found
    )
    body = (
        breadcrumbs(("Home", "/"), ("Series", "/series"), (name, series_path(name)),
                (str(year), series_path(name, year)), (calendar.month_name[month], None))
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
    return catalogue_page(f"{name} {year}-{month:02d}", body)


def _limit(text: str | None, default: int) -> int:
    if text is None or text == "":
        return default
    if not text.isascii() or not text.isdigit() or len(text) > 9 or not 1 <= int(text) <= MAX_PAGE:
        raise ParseError(f"limit={text!r}: a page holds 1 to {MAX_PAGE} documents", rule="limit")
    return int(text)


def _formats(version_names: Sequence[PDI]) -> str:
    """A version's formats in a day's table (:func:`format_link`), one after another."""
    return ", ".join(format_link(n) for n in version_names)


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
    here = series_path(name, year, month, dom)
    pager = []
    if after:
        pager.append(f'<a href="{esc(here + ("?" + urlencode({"limit": size}) if limit else ""))}">« First page</a>')
    if found.after is not None:
        query = {"after": found.after, **({"limit": str(size)} if limit else {})}
        pager.append(f'<a rel="next" href="{esc(here + "?" + urlencode(query))}">Next page »</a>')
    body = (
        breadcrumbs(("Home", "/"), ("Series", "/series"), (name, series_path(name)),
                (str(year), series_path(name, year)), (calendar.month_name[month], series_path(name, year, month)),
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
            f'<p class="empty-state">The calendar of <a href="{series_path(name, year, month)}">'
            f"{calendar.month_name[month]} {year}</a> links each day of it that has documents; the series'"
            f' <a href="{series_path(name)}">years and months</a> count them all.</p>'
        )
        + (f'<p class="pager">{"".join(pager)}</p>' if pager else "")
    )
    return catalogue_page(f"{name} {day.isoformat()}", body)


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
        f'<tr><td class="id" data-label="Id"><a href="{esc(view_path(doc.pdi))}" title="{esc(doc.pdi)}">'
        f"<code>{breakable(shown_url(uid))}</code></a></td>"
        f'<td data-label="Title">{said.strip()}</td><td data-label="Latest formats">{_formats(latest.formats)}</td>'
        f'<td class="number" data-label="Versions">{len(doc.versions):,}</td>'
        f'<td data-label="Latest deposit">{utc_time(latest.created_at)}</td></tr>'
    )


def series_note(archive: Archive, series: str, marked: int = 0) -> str:
    """What a reader with a token is told above a page of the catalogue of ``series`` (canonical) that not everyone
    may read, as :func:`~pdi.server.pages.document_page.access_note` tells it on a document's page: that the series is private or hidden, and so a
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


# --- captures of a URL -------------------------------------------------------------------------
def render_captures(archive: Archive, url: str | None, *, after: str | None = None) -> str:
    """``/captures?url=URL``: every capture of the URL (each version of each document whose id it is), by time."""
    form = (
        '<form class="wide" action="/captures" method="get"><label for="captures-url">URL</label>'
        f'<input id="captures-url" name="url" dir="ltr" value="{esc(url or "")}" placeholder="https://www.example.org/">'
        '<button type="submit">Show captures</button></form>'
    )
    crumbs = breadcrumbs(("Home", "/"), ("Captures", None))
    if not url:
        return catalogue_page("Captures", crumbs + "<h1>Captures of a URL</h1>" + form)
    found = archive.captures(url, after=after or None, limit=CAPTURES_PAGE)
    items: list[tuple[str, str]] = []  # (deposit time, the list item)
    for doc in found.documents:
        for v in doc.versions:
            first = v.formats[0]
            others = "".join(f' · <a href="{esc(view_path(n))}">{shown_format(n.format or "")}</a>' for n in v.formats[1:])
            items.append((v.created_at, (
                f'<li>{utc_time(v.created_at)} — <a href="{esc(view_path(first))}">{shown_format(first.format or "")},'
                f" version {v.number}</a>{others} in <code>{esc(doc.pdi.series_name.lower())}</code>"
                f' (<a href="{esc(view_path(doc.pdi))}">the document</a>)</li>'
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
    return catalogue_page(f"Captures of {shown_url(url)}", body)



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
