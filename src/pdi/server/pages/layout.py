"""The frame every page of the reader's web app shares: head, navigation, style.

:func:`page` wraps a page's body in one HTML document: a ``<header>`` with
the resolver's navigation (home, series, a search box and a box for a name,
each a plain link or a ``GET`` form, so that every page reads and navigates
without JavaScript; and who reads: "signed in as NAME (role, series)" with a
sign-out button, or a "Sign in" link back to this page,
:mod:`pdi.server.pages.signin`), a ``<footer>`` linking the API reference
(``/api``), at the window's foot on a short page, and the stylesheet. The header's first stop for Tab is
a link past it to ``<main>`` ("Skip to the content", WCAG 2.2 §2.4.1), out of sight until it has the focus
(``tests/server/test_server_skip_link.py``). Nothing is loaded from elsewhere:
the style and any script are inline, so a page is whole as served.
On a screen narrower than 40rem (a phone) the header's two boxes take a line
each and long names and URLs break anywhere. Every table of the reader's pages but a month's calendar (which
fits) is of class ``cards`` (a document's versions, formats and statements, a day's documents, a tombstone's, the
tables of series, a series' years, a month's days, the API's parameters): up to 64rem (a phone, a tablet: a
document's Formats, seven columns, is wider than the page until about 63rem; :data:`CARDS_UP_TO`), or a narrower
width for a table that fits sooner (a table of series, a series' years: :data:`NARROWER_CARDS`), its rows are
cards, each cell a line after its ``data-label`` (its column's heading; of class ``stacked``, under it), a row's own heading heading its
card, so that a name in it is never past the screen's edge (a table still, to a screen reader;
``tests/server/test_server_reader_phone_tables.py``, ``tests/server/test_server_reader_phone_every_table.py``;
no page scrolls sideways from 320 to 1280 px: ``tests/server/test_server_reader_tablet_widths.py``).
No page scrolls sideways at 390 px (``tests/server/test_server_pages_axe.py``, which
also runs axe-core on every page), nor does the header at 320 px (a form, a flex
item, may shrink below its widest content: ``min-width:0``;
``tests/server/test_server_reflow.py``). At every width a depositor's text (in a
``<bdi>``: :func:`isolated`) and a name, an id or a URL (in ``<code>``) break
anywhere once a word is longer than its line or its cell, so a word of
thousands of letters makes no page wider than the window
(``tests/server/test_server_long_words.py``). A title in a right-to-left script (Arabic, Hebrew) alone in
its cell, fact or heading is aligned to that box's right edge, where its lines begin
(``tests/server/test_server_rtl_titles.py``).

A control's keyboard focus is drawn in a colour of at least 3:1 against what it is drawn on (WCAG 2.2
§1.4.11): dark blue on the page, orange in the dark header (``tests/server/test_server_keyboard.py``), 3 px
thick on whatever Tab stops at (a list to choose from, a summary that opens, a table that scrolls in its own
box, a player), not the browser's thin ring on some (``tests/server/test_server_reader_edges.py``). Tab
stops at a table only where it scrolls in its own box at some width (a table of series, on a desktop), not at one
that has nothing to scroll (WCAG 2.2 §2.4.3; the same test file).

A reader whose system prefers a dark colour scheme gets one (``prefers-color-scheme: dark``; ``color-scheme``
lets the browser draw its own controls and scroll bars to match): light text on a near-black page, its links,
visited links, focus ring (light blue), tables, code and marks kept at WCAG AA contrast (4.5:1 for text, 3:1 for
the ring), each page's own style adding its colours; an archived page replayed in a frame keeps the white it was
made for. ``tests/server/test_server_pages_screenshots.py`` saves each page dark too (``NAME-dark.png``) and
``tests/server/test_server_pages_axe.py`` checks it with axe (its color-contrast rule among them).

Pages pass already-escaped HTML; :func:`esc` is :func:`html.escape` under a
short name for building it. What a depositor wrote is shown so that its
bidirectional controls (U+202E RIGHT-TO-LEFT OVERRIDE and the rest,
:data:`BIDI_CONTROLS`) cannot reorder the page around it: a URL with them
percent-encoded, as a browser shows a URL (:func:`shown_url`); a title, a
creator, a subject in a ``<bdi>``, its direction its own and what follows it
untouched (:func:`isolated`); and the ``<title>``, which holds no markup,
without them (:func:`page`). A name, an id, a URL or a fragment, in ``<code>``, is left to right and isolated
(``STYLE``), and one holding Hebrew or Arabic (a foreign id, decoded; a captured URL) has each part that holds such a
word isolated in its own direction (:func:`in_order`, which :func:`breakable` uses), so that its parts stand in the
order written (``tests/server/test_server_rtl_names.py``).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import html
import re
import unicodedata
from urllib.parse import quote

from pdi import formats
from pdi._wording import binary_size
from pdi.archive.access import current_reader
from pdi.errors import ParseError, UnsupportedError
from pdi.identifier import PDI
from pdi.server.http.readers import by_cookie, request_target
from pdi.server.http.site import in_pages

STYLE = """
/* a short page's footer at the window's foot: a height in % (not vh, which a resize changes and so stops the
 browser keeping the reader's place: CSS Scroll Anchoring, suppression triggers); main's ::before and ::after
 hold its margins, which then fold into its first and last child's as they did outside a flex box */
