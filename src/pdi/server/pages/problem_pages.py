"""The reader's app's error pages: a name withdrawn (410), not the reader's to read (403) or not there (404).

Every page of the app that fails (``/view``, ``/thread``, the catalogue's
pages) answers one of these, in the app's layout, with the status of the
error's class (:mod:`pdi.errors`), never the home page with a line in red:

* ``410`` — the tombstone: what was here (the name, and each format of the
  version withdrawn, as the media type its token names, with its size and SHA-256 as the catalog recorded them,
  and the document's title), when, by whom and why it was withdrawn, and how
  to cite the tombstone itself (the name stays, resolving here, as a DOI's
  tombstone page at DataCite or a Perma.cc record does);
* ``403`` — the name is in a private series or under an embargo: how to sign
  in, the sign-in link going back to the very name the reader typed;
* ``404`` of a name that is here (the thread page of a name that is no
  e-mail): the name, linked, and that this page cannot show it;
* ``404`` — the nearest names the reader may see: the other versions and
  formats of the same document, else documents of the same series and day
  (one catalog page of at most :data:`NEAREST`); what a reader may not see
  is never suggested, so a hidden name's page and a name never minted's are
  the same (``tests/server/test_server_what_readers_learn.py``);
* anything else (a name that does not parse, ``400`` …; the archive's own
  fault, ``5xx``): headed in a reader's words (*Cannot show this: not written
  right*, *the archive cannot read it just now*, :data:`pdi.server.http.reader_words.HEADING_WORDS`; the
  problem's title, *syntax error*, *storage error*, is a program's), what was wrong, and
  what the reader may have meant (the name a resolver's address holds, the
  name without its sentence's full stop, a web address's captures, a search);
  past a limit of the viewer's (an image's pixels, a TIFF's pages), a link to
  the version's bytes whole (N2R), which the viewer does not draw.

An unknown path asked by a browser (``Accept`` naming ``text/html``) is a
``404`` page too (:func:`on_http_error`); the machine routes (``/api…``,
``/oai``, Memento's) and every other client keep the RFC 9457 problem
(:mod:`pdi.server.http.problems`).

RFC 2169's addresses (``/uri-res/N2R?NAME`` and the other services) are
printed in citations and followed in browsers: a refusal of one is one of
these pages to a request whose ``Accept`` prefers ``text/html`` to problem
JSON and JSON (:func:`prefers_page`), with the problem's status and header
fields (to a ``HEAD``, those header fields alone); to every other client
(``*/*``, JSON), the problem as ever. Either form names ``Accept`` in its ``Vary`` (RFC 9110 §12.5.5:
:func:`pages_for_citations`). A refusal is never kept in the resolver's cache
(:mod:`pdi.server.process.cache` keeps answers a name's bytes make).
"""

from __future__ import annotations

import dataclasses
import http
import json
import re
from collections.abc import Awaitable, Callable
from urllib.parse import quote

import anyio.to_thread
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from pdi import formats
from pdi._wording import clipped
from pdi.archive import Archive
from pdi.archive.access import current_reader
from pdi.errors import (
    AccessError,
    LimitError,
    NotFoundError,
    ParseError,
    PDIError,
    StoreError,
    WithdrawnError,
)
from pdi.identifier import PDI, hash_unescaped
from pdi.interop.accept import parse_accept, preference
from pdi.server.http.problems import Problem, note_store_error, status_of
from pdi.server.http.problems import on_http_error as problem_of_http_error
from pdi.server.http.reader_words import (
    STATUS_WORDS,
    heading_words,
    refusal_words,
)
from pdi.server.http.readers import request_target
from pdi.server.http.site import at, base_of
from pdi.server.pages.layout import (
    breakable,
    cited,
    day_in_words,
    esc,
    in_order,
    isolated,
    page,
    shown_format,
    shown_time,
    shown_url,
    size_cell,
)
from pdi.server.protocol.resolver import split_inflection
from pdi.server.protocol.rfc2169 import n2r_path, name_in_address, urn_from_query

#: The most names a 404 page suggests.
NEAREST = 12

#: Paths whose answers are for programs: their errors are RFC 9457 problems whatever ``Accept`` says, but
#: RFC 2169's (:data:`URI_RES`), whose refusals are a page to a browser (:func:`pages_for_citations`).
MACHINE_PATHS = ("/api/", "/uri-res/", "/oai", "/timegate/", "/timemap/", "/openapi.json", "/static/")

STYLE = """
.problem h1{margin-bottom:0.3rem} .problem .status{color:#444;font-size:0.95rem;margin-top:0}
.problem .status .code{color:#6b6b6b;font-size:0.8rem;white-space:nowrap}
dl.tombstone{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:0.3rem 1rem} dl.tombstone dd{margin:0}
dl.tombstone dd time{white-space:normal} dl.tombstone dd time span{white-space:nowrap}
blockquote.citation{border-left:4px solid #c8d3e0;margin:0.5rem 0;padding:0.4rem 0.8rem;background:#f6f8fa}
code.sha{font-size:0.78rem;word-break:break-all}
#withdrawn td time{white-space:normal} #withdrawn td time span{white-space:nowrap}
@media (min-width:60rem){#withdrawn code.sha{word-break:normal;overflow-wrap:normal}}
ul.nearest code{overflow-wrap:anywhere} .problem p.error{overflow-wrap:anywhere}
.problem p.error span.name{overflow-wrap:break-word}
@media (prefers-color-scheme:dark){.problem .status{color:#c8c8c8} .problem .status .code{color:#9a9a9a} blockquote.citation{border-left-color:#3e4a5a;background:#1c2026}}
"""


