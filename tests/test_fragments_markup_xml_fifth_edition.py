"""XML 1.0 Fifth Edition's names under ``elt``: expat knows the Fourth Edition's, pdi must read the Fifth's.

The expected answers are XML 1.0 Fifth Edition §2.3 (productions [4] NameStartChar and [4a] NameChar, written out
below as :func:`fifth_start` and :func:`fifth_name`), the positions each generated document is built with, and
lxml (libxml2, which implements the Fifth Edition's names), asked whether each document is well-formed.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from pdi import fragments
from pdi.errors import UnsupportedError
from pdi.fragments.markup import xml_elements

#: XML 1.0 Fifth Edition §2.3 [4] NameStartChar, ':' left out (libxml2 reads names as namespaces' QNames).
START_RANGES = (
    (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A), (0xC0, 0xD6), (0xD8, 0xF6), (0xF8, 0x2FF), (0x370, 0x37D),
    (0x37F, 0x1FFF), (0x200C, 0x200D), (0x2070, 0x218F), (0x2C00, 0x2FEF), (0x3001, 0xD7FF), (0xF900, 0xFDCF),
    (0xFDF0, 0xFFFD), (0x10000, 0xEFFFF),
)
#: [4a] NameChar beyond NameStartChar.
NAME_ONLY_RANGES = ((0x2D, 0x2E), (0x30, 0x39), (0xB7, 0xB7), (0x300, 0x36F), (0x203F, 0x2040))


def fifth_start(char: str) -> bool:
    return any(lo <= ord(char) <= hi for lo, hi in START_RANGES)


def fifth_name(char: str) -> bool:
    return fifth_start(char) or any(lo <= ord(char) <= hi for lo, hi in NAME_ONLY_RANGES)


def chars_in(ranges: tuple[tuple[int, int], ...]) -> st.SearchStrategy[str]:
    return st.one_of(*(st.integers(lo, hi).map(chr) for lo, hi in ranges))


# Fourth Edition name characters are few past U+FFFF (none) and in the ranges Unicode 2.0 left unassigned: most
# drawn here are not expat's; a few ASCII ones keep names apart that differ by one.
start_chars = st.one_of(chars_in(START_RANGES), st.sampled_from("ab"))
name_chars = st.one_of(start_chars, chars_in(NAME_ONLY_RANGES))
names = st.builds(lambda first, rest: first + "".join(rest), start_chars, st.lists(name_chars, max_size=3))


def lxml_well_formed(data: bytes) -> bool:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return False
    return True


@st.composite
def documents(draw: st.DrawFn) -> tuple[str, list[tuple[str, int, int, dict[str, str]]]]:
    """A well-formed document of Fifth Edition names, and each element's name, extent and attributes, in the order
    of their start tags."""
    pieces: list[str] = []
    elements: list[tuple[str, int, int, dict[str, str]]] = []
    length = 0

    def put(piece: str) -> None:
        nonlocal length
        pieces.append(piece)
        length += len(piece)

    def element(depth: int) -> None:
        name = draw(names)
        keys = draw(st.lists(names, max_size=2, unique=True))
        values = [draw(st.text(st.one_of(name_chars, st.sampled_from(" t&")), max_size=4)) for _ in keys]
        attributes = dict(zip(keys, values, strict=True))
        written = "".join(f" {k}='{v.replace('&', '&amp;')}'" for k, v in attributes.items())
        number, start = len(elements), length
        elements.append((name, start, -1, attributes))
        if depth >= 3 or draw(st.booleans()):
            put(f"<{name}{written}/>")
        else:
            put(f"<{name}{written}>")
            for _ in range(draw(st.integers(0, 3))):
                if draw(st.booleans()):
                    element(depth + 1)
                else:  # text, a comment, a processing instruction whose target is a name, CDATA
                    put(draw(st.sampled_from(["{}", "<!--{} -->", "<?p{} x?>", "<![CDATA[{}]]>"])).format(
                        draw(names)))
            put(f"</{name}>")
        elements[number] = (name, start, length, attributes)

    element(0)
    return "".join(pieces), elements


@settings(max_examples=200)
@given(documents())
def test_a_fifth_edition_document_is_read_with_its_elements_where_they_are(
    built: tuple[str, list[tuple[str, int, int, dict[str, str]]]],
) -> None:
    text, expected = built
    assert lxml_well_formed(text.encode("utf-8"))
    assert [(e.name, e.start, e.end, e.attributes) for e in xml_elements(text)] == expected
    last = len(expected) - 1
    for codec in ("utf-8", "utf-16"):  # octets: a passage is the octets of its characters, whatever they are in
        data = text.encode(codec)
        _, start, end, _ = expected[last]
        got = fragments.evaluate("elt", (last, last), data, media_type="application/xml").data
        assert got == text[start:end].encode("utf-16-le" if codec == "utf-16" else codec)


@settings(max_examples=200)
@given(st.one_of(chars_in(NAME_ONLY_RANGES), st.just("\U000f0000")), names, st.booleans())
def test_a_name_that_begins_with_no_name_start_character_is_not_well_formed(first: str, rest: str, empty: bool) -> None:
    # [5] Name ::= NameStartChar (NameChar)*: "-", ".", digits, U+00B7, U+0300-U+036F, U+203F-U+2040 only after
    # the first character; U+F0000 (a private use plane) in no name
    text = f"<{first}{rest}/>" if empty else f"<r><{first}{rest}></{first}{rest}></r>"
    assert not fifth_start(first)
    assert not lxml_well_formed(text.encode("utf-8"))
    with pytest.raises(UnsupportedError, match="not well-formed"):
        xml_elements(text)


@settings(max_examples=200)
@given(names, names)
def test_an_end_tag_of_another_name_is_not_well_formed(a: str, b: str) -> None:
    # §3 element type match: the end tag's name is the start tag's; two Fifth Edition names expat is given written
    # otherwise must still differ
    text = f"<{a}></{b}>"
    assert lxml_well_formed(text.encode("utf-8")) == (a == b)
    if a == b:
        assert [(e.name, e.start, e.end) for e in xml_elements(text)] == [(a, 0, len(text))]
    else:
        with pytest.raises(UnsupportedError, match="mismatched tag"):
            xml_elements(text)


@settings(max_examples=200)
@given(names, names)
def test_an_attribute_twice_is_not_well_formed(a: str, b: str) -> None:
    # §3.1 Unique Att Spec
    text = f"<r {a}='1' {b}='2'/>"
    assert lxml_well_formed(text.encode("utf-8")) == (a != b)
    if a != b:
        assert xml_elements(text)[0].attributes == {a: "1", b: "2"}
    else:
        with pytest.raises(UnsupportedError, match="duplicate attribute"):
            xml_elements(text)


def test_the_names_the_fourth_edition_lacked() -> None:
    # U+01CA (a letter Unicode 2.0 classed otherwise), U+0660 (a digit, now a name may begin with it), U+0346 (a
    # combining mark), U+203F (a connector), U+1F600 (past U+FFFF)
    text = "<r>\r\n<\u01caa x='\u01ca'>\u01ca</\u01caa><\u0660/><a\u0346\u203f/><\U0001f600>\U0001f600</\U0001f600></r>"
    assert lxml_well_formed(text.encode("utf-8"))
    spans = [(e.name, text[e.start : e.end], e.attributes) for e in xml_elements(text)]
    assert spans == [
        ("r", text, {}),
        ("\u01caa", "<\u01caa x='\u01ca'>\u01ca</\u01caa>", {"x": "\u01ca"}),
        ("\u0660", "<\u0660/>", {}),
        ("a\u0346\u203f", "<a\u0346\u203f/>", {}),
        ("\U0001f600", "<\U0001f600>\U0001f600</\U0001f600>", {}),
    ]
    data = text.encode("utf-8")
    assert fragments.evaluate("elt", (1, 1), data, media_type="application/xml").data == (
        "<\u01caa x='\u01ca'>\u01ca</\u01caa>".encode()
    )
    assert fragments.evaluate("elt", (4, 4), data, media_type="application/xml").data == (
        "<\U0001f600>\U0001f600</\U0001f600>".encode()
    )


def test_a_character_reference_in_an_entity_value_is_a_name_where_the_entity_is_referred_to() -> None:
    # §4.5: a character reference in an entity's literal value is replaced when the entity is declared; the
    # replacement text is read as content where the entity is referred to (so "<&#x1CA;/>" is the element U+01CA)
    for reference in ("&#x1CA;", "&#452;", "&#x01CA;", "&#x1F600;", "&#128512;"):
        text = f"<!DOCTYPE r [<!ENTITY e '<{reference}/>'>]><r>&e;<s/></r>"
        assert lxml_well_formed(text.encode("utf-8")), reference
        assert [(e.name, text[e.start : e.end]) for e in xml_elements(text)] == [("r", "<r>&e;<s/></r>"), ("s", "<s/>")]
    text = "<!DOCTYPE r [<!ENTITY e '<&#x346;/>'>]><r>&e;</r>"  # U+0346 may not begin a name
    assert not lxml_well_formed(text.encode("utf-8"))
    with pytest.raises(UnsupportedError, match="not well-formed"):
        xml_elements(text)


def test_an_id_holding_such_characters_is_found_as_written() -> None:
    # the values of attributes come back as the document holds them, whether written, referred to or an entity's
    page = (
        "<!DOCTYPE html [<!ENTITY e '\u01ca&#x1F600;'>]><html xmlns='http://www.w3.org/1999/xhtml'><body>"
        "<p id='\u01ca\U0001f600'>one</p><p id='&e;x'>two</p><p id='&#x1CA;&#x1F600;y'>three</p></body></html>"
    ).encode()
    for name, passage in (("\u01ca\U0001f600", "one"), ("\u01ca\U0001f600x", "two"), ("\u01ca\U0001f600y", "three")):
        result = fragments.evaluate("name", (name, name), page, media_type="application/xhtml+xml")
        assert result.data.decode().endswith(f">{passage}</p>")


def test_a_text_of_more_different_characters_than_are_written_over_is_read_as_before() -> None:
    from pdi.fragments.markup.xml_names import MAX_CHARACTERS

    body = "".join(chr(c) for c in range(0x4E00, 0x4E00 + MAX_CHARACTERS // 2))  # CJK: the Fourth Edition's too
    body += "".join(chr(c) for c in range(0x20000, 0x20000 + MAX_CHARACTERS // 2 + 2))  # past U+FFFF: not
    text = f"<r>{body}<a/></r>"
    assert [(e.name, text[e.start : e.end]) for e in xml_elements(text)] == [("r", text), ("a", "<a/>")]
    with pytest.raises(UnsupportedError, match="not well-formed"):  # so many: not written over, as before
        xml_elements(f"<r>{body}<\U00020000/></r>")


def test_a_byte_order_mark_stays_one() -> None:
    # U+FEFF is a Fifth Edition name character ([#xFDF0-#xFFFD]) that expat's names lack, and at the start of the
    # text the byte-order mark (XML 1.0 §4.3.3), which is no character of the document
    for text in ("\ufeff<a/>", "\ufeff<\u01caa/>", "\ufeff<a\ufeff>\ufeff</a\ufeff>"):
        assert lxml_well_formed(text.encode("utf-8"))
        assert [(e.name, e.start, e.end) for e in xml_elements(text)] == [(text[2:text.index(">")].rstrip("/"), 1, len(text))]


@pytest.mark.parametrize("digits", ["9" * 5000, "x" + "f" * 5000, "x" + "0" * 5000 + "1CA", "0" * 5000 + "458"])
def test_a_character_reference_of_thousands_of_digits_is_read_as_any(digits: str) -> None:
    # §4.1 [66] CharRef: any number of digits, zeros leading; past U+10FFFF no Char (WFC: Legal Character)
    for text in (f"<\u01caa>&#{digits};</\u01caa>", f"<!DOCTYPE a [<!ENTITY e '<&#{digits};/>'>]><a>&e;<b/></a>",
                 f"<!DOCTYPE a [<!ENTITY % p SYSTEM 'p.ent'> %p; <!ENTITY e '&#{digits};'>]><a><b/></a>"):
        plain = text.replace("<!ENTITY % p SYSTEM 'p.ent'> %p; ", "")  # lxml reads the last one's entity without
        if lxml_well_formed(plain.encode()):
            assert xml_elements(text)[-1].name in ("\u01caa", "b")
        else:
            with pytest.raises(UnsupportedError, match="not well-formed"):
                xml_elements(text)


@pytest.mark.parametrize("written", ["\U0001f600\U0001f600", "\u01ca\u01ca", "\r\n\U0001f600\U0001f600", "\U0001f600\r\n"])
def test_where_a_document_is_not_well_formed_counts_characters_as_written(written: str) -> None:
    # expat's line and column of the same error with two ASCII letters in their place (expat counts a character
    # one column, and would count each four-octet one written over two)
    import xml.parsers.expat

    ascii_text = f"<a>{written}</b>".replace("\U0001f600", "x").replace("\u01ca", "x")
    parser = xml.parsers.expat.ParserCreate()
    with pytest.raises(xml.parsers.expat.ExpatError) as expected:
        parser.Parse(ascii_text, True)
    where = f"at line {expected.value.lineno}, column {expected.value.offset}"
    with pytest.raises(UnsupportedError, match=f"mismatched tag {where}$"):
        xml_elements(f"<a>{written}</b>")
