"""Which part a reference means when the page is not UTF-8, and when it has a fragment.

A browser percent-encodes a reference's query with the page's encoding before it asks for
it (WHATWG URL §4.4, query state; RFC 2557 §8.2 compares what the reference resolves to),
decodes a style sheet that declares no charset with its referrer's encoding (CSS Syntax
§3.2), and (Chromium) finds ``a.png#x`` only under the label ``a.png#x``. Expected bytes
are worked out by hand from the WHATWG indexes: in windows-1251 я is 0xFF, ц 0xF6, ё 0xB8;
in UTF-8 я is D1 8F, ф D1 84, о D0 BE, н D0 BD; in Shift_JIS ≡ is 81 DF; ‽ (U+203D, 8253)
is in neither, so it is sent as ``%26%238253%3B``. Where Chromium 156 writes a URL
otherwise than the page's encoding says (the URL of an ``@import``, a ``style``
attribute's ``url()``: UTF-8), that is noted.
"""

from __future__ import annotations

from pdi.mhtml import Aggregate, parse
from pdi.mhtml.check import check
from pdi.mhtml.unpack import plan


def mhtml(*parts: tuple[str, bytes]) -> bytes:
    """A multipart/related file: each part's header lines, then its bytes as they are (8bit)."""
    out = b'MIME-Version: 1.0\r\nContent-Type: multipart/related; type="text/html"; boundary="B"\r\n\r\n'
    for head, body in parts:
        out += b"--B\r\n" + head.encode() + b"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n" + body + b"\r\n"
    return out + b"--B--\r\n"


def page(html: str, encoding: str = "windows-1251", location: str = "http://h/p.html") -> tuple[str, bytes]:
    return f"Content-Type: text/html; charset={encoding}\r\nContent-Location: {location}", html.encode(encoding)


def part(location: str, body: bytes = b"x", media: str = "image/png") -> tuple[str, bytes]:
    return f"Content-Type: {media}\r\nContent-Location: {location}", body


def targets(agg: Aggregate) -> list[str | None]:
    return [None if r.target is None else r.target.content_location for r in agg.references if r.reference.kind != "base"]


def test_query_is_encoded_with_the_pages_encoding() -> None:
    agg = parse(mhtml(page('<img src="a.png?я"><img src="b.png?я">'), part("http://h/a.png?%FF"), part("http://h/b.png?я")))
    a, b = agg.references
    assert a.target is not None and a.uri == "http://h/a.png?%FF"
    # a label whose query is UTF-8 (as a header is read) is not what this page asks for
    assert b.status == "unsatisfied" and b.uri == "http://h/b.png?%FF"


def test_same_reference_in_a_utf8_page() -> None:
    agg = parse(mhtml(page('<img src="a.png?я">', "utf-8"), part("http://h/a.png?%D1%8F")))
    assert targets(agg) == ["http://h/a.png?%D1%8F"]


def test_the_path_is_utf8_whatever_the_page() -> None:
    agg = parse(mhtml(page('<img src="фон.png?ц">'), part("http://h/%D1%84%D0%BE%D0%BD.png?%F6")))
    assert targets(agg) == ["http://h/%D1%84%D0%BE%D0%BD.png?%F6"]


def test_what_the_encoding_cannot_encode_is_a_character_reference() -> None:
    agg = parse(mhtml(page('<img src="a.png?≡&#8253;">', "shift_jis"), part("http://h/a.png?%81%DF%26%238253%3B")))
    assert targets(agg) == ["http://h/a.png?%81%DF%26%238253%3B"]


def test_a_style_sheet_without_charset_takes_its_referrers_encoding() -> None:
    css = "div{background:url(фон.png?ц)}".encode("cp1251")
    agg = parse(
        mhtml(
            page('<link rel=stylesheet href="s.css">'),
            ("Content-Type: text/css\r\nContent-Location: http://h/s.css", css),
            part("http://h/%D1%84%D0%BE%D0%BD.png?%F6"),
        )
    )
    sheet = agg.parts[1]
    assert (sheet.encoding, sheet.encoding_source) == ("windows-1251", "environment")
    assert sheet.text() == "div{background:url(фон.png?ц)}"
    assert [r.status for r in agg.references] == ["satisfied", "satisfied"]
    assert check(agg).findings == ()