def status_line(status: int) -> str:
    """The line under an error page's heading: what ``status`` means in a reader's words (:data:`STATUS_WORDS`;
    a status without them, HTTP's own phrase), and the code itself, quieter, for the technical reader."""
    try:
        said = STATUS_WORDS.get(status) or http.HTTPStatus(status).phrase
    except ValueError:
        said = "Not answered"
    return f'<p class="status">{esc(said)} <span class="code">— HTTP {status}</span></p>'


def _breakable_time(stamp: str) -> str:
    """A catalog time as :func:`shown_time` says it, which may break between its day and its clock (in a table,
    so that a SHA-256 beside it stands whole on a desktop), never inside either."""
    day, _, clock = stamp.replace("T", " ").split(".")[0].rstrip("Z").partition(" ")
    return f'<time datetime="{esc(stamp)}"><span>{esc(day)}</span> <span>{esc(clock)} UTC</span></time>'


def _view(name: PDI | str) -> str:
    return f"/view?pdi={quote(str(name), safe='')}"


def _said(error: PDIError) -> str:
    """An error's message in a page, as an answer over HTTP says it (:meth:`~pdi.errors.PDIError.over_http`: a
    storage error without the server's places), begun as a :func:`sentence`: escaped, each `pdi …` command it
    quotes in backticks in <code> (only a command: a name may hold backticks of its own, which are shown as they
    are). A syntax error's without its grammar's ``(rule R, offset N)``, which its page says apart, in words
    (:func:`_where`), and smaller, as written (:func:`_in_the_grammar`)."""
    message = error.reason if isinstance(error, ParseError) else error.over_http()
    said = sentence(message)  # read as written, each piece escaped once found (not found in the escaped
    pieces = _QUOTED.split(said)  # text, whose &#x27; a name was read on through): a command, then the text after it
    return "".join(f"<code>{esc(piece)}</code>" if i % 2 else _named(piece) for i, piece in enumerate(pieces))


#: A PDI in an error's message (up to a space, a ``<`` or ``>``, or the punctuation ending its sentence or clause,
#: or the quote closing it: ``not 'urn:pdi://…'``, as ``{name!r}`` writes it).
_NAMED = re.compile(r"(?<![\w/])((?:urn:)?pdi:[^\s<>`]+?)(?=[.,:;)'\"]*(?:\s|$|[<>]))", re.IGNORECASE)


def _named(text: str) -> str:
    """``text`` escaped, each name in it wrapping between its parts (:func:`breakable`) and never inside its id,
    format and version (a phone's 404 read ``…/22/1.t`` above ``ext.1``), the text around it as it is."""
    out, at = [], 0
    for found in _NAMED.finditer(text):
        out.append(f'{esc(text[at:found.start()])}<span class="name" dir="ltr">{breakable(found.group(1))}</span>')
        at = found.end()
    out.append(esc(text[at:]))
    return "".join(out)


def sentence(message: str) -> str:
    """A message as a page's line begins it: with a capital when its first word is a word in lower case ("no
    message with the Message-ID …" is "No message …", as the pages' own lines begin, "There is no page at …");
    as written when a name, a media type, a command or a number begins it (``urn:pdi://…``, ``image/tiff:``).
    Messages begin in lower case for the command line, which prints them after ``pdi: ``."""
    first = message.split(" ", 1)[0]
    if " " in message and first.isascii() and first.isalpha() and first.islower():
        return message[0].upper() + message[1:]
    return message


#: A command quoted in backticks, as messages quote one.
_QUOTED = re.compile(r"""`(pdi [^`<>&"']+)`""")  # (no character the page escapes: as when it was found escaped)


def _parsed(name: str) -> PDI | None:
    try:
        return PDI.parse(name).without_fragment()
    except PDIError:
        return None


def _generic(parsed: PDI) -> PDI:
    return dataclasses.replace(parsed, format=None, version=None).canonical()


def _onward() -> str:
    return ('<p>Go on to <a href="/">the archive\'s home</a>, <a href="/series">the list of its series</a>, a'
            ' <a href="/search">search</a> of its text, or the <a href="/api">API reference</a>.</p>')


def _page(title: str, status: int, heading: str, body: str, name: str, *, named: bool = True) -> str:
    """An error page; its ``<title>`` (the tab, the history, a bookmark) names the name it is about, as the
    heading's page does (``Not found: urn:pdi://…``, not ``Not found`` for every name), unless ``named`` is false
    (a title that names it already); a stranger's long name clipped (:func:`pdi._wording.clipped`). Its one box to
    resolve a name is the header's, holding ``name`` as the reader typed it, to correct it there (a second box in
    the page, holding the same, was one too many)."""
    title = f"{title}: {clipped(name)}" if named and name else title
    return page(title, f'<div class="problem"><h1>{esc(heading)}</h1>{status_line(status)}{body}</div>',
                style=STYLE, name=name)


