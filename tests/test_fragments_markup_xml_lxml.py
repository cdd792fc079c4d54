"""``elt`` on XML against lxml (libxml2): generated documents, their elements where they are built.

Each document is built piece by piece (declarations, a DTD's internal subset with entities and an ID attribute,
namespaces, ``xml:id``, CDATA, comments, processing instructions, character and entity references, line
endings of every kind, U+0085 and U+2028 in text, names of XML 1.0 Fifth Edition), in UTF-8 with or without a
byte-order mark, UTF-16 with one, UTF-16LE or BE by their declaration, or ISO-8859-1, so that where each element
begins and ends is known. lxml is asked whether it is well-formed, which elements it has, their names, and the
line each start tag ends on (libxml2's ``sourceline``, which counts LF alone: a lone CR is no line to it).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from pdi import fragments
from pdi.fragments.markup import xml_elements

ASCII = ["a", "b", "doc", "x-y", "p.q", "_u", "n1"]
LATIN = ["\u00e9l", "\u00c0b"]
FIFTH = ["\u01caa", "\u0660x", "a\u0346", "\U0001f600"]  # names of the Fifth Edition only
ENCODING_NAMES = {"utf-8": "UTF-8", "utf-16": "UTF-16", "iso-8859-1": "ISO-8859-1", "utf-16-le": "UTF-16",
                  "utf-16-be": "UTF-16"}
ENTITY_VALUES = ["text", "<b>in</b>", "&#233;", "&#38;#60;c/&#62;", "x&#x1CA;", "<c/>t<c/>", "&amp;"]
Built = tuple[str, str, bytes, list[tuple[str, int, int]]]


@st.composite
def documents(draw: st.DrawFn) -> Built:
    """A well-formed document: its codec, its text, its octets, and each written element's name and extent."""
    codec = draw(st.sampled_from(sorted(ENCODING_NAMES)))
    pool = ASCII + LATIN + ([] if codec == "iso-8859-1" else FIFTH)
    nl = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    pieces: list[str] = []
    elements: list[tuple[str, int, int]] = []
    length = 0

    def put(piece: str) -> None:
        nonlocal length
        pieces.append(piece)
        length += len(piece)

    bom = codec == "utf-8" and draw(st.booleans())
    if codec != "utf-8" or draw(st.booleans()):
        standalone = draw(st.sampled_from(["", " standalone='yes'", ' standalone="no"']))
        put(f'<?xml version="1.0" encoding="{ENCODING_NAMES[codec]}"{standalone}?>{nl}')
    root = draw(st.sampled_from(pool))
    entities: dict[str, str] = {}
    if draw(st.booleans()):
        subset = []
        for k in range(draw(st.integers(0, 3))):
            value = draw(st.sampled_from(ENTITY_VALUES))
            entities[f"e{k}"] = value if codec != "iso-8859-1" else value.replace("1CA", "E9")
            subset.append(f"<!ENTITY e{k} '{entities[f'e{k}']}'>")
        subset.append(f"<!ATTLIST {root} key ID #IMPLIED dflt CDATA 'dv'>")
        subset += [d for d in ("<!-- c -->", "<?pi data?>", f"<!ELEMENT {root} ANY>") if draw(st.booleans())]
        put(f"<!DOCTYPE {root} [{nl.join(subset)}]>{nl}")
    if draw(st.booleans()):
        put(f"<!-- before -->{nl}")

    def element(depth: int, name: str) -> None:
        number, start = len(elements), length
        elements.append((name, start, -1))
        attributes = []
        if depth == 0 and draw(st.booleans()):
            attributes.append('xmlns="http://e.example/"')
        prefixed = draw(st.booleans())
        if prefixed:
            attributes.append("xmlns:p='http://p.example/'")
        if draw(st.booleans()):
            attributes.append(f"xml:id='i{number}'")
        if draw(st.booleans()):
            attributes.append(f'id="v{number}&amp;&#x41;\x85"')
        if depth == 0 and draw(st.booleans()):
            attributes.append(f"key='k{number}'")
        plain = [e for e, v in entities.items() if "<" not in v and "&#38;" not in v]
        if plain and draw(st.booleans()):
            attributes.append(f"ent='&{draw(st.sampled_from(plain))};'")
        space = draw(st.sampled_from([" ", nl, "\t"]))
        head = name + "".join(space + a for a in attributes)
        if depth >= 3 or draw(st.booleans()):
            put(f"<{head}{draw(st.sampled_from(['', ' ', nl]))}/>")
        else:
            put(f"<{head}>")
            for _ in range(draw(st.integers(0, 4))):
                kind = draw(st.integers(0, 7))
                if kind <= 2:
                    element(depth + 1, draw(st.sampled_from(pool + (["p:q"] if prefixed else []))))
                elif kind == 3:
                    put(draw(st.sampled_from(["t", "&lt;&#xE9;&#233;", nl, "]]&gt;", "\u00e9", "\x85", "\r\x85",
                                              "\r\n\x85", "\xa0" if codec == "iso-8859-1" else "\u2028"])))
                elif kind == 4:
                    put(f"<![CDATA[<x>{nl}&]]>")
                elif kind == 5:
                    put(f"<!--{nl}c-->")
                elif kind == 6:
                    put(f"<?t{nl}x?>")
                elif entities:
                    put(f"&{draw(st.sampled_from(sorted(entities)))};")
            put(f"</{name}{draw(st.sampled_from(['', ' ', nl]))}>")
        elements[number] = (name, start, length)

    element(0, root)
    if draw(st.booleans()):
        put(f"{nl}<?after x?>")
    text = "".join(pieces)
    return codec, text, (("\ufeff" if bom else "") + text).encode(codec), elements


def _from_an_entity(element: etree._Element) -> bool:
    parent = element.getparent()
    while parent is not None:
        if isinstance(parent, etree._Entity):
            return True
        parent = parent.getparent()
    return False


def _qualified(element: etree._Element) -> str:
    local = etree.QName(element).localname
    return f"{element.prefix}:{local}" if element.prefix else local


@settings(max_examples=150, deadline=None)
@given(documents())
def test_elements_are_where_they_were_written_and_what_lxml_reads(built: Built) -> None:
    codec, text, data, expected = built
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    root = etree.fromstring(data, parser)  # well-formed, as lxml reads it
    written = [e for e in root.iter() if isinstance(e.tag, str) and not _from_an_entity(e)]
    assert [_qualified(e) for e in written] == [name for name, _, _ in expected]
    # the line each start tag ends on, as libxml2 counts lines
    assert [e.sourceline for e in written] == [text[: text.index(">", start)].count("\n") + 1 for _, start, _ in expected]
    decoded = data.decode(codec).removeprefix("\ufeff")
    assert [e.name for e in xml_elements(decoded)] == [name for name, _, _ in expected]
    out = "utf-16-le" if codec == "utf-16" else codec  # (a passage has no byte-order mark)
    for number, (_, start, end) in enumerate(expected):
        passage = fragments.evaluate("elt", (number, number), data, media_type="application/xml").data
        # the CRLF-canonical source's characters (PDI-GRAMMAR.md §3), NEL a line ending as char counts it
        assert passage == re.sub("\r\n|\r\x85|\r|\n|\x85", "\r\n", text[start:end]).encode(out)
