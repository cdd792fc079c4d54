"""The resolver's web viewer: read a passage, select another, get its citable name.

``/view?pdi=NAME`` resolves the whole representation NAME names. A text (and
the source of an HTML or XML document: ``char`` positions count its source)
is shown in a ``<pre>``, the passage NAME's ``char`` or ``line`` fragment
selects marked and scrolled into view (without scripts, a link above the
text, ``#passage``, goes to it). The page shows the text with LF line
endings (a browser's HTML parser would turn CR LF into LF anyway); its
script (:mod:`pdi.server.pages.viewer_script`) counts a selection's ends the way
the PDI ``char`` scheme does (code points of the CRLF-canonical text: a line
break is CR and LF, two characters) and, for ``text/plain``, the way RFC 5147
does (a line ending is one character), with the whole entity's ``length``
and ``md5`` checks computed here (:mod:`pdi.server.pages.cite`).

Images are shown with the region of a ``rect`` or ``crop`` fragment
outlined, a box to drag (or corners to type) and, for an image of several
frames, a frame chooser; sound with a player, its waveform to select a
stretch on (or a start and an end to type) and a button that plays the
selection; a video with a player fed by N2R, a timeline to mark in and out
on (the sound's code) and a box to drag on a paused frame (the image's code),
a cited clip or region said in words and marked. Every name the page offers sits in a panel whose space is
reserved from the start (nothing moves when a name appears), with a copy
button, and is shown only once the script has resolved it and found that it
names what was selected (the text, the region, the samples). A page opened at
a name whose fragment it marks shows that name there at once, as the page
resolved it (the panel's ``data-cited``: :func:`opened_name`), its other forms
checked as a selection's are, until the reader selects something else.

One selection, one citable name: the PDI is shown; the other forms of the
same selection sit under a closed "Other forms" with a sentence on why
their numbers differ (:data:`FORM_LABELS`: RFC 5147's URL of a plain text,
a PDI with a browser's ``#:~:text=``, ``#xywh=`` or ``#t=``, and the W3C
selectors of its annotation). Each is offered only once the resolver reads
it back to the same passage (an alias resolved to the PDI, an annotation
imported back to it); where none can say it, its box says why. A text is
reached by Tab: the arrow keys move a caret the script draws, Shift
extends the selection, and Enter (or the button *Cite the selection*)
names it, said in the panel's live status.

The page of a version shows the document's title (its ``title``
statement, once: not again above the facts when they list the same title as
the version's own) and, on a version that is not the latest, a banner saying so
with a link to the latest. A generic name (no format) shows the document's page
(:func:`pdi.server.pages.document_page.render_document`): every version with when it was
deposited and a link to each of its formats, their sizes, SHA-256 and fixity,
and the statements made about it. A page of one format links to it. A fragment that
reaches or lies wholly past the end is said so above the document. Anything
else is shown as a link to its bytes (RFC 2169 ``N2R``).

No page holds more than :data:`MAX_READ` octets of a document: a larger image
or sound is read from its header (and a waveform's few samples a column) by
verified chunks, and any other larger one is shown by its facts and a note. Everything is
escaped; the page loads nothing from elsewhere.
"""

from __future__ import annotations

import dataclasses
import html
import re
from typing import TYPE_CHECKING
from urllib.parse import quote

from pdi import formats
from pdi._wording import byte_size, clipped
from pdi.archive import Archive, Generic, Resolved
from pdi.archive.store import RepresentationRecord
from pdi.errors import LimitError, ParseError
from pdi.fragments import past_end_message
from pdi.identifier import PDI
from pdi.server.http.site import at
from pdi.server.pages.catalogue import view_path
from pdi.server.pages.cite import (
    MAX_RFC5147,
    RFC5147Facts,
    rfc5147_facts,
)
from pdi.server.pages.cite_panel import cite_panel, opened_name
from pdi.server.pages.document_page import (
    access_note,
    document_title,
    record_generic,
    render_document,
    tab_title,
)
from pdi.server.pages.layout import (
    COUNTING_LINK,
    breakable,
    capture_title,
    captured_url,
    cited,
    n2r_href,
    name_details,
    page,
    script_source,
    statement_value,
)
from pdi.server.pages.media_view import image_view, sound_view, video_view
from pdi.server.pages.viewer_script import SCRIPT

if TYPE_CHECKING:
    from pdi.interop.aliases import Alias
    from pdi.mail.message import Mail
    from pdi.server.pages.body_pages import BodyPage

#: The longest text the viewer shows in one page (characters); longer ones are cut by fragment only.
MAX_VIEW = 16 << 20

#: A text of more octets than this is shown as a window: the passage a fragment
#: names (or the text's beginning) with :data:`CONTEXT` characters on each side.
WINDOW_FROM = 1 << 20

#: The largest document (octets) the viewer reads whole to show it, other than a text (shown by windows), a PDF and
#: a video (fetched by the reader's browser). A larger image or sound is shown from its header and the few chunks
#: its waveform samples, read by verified chunks (:class:`pdi.archive.blobs.VerifiedOctets`); any other larger one
#: (an e-mail, an aggregate, a file of another kind) by its facts and a link to its octets. Each page a stranger asks
#: for so holds at most this much of a document, whatever its size.
MAX_READ = 32 << 20

#: Characters of context shown on each side of a passage in a window.
CONTEXT = 20_000