# --- 410: the tombstone -------------------------------------------------------------------------
def render_tombstone(archive: Archive, gone: WithdrawnError, name: str, base: str = "") -> str:
    """The tombstone of a withdrawn name: what was here, when and why it was withdrawn, how to cite it."""
    parsed = _parsed(name)
    shown = str(parsed) if parsed is not None else name
    rows, title = "", ""
    if parsed is not None:
        try:  # the reader passed the guards the withdrawal is asked after: the catalog's record is theirs to see
            detail = archive.document(str(_generic(parsed)))
            title = archive.meta(str(_generic(parsed))).get("title", "") or (
                archive.meta(shown).get("title", "") if parsed.format is not None else "")
        except PDIError:
            detail = None
        version = parsed.version if parsed.version is not None else 1
        token = formats.canonical_token(parsed.format) if parsed.format is not None else None
        records = [] if detail is None else [
            r for r in detail.records
            if (parsed.format is None or r.version == version)
        ]
        rows = "".join(
            f'<tr{" class=named" if token is not None and r.format == token else ""}>'
            # the format as the media type it is, as a day's table shows it; its token as a name spells it in the
            # tooltip (a reader who cites it again writes the name shown above, as it is)
            f'<td data-label="Version">{r.version}</td>'
            f'<td data-label="Format" title="{esc(f"format {r.format}")}">{shown_format(r.format)}</td>'
            f'{size_cell(r.size, label="Bytes")}<td data-label="SHA-256"><code class="sha">{esc(r.sha256)}</code></td>'
            f'<td data-label="Deposited">{_breakable_time(r.created_at)}</td></tr>'
            for r in records
        )
    what = _withdrawn_what(gone)
    purged = (" Its octets were deleted as well (a legal takedown): what they were is kept below, not they."
              if gone.purged else " The archive keeps its octets, but no longer gives them out.")
    table = (
        '<table class="catalogue cards" id="withdrawn"><caption>What was here, as the catalog recorded it</caption>'
        '<thead><tr><th scope="col">Version</th><th scope="col">Format</th><th scope="col" class="number">Bytes</th>'
        '<th scope="col">SHA-256</th><th scope="col">Deposited</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>" if rows else ""
    )
    link = f"{base}{_view(shown)}"
    cite_title = f"{isolated(title)}{_stop(title)} " if title else ""
    when = gone.at.split("T")[0]
    body = (
        f"<p><code>{breakable(shown)}</code> named a document of this archive. {what} {shown_time(gone.at)}.{purged}</p>"
        '<dl class="tombstone">'
        + (f"<dt>Title</dt><dd>{cited(title)}</dd>" if title else "")
        + f"<dt>Name</dt><dd><code>{breakable(shown)}</code></dd>"
        f"<dt>Withdrawn</dt><dd>{_breakable_time(gone.at)}</dd>"
        f"<dt>Why</dt><dd>{isolated(gone.reason)}</dd>"
        f"<dt>By</dt><dd>{isolated(gone.who)}</dd></dl>"
        f"{table}"
        '<h2 id="cite-tombstone">How to cite this tombstone</h2>'
        "<p>The name stays: it is never given to anything else, and it resolves here, to this record of"
        " what it named and why it was withdrawn. Cite it as you would have cited the document, saying it"
        " was withdrawn:</p>"
        f'<blockquote class="citation">{cite_title}<code>{breakable(shown)}</code>. Withdrawn {esc(when)}:'
        f' {isolated(gone.reason)}{_stop(gone.reason)} <span>{breakable(link)}</span></blockquote>'
        f'<p>The same record as JSON: <a href="/uri-res/N2C?{esc(quote(shown, safe=":/"))}">N2C</a> (RFC 2169).</p>'
        + _onward()
    )
    return _page(f"Withdrawn: {shown}", gone.http_status, "This name was withdrawn", body, name, named=False)


def _stop(text: str) -> str:
    """The full stop a citation's part (a title, a withdrawal's reason) is closed with, unless it ends a sentence
    already: ``Deposited in error.`` is not followed by a second ``.``, nor ``Who wrote it?`` by one (a closing
    quotation mark after its stop counts as the end too: ``"Withdrawn."``)."""
    return "" if text.rstrip().rstrip("\"'\u201d\u2019\u00bb").endswith((".", "!", "?", "\u2026")) else "."


def _withdrawn_what(gone: WithdrawnError) -> str:
    """What was withdrawn, as the archive's error says it (:func:`pdi.archive.base.gone`): a generic name names a
    document, not a version, so its tombstone never says "This version"."""
    said = str(gone)
    if "its document was" in said:
        return "Its whole document was withdrawn"
    if "its only version was" in said:
        return "Its only version was withdrawn"
    last = re.search(r"every version was withdrawn; version (\d+) was", said)
    if last is not None:
        return f"Every version was withdrawn, the last (version {last.group(1)})"
    return "This version was withdrawn"