def test_a_style_sheet_nobody_links_keeps_its_own_guess() -> None:
    css = "div{background:url(фон.png)}".encode("cp1251")
    agg = parse(mhtml(page("<p>"), ("Content-Type: text/css\r\nContent-Location: http://h/s.css", css)))
    assert agg.parts[1].encoding_source == "default"


def test_a_declared_charset_wins_over_the_referrer() -> None:
    css = "@charset \"utf-8\";div{background:url(a.png?я)}".encode()
    agg = parse(mhtml(page('<link rel=stylesheet href="s.css">'), ("Content-Type: text/css\r\nContent-Location: http://h/s.css", css), part("http://h/a.png?%D1%8F")))
    assert agg.parts[1].encoding == "UTF-8"
    assert targets(agg)[-1] == "http://h/a.png?%D1%8F"


def test_import_chains_pass_the_encoding_on_and_write_import_urls_in_utf8() -> None:
    # Chromium: an @import's URL is UTF-8 (a.css?%D1%8F, b.css?%D1%91), a url() the sheet's
    # encoding (x.png?%FF); the imported sheet decodes as its importer does (windows-1251).
    agg = parse(
        mhtml(
            page('<style>@import "a.css?я";</style>'),
            ("Content-Type: text/css\r\nContent-Location: http://h/a.css?%D1%8F", '@import url(b.css?ё);'.encode("cp1251")),
            ("Content-Type: text/css\r\nContent-Location: http://h/b.css?%D1%91", "p{background:url(x.png?я)}".encode("cp1251")),
            part("http://h/x.png?%FF"),
        )
    )
    assert [p.encoding for p in agg.parts[1:3]] == ["windows-1251", "windows-1251"]
    assert targets(agg) == ["http://h/a.css?%D1%8F", "http://h/b.css?%D1%91", "http://h/x.png?%FF"]


def test_style_element_and_style_attribute() -> None:
    # <style>: the page's encoding; a style attribute: UTF-8 (as Chromium 156 requests them)
    agg = parse(
        mhtml(
            page('<style>p{background:url(a.png?я)}</style><p style="background:url(b.png?я)">'),
            part("http://h/a.png?%FF"),
            part("http://h/b.png?%D1%8F"),
        )
    )
    assert targets(agg) == ["http://h/a.png?%FF", "http://h/b.png?%D1%8F"]


def test_srcdoc_documents_are_utf8() -> None:
    # the document of an <iframe srcdoc> is UTF-8 whatever its parent's encoding
    agg = parse(mhtml(page("<img src=\"a.png?я\"><iframe srcdoc=\"<img src='a.png?я'>\"></iframe>"), part("http://h/a.png?%FF"), part("http://h/a.png?%D1%8F")))
    assert targets(agg) == ["http://h/a.png?%FF", "http://h/a.png?%D1%8F"]


def test_fragment_matched_exactly_first_then_without() -> None:
    agg = parse(
        mhtml(
            page('<img src="a.png#x"><img src="a.png#y"><img src="a.png"><img src="b.png#z">', "utf-8"),
            part("http://h/a.png", b"plain"),
            part("http://h/a.png#x", b"x"),
            part("http://h/b.png", b"b"),
        )
    )
    # a.png#x is labelled so (Chromium finds it only there); a.png#y and a.png are the
    # resource a.png; b.png#z finds b.png once both lose their fragment
    assert [r.target.data if r.target else None for r in agg.references] == [b"x", b"plain", b"plain", b"b"]
    assert check(agg).errors == ()  # a.png and a.png#x are different URIs (§7)


def test_unpack_writes_unsatisfied_queries_as_the_page_would_send_them() -> None:
    agg = parse(mhtml(page('<a href="http://other.example/x?я">x</a><img src="i.png?я">'), part("http://h/i.png?%FF")))
    index = plan(agg).files[0].data
    assert b'href="http://other.example/x?%FF"' in index
    assert b'src="i.png"' in index
