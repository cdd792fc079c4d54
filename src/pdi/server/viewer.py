"""The resolver's web viewer: read a passage, select another, get its citable name.

``/view?pdi=NAME`` resolves the whole representation NAME names. A text (and
the source of an HTML or XML document: ``char`` positions count its source)
is shown in a ``<pre>``, the passage NAME's ``char`` or ``line`` fragment
selects marked. When the reader selects text, a few lines of JavaScript
count the selection's ends the way the PDI ``char`` scheme does (code points
of the CRLF-canonical text: a line break is CR and LF, two characters) and
show ``NAME#char=a,b`` with a link that opens it. The page shows the text
with LF line endings (a browser's HTML parser would turn CR LF into LF
anyway) and the script adds one for each line break before a position.

A generic name (no format) shows every version of the document: its number,
when it was deposited, and a link to each of its formats. A fragment that
reaches or lies wholly past the end is said so above the document.

Images are shown with the region of a ``rect`` or ``crop`` fragment outlined,
sound with a player, anything else as a link to its bytes (RFC 2169 ``N2R``).
Everything is escaped; the page loads nothing from elsewhere.
"""

from __future__ import annotations

import html
import json
from urllib.parse import quote

from pdi import formats
from pdi._wording import plural
from pdi.archive import Archive, Generic, Resolved
from pdi.errors import LimitError, PDIError
from pdi.identifier import PDI

#: The longest text the viewer shows in one page (characters); longer ones are cut by fragment only.
MAX_VIEW = 16 << 20

#: A text of more octets than this is shown as a window: the passage a fragment
#: names (or the text's beginning) with :data:`CONTEXT` characters on each side.
WINDOW_FROM = 1 << 20

#: Characters of context shown on each side of a passage in a window.
CONTEXT = 20_000

#: The longest passage a window marks whole (characters); a longer one is shown from its start.
MAX_PASSAGE = 1 << 20

_STYLE = """
body{font:16px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#222}
pre{white-space:pre-wrap;word-wrap:break-word;border:1px solid #ccc;padding:1rem;background:#fcfcfa}
mark{background:#ffe58a} code,input{font-family:ui-monospace,monospace}
#name{width:100%;font-size:0.95rem;padding:0.3rem} .error{color:#a00} dt{font-weight:bold}
h1 code{overflow-wrap:anywhere} .note{color:#8a5a00}
table{border-collapse:collapse} th,td{border:1px solid #ccc;padding:0.3rem 0.6rem;vertical-align:top;text-align:left}
td ul{margin:0;padding-left:1.1rem} td.number{text-align:right} td time{white-space:nowrap}
code.name{font-size:0.8rem;color:#555;overflow-wrap:anywhere}
.figure{position:relative;display:inline-block} .figure img{display:block;max-width:100%}
.box{position:absolute;outline:3px solid #e00;box-shadow:0 0 0 9999px rgba(0,0,0,.25)}
"""

_SCRIPT = """
(function () {
  const text = document.getElementById("text");
  const out = document.getElementById("name");
  const open = document.getElementById("open");
  const base = text.dataset.pdi;
  // PDI char position of a DOM point: code points before it, a line break counting CR and LF
  function position(node, offset) {
    const range = document.createRange();
    range.setStart(text, 0);
    range.setEnd(node, offset);
    let n = Number(text.dataset.offset || 0);  // a window of a long text starts there
    for (const ch of range.toString()) n += ch === "\\n" ? 2 : 1;
    return n;
  }
  const passage = document.getElementById("passage");
  if (passage) passage.scrollIntoView({block: "center"});
  document.addEventListener("selectionchange", function () {
    const selection = document.getSelection();
    if (!selection.rangeCount) return;
    const range = selection.getRangeAt(0);
    if (!text.contains(range.startContainer) || !text.contains(range.endContainer)) return;
    const a = position(range.startContainer, range.startOffset);
    const b = position(range.endContainer, range.endOffset);
    out.value = base + "#char=" + a + (b > a ? "," + b : "");
    open.href = "/view?pdi=" + encodeURIComponent(out.value);
    open.hidden = false;
  });
})();
"""