# --- 403: sign in -------------------------------------------------------------------------------
def render_forbidden(error: AccessError, name: str) -> str:
    """How to read what a token is needed for: sign in (and come back to ``name``)."""
    back = request_target.get()
    link = "/signin" if back in ("/", "") else f"/signin?next={quote(back, safe='')}"
    reader = current_reader.get()
    token = reader.token if reader is not None else None
    signed = (
        f"<p>You are signed in as <strong>{esc(token.name)}</strong>, whose token does not cover it:"
        f' <a href="{esc(link)}">sign in with another token</a> that may read it.</p>'
        if token is not None else
        f'<p><a href="{esc(link)}">Sign in</a> with a token that may read it (its keeper, the archive\'s'
        " curator, gives one to those who may), and you come back here, to this same name.</p>"
    )
    until = error.details.get("embargoed_until")
    if isinstance(until, str):  # an embargo: when it ends first, in words (the catalog's time in the detail)
        day = day_in_words(until)
        asked = _parsed(name)  # a version asked for is under embargo whether the embargo is the version's or its
        what = "version" if asked is not None and asked.version is not None else "document"  # document's
        ends = (f'<p class="lead">This {what} is under embargo until {shown_time(until)}: from then on anyone may'
                " read it. Until then, only those with a token that may read it can.</p>")
        # the message's catalog time (2030-01-01T00:00:00.000000Z) as the page writes a time; the JSON keeps it
        said = _said(error).replace(esc(until), shown_time(until))
        body = f'{ends}<p class="error" role="alert">{said}.</p>{signed}{_onward()}'
        return _page(f"Under embargo until {day}", error.http_status, f"Under embargo until {day}", body, name)
    body = f'<p class="error" role="alert">{_said(error)}.</p>{signed}{_onward()}'
    return _page("Sign in to read this", error.http_status, "A token is needed to read this", body, name)


# --- 404: the nearest names ---------------------------------------------------------------------
def _nearest(archive: Archive, parsed: PDI) -> tuple[str, list[tuple[PDI, str]]]:
    """What to suggest for a name not found (:meth:`Archive.nearest`, as ``pdi get`` and ``/api/resolve`` say it):
    the other names of its document, else its day's documents, else those of the series' nearest days (at most
    :data:`NEAREST` a day, only those the reader may see); and what they are."""
    found = archive.nearest(parsed, limit=NEAREST)
    return found.heading, list(found.names)


def _held(archive: Archive, name: PDI) -> bool:
    """Whether ``name`` (without a fragment) is here for this reader."""
    try:
        archive.locate(str(name))
    except PDIError:
        return False
    return True


def _here(error: NotFoundError, name: str, held: PDI, said: str, then: str, heading: str, *, title: str = "") -> str:
    """The page of a name that is here (``held``, linked after ``said``) when what was asked of it is not."""
    body = (
        f'<p class="error" role="alert">{_said(error)}.</p>'
        f'<p>{said}: <a href="{esc(_view(held))}"><code>{esc(held)}</code></a>{then}</p>'
        f"{_onward()}"
    )
    return _page(title or heading, error.http_status, heading, body, name)


def render_not_found(archive: Archive, error: NotFoundError, name: str) -> str:
    """A name that is not here (or not the reader's to know of): what was wrong, and the nearest names."""
    parsed = _parsed(name) if name else None
    whole = _parsed(name.split("#", 1)[0]) if "#" in name else None  # a browser's #:~:text= is no PDI fragment
    if whole is not None and _held(archive, whole):
        # the document is here; what its fragment names (an element, a name, a page) is not in it
        return _here(error, name, whole, "The document is here", ". What the fragment after its <code>#</code>"
                     " names is not in it: check the fragment as it was cited.", "Not in this document")
    if parsed is not None and _held(archive, parsed):
        # the name is here; what the page asked of it is not (the thread of a name that is no e-mail): no
        # "check the name", no list of its own document's names suggesting the very name typed
        return _here(error, name, parsed, "The name is in the archive", "; this page cannot show it.",
                     "Not what this page shows", title="Not found")
    heading, names = _nearest(archive, parsed) if parsed is not None else ("", [])
    items = "".join(
        f'<li><a href="{esc(_view(n))}"><code>{esc(n)}</code></a>{" — " + isolated(t) if t else ""}</li>' for n, t in names
    )
    near = f'<h2 id="nearest">{esc(heading)}</h2><ul class="nearest">{items}</ul>' if items else ""
    # how to correct a name only where one was given (a thread asked for by its Message-ID names none)
    check = ("<p>Check the name as it was cited: a PDI names its series, the day it was first deposited, its"
             " number that day, its format and its version, and correct it in the Resolve box at the top of the page.</p>"
             if parsed is not None else "")
    body = f'<p class="error" role="alert">{_said(error)}.</p>{near}{check}{_onward()}'
    return _page("Not found", error.http_status, "Not in this archive", body, name)


