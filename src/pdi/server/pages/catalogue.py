"""What the catalogue's pages share: their style, the page frame, breadcrumbs, the paths of a series' calendar and of
a name's page, times and a version's format links.

The pages are :mod:`pdi.server.pages.browse` (the series, their calendars, a day's documents, a URL's captures) and
:mod:`pdi.server.pages.document_page` (a document's versions, formats and statements).
"""

from __future__ import annotations

import datetime
from urllib.parse import quote

from pdi.identifier import PDI
from pdi.server.pages.layout import esc, in_order, page, shown_format

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


def catalogue_page(title: str, body: str, *, name: str = "", resolve: bool = True) -> str:
    """A page of the catalogue: :func:`~pdi.server.pages.layout.page` with :data:`STYLE`."""
    return page(title, body, style=STYLE, name=name, resolve=resolve)


def breadcrumbs(*steps: tuple[str, str | None]) -> str:
    """Breadcrumbs: each step a label and its link (``None``: the page itself); a label that is an id or a URL
    reads left to right as written, its Hebrew or Arabic parts each in its own direction (:func:`in_order`)."""
    items = "".join(
        f'<li><a href="{esc(href)}">{in_order(label)}</a></li>' if href is not None
        else f'<li aria-current="page">{in_order(label)}</li>'
        for label, href in steps
    )
    return f'<nav class="crumbs" aria-label="Breadcrumb"><ol>{items}</ol></nav>'


def series_path(series: str, *parts: int) -> str:
    """The path of a series' page, or of its year, month or day (``/series/NAME/YYYY/MM/DD``)."""
    widths = (4, 2, 2)
    return f"/series/{quote(series, safe='')}" + "".join(f"/{p:0{w}d}" for p, w in zip(parts, widths, strict=False))


def view_path(name: PDI | str) -> str:
    """The path of a name's page (``/view?pdi=``)."""
    return f"/view?pdi={quote(str(name), safe='')}"


def utc_time(stamp: str) -> str:
    """A catalog time (ISO 8601, UTC) as ``<time>``: ``2026-11-22 14:30:00 UTC``."""
    day, _, clock = stamp.replace("T", " ").split(".")[0].rstrip("Z").partition(" ")
    # in a narrow table the line may break between the day and the clock, never inside either
    return f'<time datetime="{esc(stamp)}"><span>{esc(day)}</span> <span>{esc(clock)} UTC</span></time>'


def iso_day(day: datetime.date | None) -> str:
    """A day as ``<time>`` (``2026-11-22``); ``—`` for none."""
    return "—" if day is None else f'<time datetime="{day.isoformat()}"><span>{day.isoformat()}</span></time>'


def format_link(name: PDI) -> str:
    """A format of a version, as a day's table and a document's Versions list show it: the media type it is
    (:func:`shown_format`), linked to its page; its token as its name spells it (``svg%2Bxml``) in the link's
    tooltip, with the name."""
    return f'<a href="{esc(view_path(name))}" title="{esc(f"format {name.format}: {name}")}">{shown_format(name.format or "")}</a>'
