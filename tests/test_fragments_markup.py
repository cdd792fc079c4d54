"""Element fragments ``elt`` and ``name`` on HTML and XML (draft lines 590–674, PDI-GRAMMAR.md §3).

The expected extents are worked out by hand from the HTML5 tree-construction
rules (which tag closes which element) or, in the property tests, recorded
while the test writes the document, never read back from the code under test.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdi import fragments
from pdi.errors import LimitError, NotFoundError, ParseError, UnsupportedError
from pdi.fragments.markup import html_elements, xml_elements
from pdi.fragments.text import evaluate_pdi

PAGE = (
    "<!DOCTYPE html>\r\n<html><head><title id=t>T</title></head><body>\r\n"
    "<p id=intro>one<p name=second>two <b>bold<br>x</b></p>\r\n"
    "<ul><li>a<li>b</ul><dl><dt>t<dd>d</dl><select><option>1<option>2</select>\r\n"
    "<table><tr><td>c<td>d<tr><td>e</table><div><span>open</div>\r\n"
    "<p>last"
)


def spans(text: str) -> list[tuple[str, str]]:
    return [(e.name, text[e.start : e.end]) for e in html_elements(text)]


def test_html_elements_end_where_an_html5_parser_closes_them() -> None:
    assert spans(PAGE) == [
        ("html", PAGE[PAGE.index("<html>") :]),  # open to the end of the document
        ("head", "<head><title id=t>T</title></head>"),
        ("title", "<title id=t>T</title>"),
        ("body", PAGE[PAGE.index("<body>") :]),
        ("p", "<p id=intro>one"),  # closed by the next <p>
        ("p", "<p name=second>two <b>bold<br>x</b></p>"),
        ("b", "<b>bold<br>x</b>"),
        ("br", "<br>"),  # void: the tag itself
        ("ul", "<ul><li>a<li>b</ul>"),
        ("li", "<li>a"),
        ("li", "<li>b"),  # closed by </ul>
        ("dl", "<dl><dt>t<dd>d</dl>"),
        ("dt", "<dt>t"),
        ("dd", "<dd>d"),
        ("select", "<select><option>1<option>2</select>"),
        ("option", "<option>1"),
        ("option", "<option>2"),
        ("table", "<table><tr><td>c<td>d<tr><td>e</table>"),
        ("tr", "<tr><td>c<td>d"),
        ("td", "<td>c"),
        ("td", "<td>d"),
        ("tr", "<tr><td>e"),
        ("td", "<td>e"),
        ("div", "<div><span>open</div>"),
        ("span", "<span>open"),  # closed by its parent's end tag
        ("p", "<p>last"),  # left open: the end of the document
    ]


def test_html_an_a_inside_an_a_closes_the_outer_one() -> None:
    # the adoption agency algorithm: a second <a> start tag ends the first
    assert spans("<a href=1>one<a href=2>two</a></a>") == [("a", "<a href=1>one"), ("a", "<a href=2>two</a>")]


def test_html_what_html5lib_1_1_predates() -> None:
    # <dialog> and <search> close an open <p> in today's HTML; <template> is refused, not guessed at
    assert spans("<p>a<dialog>b</dialog><p>c<search>d</search>") == [
        ("p", "<p>a"), ("dialog", "<dialog>b</dialog>"), ("p", "<p>c"), ("search", "<search>d</search>")
    ]
    with pytest.raises(UnsupportedError, match="template"):
        html_elements("<p><template><p>a</template>b")


def test_html_isindex_is_an_element_like_any_unknown_one() -> None:
    # found by a probe (2026-12-01): html5lib 1.1 still turned <isindex> into a form (which closes an open <p>), a
    # rule, a label and an input, so that the <p> ended at <isindex> and <isindex> spanned itself alone. WHATWG
    # "in body" has had no isindex rule since 2016: "any other start tag" inserts it, "any other end tag" closes it
    # (Chromium 150 makes the same tree: the isindex inside the p)
    assert spans("<p>a<isindex>b</isindex>c</p>") == [("p", "<p>a<isindex>b</isindex>c</p>"), ("isindex", "<isindex>b</isindex>")]
    assert spans("<isindex prompt=q><b>x</b>")[0] == ("isindex", "<isindex prompt=q><b>x</b>")  # left open: the end


def test_html_ruby_base_and_text_containers_close_as_today() -> None:
    # found by a probe (2026-12-01): html5lib 1.1 predates rb and rtc in the parser. WHATWG "in body": "A start tag
    # whose tag name is one of: rb, rtc": if a ruby is in scope, "generate implied end tags"; "rp, rt": the same
    # "except for rtc elements"; and "generate implied end tags" pops rb and rtc too. An <rt> ended an open <rb>
    # nowhere (it nested inside), an <rb> after an <rb> likewise. (Chromium 150 makes the same trees.)
    assert spans("<ruby>a<rb>b<rt>c</ruby>") == [("ruby", "<ruby>a<rb>b<rt>c</ruby>"), ("rb", "<rb>b"), ("rt", "<rt>c")]
    assert spans("<ruby><rb>a<rb>b<rtc>c</ruby>")[1:] == [("rb", "<rb>a"), ("rb", "<rb>b"), ("rtc", "<rtc>c")]
    # an rt or rp inside an rtc stays inside it; a div does not close an rb
    assert spans("<ruby>a<rtc>b<rt>c<rp>d</ruby>")[1:] == [("rtc", "<rtc>b<rt>c<rp>d"), ("rt", "<rt>c"), ("rp", "<rp>d")]
    assert spans("<ruby><rb>a<div>b</div>c</ruby>")[1] == ("rb", "<rb>a<div>b</div>c")
    # outside a ruby nothing is implied; </form> generates implied end tags, rb among them
    assert spans("<div><rb>a<rt>b</div>")[1] == ("rb", "<rb>a<rt>b")
    assert spans("<form><ruby><rb>x</form>y</ruby>")[2] == ("rb", "<rb>x")


def test_html_the_special_elements_are_todays() -> None:
    # found by a probe (2026-12-01): html5lib 1.1's "special" category lacks main, summary, figcaption, hgroup
    # (and has isindex). WHATWG "in body", any other end tag: "if node is in the special category, then this is
    # a parse error; ignore the token", so </span> does not close a span a main is open in; <li>, <dd> and <dt>
    # stop closing at a special element that is not address, div or p. (Chromium 150 makes the same trees.)
    assert spans("<span><main></span>x") == [("span", "<span><main></span>x"), ("main", "<main></span>x")]
    assert spans("<li>a<summary>b<li>c")[:2] == [("li", "<li>a<summary>b<li>c"), ("summary", "<summary>b<li>c")]
    assert spans("<dl><dt>a<hgroup>b<dd>c</dl>")[1] == ("dt", "<dt>a<hgroup>b<dd>c")
    # isindex is special no more: </span> closes the span and the isindex in it
    assert spans("<span><isindex></span>z") == [("span", "<span><isindex></span>"), ("isindex", "<isindex>")]
    # the adoption agency algorithm's furthest block: a main in a misnested <b> stays open after </b>
    assert spans("<b><main>x</b>y</main>") == [("b", "<b><main>x</b>"), ("main", "<main>x</b>y</main>")]


def test_html_an_ignored_end_tag_closes_nothing() -> None:
    # </body> inside a table cell is a parse error and is ignored: the table runs to its own end tag
    page = "<body><table><tr><td>x</body>y</td></tr></table><p>after</p>"
    assert spans(page)[1] == ("table", "<table><tr><td>x</body>y</td></tr></table>")


def test_html_misnested_formatting_elements() -> None:
    # the adoption agency algorithm: </b> ends <b>, and the <i> inside it ends there too (a clone goes on)
    assert spans("<b>1<i>2<p>3</b>4</i>5</p>6") == [("b", "<b>1<i>2<p>3</b>"), ("i", "<i>2<p>3"), ("p", "<p>3</b>4</i>5</p>")]


def test_html_a_parser_failure_is_a_clear_error() -> None:
    with pytest.raises(UnsupportedError, match="html5lib could not parse this HTML"):
        html_elements("<table><svg><html>")  # html5lib 1.1 trips an assertion here


def test_html_body_and_html_end_with_their_end_tags() -> None:
    # the parser keeps body, html and the open p on its stack after </body>; their source ends there
    page = "<html><body><p>x</body></html>\r\n"
    assert spans(page) == [("html", "<html><body><p>x</body></html>"), ("body", "<body><p>x</body>"), ("p", "<p>x")]


def test_html_text_elements_hold_what_looks_like_tags() -> None:
    page = '<title>a<b></title><script>if (a</b) s="</p>"</script><textarea><i>t</textarea>'
    assert spans(page)[:3] == [
        ("title", "<title>a<b></title>"),
        ("script", '<script>if (a</b) s="</p>"</script>'),
        ("textarea", "<textarea><i>t</textarea>"),
    ]


def test_elt_runs_from_start_tag_a_through_the_end_of_element_b() -> None:
    data = PAGE.encode()
    result = fragments.evaluate("elt", (4, 5), data, media_type="text/html; charset=utf-8")
    assert result.data == b"<p id=intro>one<p name=second>two <b>bold<br>x</b></p>"
    assert result.scheme == "elt"
    (span,) = result.ranges
    # the same stretch as a char fragment of the CRLF-canonical source
    assert evaluate_pdi("char", (span.start, span.end), data, charset="utf-8").data == result.data


def test_name_finds_the_first_element_by_name_or_id_case_sensitively() -> None:
    data = PAGE.encode()
    result = fragments.evaluate("name", ("intro", "second"), data, media_type="text/html", charset="utf-8")
    assert result.data == b"<p id=intro>one<p name=second>two <b>bold<br>x</b></p>"
    with pytest.raises(NotFoundError, match="no element has the name or id 'Intro'"):
        fragments.evaluate("name", ("Intro", "second"), data, media_type="text/html", charset="utf-8")
    with pytest.raises(ParseError, match="ends before it starts"):
        fragments.evaluate("name", ("second", "t"), data, media_type="text/html", charset="utf-8")
    # the first element ends right where the second begins: an empty selection, not an error
    assert fragments.evaluate("name", ("second", "intro"), data, media_type="text/html", charset="utf-8").data == b""


def test_a_start_tag_number_past_the_last_is_not_found() -> None:
    with pytest.raises(NotFoundError, match=r"no start tag 26: the document has 26 start tags, numbered 0 to 25$"):
        fragments.evaluate("elt", (0, 26), PAGE.encode(), media_type="text/html", charset="utf-8")
    # a document of one element, and a text of none (XML's parser refuses that; HTML's finds the html it implies)
    with pytest.raises(NotFoundError, match=r"no start tag 1: the document has one start tag, numbered 0$"):
        fragments.evaluate("elt", (1, 1), b"<r/>", media_type="text/xml", charset="utf-8")


def test_positions_count_the_crlf_canonical_source() -> None:
    page = "<p>a\nb</p>\n<p>é</p>"  # LF endings: counted as CRLF, as char counts them
    result = fragments.evaluate("elt", (1, 1), page.encode(), media_type="text/html", charset="utf-8")
    assert result.canonicalized and result.data == "<p>é</p>".encode()
    assert (result.ranges[0].start, result.ranges[0].end) == (13, 21)  # "<p>a\r\nb</p>\r\n" is 13


def test_html_without_a_charset_is_sniffed_like_a_browser() -> None:
    page = '<meta charset="windows-1252"><p>caf\xe9</p>'.encode("cp1252")
    assert fragments.evaluate("elt", (1, 1), page, media_type="text/html").data == "<p>café</p>".encode("cp1252")


XML = (
    '<?xml version="1.0" encoding="ISO-8859-1"?>\r\n<doc a="1>2">'
    "<empty/><p>t\xe9xt</p  ><q\r\n b='x'/><r><s/></r></doc>"
)


def test_xml_elt_counts_start_tags_and_empty_element_tags() -> None:
    assert [(e.name, XML[e.start : e.end]) for e in xml_elements(XML)] == [
        ("doc", XML[XML.index("<doc") :]),
        ("empty", "<empty/>"),
        ("p", "<p>t\xe9xt</p  >"),
        ("q", "<q\r\n b='x'/>"),
        ("r", "<r><s/></r>"),
        ("s", "<s/>"),
    ]
    data = XML.encode("latin-1")  # the declaration names the charset
    assert fragments.evaluate("elt", (2, 3), data, media_type="application/xml").data == (
        "<p>t\xe9xt</p  ><q\r\n b='x'/>".encode("latin-1")
    )


def test_xhtml_is_read_as_xml_and_takes_name_fragments() -> None:
    page = b'<html xmlns="http://www.w3.org/1999/xhtml"><body><p id="a">one</p><p name="b">two</p></body></html>'
    result = fragments.evaluate("name", ("a", "b"), page, media_type="application/xhtml+xml")
    assert result.data == b'<p id="a">one</p><p name="b">two</p>'
    assert fragments.evaluate("elt", (2, 2), page, media_type="application/xhtml+xml").data == b'<p id="a">one</p>'


def test_xml_elements_from_entities_have_no_start_tag_of_their_own() -> None:
    text = '<!DOCTYPE r [<!ENTITY e "<b>x</b>">]><r>&e;<c/></r>'
    assert [(e.name, text[e.start : e.end]) for e in xml_elements(text)] == [("r", "<r>&e;<c/></r>"), ("c", "<c/>")]


@pytest.mark.parametrize(
    ("codec", "bom"), [("utf-32-le", True), ("utf-32-be", True), ("utf-16-be", False), ("utf-16-le", False)]
)
def test_xml_in_utf_16_and_utf_32_is_recognized(codec: str, bom: bool) -> None:
    # XML 1.0 Appendix F: by the byte-order mark, or by the octets of "<?xml"
    text = ("\ufeff" if bom else "") + '<?xml version="1.0"?><r><a>\u00e9</a></r>'
    result = fragments.evaluate("elt", (1, 1), text.encode(codec), media_type="application/xml")
    assert result.data == "<a>\u00e9</a>".encode(codec)


def test_xml_entities_that_expand_without_end_are_a_limit() -> None:
    entities = "".join(f'<!ENTITY {b} "{("&" + a + ";") * 10}">' for a, b in zip("abcdefg", "bcdefgh", strict=True))
    bomb = f'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">{entities}]><l>&h;</l>'
    with pytest.raises(LimitError, match="amplification"):
        fragments.evaluate("elt", (0, 0), bomb.encode(), media_type="application/xml")


def test_what_element_fragments_do_not_apply_to() -> None:
    with pytest.raises(UnsupportedError, match="not well-formed: mismatched tag at line 1, column 8"):
        fragments.evaluate("elt", (0, 0), b"<a><b></a>", media_type="text/xml")
    with pytest.raises(UnsupportedError, match="name fragments are HTML's"):
        fragments.evaluate("name", ("a", "a"), b"<a id='a'/>", media_type="text/xml")
    with pytest.raises(UnsupportedError, match="for HTML and XML, not text/plain"):
        fragments.evaluate("elt", (0, 0), b"<a/>", media_type="text/plain")
    with pytest.raises(UnsupportedError, match="name fragments are HTML's"):  # elt on SGML: test_fragments_sgml.py
        fragments.evaluate("name", ("a", "a"), b"<a id='a'>", media_type="text/sgml")


# --- property tests: documents written here, with the extents recorded as they are written ---

NAMES = st.sampled_from(["a", "b", "para", "x-y", "\u00e9l"])
TEXT = st.text(alphabet=st.sampled_from(list("ab <>&\"'\r\n\u00e9\u20ac")), max_size=6)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@st.composite
def xml_documents(draw: st.DrawFn) -> tuple[str, list[tuple[str, int, int]]]:
    """A well-formed document and, per start tag in order, (name, start, end) of its element."""
    out: list[str] = []
    extents: list[list[object]] = []

    def element(depth: int) -> None:
        name = draw(NAMES)
        value = draw(TEXT).replace('"', "&quot;").replace("&", "&amp;").replace("<", "&lt;")
        record: list[object] = [name, sum(map(len, out)), 0]
        extents.append(record)
        tag = f'<{name} v="{value}"' if draw(st.booleans()) else f"<{name}"
        children = draw(st.integers(0, 3)) if depth < 3 else 0
        if not children and draw(st.booleans()):
            out.append(tag + "/>")
        else:
            out.append(tag + ">")
            for _ in range(children):
                out.append(_escape(draw(TEXT)))
                element(depth + 1)
            out.append(_escape(draw(TEXT)) + f"</{name}{draw(st.sampled_from(['', ' ', chr(13) + chr(10)]))}>")
        record[2] = sum(map(len, out))

    element(0)
    return "".join(out), [(str(n), int(s), int(e)) for n, s, e in extents]  # type: ignore[call-overload]


@settings(max_examples=200, deadline=None)
@given(xml_documents())
def test_xml_extents_match_the_document_as_written(document: tuple[str, list[tuple[str, int, int]]]) -> None:
    text, extents = document
    assert [(e.name, e.start, e.end) for e in xml_elements(text)] == extents


HTML_TEXT = st.lists(st.sampled_from(["a", " ", "<", ">", "&", '"', "\u00e9", "\r\n"]), max_size=6).map("".join)


@st.composite
def html_documents(draw: st.DrawFn) -> tuple[str, list[tuple[str, int, int]]]:
    """Properly nested, explicitly closed elements in <body>, CRLF line endings: each ends with its end tag."""
    out = ["<!DOCTYPE html><html><head></head><body>"]
    extents: list[list[object]] = []

    def element(depth: int) -> None:
        # no <a> inside <a>: an HTML5 parser closes the outer one there (tested above)
        names = ["div", "span", "section", "em", "a", "p"] if depth == 0 else ["span", "em", "b", "code"]
        name = draw(st.sampled_from(names))
        record: list[object] = [name, sum(map(len, out)), 0]
        extents.append(record)
        out.append(f'<{name} title="{draw(HTML_TEXT).replace(chr(34), "&quot;")}">')
        for _ in range(draw(st.integers(0, 2)) if depth < 3 else 0):
            out.append(_escape(draw(HTML_TEXT)))
            element(depth + 1)
        out.append(_escape(draw(HTML_TEXT)) + f"</{name}>")
        record[2] = sum(map(len, out))

    for _ in range(draw(st.integers(1, 3))):
        element(0)
    out.append("</body></html>")
    return "".join(out), [(str(n), int(s), int(e)) for n, s, e in extents]  # type: ignore[call-overload]


@settings(max_examples=150, deadline=None)
@given(html_documents())
def test_html_extents_of_explicitly_closed_elements(document: tuple[str, list[tuple[str, int, int]]]) -> None:
    text, extents = document
    assert [(e.name, e.start, e.end) for e in html_elements(text)][3:] == extents  # after html, head, body


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["<p>", "</p>", "<li>", "<ul>", "</ul>", "<b>", "</b>", "<i>", "</i>", "<br>", "<td>", "<tr>",
             "<table>", "</table>", "<div>", "</div>", "x", "\r\n", "<img src=a>", "</span>", "<option>"]
        ),
        max_size=30,
    ).map("".join)
)
def test_any_tag_soup_gives_each_start_tag_a_sound_extent(text: str) -> None:
    data = text.encode()
    for element in html_elements(text):
        assert 0 <= element.start < element.end <= len(text)
        assert text[element.start :].lower().startswith("<" + element.name)
        result = fragments.evaluate("elt", (element.number, element.number), data, media_type="text/html", charset="utf-8")
        assert result.data == text[element.start : element.end].encode()


def test_html_an_element_closed_by_text_ends_where_the_text_begins() -> None:
    # found by a probe (2026-12-01): an element the parser closes on a character token ran to the end of the
    # document. WHATWG "in head", anything else (text that is not whitespace): "pop the current node (which will
    # be the head element)"; "in column group", anything else: pop the colgroup; "in head noscript" (scripting
    # off), anything else: pop the noscript, then the head.
    assert spans("<head><title>t</title> hello<p>x</p>")[:2] == [
        ("head", "<head><title>t</title> "),  # the whitespace goes in the head (in head: insert the character)
        ("title", "<title>t</title>"),
    ]
    assert spans("<table><colgroup><col>x<tr><td>1</table>")[1:3] == [("colgroup", "<colgroup><col>"), ("col", "<col>")]
    assert spans("<head><noscript>hi</noscript>") == [("head", "<head><noscript>"), ("noscript", "<noscript>")]
    assert spans("<head><meta charset=utf-8>&amp;<p>y")[0] == ("head", "<head><meta charset=utf-8>")
    assert spans("<head><!--c-->z")[0] == ("head", "<head><!--c-->")


HEAD_ITEMS = st.lists(
    st.sampled_from(["<title>t</title>", "<meta charset=utf-8>", "<link rel=x>", " ", "\r\n", "<!-- c -->",
                     "<style>s</style>", "<noscript>n</noscript>", "<script>s</script>", "<base href=x>"]),
    max_size=5,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(HEAD_ITEMS, HEAD_ITEMS, st.sampled_from(["hello", "&amp;", "<p>", "<div>", "\u00e9", "\x00"]))
def test_html_the_head_holds_what_html5lib_puts_in_it(first: str, second: str, closer: str) -> None:
    # the oracle: html5lib's own tree of the same text; the head's extent holds the start tags of the head's
    # elements in that tree, and no start tag of the body's (no </head> closes it here: a <title> after </head>
    # goes into the head, which keeps the extent it ended with, as the module says)
    from html5lib import parse

    text = f"<html><head>{first}{closer}{second}<p>after</p></html>"
    tree = parse(text, namespaceHTMLElements=False)
    in_head = sum(isinstance(e.tag, str) for e in tree.find("head").iter()) - 1  # not comments, not the head
    table = html_elements(text)
    head = next(e for e in table if e.name == "head")
    inside = [e for e in table if head.start < e.start < head.end]
    assert len(inside) == in_head, (text, text[head.start:head.end])
    assert all(e.end <= head.end for e in inside)


def test_nel_is_no_line_ending_to_the_parsers() -> None:
    # found by a probe (2026-12-01): the parsers read the CRLF-canonical text, where U+0085 (NEL) is a line
    # ending (PDI-GRAMMAR.md §3), so id="a<NEL>b" was "a\nb" and <p<NEL>id=y> a p with the id y. Neither HTML
    # (the tag name state ends at tab, LF, FF, space) nor XML 1.0 (§2.11: CR and LF only) ends a line at NEL.
    page = '<p id="a\x85b">x</p>\r\x85<p\x85id=y>z</p>\x85<q>w</q>'.encode()
    result = fragments.evaluate("name", ("a\x85b", "a\x85b"), page, media_type="text/html", charset="utf-8")
    assert result.data == b'<p id="a\r\nb">x</p>'  # the selection is of the CRLF-canonical text, as char's is
    with pytest.raises(NotFoundError):
        fragments.evaluate("name", ("y", "y"), page, media_type="text/html", charset="utf-8")
    # the element named "p<NEL>id=y" is not closed by </p>: it runs to the end; positions count NEL as CRLF
    canonical = '<p id="a\r\nb">x</p>\r\n<p\r\nid=y>z</p>\r\n<q>w</q>'
    assert [(e.start, e.end) for e in fragments.markup.markup_elements("html", page.decode())] == [
        (0, canonical.index("\r\n<p")), (canonical.index("<p\r\n"), len(canonical)), (canonical.index("<q>"), len(canonical))
    ]
    with pytest.raises(UnsupportedError, match="not well-formed"):  # XML 1.0: NEL is no white space in a tag
        fragments.evaluate("elt", (1, 1), "<r>\x85<b\x85/></r>".encode(), media_type="application/xml")
    xml = '<r>\x85<a x="1\x852"/>\r\x85<b/></r>'.encode()
    assert fragments.evaluate("elt", (1, 2), xml, media_type="application/xml").data == b'<a x="1\r\n2"/>\r\n<b/>'


NEL_PIECES = ["<p>", "</p>", "<b id=\"a\x85b\">", "</b>", "<i name='\x85'>", "</i>", "<p\x85x>", "x", "\x85", "\r\x85",
              "\r", "\n", "\r\n", " ", "<br>", "<div title=\"\r\x85\">", "</div>"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(NEL_PIECES), max_size=20).map("".join))
def test_html_start_tags_are_where_the_standard_library_parser_finds_them(text: str) -> None:
    # the oracle: html.parser (the standard library's tokenizer, which reads the text as it is), its positions
    # moved to the CRLF-canonical text by to_crlf of what comes before
    from html.parser import HTMLParser

    from pdi.fragments.markup import markup_elements
    from pdi.fragments.text.lines import to_crlf

    found: list[tuple[str, int, dict[str, str]]] = []
    lines = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]

    class Tags(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            line, column = self.getpos()
            # an attribute's CR and CRLF as LF: the input stream's preprocessing, which html.parser leaves out
            values = {k: (v or "").replace("\r\n", "\n").replace("\r", "\n") for k, v in attrs}
            found.append((tag, len(to_crlf(text[: lines[line - 1] + column])), values))

    Tags(convert_charrefs=True).feed(text)
    ours = [(e.name, e.start, e.attributes) for e in markup_elements("html", text)]
    assert ours == found