# --- 503: known elsewhere, every resolver of it down; 508: its resolvers send it back and forth ----------
def render_unavailable(detail: str, name: str, status: int = 503) -> str:
    """A name of another archive's series whose every resolver is down now (:mod:`pdi.server.protocol.elsewhere`):
    not "not found", but "not reachable now, try again later"; ``508``: whose resolvers send it back and forth
    (:mod:`pdi.federation.routes`), for their operators to mend."""
    if status == 508:
        body = (f'<p class="error" role="alert" id="loop">This name is held elsewhere, but {esc(detail)}.</p>'
                "<p>Following them would only bring you back here: this is not sent on. The name is not lost"
                " for that: the archive that holds it can still be asked directly.</p>"
                f"{_onward()}")
        return _page("Loop detected", 508, "Its resolvers send it back and forth", body, name)
    body = (f'<p class="error" role="alert" id="unavailable">This name is held elsewhere, and {esc(detail)}.</p>'
            "<p>The name is not lost: its archive, or a mirror of it, can answer again. Reload this page in a"
            " while.</p>"
            f"{_onward()}")
    return _page("Unavailable", 503, "Its resolvers are down", body, name)


# --- every page's error -------------------------------------------------------------------------
def _whole(error: PDIError, name: str) -> str:
    """Past a limit of the viewer's (an image's pixels, a TIFF's pages, a recording's length …): a link to the
    version's octets whole, which N2R serves (RFC 2169) where the viewer will not draw them; nothing for another
    error, or a name that is not one version of a format."""
    parsed = _parsed(name) if isinstance(error, LimitError) else None
    if parsed is None or parsed.format is None or parsed.version is None or parsed.is_pattern:
        return ""
    return (f'<p class="whole">The viewer does not draw it, but its bytes are kept whole: <a href="{esc(n2r_path(parsed))}">'
            "the bytes, whole</a>, to save and open with a program of your own.</p>")


def render_problem(archive: Archive, error: PDIError, name: str = "", base: str = "") -> str:
    """The page of ``error`` met on a page about ``name`` (empty: a page about no one name)."""
    if isinstance(error, WithdrawnError):
        return render_tombstone(archive, error, name, base)
    if isinstance(error, AccessError):
        return render_forbidden(error, name)
    if isinstance(error, NotFoundError):
        return render_not_found(archive, error, name)
    hint = _hint(name) if isinstance(error, ParseError) else ""
    body = f"{explained(error, name)}{hint}{_whole(error, name)}{_onward()}"
    # said in a reader's words: "syntax error", "limit exceeded" are the problem's titles, a program's
    words = heading_words(error)
    return _page(words[0].upper() + words[1:], status_of(error), f"Cannot show this: {words}", body, name)


def explained(error: PDIError, name: str = "", given: str = "") -> str:
    """What is wrong, as an error page says it: its message (:func:`_said`) and, of a syntax error, where it is in
    words with what was given marked (:func:`_where`; ``name``: the name the page is about, ``given``: what else
    to call what was given, "the words searched for"), and its place in the grammar's words, smaller."""
    said = f'<p class="error" role="alert">{_said(error)}.</p>'
    if not isinstance(error, ParseError):
        return said
    return said + _where(error, name, given) + _in_the_grammar(error)


#: The parts of what a reader gives that a syntax error's ``rule`` names, in a reader's words: the rules of
#: PDI-GRAMMAR.md §1 (a name's), and those of the catalogue's addresses and parameters.
RULE_WORDS = {
    "pdi-urn": "the name's beginning, urn:pdi://", "resource-identifier": "the name's series, date and id",
    "document-series": "the series", "component": "a part of the series' name",
    "iso-country": "the series' country code", "iso-date": "the date", "date": "the date", "year": "the year",
    "month": "the month", "day": "the day", "specifier": "the id, format and version",
    "unique-id": "the id", "daily-serial-number": "the day's number", "encapsulated-unique-id": "the id",
    "format": "the format", "version": "the version", "fragment-specifier": "the fragment, after the #",
    "fragment-scheme": "the fragment's scheme", "ext-fragment-scheme": "the fragment's scheme",
    "position": "a position of the fragment", "position-specifier": "a position of the fragment",
    "element-name": "an element's name in the fragment", "2-dim-coordinate": "a point of the fragment",
    "x-coordinate": "a point's x of the fragment", "y-coordinate": "a point's y of the fragment",
    "citation": "the citation", "citation-specifier": "the citation, after the @",
    "origin-position": "the citation's position", "limit": "the limit= of the address",
    "page": "the page= of the address",
    "query": "the words searched for", "q": "the words searched for",
}

#: An ``element-name``'s words by the scheme of the fragment it is in (PDI-GRAMMAR.md §1: ``nameddest=``,
#: ``search=`` and ``name=`` hold names, as ``elt=`` does): a refused ``nameddest=Café`` is "in the named destination",
#: not "in an element's name" (found by a probe, 2026-12-01).
ELEMENT_NAME_WORDS = {"nameddest": "the named destination (nameddest=)", "search": "the words of search=",
                      "name": "the element name (name=)"}


