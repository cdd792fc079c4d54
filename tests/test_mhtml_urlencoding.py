"""URLs as a browser writes them (pdi.mhtml.urlencoding), against the WHATWG standards.

Expected values come from the WHATWG URL standard's own examples (§1.3, "percent-encode
after encoding"), from the WHATWG Encoding standard's indexes (tests/data/whatwg-encoding/,
read here with an encoder written from the standard's text, not from pdi's code), and from
what Chromium 156 was seen to request (noted where the standard and Chromium differ).
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pdi.charsets import sniff as charset
from pdi.mhtml.urlencoding import browser_url, encode_or_fail, encode_query

INDEXES = Path(__file__).parent / "data" / "whatwg-encoding"

SINGLE_BYTE = {
    "IBM866": "ibm866",
    "ISO-8859-2": "iso-8859-2",
    "ISO-8859-3": "iso-8859-3",
    "ISO-8859-4": "iso-8859-4",
    "ISO-8859-5": "iso-8859-5",
    "ISO-8859-6": "iso-8859-6",
    "ISO-8859-7": "iso-8859-7",
    "ISO-8859-8": "iso-8859-8",
    "ISO-8859-10": "iso-8859-10",
    "ISO-8859-13": "iso-8859-13",
    "ISO-8859-14": "iso-8859-14",
    "ISO-8859-15": "iso-8859-15",
    "ISO-8859-16": "iso-8859-16",
    "KOI8-R": "koi8-r",
    "KOI8-U": "koi8-u",
    "macintosh": "macintosh",
    "windows-874": "windows-874",
    "windows-1250": "windows-1250",
    "windows-1251": "windows-1251",
    "windows-1252": "windows-1252",
    "windows-1253": "windows-1253",
    "windows-1254": "windows-1254",
    "windows-1255": "windows-1255",
    "windows-1256": "windows-1256",
    "windows-1257": "windows-1257",
    "windows-1258": "windows-1258",
    "x-mac-cyrillic": "x-mac-cyrillic",
}


def index(name: str) -> dict[int, int]:
    """A WHATWG index file: pointer to code point."""
    out: dict[int, int] = {}
    for line in (INDEXES / f"index-{name}.txt").read_text(encoding="utf-8").split("\n"):
        if line.startswith("#") or not line.strip():
            continue
        pointer, code_point = line.split()[:2]
        out[int(pointer)] = int(code_point, 16)
    return out


# --- URL §1.3's examples of "percent-encode after encoding" with the special-query set ----------


@pytest.mark.parametrize(
    ("encoding", "text", "expected"),
    [
        ("Shift_JIS", " ", "%20"),
        ("Shift_JIS", "≡", "%81%DF"),
        ("Shift_JIS", "‽", "%26%238253%3B"),
        ("ISO-2022-JP", "¥", "%1B(J\\%1B(B"),
    ],
)
def test_whatwg_url_percent_encode_after_encoding_examples(encoding: str, text: str, expected: str) -> None:
    assert encode_query(text, encoding) == expected


def test_query_in_the_pages_encoding() -> None:
    # index-windows-1251: pointer 127 (byte 0xFF) is U+044F я; 0xE8 0xEC 0xFF is имя
    assert browser_url("http://h/a.png?я", "windows-1251") == "http://h/a.png?%FF"
    assert browser_url("http://h/a.png?имя=1&b", "windows-1251") == "http://h/a.png?%E8%EC%FF=1&b"
    # the path is UTF-8 whatever the page: я is D1 8F
    assert browser_url("http://h/я.png?я", "windows-1251") == "http://h/%D1%8F.png?%FF"
    # a UTF-16 page's URLs are UTF-8 (Encoding: "get an output encoding")
    assert browser_url("http://h/?я", "UTF-16LE") == "http://h/?%D1%8F"
    # what the page cannot encode: an HTML character reference, percent-encoded (U+2603 is 9731)
    assert browser_url("http://h/?☃", "windows-1251") == "http://h/?%26%239731%3B"


def test_special_query_set_and_what_stays() -> None:
    # space " # < > ' are encoded in a query; % and other ASCII stay as written
    assert encode_query("a b\"<>'%41`{}|^[]\\", "UTF-8") == "a%20b%22%3C%3E%27%41`{}|^[]\\"
    # the bytes of a multi-byte character are all encoded, ASCII ones too when in the set only
    assert encode_query("日本語", "Shift_JIS") == "%93%FA%96{%8C%EA"  # as Chromium sent it


def test_chromium_where_the_url_standard_differs() -> None:
    # Chromium 156 uses the page's encoding for every URL whose path starts with "/",
    # not only special ones (the standard: UTF-8 for non-special URLs and ws:), and UTF-8
    # for an opaque path; it encodes ' in each
    assert browser_url("thismessage:/x?я'", "windows-1251") == "thismessage:/x?%FF%27"
    assert browser_url("ws://h/p?я", "windows-1251") == "ws://h/p?%FF"
    assert browser_url("foo://h/p?я", "windows-1251") == "foo://h/p?%FF"
    assert browser_url("mailto:x?я'", "windows-1251") == "mailto:x?%D1%8F%27"


def test_path_and_fragment() -> None:
    # Chromium encodes " < > ` { } | ^ and space in a path, keeps ' [ ] and the rest
    assert browser_url('http://h/a"b<c>d`e{f}g|h^i\'j[k] l.png') == "http://h/a%22b%3Cc%3Ed%60e%7Bf%7Dg%7Ch%5Ei'j[k]%20l.png"
    # the fragment set: space " < > ` and non-ASCII, UTF-8 whatever the page
    assert browser_url("http://h/a#x y\"<>`é", "windows-1251") == "http://h/a#x%20y%22%3C%3E%60%C3%A9"
    # already percent-encoded: untouched
    assert browser_url("http://h/%41%2e?%FF#%20") == "http://h/%41%2e?%FF#%20"


# --- the encoders against the WHATWG indexes -------------------------------------------------------


@pytest.mark.parametrize(("encoding", "name"), sorted(SINGLE_BYTE.items()))
def test_single_byte_tables_are_the_whatwg_indexes(encoding: str, name: str) -> None:
    table = index(name)
    for pointer in range(128):
        byte = bytes([0x80 + pointer])
        expected = chr(table[pointer]) if pointer in table else "\ufffd"
        assert charset.decode(byte, encoding) == expected, (encoding, byte)
    first: dict[int, int] = {}
    for pointer in sorted(table):
        first.setdefault(table[pointer], pointer)  # Encoding: "index pointer" is the first
    for code_point, pointer in first.items():
        assert encode_or_fail(chr(code_point), encoding) == [bytes([0x80 + pointer])]
    absent = next(cp for cp in range(0x100, 0x3000) if cp not in first)
    assert encode_or_fail(chr(absent), encoding) == [absent]


def _whatwg_shift_jis(code_point: int, jis: dict[int, int]) -> bytes | None:
    """The Shift_JIS encoder of Encoding §13.3.2, step by step."""
    if code_point <= 0x80:
        return bytes([code_point])
    if code_point == 0xA5:
        return b"\x5c"
    if code_point == 0x203E:
        return b"\x7e"
    if 0xFF61 <= code_point <= 0xFF9F:
        return bytes([code_point - 0xFF61 + 0xA1])
    if code_point == 0x2212:
        code_point = 0xFF0D
    pointers = [p for p in sorted(jis) if jis[p] == code_point and not 8272 <= p <= 8835]
    if not pointers:
        return None
    lead, trail = divmod(pointers[0], 188)
    return bytes([lead + (0x81 if lead < 0x1F else 0xC1), trail + (0x40 if trail < 0x3F else 0x41)])


def test_shift_jis_euc_jp_and_iso_2022_jp_encoders_use_index_jis0208() -> None:
    jis = index("jis0208")
    first: dict[int, int] = {}
    for pointer in sorted(jis):
        first.setdefault(jis[pointer], pointer)
    for code_point, pointer in first.items():
        ch = chr(code_point)
        expected = _whatwg_shift_jis(code_point, jis)
        assert encode_or_fail(ch, "Shift_JIS") == ([code_point] if expected is None else [expected]), hex(code_point)
        lead, trail = divmod(pointer, 94)
        if code_point != 0x2212 and pointer < 94 * 94:
            assert encode_or_fail(ch, "EUC-JP") == [bytes([lead + 0xA1, trail + 0xA1])], hex(code_point)
            assert encode_or_fail(ch, "ISO-2022-JP") == [b"\x1b$B", bytes([lead + 0x21, trail + 0x21]), b"\x1b(B"]


def test_encoders_special_cases() -> None:
    assert encode_or_fail("¥‾−", "Shift_JIS") == [b"\x5c", b"\x7e", b"\x81\x7c"]  # − as U+FF0D
    assert encode_or_fail("ｱ", "EUC-JP") == [b"\x8e\xb1"]
    # ISO-2022-JP: half-width katakana through index ISO-2022-JP katakana (ｱ is ア,
    # jis0208 pointer 397), the sound marks as spacing ones (ﾞ is ゛, pointer 10)
    katakana = index("iso-2022-jp-katakana")
    assert chr(katakana[0xFF71 - 0xFF61]) == "ア" and chr(katakana[0xFF9E - 0xFF61]) == "゛"
    assert encode_or_fail("ｱﾞ", "ISO-2022-JP") == [b"\x1b$B", b"\x25\x22", b"\x21\x2b", b"\x1b(B"]
    # an error in jis0208 state: back to ASCII first (Encoding §12.2.2)
    assert encode_or_fail("ア☃a", "ISO-2022-JP") == [b"\x1b$B", b"\x25\x22", b"\x1b(B", 0x2603, b"a"]
    # EUC-KR (index EUC-KR: 가 is pointer 2916, bytes B0 A1); x-user-defined's private block
    assert encode_or_fail("가", "EUC-KR") == [b"\xb0\xa1"]
    assert encode_or_fail("\uf780a", "x-user-defined") == [b"\x80", b"a"]
    # GBK has no four-byte sequences and writes € as 0x80
    assert encode_or_fail("€\U00010000", "GBK") == [b"\x80", 0x10000]


# --- properties ---------------------------------------------------------------------------------------

_ENCODINGS = st.sampled_from(["UTF-8", "windows-1251", "windows-1252", "Shift_JIS", "EUC-JP", "ISO-2022-JP", "EUC-KR", "gb18030"])
_URI = st.builds(
    lambda path, query, fragment: "http://h/" + path + ("?" + query if query is not None else "") + ("#" + fragment if fragment is not None else ""),
    st.text(st.characters(exclude_characters="?#", exclude_categories=("Cs",)), max_size=20),
    st.none() | st.text(st.characters(exclude_characters="#", exclude_categories=("Cs",)), max_size=20),
    st.none() | st.text(st.characters(exclude_categories=("Cs",)), max_size=10),
)


@given(_URI, _ENCODINGS)
def test_property_the_browser_form_is_printable_ascii_and_final(uri: str, encoding: str) -> None:
    out = browser_url(uri, encoding)
    assert re.fullmatch(r"[\x21-\x7e]*", out)
    assert browser_url(out, encoding) == out  # nothing left to encode


@given(_URI)
def test_property_utf8_form_decodes_back(uri: str) -> None:
    out = browser_url(uri)
    # percent-decoding gives back what was written, less what was percent-encoded already
    assert urllib.parse.unquote(out) == urllib.parse.unquote(uri)


@given(st.lists(st.tuples(_URI | _URI.map(lambda u: u + "/x" * 600), _ENCODINGS), min_size=1, max_size=6))
def test_property_a_remembered_browser_form_is_the_one_written_afresh(asked: list[tuple[str, str]]) -> None:
    # browser_url keeps its answers for short URIs (issue 24): asked again, in any order and encoding, the answer
    # is what writing the URI afresh gives, and a long URI is never kept
    from pdi.mhtml import urlencoding

    for uri, encoding in asked + asked[::-1]:
        assert browser_url(uri, encoding) == urlencoding._browser_url(uri, encoding)
    assert urlencoding._remembered_browser_url.cache_info().maxsize == urlencoding.REMEMBERED
    assert urlencoding._remembered_short.cache_info().maxsize == urlencoding.SHORT_REMEMBERED
    # the memos' keys are their arguments: none longer than REMEMBERED_LENGTH, and the short one's none longer than
    # SHORT_LENGTH
    memos = (urlencoding._remembered_short, urlencoding._remembered_browser_url)
    for length, kept_by in ((urlencoding.SHORT_LENGTH, 0), (urlencoding.SHORT_LENGTH + 1, 1),
                            (urlencoding.REMEMBERED_LENGTH, 1), (urlencoding.REMEMBERED_LENGTH + 1, None)):
        uri = "http://h/" + "x" * (length - 9)
        assert len(uri) == length
        urlencoding._remembered_short.cache_clear()
        urlencoding._remembered_browser_url.cache_clear()
        assert browser_url(uri) == uri
        assert [memo.cache_info().currsize for memo in memos] == [int(at == kept_by) for at in range(2)]