#: The longest passage a window marks whole (characters); a longer one is shown from its start.
MAX_PASSAGE = 1 << 20


_STYLE = """
.cite{margin:0.8rem 0;padding:0.5rem 0.7rem;border:1px solid #d5dbe3;border-radius:4px;background:#f6f8fb}
.cite .hint{margin:0 0 0.3rem}
#passage{scroll-margin-top:3em}
.offer{display:grid;grid-template-columns:5.5rem 1fr auto 4.5rem;gap:0.4rem;align-items:center;margin:0.25rem 0}
.offer input{width:100%;box-sizing:border-box;font-size:0.9rem;padding:0.3rem}
.offer .open:not([href]){visibility:hidden}
.other-forms{margin:0.3rem 0} .other-forms summary{cursor:pointer;font-size:0.9rem}
.other-forms .why{font-size:0.85rem;margin:0.3rem 0;max-width:62rem}
.other-forms .offer{grid-template-columns:8rem 1fr auto 4.5rem}
.cite-keys{margin:0.2rem 0 0.4rem;font-size:0.85rem}
#text:focus-visible{outline:3px solid #0050c8;outline-offset:2px}
#text{unicode-bidi:plaintext;text-align:start}
@media (max-width:40rem){.offer,.other-forms .offer{grid-template-columns:1fr auto auto;row-gap:0.1rem}
 .offer label{grid-column:1/-1}}
.caret{position:absolute;width:2px;background:#c00000;pointer-events:none;z-index:6}
#cite-status{margin:0.3rem 0 0;min-height:1.45em;overflow-wrap:anywhere;font-size:0.9rem}
#cite-status.idle{color:#595959}
@media (max-width:40rem){#cite-status{min-height:4.35em}}
.figure{touch-action:none;cursor:crosshair;user-select:none;overflow:hidden} .figure img.pixelated{image-rendering:pixelated}
.figure .box.selection{outline:2px dashed #0050c8;box-shadow:none;background:rgba(0,80,200,.12)}
fieldset.coords{display:flex;flex-wrap:wrap;gap:0.3rem 1rem;border:1px solid #d5dbe3;margin:0.6rem 0}
fieldset.coords input{width:5.5rem}
/* a region's corners in two rows, x1 y1 over x2 y2, the x's and the y's in columns (never y2 alone on a line) */
fieldset.coords .corners{display:grid;grid-template-columns:auto auto;gap:0.3rem 1rem;justify-content:start}
.wave{position:relative;height:140px;border:1px solid #ccc;background:#fcfcfa;touch-action:none;cursor:crosshair;user-select:none}
.wave canvas{width:100%;height:100%;display:block;color:#3d5a80}
.wave .band{position:absolute;top:0;bottom:0;background:rgba(255,200,0,.35);outline:2px solid #c98a00}
.wave .band.cited{background:rgba(224,0,0,.15);outline:2px solid #e00}
.wave.timeline{height:36px} .wave .playhead{position:absolute;top:0;bottom:0;width:2px;background:#333;pointer-events:none}
.figure.video{position:relative;display:inline-block;max-width:100%} .figure.video video{display:block;background:#000;max-width:100%;height:auto}
.figure.video:not(.box-mode){cursor:auto} .figure .box{pointer-events:none}
#video-box-mode[aria-pressed=true]{background:#0050c8;color:#fff} .clip{font-weight:600}
.pdf{display:flex;flex-direction:column;align-items:center;gap:12px;padding:12px 0;background:#e4e7eb}
.pdf-page{position:relative;overflow:hidden;background:#fff;box-shadow:0 1px 4px rgba(0,0,0,.3);max-width:100%}
.pdf-page canvas{position:absolute;left:0;top:0}
.pdf-page .folio{position:absolute;right:6px;top:4px;font-size:0.75rem;color:#595959}
.pdf-text{position:absolute;inset:0;line-height:1;z-index:2}
.pdf-text span{position:absolute;color:transparent;white-space:pre;cursor:text;transform-origin:0 0;font-family:sans-serif;line-height:1}
.pdf-text span::selection{background:rgba(0,80,200,.3);color:transparent}
.pdf-marks{position:absolute;inset:0;z-index:1;pointer-events:none}
.pdf-marks .hl{position:absolute;background:rgba(255,200,0,.45);outline:1px solid #c98a00}
.pdf-page .box{z-index:3;pointer-events:none}
.pdf.box-mode .pdf-text{pointer-events:none} .pdf.box-mode .pdf-page{cursor:crosshair;touch-action:none;user-select:none}
.pdf-page .box.selection{outline:2px dashed #0050c8;box-shadow:none;background:rgba(0,80,200,.12)}
#pdf-box-mode[aria-pressed=true]{background:#0050c8;color:#fff} .pdf-loading{color:#555;margin:1rem}
body:has(#pdf) .cite{position:sticky;top:0;z-index:5;box-shadow:0 2px 6px rgba(0,0,0,.15)} body:has(#pdf) .cite .hint{font-size:0.85rem}
.pdf-tools{margin:0.3rem 0} body:has(#pdf) .cite .pdf-tools{margin-bottom:0} body:has(#pdf) #cite-status:empty{min-height:0;margin:0}
.pdf-page,.pdf-marks .hl,.pdf-page .box{scroll-margin-top:var(--cite-room,13rem)}
@media (max-width:40rem){body:has(#pdf) .cite{position:static;box-shadow:none}
 .pdf-page,.pdf-marks .hl,.pdf-page .box{scroll-margin-top:1rem}}
@media (prefers-color-scheme:dark){
.figure{outline:1px solid #4a4f57} .cite{border-color:#3e4a5a;background:#1c2128} #cite-status.idle{color:#a9b1bc} #text:focus-visible{outline-color:#7fb0ff} .caret{background:#ff6060}
.figure .box.selection,.pdf-page .box.selection{outline-color:#7fb0ff;background:rgba(127,176,255,.15)}
fieldset.coords{border-color:#3e4a5a} .wave{border-color:#4a4f57;background:#1a1d22} .wave canvas{color:#8fb3e0}
.wave .band.cited{background:rgba(255,80,80,.2);outline-color:#ff5050} .wave .playhead{background:#e6e6e6}
.pdf{background:#2a2e34} .pdf-page{box-shadow:0 1px 4px rgba(0,0,0,.6)} .pdf-loading{color:#b0b0b0}
body:has(#pdf) .cite{box-shadow:0 2px 6px rgba(0,0,0,.5)}
}
"""