def _part_words(error: ParseError) -> str | None:
    """The part of what was given a syntax error is in, in a reader's words (:data:`RULE_WORDS`, an element name's
    by its fragment's scheme: :data:`ELEMENT_NAME_WORDS`); ``None`` when the rule has none."""
    rule = error.rule or ""
    text, at = error.text, error.offset
    if rule == "element-name" and text is not None and at is not None:
        mark = text.rfind("#", 0, at)
        scheme, equals, _ = text[mark + 1 : at].partition("=")
        if mark >= 0 and equals and scheme.lower() in ELEMENT_NAME_WORDS:
            return ELEMENT_NAME_WORDS[scheme.lower()]
    return RULE_WORDS.get(rule)


#: The most characters either side of where a syntax error is that its page shows of what was given.
WHERE_AROUND = 60

#: What ends the part of a name a syntax error is in (PDI-GRAMMAR.md §1's reserved characters, and the parentheses
#: of a point): the part marked runs from where the error is to the first of them.
_PART_END = re.compile(r"[/.#,@=?+%*();&]")


def _where(error: ParseError, name: str = "", given: str = "") -> str:
    """Where a syntax error is, in words: in which part of what was given (:data:`RULE_WORDS`) and at which of its
    characters (counted from 1), and what was given (the name, ``name``; an address) with that part marked (at most
    :data:`WHERE_AROUND` characters either side of it, the rest said as ``…``); nothing when the error says neither."""
    part = _part_words(error)
    text, at = error.text, error.offset
    if text is None or at is None or not 0 <= at <= len(text):
        return f'<p class="where">Where: in {esc(part)}.</p>' if part else ""
    given = ("the name" if name and text.strip() == name.strip() else given or
             ("the address" if text[:1] == "/" else "what was given"))
    said = (f"in {esc(part)}, " if part and part != given else "") + (
        f"at character {at + 1:,} of {given}" if at < len(text) else f"at the end of {given}")
    if at == len(text) or _PART_END.match(text, at):  # the end, or a delimiter: itself
        end = min(len(text), at + 1)
    else:  # the part from there on, to its end
        found = _PART_END.search(text, at)
        end = min(len(text) if found is None else found.start(), at + WHERE_AROUND)
    first, last = max(0, at - WHERE_AROUND), min(len(text), end + WHERE_AROUND)
    marked = (f'<mark>{esc(shown_url(text[at:end]))}</mark>' if end > at
              else '<mark class="end" title="the end">‸</mark>')  # a caret: nothing is there
    shown = ("…" if first else "") + esc(shown_url(text[first:at])) + marked + esc(shown_url(text[end:last])) \
        + ("…" if last < len(text) else "")
    return f'<p class="where">Where: {said}:</p><p class="given"><code>{shown}</code></p>'


def _in_the_grammar(error: ParseError) -> str:
    """A syntax error's place as the grammar says it (its ``rule`` and ``offset``, counted from 0, as the problem's
    ``detail`` and ``pdi`` on the command line write them), smaller: for whoever reads the grammar or asks a
    program's help; nothing when the error names neither."""
    if not error.rule and error.offset is None:
        return ""
    rule = f"rule <code>{esc(error.rule)}</code>" if error.rule else ""
    offset = f"offset {error.offset} (counted from 0)" if error.offset is not None else ""
    return f'<p class="grammar"><small>In the grammar\'s words: {", ".join(p for p in (rule, offset) if p)}.</small></p>'


def _hint(name: str) -> str:
    """What a reader who typed ``name``, which is no PDI, may have meant: the name a resolver's address holds, a
    web address's captures, a search of words, a name cited at the end of a sentence with its punctuation, a name
    whose ``#`` is written ``%23`` as an N2R address writes it, or a
    name whose ``+`` became a space (a link read as a form turns ``+`` into a space)."""
    typed = name.strip()
    if typed.lower().startswith(("http://", "https://")):
        held = name_in_address(typed)
        if held is not None:
            name_part, browsers = held
            aside = (f" The <code>#{in_order(shown_url(browsers))}</code> after the address is no part of the name: a"
                     " browser reads it in what the address answers (in a plain text as RFC 5147 counts, each line end one"
                     " character), so it is left out here." if browsers else "")
            return (f'<p>This is a resolver\'s address of the PDI <a href="{esc(_view(name_part))}">'
                    f"<code>{in_order(name_part)}</code></a>: open the name itself.{aside}</p>")
        return (f'<p>This is a web address, not a PDI: see <a href="/captures?url={quote(typed, safe="")}">the'
                " archive's captures of it</a>.</p>")
    cited = _without_punctuation(typed)
    if cited is not None:
        return (f"<p>A PDI ends before the punctuation of the sentence it is cited in. Perhaps you meant"
                f' <a href="{esc(_view(cited))}"><code>{in_order(cited)}</code></a>.</p>')
    unescaped = hash_unescaped(typed)
    if unescaped is not None:
        return (f"<p>A PDI's passage follows a <code>#</code>; a resolver's address (<code>/uri-res/N2R?…</code>,"
                f" RFC 2169) has it written %23. Perhaps you meant <a href=\"{esc(_view(unescaped))}\">"
                f"<code>{in_order(unescaped)}</code></a>.</p>")
    if " " in typed and typed.lower().startswith("urn:pdi:"):
        mended = typed.replace(" ", "+")
        if _parsed(mended) is not None:
            return (f'<p>A PDI holds no space; a <code>+</code> in a link becomes one when it is read as a form'
                    f' (write it <code>%2B</code>). Perhaps you meant <a href="{esc(_view(mended))}">'
                    f"<code>{in_order(mended)}</code></a>.</p>")
    escaped = _escapes_decoded(typed)
    if escaped is not None:
        return (f"<p>A PDI's id writes the reserved characters it holds %-escaped: a web address's <code>/</code>"
                " and <code>.</code> as <code>%2F</code> and <code>%2E</code>, a Message-ID's <code>@</code> as"
                " <code>%40</code>; an address that carries the name (<code>/view?pdi=…</code>) reads them back as"
                " the characters themselves unless each <code>%</code> is written <code>%25</code> (<code>%2540</code>"
                " for a <code>%40</code>). Paste a name into the Resolve box, which writes it so. Perhaps you meant"
                f' <a href="{esc(_view(escaped))}"><code>{in_order(escaped)}</code></a>.</p>')
    if typed and not typed.lower().startswith(("urn:", "pdi:")):
        return (f'<p>A PDI begins <code>urn:pdi:</code>. To find documents by their words, <a href="/search?q='
                f'{quote(typed, safe="")}">search for them</a>.</p>')
    return ""