html{height:100%} body{font:16px/1.45 system-ui,sans-serif;margin:0;color:#222;min-height:100%;display:flex;flex-direction:column}
main{--measure:60rem;flex:1 0 auto;width:100%;box-sizing:border-box;max-width:calc(var(--measure) + 2rem);margin:0 auto;padding:0 1rem}
main::before{content:"";display:block;margin-top:1.5rem} main::after{content:"";display:block;margin-bottom:2rem}
header.site{background:#24303f;color:#fff;padding:0.45rem 1rem;display:flex;flex-wrap:wrap;gap:0.4rem 1.2rem;align-items:center}
header.site a{color:#fff;text-decoration:none;font-weight:600} header.site a:hover,header.site a:focus{text-decoration:underline}
header.site form{display:flex;gap:0.3rem;align-items:center;margin:0} header.site label{font-size:0.85rem}
header.site input{padding:0.2rem 0.35rem;border:1px solid #8796a8;border-radius:3px}
header.site .brand{font-size:1.05rem;margin-right:0.5rem}
/* the skip link (WCAG 2.2 §2.4.1): out of sight until Tab reaches it, then over the brand, in the header's colours */
header.site{position:relative} header.site a.skip{position:absolute;left:-100vw;top:0.3rem;z-index:1;padding:0.15rem 0.5rem;background:#24303f}
header.site a.skip:focus{left:0.6rem}
header.site .who{margin-left:auto;display:flex;gap:0.5rem;align-items:center;font-size:0.9rem}
header.site button{font:inherit;font-size:0.85rem}
:is(a,button,input,select,textarea,summary,video,audio,[tabindex]):focus-visible{outline:3px solid #0050c8;outline-offset:1px}
header.site :focus-visible{outline-color:#f0a400}
pre{white-space:pre-wrap;word-wrap:break-word;border:1px solid #ccc;padding:1rem;background:#fcfcfa}
mark{background:#ffe58a} code,input{font-family:ui-monospace,monospace}
/* a name, an id, a URL or a fragment reads left to right as written whatever the text around it (RFC 3987 §4.1: in
 a left-to-right embedding), and its right-to-left letters reorder nothing outside it (in_order isolates each part) */
code{direction:ltr;unicode-bidi:isolate}
#name{width:100%;font-size:0.95rem;padding:0.3rem} .error{color:#a00} dt{font-weight:bold}
h1 code{overflow-wrap:anywhere} .note{color:#8a5a00} dd.pending{color:#8a5a00}
bdi,main code{overflow-wrap:anywhere} cite.upright{font-style:normal}
/* a depositor's right-to-left title alone in its box (a cell, a fact, a heading) starts at the box's right edge,
 where it is read from: the bdi's own direction (:dir, of its first strong character) says which */
:is(td,dd,h1):has(> bdi:only-child:dir(rtl)){text-align:right}
table{border-collapse:collapse} th,td{border:1px solid #ccc;padding:0.3rem 0.6rem;vertical-align:top;text-align:left}
td ul{margin:0;padding-left:1.1rem} td.number{text-align:right} time{white-space:nowrap}
table.catalogue th{background:#eef1f5;font-weight:600} table.catalogue tbody tr:nth-child(even){background:#fafbfc}
table.catalogue td.number,table.catalogue th.number{text-align:right;font-variant-numeric:tabular-nums}
table.catalogue caption{text-align:left;font-weight:600;padding:0.3rem 0}
code.name{font-size:0.8rem;color:#555;overflow-wrap:break-word} .anywhere{overflow-wrap:anywhere}
/* a syntax error's page: what was given, the wrong part marked; the grammar's words, quieter */
p.given code{overflow-wrap:anywhere} p.given mark{outline:2px solid #c98a00} p.grammar{color:#555}
/* a name's fragment whole on a line where the line holds it, broken between its parts where not (breakable) */
.fragment{display:inline-block;max-width:100%} a .fragment{text-decoration:underline}
/* a piece of a capture's name (name_in_pieces: www%2Ecourts, appeal-4211) whole where the line holds it, as a
 fragment is; a name so cut (a statement's value) breaks inside a piece only where the piece is longer than its line */
.piece{display:inline-block;max-width:100%} a .piece{text-decoration:underline} bdi.name,main code.token{overflow-wrap:break-word} td small.binary{display:block;color:#555;font-size:0.8rem}
.figure{position:relative;display:inline-block} .figure img{display:block;max-width:100%}
.box{position:absolute;outline:3px solid #e00;box-shadow:0 0 0 9999px rgba(0,0,0,.25)}
p.version-banner{background:#fff4d6;border:1px solid #d9a400;border-radius:4px;padding:0.5rem 0.8rem}
p.version-banner a{color:#5a3b00;font-weight:600} p.version-banner code{overflow-wrap:break-word} p.doc-title{font-size:1.1rem;margin:0.2rem 0 0.6rem}
footer.site{margin:0;padding:0.6rem 1rem;border-top:1px solid #ddd;background:#f6f8fa;font-size:0.9rem;color:#555}
footer.site a{color:#24303f}
details.pdi-name{display:inline-block;vertical-align:top;font-size:0.85rem} details.pdi-name summary{cursor:pointer;color:#24303f}
details.pdi-name code{display:block;overflow-wrap:anywhere;font-size:0.8rem;color:#555}
.capture-title .url{overflow-wrap:anywhere} .capture-title small{color:#555;font-weight:normal;white-space:nowrap;font-size:max(0.55em,0.8rem)}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
:root{color-scheme:light dark}
@media (prefers-color-scheme:dark){
body{background:#16191d;color:#e6e6e6} a{color:#8ab4f8} a:visited{color:#c58af9}
header.site,header.site a.skip{background:#1f2a36} header.site a,header.site a:visited{color:#fff} header.site input{border-color:#8796a8}
:is(a,button,input,select,textarea,summary,video,audio,[tabindex]):focus-visible{outline-color:#7fb0ff} header.site :focus-visible{outline-color:#f0a400}
pre{border-color:#4a4f57;background:#1c2026} mark{background:#ffe58a;color:#16191d}
.error{color:#ff8080} .note,dd.pending{color:#f0c060} th,td{border-color:#4a4f57} code.name,p.grammar{color:#b0b0b0}
table.catalogue th{background:#252b33} table.catalogue tbody tr:nth-child(even){background:#1c2026}
.box{outline-color:#ff5050;box-shadow:0 0 0 9999px rgba(0,0,0,.45)}
p.version-banner{background:#3a2f10;border-color:#8a6d00} p.version-banner a,p.version-banner a:visited{color:#ffd27a}
footer.site{border-top-color:#3a3f47;background:#1c2026;color:#b8b8b8} footer.site a,footer.site a:visited{color:#c8d3e0}
details.pdi-name summary{color:#c8d3e0} details.pdi-name code,.capture-title small,td small.binary{color:#b0b0b0}
}
/* a short media type whole in a table's cell beside a SHA-256 (WHOLE_MEDIA_TYPE); on a phone it wraps as it must */
@media (min-width:40rem){code.media.whole{white-space:nowrap}}
@media (max-width:40rem){
main{padding:0 0.75rem} main::before{margin-top:1rem} header.site{padding:0.45rem 0.75rem}
header.site form[role=search],header.site form[action="/view"]{flex:1 1 100%;min-width:0} header.site form input{flex:1 1 0;min-width:0}
header.site button{white-space:nowrap} main h1{font-size:1.6rem}
main{overflow-wrap:anywhere} main input{max-width:100%;box-sizing:border-box} th,td{padding:0.25rem 0.4rem}
main th,main td:not(:last-child){overflow-wrap:normal}
}
"""

#: The widest window, in rem, in which a table of class ``cards`` is drawn as cards (:data:`CARDS`): the widest
#: table, a document's Formats (seven columns, a SHA-256 and a media type whole among them), is wider than the
#: page until about 63 rem.
CARDS_UP_TO = 64
#: A table of class ``cards`` that fits as a table in a narrower window, by the class that says so (beside
#: ``cards``), and the widest window, in rem, in which it is cards; each where it fits, measured in Chromium
#: (``tests/server/test_server_reader_tablet_widths.py``): a series' years (fourteen columns, five-digit months
#: breaking after a thousands separator) from about 50 rem, the home page's table of series (four columns) from
#: about 46 rem with a name of 41 characters (a longer label widens it): ``cards-52``, a table from 833 px;
#: ``/series``'s table of series (seven columns) from about 59 rem: ``cards-60``, a table from 961 px. A table of
#: series whose names are wider than the window still scrolls in its own box there (``browse.STYLE``).
NARROWER_CARDS = {"cards-52": 52, "cards-60": 60}

#: A table of cards, ``TABLE`` standing for the tables it draws so (every table of the reader's but a month's
#: calendar, in a window narrower than its breakpoint): each row a card the screen's width, each cell a line of it
#: after its column's heading (data-label; the headings themselves kept for a screen reader), so that what a reader
#: came for (a name to cite) is never past the screen's edge in a box to scroll; a row's own heading (a year) heads
#: its card; a cell of class stacked (a series' name, a month's count) has its column's heading above it, not
#: beside it.
CARDS = """
TABLE{display:block} TABLE caption{display:block}
TABLE thead{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
TABLE tbody{display:block} TABLE tr{display:block;border:1px solid #ccc;border-radius:4px;margin:0 0 0.6rem;padding:0.2rem 0.6rem}
main TABLE td{display:flow-root;border:0;padding:0.25rem 0 0.25rem 7rem;min-width:0;overflow-wrap:break-word}
main TABLE td:is(.number,.empty){text-align:left}
main TABLE tbody th{display:block;border:0;padding:0.25rem 0;background:none}
TABLE td::before{content:attr(data-label) / "";float:left;width:6.5rem;margin-left:-7rem;font-weight:600;overflow-wrap:normal;text-align:left}
main TABLE td.stacked{padding-left:0}
TABLE td.stacked::before{float:none;display:block;width:auto;margin-left:0}
TABLE tbody tr:nth-child(even){background:none}
"""

STYLE += "".join(
    f"@media (max-width:{up_to}rem){{{CARDS.replace('TABLE', table)}}}\n"
    f"@media (max-width:{up_to}rem) and (prefers-color-scheme:dark){{{table} tr{{border-color:#4a4f57}}}}\n"
    for table, up_to in [("table.cards" + "".join(f":not(.{narrower})" for narrower in NARROWER_CARDS), CARDS_UP_TO),
                         *((f"table.cards.{narrower}", up_to) for narrower, up_to in NARROWER_CARDS.items())]
)


def esc(value: object) -> str:
    """``value`` as text escaped for HTML content and quoted attributes."""
    return html.escape(str(value), quote=True)


#: Unicode's bidirectional formatting characters (UAX #9 §2: the marks ALM, LRM and RLM; the embeddings and
#: overrides LRE, RLE, PDF, LRO and RLO; the isolates LRI, RLI, FSI and PDI): invisible, each reorders the text
#: after it (``http://evil.example/\u202elmth.exe/`` is shown ``http://evil.example//exe.html``).
BIDI_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown_url(url: str) -> str:
    """``url`` as a person is shown it: its bidirectional controls percent-encoded as UTF-8 (``%E2%80%AE``), as a
    browser's address bar leaves them, so the URL reads in the order it was written. Not escaped for HTML."""
    return BIDI_CONTROLS.sub(lambda found: quote(found.group(), safe=""), url)


#: Where :func:`in_order` cuts a name, an id or a URL into parts: a run of RFC 3986's reserved characters (§2.2:
#: the delimiters of a URL's parts, and of a PDI's: ``/``, ``.``, ``#``, ``@``, ``=``, ``,`` …).
_DELIMITERS = re.compile(r"([:/?#\[\]@!$&'()*+,;=.]+)")


def _right_to_left(text: str) -> bool:
    """Whether ``text`` holds a right-to-left letter (Unicode's bidirectional class R, Hebrew's, or AL, Arabic's)."""
    if text.isascii():  # every canonical name: no character to look up (a day's page shows a thousand)
        return False
    return any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in text)


def in_order(text: object) -> str:
    """A name, an id or a URL escaped so that it reads left to right in the order written, each part (between its
    delimiters: ``/``, ``.``, ``#`` …) holding a right-to-left letter in a ``span`` of its own direction
    (``dir="auto"``, an isolate). Unicode's bidi algorithm alone, even in a left-to-right embedding (RFC 3987
    §4.1), draws the parts of a name about a Hebrew or Arabic word in the reverse order: ``…/מסמך/2024`` as
    ``…/2024/מסמך``, a number after the word drawn before it; each such part isolated, the parts stand left to right
    and each word reads in its own direction inside its part. A name of ASCII alone, every canonical PDI, is
    only escaped."""
    value = str(text)
    if not _right_to_left(value):
        return esc(value)
    return "".join(f'<span dir="auto">{esc(part)}</span>' if i % 2 == 0 and _right_to_left(part) else esc(part)
                   for i, part in enumerate(_DELIMITERS.split(value)))


def script_source(script: str) -> str:
    """The CSP source expression that lets one inline ``script`` run: ``'sha256-…'`` of its UTF-8 (CSP 3 §2.3.1)."""
    return f"'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"


def isolated(text: object) -> str:
    """A depositor's text (a title, a creator, a subject) escaped in a ``<bdi>``: its direction its own (of its
    first strong character) and isolated, so that a bidirectional control in it cannot reorder what follows it
    (HTML's ``bdi`` element; UAX #9 ends every embedding and override at the isolate's end)."""
    return f"<bdi>{esc(text)}</bdi>"


#: The link from a Cite panel's plain words on how a passage's characters are counted to the precise rule, on the
#: API reference's page (:func:`pdi.server.pages.api_docs.render_docs`, its section ``counting``).
COUNTING_LINK = '<a href="/api#counting">how the characters are counted</a>'


def statement_value(value: str) -> str:
    """A statement's value on a page (a version's facts, a document's statements; a depositor's words, isolated):
    one that is a PDI and nothing else
    (``source=urn:pdi://…#part=1``, the message an attachment deposited alone came from) a link to that name's
    page, written canonically, so a reader follows it, the name shown as written and breaking where a name in
    About does (:func:`name_in_pieces`: a capture's never inside an escape, ``…%2`` above ``Eexample``); any other
    value, text."""
    if value.strip() != value or not value.lower().startswith(("urn:pdi:", "pdi:")):
        return isolated(value)
    try:
        name = PDI.parse(value)
    except ParseError:
        return isolated(value)
    href = "/view?pdi=" + quote(str(name), safe="")
    return f'<a href="{html.escape(href)}"><bdi class="name">{name_in_pieces(value)}</bdi></a>'


#: Han (its radicals, ideographs of every extension and the compatibility ones, the iteration and number marks),
#: kana and its halfwidth forms, Bopomofo, Hangul and its jamo: the scripts of Chinese, Japanese and Korean, whose
#: typography has no italic (emphasis is a dot beside each character or another typeface: W3C's JLREQ §3.3.1,
#: CLREQ, KLREQ), first and last of each range (Unicode's blocks).
_UPRIGHT_RANGES = (
    (0x1100, 0x11FF), (0x2E80, 0x2FDF), (0x3005, 0x3007), (0x3021, 0x3029), (0x3031, 0x3035), (0x3038, 0x303C),
    (0x3041, 0x30FF), (0x3105, 0x318F), (0x31A0, 0x31BF), (0x31F0, 0x31FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
    (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xF900, 0xFAFF), (0xFF66, 0xFFDC), (0x20000, 0x3134F),
)
_UPRIGHT = re.compile("[" + "".join(f"{chr(first)}-{chr(last)}" for first, last in _UPRIGHT_RANGES) + "]")


def cited(title: str) -> str:
    """A title in ``<cite>`` (:func:`isolated`), italic as a cited title is, but upright (``class="upright"``)
    when it holds Chinese, Japanese or Korean: a browser asked to italicize these slants each glyph (a synthetic
    oblique; their fonts have no italic). Its script is what the page knows of it: a statement has no language."""
    upright = ' class="upright"' if _UPRIGHT.search(title) else ""
    return f"<cite{upright}>{isolated(title)}</cite>"


def captured_url(name: PDI) -> str | None:
    """The URL a name's document was deposited under (a capture's id, RFC 3986 as captured), else ``None``.

    Such a name encapsulates the URL (PDI-GRAMMAR §2.4: ``…/http:%2F%2Fwww%2Eexample%2Ecom%2F.html.1``),
    right for a machine and unreadable for a person: pages show the URL and the date first
    (:func:`capture_title`) and the name one click away (:func:`name_details`).
    """
    return name.unique_id if name.serial is None and "://" in name.unique_id else None


def shown_time(stamp: str) -> str:
    """A catalog time (ISO 8601, UTC) as ``<time>``: ``2026-11-22 14:30:00 UTC``."""
    shown = stamp.replace("T", " ").split(".")[0].rstrip("Z")
    return f'<time datetime="{esc(stamp)}">{esc(shown)} UTC</time>'


def day_in_words(stamp: str) -> str:
    """A catalog time's day as a person writes it: ``2030-01-01T00:00:00.000000Z`` is 1 January 2030 (the time
    too, in UTC, when it is not midnight)."""
    try:
        when = datetime.datetime.fromisoformat(stamp.rstrip("Z"))
    except ValueError:
        return stamp
    day = f"{when.day} {when:%B %Y}"
    return day if (when.hour, when.minute, when.second) == (0, 0, 0) else f"{day}, {when:%H:%M} UTC"


def capture_title(url: str, stamp: str | None, *, clamped: bool = False) -> str:
    """A capture as a person reads it: its URL (left to right, its bidirectional controls shown percent-encoded:
    :func:`shown_url`; wrapping after a ``/`` or before a ``.`` as a name does, :func:`breakable`), then when it
    was captured (``stamp``: ISO 8601, UTC). ``clamped``: the URL is drawn in two lines at most (the class
    ``clamped``, its whole in its tooltip, ``title``; still whole in the page, to a selection and a screen reader)."""
    when = f" <small>captured {shown_time(stamp)}</small>" if stamp else ""
    shown = shown_url(url)
    tip = f' title="{esc(shown)}"' if clamped else ""
    return (f'<span class="capture-title"><span class="url{" clamped" if clamped else ""}" dir="ltr"{tip}>'
            f"{breakable(shown)}</span>{when}</span>")


#: The most characters of a name's part that :func:`breakable` keeps whole (``www``, ``example``, ``7.text.1``): a
#: DNS label has at most 63, and a URL's segment may have thousands.
LONG_PIECE = 40


#: A citation's ``@origin=`` before the name it quotes (PDI-GRAMMAR's citation-specifier; ``@`` is reserved, so a
#: unique id holds it %-escaped, and the first ``@`` of a name is its citation's).
_CITED = re.compile(r"@[^/@=#]*=(?:urn:)?pdi:", re.IGNORECASE)


def breakable(name: PDI | str) -> str:
    """A long name escaped, with a line-break opportunity (``<wbr>``) after each ``/`` and before each ``.``, ``#``
    and ``;``, so that a heading wraps it between its parts (``…/7.text.1`` | ``#line=5,6``), not inside one;
    a part longer than :data:`LONG_PIECE` characters breaks anywhere (``overflow-wrap:anywhere``, its ``span``'s
    class ``anywhere``), so that a table's column holding it is not made as wide as it. A PDI's last part, its unique id
    with its format and version (``7.text.1``, after the last ``/`` and before any ``#``), stands whole: a ``.`` or
    ``;`` there is no break (a heading read ``…/22/versions`` above ``.text.1``); so does each name's in a citation
    ``A@0=B`` (PDI-GRAMMAR's citation-specifier), which breaks before its ``@``. Its fragment stands whole on a line
    of its own where the line holds it (a ``span`` of class ``fragment``, an inline block: never ``#rect=(10,5),``
    above ``(30,25)``); one longer than the line breaks between its parts, before a ``;`` or after a ``&`` or the
    ``,`` after a coordinate pair, never inside a pair (``(40,`` above ``30)``)."""
    text = str(name)
    fragment = cited = len(text)
    whole: list[range] = []  # the last parts, kept whole: A's and B's in a citation A@origin=B, else the name's
    if text[:8].lower() == "urn:pdi:" or text[:4].lower() == "pdi:":
        fragment = text.find("#") if "#" in text else len(text)
        found = _CITED.search(text, 0, fragment)  # A@origin=B: the @ of a citation-specifier
        if found is not None:
            cited = found.start()
            whole.append(range(text.rfind("/", 0, cited) + 1, cited))
        whole.append(range(text.rfind("/", 0, fragment) + 1, fragment))
    pieces: list[str] = []
    start = 0
    for i, ch in enumerate(text[:fragment]):  # break before . # ; @ and after / (but not inside urn:pdi://)
        at = (i if (ch in ".#;" and not any(i in part for part in whole)) or i == cited
              else i + 1 if ch == "/" and text[i + 1:i + 2] != "/" and i > 0 else None)
        if at is not None and at > start:
            pieces.append(text[start:at])
            start = at
    pieces.append(text[start:fragment])
    # each piece escaped whole (no entity cut apart); one too long for a narrow column (a URL's 3,000 u's) breaks
    # anywhere in its span, and counts for nothing of the column's least width, where a short one stays whole
    made = "<wbr>".join(f'<span class="anywhere">{in_order(piece)}</span>' if len(piece) > LONG_PIECE
                        else in_order(piece) for piece in pieces if piece)
    if fragment == len(text):
        return made
    # the fragment's own breaks: before a ; (RFC 5147's ;length=), after a & (Media Fragments' t=…&xywh=…); the
    # browser's own after the , that ends a pair, "(10,5),|(30,25)", and none inside a pair
    parts = "&amp;<wbr>".join("<wbr>;".join(in_order(p) for p in part.split(";")) for part in text[fragment:].split("&"))
    long = " anywhere" if len(text) - fragment > LONG_PIECE else ""
    return f'{made}{"<wbr>" if made else ""}<span class="fragment{long}">{parts}</span>'


#: Where a name's last part may break inside itself: after an escaped ``/`` (``%2F``) of a URL that is its id (not
#: between two: ``https:%2F%2F``) and before an escaped ``.`` (``%2E``), as :func:`breakable` breaks a URL after a
#: ``/`` and before a ``.``; never at its format's and version's own dots (``.html.1``) nor inside an escape.
_ESCAPED_BREAK = re.compile(r"(?<=%2F)(?!%2F)(?=.)|(?<=.)(?=%2E)", re.IGNORECASE)


def name_in_pieces(shown: str) -> str:
    """A name (``urn:pdi://…/3.text.1``) or its last part (``3.text.1#char=4,14``) escaped, breakable where a
    name's parts meet and nowhere inside a part: before its fragment's ``#``; up to its last ``/`` as
    :func:`breakable` breaks it (after a ``/``, before a ``.``); in its last part, never at the dots of ``3.text.1``
    (a narrow column broke it into ``3.te`` and ``xt.1``), but when the part is a URL (a capture's id, 80
    characters and more) after each of its escaped slashes and before each escaped dot (:data:`_ESCAPED_BREAK`;
    never inside an escape: ``%2`` above ``Eexample``). Each such piece is whole where the line holds it (an
    inline block of class ``piece``, as a name's fragment is: never ``appeal-`` above ``4211``); a piece or a
    fragment longer than :data:`LONG_PIECE` breaks anywhere, as :func:`breakable` breaks a name's long part. Each
    break a ``<wbr>`` or a line's end, nothing put into the text: a copy of it is the name as written. Its box
    should not break anywhere itself (``overflow-wrap:normal`` or ``break-word``, not ``anywhere``), or a column
    holding it would be narrowed until a piece broke."""
    name, hash_, fragment = shown.partition("#")
    head, slash, last = name.rpartition("/")
    made = [breakable(head + slash)] if slash else []
    pieces = [piece for piece in _ESCAPED_BREAK.split(last) if piece]
    made += [f'<span class="anywhere">{esc(piece)}</span>' if len(piece) > LONG_PIECE
             else f'<span class="piece">{esc(piece)}</span>' if len(pieces) > 1 else esc(piece) for piece in pieces]
    if hash_:
        made.append(f'<span class="anywhere">{esc(hash_ + fragment)}</span>' if len(hash_ + fragment) > LONG_PIECE
                    else esc(hash_ + fragment))
    return "<wbr>".join(made)


def format_token(token: str) -> str:
    """A format token as a name spells it (``vnd%2Eopenxmlformats-officedocument%2Ewordprocessingml%2Edocument``,
    PDI-GRAMMAR.md §2.6) in a ``<code class="token">`` (escaped HTML): breakable where a name's last part is
    (:func:`name_in_pieces`: before each escaped ``.``, after each escaped ``/``), never inside a ``%XX`` escape
    (``…%2`` above ``Edocument`` in a document's Formats at 1,040 px); its box breaks a piece only where the piece is
    longer than its line (``overflow-wrap:break-word``), and a copy of it is the token as written."""
    return f'<code class="token">{name_in_pieces(token)}</code>'


def size_cell(count: int, *, label: str = "") -> str:
    """A table's cell of a size in bytes (under a heading "Bytes"): the exact count grouped by thousands, and from a
    KiB on its binary size under it, muted (:func:`pdi._wording.binary_size`: ``4,480,000`` over ``4.3 MiB``);
    ``label``: its column's heading, which a table of cards shows beside it on a phone (``data-label``). The count
    may break after each thousands separator (a ``<wbr>``, nothing put into it: it copies as written), so that a
    gigabyte's ``1,073,741,824`` beside ``application/octet-stream`` does not make a document's Formats wider than
    its page just above 64 rem, where it is a table, not cards."""
    approximately = binary_size(count)
    labelled = f' data-label="{esc(label)}"' if label else ""
    return f'<td class="number"{labelled}>{f"{count:,}".replace(",", ",<wbr>")}' + (f'<small class="binary">{approximately}</small>' if approximately else "") + "</td>"


#: The longest media type a table's cell keeps on one line on a screen wider than a phone's (``STYLE``'s
#: ``code.media.whole``): ``application/octet-stream``, about 14 rem; a longer one
#: (``application/vnd.oasis.opendocument.text``) wraps after its ``/`` and before each ``.``.
WHOLE_MEDIA_TYPE = 24


def shown_format(token: str) -> str:
    """A format token as a page shows a document's format to a reader (escaped HTML): the media type it stands for,
    as the document's page, the viewer's facts and a search's hits write it (``svg%2Bxml`` is ``image/svg+xml``,
    ``rfc822`` ``message/rfc822``; PDI-GRAMMAR.md §2.6): one of at most :data:`WHOLE_MEDIA_TYPE` characters on one
    line wider than a phone's (a table's column is not cut ``image/`` above ``svg+xml`` to make room for a SHA-256
    beside it), wrapping on a phone as it must; a longer one breakable after its ``/`` and before each ``.``; a
    multi-byte charset's token (text in it) ``text/plain`` and the charset, as the Formats table says it. A
    token the registry does not resolve is shown as it reads, its %-escapes decoded (``x-thing``)."""
    try:
        media_type, charset = formats.media_type_for(token), formats.charset_for(token)
    except UnsupportedError:
        return f'<code class="media">{esc(_decoded(token))}</code>'
    return shown_media_type(media_type) + (f' <small class="charset">{esc(charset)}</small>' if charset else "")


def shown_media_type(media_type: str) -> str:
    """A media type in a ``<code class="media">`` (escaped HTML): one of at most :data:`WHOLE_MEDIA_TYPE`
    characters whole on one line wider than a phone's (of class ``whole``: ``text/html``, not ``text/`` above
    ``html``), a longer one breakable after its ``/`` and before each ``.``."""
    if len(media_type) <= WHOLE_MEDIA_TYPE:  # no <wbr>: Chromium breaks a line at one even where it may not wrap
        return f'<code class="media whole">{esc(media_type)}</code>'
    return '<code class="media">' + esc(media_type).replace("/", "/<wbr>").replace(".", "<wbr>.") + "</code>"


def _decoded(token: str) -> str:
    """``token`` with its %-escapes decoded as UTF-8; as it is written where they are no UTF-8 or decode to what
    does not print (a control, a bidirectional override: :data:`BIDI_CONTROLS`)."""
    from urllib.parse import unquote

    if "%" not in token:
        return token
    try:
        decoded = unquote(token, errors="strict")
    except UnicodeDecodeError:
        return token
    return decoded if decoded.isprintable() and BIDI_CONTROLS.search(decoded) is None else token


def name_details(name: PDI | str, label: str = "name") -> str:
    """A name one click away: a ``<details>`` whose summary is ``label`` and which holds the name in ``<code>``."""
    return f'<details class="pdi-name"><summary>{esc(label)}</summary><code>{in_order(name)}</code></details>'


def header(*, query: str = "", name: str = "", resolve: bool = True) -> str:
    """The navigation bar: home, series, search (``/search?q=``) and resolve (``/view?pdi=``; not ``resolve``: a page
    that has a box of its own to resolve a name, the home page, has no second one above it)."""
    return (
        '<header class="site"><a class="skip" href="#main">Skip to the content</a><a class="brand" href="/">pdi</a>'
        '<nav aria-label="Site"><a href="/series">Series</a></nav>'
        '<form action="/search" method="get" role="search" aria-label="Site search">'
        f'<label for="site-q">Search</label><input id="site-q" name="q" type="search" size="24" dir="auto" value="{esc(query)}">'
        '<button type="submit">Search</button></form>'
        + ('<form action="/view" method="get">'
           f'<label for="site-pdi">Resolve</label><input id="site-pdi" name="pdi" size="32" dir="ltr" value="{esc(name)}"'
           ' placeholder="urn:pdi://…"><button type="submit">Go</button></form>' if resolve else "")
        + f"{who()}</header>"
    )


def who() -> str:
    """Who reads this page: "signed in as NAME (role, series)" and a sign-out button, or a "Sign in" link."""
    reader = current_reader.get()
    token = reader.token if reader is not None else None
    if token is None:
        back = request_target.get()
        link = "/signin" if back in ("/", "") or back.startswith("/signin") else f"/signin?next={quote(back, safe='')}"
        return f'<div class="who"><a href="{esc(link)}">Sign in</a></div>'
    scope = ", ".join(token.series) if token.series else "every series"
    shown = f'<span>signed in as <strong>{esc(token.name)}</strong> ({esc(token.role)}, {esc(scope)})</span>'
    if not by_cookie.get():  # a bearer token (a program reading pages): nothing to sign out of
        return f'<div class="who">{shown}</div>'
    return (f'<form class="who" action="/signout" method="post">{shown}'
            '<button type="submit">Sign out</button></form>')


#: Where a page's own content begins: the skip link's target (``#main``), so that Tab goes on from there.
MAIN = '<main id="main">'

#: Under every page: where the resolver's HTTP API is described (:mod:`pdi.server.pages.api_docs`).
FOOTER = (
    '<footer class="site"><nav aria-label="Reference"><a href="/api">API reference</a>'
    ' (<a href="/openapi.json">OpenAPI</a>) · <a href="/series">every series</a></nav></footer>'
)


#: What the Cite panel's status says while it shows the name a page was opened at (a passage, a region …), until
#: the reader selects something else: every viewer's (:mod:`pdi.server.pages.viewer`) and the replayed page's
#: (:mod:`pdi.server.pages.replay_frame`) alike.
OPENED = "Shown: the name this page was opened at. Select something else to name that instead."


#: With scripts off, what only a page's script makes work is not drawn (a button that would do nothing, a box only
#: the script fills): an element of class ``needs-script``. A ``noscript`` in the head may hold a style (HTML §4.12.2).
NO_SCRIPT_STYLE = "<noscript><style>.needs-script{display:none!important}</style></noscript>"


def scripted_or(scripted: str, plain: str) -> str:
    """Words of a page that has a script: ``scripted`` (what its controls do, named) with scripts on, ``plain`` (the
    same said of a fragment written by hand) without them, where those controls are not drawn (``needs-script``);
    both phrasing content, so a sentence may begin with either."""
    return f'<span class="needs-script">{scripted}</span><noscript>{plain}</noscript>'


def page(title: str, body: str, *, script: str = "", style: str = "", query: str = "", name: str = "",
         resolve: bool = True) -> str:
    """One whole HTML document: ``body`` (escaped HTML) under the site's header (its Resolve box left out when not
    ``resolve``: :func:`header`), ``script`` inline at the end; its ``<title>`` is ``title`` without bidirectional
    controls (:data:`BIDI_CONTROLS`: text, with no element to isolate them in, that a tab, the history and a
    bookmark show). Its links to the resolver's own paths are under the base URL's path
    (:func:`pdi.server.http.site.in_pages`; its script, whose hash its policy names, as it is), wherever the
    page was reached from."""
    return in_pages(
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="/favicon.svg" type="image/svg+xml">'
        f"<title>{esc(BIDI_CONTROLS.sub('', title))}</title><style>{STYLE}{style}</style>"
        + (NO_SCRIPT_STYLE if script else "") + "</head>"
        f"<body>{header(query=query, name=name, resolve=resolve)}{MAIN}{body}</main>{FOOTER}"
    ) + (f"<script>{script}</script>" if script else "") + "</body></html>\n"


def n2r_href(name: str) -> str:
    """The resolver's ``N2R`` of ``name`` (RFC 2169's query: the name %-escaped as a query), a page's link to its
    octets; escaped as an attribute's value by the caller."""
    from pdi.server.protocol.rfc2169 import (
        rfc2169_query,  # here: a page that links none never imports it
    )

    return "/uri-res/N2R?" + rfc2169_query(name)