def _page(title: str, body: str, script: str = "") -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>{body}"
        + (f"<script>{script}</script>" if script else "")
        + "</body></html>\n"
    )


def _form(value: str = "") -> str:
    return (
        '<form action="/view" method="get"><label>PDI <input name="pdi" size="70" '
        f'value="{html.escape(value)}" placeholder="urn:pdi://series.cc/YYYY/MM/DD/id.format.version"></label> '
        '<button type="submit">Resolve</button></form>'
    )


def render_home(series: list[str], *, error: PDIError | None = None, value: str = "") -> str:
    """The start page: a form for a name, the series of the archive, and an error if one is to be shown."""
    items = "".join(
        f'<li><a href="/api/ls?series={quote(s)}"><code>{html.escape(s)}</code></a></li>' for s in series
    )
    problem = f'<p class="error">{html.escape(error.title)}: {html.escape(str(error))}</p>' if error else ""
    body = (
        f"<h1>pdi resolver</h1>{problem}{_form(value)}"
        f"<h2>Series</h2><ul>{items or '<li>none registered</li>'}</ul>"
        '<p>Also: <code>/uri-res/N2R?urn:pdi:…</code> (RFC 2169), <code>/api/resolve?pdi=…</code></p>'
    )
    return _page("pdi resolver", body)


def render_view(archive: Archive, name: str) -> str:
    """The page for ``name``: the whole representation, what its fragment selects marked."""
    parsed = PDI.parse(name)
    whole_name = parsed.without_fragment()
    located = archive.locate(whole_name)
    if isinstance(located, Generic):
        return _generic_page(located, name)
    record = located.record
    family = formats.media_family(record.media_type)
    windowed = family in ("text", "html", "xml") and record.size > WINDOW_FROM
    if windowed:
        whole = located  # never read whole: a window of it is cut by fragment
        selected = archive.resolve(name) if parsed.fragment is not None else None
        assert not isinstance(selected, Generic)
    else:
        whole = archive.read(located)
        # the fragment is cut from the bytes just read: they are not read and hashed twice
        selected = archive.select(whole, parsed.fragment) if parsed.fragment is not None else None
    meta = archive.meta(str(whole.pdi))
    facts = "".join(
        f"<dt>{html.escape(k)}</dt><dd>{html.escape(v)}</dd>"
        for k, v in [("media type", record.media_type), ("bytes", str(record.size)), ("SHA-256", record.sha256), *meta.items()]
    )
    chosen = selected.fragment if selected is not None else None
    note = (
        '<p class="note">The fragment lies wholly past the end: it selects nothing.</p>'
        if chosen is not None and chosen.past_end
        else '<p class="note">The fragment reaches past the end: it is cut there.</p>'
        if chosen is not None and chosen.clamped
        else ""
    )
    head = (
        f"{_form(name)}<h1><code>{html.escape(str(parsed))}</code></h1>{note}<dl>{facts}</dl>"
        f'<p><a href="/uri-res/N2R?{html.escape(_n2r(str(parsed)))}">the bytes</a> · '
        f'<a href="/api/resolve?pdi={quote(str(parsed), safe="")}">JSON</a></p>'
    )
    if windowed:
        return _window_page(archive, whole, selected, head)
    if family in ("text", "html", "xml"):
        return _text_page(whole, selected, head)
    if family == "image":
        return _page(str(parsed), head + _figure(whole, selected))
    if family == "timed" and whole.media_type.startswith("audio/"):
        source = _n2r(str(parsed))
        player = f'<audio controls src="/uri-res/N2R?{html.escape(source)}"></audio>'
        return _page(str(parsed), head + player)
    return _page(str(parsed), head)