#: A name whose id holds what its grammar escapes: series, day, the id (lazily up to the last two dotted parts), format
#: and version, and a fragment.
_ID_UNESCAPED = re.compile(r"(urn:pdi://[^/]+/\d{4}/\d\d/\d\d/)(.+?)(\.[^./#]+\.\d+)(#.*)?", re.IGNORECASE | re.DOTALL)


#: The reserved characters (PDI-GRAMMAR.md §1, line 217) a query decodes back from an id's escapes, and those escapes;
#: not ``%`` (the id's other escapes, kept), ``#`` (the fragment's mark) nor ``+`` (a space to a form: the hint above).
_RESERVED_ESCAPES = {ord(c): f"%{ord(c):02X}" for c in "./,*@=?"}


def _escapes_decoded(typed: str) -> str | None:
    """The name ``typed`` was before an address's query decoded its id's escapes of reserved characters (an
    encapsulated URL's ``%2F`` and ``%2E``, a Message-ID's ``%40``: PDI-GRAMMAR.md §1), if writing them so again
    makes a name; else ``None`` (and for a citation, whose cited name holds ``pdi:``). Not read as that name: a
    ``@`` in a name is a citation's mark (line 168), and what the grammar refuses is answered with what it may have
    meant, never taken for it."""
    held = _ID_UNESCAPED.fullmatch(typed)
    if held is None or not any(ord(c) in _RESERVED_ESCAPES for c in held.group(2)) or "pdi:" in held.group(2).lower():
        return None
    mended = held.group(1) + held.group(2).translate(_RESERVED_ESCAPES) + held.group(3) + (held.group(4) or "")
    return mended if _parsed(mended) is not None else None


#: What follows a name cited in a sentence: its closing punctuation and quotation marks.
_SENTENCE_END = ".,;:!?)]}>\"'\u2019\u201d\u00bb\u2026"


def _without_punctuation(typed: str) -> str | None:
    """``typed`` (a PDI that does not parse) without the punctuation after it, when that is a PDI: a name cited at
    the end of a sentence and copied with its full stop (``…/1.text.1#char=5,9.``, ``…/1.text.1”).``). Characters
    are taken off one at a time, so a fragment's own ``)`` (``#rect=(1,2),(3,4)``) stays."""
    if not typed.lower().startswith(("urn:pdi:", "pdi:")):
        return None
    shorter = typed
    for _ in range(4):
        if not shorter or shorter[-1] not in _SENTENCE_END:
            return None
        shorter = shorter[:-1]
        if _parsed(shorter) is not None:
            return shorter
    return None


def problem_page(archive: Archive, error: PDIError, name: str = "", base: str = "") -> HTMLResponse:
    """:func:`render_problem` answered with the status of the error's class (a page's request sends no content:
    not ``415``, :func:`~pdi.server.http.problems.status_of`); a storage error's message, which the page leaves
    out, said in the server's log, as the problems' handler says it."""
    if isinstance(error, StoreError):
        note_store_error(None, f"the page of {request_target.get()}", error)
    return HTMLResponse(render_problem(archive, error, name, base), status_code=status_of(error))


def wants_page(request: Request) -> bool:
    """Whether an error here is answered as a page: a browser's request (``Accept`` names ``text/html``)
    of a path of the reader's app, not of a machine route."""
    path = request.url.path
    return "text/html" in request.headers.get("accept", "") and not path.startswith(MACHINE_PATHS) and path != "/api"


async def on_http_error(request: Request, exc: Exception) -> Response:
    """Starlette's ``HTTPException``: a ``404`` page for a browser on an unknown path of the app, else the problem."""
    assert isinstance(exc, HTTPException)
    if exc.status_code != 404 or not wants_page(request):
        return await problem_of_http_error(request, exc)
    body = f'<p class="error" role="alert">There is no page at <code>{in_order(shown_url(at(request.url.path)))}</code>.</p>{_onward()}'
    return HTMLResponse(_page("No such page", 404, "No such page", body, ""), status_code=404)


