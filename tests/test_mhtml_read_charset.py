"""Text parts come out right: BOM, charset=, <meta>, WHATWG labels (issue 6)."""

from __future__ import annotations

import codecs

import pytest

from pdi.charsets.sniff import LABELS, decode, lookup, meta_charset, sniff
from pdi.mhtml import parse


def one_part(headers: str, body: bytes) -> bytes:
    return (
        b'Content-Type: multipart/related; boundary="b"\r\n\r\n--b\r\n'
        + headers.replace("\n", "\r\n").encode()
        + b"\r\n\r\n"
        + body
        + b"\r\n--b--\r\n"
    )


@pytest.mark.parametrize(
    ("label", "name"),
    [
        ("iso-8859-1", "windows-1252"),
        ("ISO-8859-1", "windows-1252"),
        (" latin1\t", "windows-1252"),
        ("ascii", "windows-1252"),
        ("US-ASCII", "windows-1252"),
        ("utf8", "UTF-8"),
        ("UTF-8", "UTF-8"),
        ("shift_jis", "Shift_JIS"),
        ("x-sjis", "Shift_JIS"),
        ("windows-31j", "Shift_JIS"),
        ("gb2312", "GBK"),
        ("ks_c_5601-1987", "EUC-KR"),
        ("iso-8859-9", "windows-1254"),
        ("utf-16", "UTF-16LE"),
        ("koi8-r", "KOI8-R"),
    ],
)
def test_whatwg_labels(label: str, name: str) -> None:
    assert lookup(label) == name


def test_unknown_labels() -> None:
    assert lookup("utf-9") is None
    assert lookup("") is None
    assert lookup("replacement") is None


def test_every_label_has_a_decoder() -> None:
    for name in set(LABELS.values()):
        assert isinstance(decode(bytes(range(256)), name), str)


def test_windows_1252_as_the_whatwg_index_has_it() -> None:
    # index-windows-1252: 0x80 U+20AC, 0x81 U+0081 (undefined in cp1252), 0x93 U+201C, 0x9F U+0178
    assert decode(b"\x80\x81\x93\x9f\xe9", "windows-1252") == "\u20ac\x81\u201c\u0178\u00e9"


def test_part_declared_iso_8859_1_decodes_as_windows_1252() -> None:
    p = parse(one_part("Content-Type: text/plain; charset=ISO-8859-1", b"\x93quoted\x94 caf\xe9")).parts[0]
    assert p.charset == "ISO-8859-1"
    assert p.encoding == "windows-1252" and p.encoding_source == "charset"
    assert p.text() == "\u201cquoted\u201d café"


def test_byte_order_mark_wins_over_charset() -> None:
    p = parse(one_part("Content-Type: text/html; charset=iso-8859-1", codecs.BOM_UTF8 + "é".encode())).parts[0]
    assert (p.encoding, p.encoding_source) == ("UTF-8", "bom")
    assert p.text() == "é"
    body = codecs.BOM_UTF16_LE + "<p>ü</p>".encode("utf-16-le")
    p = parse(one_part("Content-Type: text/html\nContent-Transfer-Encoding: binary", body)).parts[0]
    assert p.encoding == "UTF-16LE" and p.text() == "<p>ü</p>"


def test_chromium_shift_jis_page_without_charset_uses_its_meta() -> None:
    html = '<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"></head><body>日本語のページ</body></html>'
    p = parse(one_part("Content-Type: text/html\nContent-Transfer-Encoding: binary", html.encode("cp932"))).parts[0]
    assert p.charset is None
    assert (p.encoding, p.encoding_source) == ("Shift_JIS", "meta")
    assert p.text() == html


def test_meta_charset_attribute_and_comments() -> None:
    assert meta_charset(b"<!-- <meta charset=koi8-r> --><meta charset='windows-1251'>") == "windows-1251"
    assert meta_charset(b'<META CHARSET="LATIN1">') == "windows-1252"
    assert meta_charset(b'<meta name="x" content="y"><meta charset=utf-16>') == "UTF-8"
    assert meta_charset(b'<meta http-equiv="refresh" content="0; charset=koi8-r">') is None
    assert meta_charset(b"<p>" + b" " * 1100 + b"<meta charset=koi8-r>") is None  # beyond 1024 bytes


def test_charset_parameter_wins_over_meta() -> None:
    html = '<meta charset="utf-8"><p>é</p>'.encode("cp1252")
    p = parse(one_part("Content-Type: text/html; charset=windows-1252", html)).parts[0]
    assert p.encoding == "windows-1252" and p.text().endswith("<p>é</p>")


def test_unknown_charset_label_falls_through_with_a_warning() -> None:
    p = parse(one_part("Content-Type: text/html; charset=x-unknown-9", b"<meta charset=utf-8>\xc3\xa9")).parts[0]
    assert (p.encoding, p.encoding_source) == ("UTF-8", "meta")
    assert p.encoding_warning is not None and "x-unknown-9" in p.encoding_warning


def test_no_declaration_utf8_or_else_windows_1252_with_a_warning() -> None:
    assert sniff("é".encode(), declared=None, media_type="text/html") == ("UTF-8", "utf-8", None)
    enc, source, warning = sniff(b"caf\xe9", declared=None, media_type="text/html")
    assert (enc, source) == ("windows-1252", "default") and warning


def test_css_charset_rule() -> None:
    css = '@charset "iso-8859-15";\nh1::before { content: "\xa4" }'.encode("latin-1")
    p = parse(one_part("Content-Type: text/css", css)).parts[0]
    assert (p.encoding, p.encoding_source) == ("ISO-8859-15", "@charset")
    assert "€" in p.text()


def test_non_text_parts_stay_byte_exact() -> None:
    body = bytes(range(256))
    p = parse(one_part("Content-Type: image/png\nContent-Transfer-Encoding: binary", body)).parts[0]
    assert p.data == body and not p.is_text
