"""Marks written into an HTML page for a passage (pdi.server.replay.marks): where they go, and that they change nothing else."""

from __future__ import annotations

import re

import html5lib
from hypothesis import example, given, settings
from hypothesis import strategies as st

from pdi.fragments import Range, evaluate
from pdi.server.replay.marks import MARK_STYLE, TARGET, passage_insertions, text_runs


def marked(source: bytes, ranges: list[Range], scheme: str) -> bytes:
    out, last = [], 0
    for at, markup in passage_insertions(source, ranges, scheme):
        out += [source[last:at], markup.encode()]
        last = at
    return b"".join(out) + source[last:]


def test_text_runs_leave_out_tags_comments_and_raw_text() -> None:
    source = b"<p class='a>b'>one<!-- x<y --><script>if (a<b) {}</script>two &amp; three</p>"
    assert [source[a:b] for a, b in text_runs(source)] == [b"one", b"two &amp; three"]


def test_char_range_marks_only_text_and_never_splits_a_character_reference() -> None:
    source = b"<p>AB<b>CD</b>E&amp;F</p>"
    # bytes 4..17 run from "B" through the "m" inside "&amp;": the reference is kept whole
    ranges = [Range(4, 17, 4, 17)]
    assert marked(source, ranges, "char") == (
        f'<p>A<style>{MARK_STYLE}</style><pdi-mark id="{TARGET}">B</pdi-mark><b><pdi-mark>CD</pdi-mark></b>'
        "<pdi-mark>E&amp;</pdi-mark>F</p>"
    ).encode()


def test_elt_marks_the_element_and_puts_the_target_before_it() -> None:
    source = b'<div><p id="x">one</p></div>'
    result = evaluate("elt", [1, 1], source, media_type="text/html", charset="utf-8")
    assert marked(source, list(result.ranges), "elt") == (
        f'<div><style>{MARK_STYLE}</style><pdi-mark id="{TARGET}"></pdi-mark>'
        '<p data-pdi-passage id="x"><pdi-mark>one</pdi-mark></p></div>'
    ).encode()


def test_an_element_with_no_text_still_gets_the_target_and_the_outline() -> None:
    source = b'<p>a<img src="x.png" alt="x">b</p>'
    result = evaluate("elt", [1, 1], source, media_type="text/html", charset="utf-8")
    assert marked(source, list(result.ranges), "elt") == (
        f'<p>a<style>{MARK_STYLE}</style><pdi-mark id="{TARGET}"></pdi-mark><img data-pdi-passage src="x.png" alt="x">b</p>'
    ).encode()


def test_a_char_range_inside_a_tag_puts_the_target_after_the_tag() -> None:
    source = b'<p title="abc">text</p>'
    assert marked(source, [Range(5, 8, 5, 8)], "char") == (
        f'<p title="abc"><style>{MARK_STYLE}</style><pdi-mark id="{TARGET}"></pdi-mark>text</p>'
    ).encode()


def test_no_range_no_mark() -> None:
    assert passage_insertions(b"<p>a</p>", [], "char") == []


_PIECES = ["<p>", "</p>", "<b>", "</b>", "<i class='q>'>", "</i>", "word", " ", "\n", "&amp;", "&#233;", "é",
           "<!-- c<b> -->", "<script>a<b</script>", "<style>p{}</style>", "<br>", "<title>t<i></title>"]


def _text_of(document: bytes) -> str:
    """The text a browser's parser makes of ``document`` (html5lib), without the marks' style."""
    tree = html5lib.parse(document, treebuilder="etree", namespaceHTMLElements=False,
                          transport_encoding="utf-8")
    parts: list[str] = []

    def walk(element: object) -> None:
        tag = getattr(element, "tag", "")
        if not isinstance(tag, str):  # a comment: no text of the page
            parts.append(getattr(element, "tail", "") or "")
            return
        if tag == "style" and (getattr(element, "text", "") or "").startswith("pdi-mark{"):
            parts.append(getattr(element, "tail", "") or "")
            return
        parts.append(getattr(element, "text", "") or "")
        for child in element:  # type: ignore[attr-defined]
            walk(child)
        parts.append(getattr(element, "tail", "") or "")

    walk(tree)
    return "".join(parts)


@settings(max_examples=200, deadline=None)
@example(["</p>", "</p>", "<style>p{}</style>", "<script>a<b</script>"], 35, 35, "elt")  # "<b" inside the script
@given(st.lists(st.sampled_from(_PIECES), max_size=25), st.integers(0, 400), st.integers(0, 400),
       st.sampled_from(["char", "elt"]))