# --- RFC 2169's refusals, to a browser ----------------------------------------------------------
#: The RFC 2169 paths (``/uri-res/N2R?NAME`` …): printed in citations, followed in browsers.
URI_RES = "/uri-res/"

#: The problem's media types: a page only to an ``Accept`` that weighs ``text/html`` above both.
_PROBLEM_TYPES = ("application/problem+json", "application/json")

_Handler = Callable[[Request, Exception], Awaitable[Response]]


def prefers_page(request: Request) -> bool:
    """Whether a refusal is answered as a page: a ``GET`` or ``HEAD`` whose ``Accept`` weighs ``text/html`` above both
    ``application/problem+json`` and ``application/json`` (RFC 9110 §12.5.1: each type's weight is its most
    specific range's, :func:`pdi.interop.accept.preference`; a browser following a link: Chromium's
    ``text/html,…,*/*;q=0.8``). No ``Accept``, ``*/*``, a JSON client, one that weighs HTML no higher than JSON
    (``text/html, */*``: a tie, the problem's as before): the problem. A ``HEAD`` is answered as its ``GET``
    would be, its header fields the same (RFC 9110 §9.3.2), with no content."""
    if request.method not in ("GET", "HEAD"):
        return False
    ranges = parse_accept(request.headers.get("accept"))
    html = preference(ranges, "text/html")[0]
    return html > 0 and all(html > preference(ranges, kind)[0] for kind in _PROBLEM_TYPES)


def pages_for_citations(handler: _Handler) -> _Handler:
    """``handler``, but a refusal of an RFC 2169 path (:data:`URI_RES`) answered as the app's error page to a
    browser (:func:`prefers_page`), with the problem's status and header fields (``Allow``, ``Retry-After``,
    ``WWW-Authenticate``); either form names ``Accept`` in its ``Vary`` (RFC 9110 §12.5.5), so that no cache
    gives a reader's page to a program or a program's problem to a reader (a ``404`` is cacheable by default,
    RFC 9111 §4.2.2). A page that cannot be made (the catalog failing as it is read): the problem."""

    async def answer(request: Request, exc: Exception) -> Response:
        problem = await handler(request, exc)
        if not request.url.path.startswith(URI_RES) or problem.media_type != "application/problem+json":
            return problem
        problem.headers.add_vary_header("Accept")
        if not prefers_page(request):
            return problem
        archive: Archive = request.app.state.archive
        base = base_of(request)
        try:
            body = await anyio.to_thread.run_sync(
                _refusal_page, archive, exc, problem, _cited_name(request.url.query), base)
        except PDIError:
            return problem
        page = HTMLResponse(body, status_code=problem.status_code)
        for field, value in problem.headers.items():
            if field not in ("content-type", "content-length"):
                page.headers.append(field, value)
        return page

    return answer


def _cited_name(query: str) -> str:
    """The name an RFC 2169 query string holds (:func:`urn_from_query`), without an inflection (``?info``)."""
    name = urn_from_query(query)
    try:
        return split_inflection(name)[0]
    except ParseError:  # an inflection this resolver does not know: the name before it
        return name.partition("?")[0]


def _refusal_page(archive: Archive, exc: Exception, problem: Response, name: str, base: str) -> str:
    """The page of a refusal of an RFC 2169 path: an error of pdi's as the viewer's errors are
    (:func:`render_problem`); a name held elsewhere whose resolvers are down or loop, as the viewer says it
    (:func:`render_unavailable`); any other (a service not offered, a fragment wholly past the end, a path of no
    service, a bug) what its problem says (:func:`render_refused`)."""
    if isinstance(exc, PDIError):
        return render_problem(archive, exc, name, base)
    if isinstance(exc, Problem) and exc.status in (503, 508) and name:
        return render_unavailable(exc.detail, name, exc.status)
    said = json.loads(bytes(problem.body))
    title, detail = str(said.get("title", "")), str(said.get("detail", ""))
    return render_refused(archive if problem.status_code < 500 else None, problem.status_code, title, detail, name)


def render_refused(archive: Archive | None, status: int, title: str, detail: str, name: str) -> str:
    """The page of a refusal that is no error of pdi's (``title`` and ``detail`` its problem's): what it says, and
    the document a name without its fragment names when it is here (a fragment wholly past its end: ``416``);
    ``archive`` ``None``: nothing is read (a bug's ``500``)."""
    parsed = _parsed(name) if name and archive is not None else None
    held = ""
    if archive is not None and parsed is not None and _held(archive, parsed):
        held = f'<p>The document is here: <a href="{esc(_view(parsed))}"><code>{esc(parsed)}</code></a>.</p>'
    stop = "" if detail.endswith((".", "!", "?")) else "."
    body = f'<p class="error" role="alert">{esc(sentence(detail))}{stop}</p>{held}{_onward()}'
    words = refusal_words(status, title)  # not HTTP's phrase, the problem's title
    return _page(words[0].upper() + words[1:], status, f"Cannot show this: {words}", body, name)