def _generic_page(generic: Generic, name: str) -> str:
    """The versions of a document: for each its number, when it was deposited, and links to its formats."""
    rows = "".join(
        f'<tr><td class="number">{v.number}</td>'
        f'<td><time datetime="{html.escape(v.created_at)}">{html.escape(v.created_at)}</time></td><td><ul>'
        + "".join(
            f'<li><a href="/view?pdi={quote(str(n), safe="")}"><code>{html.escape(n.format or "")}</code></a>'
            f' <code class="name">{html.escape(str(n))}</code></li>'
            for n in v.formats
        )
        + "</ul></td></tr>"
        for v in generic.versions
    )
    count = plural(len(generic.versions), "version")
    body = (
        f"{_form(name)}<h1><code>{html.escape(str(generic.pdi))}</code></h1>"
        f"<p>{count} of this document, oldest first (deposit times in UTC):</p>"
        '<table id="versions"><thead><tr><th>version</th><th>deposited</th><th>formats</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )
    return _page(str(generic.pdi), body)


def _n2r(name: str) -> str:
    from pdi.server.read import rfc2169_query

    return rfc2169_query(name)


def _text_page(whole: Resolved, selected: Resolved | None, head: str) -> str:
    from pdi.fragments.markup import document_charset
    from pdi.fragments.text import TextIndex
    from pdi.fragments.text.lines import to_crlf

    if len(whole.data) > 4 * MAX_VIEW:
        raise LimitError(f"{whole.pdi} is {len(whole.data)} bytes: too long to show; fetch a fragment of it")
    # decoded exactly as the fragment evaluators decode it (BOM, charset sniffing), so positions agree
    charset = document_charset(whole.data, whole.media_type, whole.charset)
    text = to_crlf(TextIndex(whole.data, charset).whole_text())
    if len(text) > MAX_VIEW:
        raise LimitError(f"{whole.pdi} holds {len(text)} characters: too long to show; fetch a fragment of it")
    start = end = None
    if selected is not None and selected.fragment is not None and selected.fragment.ranges:
        first, last = selected.fragment.ranges[0], selected.fragment.ranges[-1]
        if selected.fragment.scheme in ("char", "line", "elt", "name"):
            start, end = first.start, last.end  # code points of the CRLF-canonical text
    shown = _shown(text, start, end)
    body = (
        f"{head}<p>Select a passage to get its name:</p>"
        '<p><input id="name" readonly placeholder="(select text below)"> '
        '<a id="open" hidden>open it</a></p>'
        f'<pre id="text" data-pdi="{html.escape(str(whole.pdi))}">\n{shown}</pre>'
    )
    return _page(str(whole.pdi), body, _SCRIPT)


def _window_page(archive: Archive, whole: Resolved, selected: Resolved | None, head: str) -> str:
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
    shown = _shown(text, start - first, end - first) if chosen is not None else _shown(text, None, None)
    last = first + len(text)
    note = (
        f'<p class="note">A long text ({plural(whole.record.size, "byte")}): shown are characters'
        f" {first} to {last}"
        + (f", the passage marked (its first {plural(MAX_PASSAGE, 'character')})" if cut else ", the passage marked" if chosen is not None else "")
        + ". Name a passage (select it, or give #char=a,b) to see another part.</p>"
    )
    body = (
        f"{head}{note}<p>Select a passage to get its name:</p>"
        '<p><input id="name" readonly placeholder="(select text below)"> '
        '<a id="open" hidden>open it</a></p>'
        f'<pre id="text" data-pdi="{html.escape(str(whole.pdi))}" data-offset="{first}">\n{shown}</pre>'
    )
    return _page(str(whole.pdi), body, _SCRIPT)


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


def _figure(whole: Resolved, selected: Resolved | None) -> str:
    source = f"/uri-res/N2R?{html.escape(_n2r(str(whole.pdi)))}"
    box = ""
    region = selected.fragment.region if selected is not None and selected.fragment is not None else None
    if region is not None and region.width and region.height:
        style = (
            f"left:{100 * region.x1 / region.width:.4f}%;top:{100 * region.y1 / region.height:.4f}%;"
            f"width:{100 * (region.x2 - region.x1) / region.width:.4f}%;"
            f"height:{100 * (region.y2 - region.y1) / region.height:.4f}%"
        )
        box = f'<div class="box" style="{style}" title="{html.escape(json.dumps(vars(region)))}"></div>'
    return f'<div class="figure"><img src="{source}" alt="{html.escape(str(whole.pdi))}">{box}</div>'