#: Where pdf.js is served (:mod:`pdi.server.pages.pdfjs`): the one place on pdi's own origin the viewer loads
#: scripts from.
PDFJS_PATH = "/static/pdfjs/"
#: A request's origin as a CSP host-source may name it (CSP 3 §2.3.1): ``http(s)://`` a host name, an IPv4 or a
#: bracketed IPv6 address, a port; nothing a ``Host`` field could carry into the policy's grammar.
_ORIGIN = re.compile(r"https?://(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


def view_policy(origin: str) -> str:
    """The viewer's pages' Content-Security-Policy, for a page of ``origin`` (``scheme://host[:port]`` as the
    reader's browser asked it). Scripts are its one inline script (by its SHA-256) and pdf.js's modules and
    worker, from :data:`PDFJS_PATH` of that origin alone (under the base URL's path, :func:`~pdi.server.http.site.at`): not ``'self'``, under which ``N2R`` serves whatever
    script a depositor stored, so that markup let into the page could not run one. Everything else it loads (the
    PDF, the pages' boxes, images, sound) comes from the same origin; no plug-in, no base, no other site may frame
    it. Inline styles stay allowed (the page's own, and the boxes a script places). An origin that is not one
    (a ``Host`` field of other characters) gets ``'self'``, as before."""
    scripts = f"{origin}{at(PDFJS_PATH)}" if _ORIGIN.fullmatch(origin) else "'self'"
    return (
        "default-src 'self'; "
        f"script-src {scripts} {script_source(SCRIPT)}; "
        f"worker-src {scripts}; connect-src 'self'; img-src 'self' data: blob:; media-src 'self'; "
        "style-src 'self' 'unsafe-inline'; font-src 'self' data:; object-src 'none'; base-uri 'none'; "
        "form-action 'self'; frame-ancestors 'self'"
    )

def _page(title: str, body: str, script: str = "", *, name: str) -> str:
    """A viewer's page: the header's *Resolve* box holds ``name``, the name the page shows (its one box to resolve
    a name: the reader corrects it there, or adds a fragment to it)."""
    return page(title, body, script=script, style=_STYLE if script else "", name=name)


def render_view(
    archive: Archive, name: str, alias: Alias | None = None, *, replayed: bool = False, page: int | None = None
) -> str:
    """The page for ``name``: the whole representation, what its fragment selects marked.

    A browser's fragment (``#t=``, ``#xywh=``, ``#:~:text=``) is read as the native name it equals, as
    ``pdi get`` and N2R read it (:mod:`pdi.interop.aliases`), and the page says which (``alias``: already read).
    ``replayed``: this is the source of a page the resolver replays (``&view=source``), which it links back to.
    ``page``: the page of an e-mail message's body to show (``&page=N``, from 1; :mod:`pdi.server.pages.body_pages`);
    given for any other document, a :class:`~pdi.errors.ParseError` (only a message's body is shown by pages).
    """
    from pdi.interop.aliases import alias_fragment, native_names

    translated = ""
    if alias is None and alias_fragment(name) is not None:
        alias = native_names(archive, name)
    if alias is not None:
        native = str(alias.native)
        translated = (
            f'<p class="note" id="alias">The browser fragment <code>#{html.escape(alias.fragment)}</code> is'
            f" <code>#{html.escape(native.split('#', 1)[1])}</code> of this name"
            + "".join(f"; {html.escape(n)}" for n in alias.notes) + ".</p>"
        )
        name = native
    parsed = PDI.parse(name)
    whole_name = parsed.without_fragment()
    located = archive.locate(whole_name)
    if page is not None and (isinstance(located, Generic) or located.record.media_type != "message/rfc822"):
        shown_as = "a document's page" if isinstance(located, Generic) else located.record.media_type
        raise ParseError(f"page={page} pages the body of an e-mail message; {whole_name} is {shown_as}, shown whole:"
                         " leave page= out", rule="page")
    if isinstance(located, Generic):
        return render_document(archive, located, name)
    record = located.record
    family = formats.media_family(record.media_type)
    windowed = family in ("text", "html", "xml") and record.size > WINDOW_FROM
    pdf = record.media_type == "application/pdf"
    video = record.media_type.startswith("video/")
    large_mail = record.media_type == "message/rfc822" and _unheld(record.size)
    mail: Mail | None = None
    if pdf:  # pdf.js fetches the PDF itself: only a fragment is evaluated here (from the layer kept at deposit)
        whole = located
        selected = archive.resolve(name) if parsed.fragment is not None else None
        assert not isinstance(selected, Generic)
    elif video:  # the player fetches the video itself (N2R, by Range): it is never read here
        whole = located
        selected = None
        if parsed.fragment is not None and parsed.fragment.effective_scheme(record.format) in ("sec", "msec"):
            # a time fragment: read from what ffprobe read at deposit (its index), no octet of the video
            selected = archive.select(located, parsed.fragment, index=archive.fragment_index(record))
        elif parsed.fragment is not None:
            # a region of a frame is decoded by ffmpeg (resolve), as N2R answers it: a time past the last
            # frame is not found; octets (byte) are cut from the video
            resolved = archive.resolve(name)
            assert not isinstance(resolved, Generic)
            selected = resolved
    elif large_mail:  # read by its structure, by verified chunks, never whole (pdi.mail.large)
        whole = located
        # a part's name is found in the message read for its page; a passage first, its body's text let go before
        # the message is read for its page (the two not held at once)
        passage = parsed.fragment is not None and parsed.fragment.effective_scheme(record.format) != "part"
        mail = None if passage else archive.large_message(located)
        selected = _selected_in_large_message(archive, located, parsed, mail, name)
        if mail is None:
            mail = archive.large_message(located)
    elif windowed:
        whole = located  # never read whole: a window of it is cut by fragment
        selected = archive.resolve(name) if parsed.fragment is not None else None
        assert not isinstance(selected, Generic)
    elif record.size <= MAX_READ:
        whole = archive.read(located)
        # the fragment is cut from the bytes just read: they are not read and hashed twice
        selected = archive.select(whole, parsed.fragment) if parsed.fragment is not None else None
    else:  # never read whole: an image's or a sound's facts from its header, any other shown by its facts alone
        whole = located
        selected = _selected_unread(archive, located, parsed)
    meta = archive.meta(str(whole.pdi))
    facts = "".join(
        f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>"
        for k, v in [("media type", record.media_type), ("size", byte_size(record.size)), ("SHA-256", record.sha256)]
    ) + "".join(f"<dt>{html.escape(k)}</dt><dd>{statement_value(v)}</dd>" for k, v in meta.items())  # a depositor's
    if archive.index_pending_of(record):  # resolvable at once; its passages are the indexer's still
        facts += (
            '<dt>full text</dt><dd class="pending"><span role="status">index pending: deposited and resolvable,'
            " but the indexer has not read its text yet, so a search does not find it</span></dd>"
        )
    chosen = selected.fragment if selected is not None else None
    note = (
        f'<p class="note">{html.escape(past_end_message(selected.pdi, chosen))}.</p>'  # the document's extent, as pdi get
        if selected is not None and chosen is not None and chosen.past_end
        else '<p class="note">The fragment reaches past the end: it is cut there.</p>'
        if chosen is not None and chosen.clamped
        else ""
    )
    titled = document_title(archive, record, str(whole.pdi), meta)
    tab = tab_title(titled, parsed)
    own = dataclasses.replace(parsed, citation=None)
    above = None if meta.get("title") == titled else titled  # the title once: the facts list this version's own
    below = (  # what follows the heading (a message's page heads it with its Subject: _message_page)
        f"{_version_banner(archive, record, above)}{access_note(archive, whole.pdi)}"
        f"{translated}{note}<dl>{facts}</dl>"
        # of a citation's name (A@position=B), A's: N2R and /api/resolve take none (/api/cite checks one)
        f'<p><a href="{html.escape(n2r_href(str(own)))}">the bytes</a> · '
        f'<a href="/api/resolve?pdi={quote(str(own), safe="")}">JSON</a> · '
        f'<a href="/view?pdi={quote(str(record_generic(record)), safe="")}">the document</a>'
        + (f' · <a href="/view?pdi={quote(str(parsed), safe="")}">the page</a>'
           if replayed and (family == "html" or record.media_type.startswith("multipart/")) else "")
        + "</p>"
    )
    head = _heading(parsed, record) + below
    if pdf:
        from pdi.server.pages.pdf_view import HINT, TEXT_HINT, render_pdf

        def panel(marked: bool, regions: bool) -> str:
            return cite_panel(HINT if regions else TEXT_HINT, forms=("annotation",), why=_WHY_PDF, idle="",
                               written="<code>#char=a,b</code>"
                                       + (", <code>#rect=(x1,y1),(x2,y2),f</code>" if regions else ""),
                               cited=opened_name(name, selected, marked))

        return _page(tab, head + render_pdf(archive, whole, selected, panel), SCRIPT, name=name)
    if windowed and record.media_type != "message/rfc822":
        return _window_page(archive, whole, selected, head, tab, name)
    audio = family == "timed" and whole.media_type.startswith("audio/")
    if not whole.data and record.size > MAX_READ and not (pdf or video or family == "image" or audio or large_mail):
        return _page(tab, head + _not_read(whole, parsed), name=name)
    if record.media_type == "message/rfc822":
        if windowed and mail is None:
            whole = archive.read(located)
        return _message_page(whole, selected, below, tab, name, mail, _part_words(archive, selected, mail),
                             parsed=parsed, titled=titled, number=page)
    if family in ("text", "html", "xml"):
        return _text_page(archive, whole, selected, head, tab, name)
    if family == "image":
        return _page(tab, head + image_view(archive, whole, selected, name), SCRIPT, name=name)
    if audio:
        return _page(tab, head + sound_view(archive, whole, selected, name), SCRIPT, name=name)
    if video:
        return _page(tab, head + video_view(archive, whole, selected, name), SCRIPT, name=name)
    return _page(tab, head, name=name)


def _unheld(size: int) -> bool:
    """Whether a message of ``size`` octets is read by its structure, never held (:func:`pdi.mail.large.unheld`);
    a smaller one is read, then whole or by its structure as :func:`pdi.mail.large.by_structure` says."""
    from pdi.mail.large import unheld

    return unheld(size)


def _part_words(archive: Archive, selected: Resolved | None, mail: Mail | None) -> tuple[bytes, int] | None:
    """The first octets of the part a message's ``#part=N`` names, when it is text, and its size (transfer encoding
    removed): from the octets resolved, or of a message read by its structure (``mail``) the first
    :data:`~pdi.server.pages.mail_pages.MAX_PART_TEXT` and one decoded from its verified chunks, never the whole
    part (:meth:`Archive.locate_message_part`); ``None`` for any other name or part."""
    from pdi.server.pages.mail_pages import MAX_PART_TEXT, is_text_part

    chosen = selected.fragment if selected is not None else None
    if selected is None or chosen is None or chosen.scheme != "part" or not is_text_part(chosen.media_type):
        return None
    if mail is None:
        return bytes(selected.data[: MAX_PART_TEXT + 1]), len(selected.data)
    streamed = archive.locate_message_part(selected)
    if streamed is None:
        return None
    return b"".join(streamed.range_pieces(0, min(streamed.size, MAX_PART_TEXT + 1))), streamed.size


def _selected_in_large_message(
    archive: Archive, located: Resolved, parsed: PDI, mail: Mail | None, name: str
) -> Resolved | None:
    """What the fragment of ``parsed`` selects in a message read by its structure (``mail``, read if not given): a
    part's number from its structure (its octets not decoded: the page marks it in the list and links to it), a
    passage of its body's text or a range of its octets as N2R answers them."""
    if parsed.fragment is None:
        return None
    if parsed.fragment.effective_scheme(located.record.format) == "part":
        from pdi.fragments.email import part_name, part_result

        mail = archive.large_message(located) if mail is None else mail
        found = mail.find_part(part_name(parsed.fragment.positions))
        # named as the fragment resolved is (the whole's canonical name, this fragment)
        return dataclasses.replace(located, pdi=dataclasses.replace(located.pdi, fragment=parsed.fragment),
                                   fragment=part_result(found, b"", 0))
    resolved = archive.resolve(name)
    assert not isinstance(resolved, Generic)
    return resolved


def _selected_unread(archive: Archive, located: Resolved, parsed: PDI) -> Resolved | None:
    """What the fragment of ``parsed`` selects in a document larger than :data:`MAX_READ`, never read whole: of an
    image the region, of a sound the stretch, read from its header by verified chunks
    (:func:`pdi.fragments.image.region_from_header`, :func:`pdi.fragments.audio.interval_from_header`); of any
    other nothing (``None``: its page says the fragment is not evaluated here)."""
    if parsed.fragment is None:
        return None
    family = formats.media_family(located.record.media_type)
    audio = family == "timed" and located.record.media_type.startswith("audio/")
    if family != "image" and not audio:
        return None
    from pdi.archive.blobs import VerifiedOctets
    from pdi.fragments.audio import interval_from_header
    from pdi.fragments.image import region_from_header

    scheme = parsed.fragment.effective_scheme(located.record.format)
    evaluate = region_from_header if family == "image" else interval_from_header
    with archive.open_located(located) as opened:
        result = evaluate(scheme, parsed.fragment.positions, VerifiedOctets(opened.reader), located.media_type)
    # named as the fragment cut from the bytes read is (the whole's canonical name, this fragment)
    return dataclasses.replace(located, pdi=dataclasses.replace(located.pdi, fragment=parsed.fragment), fragment=result)


def _not_read(whole: Resolved, parsed: PDI) -> str:
    """The note on the page of a document larger than :data:`MAX_READ` that is no image or sound: not read here,
    and where its octets (and its fragment's) are had."""
    name = str(whole.pdi)
    fragment = (
        f'; its fragment is not evaluated here: <a href="{html.escape(n2r_href(str(parsed)))}">N2R'
        " resolves it</a>" if parsed.fragment is not None else ""
    )
    return (
        f'<p class="note" id="not-read">This document is {html.escape(byte_size(whole.record.size))}: more than the'
        f" {byte_size(MAX_READ)} the viewer reads to show one of its kind, so only its facts are shown. Its octets"
        f' are <a href="{html.escape(n2r_href(name))}">the bytes</a>{fragment}.</p>'
    )


_WHY_PDF = (
    "The PDI counts the characters of the PDF's text layer, made at deposit (a line break CR LF, a form feed"
    " between pages), or names a region of a page in points; the W3C selector quotes the same text and counts"
    " it as the PDI does."
)


def _heading(parsed: PDI, record: RepresentationRecord) -> str:
    """The page's ``<h1>``: the name; for a name that encapsulates a URL (a capture's), the URL and when it was
    deposited, the name one click away."""
    url = captured_url(parsed)
    if url is None:
        return f"<h1><code>{breakable(parsed)}</code></h1>"
    return f'<h1>{capture_title(url, record.created_at)}</h1><p class="pdi-name">{name_details(parsed, "PDI")}</p>'


def _version_banner(archive: Archive, record: RepresentationRecord, title: str | None) -> str:
    """The document's title (``title``: its ``title`` statement, else this name's; ``None`` when the facts below
    show it already, as this name's own statement), and on a version that is not the latest the reader may see,
    "version N of M" with a link to the latest (the same format if it has one)."""
    generic = record_generic(record)
    shown = f'<p class="doc-title">Title: {cited(title)}</p>' if title else ""
    document = archive.locate(str(generic))  # the versions the reader may learn of (an embargoed one is left out)
    if not isinstance(document, Generic) or not document.versions or document.versions[-1].number <= record.version:
        return shown
    latest, names = document.versions[-1].number, document.versions[-1].formats
    target = next((n for n in names if n.format == record.format), names[0])
    return (
        f'{shown}<p class="version-banner" role="note"><strong>An old version:</strong> this is version'
        f" {record.version} of {latest}; the latest is"
        f' <a href="/view?pdi={quote(str(target), safe="")}">version {latest}</a>.</p>'
    )



def _text_page(archive: Archive, whole: Resolved, selected: Resolved | None, head: str, tab: str, name: str) -> str:
    from pdi.fragments.markup import document_charset
    from pdi.fragments.text import TextIndex
    from pdi.fragments.text.lines import line_ending_convention, to_crlf

    if len(whole.data) > 4 * MAX_VIEW:
        raise LimitError(f"{whole.pdi} is {len(whole.data):,} octets: too long to show; fetch a fragment of it")
    # decoded exactly as the fragment evaluators decode it (BOM, charset sniffing), so positions agree
    charset = document_charset(whole.data, whole.media_type, whole.charset)
    decoded = TextIndex(whole.data, charset).whole_text()
    convention = line_ending_convention(decoded)
    text = to_crlf(decoded)
    del decoded
    if len(text) > MAX_VIEW:
        raise LimitError(f"{whole.pdi} holds {len(text)} characters: too long to show; fetch a fragment of it")
    start = end = None
    if selected is not None and selected.fragment is not None and selected.fragment.ranges:
        first, last = selected.fragment.ranges[0], selected.fragment.ranges[-1]
        if selected.fragment.scheme in ("char", "line", "elt", "name"):
            start, end = first.start, last.end  # code points of the CRLF-canonical text
    shown = _shown(text, start, end)
    facts = rfc5147_facts(archive, whole)
    body = (
        f"{head}{_to_passage(selected) if start is not None else ''}"
        f"{_text_panel(whole, facts, convention, opened_name(name, selected, start is not None))}"
        f'<pre id="text" dir="auto" {_TEXT_KEYS} data-pdi="{html.escape(str(whole.pdi))}"{_rfc5147_data(facts)}>\n{shown}</pre>'
    )
    return _page(tab, body, SCRIPT, name=name)


def _message_page(
    whole: Resolved, selected: Resolved | None, below: str, tab: str, name: str, mail: Mail | None = None,
    words: tuple[bytes, int] | None = None, *, parsed: PDI, titled: str | None = None, number: int | None = None,
) -> str:
    """An e-mail: its header fields, thread and parts, and its body's text in the text viewer (docs/email.md);
    ``words``: the first octets of the text part a ``#part=N`` names and its size (:func:`_part_words`), shown
    under the list of parts.

    Its heading is its Subject, as a reader knows a message (and as its thread's page heads it), the name
    ``parsed`` under it as a page of any other document shows it, and ``below`` (the version's title, notes and
    facts) after them; the tab says the Subject first too, unless the document has a title (``titled``). A
    message without a Subject (or a capture's, headed by its URL) is headed by its name, as other documents are.

    ``mail``: a message of more than :data:`pdi.mail.large.STREAMED_FROM` octets read by its structure
    (``whole`` only located): its parts listed with their sizes as written.

    Its body's text is shown a page at a time (:mod:`pdi.server.pages.body_pages`): page ``number`` (``page=``
    of the address), else the page holding the start of the passage its name marks, else the first; the passage
    marked where it is on the page shown. The ``<pre>`` says where the page starts (``data-offset``), so that a
    selection in it is named by its place in the whole body's text."""
    from pdi.server.pages.body_pages import (
        PAGING_STYLE,
        body_page,
        kept_page_table,
        page_holding,
        page_href,
        paging,
    )
    from pdi.server.pages.mail_pages import MESSAGE_STYLE, message_section, part_text, shown_field

    if mail is None and whole.record.size > 4 * MAX_VIEW:
        raise LimitError(f"{whole.pdi} is {whole.record.size:,} octets: too long to show; fetch a fragment of it")
    chosen = selected.fragment if selected is not None else None
    # a part's name (#part=N, cid:, a file name) ranges over its number: that part is marked in the list
    part = chosen.ranges[0].start if chosen is not None and chosen.scheme == "part" and chosen.ranges else None
    section, text, subject = message_section(whole, part, mail)
    if subject and captured_url(parsed) is None:
        head = (f'<h1 class="subject">{shown_field(subject)}</h1>'
                f'<p class="name-line"><code>{breakable(parsed)}</code></p>{below}')
        tab = tab_title(titled or clipped(subject), parsed)  # a tab's line: a stranger's controls escaped, cut
    else:
        head = _heading(parsed, whole.record) + below
    if words is not None and part is not None and chosen is not None:  # a text part's words, bounded
        section += part_text(str(whole.pdi), part, chosen.media_type, chosen.charset, *words)
    start = end = None
    if chosen is not None and chosen.ranges and chosen.scheme in ("char", "line"):
        start, end = chosen.ranges[0].start, chosen.ranges[-1].end  # code points of the body's CRLF-canonical text
    table = kept_page_table(whole.record.sha256, text)
    shown = body_page(table, text, number if number is not None else
                      page_holding(table, start) if start is not None else 1)
    marked = start is not None and end is not None and _on_page(shown, start, end)
    to_passage = ""
    if marked:
        assert start is not None and end is not None
        to_passage = _to_passage(selected)
        if end > shown.end:
            to_passage += ('<p class="note" id="passage-goes-on">The passage marked goes on on the'
                           f' <a href="{page_href(name, shown.number + 1)}">next page</a>.</p>')
        start, end = max(start, shown.start) - shown.start, min(end, shown.end) - shown.start
    elif start is not None and chosen is not None and not chosen.past_end:  # on another page: a link to it
        to_passage = (f'<p class="to-passage">The passage named is on page {page_holding(table, start):,}:'
                      f' <a href="{view_path(name)}#passage">go to it</a></p>')
        start = end = None
    hint = (
        "Select a passage of the body to get its name: the PDI, <code>#char=a,b</code>, the characters after the"
        " first <var>a</var> of the message's body text (shown below) up to the <var>b</var>th, line ends"
        f" included ({COUNTING_LINK}). A part is named <code>#part=N</code>,"
        " <code>#part=cid:ID</code> or by its file name."
    )
    piece = text[shown.start : shown.end]
    del text
    body = (
        f"{head}{section}{to_passage}"
        # one name only: the body's text is no entity of its own, so neither an RFC 5147 URL nor a browser's
        # fragment names it, and annotations quote a text, a page or a PDF
        f"{cite_panel(hint, cite_button=True, cited=opened_name(name, selected, marked or part is not None))}"
        f"{paging(shown, name, number, where='top')}"
        f'<pre id="text" dir="auto" {_TEXT_KEYS} data-pdi="{html.escape(str(whole.pdi))}" data-offset="{shown.start}">'
        f"\n{_shown(piece, start, end)}</pre>{paging(shown, name, number, where='end')}"
    )
    return page(tab, body, script=SCRIPT, style=_STYLE + MESSAGE_STYLE + PAGING_STYLE, name=name)


def _on_page(shown: BodyPage, start: int, end: int) -> bool:
    """Whether the passage ``[start, end)`` of a body's text is (at least in part) on the page ``shown``: an empty
    one, a place, where it stands (one at the end of the text on the last page)."""
    if start == end:
        return shown.start <= start < shown.end or (start == shown.end and shown.number == shown.pages)
    return start < shown.end and end > shown.start


def _window_page(archive: Archive, whole: Resolved, selected: Resolved | None, head: str, tab: str, name: str) -> str:
    """A long text: the passage ``selected`` names (or the beginning) with context on each side, never the whole.

    The window is itself a ``char`` fragment of the text, so its characters
    are counted exactly as the passage's; the ``<pre>`` says where it starts
    (``data-offset``) so a selection in it is named by its place in the whole.
    """
    start = end = 0
    chosen = selected.fragment if selected is not None else None
    if chosen is not None and chosen.ranges and chosen.scheme in ("char", "line", "elt", "name"):
        start, end = chosen.ranges[0].start, chosen.ranges[-1].end  # code points of the CRLF-canonical text
    cut = end - start > MAX_PASSAGE
    if cut:
        end = start + MAX_PASSAGE
    first = max(0, start - CONTEXT)
    window = archive.resolve(f"{whole.pdi}#char={first},{end + CONTEXT}")
    assert not isinstance(window, Generic) and window.fragment is not None
    text = window.fragment.text()
    # a window's edge between the CR and the LF of a line break would show half of it (one character the
    # page counts as two): the window starts after that line break and ends before it
    if text.startswith("\n"):
        text, first = text[1:], first + 1
    if text.endswith("\r"):
        text = text[:-1]
    shown = _shown(text, start - first, end - first) if chosen is not None else _shown(text, None, None)
    last = first + len(text)
    note = (
        f'<p class="note">A long text ({html.escape(byte_size(whole.record.size, ", "))}): shown are characters'
        f" {first} to {last}"
        + (f", the passage marked (its first {MAX_PASSAGE:,} characters)" if cut
           else ", the passage marked" if chosen is not None and not chosen.past_end else "")
        + ". Name a passage (select it, or give #char=a,b) to see another part.</p>"
    )
    facts = rfc5147_facts(archive, whole, first)
    marked = chosen is not None and bool(chosen.ranges) and chosen.scheme in ("char", "line", "elt", "name")
    body = (
        f"{head}{note}{_to_passage(selected)}{_text_panel(whole, facts, None, opened_name(name, selected, marked))}"
        f'<pre id="text" dir="auto" {_TEXT_KEYS} data-pdi="{html.escape(str(whole.pdi))}" data-offset="{first}"{_rfc5147_data(facts)}>'
        f"\n{shown}</pre>"
    )
    return _page(tab, body, SCRIPT, name=name)


#: A link to the marked passage: the script scrolls it into view, and a reader without scripts follows this
#: (the search page's links end in ``#passage`` too, so they land on it).
_TO_PASSAGE = '<p class="to-passage"><a href="#passage">Go to the marked passage</a></p>'


def _to_passage(selected: Resolved | None) -> str:
    """The link to the passage marked, when a fragment marks one (a fragment wholly past the end marks nothing;
    an empty one at a place, ``#char=5``, marks that place)."""
    chosen = selected.fragment if selected is not None else None
    return _TO_PASSAGE if chosen is not None and not chosen.past_end else ""

_TEXT_HINT = (
    "Select a passage to get its name, the PDI (<code>#char=a,b</code>, the characters after the first"
    f" <var>a</var> of the text up to the <var>b</var>th, line ends included: {COUNTING_LINK});"
    " its other forms (RFC 5147 for plain text, a text fragment, a W3C selector) are under"
    " <em>Other forms</em>."
)


#: The text's ``<pre>`` as the keyboard reaches it: Tab stops on it, the arrow keys move a caret in it and
#: Shift+arrows extend the selection (the viewer's script), Enter cites.
#: Named as a region (WAI-ARIA 1.2): a <pre> is of role generic, which may not be named (axe's aria-prohibited-attr),
#: its keys said by its description.
_TEXT_KEYS = 'tabindex="0" role="region" aria-label="The text" aria-describedby="text-keys"'

#: How a deposited text's line ends read, in words.
_ENDINGS = {"crlf": "CR LF", "lf": "LF", "cr": "CR", "nel": "NEL", "crnel": "CR NEL"}


def _why_text(convention: str | None, *, rfc5147: bool, markup: bool = False) -> str:
    """Why a text passage's other forms carry other numbers than its PDI (PDI-GRAMMAR.md §3, ``char`` and RFC 5147)."""
    counted = (
        "The PDI counts the characters of the text with every line end written CR LF, two characters"
        " (the PDI draft's canonical text); the W3C position selector counts the same way."
    )
    if markup:
        return (
            "The PDI counts the characters of the page's source (markup included, every line end two characters,"
            " CR LF); a text fragment and the W3C selector quote the text a reader sees, so they name a selection"
            " only where it is text of the page, and they are read back to the same characters."
        )
    if not rfc5147:  # a text too long for its MD5 to be read for each page: no RFC 5147 form
        return counted + " A text fragment quotes the words instead of counting them."
    said = {
        None: "",
        "none": " This text has no line end, so the two counts agree.",
        "crlf": " This text was deposited with CR LF line ends, so the PDI counts its characters as stored.",
        "mixed": " This text was deposited with line ends of more than one kind; each counts two in the PDI.",
    }
    ending = said.get(convention)
    if ending is None:  # one kind of one-character line end: LF, CR, NEL (CR NEL is two as stored, one in RFC 5147)
        ending = (
            f" This text was deposited with {_ENDINGS.get(convention or '', convention)} line ends:"
            " the PDI counts each as two characters all the same, as the draft's canonical text has them."
        )
    return (
        counted + " RFC 5147 counts a line end as one character, whatever it is written with (CR LF, LF or CR),"
        " so its numbers are lower by one for each line end before the position." + ending
        + " A text fragment quotes the words instead of counting them."
    )


def _text_panel(whole: Resolved, facts: RFC5147Facts | None, convention: str | None, cited: str = "") -> str:
    """The cite panel of a text (or of a markup document's source): its PDI, and its other forms; ``cited``: the
    name the page was opened at, its passage marked (:func:`opened_name`)."""
    family = formats.media_family(whole.record.media_type)
    forms = ("rfc5147", "textfrag", "annotation") if facts is not None else ("textfrag", "annotation")
    why = _why_text(convention, rfc5147=facts is not None, markup=family in ("html", "xml"))
    return cite_panel(_text_hint(whole, facts), forms=forms, why=why, cite_button=True, cited=cited)


def _text_hint(whole: Resolved, facts: RFC5147Facts | None) -> str:
    if facts is None and whole.record.media_type.startswith("text/plain"):
        return _TEXT_HINT + (
            f" (No RFC 5147 name for a text over {MAX_RFC5147 >> 20} MiB: its MD5 would be read whole for each page.)"
        )
    return _TEXT_HINT


def _rfc5147_data(facts: RFC5147Facts | None) -> str:
    if facts is None:
        return ""
    return (
        f' data-rfc-url="{html.escape(facts.url)}" data-rfc-checks="{html.escape(facts.checks)}"'
        f' data-rfc-offset="{facts.offset}"'
    )


def _shown(text: str, start: int | None, end: int | None) -> str:
    """The text as the ``<pre>`` holds it (LF line breaks, escaped), with ``[start, end)`` marked."""

    def lf(part: str) -> str:
        # a browser drops U+0000 from a page's text: show it as U+2400, one character for one
        return html.escape(part.replace("\r\n", "\n").replace("\x00", "\u2400"), quote=False)

    if start is None or end is None:
        return lf(text)
    # a position between the CR and the LF of a line break is shown before the break
    start -= text[start - 1 : start + 1] == "\r\n"
    end -= text[end - 1 : end + 1] == "\r\n"
    return f'{lf(text[:start])}<mark id="passage">{lf(text[start:end])}</mark>{lf(text[end:])}'