def test_marks_change_no_text_and_wrap_only_text(pieces: list[str], a: int, b: int, scheme: str) -> None:
    source = "".join(pieces).encode()
    start, end = sorted((min(a, len(source)), min(b, len(source))))
    while start < len(source) and source[start] & 0xC0 == 0x80:  # a range starts and ends at characters
        start += 1
    while end < len(source) and source[end] & 0xC0 == 0x80:
        end += 1
    end = max(start, end)
    result = marked(source, [Range(start, end, start, end)], scheme)
    # the same text, read by another parser, with the marks in: nothing was cut or shown as text
    # (white space aside: what the parser drops before <body> is kept once a mark opens the body)
    assert _text_of(result).split() == _text_of(source).split()
    # every mark encloses only text of the range (or is the empty target)
    assert result.count(b"<pdi-mark") == result.count(b"</pdi-mark>")


def test_selection_pieces_carry_crlf_canonical_positions() -> None:
    from pdi.server.replay.marks import selection_insertions

    source = "<p>a\nb</p>\r\n<p>c &amp; é</p>".encode()
    # CRLF-canonical: "<p>a\r\nb</p>\r\n<p>c &amp; é</p>": "a" at 3, the second <p> at 13, "c " at 16, "&amp;" 18-23, " é" at 23
    canonical_length = len("<p>a\r\nb</p>\r\n<p>c &amp; é</p>")
    got = marked_with(source, selection_insertions(source, "utf-8", 0, canonical_length, [(0, 0), (1, 13)]))
    assert got == (
        '<p data-pdi-e="0"><pdi-t data-at="3">a\nb</pdi-t></p>\r\n<p data-pdi-e="1"><pdi-t data-at="16">c </pdi-t>'
        '<pdi-t data-at="18" data-end="23">&amp;</pdi-t><pdi-t data-at="23"> é</pdi-t></p>'
    ).encode()


def test_selection_pieces_refuse_a_count_that_does_not_agree() -> None:
    import pytest

    from pdi.errors import UnsupportedError
    from pdi.server.replay.marks import selection_insertions

    with pytest.raises(UnsupportedError, match="could not be counted"):
        selection_insertions(b"<p>a</p>", "utf-8", 0, 99, [])


def marked_with(source: bytes, insertions: list[tuple[int, str]]) -> bytes:
    out, last = [], 0
    for at, markup in insertions:
        out += [source[last:at], markup.encode()]
        last = at
    return b"".join(out) + source[last:]


_PIECE = re.compile(rb'<pdi-t data-at="(\d+)"(?: data-end="\d+")?>(.*?)</pdi-t>', re.S)


@settings(max_examples=150, deadline=None)
@example(["<p>", "a", "\r\n", "word", "</p>"], 20, 22)  # "a\r": it ends between the CR and the LF
@given(st.lists(st.sampled_from([*_PIECES, "\r\n"]), max_size=25), st.integers(0, 400), st.integers(0, 400))
def test_a_passage_marked_in_a_page_replayed_for_selection_leaves_its_pieces_counting(
    pieces: list[str], a: int, b: int
) -> None:
    # A page opened at #char=a,b for selection: the passage's marks and the selection's pieces in one page. Each
    # piece still holds the text of the CRLF-canonical source at its data-at (a selection's names count from it),
    # no mark stands inside a piece, and the marks enclose the text they enclose in the page replayed without pieces.
    from pdi.fragments.text.lines import to_crlf
    from pdi.mhtml import Aggregate
    from pdi.server.replay.origin import selection_marks

    source = ("<!DOCTYPE html>\n" + "".join(pieces)).encode()
    canonical = to_crlf(source.decode())
    start, end = sorted((min(a, len(canonical)), min(b, len(canonical))))
    result = evaluate("char", [start, end], source, media_type="text/html", charset="utf-8")
    passage = passage_insertions(source, list(result.ranges), "char")
    aggregate = Aggregate.parse(b"MIME-Version: 1.0\r\nContent-Type: text/html; charset=utf-8\r\n\r\n" + source)
    page = marked_with(source, selection_marks(aggregate, passage)).split(b"<script>")[0]
    for found in _PIECE.finditer(page):
        text = to_crlf(found.group(2).decode())
        assert b"pdi-mark" not in found.group(2)
        assert canonical[int(found.group(1)):int(found.group(1)) + len(text)] == text
    without_pieces = re.sub(rb'</?pdi-t[^>]*>| data-pdi-e="\d+"', b"", page)
    assert re.sub(rb"</?pdi-mark[^>]*>|<style>pdi-mark[^<]*</style>", b"", without_pieces) == source
    marks = re.compile(rb"<pdi-mark[^>]*>(.*?)</pdi-mark>", re.S)
    assert [m.split() for m in marks.findall(without_pieces)] == [m.split() for m in marks.findall(marked(source, list(result.ranges), "char"))]
