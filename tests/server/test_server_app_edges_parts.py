"""More rough edges of the reader's web app seen in its screenshots, each measured in Chromium (the first ones:
``test_server_app_edges.py``).

- an e-mail's To address broke inside a label on a phone (``<cravindogs@cravindogs.c`` above ``om>`` at 390 px);
- a heading broke a name's fragment at a comma on a phone though a line held it whole (``#rect=(10,5),`` above
  ``(30,25)`` at 390 px);
- a citation's name ``A@0=B`` kept B's last part whole, not A's (``…/29/1`` above ``.text.1@0=urn:pdi://…``);
- the text fixture of the screenshots showed a box (``Second □ line``): a G clef no installed font has;
- a PDF's region form put its y2 box on a line by itself on a phone.

Screenshots: ``app-edges-parts-….png``.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from server_helpers import Served
from test_server_app_edges import _js, _shoot, _sized, page_url
from test_server_pdf_viewer import _until

from pdi.capture.browser import devtools

#: A function of an element and a list of ``[from, to]`` spans of its text (``textContent``): the spans a line break
#: cuts in two (their pieces' boxes on more than one line), as ``[from, to]``.
CUT = """((element, spans) => {
  const nodes = [], walk = document.createTreeWalker(element, NodeFilter.SHOW_TEXT); let seen = 0;
  for (let node = walk.nextNode(); node; node = walk.nextNode()) { nodes.push([node, seen]); seen += node.data.length; }
  const place = (i, end) => { for (const [node, start] of nodes)
    if (end ? i <= start + node.data.length : i < start + node.data.length) return [node, i - start]; };
  return spans.filter(([from, to]) => { const r = document.createRange(), [n1, o1] = place(from, false),
    [n2, o2] = place(to, true); r.setStart(n1, o1); r.setEnd(n2, o2);
    return new Set([...r.getClientRects()].filter((b) => b.width > 0).map((b) => Math.round(b.top))).size > 1; }); })"""

# --- an e-mail's addresses ----------------------------------------------------------------------------------------

#: The addresses in a message's From, To and Cc (``dl.message``): each field, the addresses in it, and the pieces of
#: each (its local part, each label of its domain) a line break cuts in two; and how far the page scrolls sideways.
ADDRESSES = """(() => { const cut = CUT, fields = [];
  for (const dt of document.querySelectorAll('dl.message dt')) {
    if (!['From', 'To', 'Cc'].includes(dt.textContent)) continue;
    const dd = dt.nextElementSibling, text = dd.textContent, found = [], spans = [];
    for (const m of text.matchAll(/[^\\s<>()",]+@[^\\s<>()",]+/g)) {
      found.push(m[0]);
      for (const p of m[0].matchAll(/[^@.]+/g)) spans.push([m.index + p.index, m.index + p.index + p[0].length]);
    }
    fields.push([dt.textContent, found, cut(dd, spans).map(([f, t]) => text.slice(f, t))]);
  }
  return [fields, document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [1100, 390, 320])
def test_an_email_address_breaks_only_after_its_at_or_between_its_labels(
    served: Served, media: tuple[str, dict[str, str]], width: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, "email-parts"), width, 844)
        fields, sideways = _js(pipe, session, ADDRESSES.replace("CUT", CUT))
        _shoot(pipe, session, f"app-edges-parts-email-{width}.png")
    # tests/data/email/msg_07.txt: From: Barry <barry@digicool.com>, To: Dingus Lovers <cravindogs@cravindogs.com>
    assert [(field, found) for field, found, _ in fields] == [
        ("From", ["barry@digicool.com"]), ("To", ["cravindogs@cravindogs.com"])], fields
    assert [cut for _, _, cut in fields if cut] == [], fields  # never "cravindogs.c" above "om"
    assert sideways <= 0, sideways


@given(st.text(st.sampled_from("ab.-@<> \u202e\x00&'"), max_size=40))
@example("Dingus Lovers <cravindogs@cravindogs.com>")
def test_an_address_fields_breaks_leave_its_characters_as_shown(value: str) -> None:
    import html5lib

    from pdi.server.pages.mail_pages import shown_addresses, shown_field

    def text(made: str) -> str:
        return "".join(html5lib.parse(f"<dd>{made}</dd>", namespaceHTMLElements=False).find(".//dd").itertext())

    made = shown_addresses(value)
    assert text(made) == text(shown_field(value))  # the same characters, escapes and all
    # a break after an address's @ and before each dot of its domain, and nowhere else
    assert made.replace("<wbr>", "") == shown_field(value)
    for at in re.finditer("<wbr>", made):
        before, after = made[:at.start()], made[at.end():]
        assert before.endswith("@") or (after.startswith(".") and "@" in before), made


# --- a fragment in a heading -------------------------------------------------------------------------------------

#: The heading's name (``h1 code``): its text, what a selection of it copies, its fragment (from the ``#``), whether
#: the fragment is cut by a line break though it would fit on a line of the heading, and its parts (cut after a
#: ``,``, ``;`` or ``&`` outside parentheses: ``#rect=(8,6),`` ``(40,30),`` ``1500``) a line break cuts in two; and
#: how far the page scrolls sideways.
FRAGMENT = """(() => { const cut = CUT, code = document.querySelector('main h1 code'), text = code.textContent;
  getSelection().selectAllChildren(code); const copied = getSelection().toString(); getSelection().removeAllRanges();
  const hash = text.indexOf('#'), parts = []; let depth = 0, from = hash;
  for (let i = hash; i < text.length; i++) {
    const ch = text[i]; depth += ch === '(' ? 1 : ch === ')' ? -1 : 0;
    if (depth === 0 && ',;&'.includes(ch)) { parts.push([from, i + 1]); from = i + 1; }
  }
  parts.push([from, text.length]);
  const r = document.createRange(), nodes = [], walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
  r.selectNodeContents(code);
  const boxes = [...r.getClientRects()].filter((b) => b.width > 0);
  const line = code.closest('h1').clientWidth, whole = cut(code, [[hash, text.length]]).length > 0;
  const range = document.createRange(); let seen = 0, wide = 0;
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    const at = Math.max(hash - seen, 0);
    if (at < node.data.length) { range.setStart(node, at); range.setEnd(node, node.data.length);
      wide += [...range.getClientRects()].reduce((sum, b) => sum + b.width, 0); }
    seen += node.data.length;
  }
  return [text, copied, text.slice(hash), whole && wide <= line,
          cut(code, parts).map(([f, t]) => text.slice(f, t)),
          document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [1100, 390, 375, 320])
@pytest.mark.parametrize(("page", "fragment"), [
    ("image", "#rect=(10,5),(30,25)"), ("video-region", "#rect=(8,6),(40,30),1500"), ("text", "#char=7,12"),
    ("pdf", "#char=0,10"), ("sgml-elt", "#elt=3,3"),
])
def test_a_headings_fragment_breaks_only_between_its_parts(
    served: Served, media: tuple[str, dict[str, str]], page: str, fragment: str, width: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, page), width, 844)
        text, copied, shown, cut_though_it_fits, cut, sideways = _js(pipe, session, FRAGMENT.replace("CUT", CUT))
        _js(pipe, session, "scrollTo(0, 0); new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        _shoot(pipe, session, f"app-edges-parts-fragment-{page}-{width}.png")
    assert shown == fragment, shown
    assert copied == text, (copied, text)  # a selection of the heading copies the name, nothing added
    assert not cut_though_it_fits, text  # never "#rect=(10,5)," above "(30,25)" where the line holds it whole
    assert cut == [], cut  # where it does not fit: "#rect=(8,6)," above "(40,30),1500", never "(40," above "30)"
    assert sideways <= 0, sideways


@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cc",), exclude_characters="#"), max_size=60))
@example("rect=(10,5),(30,25)")
@example("t=1,2&xywh=1,2,3,4;length=9<&amp;>")
def test_a_names_fragment_reads_back_whole_in_its_own_span(fragment: str) -> None:
    import html5lib

    from pdi.server.pages.layout import LONG_PIECE, breakable

    name = f"urn:pdi://s.example.us/2026/11/29/1.text.1#{fragment}"
    made = breakable(name)
    code = html5lib.parse(f"<h1><code>{made}</code></h1>", namespaceHTMLElements=False).find(".//code")
    assert code is not None and "".join(code.itertext()) == name  # every character as it was, entities whole
    spans = code.findall("span")
    assert [s.get("class") for s in spans] == ["fragment anywhere" if len(fragment) + 1 > LONG_PIECE else "fragment"]
    assert "".join(spans[0].itertext()) == "#" + fragment
    # inside it, a break only before a ; and after a &
    inner = made[made.index('<span class="fragment'):]
    for at in re.finditer("<wbr>", inner):
        assert inner[at.end():].startswith(";") or inner[:at.start()].endswith("&amp;"), inner


# --- a citation's name: A@origin=B ---------------------------------------------------------------------------------

#: The heading's name, a citation ``A@origin=B`` (specs/PDI-GRAMMAR.md, citation-specifier): its text, the last
#: parts of A and of B (each's id, format and version: after its last ``/``, before the ``@`` or the ``#``) a line
#: break cuts in two, and whether a line break falls just before the ``@`` or inside ``@0=``; and how far the page
#: scrolls sideways.
CITATION = """(() => { const cut = CUT, code = document.querySelector('main h1 code'), text = code.textContent;
  const at = text.indexOf('@'), equals = text.indexOf('=', at), hash = text.indexOf('#', equals);
  const end = hash < 0 ? text.length : hash;
  const spans = [[text.lastIndexOf('/', at) + 1, at], [text.lastIndexOf('/', end) + 1, end]];
  return [text, cut(code, spans).map(([f, t]) => text.slice(f, t)), cut(code, [[at, equals + 1]]).length > 0,
          document.documentElement.scrollWidth - document.documentElement.clientWidth]; })()"""


@pytest.mark.parametrize("width", [1100, 390, 375, 360, 320])
def test_a_citations_name_keeps_the_last_part_of_both_its_names_whole(
    served: Served, media: tuple[str, dict[str, str]], width: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, "citation"), width, 844)
        text, cut, specifier_cut, sideways = _js(pipe, session, CITATION.replace("CUT", CUT))
        _js(pipe, session, "scrollTo(0, 0); new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        _shoot(pipe, session, f"app-edges-parts-citation-{width}.png")
    assert text == f"{served.text}@0={served.text}#char=0,5", text
    assert cut == [], cut  # never "…/29/1" above ".text.1@0=…"
    assert not specifier_cut, text  # "@0=" whole
    assert sideways <= 0, sideways


def test_a_citations_name_breaks_before_its_at_and_keeps_both_last_parts_whole() -> None:
    from pdi.server.pages.layout import breakable

    made = breakable("urn:pdi://s.example.us/2026/11/29/1.text.1@0=pdi://t.example.us/2026/11/28/2.html.3#char=0,5")
    assert made == ("urn:pdi://<wbr>s<wbr>.example<wbr>.us/<wbr>2026/<wbr>11/<wbr>29/<wbr>1.text.1"
                    "<wbr>@0=pdi://<wbr>t<wbr>.example<wbr>.us/<wbr>2026/<wbr>11/<wbr>28/<wbr>2.html.3"
                    '<wbr><span class="fragment">#char=0,5</span>')


# --- every character of the text fixture drawn --------------------------------------------------------------------

#: The characters past ASCII of the text the page shows (``#text``), and those of them Chromium draws as a missing
#: glyph (tofu): drawn in the text's own font on a canvas, the same pixels as U+10FFFD, a private-use character no
#: font has; and whether that missing glyph is drawn at all (unlike a space) and unlike a letter the font has.
TOFU = """(() => { const text = document.getElementById('text'), style = getComputedStyle(text);
  const canvas = document.createElement('canvas'); canvas.width = 96; canvas.height = 64;
  const c = canvas.getContext('2d', {willReadFrequently: true});
  const drawn = (ch) => { c.clearRect(0, 0, 96, 64); c.font = `${style.fontSize} ${style.fontFamily}`;
    c.fillText(ch, 16, 44); return Array.from(c.getImageData(0, 0, 96, 64).data).join(); };
  const missing = drawn('\\u{10FFFD}'), chars = [...new Set(text.textContent)].filter((ch) => ch.codePointAt(0) > 127);
  return [chars, chars.filter((ch) => drawn(ch) === missing), missing !== drawn(' ') && missing !== drawn('A')]; })()"""


@pytest.mark.parametrize("page", ["text", "citation"])
def test_every_character_of_the_text_fixture_has_a_glyph(
    served: Served, media: tuple[str, dict[str, str]], page: str
) -> None:
    """The served text (``server_helpers.TEXT``), which the screenshots show, holds a character outside the BMP
    (one code point, two UTF-16 units, four UTF-8 octets): one an installed font draws, not a box."""
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, page), 1100, 700)
        chars, tofu, telling = _js(pipe, session, TOFU)
        _js(pipe, session, "document.getElementById('text').scrollIntoView()")
        _shoot(pipe, session, f"app-edges-parts-glyphs-{page}.png")
    assert telling  # the missing glyph is drawn, and unlike a glyph the font has: a comparison that can tell
    assert chars and all(ord(ch) > 0xFFFF for ch in chars), chars
    assert tofu == [], [f"U+{ord(ch):04X}" for ch in tofu]


# --- a region's corners, two rows ---------------------------------------------------------------------------------

#: The boxes of a region's corners (their labels' boxes: x1, y1, x2, y2, by the inputs' ids ``PREFIX…``): each's
#: [left, top, right, bottom], rounded; the window's width; and how far the page scrolls sideways.
CORNERS = """((prefix) => [['x1', 'y1', 'x2', 'y2'].map((axis) => {
    const r = document.getElementById(prefix + axis).closest('label').getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom].map(Math.round); }), innerWidth,
  document.documentElement.scrollWidth - document.documentElement.clientWidth])"""


@pytest.mark.parametrize("width", [1100, 390, 375, 320])
@pytest.mark.parametrize(("page", "prefix"), [("pdf", "pdf-"), ("image", ""), ("video-region", "")])
def test_a_regions_corners_stand_in_two_rows_x1_y1_over_x2_y2(
    served: Served, media: tuple[str, dict[str, str]], page: str, prefix: str, width: int
) -> None:
    with devtools() as pipe:
        session = _sized(pipe, page_url(served, media, page), width, 844)
        if page == "pdf":  # once pdf.js has scrolled to the passage cited, and not after the shot
            assert _until(pipe, session, "document.getElementById('passage')"), "pdf.js marked no passage"
        _js(pipe, session, f"document.getElementById('{prefix}x1').closest('fieldset').scrollIntoView({{block: 'center'}})")
        _js(pipe, session, "new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        (x1, y1, x2, y2), window, sideways = _js(pipe, session, f"({CORNERS})('{prefix}')")
        _shoot(pipe, session, f"app-edges-parts-corners-{page}-{width}.png")
    assert x1[1] == y1[1] and x2[1] == y2[1], (x1, y1, x2, y2)  # x1 beside y1, x2 beside y2
    assert x2[1] >= x1[3], (x1, x2)  # the second corner's row under the first's, never y2 on a line by itself
    assert x1[0] == x2[0] and y1[0] == y2[0], (x1, y1, x2, y2)  # x over x, y over y
    assert all(box[0] >= 0 and box[2] <= window for box in (x1, y1, x2, y2)), (x1, y1, x2, y2, window)
    assert sideways <= 0, sideways
